#!/usr/bin/env python3
"""CPU Batch-OMP benchmark: `linv bench omp` against scikit-learn's orthogonal_mp_gram, the thesis's sizes.

linv times linv::fmri::batch_omp in process (G = D^T D and D^T X included; signals across the CPU's
threads), median of --repeats after a warm-up. scikit-learn then codes signals of the same shape: D (T x K,
normalised atoms) and X (T x N) uniform in [-1, 1], G = D.T @ D and Xy = D.T @ X computed inside the
timing, then orthogonal_mp_gram(G, Xy, n_nonzero_coefs=T0), timed with perf_counter, median of --repeats.
ratio = sklearn_s / linv_s. K = 9 atoms and T0 = 6 as in the thesis. Writes bench/results/cpu/omp.json.

    python3 bench/cpu_omp.py --linv build/bin/linv [--sizes 300x3600,...] [--repeats 3]
"""
import argparse
import datetime
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_cpu_inverse", os.path.join(HERE, "cpu_inverse.py"))
cpu_inverse = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cpu_inverse)  # shared helpers (cpu_name, median_time)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", required=True)
    ap.add_argument("--sizes", default="300x3600,450x5400,600x7200,1500x18000,900x125000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "cpu", "omp.json"))
    args = ap.parse_args()
    from sklearn import __version__ as sklearn_version
    from sklearn.linear_model import orthogonal_mp_gram
    K, T0 = 9, 6
    with tempfile.TemporaryDirectory(prefix="linv-cpu-omp-") as tmp:
        linv_json = os.path.join(tmp, "linv.json")
        subprocess.run([args.linv, "bench", "omp", "--sizes", args.sizes, "--atoms", str(K), "--sparsity", str(T0),
                        "--repeats", str(args.repeats), "--json", linv_json], check=True)
        with open(linv_json) as f:
            linv = {(r["time_points"], r["signals"]): r for r in json.load(f)["rows"]}
    rng = np.random.default_rng(0)
    rows = []
    for size in args.sizes.split(","):
        T, N = (int(v) for v in size.split("x"))
        D = rng.uniform(-1, 1, (T, K))
        D /= np.linalg.norm(D, axis=0)
        X = rng.uniform(-1, 1, (T, N))

        def run():
            return orthogonal_mp_gram(D.T @ D, D.T @ X, n_nonzero_coefs=T0)

        time.sleep(0.5)  # let linv's threads go quiet
        sk, times = cpu_inverse.median_time(run, args.repeats)
        lr = linv[(T, N)]
        rows.append({"time_points": T, "signals": N, "atoms": K, "sparsity": T0, "linv_s": lr["seconds"],
                     "linv_s_all": lr["seconds_all"], "sklearn_s": sk, "sklearn_s_all": times,
                     "ratio": sk / lr["seconds"]})
        print(f"omp {T}x{N}: linv {lr['seconds']:.4f} s  sklearn {sk:.4f} s  ratio {sk / lr['seconds']:.1f}x",
              flush=True)
    result = {"benchmark": "omp", "device": cpu_inverse.cpu_name(), "date": datetime.date.today().isoformat(),
              "versions": {"linv": os.environ.get("LINV_GIT_SHA") or "unknown", "sklearn": sklearn_version,
                           "numpy": np.__version__, "python": sys.version.split()[0]},
              "command": " ".join(["python3", "bench/cpu_omp.py"] + sys.argv[1:]),
              "method": "linv: in process, median of repeats after a warm-up; sklearn: orthogonal_mp_gram on "
                        "data of the same shape with G and D^T X computed inside the timing, perf_counter, median",
              "target": "sklearn_s / linv_s >= 5 on the 2-core CPU", "rows": rows}
    cpu_inverse.write_json(result, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
