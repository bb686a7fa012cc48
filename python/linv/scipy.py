"""scipy.linalg's keywords over linv: solve, inv and det with SciPy's signatures, so that
`from linv.scipy import solve` can replace `from scipy.linalg import solve`.

    solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
          transposed=False)
    inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False)
    det(a, overwrite_a=False, check_finite=True)

As SciPy: stacks (..., N, N), b of shape (N,) or (..., N, K); check_finite raises ValueError on NaN or Inf;
overwrite_* are accepted and a and b are never written (SciPy may or may not write them); assume_a reads
what SciPy reads: "sym"/"her"/"pos" the triangle `lower` names, "tridiagonal" the three diagonals, "upper
triangular"/"lower triangular" that triangle, "diagonal" the diagonal; transposed solves a^T x = b. The
structure then picks linv's method (Cholesky for "pos", the triangular solve for a triangle).

complex64 and complex128 are computed as SciPy computes them, on the CPU ("sym" reads a complex symmetric a,
"her" and "pos" a Hermitian one; transposed=True with a complex a is SciPy's NotImplementedError).

Where it differs from SciPy on purpose:
- A matrix singular to working precision (reciprocal condition number below eps) raises LinAlgError
  (linv.SingularMatrixError) where SciPy returns an answer with a LinAlgWarning.
"""
from __future__ import annotations

from typing import Any

import numpy as _np
from numpy.linalg import LinAlgError

from . import _common
from . import linalg as _linalg

__all__ = ["det", "inv", "solve"]

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
        raise KeyError(f"{assume_a!r} is not a recognized matrix structure; one of {sorted(k for k in _STRUCTURES if k)}")
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


def _square(a: _np.ndarray) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Input a needs to be a square matrix; its shape is {a.shape}")


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          check_finite: bool = True, assume_a: Any = None, transposed: bool = False) -> Any:
    """x with a x = b (a^T x = b when transposed), as scipy.linalg.solve."""
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
        if _np.iscomplexobj(a):
            raise NotImplementedError("scipy.linalg.solve's transposed=True is for real matrices (SciPy refuses "
                                      "complex ones too): give a.T, or a.conj().T, yourself")
        a = _np.swapaxes(a, -1, -2)
    dtype = _common._computed({"a": a, "b": b}, complex=True)
    if a.size == 0 or b.size == 0:
        shape = _np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:] if b.ndim > 1 else b.shape
        return _np.zeros(shape, dtype=dtype)
    if structure == "diagonal":
        d = _np.diagonal(a, axis1=-2, axis2=-1).astype(dtype)
        if (d == 0).any():
            raise _common.SingularMatrixError("the diagonal matrix is singular: a zero on its diagonal")
        return (b / (d if b.ndim == 1 else d[..., None])).astype(dtype, copy=False)
    if structure == "positive definite":
        from . import Cholesky
        if a.ndim == 2 and b.ndim <= 2:
            return Cholesky(a.astype(dtype, copy=False)).solve(b.astype(dtype, copy=False))
    return _linalg.solve(a, b)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True, *, assume_a: Any = None,
        lower: bool = False) -> Any:
    """The inverse of a (or of each matrix of a stack), as scipy.linalg.inv."""
    a = _validated(a, "a", check_finite)
    _square(a)
    a, structure = _structured(a, assume_a, lower)
    if structure == "diagonal" and a.size:
        d = _np.diagonal(a, axis1=-2, axis2=-1).astype(_common._computed({"a": a}, complex=True))
        if (d == 0).any():
            raise _common.SingularMatrixError("the diagonal matrix is singular: a zero on its diagonal")
        out = _np.zeros(a.shape, dtype=d.dtype)
        _np.einsum("...ii->...i", out)[...] = 1 / d
        return out
    if structure == "positive definite" and a.ndim == 2 and a.size:
        from . import Cholesky
        return Cholesky(a.astype(_common._computed({"a": a}, complex=True), copy=False)).inv()
    return _linalg.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant of a (or of each matrix of a stack), as scipy.linalg.det."""
    a = _validated(a, "a", check_finite)
    _square(a)
    dtype = _common._computed({"a": a}, complex=True)
    if a.shape[-1] == 0:
        return _np.ones(a.shape[:-2], dtype=dtype)[()]
    return _np.asarray(_linalg.det(a), dtype=dtype)[()]
