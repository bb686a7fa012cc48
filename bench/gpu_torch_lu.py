#!/usr/bin/env python3
"""linv.torch's lu_factor and lu_solve on CUDA tensors against torch.linalg's on the same tensors, in one
process: what a user who swaps `torch.linalg` for `linv.torch` gets.

Cases, for float64, float32, complex128 and complex64 (entries uniform in [-1, 1], real and imaginary parts
alike, plus 4 sqrt(n) on the diagonal so that the single-precision matrices are regular to working
precision):
    lu_factor        la.lu_factor(a)                 torch.linalg.lu_factor(a)
    lu_solve 1 rhs   la.lu_solve(LU, piv, b)         torch.linalg.lu_solve(LU, piv, b)   (each its own factors)
Timed alternately with CUDA events (bench/gpu_complex.py's pair: one warm-up each, median of --repeats);
ratio = peer_s / linv_s (above 1: linv is faster). Errors in float64/complex128, the same for both:
lu_factor ||P L U - A||_1 / (n eps ||A||_1); lu_solve ||A X - B||_1 / (n eps (||A||_1 ||X||_1 + ||B||_1)).

Writes bench/results/<h100|h200|slug>/torch-lu.json (the rows format of ../shared/BENCHMARKS.md; copied to
$OUT when set) and prints a table.

    python3 bench/gpu_torch_lu.py [--sizes 1024,4096,8192] [--dtypes float64,...] [--repeats 5]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_complex import against_torch, backward_error, norm1, pair, recorder  # noqa: E402

from linv import torch as la  # noqa: E402  (the installed package: ./scripts/python-package)


def rows_for(torch, dtype, n, repeats, generator):
    real = torch.float64 if dtype in (torch.float64, torch.complex128) else torch.float32
    eps = torch.finfo(real).eps
    wide = torch.complex128 if dtype.is_complex else torch.float64
    name = str(dtype).split(".")[-1]

    def uniform(*shape):
        if not dtype.is_complex:
            return torch.rand(*shape, dtype=real, device="cuda", generator=generator) * 2 - 1
        return torch.view_as_complex(torch.rand(*shape, 2, dtype=real, device="cuda", generator=generator) * 2 - 1)

    a = uniform(n, n) + 4 * n ** 0.5 * torch.eye(n, dtype=dtype, device="cuda")
    b = uniform(n, 1)
    out = []
    row = recorder(out, name, n)

    def factor_error(f):
        p, l, u = torch.lu_unpack(*f)
        return norm1((p.to(wide) @ l.to(wide) @ u.to(wide)) - a.to(wide)) / (n * eps * norm1(a.to(wide)))

    row("lu_factor", "torch.linalg.lu_factor",
        pair(torch, lambda: la.lu_factor(a), lambda: torch.linalg.lu_factor(a), repeats), factor_error)
    mine, theirs = la.lu_factor(a), torch.linalg.lu_factor(a)
    row("lu_solve 1 rhs", "torch.linalg.lu_solve",
        pair(torch, lambda: la.lu_solve(*mine, b), lambda: torch.linalg.lu_solve(*theirs, b), repeats),
        lambda x: backward_error(torch, a.to(wide), x.to(wide), b.to(wide), eps))
    return out


if __name__ == "__main__":
    against_torch(__doc__, "torch-lu", "gpu_torch_lu.py", rows_for, "float64,float32,complex128,complex64")
