#!/usr/bin/env python3
"""Times two linv builds side by side: did a change make any benchmark slower?

Runs each `linv bench ...` case with the base build and the changed build in alternating order
(base first in odd rounds, changed first in even ones, so that drift of the machine's clocks or
temperature falls on both), takes each build's median over the rounds of the per-run medians that
`linv bench` reports, and writes the rows of BENCHMARKS.md with the base build as the peer:
ratio = base seconds / changed seconds (above 1: the change is faster). A case whose ratio is below
1 - --tolerance is listed as slower, and the script exits 1.

    python3 bench/compare_builds.py --base build-base/bin/linv --linv build/bin/linv --base-rev 2d9186c

The cases are the GPU benchmarks' (scripts/bench-gpu) at their standard sizes, with fewer repeats.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, arguments after `linv bench`); every case runs on the GPU.
CASES = [
    ("inverse", ["inverse", "--sizes", "1024,4096,16384", "--dtypes", "f64,f32", "--kinds", "general,spd",
                 "--methods", "auto,lu,gauss-jordan,cholesky-gets", "--repeats", "5"]),
    # the size where fixed costs (dispatch, allocation, synchronisation) show most; not in the default set
    ("inverse-1024", ["inverse", "--sizes", "1024", "--dtypes", "f64,f32", "--kinds", "general,spd",
                      "--methods", "auto,lu,gauss-jordan,cholesky-gets", "--repeats", "20"]),
    ("solve", ["solve", "--sizes", "4096,16384", "--precisions", "double,mixed", "--repeats", "5"]),
    ("batched", ["batched", "--cases", "4:1048576,8:1048576,32:65536", "--dtypes", "f32,f64", "--repeats", "20"]),
    # every variant of the batched kernel (groups of 1 to 32 lanes, the 64-thread block), for changes to it
    # such as the per-matrix rcond; not in the default set
    ("batched-orders", ["batched", "--cases", "1:4194304,2:4194304,3:1048576,4:1048576,8:1048576,16:262144,"
                        "24:131072,32:65536,33:65536,48:16384,64:16384", "--dtypes", "f32,f64", "--repeats", "20"]),
    ("wls", ["wls", "--sizes", "2048,8192", "--precisions", "double,mixed", "--repeats", "5"]),
    ("deblur", ["deblur", "--time", "--dense-sizes", "64,128", "--matrix-free-sizes", "2048", "--repeats", "5"]),
    ("slam", ["slam", "--cases", "20000:100,120000:1000", "--repeats", "5"]),
    ("omp", ["omp", "--sizes", "900x125000,274x902629", "--precision", "single", "--repeats", "5"]),
    ("ksvd", ["ksvd", "--sizes", "274x902629", "--iters", "30", "--precision", "single", "--repeats", "3"]),
    ("adl", ["adl", "--sizes", "274x200000", "--iters", "10", "--precision", "single", "--repeats", "3"]),
    ("parafac2", ["parafac2", "--sizes", "274x902629x3", "--iters", "100", "--precision", "single",
                  "--repeats", "3"]),
]


def timing_keys(row):
    """The per-run medians a bench row holds: 'seconds', 'pinv_seconds', 'step_seconds' ..."""
    return [k for k, v in row.items()
            if (k == "seconds" or k.endswith("_seconds")) and isinstance(v, (int, float))]


def describe(row):
    """The case's parameters: every field that is a string or an integer and not a result."""
    skip = {"iterations", "singular", "method_used", "stop_reason", "notes"}
    return {k: v for k, v in sorted(row.items())
            if k not in skip and (isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)))}


def run(linv, args, device):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rows.json")
        cmd = [linv, "bench", *args, "--device", device, "--json", path]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-2000:]}")
        with open(path) as f:
            return json.load(f)["rows"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the linv binary before the change")
    ap.add_argument("--linv", required=True, help="the linv binary after the change")
    ap.add_argument("--base-rev", default="", help="the base build's revision, recorded in the results")
    ap.add_argument("--cases", default=",".join(name for name, _ in CASES
                                                if name not in ("inverse-1024", "batched-orders")))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tolerance", type=float, default=0.02, help="slower by more than this fraction: a failure")
    ap.add_argument("--out", help="results JSON (default bench/results/<device>/builds.json)")
    a = ap.parse_args()

    wanted = a.cases.split(",")
    unknown = set(wanted) - {name for name, _ in CASES}
    if unknown:
        sys.exit(f"compare_builds: unknown cases {sorted(unknown)}")
    builds = {"base": a.base, "linv": a.linv}
    rows = []
    for name, args in CASES:
        if name not in wanted:
            continue
        samples = {"base": [], "linv": []}  # per round: that build's rows
        for r in range(a.rounds):
            order = ["base", "linv"] if r % 2 == 0 else ["linv", "base"]
            for which in order:
                samples[which].append(run(builds[which], args, a.device))
        for i, row in enumerate(samples["linv"][0]):
            for key in timing_keys(row):
                base_s = statistics.median(rs[i][key] for rs in samples["base"])
                linv_s = statistics.median(rs[i][key] for rs in samples["linv"])
                rows.append({"case": f"{name} {key}", "params": describe(row), "linv_s": linv_s,
                             "peer": f"linv {a.base_rev or 'base'}", "peer_s": base_s,
                             "ratio": base_s / linv_s, "spread_linv_s": [rs[i][key] for rs in samples["linv"]],
                             "spread_peer_s": [rs[i][key] for rs in samples["base"]]})
                print(f"{name:9s} {key:13s} {json.dumps(describe(row))[:70]:70s} base {base_s:.4g} s  "
                      f"new {linv_s:.4g} s  ratio {base_s / linv_s:.3f}", flush=True)

    device_name = "cpu"
    if a.device.startswith("cuda"):
        device_name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                                     stdout=subprocess.PIPE, text=True).stdout.strip() or "cuda"
    short = "h200" if "H200" in device_name else "h100" if "H100" in device_name else "cpu"
    out = a.out or os.path.join(HERE, "results", short, "builds.json")
    # LINV_REV first: a copy of the tree (the device machine's) may carry another revision's .git
    rev = os.environ.get("LINV_REV") or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True).stdout.strip()
    result = {"benchmark": "builds", "device": device_name, "date": datetime.date.today().isoformat(),
              "versions": {"linv": rev or "working tree", "base": a.base_rev},
              "command": " ".join(["python3", "bench/compare_builds.py", *sys.argv[1:]]),
              "method": f"{a.rounds} rounds alternating the builds; each value the median over rounds of "
                        "linv bench's per-run median",
              "rows": rows}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + ".tmp", "w") as f:
        json.dump(result, f, indent=1)
    os.replace(out + ".tmp", out)
    slower = [r for r in rows if r["ratio"] < 1 - a.tolerance]
    print(f"\n{len(rows)} timings, {len(slower)} slower by more than {a.tolerance:.0%}; written to {out}")
    for r in slower:
        print(f"  SLOWER {r['case']} {json.dumps(r['params'])}: {r['peer_s']:.4g} -> {r['linv_s']:.4g} s "
              f"(ratio {r['ratio']:.3f})")
    sys.exit(1 if slower else 0)


if __name__ == "__main__":
    main()
