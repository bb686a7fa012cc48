#!/usr/bin/env python3
"""Signal-parallel k-SVD on several GPUs against one (issue 20): X of T time points x N voxels, float32, K
atoms, sparsity T0, a fixed number of iterations, both variants.

1. Fit only: `linv bench ksvd` with X made on each GPU and each process fitting its share of the signals
   (`--devices cuda:0,cuda:1`: one process per GPU, started by linv, each atom update's sums over NCCL)
   against the same on one GPU (`--device cuda`). Host clock around each complete fit, after a warm-up,
   median of --repeats.
2. End to end: `linv ksvd X.npy` (approximate) from one C-order .npy (each process reads its columns) to
   the dictionary and the codes on disk, with --devices against --device cuda. Wall clock of the whole
   command, after a warm-up run of each, median of --repeats; the two runs' RMSE histories are compared.

Rows follow BENCHMARKS.md's schema: linv_s is the several-GPU time, peer_s linv's one-GPU time, ratio =
peer_s / linv_s. Writes bench/results/<h200x2|...>/ksvd_distributed.json (and $OUT/).

    python3 bench/gpu_ksvd_distributed.py --linv build/bin/linv
"""
import importlib.util
import os
import shutil
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_gpu_parafac2_distributed",
                                               os.path.join(HERE, "gpu_parafac2_distributed.py"))
p2 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(p2)  # bench_both(), time_both(), finish()


def main():
    args = p2.parse_args(__doc__, 902629, {"--atoms": 9, "--sparsity": 6, "--iters": 30})
    T, N, K, T0 = args.rows, args.voxels, args.atoms, args.sparsity
    ndev = len(args.devices.split(","))
    tmp = tempfile.mkdtemp(prefix="linv-ksvd-")
    rows = []

    common = ["bench", "ksvd", "--sizes", f"{T}x{N}", "--atoms", K, "--sparsity", T0, "--iters", args.iters,
              "--precision", "single", "--variant", "both", "--repeats", args.repeats]
    fits = {name: {r["variant"]: r for r in rows}
            for name, rows in p2.bench_both(args.linv, common, args.devices, tmp, args.timeout).items()}
    if len(fits) == 2:
        for variant in ("approximate", "exact"):
            many, one = fits["many"][variant], fits["one"][variant]
            rows.append(p2.comparison_row(
                f"ksvd fit, {variant}, float32 X on the GPUs, K={K}, T0={T0}, {args.iters} iterations, {ndev} GPUs",
                N, 1, T, many["seconds"], "linv on one GPU", one["seconds"], rmse=many["rmse_last"],
                peer_rmse=one["rmse_last"], seconds_all=many["seconds_all"], peer_seconds_all=one["seconds_all"]))

    cli = ["ksvd", p2.low_rank_npy(tmp, T, N), "-k", K, "--sparsity", T0, "--iters", args.iters, "--approximate", "-q"]
    commands = {name: [args.linv, *cli, "--dictionary", f"{tmp}/D_{name}.npy", "--codes", f"{tmp}/G_{name}.npy",
                       "--report", f"{tmp}/{name}.json", *where] for name, where in p2.sides(args.devices)}
    measured = p2.end_to_end(commands, {name: f"{tmp}/{name}.json" for name in commands}, args.repeats, args.timeout)
    if measured:
        times, many_s, one_s, rm, ro = measured
        rows.append(p2.comparison_row(
            f"linv ksvd --approximate from one .npy (float32, C order) to outputs, K={K}, T0={T0}, {args.iters} "
            f"iterations, {ndev} GPUs", N, 1, T, many_s, "linv ksvd on one GPU", one_s, seconds_all=times["many"],
            peer_seconds_all=times["one"], fit_seconds=rm["seconds"], peer_fit_seconds=ro["seconds"],
            rmse=rm["rmse"][-1], peer_rmse=ro["rmse"][-1],
            rmse_max_relative_difference=float(np.max(np.abs(np.array(rm["rmse"]) - ro["rmse"]) /
                                                      np.array(ro["rmse"])))))
    shutil.rmtree(tmp, ignore_errors=True)

    p2.finish("ksvd_distributed", ndev, args.results, rows)


if __name__ == "__main__":
    main()
