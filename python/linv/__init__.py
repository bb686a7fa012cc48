"""linv: linear inverse problems, fast on NVIDIA GPUs and correct everywhere.

The C++ library's dense inverse and solve over NumPy arrays (more of the library follows):

    import numpy as np, linv
    x = linv.inv(a)                          # like numpy.linalg.inv
    x, report = linv.solve(a, b, report=True)
    linv.info()                              # what was built, and the GPUs it can use

float32 stays float32, float64 stays float64, other numeric types are taken as float64. Arrays in C or
Fortran order are used in place for `inv`; the result is a NumPy array that owns linv's memory.
"""
import numpy as _np

from . import _linv


class SingularMatrixError(_np.linalg.LinAlgError):
    """The matrix is singular, or singular to working precision; `pivot` is the 1-based pivot."""
    pivot = 0


class NotPositiveDefiniteError(_np.linalg.LinAlgError):
    """Cholesky found the matrix not positive definite; `minor` is the failing leading minor."""
    minor = 0


class NumericalError(_np.linalg.LinAlgError):
    """Another numerical failure (no convergence, overflow)."""


class DeviceError(RuntimeError):
    """The GPU or its driver failed, or a device that is not there was asked for."""


class InputError(ValueError):
    """Input linv cannot use (e.g. NaN or Inf entries)."""


_linv.set_exceptions(SingularMatrixError, NotPositiveDefiniteError, NumericalError, DeviceError, InputError)

__version__ = _linv.info()["version"]


def info():
    """What this build of linv contains (version, BLAS, CUDA) and the GPUs it can use."""
    return _linv.info()


def _matrix(a, name="a"):
    a = _np.asarray(a)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a matrix (2-D); its shape is {a.shape}")
    if a.dtype not in (_np.float32, _np.float64):
        a = a.astype(_np.float64)
    return a


def _square(a, name="a"):
    a = _matrix(a, name)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} must be a square matrix; its shape is {a.shape}")
    return a


def _columns(what, shape, dtype, b):
    """b as an (n, k) block of a's dtype, and whether it was a vector (n,), naming both shapes (a's is
    `shape`) if b does not fit."""
    b = _np.asarray(b)
    vector = b.ndim == 1
    b2 = b.reshape(-1, 1) if vector else b
    if b2.ndim != 2 or b2.shape[0] != shape[0]:
        raise ValueError(f"{what}: a has shape {shape} and b has shape {b.shape}: b needs {shape[0]} rows")
    return b2.astype(dtype, copy=False), vector


def _shaped(out, vector, report):
    """The native call's result with b's shape restored, and the report when asked for."""
    x, rep = out if report else (out, None)
    if vector:
        x = x.reshape(-1)
    return (x, rep) if report else x


def inv(a, *, method="auto", device="cpu", check=False, report=False):
    """The inverse of the square matrix `a`.

    method: auto, lu, calu, cholesky, gauss-jordan, cholesky-gets, triangular (as the `linv inv` command).
    device: "cpu" or "cuda[:N]" (the matrix is moved there and back).
    check: also compute the scaled residual ||A X - I|| / (n eps ||A|| ||X||) into the report.
    report: return (x, report) with the report as a dict (method, device, seconds, rcond, notes ...).
    Raises SingularMatrixError (a numpy.linalg.LinAlgError) naming the pivot, ValueError for bad input.
    A C-ordered array is inverted in place as the transpose of a Fortran one (inv(A.T) = inv(A).T), so
    there the pivot is that of the factorization of A.T.
    """
    return _linv.inv(_square(a), method, device, check, report)


def solve(a, b, *, method="auto", device="cpu", check=False, report=False):
    """x with a x = b, for a square `a` and b of shape (n,) or (n, k); x has b's shape.

    The keywords are inv's. Raises SingularMatrixError naming the pivot, ValueError naming both shapes.
    """
    a = _square(a)
    b2, vector = _columns("solve", a.shape, a.dtype, b)
    return _shaped(_linv.solve(a, b2, method, device, check, report), vector, report)


