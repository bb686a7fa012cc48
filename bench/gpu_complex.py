#!/usr/bin/env python3
"""Complex matrices on the GPU, as a Python user calls them: linv's Python package on CUDA torch tensors
against torch.linalg on the same tensors, in one process.

Cases, for complex128 and complex64 (entries with real and imaginary parts uniform in [-1, 1]; complex64
matrices get 4 sqrt(n) on the diagonal, as a random complex64 matrix of large order is singular to working
precision):
    inverse          linv.inv(a)                    torch.linalg.inv(a)
    hpd inverse      linv.inv(h), h = G G^H / n + I  torch.cholesky_inverse(torch.linalg.cholesky(h))
    solve 1 rhs      linv.solve(a, b)               torch.linalg.solve(a, b)
    solve mixed      linv.solve(a, b, precision="mixed")   torch.linalg.solve(a, b)   (complex128 only)
    cholesky         linv.cholesky(h)               torch.linalg.cholesky(h)
Each pair is timed alternately with CUDA events on the current stream around the call (linv's calls
return when their result is complete), after one warm-up of each, median of --repeats. ratio = peer_s /
linv_s (above 1: linv is faster). Errors, computed the same way for both in complex128: inverse
||A X - I||_1 / (n eps ||A||_1 ||X||_1); solve and cholesky the normwise backward error
||A X - B||_1 / (n eps (||A||_1 ||X||_1 + ||B||_1)), with B = I and X = L L^H - A's residual for cholesky.

Writes bench/results/<h100|h200|slug>/complex.json (the rows format of ../shared/BENCHMARKS.md; copied to
$OUT when set) and prints a table.

    python3 bench/gpu_complex.py [--sizes 1024,4096,8192] [--dtypes complex128,complex64] [--repeats 5]
"""
import argparse
import datetime
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_inverse import write_json  # noqa: E402
from gpu_inverse import REPO, device_dir, git_sha  # noqa: E402

import linv  # noqa: E402  (the installed package: ./scripts/python-package)


def event_seconds(torch, call):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    out = call()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / 1e3, out


def pair(torch, mine, peer, repeats):
    """(linv's median seconds, the peer's, linv's last result, the peer's), alternating after a warm-up."""
    mine(), peer()
    mine_s, peer_s = [], []
    for _ in range(repeats):
        t, x = event_seconds(torch, mine)
        mine_s.append(t)
        t, y = event_seconds(torch, peer)
        peer_s.append(t)
    return statistics.median(mine_s), statistics.median(peer_s), x, y


def norm1(m):
    return float(m.abs().sum(dim=-2).max())


def inverse_error(torch, a, x, eps):
    a, x = a.to(torch.complex128), x.to(torch.complex128)
    n = a.shape[0]
    r = a @ x - torch.eye(n, dtype=torch.complex128, device=a.device)
    return norm1(r) / (n * eps * norm1(a) * norm1(x))


def backward_error(torch, a, x, b, eps):
    a, x, b = a.to(torch.complex128), x.to(torch.complex128), b.to(torch.complex128)
    return norm1(a @ x - b) / (a.shape[0] * eps * (norm1(a) * norm1(x) + norm1(b)))


def cholesky_error(torch, h, l, eps):
    h, l = h.to(torch.complex128), l.to(torch.complex128)
    return norm1(l @ l.mH - h) / (h.shape[0] * eps * norm1(h))


def recorder(out, name, n):
    """row(case, peer, timed, error): pair()'s timings of one case for dtype `name` at order n, appended to out
    in the rows format (errors by `error` of each result) and printed as a line of main's table."""
    def row(case, peer, timed, error):
        mine_s, peer_s, x, y = timed
        out.append({"case": f"{case} {name}", "n": n, "batch": 1, "linv_s": mine_s, "peer": peer, "peer_s": peer_s,
                    "ratio": peer_s / mine_s, "linv_error": error(x), "peer_error": error(y)})
        print(f"{out[-1]['case']:26} {n:6} {mine_s:10.5f} {peer_s:10.5f} {peer_s / mine_s:7.2f} "
              f"{out[-1]['linv_error']:10.3g} {out[-1]['peer_error']:10.3g}", flush=True)
    return row


