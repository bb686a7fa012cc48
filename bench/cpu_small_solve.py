#!/usr/bin/env python3
"""The per-call cost of small solves from Python: linv.solve against numpy.linalg.solve on the same NumPy
arrays, one process, on the CPU.

Cases: a (n, n) uniform in [-1, 1] plus n on the diagonal, b (n,), float64 and float32, n = 2 ... 64.
Each call is timed as the mean over --calls calls, linv and NumPy alternating batch by batch, median of
--repeats batches. ratio = peer_s / linv_s (above 1: linv is faster). The row's `general_s` is linv's own
general path (device="cpu" given, which skips the shortcut for plain arrays): what the shortcut saves.

Writes bench/results/cpu/small-solve.json (the rows format of ../shared/BENCHMARKS.md) and prints a table.

    python3 bench/cpu_small_solve.py [--sizes 2,4,8,16,32,64] [--calls 2000] [--repeats 7]
"""
import argparse
import datetime
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_inverse import cpu_name, write_json  # noqa: E402
from gpu_inverse import REPO, git_sha  # noqa: E402

import linv  # noqa: E402  (the installed package: ./scripts/python-package)


def per_call(call, calls):
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="2,3,4,6,8,12,16,24,32,48,64", type=lambda s: [int(v) for v in s.split(",")])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--out-dir", default=os.path.join(REPO, "bench", "results"))
    args = p.parse_args()
    rng = np.random.default_rng(44)
    rows = []
    print(f"{'dtype':8} {'n':>4} {'linv us':>9} {'numpy us':>9} {'ratio':>6} {'general us':>11} {'error':>9}")
    for dtype in (np.float64, np.float32):
        for n in args.sizes:
            a = (rng.uniform(-1, 1, (n, n)) + n * np.eye(n)).astype(dtype)
            b = rng.uniform(-1, 1, n).astype(dtype)
            calls = {"linv": lambda: linv.solve(a, b), "numpy": lambda: np.linalg.solve(a, b),
                     "general": lambda: linv.solve(a, b, device="cpu")}
            for call in calls.values():
                call()
            times = {name: [] for name in calls}
            for _ in range(args.repeats):
                for name, call in calls.items():
                    times[name].append(per_call(call, args.calls))
            med = {name: statistics.median(t) for name, t in times.items()}
            x = linv.solve(a, b).astype(np.float64)
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            error = float(np.abs(a64 @ x - b64).max() / (n * np.finfo(dtype).eps * (np.abs(a64).sum(0).max()
                                                                                    * np.abs(x).max() + 1)))
            rows.append({"case": f"solve 1 rhs {np.dtype(dtype).name}", "n": n, "batch": 1, "linv_s": med["linv"],
                         "peer": "numpy.linalg.solve", "peer_s": med["numpy"], "ratio": med["numpy"] / med["linv"],
                         "general_s": med["general"], "linv_error": error})
            print(f"{np.dtype(dtype).name:8} {n:4} {med['linv'] * 1e6:9.2f} {med['numpy'] * 1e6:9.2f} "
                  f"{med['numpy'] / med['linv']:6.2f} {med['general'] * 1e6:11.2f} {error:9.2g}", flush=True)
    result = {"benchmark": "small-solve", "device": cpu_name(), "date": datetime.date.today().isoformat(),
              "versions": {"linv": git_sha(), "numpy": np.__version__},
              "threads": linv.info()["cpu_threads"],
              "command": "python3 bench/cpu_small_solve.py " + " ".join(sys.argv[1:]), "rows": rows}
    path = os.path.join(args.out_dir, "cpu", "small-solve.json")
    write_json(result, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
