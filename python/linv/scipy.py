"""scipy.linalg's keywords over linv: solve, inv, det, solve_triangular and the factor-and-solve pairs with
SciPy's signatures, so that `from linv.scipy import solve` can replace `from scipy.linalg import solve`.

    solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
          transposed=False)
    inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False)
    det(a, overwrite_a=False, check_finite=True)
    solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True)
    lu_factor(a, overwrite_a=False, check_finite=True) -> (lu, piv);  lu_solve((lu, piv), b, trans=0, ...)
                                      (lu_factor of any m x n a, as SciPy's)
    cho_factor(a, lower=False, overwrite_a=False, check_finite=True) -> (c, lower);  cho_solve((c, lower), b, ...)

As SciPy: stacks (..., N, N), b of shape (N,) or (..., N, K); check_finite raises ValueError on NaN or Inf;
overwrite_* are accepted and a and b are never written (SciPy may or may not write them); assume_a reads
what SciPy reads: "sym"/"her"/"pos" the triangle `lower` names, "tridiagonal" the three diagonals, "upper
triangular"/"lower triangular" that triangle, "diagonal" the diagonal; transposed solves a^T x = b. The
structure then picks linv's method (Cholesky for "pos", the triangular solve for a triangle).

complex64 and complex128 are computed as SciPy computes them, on the CPU ("sym" reads a complex symmetric a,
"her" and "pos" a Hermitian one; transposed=True with a complex a is SciPy's NotImplementedError).

A matrix singular to working precision (reciprocal condition number below eps) gives SciPy's answer: the
result, with a LinAlgWarning naming rcond (linv's own functions refuse it, raising SingularMatrixError); an
exactly singular one raises LinAlgError.

overwrite_b (and cho_factor's and lu_factor's overwrite_a) put the result in the caller's array where SciPy
would (a Fortran-contiguous float array of the result's dtype; cho_factor: C-contiguous too).

Where it differs from SciPy on purpose: solve's and inv's overwrite_a are accepted, but a is never written
(SciPy leaves LAPACK's factors there; linv's are its own). Each function's docstring has a table of its
differences.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as _np
from numpy.linalg import LinAlgError

try:
    from scipy.linalg import LinAlgWarning
except ImportError:  # linv.scipy without SciPy: a warning of the same name and base
    class LinAlgWarning(RuntimeWarning):  # type: ignore[no-redef]
        """Ill-conditioned matrix: the result may not be accurate (scipy.linalg.LinAlgWarning)."""

from . import _common
from . import linalg as _linalg

__all__ = ["cho_factor", "cho_solve", "det", "inv", "lu_factor", "lu_solve", "solve", "solve_triangular"]

_STRUCTURES = {None: "general", "gen": "general", "general": "general", "sym": "symmetric",
               "symmetric": "symmetric", "her": "hermitian", "hermitian": "hermitian", "pos": "positive definite",
               "positive definite": "positive definite", "diagonal": "diagonal", "tridiagonal": "tridiagonal",
               "banded": "general", "upper triangular": "upper triangular", "lower triangular": "lower triangular"}


def _validated(x: Any, name: str, check_finite: bool) -> _np.ndarray:
    array = _np.asarray(x)
    if array.dtype == object:
        raise ValueError(f"{name}: object arrays are not supported")
    if check_finite and _np.issubdtype(array.dtype, _np.inexact) and not _np.isfinite(array).all():
        raise ValueError("array must not contain infs or NaNs")
    if array.dtype == _np.float16:  # SciPy computes half precision in single
        array = array.astype(_np.float32)
    return array


def _structured(a: _np.ndarray, assume_a: Any, lower: bool) -> tuple[_np.ndarray, str]:
    """a as SciPy reads it under assume_a: the part of it that structure says is there, the rest rebuilt."""
    if assume_a not in _STRUCTURES:
        known = sorted(k for k in _STRUCTURES if k)
        raise KeyError(f"{assume_a!r} is not a recognized matrix structure; one of {known}")
    structure = _STRUCTURES[assume_a]
    if structure in ("symmetric", "hermitian", "positive definite"):
        a = _linalg._mirrored(a, lower, hermitian=structure != "symmetric")
    elif structure == "tridiagonal":
        a = _np.triu(_np.tril(a, 1), -1)
    elif structure == "upper triangular":
        a = _np.triu(a)
    elif structure == "lower triangular":
        a = _np.tril(a)
    return a, structure


def _warn_ill_conditioned(rcond: float) -> None:
    warnings.warn(f"Ill-conditioned matrix (rcond={rcond:.6g}): result may not be accurate.", LinAlgWarning,
                  stacklevel=3)


def _as_scipy(compute: Callable[[], Any], a: _np.ndarray, b: _np.ndarray | None) -> Any:
    """compute() (linv's, which refuses a matrix singular to working precision), or SciPy's answer for such a
    matrix: the result through LU factors, which judge nothing, with a LinAlgWarning naming the smallest
    rcond. An exactly singular matrix still raises (the factors' solve does)."""
    try:
        return compute()
    except _common.SingularMatrixError:
        pass  # singular to working precision, or exactly: the factors below raise for the latter
    from . import LU
    dtype = _common._computed({"a": a} if b is None else {"a": a, "b": b}, complex=True)
    vector = b is not None and b.ndim == 1
    b2 = None if b is None else (b[:, None] if vector else b)
    lead = a.shape[:-2] if b2 is None else _np.broadcast_shapes(a.shape[:-2], b2.shape[:-2])
    a_all = _np.broadcast_to(a, lead + a.shape[-2:])
    b_all = None if b2 is None else _np.broadcast_to(b2, lead + b2.shape[-2:])
    out = _np.empty(lead + (a.shape[-2:] if b_all is None else b_all.shape[-2:]), dtype=dtype)
    worst = _np.inf
    for index in _np.ndindex(*lead):
        lu = LU(_np.ascontiguousarray(a_all[index]).astype(dtype, copy=False))
        worst = min(worst, lu.rcond())
        out[index] = lu.inv() if b_all is None else lu.solve(_np.ascontiguousarray(b_all[index]).astype(dtype))
    _warn_ill_conditioned(worst)
    return out[..., 0] if vector else out


def _square(a: _np.ndarray) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Input a needs to be a square matrix; its shape is {a.shape}")


def _diagonal(a: _np.ndarray, dtype: _np.dtype) -> _np.ndarray:
    """The diagonal(s) of a in dtype: LinAlgError for a zero on one, LinAlgWarning where the smallest
    magnitude is below eps times the largest (a diagonal matrix's rcond)."""
    d = _np.diagonal(a, axis1=-2, axis2=-1).astype(dtype)
    if (d == 0).any():
        raise _common.SingularMatrixError("the diagonal matrix is singular: a zero on its diagonal")
    if d.shape[-1]:
        magnitude = _np.abs(d)
        rcond = float((magnitude.min(axis=-1) / magnitude.max(axis=-1)).min())
        if rcond < _np.finfo(dtype).eps:
            _warn_ill_conditioned(rcond)
    return d


def _in_place(given: Any, result: Any, allowed: bool, orders: str = "F") -> Any:
    """result, in the caller's array where overwrite_* allows it and SciPy would have used that array's memory
    (a writeable float or complex array of result's dtype and shape, contiguous in one of `orders`): what
    SciPy's in-place contract promises its callers, and its tests check."""
    if not (allowed and isinstance(given, _np.ndarray) and isinstance(result, _np.ndarray)):
        return result
    contiguous = given.flags.f_contiguous or ("C" in orders and given.flags.c_contiguous)
    if (given.dtype != result.dtype or given.shape != result.shape or not given.flags.writeable or not contiguous
            or given.dtype.kind not in "fc"):
        return result
    given[...] = result
    return given


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          check_finite: bool = True, assume_a: Any = None, transposed: bool = False) -> Any:
    """x with a x = b (a^T x = b when transposed), as scipy.linalg.solve; overwrite_b: x in b's memory where
    SciPy would put it there (b Fortran-contiguous, of x's dtype).

    How it differs from scipy.linalg:

    | | scipy.linalg | linv |
    |---|---|---|
    | `overwrite_a=True` | a may hold LAPACK's factors afterwards | a is never written |
    | a misspelt `assume_a` | ValueError | KeyError, as SciPy's inv |
    | an exactly singular positive definite a | SciPy's message | linv's message (LinAlgError) |
    """
    return _in_place(b, _solved(a, b, lower, check_finite, assume_a, transposed), overwrite_b)


def _solved(a: Any, b: Any, lower: bool, check_finite: bool, assume_a: Any, transposed: bool) -> Any:
    a = _validated(a, "a", check_finite)
    b = _validated(b, "b", check_finite)
    if a.size == 1 and a.ndim <= 2:  # a scalar, as SciPy: it divides b, whatever b's shape
        dtype = _common._computed({"a": a, "b": b}, complex=True)
        if a.reshape(()) == 0:
            raise _common.SingularMatrixError("the 1 x 1 matrix a is 0: singular")
        return (b / a.reshape(())).astype(dtype, copy=False)
    _square(a)
    n = a.shape[-1]
    if b.ndim == 0 or b.shape[-1 if b.ndim == 1 else -2] != n:
        raise ValueError(f"Input b has to have the same number of rows as the input a: a {a.shape}, b {b.shape}")
    a, structure = _structured(a, assume_a, lower)
    if transposed:
        if _np.iscomplexobj(a):  # SciPy's own words, which its tests match
            raise NotImplementedError("scipy.linalg.solve can currently not solve a^T x = b or a^H x = b for "
                                      "complex matrices (nor can linv.scipy's): give a.T, or a.conj().T, yourself")
        a = _np.swapaxes(a, -1, -2)
    dtype = _common._computed({"a": a, "b": b}, complex=True)
    if a.size == 0 or b.size == 0:
        shape = _np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:] if b.ndim > 1 else b.shape
        return _np.zeros(shape, dtype=dtype)
    if structure == "diagonal":
        d = _diagonal(a, dtype)
        return (b / (d if b.ndim == 1 else d[..., None])).astype(dtype, copy=False)
    if structure == "positive definite":
        from . import Cholesky
        if a.ndim == 2 and b.ndim <= 2:
            factors = Cholesky(a.astype(dtype, copy=False))
            if factors.rcond() < _np.finfo(dtype).eps:
                _warn_ill_conditioned(factors.rcond())
            return factors.solve(b.astype(dtype, copy=False))
    return _as_scipy(lambda: _linalg.solve(a, b), a, b)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True, *, assume_a: Any = None,
        lower: bool = False) -> Any:
    """The inverse of a (or of each matrix of a stack), as scipy.linalg.inv.

    How it differs from scipy.linalg:

    | | scipy.linalg | linv |
    |---|---|---|
    | `overwrite_a=True` | a may hold LAPACK's factors afterwards | a is never written |
    | longdouble, clongdouble | computed | TypeError (64-bit parts would round them) |
    """
    a = _validated(a, "a", check_finite)
    _square(a)
    a, structure = _structured(a, assume_a, lower)
    if structure == "diagonal" and a.size:
        d = _diagonal(a, _common._computed({"a": a}, complex=True))
        out = _np.zeros(a.shape, dtype=d.dtype)
        _np.einsum("...ii->...i", out)[...] = 1 / d
        return out
    if structure == "positive definite" and a.ndim == 2 and a.size:
        from . import Cholesky
        factors = Cholesky(a.astype(_common._computed({"a": a}, complex=True), copy=False))
        if factors.rcond() < _np.finfo(factors._dtype).eps:
            _warn_ill_conditioned(factors.rcond())
        return factors.inv()
    return _as_scipy(lambda: _linalg.inv(a), a, None)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant of a (or of each matrix of a stack), as scipy.linalg.det.

    How it differs from scipy.linalg:

    | | scipy.linalg | linv |
    |---|---|---|
    | float32 input | computed in float64 | computed in float32 (a float32 result) |
    | 1 x 1 input | float64 | a's dtype |
    """
    a = _validated(a, "a", check_finite)
    _square(a)
    dtype = _common._computed({"a": a}, complex=True)
    if a.shape[-1] == 0:
        return _np.ones(a.shape[:-2], dtype=dtype)[()]
    return _np.asarray(_linalg.det(a), dtype=dtype)[()]


_TRANS = {0: "N", 1: "T", 2: "C", "N": "N", "T": "T", "C": "C", "n": "N", "t": "T", "c": "C"}


def _op(a: _np.ndarray, trans: Any) -> _np.ndarray:
    """op(a) for SciPy's trans: 0/"N" a, 1/"T" a^T, 2/"C" a^H."""
    if trans not in _TRANS:
        raise ValueError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', not {trans!r}")
    kind = _TRANS[trans]
    if kind == "N":
        return a
    t = _np.swapaxes(a, -1, -2)
    return t.conj() if kind == "C" else t


