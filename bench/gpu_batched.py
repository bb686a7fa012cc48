#!/usr/bin/env python3
"""GPU batched-inverse benchmark: `linv bench batched --device cuda` against PyTorch, in one run.

First `linv bench batched` runs alone on the GPU: it generates each batch there (entries uniform in
[-1, 1]) and times `linv::batched::inv_into` (synchronous: it returns when the batch is inverted and the
singular count is read back) with a host clock after a warm-up, median of --repeats. Then, in this
process, the copy-bandwidth ceiling and torch.linalg.inv on a batch of the same shape and distribution,
timed with CUDA events after a warm-up, median of --repeats (torch.linalg.inv also checks for singular
matrices, which reads its info array back).

The floor of a case is its bytes (the batch read once, the inverses written once) at the measured copy
rate: floor_fraction = floor_s / linv_s. ratio = torch_s / linv_s (above 1: linv is faster). Errors are
the largest scaled residual ||A X - I||_1 / (n eps ||A||_1 ||X||_1) over the first 2000 matrices.

Writes bench/results/<h100|h200|slug>/batched.json (and copies it to $OUT/ when OUT is set), then prints
a table and the targets, each met or missed.

    python3 bench/gpu_batched.py --linv build/bin/linv [--cases 4:1048576,8:1048576,...] [--dtypes f32,f64]
        [--repeats 20] [--out-dir bench/results]
"""
import datetime
import importlib.util
import os
import shlex
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


inverse_bench = _load("linv_gpu_inverse", os.path.join(HERE, "gpu_inverse.py"))  # shared helpers
peers = inverse_bench.peers

# ../shared/BENCHMARKS.md's batches, and 64 (the largest order linv batches).
DEFAULT_CASES = "4:1048576,8:1048576,16:262144,32:65536,64:16384"
TARGETS = [
    {"target": f"FP32 n={n} >= 10x torch", "dtype": "f32", "n": n, "ratio": 10.0} for n in (4, 8, 16, 32)
] + [
    {"target": f"FP32 n={n} >= 50% of the copy-bandwidth floor", "dtype": "f32", "n": n, "floor_fraction": 0.5}
    for n in (4, 8, 16)
] + [{"target": "FP64 n=8 >= 5x torch", "dtype": "f64", "n": 8, "ratio": 5.0}]


def torch_batched(n, count, dtype, repeats):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    dt = {"f32": torch.float32, "f64": torch.float64}[dtype]
    g = torch.Generator(device="cuda").manual_seed(1000 * n + count)
    a = torch.rand((count, n, n), generator=g, device="cuda", dtype=dt) * 2 - 1
    x = torch.linalg.inv(a)  # warm-up
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        x = torch.linalg.inv(a)
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    k = min(count, 2000)
    a64, x64 = a[:k].double(), x[:k].double()
    eye = torch.eye(n, dtype=torch.float64, device="cuda")
    norm1 = lambda m: m.abs().sum(dim=1).amax(dim=1)  # max column sum, per matrix
    residual = (norm1(a64 @ x64 - eye) / (n * peers.EPS[dtype] * norm1(a64) * norm1(x64))).max().item()
    del a, x, a64, x64
    torch.cuda.empty_cache()
    return {"peer": "torch.linalg.inv", "seconds": statistics.median(times), "seconds_all": times,
            "scaled_residual": residual}


def parse_cases(text):
    cases = []
    for item in text.split(","):
        n, count = item.split(":")
        cases.append((int(n), int(count)))
    return cases