def rows_for(torch, dtype, n, repeats, generator):
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    eps = torch.finfo(real).eps
    name = str(dtype).split(".")[-1]

    def uniform(*shape):
        parts = torch.rand(*shape, 2, dtype=real, device="cuda", generator=generator) * 2 - 1
        return torch.view_as_complex(parts)

    a = uniform(n, n)
    if dtype == torch.complex64:
        a += 4 * n ** 0.5 * torch.eye(n, dtype=dtype, device="cuda")
    g = uniform(n, n)
    h = g @ g.mH / n + torch.eye(n, dtype=dtype, device="cuda")
    del g
    b = uniform(n, 1)
    out = []
    row = recorder(out, name, n)

    row("inverse", "torch.linalg.inv", pair(torch, lambda: linv.inv(a), lambda: torch.linalg.inv(a), repeats),
        lambda x: inverse_error(torch, a, x, eps))
    row("hpd inverse", "torch.cholesky_inverse(torch.linalg.cholesky)",
        pair(torch, lambda: linv.inv(h), lambda: torch.cholesky_inverse(torch.linalg.cholesky(h)), repeats),
        lambda x: inverse_error(torch, h, x, eps))
    row("solve 1 rhs", "torch.linalg.solve",
        pair(torch, lambda: linv.solve(a, b), lambda: torch.linalg.solve(a, b), repeats),
        lambda x: backward_error(torch, a, x, b, eps))
    if dtype == torch.complex128:  # complex64 factors refined to complex128, against torch's complex128 solve
        row("solve mixed 1 rhs", "torch.linalg.solve",
            pair(torch, lambda: linv.solve(a, b, precision="mixed"), lambda: torch.linalg.solve(a, b), repeats),
            lambda x: backward_error(torch, a, x, b, eps))
    row("cholesky", "torch.linalg.cholesky",
        pair(torch, lambda: linv.cholesky(h), lambda: torch.linalg.cholesky(h), repeats),
        lambda l: cholesky_error(torch, h, l, eps))
    return out


def against_torch(doc, benchmark, script, rows_for, dtypes):
    """The main of a benchmark of linv's package against torch.linalg on CUDA tensors: its options (--sizes,
    --dtypes, default `dtypes`, --repeats, --out-dir), rows_for(torch, dtype, n, repeats, generator) over
    them, and bench/results/<device>/<benchmark>.json (copied to $OUT when set)."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="1024,4096,8192", type=lambda s: [int(v) for v in s.split(",") if v])
    p.add_argument("--dtypes", default=dtypes, type=lambda s: [v for v in s.split(",") if v])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out-dir", default=os.path.join(REPO, "bench", "results"))
    args = p.parse_args()
    import torch
    if not torch.cuda.is_available() or not linv.info()["gpus"]:
        sys.exit(f"no usable GPU ({linv.info()['why_no_gpu'] or 'PyTorch sees none'}): nothing to measure")
    generator = torch.Generator(device="cuda")
    generator.manual_seed(46)
    print(f"{'case':26} {'n':>6} {'linv s':>10} {'torch s':>10} {'ratio':>7} {'err linv':>10} {'err torch':>10}")
    rows = []
    for dtype in args.dtypes:
        for n in args.sizes:
            rows += rows_for(torch, getattr(torch, dtype), n, args.repeats, generator)
            torch.cuda.empty_cache()
    name = torch.cuda.get_device_name()
    result = {"benchmark": benchmark, "device": name, "date": datetime.date.today().isoformat(),
              "versions": {"linv": git_sha(), "torch": torch.__version__, "cuda": torch.version.cuda},
              "command": f"python3 bench/{script} " + " ".join(sys.argv[1:]), "rows": rows}
    path = os.path.join(args.out_dir, device_dir(name), f"{benchmark}.json")
    write_json(result, path)
    if os.environ.get("OUT"):
        shutil.copy(path, os.environ["OUT"])
    print(f"wrote {path}")


if __name__ == "__main__":
    against_torch(__doc__, "complex", "gpu_complex.py", rows_for, "complex128,complex64")
