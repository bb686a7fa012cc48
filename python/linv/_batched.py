"""Stacks of matrices (..., n, n) for `linv.inv` and `linv.solve`: NumPy's broadcasting over the leading
dimensions, then linv's batched routines (include/linv/batched.hpp: batched kernels for orders up to
`MAX_ORDER`, the dense routine matrix by matrix above it, where the batch lies). Stacks of GPU arrays
(inv_gpu, solve_gpu) take the same steps with their own framework on their GPU, where the batched
kernels read them in place. Complex stacks take the same routines (LU per matrix on the CPU, cuBLAS's
batched LU and inverse on a GPU)."""
import math as _math

import numpy as _np

from . import _linv
from ._common import SingularMatrixError, _float

MAX_ORDER = _linv.batched_max_order  # the largest order linv inverts in one batch


def _stack(a, name="a"):
    a = _float(a, name, complex=True)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name} must be a stack of square matrices (..., n, n); its shape is {a.shape}")
    return a


def _check_method(method, what):
    if method != "auto":
        raise ValueError(f"{what} of a stack runs linv's batched kernels, which choose their own method "
                         f"(LAPACK's LU on the CPU, Gauss-Jordan in registers on a GPU): drop method={method!r}")


def _singular(pivots, why, lead, what, shape, singular):
    """Raise (singular="raise") naming the first singular matrix of the stack, or let the NaN blocks stand.
    why: the library's account of each singular matrix (linv::batched::describe), by flat index."""
    if singular not in ("raise", "nan"):
        raise ValueError(f"singular is 'raise' or 'nan', not {singular!r}")
    if not why:  # every matrix regular: no scan of the pivots (a stack of 2^20 spent 1.5 ms on two)
        return
    bad = _np.flatnonzero(pivots.reshape(-1))
    if bad.size == 0 or singular == "nan":
        return
    members = [tuple(int(i) for i in _np.unravel_index(k, lead)) for k in bad]
    first, pivot = members[0], int(pivots.reshape(-1)[bad[0]])
    reason = why.get(int(bad[0]), f"pivot in column {pivot}")
    e = SingularMatrixError(
        f"{what}: matrix {first} of the stack of shape {shape} is singular ({reason}); "
        f"{bad.size} of {pivots.size} matrices are singular. Every other matrix was computed: pass "
        f"singular='nan' to get them, with NaN for the singular ones")
    e.pivot, e.index, e.indices = pivot, first, members
    raise e


def _residual_inv(a, x, ok):
    """max over the regular matrices of ||A X - I||_1 / (n eps ||A||_1 ||X||_1), in float64 (complex128)."""
    n = a.shape[-1]
    wide = _np.complex128 if a.dtype.kind == "c" else _np.float64
    a64, x64 = a[ok].astype(wide), x[ok].astype(wide)
    if a64.shape[0] == 0:
        return float("nan")
    r = a64 @ x64 - _np.eye(n)
    norm1 = lambda m: _np.abs(m).sum(axis=-2).max(axis=-1)  # noqa: E731
    return float((norm1(r) / (n * _np.finfo(a.dtype).eps * norm1(a64) * norm1(x64))).max())


def _residual_solve(a, x, b, ok):
    """max over the regular systems of ||B - A X||_1 / (n eps (||A||_1 ||X||_1 + ||B||_1)), in float64
    (complex128)."""
    n = a.shape[-1]
    wide = _np.complex128 if a.dtype.kind == "c" else _np.float64
    a64, x64, b64 = a[ok].astype(wide), x[ok].astype(wide), b[ok].astype(wide)
    if a64.shape[0] == 0:
        return float("nan")
    norm1 = lambda m: _np.abs(m).sum(axis=-2).max(axis=-1)  # noqa: E731
    den = n * _np.finfo(a.dtype).eps * (norm1(a64) * norm1(x64) + norm1(b64))
    return float((norm1(b64 - a64 @ x64) / _np.where(den > 0, den, 1)).max())


def _pivots(pivots, count):
    """The pivots as an array; zeros (never written, so never touched unless read) when all are regular."""
    return _np.asarray(pivots, dtype=_np.int64) if pivots else _np.zeros(count, dtype=_np.int64)


def _empty(zeros, shape, what, device, lead, report):
    x = zeros(shape)
    return (x, {"operation": f"batched-{what}", "device": device, "singular": 0,
                "pivots": _np.zeros(lead, dtype=_np.int64), "notes": ["empty stack"]}) if report else x


def _finish(x, pivots, why, rep, lead, what, shape, singular, report):
    rep["singular"] = int(_np.count_nonzero(pivots)) if why else 0
    rep["pivots"] = pivots.reshape(lead)
    _singular(pivots, why, lead, what, shape, singular)
    return (x, rep) if report else x


def inv(a, method, device, check, report, singular):
    a = _stack(a)
    _check_method(method, "inv")
    lead, n = a.shape[:-2], a.shape[-1]
    count = _math.prod(lead)
    if count == 0 or n == 0:
        return _empty(lambda shape: _np.zeros(shape, dtype=a.dtype), a.shape, "inv", device, lead, report)
    flat = _np.ascontiguousarray(a.reshape(count, n, n))
    # linv sees each C-ordered matrix as its transpose: inv(A^T)^T = inv(A), read back in C order.
    x, pivots, why, rep = _linv.batched_inv(flat, device)
    pivots = _pivots(pivots, count)
    if check:
        rep["scaled_residual"] = _residual_inv(flat, x, pivots == 0)
    return _finish(x.reshape(a.shape), pivots, why, rep, lead, "inv", a.shape, singular, report)