def cholesky(a, *, device="cpu", check=False, report=False):
    """The lower-triangular L with a = L L^T (zeros above), like numpy.linalg.cholesky.

    Raises NotPositiveDefiniteError (a numpy.linalg.LinAlgError) with `.minor`, the failing leading minor,
    and NumericalError when `a` is not symmetric.
    """
    return _linv.cholesky(_square(a), device, check, report)


def lstsq(a, b, rcond=None, *, check=False, report=False):
    """The minimum-norm least-squares solution x of a x ~ b (LAPACK gelsy: QR with column pivoting).

    Unlike numpy.linalg.lstsq it returns x alone; report=True adds the report, whose `rank` is the
    numerical rank. rcond: singular values below rcond * the largest count as zero (default
    max(m, n) * eps). x has b's shape (n,) or (n, k). CPU only in this version.
    """
    a = _matrix(a)
    b2, vector = _columns("lstsq", a.shape, a.dtype, b)
    return _shaped(_linv.lstsq(a, b2, -1.0 if rcond is None else float(rcond), check, report), vector, report)


def pinv(a, rcond=None, *, check=False, report=False):
    """The Moore-Penrose pseudoinverse by SVD, like numpy.linalg.pinv (singular values below rcond * the
    largest dropped; default max(m, n) * eps). CPU only in this version."""
    return _linv.pinv(_matrix(a), -1.0 if rcond is None else float(rcond), check, report)


def slogdet(a, *, device="cpu"):
    """(sign, log |det a|) from an LU factorization, like numpy.linalg.slogdet (sign 0, log -inf when a
    pivot is exactly zero)."""
    return _linv.slogdet(_square(a), device)


class _Factored:
    """Shared by LU and Cholesky: the factors live where they were made; b and results move as needed."""

    def __init__(self, a, native):
        self._shape, self._dtype = a.shape, a.dtype
        self._native = native

    def solve(self, b):
        """x with a x = b; b of shape (n,) or (n, k), x of b's shape."""
        b2, vector = _columns("solve", self._shape, self._dtype, b)
        return _shaped(self._native.solve(b2), vector, report=False)

    def inv(self):
        """The inverse of a."""
        return self._native.inv()

    def slogdet(self):
        """(sign, log |det a|)."""
        return self._native.slogdet()

    @property
    def det(self):
        """det a (may overflow for large matrices: slogdet does not)."""
        sign, log_abs = self.slogdet()
        return sign * _np.exp(log_abs) if sign != 0 else 0.0

    def rcond(self):
        """The reciprocal condition number of a in the 1-norm (LAPACK's estimate on the CPU, Higham and
        Tisseur's block estimate on a GPU)."""
        return self._native.rcond()


class LU(_Factored):
    """An LU factorization of the square matrix a, made once and used for many solves.

    pivoting: "partial" (LAPACK's) or "tournament" (CALU; falls back to partial pivoting past its growth
    limit, see `pivoting`, `growth` and `fallback_reason`). device: "cpu" or "cuda[:N]".
    Exactly singular matrices are factored (solve raises SingularMatrixError); check rcond() before trusting
    a solution of a nearly singular one.
    """

    def __init__(self, a, *, pivoting="partial", device="cpu"):
        a = _square(a)
        super().__init__(a, _linv.lu(a, pivoting, device))

    pivots = property(lambda self: self._native.pivots, doc="LAPACK's ipiv (1-based)")
    pivoting = property(lambda self: self._native.pivoting, doc="the pivoting that made the factors")
    growth = property(lambda self: self._native.growth, doc="max|U| / max|a|")
    fallback_reason = property(lambda self: self._native.fallback_reason,
                               doc="why a tournament gave way to partial pivoting (empty if it did not)")


class Cholesky(_Factored):
    """A Cholesky factorization a = L L^T of a symmetric positive definite a (NotPositiveDefiniteError
    otherwise, with the failing minor), made once and used for many solves."""

    def __init__(self, a, *, device="cpu"):
        a = _square(a)
        super().__init__(a, _linv.cholesky_object(a, device))
