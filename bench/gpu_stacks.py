#!/usr/bin/env python3
"""Stacks of small matrices on the GPU, as a Python user calls them: linv.inv and linv.solve on CUDA torch
tensors of shape (batch, n, n) against torch.linalg.inv and torch.linalg.solve on the same tensors, in one
process, over the grid of orders x batch sizes x dtypes.

Matrices: entries uniform in [-1, 1] plus sqrt(n) on the diagonal (regular to working precision in float32
at every order, so both libraries invert every matrix); one right-hand side per matrix for solves (b of
shape (batch, n, 1)). Each pair is timed alternately with CUDA events around the call (bench/gpu_complex.py's
pair: one warm-up each, median of --repeats); ratio = peer_s / linv_s (above 1: linv is faster). floor_s is
the bytes a stack must move (A read, X written; B read for solves) at the copy rate measured in the same run
(a device-to-device copy of 1 GiB); floor_fraction = floor_s / linv_s. Errors, the same for both, the
largest over the first 2000 matrices in float64: inverse ||A X - I||_1 / (n eps ||A||_1 ||X||_1); solve
||A x - b||_1 / (n eps (||A||_1 ||x||_1 + ||b||_1)).

Cases whose stack would pass --max-bytes (default 2 GiB for A) are left out.

Writes bench/results/<h100|h200|slug>/stacks.json (the rows format of ../shared/BENCHMARKS.md; copied to
$OUT when set) and prints a table.

    python3 bench/gpu_stacks.py [--orders 2,3,4,...,64] [--batches 1000,16384,131072,1048576]
        [--dtypes float32,float64] [--ops inv,solve] [--repeats 5]
"""
import argparse
import datetime
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_inverse import write_json  # noqa: E402
from gpu_complex import pair  # noqa: E402
from gpu_inverse import REPO, device_dir, git_sha  # noqa: E402

import linv  # noqa: E402  (the installed package: ./scripts/python-package)

ORDERS = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
BATCHES = [1000, 1 << 14, 1 << 17, 1 << 20]


def ints(s):
    return [int(v) for v in s.split(",") if v]


def copy_rate(torch):
    """Bytes per second of a device-to-device copy (read plus write counted), median of 5."""
    x = torch.empty(1 << 28, dtype=torch.float32, device="cuda").uniform_()
    y = torch.empty_like(x)
    times = []
    for _ in range(6):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        y.copy_(x)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return 2 * x.numel() * x.element_size() / statistics.median(times[1:])


def norm1(m):  # per matrix of a stack
    return m.abs().sum(dim=-2).amax(dim=-1)


def inverse_error(torch, a, x, eps):
    a, x = a[:2000].double(), x[:2000].double()
    n = a.shape[-1]
    r = a @ x - torch.eye(n, dtype=torch.float64, device=a.device)
    return float((norm1(r) / (n * eps * norm1(a) * norm1(x))).max())


def solve_error(torch, a, x, b, eps):
    a, x, b = a[:2000].double(), x[:2000].double(), b[:2000].double()
    n = a.shape[-1]
    return float((norm1(a @ x - b) / (n * eps * (norm1(a) * norm1(x) + norm1(b)))).max())


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--orders", default=ORDERS, type=ints)
    p.add_argument("--batches", default=BATCHES, type=ints)
    p.add_argument("--dtypes", default=["float32", "float64"], type=lambda s: [v for v in s.split(",") if v])
    p.add_argument("--ops", default=["inv", "solve"], type=lambda s: [v for v in s.split(",") if v])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--max-bytes", type=float, default=2 * 2**30)
    p.add_argument("--out-dir", default=os.path.join(REPO, "bench", "results"))
    args = p.parse_args()
    import torch
    if not torch.cuda.is_available() or not linv.info()["gpus"]:
        sys.exit(f"no usable GPU ({linv.info()['why_no_gpu'] or 'PyTorch sees none'}): nothing to measure")
    rate = copy_rate(torch)
    generator = torch.Generator(device="cuda")
    generator.manual_seed(44)
    print(f"copy rate {rate / 1e9:.0f} GB/s")
    print(f"{'case':14} {'n':>3} {'batch':>8} {'linv ms':>9} {'torch ms':>9} {'ratio':>6} {'floor':>6} "
          f"{'err linv':>9} {'err torch':>9}")
    rows = []
    for name in args.dtypes:
        dtype = getattr(torch, name)
        eps = torch.finfo(dtype).eps
        size = torch.finfo(dtype).bits // 8
        for n in args.orders:
            for batch in args.batches:
                if batch * n * n * size > args.max_bytes:
                    continue
                a = torch.rand(batch, n, n, dtype=dtype, device="cuda", generator=generator) * 2 - 1
                a += n ** 0.5 * torch.eye(n, dtype=dtype, device="cuda")
                b = torch.rand(batch, n, 1, dtype=dtype, device="cuda", generator=generator) * 2 - 1
                for op in args.ops:
                    if op == "inv":
                        timed = pair(torch, lambda: linv.inv(a), lambda: torch.linalg.inv(a), args.repeats)
                        error = lambda x: inverse_error(torch, a, x, eps)  # noqa: E731
                        moved, peer = 2 * a.numel() * size, "torch.linalg.inv"
                    else:
                        timed = pair(torch, lambda: linv.solve(a, b), lambda: torch.linalg.solve(a, b), args.repeats)
                        error = lambda x: solve_error(torch, a, x, b, eps)  # noqa: E731
                        moved, peer = (a.numel() + 2 * b.numel()) * size, "torch.linalg.solve"
                    mine_s, peer_s, x, y = timed
                    floor_s = moved / rate
                    rows.append({"case": f"{op} {name}", "n": n, "batch": batch, "linv_s": mine_s, "peer": peer,
                                 "peer_s": peer_s, "ratio": peer_s / mine_s, "floor_s": floor_s,
                                 "floor_fraction": floor_s / mine_s, "linv_error": error(x), "peer_error": error(y)})
                    r = rows[-1]
                    print(f"{r['case']:14} {n:3} {batch:8} {mine_s * 1e3:9.3f} {peer_s * 1e3:9.3f} {r['ratio']:6.2f} "
                          f"{r['floor_fraction']:6.2f} {r['linv_error']:9.3g} {r['peer_error']:9.3g}", flush=True)
                    del x, y
                del a, b
                torch.cuda.empty_cache()
    name = torch.cuda.get_device_name()
    result = {"benchmark": "stacks", "device": name, "date": datetime.date.today().isoformat(),
              "versions": {"linv": git_sha(), "torch": torch.__version__, "cuda": torch.version.cuda},
              "command": "python3 bench/gpu_stacks.py " + " ".join(sys.argv[1:]), "copy_rate_bytes_per_s": rate,
              "rows": rows}
    path = os.path.join(args.out_dir, device_dir(name), "stacks.json")
    write_json(result, path)
    if os.environ.get("OUT"):
        shutil.copy(path, os.environ["OUT"])
    print(f"wrote {path}")
    red = [r for r in rows if r["ratio"] < 1.0]
    print(f"{len(red)} of {len(rows)} cases below torch" + "".join(
        f"\n  {r['case']} n={r['n']} batch={r['batch']}: {r['ratio']:.2f}x" for r in red))


if __name__ == "__main__":
    main()