def inv_gpu(a, gpu, method, check, report, singular):
    """inv of a stack of GPU arrays (gpu: its _Gpu), on its GPU; the check's residual is computed on host
    copies."""
    shape = tuple(a.shape)
    if shape[-1] != shape[-2]:
        raise ValueError(f"a must be a stack of square matrices (..., n, n); its shape is {shape}")
    _check_method(method, "inv")
    lead, n = shape[:-2], shape[-1]
    count = _math.prod(lead)
    if count == 0 or n == 0:
        return _empty(gpu.zeros, shape, "inv", f"cuda:{gpu.index}", lead, report)
    flat = gpu.contiguous(gpu.adopt(a).reshape(count, n, n))
    x, pivots, why, rep = _linv.batched_inv_gpu(flat, gpu.framework)
    pivots = _pivots(pivots, count)
    if check:
        rep["scaled_residual"] = _residual_inv(gpu.to_numpy(flat), gpu.to_numpy(x), pivots == 0)
    return _finish(x.reshape(shape), pivots, why, rep, lead, "inv", shape, singular, report)


def _solve_shapes(a_shape, b_shape):
    """n, k, the broadcast leading dimensions and whether b is a vector, naming both shapes if they do not fit."""
    n = a_shape[-1]
    vector = len(b_shape) == 1  # as NumPy 2: b is a vector only when it is 1-D
    b2_shape = b_shape + (1,) if vector else b_shape
    if len(b2_shape) < 2 or b2_shape[-2] != n:
        raise ValueError(f"solve: a has shape {a_shape} and b has shape {b_shape}: b needs {n} rows "
                         f"(b of shape (n,) or (..., n, k))")
    try:
        lead = _np.broadcast_shapes(a_shape[:-2], b2_shape[:-2])
    except ValueError:
        raise ValueError(f"solve: a has shape {a_shape} and b has shape {b_shape}: their leading dimensions "
                         f"{a_shape[:-2]} and {b2_shape[:-2]} do not broadcast") from None
    return n, b2_shape[-1], lead, vector


def solve(a, b, method, device, check, report, singular):
    a = _stack(a)
    b = _np.asarray(b)
    _check_method(method, "solve")
    n, k, lead, vector = _solve_shapes(a.shape, b.shape)
    b2 = _float(b[:, None] if vector else b, "b", complex=a.dtype.kind == "c").astype(a.dtype, copy=False)
    count = _math.prod(lead)
    out_shape = lead + ((n,) if vector else (n, k))
    if count == 0 or n == 0 or k == 0:
        return _empty(lambda shape: _np.zeros(shape, dtype=a.dtype), out_shape, "solve", device, lead, report)
    af = _np.broadcast_to(a, lead + (n, n)).reshape(count, n, n)
    bf = _np.broadcast_to(b2, lead + (n, k)).reshape(count, n, k)
    # linv's batch layout: each block of right-hand sides column-major, one after another; each real matrix
    # as it is, in C order, which linv solves transposed (a_rows), each complex one column-major.
    rows = a.dtype.kind != "c"
    at = _np.ascontiguousarray(af if rows else af.swapaxes(1, 2))
    bt = _np.ascontiguousarray(bf.swapaxes(1, 2))
    x, pivots, why, rep = _linv.batched_solve(at, bt, rows, device)
    pivots = _pivots(pivots, count)
    if check:
        rep["scaled_residual"] = _residual_solve(af, x, bf, pivots == 0)
    x = x.reshape(lead + (n, k))
    return _finish(x[..., 0] if vector else x, pivots, why, rep, lead, "solve", a.shape, singular, report)


def _broadcast(gpu, x, shape):
    """x broadcast to `shape` by its framework, x itself when it has that shape."""
    return x if tuple(x.shape) == shape else gpu.broadcast_to(x, shape)


def solve_gpu(a, b, gpu, method, check, report, singular):
    """solve for stacks of GPU arrays (a and b on one GPU, one dtype), on their GPU: broadcast and laid out by
    their framework there; the check's residual is computed on host copies."""
    a_shape, b_shape = tuple(a.shape), tuple(b.shape)
    if len(a_shape) < 2 or a_shape[-1] != a_shape[-2]:
        raise ValueError(f"a must be a stack of square matrices (..., n, n); its shape is {a_shape}")
    _check_method(method, "solve")
    n, k, lead, vector = _solve_shapes(a_shape, b_shape)
    a, b = gpu.adopt(a), gpu.adopt(b)
    b2 = b.reshape(n, 1) if vector else b
    count = _math.prod(lead)
    out_shape = lead + ((n,) if vector else (n, k))
    if count == 0 or n == 0 or k == 0:
        return _empty(gpu.zeros, out_shape, "solve", f"cuda:{gpu.index}", lead, report)
    af = gpu.contiguous(_broadcast(gpu, a, lead + (n, n))).reshape(count, n, n)
    bf = gpu.contiguous(_broadcast(gpu, b2, lead + (n, k))).reshape(count, n, k)
    rows = not gpu.dtype.startswith("complex")  # real matrices in C order, solved transposed (as solve above)
    at = af if rows else gpu.contiguous(af.swapaxes(1, 2))
    bt = gpu.contiguous(bf.swapaxes(1, 2))  # no copy for one right-hand side
    x, pivots, why, rep = _linv.batched_solve_gpu(at, bt, rows, gpu.framework)
    pivots = _pivots(pivots, count)
    if check:
        rep["scaled_residual"] = _residual_solve(gpu.to_numpy(af), gpu.to_numpy(x), gpu.to_numpy(bf), pivots == 0)
    x = x.reshape(lead + (n, k))
    return _finish(x[..., 0] if vector else x, pivots, why, rep, lead, "solve", a_shape, singular, report)
