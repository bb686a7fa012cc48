"""Stacks of matrices (..., n, n) for `linv.inv` and `linv.solve`: NumPy's broadcasting over the leading
dimensions, linv's batched kernels (include/linv/batched.hpp) for orders up to `MAX_ORDER`, one dense
call per matrix above it."""
import numpy as _np

from . import _linv
from ._common import SingularMatrixError, _float

MAX_ORDER = _linv.batched_max_order  # the largest order linv inverts in one batch


def _stack(a, name="a"):
    a = _float(a, name)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name} must be a stack of square matrices (..., n, n); its shape is {a.shape}")
    return a


def _check_method(method, what):
    if method != "auto":
        raise ValueError(f"{what} of a stack runs linv's batched kernels, which choose their own method "
                         f"(LAPACK's LU on the CPU, Gauss-Jordan in registers on a GPU): drop method={method!r}")


def _singular(pivots, lead, what, shape, singular):
    """Raise (singular="raise") naming the first singular matrix of the stack, or let the NaN blocks stand."""
    if singular not in ("raise", "nan"):
        raise ValueError(f"singular is 'raise' or 'nan', not {singular!r}")
    bad = _np.flatnonzero(pivots.reshape(-1))
    if bad.size == 0 or singular == "nan":
        return
    members = [tuple(int(i) for i in _np.unravel_index(k, lead)) for k in bad]
    first, pivot = members[0], int(pivots.reshape(-1)[bad[0]])
    e = SingularMatrixError(
        f"{what}: matrix {first} of the stack of shape {shape} is singular (zero pivot in column {pivot}); "
        f"{bad.size} of {pivots.size} matrices are singular. Every other matrix was computed: pass "
        f"singular='nan' to get them, with NaN for the singular ones")
    e.pivot, e.index, e.indices = pivot, first, members
    raise e


def _residual_inv(a, x, ok):
    """max over the regular matrices of ||A X - I||_1 / (n eps ||A||_1 ||X||_1), in float64."""
    n = a.shape[-1]
    a64, x64 = a[ok].astype(_np.float64), x[ok].astype(_np.float64)
    if a64.shape[0] == 0:
        return float("nan")
    r = a64 @ x64 - _np.eye(n)
    norm1 = lambda m: _np.abs(m).sum(axis=-2).max(axis=-1)  # noqa: E731
    return float((norm1(r) / (n * _np.finfo(a.dtype).eps * norm1(a64) * norm1(x64))).max())


def _residual_solve(a, x, b, ok):
    """max over the regular systems of ||B - A X||_1 / (n eps (||A||_1 ||X||_1 + ||B||_1)), in float64."""
    n = a.shape[-1]
    a64, x64, b64 = a[ok].astype(_np.float64), x[ok].astype(_np.float64), b[ok].astype(_np.float64)
    if a64.shape[0] == 0:
        return float("nan")
    norm1 = lambda m: _np.abs(m).sum(axis=-2).max(axis=-1)  # noqa: E731
    den = n * _np.finfo(a.dtype).eps * (norm1(a64) * norm1(x64) + norm1(b64))
    return float((norm1(b64 - a64 @ x64) / _np.where(den > 0, den, 1)).max())


def _one_by_one(native, count, what, dtype, out_shape):
    """Above MAX_ORDER: each matrix by linv's dense routine, singular ones as NaN with their pivot."""
    x = _np.empty((count,) + out_shape, dtype=dtype)
    pivots = _np.zeros(count, dtype=_np.int64)
    rep = None
    seconds = 0.0
    for k in range(count):
        try:
            x[k], rep = native(k)
            seconds += rep["seconds"]
        except SingularMatrixError as e:  # exactly singular, or to working precision (the dense rule)
            x[k] = _np.nan
            pivots[k] = max(int(e.pivot), 1)
    if rep is None:
        rep = {"operation": what, "method": "lu", "device": "cpu", "notes": []}
    rep = dict(rep, seconds=seconds, notes=list(rep["notes"]) + [
        f"order above {MAX_ORDER}: each matrix by linv's dense {what}, not the batched kernels"])
    return x, pivots, rep


