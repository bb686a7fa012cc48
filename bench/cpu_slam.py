#!/usr/bin/env python3
"""CPU SLAM pseudoinverse sweep: `linv bench slam` against dense NumPy normal equations, same Jacobians.

linv times its bordered-Jacobian Gauss-Newton step J^+ d (never forming J^+) and the materialised J^+
(median of --repeats after a warm-up). NumPy then works on the very same matrices (written by
`linv gen jacobian` with the same seed, as dense arrays): the step as solve(J^T J, J^T d) and J^+ as
solve(J^T J, J^T), each timed with perf_counter, median of --repeats. ratio = numpy_s / linv_s.
Writes bench/results/cpu/slam.json.

    python3 bench/cpu_slam.py --linv build/bin/linv [--cases 20000:100,60000:500,120000:1000] [--repeats 3]
"""
import argparse
import datetime
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_cpu_inverse", os.path.join(HERE, "cpu_inverse.py"))
cpu_inverse = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cpu_inverse)  # shared helpers (cpu_name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", required=True)
    ap.add_argument("--cases", default="20000:100,60000:500,120000:1000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "cpu", "slam.json"))
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="linv-cpu-slam-") as tmp:
        linv_json = os.path.join(tmp, "linv.json")
        subprocess.run([args.linv, "bench", "slam", "--cases", args.cases, "--repeats", str(args.repeats), "--json",
                        linv_json], check=True)
        with open(linv_json) as f:
            linv = {(r["n"], r["m"]): r for r in json.load(f)["rows"]}
        for case in args.cases.split(","):
            n, m = (int(v) for v in case.split(":"))
            path = os.path.join(tmp, "J.npy")
            subprocess.run([args.linv, "gen", "jacobian", "--rows", str(n), "--cols", str(m), "--seed", "1", "-o", path],
                           check=True)
            J = np.load(path)
            d = np.random.default_rng(2).uniform(-1, 1, (n, 1))
            step_s, step_all = cpu_inverse.median_time(lambda: np.linalg.solve(J.T @ J, J.T @ d), args.repeats)
            pinv_s, pinv_all = cpu_inverse.median_time(lambda: np.linalg.solve(J.T @ J, J.T), args.repeats)
            lr = linv[(n, m)]
            rows.append({"case": "SLAM pseudoinverse, bordered Jacobian (1 dense column)", "n": n, "m": m,
                         "linv_step_s": lr["step_seconds"], "numpy_step_s": step_s,
                         "step_ratio": step_s / lr["step_seconds"], "linv_pinv_s": lr["pinv_seconds"],
                         "numpy_pinv_s": pinv_s, "pinv_ratio": pinv_s / lr["pinv_seconds"],
                         "peer": "numpy.linalg.solve(J^T J, J^T [d]) on the dense J",
                         "linv_check": lr["step_vs_pinv_relative_difference"],
                         "numpy_step_s_all": step_all, "numpy_pinv_s_all": pinv_all})
            print(f"n={n:7d} m={m:5d}  step: linv {lr['step_seconds']:.6f} s numpy {step_s:.4f} s ({rows[-1]['step_ratio']:.0f}x)"
                  f"  J^+: linv {lr['pinv_seconds']:.4f} s numpy {pinv_s:.4f} s ({rows[-1]['pinv_ratio']:.1f}x)", flush=True)
            del J
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout.strip()
    result = {"benchmark": "slam", "device": cpu_inverse.cpu_name(), "date": datetime.date.today().isoformat(),
              "versions": {"linv": os.environ.get("LINV_GIT_SHA") or git or "unknown", "numpy": np.__version__,
                           "python": sys.version.split()[0]},
              "command": " ".join(["python3", "bench/cpu_slam.py"] + sys.argv[1:]),
              "method": {"timing": f"median of {args.repeats} after a warm-up; linv through `linv bench slam`, "
                                   "numpy with perf_counter in this process", "threads": os.cpu_count()},
              "rows": rows}
    cpu_inverse.write_json(result, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
