#!/usr/bin/env python3
"""GPU SLAM pseudoinverse benchmark: `linv bench slam --device cuda` against PyTorch's normal-equations
pseudoinverse on the same Jacobian stored densely.

1. `linv bench slam --device cuda` runs alone on the GPU: a bordered Jacobian (n rows, one dense column
   then m - 1 segment columns of random lengths) whose arrays were copied to the GPU beforehand; the
   step J^+ d (d on the GPU) and the materialised J^+ (m x n, float64, left on the GPU), host clock around
   the synchronous call after a warm-up, median of --repeats.
2. In this process, PyTorch on a dense n x m float64 J of the same shape and structure:
   J^+ = torch.linalg.inv(J.T @ J) @ J.T and the step torch.linalg.solve(J.T @ J, J.T @ d), CUDA events
   after a warm-up, median of --repeats.
3. The copy bandwidth (peers' ceiling: a 2 GiB device-to-device copy, bytes read + written); the floor of
   J^+ is its m n 8 bytes written at that rate.
ratio = torch_s / linv_s (above 1: linv is faster).

Writes bench/results/<h100|h200|slug>/slam.json (and copies it to $OUT/ when OUT is set) and prints a table
and the targets at n = 120000, m = 1000 (J^+ >= 80 % of the copy floor, J^+ d <= 50 us, J^+ >= 50x torch).

    python3 bench/gpu_slam.py --linv build/bin/linv [--cases 20000:100,60000:500,120000:1000] [--repeats 5]
"""
import importlib.util
import os
import random
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_gpu_inverse", os.path.join(HERE, "gpu_inverse.py"))
inverse_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inverse_bench)  # shared helpers
peers = inverse_bench.peers


def torch_pinv(n, m, repeats):
    import torch
    dev = "cuda"
    rng = random.Random(n * 7 + m)
    cuts = sorted(rng.sample(range(1, n), m - 2))  # m - 1 segments tiling the rows
    bounds = [0] + cuts + [n]
    J = torch.zeros((n, m), dtype=torch.float64, device=dev)
    J[:, 0] = torch.rand(n, dtype=torch.float64, device=dev) * 2 - 1
    rows = torch.arange(n, device=dev)
    seg = torch.bucketize(rows, torch.tensor(bounds[1:], device=dev), right=True)
    J[rows, 1 + seg] = torch.rand(n, dtype=torch.float64, device=dev) * 1.5 + 0.5
    d = torch.rand((n, 1), dtype=torch.float64, device=dev) * 2 - 1

    pinv_s, pinv_all = inverse_bench.torch_time(lambda: torch.linalg.inv(J.T @ J) @ J.T, repeats)
    step_s, step_all = inverse_bench.torch_time(lambda: torch.linalg.solve(J.T @ J, J.T @ d), repeats)
    del J, d
    torch.cuda.empty_cache()
    return {"peer": "torch: linalg.inv(J.T @ J) @ J.T; step linalg.solve(J.T @ J, J.T @ d) (dense float64)",
            "pinv_seconds": pinv_s, "pinv_seconds_all": pinv_all, "step_seconds": step_s, "step_seconds_all": step_all}


def main():
    args, command = inverse_bench.torch_bench_args(
        __doc__, "gpu_slam.py", lambda ap: ap.add_argument("--cases", default="20000:100,60000:500,120000:1000"),
        repeats=5)
    linv_data, linv_failure, cmd = inverse_bench.run_linv_json(
        [args.linv, "bench", "slam", "--device", "cuda", "--cases", args.cases, "--repeats", str(args.repeats)],
        "linv-slam-")

    status = {"torch": peers.backend("torch")[1]}
    ceilings = peers.ceilings(["torch"]) if status["torch"]["available"] else None
    copy_bps = ceilings["copy_tbps"] * 1e12 if ceilings else None
    rows = []
    for lr in (linv_data or {}).get("rows", []):
        n, m = int(lr["n"]), int(lr["m"])
        pr = torch_pinv(n, m, args.repeats) if status["torch"]["available"] else {}
        floor_s = lr["pinv_bytes"] / copy_bps if copy_bps else None
        rows.append({"case": "J^+ materialised", "n": n, "m": m, "linv_s": lr["pinv_seconds"], "peer": pr.get("peer"),
                     "peer_s": pr.get("pinv_seconds"),
                     "ratio": pr["pinv_seconds"] / lr["pinv_seconds"] if pr else None, "floor_s": floor_s,
                     "floor_fraction": floor_s / lr["pinv_seconds"] if floor_s else None,
                     "linv_s_all": lr["pinv_seconds_all"], "peer_s_all": pr.get("pinv_seconds_all"),
                     "step_vs_pinv_relative_difference": lr.get("step_vs_pinv_relative_difference")})
        rows.append({"case": "J^+ d", "n": n, "m": m, "linv_s": lr["step_seconds"], "peer": pr.get("peer"),
                     "peer_s": pr.get("step_seconds"),
                     "ratio": pr["step_seconds"] / lr["step_seconds"] if pr else None, "floor_s": None,
                     "floor_fraction": None, "linv_s_all": lr["step_seconds_all"],
                     "peer_s_all": pr.get("step_seconds_all")})

    def find(case):
        return next((r for r in rows if r["n"] == 120000 and r["m"] == 1000 and r["case"] == case), None)

    def target(text, row, key, met):
        measured = row[key] if row else None
        return {"target": text, "measured": measured, "status": inverse_bench.target_status(measured, met)}

    pinv, step = find("J^+ materialised"), find("J^+ d")
    targets = [
        target("n=120000, m=1000: J^+ at >= 80% of the copy-bandwidth floor", pinv, "floor_fraction",
               lambda v: v >= 0.8),
        target("n=120000, m=1000: J^+ d <= 50 us", step, "linv_s", lambda v: v <= 50e-6),
        target("n=120000, m=1000: J^+ >= 50x torch's normal-equations pseudoinverse", pinv, "ratio",
               lambda v: v >= 50)]
    fields = {"ceilings": ceilings,
              "method": {"timing": f"linv: host clock around the synchronous call after a warm-up, median of "
                                   f"{args.repeats} (J's arrays already on the GPU); torch: CUDA events after a "
                                   f"warm-up, median of {args.repeats}",
                         "floor": "J^+'s m n 8 bytes written at the measured copy bandwidth",
                         "linv_command": shlex.join(cmd)},
              "peers": status, "targets": targets, "rows": rows}
    inverse_bench.save_torch_result("slam", status, linv_data, command, fields, args.out_dir,
                                    linv_failure=linv_failure)
    fmt = inverse_bench.fmt
    inverse_bench.print_summary(
        (f"{r['case']:17s} n={r['n']:7d} m={r['m']:5d} linv {fmt(r['linv_s'], '10.6f')} s  torch "
         f"{fmt(r['peer_s'], '9.5f')} s  ratio {fmt(r['ratio'], '8.1f')}x  floor {fmt(r['floor_fraction'], '.2f')}"
         for r in rows), targets, lambda t: fmt(t["measured"], ".3g"))
    return 1 if linv_failure else 0


if __name__ == "__main__":
    sys.exit(main())