def inv(a, method, device, check, report, singular):
    a = _stack(a)
    _check_method(method, "inv")
    lead, n = a.shape[:-2], a.shape[-1]
    count = int(_np.prod(lead))
    if count == 0 or n == 0:
        x = _np.zeros(a.shape, dtype=a.dtype)
        return (x, {"operation": "batched-inv", "device": device, "singular": 0,
                    "pivots": _np.zeros(lead, dtype=_np.int64), "notes": ["empty stack"]}) if report else x
    flat = _np.ascontiguousarray(a.reshape(count, n, n))
    if n <= MAX_ORDER:
        # linv sees each C-ordered matrix as its transpose: inv(A^T)^T = inv(A), read back in C order.
        x, pivots, _, rep = _linv.batched_inv(flat, device)
        pivots = _np.asarray(pivots, dtype=_np.int64) if pivots else _np.zeros(count, dtype=_np.int64)
    else:
        x, pivots, rep = _one_by_one(lambda k: _linv.inv(flat[k], "auto", "native", "auto", device, False, True), count,
                                     "inv", a.dtype, (n, n))
    rep["singular"] = int(_np.count_nonzero(pivots))
    rep["pivots"] = pivots.reshape(lead)
    if check:
        rep["scaled_residual"] = _residual_inv(flat, x, pivots == 0)
    _singular(pivots, lead, "inv", a.shape, singular)
    x = x.reshape(a.shape)
    return (x, rep) if report else x


def solve(a, b, method, device, check, report, singular):
    a = _stack(a)
    b = _np.asarray(b)
    _check_method(method, "solve")
    n = a.shape[-1]
    vector = b.ndim == 1  # as NumPy 2: b is a vector only when it is 1-D
    b2 = b[:, None] if vector else b
    if b2.ndim < 2 or b2.shape[-2] != n:
        raise ValueError(f"solve: a has shape {a.shape} and b has shape {b.shape}: b needs {n} rows "
                         f"(b of shape (n,) or (..., n, k))")
    try:
        lead = _np.broadcast_shapes(a.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise ValueError(f"solve: a has shape {a.shape} and b has shape {b.shape}: their leading dimensions "
                         f"{a.shape[:-2]} and {b2.shape[:-2]} do not broadcast") from None
    k = b2.shape[-1]
    b2 = _float(b2, "b").astype(a.dtype, copy=False)
    count = int(_np.prod(lead))
    out_shape = lead + ((n,) if vector else (n, k))
    if count == 0 or n == 0 or k == 0:
        x = _np.zeros(out_shape, dtype=a.dtype)
        return (x, {"operation": "batched-solve", "device": device, "singular": 0,
                    "pivots": _np.zeros(lead, dtype=_np.int64), "notes": ["empty stack"]}) if report else x
    af = _np.broadcast_to(a, lead + (n, n)).reshape(count, n, n)
    bf = _np.broadcast_to(b2, lead + (n, k)).reshape(count, n, k)
    if n <= MAX_ORDER:
        # linv's batch layout: each matrix and each block of right-hand sides column-major, one after another.
        at = _np.ascontiguousarray(af.swapaxes(1, 2))
        bt = _np.ascontiguousarray(bf.swapaxes(1, 2))
        x, pivots, _, rep = _linv.batched_solve(at, bt, device)
        pivots = _np.asarray(pivots, dtype=_np.int64) if pivots else _np.zeros(count, dtype=_np.int64)
    else:
        x, pivots, rep = _one_by_one(
            lambda i: _linv.solve(_np.ascontiguousarray(af[i]), _np.ascontiguousarray(bf[i]), "auto", "native",
                                  "auto", device, False, True), count, "solve", a.dtype, (n, k))
    rep["singular"] = int(_np.count_nonzero(pivots))
    rep["pivots"] = pivots.reshape(lead)
    if check:
        rep["scaled_residual"] = _residual_solve(af, x, bf, pivots == 0)
    _singular(pivots, lead, "solve", a.shape, singular)
    x = x.reshape(lead + (n, k))
    if vector:
        x = x[..., 0]
    return (x, rep) if report else x
