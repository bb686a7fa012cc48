#!/usr/bin/env python3
"""Subject-parallel PARAFAC2 on several GPUs against one (issue 20): K subjects of I time points x J voxels,
float32 data, rank F, a fixed number of iterations (tolerance 0, so both runs do the same work).

1. Fit only: `linv bench parafac2` with each subject made on the GPU that fits it (`--devices cuda:0,cuda:1`:
   one process per GPU, started by linv, each iteration's sums over NCCL) against the same on one GPU
   (`--device cuda`). Host clock around each complete fit, after a warm-up, median of --repeats.
2. End to end, as a user runs it: `linv parafac2 s00.npy ... s15.npy` from one Fortran-order .npy file per
   subject (written here, a PARAFAC2 model plus noise, read back from the page cache) to the factors and
   every P_k on disk, with --devices against --device cuda. Wall clock of the whole command (process start,
   reading, uploading, the fit, writing), after a warm-up run of each, median of --repeats; the two runs'
   factors are compared.

Rows follow BENCHMARKS.md's schema: linv_s is the several-GPU time, peer_s linv's one-GPU time, ratio =
peer_s / linv_s. The floor of the fit is its Gram matrices' 2 I^2 J K flops at the GPUs' float64 product
rate; of the end-to-end run, the data's bytes over the host-to-device copy rate measured here, per GPU.
Writes bench/results/<h100x2|h200x2|...>/parafac2_distributed.json (and $OUT/).

    python3 bench/gpu_parafac2_distributed.py --linv build/bin/linv
"""
import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_gpu_inverse", os.path.join(HERE, "gpu_inverse.py"))
inverse_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inverse_bench)  # shared helpers
peers = inverse_bench.peers


def parse_args(doc, voxels, model, data=False):
    """Options of a several-GPUs-against-one benchmark: the binary, X's --rows x --voxels, the model's integer
    options ({flag: default}, in order), where to run, how often, where to write; `data` adds --data."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", required=True)
    ap.add_argument("--rows", type=int, default=274)
    ap.add_argument("--voxels", type=int, default=voxels)
    for flag, default in model.items():
        ap.add_argument(flag, type=int, default=default)
    ap.add_argument("--devices", default="cuda:0,cuda:1")
    ap.add_argument("--repeats", type=int, default=3)
    if data:
        ap.add_argument("--data", default=None, help="directory for the subjects' files (default: a temporary one)")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--timeout", type=int, default=600)
    return ap.parse_args()


def sides(devices):
    """The two runs compared, by name, with the options that place them: the several GPUs, and one."""
    return (("many", ["--devices", devices]), ("one", ["--device", "cuda"]))


def run(cmd, timeout):
    print("running: " + " ".join(map(str, cmd)), flush=True)
    start = time.perf_counter()
    p = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    if p.returncode != 0:
        print(f"FAILED (exit {p.returncode}): {p.stdout[-2000:]}\n{p.stderr[-2000:]}", flush=True)
        return None
    print(p.stdout.strip()[-600:], flush=True)
    return seconds


def bench_both(linv, bench_args, devices, tmp, timeout):
    """`linv bench ...` run on the several GPUs (--devices) and on one (--device cuda): {"many": rows, "one":
    rows} of its JSON, each present only where its run succeeded."""
    fits = {}
    for name, where in sides(devices):
        if run([linv, *bench_args, *where, "--json", f"{tmp}/{name}.json"], timeout) is not None:
            with open(f"{tmp}/{name}.json") as f:
                fits[name] = json.load(f)["rows"]
    return fits


def time_both(commands, repeats, timeout):
    """Wall clock of each of commands {"many": cmd, "one": cmd}: one warm-up run of each (the page cache
    too), then `repeats` rounds alternating them. {name: [seconds]}, empty when a warm-up failed."""
    times = {name: [] for name in commands}
    ok = all(run(c, timeout) is not None for c in commands.values())
    for _ in range(repeats if ok else 0):
        for name, c in commands.items():
            t = run(c, timeout)
            if t is not None:
                times[name].append(t)
    return times


def end_to_end(commands, reports, repeats, timeout):
    """time_both(commands), then the sides' --report JSON files (reports {name: path}): (times, median of
    "many", median of "one", report of "many", report of "one"), or None when a side has no time."""
    times = time_both(commands, repeats, timeout)
    if not (times["many"] and times["one"]):
        return None
    read = {}
    for name, path in reports.items():
        with open(path) as f:
            read[name] = json.load(f)
    return times, statistics.median(times["many"]), statistics.median(times["one"]), read["many"], read["one"]


def comparison_row(case, n, batch, rows, many_s, peer, one_s, floor_s=None, **extra):
    """A row of BENCHMARKS.md's schema for linv on several GPUs (linv_s) against linv on one (peer_s)."""
    return {"case": case, "n": n, "batch": batch, "rows": rows, "linv_s": many_s, "peer": peer, "peer_s": one_s,
            "ratio": one_s / many_s, "floor_s": floor_s, "floor_fraction": floor_s / many_s if floor_s else None,
            "linv_error": None, "peer_error": None, **extra}