def main():
    def options(ap):
        ap.add_argument("--cases", default=DEFAULT_CASES, help="order:count pairs")
        ap.add_argument("--dtypes", default="f32,f64")

    args, command = inverse_bench.torch_bench_args(__doc__, "gpu_batched.py", options, repeats=20)
    cases, dtypes = parse_cases(args.cases), args.dtypes.split(",")
    linv_data, linv_failure, cmd = inverse_bench.run_linv_json(
        [args.linv, "bench", "batched", "--device", "cuda", "--cases", args.cases, "--dtypes", args.dtypes,
         "--repeats", str(args.repeats)], "linv-batched-")

    status = {"torch": peers.backend("torch")[1]}
    ceil = peers.ceilings(["torch"]) if status["torch"]["available"] else None
    if ceil:
        ceil.pop("measured_with", None)
    linv_rows = {(r["dtype"], int(r["n"])): r for r in (linv_data or {}).get("rows", [])}
    rows = []
    for dtype in dtypes:
        for n, count in cases:
            pr = torch_batched(n, count, dtype, args.repeats) if status["torch"]["available"] else {}
            lr = linv_rows.get((dtype, n), {})
            nbytes = 2.0 * count * n * n * peers.ELEM_BYTES[dtype]
            floor = nbytes / (ceil["copy_tbps"] * 1e12) if ceil else None
            linv_s, peer_s = lr.get("seconds"), pr.get("seconds")
            rows.append({"case": f"batched inverse {dtype}", "n": n, "batch": count, "linv_s": linv_s,
                         "peer": "torch.linalg.inv", "peer_s": peer_s,
                         "ratio": peer_s / linv_s if linv_s and peer_s else None, "floor_s": floor,
                         "floor_fraction": floor / linv_s if floor and linv_s else None,
                         "linv_error": lr.get("max_scaled_residual"), "peer_error": pr.get("scaled_residual"),
                         "method_used": lr.get("method_used"), "linv_s_all": lr.get("seconds_all"),
                         "peer_s_all": pr.get("seconds_all")})
            print(f"torch {dtype} n={n:3d} batch={count:8d}: " +
                  (f"{peer_s:.6f} s  residual {pr['scaled_residual']:.3g}" if pr else "SKIPPED"), flush=True)

    targets = []
    for t in TARGETS:
        r = next((r for r in rows if r["case"] == f"batched inverse {t['dtype']}" and r["n"] == t["n"]), None)
        if r is None:
            continue
        got = r["ratio"] if "ratio" in t else r["floor_fraction"]
        need = t.get("ratio", t.get("floor_fraction"))
        targets.append(dict(t, measured=got, status="not measured" if got is None else
                            ("met" if got >= need else "missed")))

    device = (peers.device_name(["torch"]) if ceil else None) or (linv_data or {}).get("device") or "unknown GPU"
    result = {
        "benchmark": "batched", "device": device, "date": datetime.date.today().isoformat(),
        "versions": {"linv": inverse_bench.git_sha() or (linv_data or {}).get("linv_version") or "unknown",
                     "cuda": peers.cuda_version(["torch"]) if ceil else None,
                     "torch": status["torch"].get("version"), "python": sys.version.split()[0]},
        "command": command,
        "ceilings": {"copy_tbps": ceil["copy_tbps"]} if ceil else None,
        "method": {"timing": f"linv: host clock around the synchronous call after a warm-up, median of "
                             f"{args.repeats}; torch: CUDA events after a warm-up, median of {args.repeats}",
                   "matrices": "entries uniform in [-1, 1]",
                   "floor": "2 count n^2 elements at the measured copy rate",
                   "error": "max over the first 2000 matrices of ||A X - I||_1 / (n eps ||A||_1 ||X||_1)",
                   "linv_command": shlex.join(cmd)},
        "peers": status, "targets": targets, "rows": rows,
    }
    if linv_failure:
        result["linv_failure"] = linv_failure
    inverse_bench.save_result(result, args.out_dir, device, "batched.json")

    fmt = inverse_bench.fmt
    head = (f"{'case':20s} {'n':>3s} {'batch':>8s} {'linv s':>10s} {'torch s':>10s} {'ratio':>8s} {'floor':>6s} "
            f"{'linv res':>9s} {'torch res':>9s}")
    print()
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['case']:20s} {r['n']:3d} {r['batch']:8d} {fmt(r['linv_s'], '10.6f')} {fmt(r['peer_s'], '10.6f')} "
              f"{fmt(r['ratio'], '7.1f')}x {fmt(r['floor_fraction'], '6.0%')} {fmt(r['linv_error'], '9.3g')} "
              f"{fmt(r['peer_error'], '9.3g')}")
    print()
    for t in targets:
        got = "–" if t["measured"] is None else (f"{t['measured']:.1f}x" if "ratio" in t else f"{t['measured']:.0%}")
        print(f"target {t['status'].upper():12s} {t['target']}: {got}")
    return 1 if linv_failure else 0


if __name__ == "__main__":
    sys.exit(main())
