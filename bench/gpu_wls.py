#!/usr/bin/env python3
"""GPU weighted least-squares benchmark: `linv bench wls --device cuda` against PyTorch's form + Cholesky +
solve of the same normal equations A D^2 A^T x = A D^2 b.

Data (the paper's): A (m x n, n = 2m), d (the diagonal of D^2) and b uniform in [0, 1], float64, generated
on the GPU.
1. `linv bench wls` runs alone on the GPU: linv::wls one-shot (copy of A, formation of one triangle of C by
   a symmetric rank-n update, Cholesky, solve; mixed: the paper's Algorithm 1 with C formed in float64
   and factored in float32), full and rectangular full packed storage; host clock around the synchronous
   call after a warm-up, median of --repeats.
2. In this process, PyTorch: Ad = A * d; C = Ad @ A.T; L = torch.linalg.cholesky(C);
   x = torch.cholesky_solve(Ad @ b, L), timed together with CUDA events after a warm-up, median of --repeats.
ratio = torch_s / linv_s (above 1: linv is faster). Accuracy: the normal equations' relative residual
||A D^2 (b - A^T x)||_2 / (||A D||_F^2 ||x||_2), in float64 (on the host for linv, on the GPU for torch).

Writes bench/results/<h100|h200|slug>/wls.json (and copies it to $OUT/ when OUT is set) and prints a table
and the targets (m = 8192: a float64-accurate result >= 2x PyTorch; packed within 5 % of full).

    python3 bench/gpu_wls.py --linv build/bin/linv [--sizes 2048,8192] [--repeats 5]
"""
import importlib.util
import os
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_gpu_inverse", os.path.join(HERE, "gpu_inverse.py"))
inverse_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inverse_bench)  # shared helpers
peers = inverse_bench.peers


def torch_wls(m, repeats):
    import torch
    n = 2 * m
    g = torch.Generator(device="cuda").manual_seed(m)
    a = torch.rand((m, n), generator=g, device="cuda", dtype=torch.float64)
    d = torch.rand((n,), generator=g, device="cuda", dtype=torch.float64)
    b = torch.rand((n, 1), generator=g, device="cuda", dtype=torch.float64)

    def run():
        ad = a * d
        c = ad @ a.T
        chol = torch.linalg.cholesky(c)
        return torch.cholesky_solve(ad @ b, chol)

    seconds, times = inverse_bench.torch_time(run, repeats)
    x = run()
    r = a @ (d[:, None] * (b - a.T @ x))
    residual = (r.norm() / ((a * a * d).sum() * x.norm())).item()
    del a, d, b, x, r
    torch.cuda.empty_cache()
    return {"peer": "torch: (A*d) @ A.T, linalg.cholesky, cholesky_solve (float64)",
            "seconds": seconds, "seconds_all": times, "normal_residual": residual}


def main():
    args, command = inverse_bench.torch_bench_args(
        __doc__, "gpu_wls.py", lambda ap: ap.add_argument("--sizes", default="2048,8192"), repeats=5)
    sizes = [int(v) for v in args.sizes.split(",") if v]
    linv_data, linv_failure, cmd = inverse_bench.run_linv_json(
        [args.linv, "bench", "wls", "--device", "cuda", "--sizes", args.sizes, "--precisions", "double,mixed",
         "--storages", "full,packed", "--repeats", str(args.repeats)], "linv-wls-")

    status = {"torch": peers.backend("torch")[1]}
    linv_rows = (linv_data or {}).get("rows", [])
    rows = []
    for m in sizes:
        pr = torch_wls(m, args.repeats) if status["torch"]["available"] else {}
        print(f"torch wls m={m}: " + (f"{pr['seconds']:.4f} s" if pr else "SKIPPED"), flush=True)
        for lr in (r for r in linv_rows if int(r["m"]) == m):
            peer_s, linv_s = pr.get("seconds"), lr.get("seconds")
            rows.append({"case": f"wls {lr['precision']} {lr['storage']}", "m": m, "n": 2 * m, "linv_s": linv_s,
                         "peer": pr.get("peer"), "peer_s": peer_s,
                         "ratio": peer_s / linv_s if linv_s and peer_s else None,
                         "linv_error": lr.get("normal_residual"), "peer_error": pr.get("normal_residual"),
                         "linv_iterations": lr.get("iterations"), "linv_stop_reason": lr.get("stop_reason"),
                         "linv_c_bytes": lr.get("c_bytes"), "linv_s_all": lr.get("seconds_all"),
                         "peer_s_all": pr.get("seconds_all")})

    def row(m, case):
        return next((r for r in rows if r["m"] == m and r["case"] == case), None)

    targets = []
    accurate = [r for r in rows if r["m"] == 8192 and r["ratio"] is not None and r["linv_error"] is not None
                and r["peer_error"] is not None and r["linv_error"] <= 10 * r["peer_error"]]
    best = max(accurate, key=lambda r: r["ratio"], default=None)
    targets.append({"target": "m=8192, n=16384 float64-accurate wls >= 2x torch form + Cholesky + solve",
                    "case": best["case"] if best else None, "measured_ratio": best["ratio"] if best else None,
                    "status": inverse_bench.target_status(best and best["ratio"], lambda v: v >= 2)})
    for precision in ("double", "mixed"):
        full, packed = row(8192, f"wls {precision} full"), row(8192, f"wls {precision} packed")
        if full and packed and full["linv_s"] and packed["linv_s"]:
            slower = packed["linv_s"] / full["linv_s"] - 1
            targets.append({"target": f"m=8192 {precision}: packed within 5% of full on the GPU",
                            "measured_slowdown": slower, "status": "met" if slower <= 0.05 else "missed"})
    fields = {"method": {"timing": f"linv: host clock around the synchronous one-shot call after a warm-up, median "
                                   f"of {args.repeats}; torch: CUDA events after a warm-up, median of {args.repeats}",
                         "data": "A (m x 2m), d, b uniform in [0, 1], float64",
                         "error": "||A D^2 (b - A^T x)||_2 / (||A D||_F^2 ||x||_2)",
                         "accurate": "within 10x torch's float64 residual",
                         "linv_command": shlex.join(cmd)},
              "peers": status, "targets": targets, "rows": rows}
    inverse_bench.save_torch_result("wls", status, linv_data, command, fields, args.out_dir, linv_failure=linv_failure)
    fmt = inverse_bench.fmt
    inverse_bench.print_summary(
        (f"{r['case']:18s} m={r['m']:6d} linv {fmt(r['linv_s'], '8.4f')} s  torch {fmt(r['peer_s'], '8.4f')} s  "
         f"ratio {fmt(r['ratio'], '5.2f')}x  residual {fmt(r['linv_error'], '9.3g')} vs "
         f"{fmt(r['peer_error'], '9.3g')}  iterations {r['linv_iterations']}" for r in rows),
        targets, lambda t: fmt(t.get("measured_ratio", t.get("measured_slowdown")), ".3f"))
    return 1 if linv_failure else 0

if __name__ == "__main__":
    sys.exit(main())
