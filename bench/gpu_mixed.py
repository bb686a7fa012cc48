#!/usr/bin/env python3
"""GPU mixed-precision solve benchmark: `linv bench solve --device cuda` against torch.linalg.solve and
cuSOLVER's own iterative-refinement solver.

1. `linv bench solve` runs alone on the GPU: a general float64 matrix (entries uniform in [-1, 1]) and one
   right-hand side generated there, `linv::solve` timed in float64 and in mixed precision (float32 LU, and
   TF32 / BF16 tensor-core LU, refined against the float64 residual) with a host clock around the
   synchronous call after a warm-up, median of --repeats; linv's call includes its input checks (and, in
   float64, its condition estimate).
2. The cuSOLVER peer (build/bin/peer_cusolver_irs, bench/peers/cusolver_irs.cu) runs alone: cusolverDnIRSXgesv
   called by hand with float32 / TF32 / BF16 factors, classical and GMRES refinement, plus plain float64
   getrf + getrs; CUDA events after a warm-up, median of --repeats.
3. In this process, torch.linalg.solve in float64 on a matrix of the same distribution, CUDA events after a
   warm-up, median of --repeats.
ratio = peer_s / linv_s (above 1: linv is faster). Errors are scaled residuals
||b - A x||_1 / (n eps ||A||_1 ||x||_1) with float64's eps.

Writes bench/results/<h100|h200|slug>/mixed.json (and copies it to $OUT/ when OUT is set) and prints a
table and the target (n = 16384 mixed >= 3x torch's float64 solve, error no worse than torch's).

    python3 bench/gpu_mixed.py --linv build/bin/linv [--sizes 4096,16384] [--repeats 5]
"""
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_gpu_inverse", os.path.join(HERE, "gpu_inverse.py"))
inverse_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inverse_bench)  # shared helpers
peers = inverse_bench.peers


def torch_solve(n, repeats):
    import torch
    g = torch.Generator(device="cuda").manual_seed(n)
    a = torch.rand((n, n), generator=g, device="cuda", dtype=torch.float64) * 2 - 1
    b = torch.rand((n, 1), generator=g, device="cuda", dtype=torch.float64) * 2 - 1
    seconds, times = inverse_bench.torch_time(lambda: torch.linalg.solve(a, b), repeats)
    x = torch.linalg.solve(a, b)
    r = ((b - a @ x).abs().sum() / (n * peers.EPS["f64"] * a.abs().sum(0).max() * x.abs().sum())).item()
    del a, b, x
    torch.cuda.empty_cache()
    return {"peer": "torch.linalg.solve (float64)", "seconds": seconds, "seconds_all": times,
            "scaled_residual": r}


def cusolver_irs(binary, sizes, repeats, tmp):
    """The cuSOLVER peer's rows keyed by (n, solver label), or ({}, why it did not run)."""
    if not os.path.exists(binary):
        return {}, f"{binary} not built (needs the CUDA backend)"
    rows = {}
    for refinement in ("classical", "gmres"):
        path = os.path.join(tmp, f"irs-{refinement}.json")
        cmd = [binary, "--sizes", sizes, "--lowest", "32F,TF32,16BF", "--refinement", refinement,
               "--repeats", str(repeats), "--json", path]
        print("running: " + shlex.join(cmd), flush=True)
        if subprocess.run(cmd).returncode != 0 or not os.path.exists(path):
            return rows, f"{shlex.join(cmd)} failed"
        with open(path) as f:
            for r in json.load(f)["rows"]:
                label = {"64F": "getrf+getrs float64", "64F-getrs": "getrs float64 alone"}.get(
                    r["lowest"], f"IRS {r['lowest']} {refinement}")
                rows[(int(r["n"]), label)] = r
    return rows, None


