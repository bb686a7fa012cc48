"""numpy.linalg's contract over linv: the same names, signatures, return types and errors, so that
`from linv import linalg` can replace `from numpy import linalg` in code that calls these functions.

    inv, solve, lstsq, pinv, cholesky, det, slogdet

What NumPy's contract has and these keep: stacks (..., M, M) everywhere, b broadcast against a as in NumPy 2
(b is a vector only when it is 1-D), 0 x 0 matrices and empty stacks, any strides, subclasses of ndarray kept
(np.matrix comes back as np.matrix), NumPy's dtype rules (integers and bool computed as float64, float32 kept,
float32 with float64 promoted to float64, float16 and longdouble a TypeError), LinAlgError for matrices that
are not square or not 2-D, for numerical failures and for NaN or Inf input, and slogdet's named result.

complex64 and complex128 are computed as NumPy computes them (a real array with a complex one promotes to
complex, float64 with complex64 to complex128), on the CPU.

Where linv differs on purpose:
- inv and solve refuse a matrix singular to working precision (reciprocal condition number below machine
  epsilon), not only one with an exactly zero pivot, and inv keeps linv's accuracy promise on the residual:
  NumPy returns such an answer without a word.
- lstsq solves by QR with column pivoting (LAPACK gelsy) where NumPy uses the SVD (gelsd), and its rank is
  that of the pivoted R: on a matrix whose smallest singular value is at rounding level, below rcond, the two
  can count it differently (NumPy's test_rcond). The singular values returned as `s` are computed by NumPy:
  linv's solve does not form them. (x = linv.pinv(a) @ b, by the SVD, lost digits in float32 that gelsy
  keeps: 56 of NumPy's 719 real cases failed that way.)
- cholesky reads a's lower triangle only (upper=True: its upper one), as NumPy does; linv.cholesky itself
  refuses a matrix that is not symmetric.

Each function's docstring has a table of how it differs. The functions run on the CPU for NumPy arrays;
linv's own functions (linv.inv, linv.solve, ...) take GPU
arrays and the device= and report= keywords.
"""

from typing import Any, Callable, NamedTuple

import numpy as _np
from numpy.linalg import LinAlgError

from . import _common
from . import inv as _inv, lstsq as _lstsq, pinv as _pinv, slogdet as _slogdet, solve as _solve
from . import cholesky as _cholesky

__all__ = ["LinAlgError", "SlogdetResult", "cholesky", "det", "inv", "lstsq", "pinv", "slogdet", "solve"]


class SlogdetResult(NamedTuple):
    """slogdet's result, as numpy.linalg's: det a = sign * exp(logabsdet)."""
    sign: Any
    logabsdet: Any


def _prepare(a: Any) -> tuple[_np.ndarray, Callable[[_np.ndarray], Any]]:
    """a as an ndarray and the wrap that gives results a's subclass (NumPy's _makearray)."""
    array = _np.asarray(a)
    return array, getattr(a, "__array_wrap__", array.__array_wrap__)


def _compute_dtype(*arrays: _np.ndarray) -> _np.dtype:
    """The dtype NumPy's linalg computes these arrays in (float16 refused, as NumPy does)."""
    return _common._computed({f"array {i}": array for i, array in enumerate(arrays)}, half=False, complex=True)


def _real(dtype: _np.dtype) -> _np.dtype:
    """The real dtype of dtype's precision (float64 for complex128): what norms and logarithms come back in."""
    return _np.finfo(dtype).dtype


def _at_least_2d(a: _np.ndarray) -> None:
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")


def _square_stack(a: _np.ndarray) -> None:
    _at_least_2d(a)
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"Last 2 dimensions of the array must be square; its shape is {a.shape}")


def _square_input(a: Any) -> tuple[_np.ndarray, Callable[[_np.ndarray], Any]]:
    """a as a matrix or stack of square matrices in the dtype NumPy computes it in, and its subclass's wrap."""
    a, wrap = _prepare(a)
    _square_stack(a)
    return a.astype(_compute_dtype(a), copy=False), wrap


def _mirrored(a: _np.ndarray, lower: bool, hermitian: bool = True) -> _np.ndarray:
    """The symmetric matrix (or stack) whose lower (else upper) triangle is a's: the one triangle NumPy's
    cholesky and SciPy's sym/her/pos structures read (linv's own functions check a whole symmetric a). For
    complex a and `hermitian`, the Hermitian one: the triangle mirrored conjugated, and the diagonal's real
    part alone (LAPACK's Hermitian routines read no more of it); else the complex symmetric one."""
    half = _np.tril(a) if lower else _np.triu(a)
    strict = _np.tril(a, -1) if lower else _np.triu(a, 1)
    mirror = _np.swapaxes(strict, -1, -2)
    if a.dtype.kind != "c" or not hermitian:
        return half + mirror
    full = half + mirror.conj()
    diagonal = _np.einsum("...ii->...i", full)  # a writable view of each matrix's diagonal
    diagonal.imag = 0
    return full


