#!/usr/bin/env python3
"""Time against n for linv and each peer, from a benchmark's results JSON (the `rows` schema of
BENCHMARKS.md), as a log-log PNG: one line per linv variant (case and method) and one per peer, so a
size sweep shows where each crosses the other.

    python3 bench/plot_sweep.py bench/results/h100/inverse.json docs/inverse-sweep.png
    (or from gpu_inverse.py / gpu_mixed.py with --plot PNG)

Needs matplotlib (present on the GPU machine); without it, says so and exits 1.
"""
import json
import os
import sys


def series(rows):
    """{label: {n: seconds}} for linv's variants and the peers, medians as recorded in the rows."""
    lines = {}
    for r in rows:
        n = r.get("n")
        if n is None:
            continue
        variant = r["case"]
        if r.get("linv_method"):
            variant += f", {r['linv_method']}"
        if r.get("linv_s") is not None:
            lines.setdefault(f"linv: {variant}", {})[n] = r["linv_s"]
        if r.get("peer_s") is not None:
            # a peer's time depends on the case, not on linv's method
            lines.setdefault(f"{r['peer']}: {r['case']}", {})[n] = r["peer_s"]
    # one line per distinct peer timing (a peer timed once for several of linv's cases keeps the first)
    seen, unique = set(), {}
    for label in sorted(lines, key=lambda l: (not l.startswith("linv"), l)):
        key = (label.split(":")[0], tuple(sorted(lines[label].items())))
        if label.startswith("linv") or key not in seen:
            seen.add(key)
            unique[label] = lines[label]
    return unique


def plot(result, png, title=None):
    """Writes the PNG (atomically); returns its path, or None with a message when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot skipped: matplotlib is not installed", file=sys.stderr)
        return None
    lines = series(result.get("rows", []))
    fig, ax = plt.subplots(figsize=(9, 6))
    for label, points in sorted(lines.items()):
        ns = sorted(points)
        linv = label.startswith("linv")
        ax.plot(ns, [points[n] for n in ns], marker="o" if linv else "s", linestyle="-" if linv else "--",
                linewidth=1.8 if linv else 1.2, markersize=4, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("seconds (median)")
    device = result.get("device", "")
    ax.set_title(title or f"{result.get('benchmark', '')} on {device}".strip())
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    tmp = png + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, png)
    return png


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    with open(argv[1]) as f:
        result = json.load(f)
    out = plot(result, argv[2])
    if out:
        print(f"wrote {out}")
    return 0 if out else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
