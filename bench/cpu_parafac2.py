#!/usr/bin/env python3
"""CPU PARAFAC2 benchmark: `linv parafac2` against TensorLy's parafac2, side by side in one run.

The data: K slabs of I time points x J voxels (default 200 x 7200 x 3), float64, uniform in [-1, 1], written
as one K x I x J .npy. Both start from the same factors (A and C uniform in [0, 1), H = I, written to a
directory for `linv parafac2 --initial`) and run exactly --iters iterations of the same algorithm: a P-step,
then one CP-ALS sweep (TensorLy: n_iter_parafac=1, linesearch=False, tol=0, which also skips its error
computation; linv: --tol 0). TensorLy's slices are the slabs transposed (X_k^T, J x I), its factors [A, B, C]
linv's [C, H, A].

Timed on the computation alone: linv's `seconds` from its report (reading and writing files excluded; the
Gram matrices and the final P_k included), TensorLy's call by perf_counter. Calls alternate after a warm-up,
each after a pause so that the other's OpenBLAS threads have gone quiet; median of --repeats. Both fits are
checked against each other: ||X - model||^2 formed explicitly from each one's factors.
ratio = tensorly_s / linv_s. Writes bench/results/cpu/parafac2.json.

    python3 bench/cpu_parafac2.py --linv build/bin/linv [--size 200x7200x3] [--rank 8] [--iters 100]
"""
import argparse
import datetime
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_cpu_inverse", os.path.join(HERE, "cpu_inverse.py"))
cpu_inverse = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cpu_inverse)  # shared helpers (cpu_name, PAUSE_S)


def loss(X, a, h, c, P):
    return sum(np.linalg.norm(X[k] - (a * c[k]) @ (P[k] @ h).T) ** 2 for k in range(len(X)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", required=True)
    ap.add_argument("--size", default="200x7200x3", help="IxJxK: time points x voxels per slab x slabs")
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "cpu", "parafac2.json"))
    args = ap.parse_args()
    import tensorly
    from tensorly.decomposition import parafac2
    from tensorly.parafac2_tensor import Parafac2Tensor

    I, J, K = (int(v) for v in args.size.split("x"))
    F = args.rank
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (K, I, J))
    start = {"A": rng.uniform(0, 1, (I, F)), "H": np.eye(F), "C": rng.uniform(0, 1, (K, F))}
    projections = [np.linalg.qr(rng.standard_normal((J, F)))[0] for _ in range(K)]  # TensorLy recomputes them
    slices = [x.T for x in X]

    def tensorly_run():
        init = Parafac2Tensor((np.ones(F), [start["C"].copy(), start["H"].copy(), start["A"].copy()], projections))
        return parafac2(slices, F, init=init, n_iter_max=args.iters, tol=0, n_iter_parafac=1, linesearch=False)

    with tempfile.TemporaryDirectory(prefix="linv-cpu-parafac2-") as tmp:
        data, init_dir, out = os.path.join(tmp, "X.npy"), os.path.join(tmp, "start"), os.path.join(tmp, "out")
        np.save(data, X)
        os.makedirs(init_dir)
        for name, value in start.items():
            np.save(os.path.join(init_dir, name + ".npy"), value)

        def linv_run():
            subprocess.run([args.linv, "parafac2", data, "--rank", str(F), "--out", out, "--initial", init_dir,
                            "--iters", str(args.iters), "--tol", "0", "--quiet"], check=True)
            with open(os.path.join(out, "report.json")) as f:
                return json.load(f)

        linv_run()  # warm-up
        fit = tensorly_run()
        linv_times, tl_times = [], []
        for _ in range(args.repeats):
            time.sleep(cpu_inverse.PAUSE_S)
            report = linv_run()
            linv_times.append(report["seconds"])
            time.sleep(cpu_inverse.PAUSE_S)
            t = time.perf_counter()
            fit = tensorly_run()
            tl_times.append(time.perf_counter() - t)
        a, h, c = (np.load(os.path.join(out, n + ".npy")) for n in "AHC")
        linv_loss = loss(X, a, h, c, [np.load(os.path.join(out, f"P_{k}.npy")) for k in range(K)])
    weights, (tc, th, ta), tp = fit
    tl_loss = loss(X, ta, th, tc * weights, tp)
    linv_s, tl_s = statistics.median(linv_times), statistics.median(tl_times)
    row = {"rows": I, "columns": J, "slabs": K, "rank": F, "iterations": report["iterations"], "linv_s": linv_s,
           "linv_s_all": linv_times, "tensorly_s": tl_s, "tensorly_s_all": tl_times, "ratio": tl_s / linv_s,
           "linv_loss": linv_loss, "tensorly_loss": tl_loss, "norm_squared": float(np.sum(X ** 2))}
    print(f"parafac2 {I}x{J}x{K} F={F}, {args.iters} iterations: linv {linv_s:.4f} s  TensorLy {tl_s:.4f} s  "
          f"ratio {tl_s / linv_s:.1f}x | loss linv {linv_loss:.6f} TensorLy {tl_loss:.6f}", flush=True)
    result = {"benchmark": "parafac2", "device": cpu_inverse.cpu_name(), "date": datetime.date.today().isoformat(),
              "versions": {"linv": os.environ.get("LINV_GIT_SHA") or "unknown", "tensorly": tensorly.__version__,
                           "numpy": np.__version__, "python": sys.version.split()[0]},
              "command": " ".join(["python3", "bench/cpu_parafac2.py"] + sys.argv[1:]),
              "method": "same data, same start, same iteration count; linv: the seconds of its report (computation "
                        "only); TensorLy: parafac2(n_iter_parafac=1, linesearch=False, tol=0) by perf_counter; "
                        "alternating calls after a pause, median",
              "target": "tensorly_s / linv_s >= 3 on the 2-core CPU", "rows": [row]}
    cpu_inverse.write_json(result, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
