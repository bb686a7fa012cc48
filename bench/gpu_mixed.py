#!/usr/bin/env python3
"""GPU mixed-precision solve benchmark: `linv bench solve --device cuda` against torch.linalg.solve.

First `linv bench solve` runs alone on the GPU: a general float64 matrix (entries uniform in [-1, 1]) and
one right-hand side generated there, `linv::solve` timed in float64 and in mixed precision (float32 LU
refined against the float64 residual) with a host clock around the synchronous call after a warm-up,
median of --repeats; linv's call includes its input checks and condition estimate. Then, in this process,
torch.linalg.solve in float64 on a matrix of the same distribution, timed with CUDA events after a
warm-up, median of --repeats. ratio = torch_s / linv_s (above 1: linv is faster). Errors are scaled
residuals ||b - A x||_1 / (n eps ||A||_1 ||x||_1) with float64's eps.

Writes bench/results/<h100|h200|slug>/mixed.json (and copies it to $OUT/ when OUT is set) and prints a
table and the target (n = 16384 mixed >= 3x torch's float64 solve).

    python3 bench/gpu_mixed.py --linv build/bin/linv [--sizes 4096,16384] [--repeats 5]
"""
import argparse
import datetime
import importlib.util
import os
import shlex
import shutil
import statistics
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
    x = torch.linalg.solve(a, b)
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        x = torch.linalg.solve(a, b)
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    r = ((b - a @ x).abs().sum() / (n * peers.EPS["f64"] * a.abs().sum(0).max() * x.abs().sum())).item()
    del a, b, x
    torch.cuda.empty_cache()
    return {"peer": "torch.linalg.solve (float64)", "seconds": statistics.median(times), "seconds_all": times,
            "scaled_residual": r}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", required=True)
    ap.add_argument("--sizes", default="4096,16384")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    sizes = [int(v) for v in args.sizes.split(",") if v]
    command = os.environ.get("LINV_BENCH_COMMAND") or shlex.join(["python3", "bench/gpu_mixed.py"] + sys.argv[1:])

    with tempfile.TemporaryDirectory(prefix="linv-mixed-") as tmp:
        linv_json = os.path.join(tmp, "linv.json")
        cmd = [args.linv, "bench", "solve", "--device", "cuda", "--sizes", args.sizes, "--precisions", "double,mixed",
               "--repeats", str(args.repeats), "--json", linv_json]
        linv_data, linv_failure = inverse_bench.run_linv(cmd, linv_json, None)

    status = {"torch": peers.backend("torch")[1]}
    linv_rows = {(int(r["n"]), r["precision"]): r for r in (linv_data or {}).get("rows", [])}
    rows = []
    for n in sizes:
        pr = torch_solve(n, args.repeats) if status["torch"]["available"] else {}
        print(f"torch float64 solve n={n}: " + (f"{pr['seconds']:.4f} s" if pr else "SKIPPED"), flush=True)
        for precision in ("mixed", "double"):
            lr = linv_rows.get((n, precision), {})
            linv_s, peer_s = lr.get("seconds"), pr.get("seconds")
            rows.append({"case": f"solve fp64-accurate, 1 rhs, linv {precision}", "n": n, "batch": 1, "linv_s": linv_s,
                         "peer": pr.get("peer", "torch.linalg.solve (float64)"), "peer_s": peer_s,
                         "ratio": peer_s / linv_s if linv_s and peer_s else None, "floor_s": None,
                         "floor_fraction": None, "linv_error": lr.get("scaled_residual"),
                         "peer_error": pr.get("scaled_residual"), "linv_iterations": lr.get("iterations"),
                         "linv_stop_reason": lr.get("stop_reason"), "linv_s_all": lr.get("seconds_all"),
                         "peer_s_all": pr.get("seconds_all")})
    target = next((r for r in rows if r["n"] == 16384 and r["case"].endswith("mixed")), None)
    targets = []
    if target:
        targets.append({"target": "n=16384 float64-accurate solve, 1 rhs, >= 3x torch.linalg.solve float64",
                        "measured_ratio": target["ratio"], "linv_error": target["linv_error"],
                        "peer_error": target["peer_error"],
                        "status": "not measured" if target["ratio"] is None else
                        ("met" if target["ratio"] >= 3 and target["linv_error"] <= target["peer_error"] else "missed")})
    device = (peers.device_name(["torch"]) if status["torch"]["available"] else None) or \
        (linv_data or {}).get("device") or "unknown GPU"
    result = {"benchmark": "mixed", "device": device, "date": datetime.date.today().isoformat(),
              "versions": {"linv": inverse_bench.git_sha() or "unknown",
                           "cuda": peers.cuda_version(["torch"]) if status["torch"]["available"] else None,
                           "torch": status["torch"].get("version"), "python": sys.version.split()[0]},
              "command": command,
              "method": {"timing": f"linv: host clock around the synchronous call after a warm-up, median of "
                                   f"{args.repeats}; torch: CUDA events after a warm-up, median of {args.repeats}",
                         "matrices": "A uniform [-1, 1] (float64), b uniform [-1, 1], one right-hand side",
                         "error": "||b - A x||_1 / (n eps64 ||A||_1 ||x||_1)",
                         "not_measured": "cuSOLVER's cusolverDnIRSXgesv (second peer) is not run yet",
                         "linv_command": shlex.join(cmd)},
              "peers": status, "targets": targets, "rows": rows}
    if linv_failure:
        result["linv_failure"] = linv_failure
    path = os.path.join(args.out_dir, inverse_bench.device_dir(device), "mixed.json")
    inverse_bench.write_json(result, path)
    print(f"wrote {path}")
    if os.environ.get("OUT"):
        os.makedirs(os.environ["OUT"], exist_ok=True)
        shutil.copy(path, os.path.join(os.environ["OUT"], "mixed.json"))
    fmt = inverse_bench.fmt
    print()
    for r in rows:
        print(f"{r['case']:42s} n={r['n']:6d} linv {fmt(r['linv_s'], '8.4f')} s  torch {fmt(r['peer_s'], '8.4f')} s  "
              f"ratio {fmt(r['ratio'], '5.2f')}x  residual {fmt(r['linv_error'], '9.3g')} vs {fmt(r['peer_error'], '9.3g')}  "
              f"iterations {r['linv_iterations']}")
    for t in targets:
        print(f"target {t['status'].upper()}: {t['target']}: {fmt(t['measured_ratio'], '.2f')}x")
    return 1 if linv_failure else 0


if __name__ == "__main__":
    sys.exit(main())