def _call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """linv's function, its refusal of NaN or Inf input (an InputError, a ValueError) raised as NumPy's
    LinAlgError; its singular and not-positive-definite errors are LinAlgErrors already."""
    try:
        return function(*args, **kwargs)
    except _common.InputError as error:
        raise LinAlgError(str(error)) from error


def inv(a: Any) -> Any:
    """The inverse of a, or of each matrix of a stack (..., M, M), as numpy.linalg.inv.

    How it differs from numpy.linalg:

    | | numpy.linalg | linv |
    |---|---|---|
    | singular to working precision (rcond < eps) | an answer with no accurate digit | LinAlgError naming rcond and the smallest pivot |
    """
    a, wrap = _square_input(a)
    if a.size == 0:
        return wrap(_np.empty_like(a))
    return wrap(_call(_inv, a))


def solve(a: Any, b: Any) -> Any:
    """x with a x = b, as numpy.linalg.solve in NumPy 2: b of shape (M,) is a vector, else (..., M, K), its
    leading dimensions broadcast against a's.

    How it differs from numpy.linalg:

    | | numpy.linalg | linv |
    |---|---|---|
    | singular to working precision (rcond < eps) | an answer with no accurate digit | LinAlgError naming rcond and the smallest pivot |
    """
    a, _ = _prepare(a)
    b, wrap = _prepare(b)
    _square_stack(a)
    dtype = _compute_dtype(a, b)
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    n = a.shape[-1]
    if b.ndim == 1:
        if b.shape[0] != n:
            raise ValueError(f"solve: a has shape {a.shape} and b has shape {b.shape}: b needs {n} rows")
        shape = a.shape[:-2] + (n,)
    else:
        if b.shape[-2] != n:
            raise ValueError(f"solve: a has shape {a.shape} and b has shape {b.shape}: b needs {n} rows")
        shape = _np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:]
    if 0 in shape or n == 0:
        if n and a.size:  # no right-hand side, but a singular a is still an error, as NumPy's
            _call(_solve, a, _np.zeros(a.shape[:-1] + (1,), dtype=dtype))
        return wrap(_np.zeros(shape, dtype=dtype))
    if a.ndim > 2 and b.ndim == 1:
        return wrap(_call(_solve, a, b[:, None])[..., 0])
    return wrap(_call(_solve, a, b))


def lstsq(a: Any, b: Any, rcond: float | None = None) -> tuple[Any, Any, Any, Any]:
    """(x, residuals, rank, s) as numpy.linalg.lstsq: x minimises ||b - a x||_2 (b of shape (M,) or (M, K))
    with the least norm, residuals the squared 2-norms of b - a x's columns when rank == N < M (else empty),
    rank the effective rank, s a's singular values. rcond: singular values below rcond * the largest count
    as zero; None is max(M, N) * eps, a negative one eps (as NumPy). x and rank are linv.lstsq's (QR with
    column pivoting, LAPACK gelsy, where NumPy uses the SVD, gelsd); s is computed by NumPy.

    How it differs from numpy.linalg:

    | | numpy.linalg | linv |
    |---|---|---|
    | algorithm | SVD (gelsd) | QR with column pivoting (gelsy) |
    | rank at rounding level (a singular value near rcond * the largest) | counted by the SVD | counted by the pivoted R: may differ by one |
    | `s` | from the same SVD | computed by NumPy (one more SVD) |
    | complex64, cond 21 (NumPy's test case) | residual 1e-7 | residual 1.9e-6, within n eps cond |
    """
    a, _ = _prepare(a)
    b, wrap = _prepare(b)
    if a.ndim != 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim not in (1, 2):
        raise LinAlgError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    if b.shape[0] != m:
        raise LinAlgError(f"Incompatible dimensions: a has shape {a.shape} and b has shape {b.shape}")
    dtype = _compute_dtype(a, b)
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    eps = _np.finfo(dtype).eps
    rcond = max(m, n) * eps if rcond is None else (eps if rcond < 0 else float(rcond))
    if a.size == 0:
        x = _np.zeros((n,) + b.shape[1:], dtype=dtype)
        rank = _np.int32(0)
        s = _np.empty((0,), dtype=_real(dtype))
    else:
        columns = b if b.size else _np.zeros((m, 1), dtype=dtype)  # no right-hand side: a's rank all the same
        x, report = _call(_lstsq, a, columns, rcond, report=True)
        x = x if b.size else _np.zeros((n,) + b.shape[1:], dtype=dtype)
        rank = _np.int32(report["rank"])
        s = _np.linalg.svd(a, compute_uv=False)
    if rank == n and m > n:  # rank 0 == N < M included: b itself is the residual
        r = b - a @ x
        residuals = _np.atleast_1d(_np.sum(_np.abs(r) ** 2, axis=0))
    else:
        residuals = _np.empty((0,), dtype=_real(dtype))
    return wrap(x), wrap(residuals), rank, s


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    """The pseudoinverse of a, or of each matrix of a stack (..., M, N), as numpy.linalg.pinv: singular values
    below rcond (or rtol) times the largest are dropped; neither given, max(M, N) * eps. hermitian is
    accepted (a is taken as general: the same result to rounding).

    How it differs from numpy.linalg:

    | | numpy.linalg | linv |
    |---|---|---|
    | `hermitian=True` | eigen-decomposition | the SVD (the same result to rounding) |
    | stacks | one batched call | matrix by matrix |
    """
    a, wrap = _prepare(a)
    _at_least_2d(a)
    if rcond is not None and rtol is not None:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    dtype = _compute_dtype(a)
    m, n = a.shape[-2:]
    if m * n == 0:  # empty matrices in a's own dtype, as NumPy's (an empty stack of others in dtype)
        return wrap(_np.zeros(a.shape[:-2] + (n, m), dtype=a.dtype))
    a = a.astype(dtype, copy=False)
    cutoff = rtol if rtol is not None else rcond
    if cutoff is None:
        cutoff = max(m, n) * _np.finfo(dtype).eps
    cutoffs = _np.broadcast_to(_np.asarray(cutoff, dtype=_np.float64), a.shape[:-2])
    out = _np.empty(a.shape[:-2] + (n, m), dtype=dtype)
    for index in _np.ndindex(*a.shape[:-2]):
        out[index] = _call(_pinv, a[index], float(cutoffs[index]))
    return wrap(out)


