#!/usr/bin/env python3
"""CPU mixed-precision solve benchmark: `linv bench solve --device cpu` against numpy.linalg.solve.

linv generates a general float64 matrix (entries uniform in [-1, 1]) and one right-hand side and times
`linv::solve` in float64 (LAPACK getrf + getrs) and in mixed precision (float32 LU, corrections against
the float64 residual, GMRES-IR where they stall) after a warm-up, median of --repeats. NumPy's float64
solve (LAPACK gesv through OpenBLAS) runs in the same process afterwards on a matrix of the same
distribution, median of --repeats. ratio = numpy_s / linv_s. Errors: ||b - A x||_1 / (n eps ||A||_1 ||x||_1).
Writes bench/results/cpu/mixed.json.

    python3 bench/cpu_mixed.py --linv build/bin/linv [--sizes 1024,2048] [--repeats 7]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import importlib.util

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_cpu_inverse", os.path.join(HERE, "cpu_inverse.py"))
cpu_inverse = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cpu_inverse)  # shared helpers (cpu_name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", required=True)
    ap.add_argument("--sizes", default="1024,2048")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "cpu", "mixed.json"))
    args = ap.parse_args()
    sizes = [int(v) for v in args.sizes.split(",") if v]

    with tempfile.TemporaryDirectory(prefix="linv-cpu-mixed-") as tmp:
        path = os.path.join(tmp, "linv.json")
        cmd = [args.linv, "bench", "solve", "--device", "cpu", "--sizes", args.sizes, "--precisions",
               "double,mixed", "--repeats", str(args.repeats), "--json", path]
        subprocess.run(cmd, check=True)
        with open(path) as f:
            linv = {(int(r["n"]), r["precision"]): r for r in json.load(f)["rows"]}

    rows = []
    rng = np.random.default_rng(1)
    for n in sizes:
        a = rng.uniform(-1, 1, (n, n))
        b = rng.uniform(-1, 1, (n, 1))
        np.linalg.solve(a, b)
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            x = np.linalg.solve(a, b)
            times.append(time.perf_counter() - start)
        err = np.abs(b - a @ x).sum() / (n * np.finfo(float).eps * np.linalg.norm(a, 1) * np.abs(x).sum())
        for precision in ("mixed", "double"):
            lr = linv[(n, precision)]
            rows.append({"case": f"solve float64-accurate, 1 rhs, linv {precision}", "n": n, "batch": 1,
                         "linv_s": lr["seconds"], "peer": "numpy.linalg.solve (float64)",
                         "peer_s": statistics.median(times), "ratio": statistics.median(times) / lr["seconds"],
                         "floor_s": None, "floor_fraction": None, "linv_error": lr["scaled_residual"],
                         "peer_error": float(err), "linv_iterations": lr["iterations"],
                         "linv_stop_reason": lr["stop_reason"], "linv_s_all": lr["seconds_all"], "peer_s_all": times})
    mixed_2048 = next((r for r in rows if r["n"] == 2048 and r["case"].endswith("mixed")), None)
    double_2048 = next((r for r in rows if r["n"] == 2048 and r["case"].endswith("double")), None)
    targets = []
    if mixed_2048 and double_2048:
        speedup = double_2048["linv_s"] / mixed_2048["linv_s"]
        targets.append({"target": "n=2048 mixed >= 1.5x the float64 LAPACK solve", "vs_linv_float64": speedup,
                        "vs_numpy": mixed_2048["ratio"],
                        "status": "met" if min(speedup, mixed_2048["ratio"]) >= 1.5 else "missed"})
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout.strip()
    result = {"benchmark": "mixed", "device": cpu_inverse.cpu_name(), "date": datetime.date.today().isoformat(),
              "versions": {"linv": os.environ.get("LINV_GIT_SHA") or git or "unknown", "numpy": np.__version__,
                           "python": sys.version.split()[0]},
              "command": " ".join(["python3", "bench/cpu_mixed.py"] + sys.argv[1:]),
              "method": {"timing": f"linv: host clock around linv::solve after a warm-up, median of {args.repeats}; "
                                   f"numpy: perf_counter around numpy.linalg.solve after a warm-up, median of "
                                   f"{args.repeats}; linv first, then numpy", "threads": os.cpu_count()},
              "targets": targets, "rows": rows}
    cpu_inverse.write_json(result, args.out)
    print(f"wrote {args.out}")
    for r in rows:
        print(f"{r['case']:42s} n={r['n']:5d} linv {r['linv_s']:.4f} s numpy {r['peer_s']:.4f} s ratio {r['ratio']:.2f}x "
              f"residual {r['linv_error']:.3g} vs {r['peer_error']:.3g} iterations {r['linv_iterations']}")
    for t in targets:
        print(f"target {t['status'].upper()}: {t['target']}: {t['vs_linv_float64']:.2f}x linv float64, "
              f"{t['vs_numpy']:.2f}x numpy")


if __name__ == "__main__":
    main()
