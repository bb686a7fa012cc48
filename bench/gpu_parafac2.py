#!/usr/bin/env python3
"""GPU PARAFAC2 at the fMRI thesis's size: 3 slabs of 274 x 902629 (time points x voxels), rank F = 8,
1000 iterations, float32 and float64. Target: <= 10 s (the thesis: 12 506 s in MATLAB on a CPU).

- linv: `linv bench parafac2 --device cuda`: the slabs uniform in [-1, 1] generated on the GPU; the whole
  call (the Gram matrices, the SVD start, every iteration, the final P_k) timed by a host clock after a
  warm-up call, median of --repeats, at --iters iterations and at 10 (their difference over the
  iterations between gives the cost of one iteration).
- peer: TensorLy's parafac2 on its PyTorch backend on the same GPU (when TensorLy is importable; carry its
  wheel to the GPU machine), on slabs of the same shape and law, CUDA events around 10 iterations after a
  2-iteration warm-up, median of --repeats. TensorLy works on the data at every iteration (an SVD of each
  J x F product) where linv works on I x I Gram matrices, so its cost grows with the voxels; its 1000
  iterations are estimated as 100 times its 10, and the JSON says so.

Writes bench/results/<h100|h200|slug>/parafac2.json (and copies it to $OUT/ when OUT is set) and prints a
table.

    python3 bench/gpu_parafac2.py --linv build/bin/linv [--size 274x902629x3] [--iters 1000] [--repeats 3]
"""
import importlib.util
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_gpu_inverse", os.path.join(HERE, "gpu_inverse.py"))
inverse_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inverse_bench)  # shared helpers
peers = inverse_bench.peers

RANK, PEER_ITERS = 8, 10


def tensorly_peer(I, J, K, dtype, repeats):
    """(median seconds of PEER_ITERS iterations, all, version) or an error string."""
    try:
        import tensorly as tl
        from tensorly.decomposition import parafac2
        import torch
    except ImportError as e:
        return f"TensorLy or PyTorch missing: {e}"
    tl.set_backend("pytorch")
    g = torch.Generator(device="cuda").manual_seed(I)
    t = torch.float32 if dtype == "f32" else torch.float64
    # TensorLy's slabs are J_k x I (its B_i diag(a_i) C^T), ours transposed
    slabs = [(torch.rand((J, I), generator=g, device="cuda", dtype=t) * 2 - 1) for _ in range(K)]

    def run(iterations):
        # the same iteration as linv's: one CP-ALS sweep after each P-step, no line search, no stopping test
        return parafac2(slabs, RANK, n_iter_max=iterations, init="random", tol=0, n_iter_parafac=1, linesearch=False,
                        random_state=0)

    run(2)  # warm-up
    median, times = inverse_bench.torch_time(lambda: run(PEER_ITERS), repeats)
    del slabs
    torch.cuda.empty_cache()
    return median, times, tl.__version__


def main():
    def options(ap):
        ap.add_argument("--size", default="274x902629x3")
        ap.add_argument("--iters", type=int, default=1000)

    args, command = inverse_bench.torch_bench_args(__doc__, "gpu_parafac2.py", options, repeats=3)
    I, J, K = (int(v) for v in args.size.lower().split("x"))
    status = {"torch": peers.backend("torch")[1]}
    rows, runs = [], inverse_bench.LinvRuns()
    with tempfile.TemporaryDirectory(prefix="linv-parafac2-") as tmp:
        for precision, dtype in (("single", "f32"), ("double", "f64")):
            linv = {}
            for iters in (args.iters, PEER_ITERS):
                data = runs.report([args.linv, "bench", "parafac2", "--device", "cuda", "--precision", precision,
                                    "--sizes", args.size, "--rank", str(RANK), "--iters", str(iters), "--repeats",
                                    str(args.repeats)], os.path.join(tmp, f"parafac2-{precision}-{iters}.json"))
                linv[iters] = ((data or {}).get("rows") or [None])[0]
            peer = tensorly_peer(I, J, K, dtype, args.repeats) if status["torch"]["available"] else "no PyTorch"
            full, short = linv[args.iters], linv[PEER_ITERS]
            per_iteration = (full["seconds"] - short["seconds"]) / (args.iters - PEER_ITERS) if full and short else None
            peer_ok = isinstance(peer, tuple)
            row = {"case": f"parafac2 {dtype}", "rows": I, "columns": J, "slabs": K, "rank": RANK,
                   "iterations": args.iters, "linv_s": full and full["seconds"], "linv_s_all": full and full["seconds_all"],
                   "linv_s_at_10_iterations": short and short["seconds"], "linv_s_per_iteration": per_iteration,
                   "linv_variance_explained": full and 1 - full["loss"] / full["norm_squared"],
                   "peer": f"tensorly.decomposition.parafac2 (PyTorch backend, {PEER_ITERS} iterations, init random, "
                           f"one CP sweep per iteration, no line search)",
                   "peer_s_10_iterations": peer[0] if peer_ok else None, "peer_s_all": peer[1] if peer_ok else None,
                   "peer_s_per_iteration": peer[0] / PEER_ITERS if peer_ok else None,
                   "peer_s_estimated": peer[0] * args.iters / PEER_ITERS if peer_ok else None,
                   "ratio_per_iteration": peer[0] / PEER_ITERS / per_iteration if peer_ok and per_iteration else None,
                   "ratio_estimated": peer[0] * args.iters / PEER_ITERS / full["seconds"] if peer_ok and full else None}
            if not peer_ok:
                row["peer_skipped"] = peer
            else:
                status["tensorly"] = {"available": True, "version": peer[2]}
            rows.append(row)
    targets = [{"target": f"PARAFAC2 {args.size}, F={RANK}, {args.iters} iterations in <= 10 s ({r['case']})",
                "measured": r["linv_s"], "status": "met" if r["linv_s"] and r["linv_s"] <= 10 else "missed"}
               for r in rows]
    fields = {"method": {"timing": f"linv: host clock around the synchronous call after a warm-up, median of "
                                   f"{args.repeats}, data generated on the GPU; TensorLy: CUDA events around "
                                   f"{PEER_ITERS} iterations after a warm-up, median of {args.repeats}",
                         "linv_commands": runs.commands},
              "peers": status, "targets": targets, "rows": rows}
    inverse_bench.save_torch_result("parafac2", status, None, command, fields, args.out_dir,
                                    linv_failures=runs.failures)
    fmt = inverse_bench.fmt
    inverse_bench.print_summary(
        (f"{r['case']} {args.size} F={RANK}: linv {args.iters} iterations {fmt(r['linv_s'], '.3f')} s "
         f"({fmt(r['linv_s_per_iteration'], '.2e')} s each), TensorLy {fmt(r['peer_s_per_iteration'], '.2e')} s "
         f"per iteration: {fmt(r['ratio_per_iteration'], '.1f')}x per iteration, "
         f"{fmt(r['ratio_estimated'], '.1f')}x estimated end to end" for r in rows),
        targets, lambda t: f"{fmt(t['measured'], '.3g')} s")
    return 1 if runs.failures else 0

if __name__ == "__main__":
    sys.exit(main())
