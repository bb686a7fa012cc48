"""linv: linear inverse problems, fast on NVIDIA GPUs and correct everywhere.

linv's C++ library over NumPy arrays:

    import numpy as np, linv
    x = linv.inv(a)                          # like numpy.linalg.inv; a stack (..., n, n) too
    x, report = linv.solve(a, b, report=True)
    linv.cholesky, linv.lstsq, linv.pinv, linv.slogdet, linv.plu, linv.LU, linv.Cholesky
    linv.wls, linv.WeightedLeastSquares      # weighted least squares, factor once per set of weights
    linv.imaging                             # PSFs, degrade, deblur, phantom
    linv.slam                                # bordered Jacobians: the Gauss-Newton step and J^+
    linv.fmri                                # omp, ksvd, adl, parafac2 (X is time points x voxels)
    linv.io                                  # read / write .npy, .mtx, .mat, .png, .pgm, .nii
    linv.linalg                              # numpy.linalg's names, signatures, results and errors
    linv.info()                              # what was built, and the GPUs it can use

float32 stays float32, float64 stays float64, integers, bool and float16 are taken as float64, and a float32
matrix with a float64 (or integer) right-hand side is solved in float64, as NumPy promotes. complex64 and
complex128 are computed by the dense functions (inv, solve, cholesky, lstsq, pinv, slogdet, plu, LU,
Cholesky), GPU arrays on their GPU; longdouble is a TypeError, never silently rounded. The solvers and
factorisations take device= ("cpu", "cuda", "cuda:N", "auto") and report=True, which returns (result,
report dict); convolution, noise and file io run on the CPU and report nothing. Arrays in C or Fortran
order are used in place where linv can; results are NumPy arrays over linv's own memory, handed over
without a copy (their .base keeps it alive; .flags.owndata is False). The GIL is released while linv
computes.

GPU arrays (PyTorch or CuPy CUDA tensors, anything with __dlpack__ on a CUDA device) are taken by inv,
solve (stacks too), cholesky, slogdet, LU, Cholesky, wls, WeightedLeastSquares, deblur, omp, ksvd, adl and
parafac2, which compute on that GPU and return the same kind of array there (float32 kept); lstsq, pinv,
degrade and imaging.convolve take them too but compute on the CPU (copies both ways); the other functions
take host arrays only and say so with a TypeError. docs/python.md has the table.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as _np

from . import _batched, _linv
from ._common import (DeviceError, InputError, NotPositiveDefiniteError, NumericalError, SingularMatrixError,
                      _NATIVE_COMPLEX, _columns, _computed, _float, _gpu_array, _gpu_call, _host, _matrix, _shaped,
                      _square)
from ._wls import WeightedLeastSquares, wls
from . import fmri, imaging, io, slam
from .io import read, write
from .fmri import adl, ksvd, omp, parafac2
from .imaging import deblur, degrade


_linv.set_exceptions(SingularMatrixError, NotPositiveDefiniteError, NumericalError, DeviceError, InputError)

__version__ = _linv.info()["version"]


def info() -> dict[str, Any]:
    """What this build of linv contains (version, BLAS, CUDA), the GPUs it can use, and what runs on the CPU
    only ("cpu_only_on_gpu": refused on a GPU, kept on the CPU by device="auto")."""
    return _linv.info()


def cpu_threads() -> int:
    """The CPU threads linv's host work (OpenBLAS's and its own) runs on: OMP_NUM_THREADS when set, else the
    CPUs this process may use (its affinity and a container's CPU quota), unless set_cpu_threads changed it."""
    return _linv.cpu_threads()


def set_cpu_threads(threads: int) -> None:
    """Sets the CPU threads linv's host work runs on (OpenBLAS's included) for every later call. ValueError
    unless threads >= 1."""
    _linv.set_cpu_threads(int(threads))


def inv(a: Any, *, method: str = "auto", precision: str = "native", factor: str = "auto", device: str | None = None,
        check: bool = False, report: bool = False, singular: str = "raise") -> Any:
    """The inverse of a square matrix, or of each matrix of a stack.

    Parameters
    ----------
    a : array_like, shape (n, n) or (..., n, n)
        The matrix, or a stack of matrices over any leading dimensions (as numpy.linalg.inv).
    method : str
        For one matrix: auto, lu, calu, rbt, cholesky, gauss-jordan, cholesky-gets, triangular (as the
        `linv inv` command; rbt, random butterflies and LU without pivoting, refines its inverse by a Newton
        step).
        AUTO_METHOD
        A stack runs linv's batched kernels, which choose their own method (LAPACK's LU per matrix on the CPU,
        Gauss-Jordan in registers on a GPU, orders up to 64; larger matrices go one by one through the
        dense routine): there only "auto" is accepted.
    precision : {"native", "mixed"}
        "native" computes in a's dtype. "mixed" (float64 a, methods auto, lu and cholesky, one matrix):
        a lower-precision factorization refined to float64 accuracy, which falls back to a float64
        factorization when refinement does not converge; the report says which ran.
    factor : str
        Under "mixed", the factorization's precision: "auto" (float32 where the device factors it faster
        than float64, else float64 itself), "float32", or on a GPU "tf32", "bf16", "fp16".
    device : str, optional
        "cpu", "cuda", "cuda:N" or "auto". The data is moved there and the result back. "auto" lets linv
        choose: for a stack the GPU when one is usable and the batch large enough to repay the transfers.
        Left out: where the data lies (the CPU for NumPy arrays). A GPU array (a PyTorch or CuPy CUDA
        tensor, or anything with __dlpack__ on a CUDA device) is used in place on its GPU, after the work
        queued there has finished, and the result comes back as a tensor of the same kind on that GPU (a
        PyTorch tensor for PyTorch, else a CuPy array), float32 kept; device may then be left out, "auto",
        "cuda" or that GPU. A stack on a GPU runs the batched kernels there.
    check : bool
        Also compute the scaled residual ||A X - I||_1 / (n eps ||A||_1 ||X||_1) into the report (for a
        stack, the largest over its regular matrices, computed in float64 by NumPy).
    report : bool
        Return (x, report) with the report as a dict (method, device, seconds, rcond, notes ...). A stack's
        report adds "singular" (how many matrices are singular) and "pivots" (per matrix, 0 or the 1-based
        column of its first zero pivot, or of its smallest pivot when it is singular to working precision,
        shaped as the leading dimensions).
    singular : {"raise", "nan"}
        Stacks only. linv's batched kernels do not stop at a singular matrix (an exactly zero pivot, or
        rcond below machine epsilon, as for one matrix): its block of the result is NaN and every other
        matrix is inverted. "raise" (the default) raises SingularMatrixError naming
        the first singular matrix by its index in the leading dimensions; "nan" returns the result with
        NaN blocks (see the report's "pivots").

    Returns
    -------
    x : ndarray
        a's shape and dtype (float32 stays float32; other numeric types become float64).

    Raises
    ------
    SingularMatrixError
        A numpy.linalg.LinAlgError. `pivot` is the 1-based pivot; for a stack, `index` is the first
        singular matrix's index and `indices` lists them all. A matrix is refused when it is exactly
        singular or singular to working precision (rcond < eps), alone or in a stack.
    ValueError
        a is not square (naming its shape), or a bad keyword.

    Notes
    -----
    C-ordered input is inverted in place as the transpose of a Fortran one (inv(A.T) = inv(A).T), so
    there the pivot is that of the factorization of A.T.
    """
    gpu = _gpu_call("inv", device, a=a, complex=True)
    if gpu:
        if len(a.shape) > 2:
            _native_only(precision, factor)
            return _batched.inv_gpu(a, gpu, method, check, report, singular)
        a = gpu.matrix(a, "a", square=True, order="any")
        return _linv.inv_gpu(a, method, precision, factor, check, report, gpu.framework)
    device = "cpu" if device is None else device
    a = _float(a, complex=True)
    if a.ndim > 2:
        _native_only(precision, factor)
        return _batched.inv(a, method, device, check, report, singular)
    return _linv.inv(_square(a, complex=True), method, precision, factor, device, check, report)


def _plain_system(a: Any, b: Any) -> bool:
    """Whether solve(a, b) is the common small call its general path would pass on unchanged: two NumPy
    arrays (not subclasses) of one dtype linv computes in, a square contiguous a and b a contiguous vector or
    matrix of its rows. Skipping that path's checks saves some 9 us a call, twice what a 4 x 4 solve costs
    (tests/python/test_linv.py checks the two paths agree)."""
    return (type(a) is _np.ndarray and type(b) is _np.ndarray and a.ndim == 2 and b.ndim in (1, 2)
            and a.dtype == b.dtype and a.dtype in _NATIVE_COMPLEX and a.shape[0] == a.shape[1] == b.shape[0]
            and (a.flags.c_contiguous or a.flags.f_contiguous) and (b.flags.c_contiguous or b.flags.f_contiguous))


def _native_only(precision: str, factor: str) -> None:
    if precision != "native" or factor != "auto":
        raise ValueError(f"precision={precision!r}, factor={factor!r}: stacks are computed in their own dtype "
                         f"(precision='native' only)")


def solve(a: Any, b: Any, *, method: str = "auto", precision: str = "native", factor: str = "auto",
          device: str | None = None, check: bool = False, report: bool = False, singular: str = "raise") -> Any:
    """x with a x = b, for one square matrix or a stack of them.

    Parameters
    ----------
    a : array_like, shape (n, n) or (..., n, n)
    b : array_like, shape (n,), (n, k) or (..., n, k)
        As numpy.linalg.solve in NumPy 2: b is a vector only when it is 1-D; otherwise its last two
        dimensions are (n, k) and its leading dimensions broadcast against a's.
    method, device, check, report, singular
        As for `inv` (rbt: random butterflies, LU without pivoting, refinement against a; the report's
        notes say how many steps).
        AUTO_METHOD
        check's residual is ||B - A X||_1 / (n eps (||A||_1 ||X||_1 + ||B||_1)). GPU arrays (a and b both, on one
        GPU, one dtype; stacks too) stay on their GPU; a and b are made column-major there by their own
        framework when they are not, and x comes back as their kind of array.

    Returns
    -------
    x : ndarray
        Shape (n,), (n, k), or the broadcast leading dimensions followed by (n,) or (n, k); a's dtype.

    Raises
    ------
    SingularMatrixError
        As for `inv`.
    ValueError
        Shapes that do not fit, naming both.
    """
    if _plain_system(a, b) and device is None:  # the common call, as the general path below would make it
        vector = b.ndim == 1
        return _shaped(_linv.solve(a, b.reshape(-1, 1) if vector else b, method, precision, factor, "cpu", check,
                                   report), vector, report)
    gpu = _gpu_call("solve", device, a=a, b=b, complex=True)
    if gpu:
        if len(a.shape) > 2 or (len(a.shape) == 2 and len(b.shape) > 2):
            _native_only(precision, factor)
            return _batched.solve_gpu(a, b, gpu, method, check, report, singular)
        a = gpu.matrix(a, "a", square=True)
        b2, vector = gpu.columns(b, a.shape[0], a.shape)
        return _shaped(_linv.solve_gpu(a, b2, method, precision, factor, check, report, gpu.framework), vector,
                       report)
    device = "cpu" if device is None else device
    a, b_arr = _host(a, "a"), _host(b, "b")
    # NumPy's promotion: a float64 (or integer) b with a float32 a is solved in float64, not rounded to a's
    a = a.astype(_computed({"a": a, "b": b_arr}, complex=True), copy=False)
    if a.ndim > 2 or (a.ndim == 2 and b_arr.ndim > 2):
        _native_only(precision, factor)
        return _batched.solve(a, b_arr, method, device, check, report, singular)
    a = _square(a, complex=True)
    b2, vector = _columns("solve", a.shape, a.dtype, b_arr)
    return _shaped(_linv.solve(a, b2, method, precision, factor, device, check, report), vector, report)


def cholesky(a: Any, *, device: str | None = None, check: bool = False, report: bool = False) -> Any:
    """The lower-triangular L with a = L L^T (zeros above), like numpy.linalg.cholesky.

    device: "cpu" or "cuda[:N]"; left out, where a lies (the CPU for NumPy arrays). A GPU array is factored
    on its GPU and L comes back there as the same kind of array.

    Raises NotPositiveDefiniteError (a numpy.linalg.LinAlgError) with `.minor`, the failing leading minor,
    and NumericalError when `a` is not symmetric.
    """
    gpu = _gpu_call("cholesky", device, a=a, complex=True)
    if gpu:
        return _linv.cholesky_gpu(gpu.hermitian(a, "a"), check, report, gpu.framework)
    return _linv.cholesky(_square(a, complex=True), "cpu" if device is None else device, check, report)


def lstsq(a: Any, b: Any, rcond: float | None = None, *, check: bool = False, report: bool = False) -> Any:
    """The minimum-norm least-squares solution x of a x ~ b (LAPACK gelsy: QR with column pivoting).

    Unlike numpy.linalg.lstsq it returns x alone; report=True adds the report, whose `rank` is the
    numerical rank. rcond: singular values below rcond * the largest count as zero (default
    max(m, n) * eps). x has b's shape (n,) or (n, k). CPU only in this version: GPU arrays (a and b both)
    are copied to the host, solved there, and x is copied back to their GPU as their kind of array.
    """
    gpu = _gpu_call("lstsq", None, a=a, b=b, complex=True)
    if gpu:
        return gpu.back(lstsq(gpu.host(a), gpu.host(b), rcond, check=check, report=report))
    a, b = _host(a, "a"), _host(b, "b")
    a = _matrix(a.astype(_computed({"a": a, "b": b}, complex=True), copy=False), complex=True)
    b2, vector = _columns("lstsq", a.shape, a.dtype, b)
    return _shaped(_linv.lstsq(a, b2, -1.0 if rcond is None else float(rcond), check, report), vector, report)


def pinv(a: Any, rcond: float | None = None, *, check: bool = False, report: bool = False) -> Any:
    """The Moore-Penrose pseudoinverse by SVD, like numpy.linalg.pinv (singular values below rcond * the
    largest dropped; default max(m, n) * eps). CPU only in this version: a GPU array is copied to the host
    and the result back to its GPU, as its kind of array."""
    gpu = _gpu_call("pinv", None, a=a, complex=True)
    if gpu:
        return gpu.back(pinv(gpu.host(a), rcond, check=check, report=report))
    return _linv.pinv(_matrix(a, complex=True), -1.0 if rcond is None else float(rcond), check, report)


def slogdet(a: Any, *, device: str | None = None) -> tuple[Any, float]:
    """(sign, log |det a|) from an LU factorization, like numpy.linalg.slogdet (sign 0, log -inf when a
    pivot is exactly zero). device: as for `cholesky`; a GPU array is factored on its GPU."""
    gpu = _gpu_call("slogdet", device, a=a, complex=True)
    if gpu:
        return _linv.slogdet_gpu(gpu.matrix(a, "a", square=True, order="any"))
    return _linv.slogdet(_square(a, complex=True), "cpu" if device is None else device)


def plu(a: Any) -> tuple[Any, Any, int]:
    """(lu, pivots, zero_pivot): LAPACK's getrf of any m x n matrix a, square or not, P a = L U with L
    (unit, below the diagonal) and U (on and above it) in the one array lu, the min(m, n) row interchanges
    1-based (LAPACK's ipiv, int32) and the 1-based index of the first exactly zero pivot, 0 if none (not an
    error here: solve with LU, which refuses it). What scipy.linalg.lu_factor gives, with 1-based pivots. On
    the CPU, for host arrays; complex matrices too."""
    if _gpu_array(a):
        raise TypeError("plu takes host arrays (NumPy) in this version; copy the GPU array to the host first")
    lu, pivots, zero_pivot = _linv.plu(_matrix(a, complex=True))
    return lu, _np.asarray(pivots, dtype=_np.int32), int(zero_pivot)


class _Factored:
    """Shared by LU and Cholesky: the factors live where they were made; b and results move as needed.
    Factors of a GPU array live on its GPU and give results there, as its kind of array."""

    def __init__(self, shape: tuple[int, ...], dtype: Any, native: Any, gpu: Any) -> None:
        self._shape, self._dtype = tuple(shape), _np.dtype(dtype)
        self._native, self._gpu = native, gpu

    def solve(self, b: Any) -> Any:
        """x with a x = b; b of shape (n,) or (n, k), x of b's shape. A GPU array b (on the factors' GPU, of
        their dtype) gives x there as b's kind of array; a NumPy b gives a NumPy x."""
        gpu = _gpu_call("solve", None, b=b, complex=True)
        if gpu:
            gpu.require_dtype(self._dtype, "the factors")
            b2, vector = gpu.columns(b, self._shape[0], self._shape)
            return _shaped(self._native.solve_gpu(b2, gpu.framework), vector, report=False)
        b = _host(b, "b")
        wanted = _computed({"b": b}, complex=self._dtype.kind == "c")  # complex b for real factors refused
        if _np.finfo(wanted).bits > _np.finfo(self._dtype).bits:
            # x has the factors' precision whatever b's, so b is rounded to it; but not past its range
            with _np.errstate(over="ignore"):  # the overflow is what this looks for
                narrowed = b.astype(self._dtype)
            if _np.isinf(narrowed).any() and not _np.isinf(b).any():
                raise ValueError(f"solve: b ({b.dtype}) holds values beyond the range of the factors' {self._dtype} "
                                 f"(largest |b| {_np.abs(b).max():.3g}): factor a as {b.dtype}, or scale b")
        b2, vector = _columns("solve", self._shape, self._dtype, b)
        return _shaped(self._native.solve(b2), vector, report=False)

    def inv(self) -> Any:
        """The inverse of a (as a's kind of array, on its GPU for a GPU array)."""
        if self._gpu:
            return self._native.inv_gpu(self._gpu.framework)
        return self._native.inv()

    def slogdet(self) -> tuple[Any, float]:
        """(sign, log |det a|)."""
        return self._native.slogdet()

    @property
    def det(self) -> Any:
        """det a (may overflow for large matrices: slogdet does not)."""
        sign, log_abs = self.slogdet()
        return sign * _np.exp(log_abs) if sign != 0 else 0.0

    def rcond(self) -> float:
        """The reciprocal condition number of a in the 1-norm (LAPACK's estimate on the CPU, Higham and
        Tisseur's block estimate on a GPU)."""
        return self._native.rcond()


class LU(_Factored):
    """An LU factorization of the square matrix a, made once and used for many solves.

    pivoting: "partial" (LAPACK's), "tournament" (CALU; falls back to partial pivoting past its growth
    limit, see `pivoting`, `growth` and `fallback_reason`) or "randomized" (random butterflies, no pivoting,
    solves refined against a; the fastest GPU solve; keeps a copy of a). device: "cpu" or "cuda[:N]"; left
    out, where a lies. A GPU array a is factored on its GPU (made column-major there by its framework when
    it is not); solve, inv, slogdet, det and rcond then run there. Exactly singular matrices are factored
    (solve raises SingularMatrixError); check rcond() before trusting a solution of a nearly singular one.
    """

    def __init__(self, a: Any, *, pivoting: str = "partial", device: str | None = None) -> None:
        gpu = _gpu_call("LU", device, a=a, complex=True)
        if gpu:
            a = gpu.matrix(a, "a", square=True)
            super().__init__(a.shape, gpu.dtype, _linv.lu_gpu(a, pivoting), gpu)
            return
        a = _square(a, complex=True)
        super().__init__(a.shape, a.dtype, _linv.lu(a, pivoting, "cpu" if device is None else device), None)

    pivots = property(lambda self: self._native.pivots, doc="LAPACK's ipiv (1-based)")
    pivoting = property(lambda self: self._native.pivoting, doc="the pivoting that made the factors")
    growth = property(lambda self: self._native.growth, doc="max|U| / max|a|")
    fallback_reason = property(lambda self: self._native.fallback_reason,
                               doc="why a tournament gave way to partial pivoting (empty if it did not)")


class Cholesky(_Factored):
    """A Cholesky factorization a = L L^T of a symmetric positive definite a (NotPositiveDefiniteError
    otherwise, with the failing minor), made once and used for many solves. device: as for LU; a GPU array
    is factored on its GPU (a real one in either order; a complex one made column-major there)."""

    def __init__(self, a: Any, *, device: str | None = None) -> None:
        gpu = _gpu_call("Cholesky", device, a=a, complex=True)
        if gpu:
            a = gpu.hermitian(a, "a")
            super().__init__(a.shape, gpu.dtype, _linv.cholesky_object_gpu(a), gpu)
            return
        a = _square(a, complex=True)
        super().__init__(a.shape, a.dtype, _linv.cholesky_object(a, "cpu" if device is None else device), None)


def _describe_auto_method(function: Callable[..., Any]) -> None:
    """Puts the library's own account of what auto picks (linv::describe_auto_method, from the orders the
    CUDA backend uses) where the docstring says AUTO_METHOD, so that the two cannot drift apart."""
    import textwrap
    text = _linv.describe_auto_method()
    # never broken at a hyphen: a method's name (gauss-jordan) must read whole in the docstring
    sentence = textwrap.fill(text[0].upper() + text[1:] + ".", width=110, initial_indent=" " * 8,
                             subsequent_indent=" " * 8, break_on_hyphens=False)
    if function.__doc__:
        function.__doc__ = function.__doc__.replace(" " * 8 + "AUTO_METHOD", sentence)


for _function in (inv, solve):
    _describe_auto_method(_function)
del _function

from . import linalg  # noqa: E402 (numpy.linalg's contract over the functions above)
