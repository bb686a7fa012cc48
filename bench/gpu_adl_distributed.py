#!/usr/bin/env python3
"""Voxel-parallel ADL on several GPUs against one (issue 20): X of T time points x N voxels, float32, K
atoms, a fixed number of outer iterations.

1. Fit only: `linv bench adl` with X made on each GPU and each process fitting its share of the voxels
   (`--devices cuda:0,cuda:1`: one process per GPU, started by linv, the sums over voxels over NCCL) against
   the same on one GPU (`--device cuda`). Host clock around each complete fit, after a warm-up, median of
   --repeats.
2. End to end: `linv adl X.npy` from one C-order .npy (as np.save writes it; each process reads its columns)
   to the dictionary and the codes on disk, with --devices against --device cuda. Wall clock of the whole
   command, after a warm-up run of each, median of --repeats; the two runs' dictionaries are compared.

Rows follow BENCHMARKS.md's schema: linv_s is the several-GPU time, peer_s linv's one-GPU time, ratio =
peer_s / linv_s. Writes bench/results/<h200x2|...>/adl_distributed.json (and $OUT/).

    python3 bench/gpu_adl_distributed.py --linv build/bin/linv
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
    args = p2.parse_args(__doc__, 902629, {"--atoms": 10, "--iters": 20})
    T, N, K = args.rows, args.voxels, args.atoms
    ndev = len(args.devices.split(","))
    tmp = tempfile.mkdtemp(prefix="linv-adl-")
    rows = []

    common = ["bench", "adl", "--sizes", f"{T}x{N}", "-k", K, "--iters", args.iters, "--precision", "single",
              "--repeats", args.repeats]
    fits = p2.bench_both(args.linv, common, args.devices, tmp, args.timeout)
    if len(fits) == 2:
        many, one = fits["many"][0], fits["one"][0]
        rows.append(p2.comparison_row(
            f"adl fit, float32 X on the GPUs, K={K}, {args.iters} iterations (Ts=Td=20), {ndev} GPUs", N, 1, T,
            many["seconds"], "linv on one GPU", one["seconds"], objective=many["final_objective"],
            peer_objective=one["final_objective"],
            objective_relative_difference=abs(many["final_objective"] - one["final_objective"]) /
            one["final_objective"]))

    cli = ["adl", p2.low_rank_npy(tmp, T, N), "-k", K, "--iters", args.iters, "-q"]
    commands = {name: [args.linv, *cli, "--dictionary", f"{tmp}/D_{name}.npy", "--codes", f"{tmp}/S_{name}.npy",
                       "--report", f"{tmp}/{name}.json", *where] for name, where in p2.sides(args.devices)}
    measured = p2.end_to_end(commands, {name: f"{tmp}/{name}.json" for name in commands}, args.repeats, args.timeout)
    if measured:
        times, many_s, one_s, rm, ro = measured
        D1, D2 = np.load(f"{tmp}/D_one.npy"), np.load(f"{tmp}/D_many.npy")
        rows.append(p2.comparison_row(
            f"linv adl from one .npy (float32, C order) to outputs, K={K}, {args.iters} iterations, {ndev} GPUs",
            N, 1, T, many_s, "linv adl on one GPU", one_s, seconds_all=times["many"], peer_seconds_all=times["one"],
            fit_seconds=rm["seconds"], peer_fit_seconds=ro["seconds"],
            dictionary_max_relative_difference=float(np.abs(D2 - D1).max() / np.abs(D1).max())))
    shutil.rmtree(tmp, ignore_errors=True)

    p2.finish("adl_distributed", ndev, args.results, rows)


if __name__ == "__main__":
    main()
