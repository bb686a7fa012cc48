#!/usr/bin/env python3
"""What the Python package costs over linv's C++ calls, and where it stands against the Python peers.

Side by side, in one run:
  cpu  linv.inv on one 8 x 8 float64 matrix (per call: the median over batches of --calls calls)
       against `linv bench inverse --device cpu --sizes 8` (the C++ call, median of as many repeats),
       and numpy.linalg.inv;
  cpu  linv.inv on a (100000, 8, 8) NumPy stack against the C++ call inside it (linv::batched::inv, from
       its report), `linv bench batched --device cpu --cases 8:100000` (inv_into, preallocated) and
       numpy.linalg.inv on the same stack;
  gpu  linv.inv on a CUDA PyTorch tensor (n = 4096 and 16384, float64, uniform in [-1, 1]; used in place,
       the result a tensor on the same GPU) against `linv bench inverse --device cuda` and
       torch.linalg.inv (CUDA events), when a GPU and PyTorch are there.
Each row: linv_s is the Python call, peer_s the compared call, ratio = peer_s / linv_s, overhead_s =
linv_s - the C++ call. Targets (issue 18): <= 5 us overhead for 8 x 8; the stack within 5 % of C++; the
CUDA tensors within 3 % of C++.

Writes bench/results/<h100|h200|cpu|slug>/python-overhead.json (the rows format of ../shared/BENCHMARKS.md;
copied to $OUT when set) and prints a table.

    python3 bench/python_overhead.py --linv build/bin/linv [--sizes 4096,16384] [--repeats 5] [--no-gpu]
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_inverse import median_time, write_json  # noqa: E402
from gpu_inverse import REPO, device_dir, git_sha  # noqa: E402

import linv  # noqa: E402  (the installed package: ./scripts/python-package)


def linv_bench(args, what, *options):
    """The rows of `linv bench <what> ...` (its --json)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rows.json")
        cmd = [args.linv, "bench", what, *options, "--json", path]
        print("running: " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            return json.load(f)["rows"]


def per_call(f, calls, batches):
    """The median over `batches` of the mean time of `calls` calls of f."""
    f()
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def row(case, n, batch, linv_s, peer, peer_s, cpp_s=None):
    r = {"case": case, "n": n, "batch": batch, "linv_s": linv_s, "peer": peer, "peer_s": peer_s,
         "ratio": peer_s / linv_s if linv_s and peer_s else None}
    if cpp_s is not None:
        r["overhead_s"] = linv_s - cpp_s
    return r


def cpu_rows(args):
    rng = np.random.default_rng()
    rows = []
    a = rng.uniform(-1, 1, (8, 8)) + 3 * np.eye(8)
    py = per_call(lambda: linv.inv(a), args.calls, 21)
    cpp = linv_bench(args, "inverse", "--device", "cpu", "--sizes", "8", "--kinds", "general", "--dtypes", "f64",
                     "--methods", "auto", "--repeats", str(args.calls))[0]["seconds"]
    rows.append(row("python inv fp64 8x8 (cpu)", 8, 1, py, "linv C++ linv::inv", cpp, cpp))
    rows.append(row("python inv fp64 8x8 (cpu)", 8, 1, py, "numpy.linalg.inv",
                    per_call(lambda: np.linalg.inv(a), args.calls, 21), cpp))
    # The stack: the C++ call is linv::batched::inv, which allocates its result as Python's must; its own
    # time comes from the report of the same call. `linv bench batched` times inv_into, writing into
    # memory allocated once (no page faults), which is shown beside it.
    stack = rng.uniform(-1, 1, (100000, 8, 8)) + 3 * np.eye(8)
    linv.inv(stack)
    walls, inner = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        _, rep = linv.inv(stack, report=True)
        walls.append(time.perf_counter() - start)
        inner.append(rep["seconds"])
    py, cpp = statistics.median(walls), statistics.median(inner)
    case = "python inv fp64 stack 100000x8x8 (cpu)"
    rows.append(row(case, 8, 100000, py, "linv C++ batched::inv", cpp, cpp))
    into = linv_bench(args, "batched", "--device", "cpu", "--cases", "8:100000", "--dtypes", "f64",
                      "--repeats", str(args.repeats))[0]["seconds"]
    rows.append(row(case, 8, 100000, py, "linv C++ batched::inv_into (preallocated)", into, cpp))
    rows.append(row(case, 8, 100000, py, "numpy.linalg.inv", median_time(lambda: np.linalg.inv(stack), args.repeats)[0], cpp))
    return rows


def gpu_rows(args):
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: the GPU rows are skipped", flush=True)
        return [], None
    if not linv.info()["gpus"] or not torch.cuda.is_available():
        print(f"no usable GPU ({linv.info()['why_no_gpu'] or 'PyTorch sees none'}): the GPU rows are skipped")
        return [], None
    cpp = {r["n"]: r["seconds"] for r in linv_bench(
        args, "inverse", "--device", "cuda", "--sizes", ",".join(map(str, args.sizes)), "--kinds", "general",
        "--dtypes", "f64", "--methods", "auto", "--repeats", str(args.repeats))}
    rows = []
    for n in args.sizes:
        a = torch.rand(n, n, dtype=torch.float64, device="cuda") * 2 - 1

        def python_call():
            torch.cuda.synchronize()
            start = time.perf_counter()
            linv.inv(a)  # returns when the inverse is complete
            return time.perf_counter() - start

        python_call()
        py = statistics.median(python_call() for _ in range(args.repeats))

        def torch_call():
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.linalg.inv(a)
            stop.record()
            stop.synchronize()
            return start.elapsed_time(stop) / 1e3

        torch_call()
        peer = statistics.median(torch_call() for _ in range(args.repeats))
        rows.append(row("python inv fp64 torch tensor (cuda)", n, 1, py, "linv C++ linv::inv", cpp[n], cpp[n]))
        rows.append(row("python inv fp64 torch tensor (cuda)", n, 1, py, "torch.linalg.inv", peer, cpp[n]))
        del a
        torch.cuda.empty_cache()
    return rows, torch


def targets(rows):
    out = []
    for r in rows:
        if r["peer"].startswith("linv C++") and "preallocated" not in r["peer"]:
            if r["batch"] == 1 and r["n"] == 8:
                out.append((f"8x8 overhead <= 5 us", r["overhead_s"] <= 5e-6, f"{r['overhead_s'] * 1e6:.2f} us"))
            else:
                limit = 0.05 if r["batch"] > 1 else 0.03
                excess = r["linv_s"] / r["peer_s"] - 1
                out.append((f"{r['case']} n={r['n']} within {limit:.0%} of C++", excess <= limit, f"{excess:+.1%}"))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--linv", required=True, help="the linv command-line tool (build/bin/linv)")
    p.add_argument("--sizes", default="4096,16384", type=lambda s: [int(v) for v in s.split(",") if v])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--calls", type=int, default=2000, help="calls per timed batch for 8 x 8")
    p.add_argument("--no-gpu", action="store_true")
    p.add_argument("--out-dir", default=os.path.join(REPO, "bench", "results"))
    args = p.parse_args()

    rows = cpu_rows(args)
    torch, gpu_name = None, None
    if not args.no_gpu:
        more, torch = gpu_rows(args)
        rows += more
        if torch is not None:
            gpu_name = torch.cuda.get_device_name()
    name = gpu_name or "cpu"
    slug = device_dir(name)
    result = {"benchmark": "python-overhead", "device": name, "date": datetime.date.today().isoformat(),
              "versions": {"linv": git_sha(), "python": sys.version.split()[0],
                           "numpy": np.__version__, "torch": torch.__version__ if torch else None},
              "command": "python3 bench/python_overhead.py " + " ".join(sys.argv[1:]),
              "cpu_threads": os.cpu_count(), "rows": rows}
    path = os.path.join(args.out_dir, slug, "python-overhead.json")
    write_json(result, path)
    if os.environ.get("OUT"):
        shutil.copy(path, os.environ["OUT"])
    print(f"\n{'case':42} {'n':>6} {'linv (Python) s':>16} {'peer':>42} {'peer s':>11} {'ratio':>7} {'overhead':>10}")
    for r in rows:
        over = f"{r['overhead_s'] * 1e6:8.2f}us" if "overhead_s" in r else ""
        print(f"{r['case']:42} {r['n']:>6} {r['linv_s']:16.6g} {r['peer']:>42} {r['peer_s']:11.6g} "
              f"{r['ratio']:7.2f} {over:>10}")
    for what, met, value in targets(rows):
        print(f"target {what}: {'met' if met else 'MISSED'} ({value})")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
