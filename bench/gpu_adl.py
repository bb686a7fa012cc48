#!/usr/bin/env python3
"""GPU atom-assisted dictionary learning (ADL, majorisation-minimisation) against the same iteration in
PyTorch (bench/peers/torch_adl.py), at the fMRI thesis's size: 274 x 902629, K = 10 atoms, Ts = Td = 20
inner steps per outer iteration, float32 and float64.

- linv: `linv bench adl --device cuda`: X uniform in [-1, 1] generated on the GPU; the whole call (||X||_F,
  the start, every outer iteration) timed by a host clock after a warm-up call, median of --repeats; the
  call returns when the result is complete.
- torch: bench/peers/torch_adl.py's adl_torch on X of the same shape and distribution on the same GPU,
  TF32 off, the whole call timed by CUDA events after a warm-up call, median of --repeats.
ratio = torch_s / linv_s. Target: >= 3x in float32 at 200 outer iterations.

Floor: per outer iteration two passes over X (D^T X and X S^T) and, for linv's fused coefficient steps,
about six passes over a K x N matrix (D^T X and S read, S written, S S^T and X S^T reading S); bytes over
the copy bandwidth, or the flops (2 K^2 N per coefficient step, 4 T K N for the two products) over the
matrix-product rate, whichever is larger.

Writes bench/results/<h100|h200|slug>/adl.json (and copies it to $OUT/ when OUT is set) and prints a table.

    python3 bench/gpu_adl.py --linv build/bin/linv [--sizes 274x902629] [--iters 200] [--repeats 3]
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
_spec = importlib.util.spec_from_file_location("linv_torch_adl", os.path.join(HERE, "peers", "torch_adl.py"))
torch_adl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(torch_adl)

ATOMS, INNER = 10, 20
CEILINGS = {"fp32_tflops": 51.1, "fp64_tflops": 56.9, "copy_tbps": 3.0}  # H100, BENCHMARKS.md


def floor_seconds(T, N, K, iters, size):
    bytes_ = iters * (2 * T * N + 6 * K * N) * size
    flops = iters * (2 * K * K * N * INNER + 4 * T * K * N)
    rate = CEILINGS["fp32_tflops" if size == 4 else "fp64_tflops"] * 1e12
    return max(bytes_ / (CEILINGS["copy_tbps"] * 1e12), flops / rate)


def torch_peer(T, N, dtype, iters, repeats):
    import torch
    g = torch.Generator(device="cuda").manual_seed(N)
    X = torch.rand((T, N), generator=g, device="cuda",
                   dtype=torch.float32 if dtype == "f32" else torch.float64) * 2 - 1
    result = {}

    def call():
        result["out"] = torch_adl.adl_torch(X, ATOMS, None, iters, INNER, INNER, 1.0, 1, dtype=dtype)

    median, times = inverse_bench.torch_time(call, repeats)
    objective = result["out"][2]
    del X, result["out"]
    torch.cuda.empty_cache()
    return median, times, objective


def main():
    def options(ap):
        ap.add_argument("--sizes", default="274x902629")
        ap.add_argument("--iters", type=int, default=200)

    args, command = inverse_bench.torch_bench_args(__doc__, "gpu_adl.py", options, repeats=3)
    status = {"torch": peers.backend("torch")[1]}
    rows, runs = [], inverse_bench.LinvRuns()
    with tempfile.TemporaryDirectory(prefix="linv-adl-") as tmp:
        for precision, dtype, size in (("single", "f32", 4), ("double", "f64", 8)):
            data = runs.report([args.linv, "bench", "adl", "--device", "cuda", "--precision", precision, "--sizes",
                                args.sizes, "--atoms", str(ATOMS), "--iters", str(args.iters), "--inner-s", str(INNER),
                                "--inner-d", str(INNER), "--repeats", str(args.repeats)],
                               os.path.join(tmp, f"adl-{precision}.json"))
            linv = {(r["time_points"], r["voxels"]): r for r in (data or {}).get("rows", [])}
            for s in args.sizes.split(","):
                T, N = (int(v) for v in s.lower().split("x"))
                peer = torch_peer(T, N, dtype, args.iters, args.repeats) if status["torch"]["available"] else None
                mine = linv.get((T, N))
                floor = floor_seconds(T, N, ATOMS, args.iters, size)
                rows.append({"case": f"adl {dtype}", "time_points": T, "voxels": N, "atoms": ATOMS,
                             "iterations": args.iters, "coefficient_steps": INNER, "dictionary_steps": INNER,
                             "linv_s": mine and mine["seconds"], "linv_s_all": mine and mine["seconds_all"],
                             "peer": "torch (bench/peers/torch_adl.py)", "peer_s": peer and peer[0],
                             "peer_s_all": peer and peer[1],
                             "ratio": peer[0] / mine["seconds"] if peer and mine else None,
                             "floor_s": floor, "floor_fraction": floor / mine["seconds"] if mine else None,
                             # different random X and starts of the same law: the final objective over
                             # ||X||_F^2 (the start), which both should bring to the same level
                             "linv_relative_objective": mine and mine["final_objective"] / mine["initial_objective"],
                             "peer_relative_objective": peer and peer[2][-1] / peer[2][0]})
    f32 = [r for r in rows if r["case"] == "adl f32" and r["time_points"] == 274 and r["voxels"] == 902629]
    targets = [{"target": f"ADL 274x902629, K=10, {args.iters} outer iterations: >= 3x the PyTorch implementation "
                          f"(float32)", "measured": r["ratio"],
                "status": "met" if r["ratio"] and r["ratio"] >= 3 else "missed"} for r in f32]
    fields = {"method": {"timing": f"linv: host clock around the synchronous call after a warm-up, median of "
                                   f"{args.repeats}; torch: CUDA events around the call after a warm-up, median "
                                   f"of {args.repeats}; X generated on the GPU by each, uniform in [-1, 1]",
                         "linv_commands": runs.commands},
              "ceilings": CEILINGS, "peers": status, "targets": targets, "rows": rows}
    inverse_bench.save_torch_result("adl", status, None, command, fields, args.out_dir, linv_failures=runs.failures)
    fmt = inverse_bench.fmt
    inverse_bench.print_summary(
        (f"{r['case']} {r['time_points']}x{r['voxels']} {r['iterations']} iterations: linv {fmt(r['linv_s'], '8.4f')} s"
         f"  torch {fmt(r['peer_s'], '8.4f')} s  ratio {fmt(r['ratio'], '6.2f')}x  floor {r['floor_s']:.4f} s "
         f"({fmt(r['floor_fraction'], '.2f')})  f/f0 linv {fmt(r['linv_relative_objective'], '.5f')} torch "
         f"{fmt(r['peer_relative_objective'], '.5f')}" for r in rows),
        targets, lambda t: f"{fmt(t['measured'], '.3g')}x")
    return 1 if runs.failures else 0

if __name__ == "__main__":
    sys.exit(main())