def low_rank_npy(directory, T, N):
    """X.npy in `directory`: T x N float32, rank 8 plus noise (the signal- and voxel-parallel fits' input)."""
    rng = np.random.default_rng(5)
    X = (rng.standard_normal((T, 8)) @ rng.standard_normal((8, N)) +
         0.3 * rng.standard_normal((T, N))).astype(np.float32)
    path = os.path.join(directory, "X.npy")
    np.save(path, X)
    return path


def make_subjects(directory, I, J, K, F, seed=7):
    """One Fortran-order float32 .npy file per subject: A diag(c_k) (P_k H)^T plus 10 % noise."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((I, F))
    H = np.linalg.qr(rng.standard_normal((F, F)))[0] * np.linspace(1, 2, F)
    C = rng.uniform(0.2, 1.2, (K, F))
    files = []
    for k in range(K):
        P = np.linalg.qr(rng.standard_normal((J, F)))[0]
        X = (A * C[k]) @ (P @ H).T
        X += 0.1 * X.std() * rng.standard_normal(X.shape)
        files.append(os.path.join(directory, f"s{k:02d}.npy"))
        np.save(files[-1], np.asfortranarray(X, dtype=np.float32))
    return files


def host_to_device_gbps():
    """Pageable host-to-device copy rate of one GPU (what linv's upload of a host Matrix uses), GB/s."""
    try:
        import torch
        x = torch.empty(1 << 28, dtype=torch.float32)  # 1 GiB
        x.fill_(1.0)
        x.to("cuda:0")
        torch.cuda.synchronize()
        times = []
        for _ in range(3):
            start = time.perf_counter()
            x.to("cuda:0")
            torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        return x.numel() * 4 / min(times) / 1e9
    except Exception as e:  # no torch
        print(f"no copy rate: {e}", flush=True)
        return None


def finish(benchmark, ndev, results_dir, rows, **extra):
    """Writes the results of a several-GPU run against one (bench/results/<device>x<ndev>/<benchmark>.json,
    and $OUT/) and prints its table."""
    try:
        import torch
        device = torch.cuda.get_device_name(0)
    except Exception:  # no torch
        device = "GPU"
    result = {"benchmark": benchmark, "device": f"{ndev}x {device}",
              "date": __import__("datetime").date.today().isoformat(),
              "versions": {"linv": inverse_bench.git_sha() or "unknown"},
              "command": f"python3 {os.path.relpath(sys.argv[0], os.path.dirname(HERE))} " + " ".join(sys.argv[1:]),
              **extra, "rows": rows}
    dev_dir = inverse_bench.device_dir(device) + (f"x{ndev}" if ndev > 1 else "")
    path = os.path.join(results_dir, dev_dir, f"{benchmark}.json")
    inverse_bench.write_json(result, path)
    if os.environ.get("OUT"):
        inverse_bench.write_json(result, os.path.join(os.environ["OUT"], f"{benchmark}.json"))
    print(f"wrote {path}")
    print(f"{'case':100s} {'linv s':>8s} {'1 GPU s':>8s} {'ratio':>6s}")
    for r in rows:
        print(f"{r['case'][:100]:100s} {r['linv_s']:8.3f} {r['peer_s']:8.3f} {r['ratio']:6.2f}")


def main():
    args = parse_args(__doc__, 200000, {"--subjects": 16, "--rank": 8, "--iters": 100}, data=True)
    I, J, K, F = args.rows, args.voxels, args.subjects, args.rank
    ndev = len(args.devices.split(","))
    tmp = tempfile.mkdtemp(prefix="linv-parafac2-")
    ceil = peers.ceilings(["torch"])
    h2d = host_to_device_gbps()
    print(f"ceilings (one GPU): {ceil}; host-to-device {h2d} GB/s", flush=True)
    rows = []
    gram_floor = 2.0 * I * I * J * K / (ndev * ceil["fp64_tflops"] * 1e12) if ceil else None

    # 1. the fit, data made on the GPUs
    size = f"{I}x{J}x{K}"
    common = ["bench", "parafac2", "--sizes", size, "--rank", F, "--iters", args.iters, "--precision", "single",
              "--repeats", args.repeats]
    fits = bench_both(args.linv, common, args.devices, tmp, args.timeout)
    if len(fits) == 2:
        many, one = fits["many"][0], fits["one"][0]
        rows.append(comparison_row(f"parafac2 fit, float32 data on the GPUs, F={F}, {args.iters} iterations, {ndev} GPUs",
                                   J, K, I, many["seconds"], "linv on one GPU", one["seconds"], gram_floor,
                                   loss=many["loss"], peer_loss=one["loss"],
                                   loss_relative_difference=abs(many["loss"] - one["loss"]) / one["loss"]))

    # 2. end to end from files
    data = args.data or os.path.join(tmp, "data")
    os.makedirs(data, exist_ok=True)
    start = time.perf_counter()
    files = make_subjects(data, I, J, K, F)
    total_bytes = sum(os.path.getsize(f) for f in files)
    print(f"wrote {K} subjects ({total_bytes / 1e9:.2f} GB) in {time.perf_counter() - start:.1f} s", flush=True)
    cli = ["parafac2", *files, "-F", F, "--tol", 0, "--iters", args.iters, "-q"]
    commands = {name: [args.linv, *cli, "-o", f"{tmp}/out_{name}", *where, "--report", f"{tmp}/{name}_report.json"]
                for name, where in sides(args.devices)}
    measured = end_to_end(commands, {name: f"{tmp}/{name}_report.json" for name in commands}, args.repeats,
                          args.timeout)
    if measured:
        times, many_s, one_s, rm, ro = measured
        diff = max(np.abs(np.load(f"{tmp}/out_many/{n}.npy") - np.load(f"{tmp}/out_one/{n}.npy")).max() /
                   np.abs(np.load(f"{tmp}/out_one/{n}.npy")).max() for n in ("A", "H", "C"))
        copy_floor = total_bytes / (ndev * h2d * 1e9) if h2d else None
        rows.append(comparison_row(f"linv parafac2 from {K} .npy files (float32) to outputs, F={F}, {args.iters} "
                                   f"iterations, {ndev} GPUs", J, K, I, many_s, "linv parafac2 on one GPU", one_s,
                                   copy_floor, seconds_all=times["many"], peer_seconds_all=times["one"],
                                   fit_seconds=rm["seconds"], peer_fit_seconds=ro["seconds"],
                                   variance_explained=rm["variance_explained"],
                                   peer_variance_explained=ro["variance_explained"],
                                   factors_max_relative_difference=float(diff), bytes=total_bytes))
    if not args.data:
        shutil.rmtree(tmp, ignore_errors=True)

    finish("parafac2_distributed", ndev, args.results, rows, ceilings=ceil, host_to_device_gbps=h2d)


if __name__ == "__main__":
    main()
