#!/usr/bin/env python3
"""CPU inverse benchmark: `linv inv` against numpy.linalg.inv, side by side in one run.

Both are timed on the computation alone (linv: the `seconds` of its report, which excludes reading and
writing files; NumPy: the call of numpy.linalg.inv), alternating with a pause between calls, after a
warm-up, median of --repeats.
The floor is 2n^3 flops (an inverse in the fewest flops) at the matrix-product rate NumPy reaches on the
same machine. Writes bench/results/cpu/inverse.json in the format of ../shared/BENCHMARKS.md.

    python3 bench/cpu_inverse.py --linv build/bin/linv [--sizes 1024 2048] [--repeats 7]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PAUSE_S = 0.3


def write_json(result, path):
    """Writes result to path as indented JSON, atomically (a temporary file, then a rename)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def scaled_residual(a, x):
    n = a.shape[0]
    r = a @ x - np.eye(n)
    return np.linalg.norm(r, 1) / (n * np.finfo(a.dtype).eps * np.linalg.norm(a, 1) * np.linalg.norm(x, 1))


def median_time(call, repeats):
    """(median, all) seconds of call() by perf_counter, after one warm-up call."""
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def matmul_rate(n, repeats=3):
    a = np.random.default_rng(0).uniform(-1, 1, (n, n))
    a @ a
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        a @ a
        ts.append(time.perf_counter() - t)
    return 2.0 * n ** 3 / statistics.median(ts)


def linv_inverse(linv, a_path, x_path, report, method):
    subprocess.run([linv, "inv", a_path, "-o", x_path, "--method", method, "--report", report, "--no-check",
                    "--quiet"], check=True)
    with open(report) as f:
        return json.load(f)["seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", required=True)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048])
    ap.add_argument("--methods", nargs="+", default=["auto", "lu", "gauss-jordan"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "cpu", "inverse.json"))
    args = ap.parse_args()

    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "unknown"
    info = subprocess.run([args.linv, "info"], capture_output=True, text=True).stdout
    rows, rates = [], {}
    with tempfile.TemporaryDirectory(prefix="linv-bench-") as tmp:
        for n in args.sizes:
            a = np.random.default_rng(n).uniform(-1, 1, (n, n))
            a_path, x_path, report = (os.path.join(tmp, f) for f in ("a.npy", "x.npy", "r.json"))
            np.save(a_path, a)
            rate = rates[n] = matmul_rate(n)
            floor = 2.0 * n ** 3 / rate
            for method in args.methods:
                np.linalg.inv(a)  # warm-up, both sides
                linv_inverse(args.linv, a_path, x_path, report, method)
                peer_t, linv_t = [], []
                for _ in range(args.repeats):
                    # OpenBLAS's worker threads spin for a while after a call; a pause before each timed
                    # call keeps one side's spinning threads from competing with the other's work.
                    time.sleep(PAUSE_S)
                    t = time.perf_counter()
                    x_ref = np.linalg.inv(a)
                    peer_t.append(time.perf_counter() - t)
                    time.sleep(PAUSE_S)
                    linv_t.append(linv_inverse(args.linv, a_path, x_path, report, method))
                x = np.load(x_path)
                peer_s, linv_s = statistics.median(peer_t), statistics.median(linv_t)
                rows.append({"case": f"inverse fp64 ({method})", "n": n, "batch": 1, "linv_s": linv_s,
                             "peer": "numpy.linalg.inv", "peer_s": peer_s, "ratio": peer_s / linv_s,
                             "floor_s": floor, "floor_fraction": floor / linv_s,
                             "linv_error": scaled_residual(a, x), "peer_error": scaled_residual(a, x_ref)})
                r = rows[-1]
                print(f"n={n:5d} {method:13s} linv {linv_s:.4f} s  numpy {peer_s:.4f} s  ratio {r['ratio']:.2f}  "
                      f"floor {r['floor_fraction']:.0%}  residual {r['linv_error']:.3g} / {r['peer_error']:.3g}",
                      flush=True)
    result = {
        "benchmark": "inverse", "device": cpu_name() + f" ({os.cpu_count()} cores)",
        "date": datetime.date.today().isoformat(),
        "versions": {"linv": sha, "numpy": np.__version__, "python": platform.python_version(),
                     "linv_blas": next((l.split(":", 1)[1].strip() for l in info.splitlines() if "BLAS" in l), "")},
        "command": "python3 bench/cpu_inverse.py --linv build/bin/linv " + " ".join(sys.argv[3:]),
        "ceilings": {"fp64_matmul_gflops": {str(n): round(r / 1e9, 1) for n, r in rates.items()}},
        "rows": rows,
    }
    write_json(result, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