def cholesky(a: Any, /, *, upper: bool = False) -> Any:
    """L with a = L L^H (or U with a = U^H U, upper=True), for a or each matrix of a stack, as
    numpy.linalg.cholesky: only a's lower (upper) triangle is read. LinAlgError when a is not positive
    definite.

    How it differs from numpy.linalg:

    | | numpy.linalg | linv |
    |---|---|---|
    | triangle read | lower (upper=True: upper) | the same |
    | not positive definite | LinAlgError | LinAlgError (NotPositiveDefiniteError) naming the failing minor |
    """
    a, wrap = _square_input(a)
    if a.size == 0:
        return wrap(_np.empty_like(a))
    symmetric = _mirrored(a, lower=not upper)
    out = _np.empty_like(a)
    for index in _np.ndindex(*a.shape[:-2]):
        lower = _call(_cholesky, _np.ascontiguousarray(symmetric[index]))
        out[index] = lower.conj().T if upper else lower
    return wrap(out)


def slogdet(a: Any) -> SlogdetResult:
    """(sign, logabsdet) of a, or of each matrix of a stack, as numpy.linalg.slogdet's named result: sign 0
    and logabsdet -inf for an exactly singular matrix.

    How it differs from numpy.linalg:

    | | numpy.linalg | linv |
    |---|---|---|
    | stacks | one batched call | matrix by matrix, each by linv's LU |
    """
    a, _ = _square_input(a)
    dtype = a.dtype
    if a.shape[-1] == 0:
        shape = a.shape[:-2]
        return SlogdetResult(_np.ones(shape, dtype)[()], _np.zeros(shape, _real(dtype))[()])
    signs = _np.empty(a.shape[:-2], dtype=dtype)  # complex for a complex a: det / |det|
    logs = _np.empty(a.shape[:-2], dtype=_real(dtype))
    for index in _np.ndindex(*a.shape[:-2]):
        # a factored as it is (NumPy's order), not as the transpose linv reads a C-ordered array as: the same
        # determinant, but rounded as NumPy rounds it (a complex64 one differed by 4 ulp, beyond its tests' 6 decimals)
        signs[index], logs[index] = _call(_slogdet, _np.asfortranarray(a[index]))
    return SlogdetResult(signs[()], logs[()])


def det(a: Any) -> Any:
    """The determinant of a, or of each matrix of a stack, as numpy.linalg.det (from slogdet: it overflows
    where the determinant does).

    How it differs from numpy.linalg:

    | | numpy.linalg | linv |
    |---|---|---|
    | overflow | inf where the determinant overflows | the same (sign * exp(logabsdet)) |
    """
    sign, logabsdet = slogdet(a)
    return sign * _np.exp(logabsdet)