def _triangle(a: _np.ndarray, lower: bool, unit_diagonal: bool = False) -> _np.ndarray:
    t = _np.tril(a) if lower else _np.triu(a)
    if unit_diagonal:
        t = t.copy()
        _np.einsum("...ii->...i", t)[...] = 1
    return t


def _rhs(b: _np.ndarray, n: int, what: str) -> None:
    if b.ndim == 0 or b.shape[0 if b.ndim <= 2 else -2] != n:
        raise ValueError(f"{what}: shapes of a ({n}, {n}) and b {b.shape} are incompatible")


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """x with op(a) x = b for the triangle of a that `lower` names (the other is not read; unit_diagonal: its
    diagonal taken as ones), as scipy.linalg.solve_triangular: trans 0/'N' a, 1/'T' a^T, 2/'C' a^H.

    How it differs from scipy.linalg:

    | | scipy.linalg | linv |
    |---|---|---|
    | everything SciPy's tests check |  | the same (TestSolveTriangular 29 of 29) |
    """
    given = b
    a = _validated(a, "a", check_finite)
    b = _validated(b, "b", check_finite)
    _square(a)
    _rhs(b, a.shape[-1], "solve_triangular")
    t = _op(_triangle(a, lower, unit_diagonal), trans)
    dtype = _common._computed({"a": a, "b": b}, complex=True)
    if t.size == 0 or b.size == 0:
        return _np.zeros(b.shape, dtype=dtype)
    return _in_place(given, _as_scipy(lambda: _linalg.solve(t, b), t, b), overwrite_b)


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[_np.ndarray, _np.ndarray]:
    """(lu, piv) as scipy.linalg.lu_factor, for any m x n a: LAPACK's getrf factors (L unit below the
    diagonal, U on and above) and its 0-based row interchanges; a LinAlgWarning for an exactly zero pivot, as
    SciPy.

    How it differs from scipy.linalg:

    | | scipy.linalg | linv |
    |---|---|---|
    | bool, int8, int16, uint8, float16 input | float32 factors | float64 factors (as every linv function) |
    """
    from . import plu
    given = a
    a = _validated(a, "a", check_finite)
    if a.ndim != 2:
        raise ValueError(f"Expected a square matrix or batch of square matrices; a has shape {a.shape}")
    if a.size == 0:  # as SciPy: a copy in a's own dtype
        return a.copy(), _np.zeros(0, dtype=_np.int32)
    a = a.astype(_common._computed({"a": a}, complex=True), copy=False)
    lu, pivots, zero_pivot = plu(a)
    if zero_pivot:
        warnings.warn(f"Diagonal number {zero_pivot} is exactly zero. Singular matrix.", LinAlgWarning, stacklevel=2)
    return _in_place(given, lu, overwrite_a), pivots - 1


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: Any = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """x with op(a) x = b from lu_factor's (lu, piv), as scipy.linalg.lu_solve (trans as solve_triangular's).
    A zero on U's diagonal raises LinAlgError (SciPy returns inf or NaN).

    How it differs from scipy.linalg:

    | | scipy.linalg | linv |
    |---|---|---|
    | a zero on U's diagonal | inf or NaN in x | LinAlgError naming the pivot |
    """
    lu, piv = lu_and_piv
    given = b
    lu = _validated(lu, "lu", check_finite)
    b = _validated(b, "b", check_finite)
    _square(lu)
    n = lu.shape[-1]
    _rhs(b, n, "lu_solve")
    dtype = _common._computed({"lu": lu, "b": b}, complex=True)
    lower, upper = _triangle(lu, True, unit_diagonal=True), _triangle(lu, False)
    x = b.astype(dtype, copy=True)
    kind = _TRANS.get(trans)
    if kind is None:
        raise ValueError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', not {trans!r}")
    swaps = [(i, int(p)) for i, p in enumerate(_np.asarray(piv)) if int(p) != i]
    if kind == "N":  # P a = L U:  a x = b  <=>  L U x = P b
        for i, p in swaps:
            x[[i, p]] = x[[p, i]]
        x = solve_triangular(upper, solve_triangular(lower, x, lower=True, unit_diagonal=True), lower=False)
    else:  # op(a) = op(U) op(L) P:  x = P^T op(L)^-1 op(U)^-1 b
        x = solve_triangular(upper, x, trans=kind, lower=False)
        x = solve_triangular(lower, x, trans=kind, lower=True, unit_diagonal=True)
        for i, p in reversed(swaps):
            x[[i, p]] = x[[p, i]]
    return _in_place(given, x.astype(dtype, copy=False), overwrite_b)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[_np.ndarray, bool]:
    """(c, lower) as scipy.linalg.cho_factor: the Cholesky factor of the Hermitian positive definite a whose
    `lower` triangle is read (L with a = L L^H, or U with a = U^H U), zeros in the other triangle. LinAlgError
    (NotPositiveDefiniteError, with the minor) otherwise.

    How it differs from scipy.linalg:

    | | scipy.linalg | linv |
    |---|---|---|
    | everything SciPy's tests check |  | the same (TestChoFactor 88 of 88 on SciPy 1.18) |
    """
    from . import cholesky
    given = a
    a = _validated(a, "a", check_finite)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:  # SciPy's words, which its tests match
        raise ValueError(f"Expected a square matrix or batch of square matrices; a has shape {a.shape} (linv.scipy "
                         f"factors one matrix)")
    a = a.astype(_common._computed({"a": a}, complex=True), copy=False)
    if a.size == 0:
        return a.copy(), lower
    try:
        factor = _linalg._call(cholesky, _np.ascontiguousarray(_linalg._mirrored(a, lower)))
    except _common.NotPositiveDefiniteError as error:  # SciPy's words (potrf's info is the minor), and linv's
        raised = _common.NotPositiveDefiniteError(f"Internal potrf return info = {error.minor}: {error}")
        raised.minor = error.minor
        raise raised from error
    factor = factor if lower else _np.ascontiguousarray(factor.conj().T)
    return _in_place(given, factor, overwrite_a, orders="FC"), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """x with a x = b from cho_factor's (c, lower), as scipy.linalg.cho_solve.

    How it differs from scipy.linalg:

    | | scipy.linalg | linv |
    |---|---|---|
    | not positive definite factors | whatever the triangle gives | the same: cho_solve trusts c as SciPy does |
    """
    c, lower = c_and_lower
    given = b
    c = _validated(c, "c", check_finite)
    b = _validated(b, "b", check_finite)
    _square(c)
    _rhs(b, c.shape[-1], "cho_solve")
    if lower:  # a = L L^H
        x = solve_triangular(c, solve_triangular(c, b, lower=True), trans="C", lower=True)
    else:  # a = U^H U
        x = solve_triangular(c, solve_triangular(c, b, trans="C", lower=False), lower=False)
    return _in_place(given, x, overwrite_b)