def main():
    def options(ap):
        ap.add_argument("--irs", help="the cuSOLVER peer binary (default: peer_cusolver_irs beside --linv)")
        ap.add_argument("--sizes", default="4096,16384")
        ap.add_argument("--plot", help="also draw time against n for linv and each peer as this PNG "
                                       "(bench/plot_sweep.py)")

    args, command = inverse_bench.torch_bench_args(__doc__, "gpu_mixed.py", options, repeats=5)
    sizes = [int(v) for v in args.sizes.split(",") if v]
    # "mixed" is what users get (the device's choice: float64 factors where float32 is no faster);
    # "mixed:float32" forces cuSOLVER's IRS from float32 factors
    precisions = ["mixed", "mixed:float32", "mixed:tf32", "mixed:bf16", "double"]
    # (precision, method): every precision by LU with partial pivoting, float64 by tournament pivoting and by
    # the randomized LU (random butterflies, no pivoting, refinement), and what auto gives each precision
    cases = [(p, "lu") for p in precisions] + [("double", "calu"), ("double", "rbt"), ("double", "auto"),
                                               ("mixed", "auto")]

    linv_data, linv_failure, cmd = inverse_bench.run_linv_json(
        [args.linv, "bench", "solve", "--device", "cuda", "--sizes", args.sizes, "--precisions", ",".join(precisions),
         "--methods", "lu,calu,rbt,auto", "--repeats", str(args.repeats)], "linv-mixed-")
    with tempfile.TemporaryDirectory(prefix="linv-mixed-") as tmp:
        irs_binary = args.irs or os.path.join(os.path.dirname(os.path.abspath(args.linv)), "peer_cusolver_irs")
        irs_rows, irs_failure = cusolver_irs(irs_binary, args.sizes, args.repeats, tmp)

    status = {"torch": peers.backend("torch")[1],
              "cusolver_irs": {"available": irs_failure is None, **({"why": irs_failure} if irs_failure else {})}}
    linv_rows = {(int(r["n"]), r["precision"], r.get("method", "lu")): r for r in (linv_data or {}).get("rows", [])}
    rows = []
    for n in sizes:
        pr = torch_solve(n, args.repeats) if status["torch"]["available"] else {}
        print(f"torch float64 solve n={n}: " + (f"{pr['seconds']:.4f} s" if pr else "SKIPPED"), flush=True)
        for precision, method in cases:
            lr = linv_rows.get((n, precision, method), {})
            linv_s = lr.get("seconds")
            # the like-for-like cuSOLVER call: IRS with the same factor precision and refinement
            low = {"mixed:float32": "32F", "mixed:tf32": "TF32", "mixed:bf16": "16BF"}.get(precision)
            ir = irs_rows.get((n, f"IRS {low} gmres" if low else "getrf+getrs float64"), {})
            for peer_name, peer in (("torch", pr), ("cusolver", ir)):
                peer_s = peer.get("seconds")
                label = precision if method == "lu" else f"{precision} {method}"
                rows.append({"case": f"solve fp64-accurate, 1 rhs, linv {label}", "n": n, "batch": 1,
                             "linv_s": linv_s,
                             "peer": pr.get("peer", "torch.linalg.solve (float64)") if peer_name == "torch" else
                             (f"cusolverDnIRSXgesv lowest {low} GMRES refinement" if low else
                              "cusolverDnXgetrf + getrs float64"),
                             "peer_s": peer_s,
                             "ratio": peer_s / linv_s if linv_s and peer_s else None, "floor_s": None,
                             "floor_fraction": None, "linv_error": lr.get("scaled_residual"),
                             "peer_error": peer.get("scaled_residual"), "peer_iterations": peer.get("iterations"),
                             "linv_iterations": lr.get("iterations"), "linv_stop_reason": lr.get("stop_reason"),
                             "linv_growth": lr.get("growth"),
                             "linv_notes": lr.get("notes"), "linv_s_all": lr.get("seconds_all"),
                             "peer_s_all": peer.get("seconds_all")})
    irs_all = [dict(r, label=label) for (n, label), r in sorted(irs_rows.items())]
    target = next((r for r in rows if r["n"] == 16384 and r["case"].endswith("linv mixed auto")
                   and r["peer"].startswith("torch")), None)
    targets = []
    if target:
        targets.append({"target": "n=16384 float64-accurate solve, 1 rhs, >= 3x torch.linalg.solve float64",
                        "measured_ratio": target["ratio"], "linv_error": target["linv_error"],
                        "peer_error": target["peer_error"],
                        "status": "not measured" if target["ratio"] is None else
                        ("met" if target["ratio"] >= 3 and target["linv_error"] <= target["peer_error"] else "missed")})
    fields = {"method": {"timing": f"linv: host clock around the synchronous call after a warm-up, median of "
                                   f"{args.repeats}; torch and cuSOLVER: CUDA events after a warm-up, median of "
                                   f"{args.repeats}",
                         "matrices": "A uniform [-1, 1] (float64), b uniform [-1, 1], one right-hand side",
                         "error": "||b - A x||_1 / (n eps64 ||A||_1 ||x||_1)",
                         "cusolver_peer": "bench/peers/cusolver_irs.cu: cusolverDnIRSXgesv, float64 in and out, "
                                          "fallback disabled (a negative iteration count means it failed)",
                         "linv_command": shlex.join(cmd)},
              "peers": status, "targets": targets, "rows": rows, "cusolver_irs_rows": irs_all}
    result = inverse_bench.save_torch_result("mixed", status, linv_data, command, fields, args.out_dir,
                                             linv_failure=linv_failure)
    if args.plot:
        inverse_bench.plot_sweep.plot(result, args.plot)
    fmt = inverse_bench.fmt
    lines = [f"cuSOLVER {r['label']:24s} n={r['n']:6d} {fmt(r['seconds'], '8.4f')} s  iterations {r['iterations']:4d}  "
             f"residual {fmt(r['scaled_residual'], '9.3g')}" for r in irs_all]
    lines += [f"{r['case'][27:]:22s} n={r['n']:6d} linv {fmt(r['linv_s'], '8.4f')} s  {r['peer'][:34]:34s} "
              f"{fmt(r['peer_s'], '8.4f')} s  ratio {fmt(r['ratio'], '5.2f')}x  residual {fmt(r['linv_error'], '9.3g')} "
              f"vs {fmt(r['peer_error'], '9.3g')}  {r['linv_stop_reason']} ({r['linv_iterations']})" for r in rows]
    inverse_bench.print_summary(lines, targets, lambda t: f"{fmt(t['measured_ratio'], '.2f')}x")
    return 1 if linv_failure else 0

if __name__ == "__main__":
    sys.exit(main())
