#!/usr/bin/env python3
"""GPU Batch-OMP and k-SVD benchmark at the fMRI thesis's sizes (K = 9 atoms, T0 = 6).

1. Batch-OMP alone: `linv bench omp --device cuda` with each GPU kernel (a thread per signal, a warp per
   signal), float32 and float64: X and D uniform in [-1, 1] generated on the GPU; G = D^T D, D^T X, the
   pursuit and the codes delivered to host memory; host clock around the synchronous call after a
   warm-up, median of --repeats. Beside it, in this process, the batched PyTorch OMP of
   bench/peers/torch_omp.py on data of the same shape and distribution, codes also delivered to host
   memory, CUDA events after a warm-up, median of --repeats. ratio = torch_s / linv_s.
2. k-SVD end to end, 30 iterations (`linv bench ksvd --device cuda`), float32 and float64: the
   approximate variant at every size, the exact one where T <= 300 (its T x T eigenproblem is solved by
   LAPACK on the host). Target: 274 x 902629 in <= 0.5 s.

Writes bench/results/<h100|h200|slug>/omp.json (and copies it to $OUT/ when OUT is set) and prints a table.

    python3 bench/gpu_omp.py --linv build/bin/linv [--sizes 300x3600,...] [--repeats 5]
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
_spec = importlib.util.spec_from_file_location("linv_torch_omp", os.path.join(HERE, "peers", "torch_omp.py"))
torch_omp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(torch_omp)

THESIS_SIZES = "300x3600,450x5400,600x7200,1500x18000,900x125000,274x902629"
ATOMS, SPARSITY = 9, 6


def torch_peer(T, N, dtype_name, repeats):
    import torch
    dtype = torch.float32 if dtype_name == "single" else torch.float64
    g = torch.Generator(device="cuda").manual_seed(T * 1000003 + N)
    D = torch.rand((T, ATOMS), dtype=dtype, device="cuda", generator=g) * 2 - 1
    D /= torch.linalg.vector_norm(D, dim=0)
    X = torch.rand((T, N), dtype=dtype, device="cuda", generator=g) * 2 - 1
    median, times = inverse_bench.torch_time(lambda: torch_omp.batched_omp(D, X, SPARSITY), repeats)
    device_only, _ = inverse_bench.torch_time(lambda: torch_omp.batched_omp(D, X, SPARSITY, deliver_to_host=False),
                                              repeats)
    del D, X
    torch.cuda.empty_cache()
    return median, times, device_only


def main():
    def options(ap):
        ap.add_argument("--sizes", default=THESIS_SIZES)
        ap.add_argument("--ksvd-iters", type=int, default=30)

    args, command = inverse_bench.torch_bench_args(__doc__, "gpu_omp.py", options, repeats=5)
    status = {"torch": peers.backend("torch")[1]}
    rows, ksvd_rows, runs = [], [], inverse_bench.LinvRuns()
    with tempfile.TemporaryDirectory(prefix="linv-omp-") as tmp:
        for precision in ("single", "double"):
            linv = {}
            for kernel in ("thread", "warp"):
                data = runs.report([args.linv, "bench", "omp", "--device", "cuda", "--precision", precision,
                                    "--kernel", kernel, "--atoms", str(ATOMS), "--sparsity", str(SPARSITY), "--sizes",
                                    args.sizes, "--repeats", str(args.repeats)],
                                   os.path.join(tmp, f"omp-{precision}-{kernel}.json"))
                for r in (data or {}).get("rows", []):
                    linv[(r["time_points"], r["signals"], kernel)] = r
            for size in args.sizes.split(","):
                T, N = (int(v) for v in size.split("x"))
                peer = torch_peer(T, N, precision, args.repeats) if status["torch"]["available"] else None
                thread, warp = linv.get((T, N, "thread")), linv.get((T, N, "warp"))
                best = min((r for r in (thread, warp) if r), key=lambda r: r["seconds"], default=None)
                rows.append({"precision": precision, "time_points": T, "signals": N, "atoms": ATOMS,
                             "sparsity": SPARSITY,
                             "linv_thread_s": thread and thread["seconds"], "linv_warp_s": warp and warp["seconds"],
                             "linv_s": best and best["seconds"], "linv_kernel": best and best["kernel"],
                             "peer": "torch batched OMP (bench/peers/torch_omp.py), codes to host",
                             "peer_s": peer and peer[0], "peer_s_all": peer and peer[1],
                             "peer_device_only_s": peer and peer[2],
                             "ratio": peer[0] / best["seconds"] if peer and best else None})
        # the exact variant's eigenproblem is T x T (LAPACK on the host): at the T <= 300 sizes only
        exact_sizes = ",".join(s for s in args.sizes.split(",") if int(s.split("x")[0]) <= 300)
        for precision, variant, sizes in [(p, v, z) for p in ("single", "double")
                                          for v, z in (("approximate", args.sizes), ("exact", exact_sizes)) if z]:
            data = runs.report([args.linv, "bench", "ksvd", "--device", "cuda", "--precision", precision, "--variant",
                                variant, "--atoms", str(ATOMS), "--sparsity", str(SPARSITY), "--iters",
                                str(args.ksvd_iters), "--sizes", sizes, "--repeats", str(max(1, args.repeats // 2))],
                               os.path.join(tmp, f"ksvd-{precision}-{variant}.json"))
            ksvd_rows += (data or {}).get("rows", [])

    big = [r for r in ksvd_rows if r["time_points"] == 274 and r["signals"] == 902629 and r["precision"] == "float32"]
    targets = [{"target": f"k-SVD 274x902629, K=9, T0=6, {args.ksvd_iters} iterations in <= 0.5 s ({r['variant']}, "
                          f"float32)", "measured": r["seconds"], "status": "met" if r["seconds"] <= 0.5 else "missed"}
               for r in big]
    fields = {"method": {"timing": f"linv: host clock around the synchronous call after a warm-up, median of "
                                   f"{args.repeats} (X and D already on the GPU, codes delivered to host "
                                   f"memory); torch: CUDA events after a warm-up, median of {args.repeats}, "
                                   f"codes also delivered to host memory",
                         "linv_commands": runs.commands},
              "peers": status, "targets": targets, "omp_rows": rows, "ksvd_rows": ksvd_rows}
    inverse_bench.save_torch_result("omp", status, None, command, fields, args.out_dir, linv_failures=runs.failures)
    fmt = inverse_bench.fmt
    lines = [f"omp {r['precision']:6s} {r['time_points']:5d}x{r['signals']:<7d} thread {fmt(r['linv_thread_s'], '9.5f')} "
             f"warp {fmt(r['linv_warp_s'], '9.5f')} torch {fmt(r['peer_s'], '9.5f')} (device only "
             f"{fmt(r['peer_device_only_s'], '9.5f')}) ratio {fmt(r['ratio'], '7.1f')}x" for r in rows]
    lines += [f"ksvd {r['precision']:7s} {r['variant']:11s} {r['time_points']:5d}x{r['signals']:<7d} "
              f"{r['iterations']} iterations {r['seconds']:8.4f} s" for r in ksvd_rows]
    inverse_bench.print_summary(lines, targets, lambda t: fmt(t["measured"], ".3g"))
    return 1 if runs.failures else 0

if __name__ == "__main__":
    sys.exit(main())
