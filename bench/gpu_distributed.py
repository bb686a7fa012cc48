#!/usr/bin/env python3
"""Distributed GPU benchmark (issue 20): linv over two GPUs against one, on a machine with several GPUs.

Every case runs the benchmark's general float64 matrix (entries uniform in [-1, 1], made where its tiles
live: `random_uniform`, seed 1) with one right-hand side (seed 4), as `linv bench solve` does:

1. `linv bench distributed --devices cuda:0,cuda:1`: linv starts one process per GPU (no MPI), cuSOLVERMp
   factors, cuBLASMp solves; the solve is timed with the accuracy promise's residual, the inverse in A's own
   memory (A and A^-1 only: 2 n^2 entries) and then checked against A made again on sampled columns of
   A X - I. Host clock around each call between barriers, after a warm-up, median of --repeats.
2. The same on one GPU (`--devices cuda:0`): the engine's own strong scaling.
3. `linv bench solve --device cuda`: linv's single-GPU solve (auto: the randomized LU from order 512).
4. In this process, torch.linalg.solve in float64 on one GPU (bench/gpu_mixed.py's peer: CUDA events,
   warm-up, median; its error is ||b - A x|| / (n eps ||A|| ||x||), linv's adds ||b|| to the denominator).

Rows follow BENCHMARKS.md's schema: linv_s is the two-GPU time, peer_s the one-GPU peer's, ratio = peer_s
/ linv_s (above 1: two GPUs are faster). The floor is 2/3 n^3 (solve) or 2 n^3 (inverse) flops at two GPUs'
measured float64 product rate. Writes bench/results/<h200x2|...>/distributed.json (and $OUT/).

    python3 bench/gpu_distributed.py --linv build/bin/linv --solve-sizes 65536 --inverse-sizes 110000
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_gpu_inverse", os.path.join(HERE, "gpu_inverse.py"))
inverse_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inverse_bench)  # shared helpers
peers = inverse_bench.peers
_spec = importlib.util.spec_from_file_location("linv_gpu_mixed", os.path.join(HERE, "gpu_mixed.py"))
mixed_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mixed_bench)  # its torch.linalg.solve peer


def run(cmd, json_path, timeout):
    print("running: " + " ".join(cmd), flush=True)
    try:
        subprocess.run(cmd, check=True, timeout=timeout)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        print(f"FAILED: {e}", flush=True)
        return None
    with open(json_path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", required=True)
    ap.add_argument("--solve-sizes", default="65536")
    ap.add_argument("--inverse-sizes", default="110000")
    ap.add_argument("--devices", default="cuda:0,cuda:1")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--block", type=int, default=0)
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--single-methods", default="auto",
                    help="linv's one-GPU solve methods (lu where auto's randomized LU does not fit: it keeps A, its "
                         "factors and a copy, 3 n^2 entries)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="linv-dist-")
    block = ["--block", str(args.block)] if args.block else []
    solve_sizes = [int(s) for s in args.solve_sizes.split(",") if s]
    inverse_sizes = [int(s) for s in args.inverse_sizes.split(",") if s]
    ndev = len(args.devices.split(","))

    ceil = peers.ceilings(["torch"])
    print(f"ceilings (one GPU): {ceil}", flush=True)
    many = run([args.linv, "bench", "distributed", "--devices", args.devices, "--ops", "solve",
                "--sizes", args.solve_sizes, "--repeats", str(args.repeats), "--json", f"{tmp}/many.json"] + block,
               f"{tmp}/many.json", args.timeout) if solve_sizes else None
    one = run([args.linv, "bench", "distributed", "--devices", args.devices.split(",")[0], "--ops", "solve",
               "--sizes", args.solve_sizes, "--repeats", str(args.repeats), "--json", f"{tmp}/one.json"] + block,
              f"{tmp}/one.json", args.timeout) if solve_sizes else None
    single = run([args.linv, "bench", "solve", "--device", "cuda", "--sizes", args.solve_sizes, "--methods", args.single_methods,
                  "--precisions", "double", "--repeats", str(args.repeats), "--json", f"{tmp}/single.json"],
                 f"{tmp}/single.json", args.timeout) if solve_sizes else None
    inverse = run([args.linv, "bench", "distributed", "--devices", args.devices, "--ops", "inverse",
                   "--sizes", args.inverse_sizes, "--repeats", "1", "--json", f"{tmp}/inverse.json"] + block,
                  f"{tmp}/inverse.json", args.timeout) if inverse_sizes else None

    rows = []

    def floor(flops):
        return flops / (ndev * ceil["fp64_tflops"] * 1e12) if ceil else None

    for n in solve_sizes:
        mine = next((r for r in (many or {}).get("rows", []) if r["n"] == n), None)
        if mine is None:
            continue
        fl = floor(2.0 / 3.0 * n ** 3)
        base = {"case": f"solve fp64, {ndev} GPUs (cuSOLVERMp)", "n": n, "batch": 1, "linv_s": mine["seconds"],
                "linv_error": mine["scaled_residual"], "floor_s": fl,
                "floor_fraction": fl / mine["seconds"] if fl else None, "grid": mine["grid"], "block": mine["block"]}
        peers_found = []
        r1 = next((r for r in (one or {}).get("rows", []) if r["n"] == n), None)
        if r1:
            peers_found.append(("the same engine on one GPU (cuSOLVERMp, 1 process)", r1["seconds"], r1["scaled_residual"]))
        for r in (single or {}).get("rows", []):
            if r.get("n") == n:
                peers_found.append((f"linv on one GPU (method {r.get('method')})", r["seconds"],
                                    r.get("scaled_residual")))
        try:
            t = mixed_bench.torch_solve(n, args.repeats)
            peers_found.append(("torch.linalg.solve on one GPU", t["seconds"], t["scaled_residual"]))
        except Exception as e:  # out of memory on one GPU, no torch
            print(f"torch peer did not run: {e}", flush=True)
        for name, seconds, error in peers_found:
            rows.append(dict(base, peer=name, peer_s=seconds, ratio=seconds / mine["seconds"], peer_error=error))
    for r in (inverse or {}).get("rows", []):
        n = r["n"]
        fl = floor(2.0 * n ** 3)
        rows.append({"case": f"inverse fp64 in A's memory, {ndev} GPUs (cuSOLVERMp)", "n": n, "batch": 1,
                     "linv_s": r["seconds"], "peer": None, "peer_s": None, "ratio": None, "floor_s": fl,
                     "floor_fraction": fl / r["seconds"] if fl else None, "linv_error": r["scaled_residual"],
                     "peer_error": None, "residual_kind": r["residual_kind"], "grid": r["grid"], "block": r["block"],
                     "memory_gib_per_gpu": 2.0 * n * n * 8 / ndev / 2 ** 30})

    device = (many or inverse or {}).get("device") or "GPU"
    result = {"benchmark": "distributed", "device": f"{ndev}x {device}", "date": __import__("datetime").date.today().isoformat(),
              "versions": {"linv": inverse_bench.git_sha() or "unknown", "engine": (many or inverse or {}).get("rows", [{}])[0].get("engine")},
              "command": "python3 bench/gpu_distributed.py " + " ".join(sys.argv[1:]), "ceilings": ceil, "rows": rows}
    dev_dir = inverse_bench.device_dir(device) + (f"x{ndev}" if ndev > 1 else "")
    path = os.path.join(args.results, dev_dir, "distributed.json")
    inverse_bench.write_json(result, path)
    if os.environ.get("OUT"):
        inverse_bench.write_json(result, os.path.join(os.environ["OUT"], "distributed.json"))
    print(f"wrote {path}")
    print(f"{'case':52s} {'n':>7s} {'linv s':>9s} {'peer':44s} {'peer s':>9s} {'ratio':>6s} {'err':>8s}")
    for r in rows:
        print(f"{r['case']:52s} {r['n']:7d} {r['linv_s']:9.3f} {str(r['peer'])[:44]:44s} "
              f"{(r['peer_s'] or float('nan')):9.3f} {(r['ratio'] or float('nan')):6.2f} {r['linv_error']:8.2g}")


if __name__ == "__main__":
    main()
