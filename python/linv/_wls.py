"""Weighted least squares through the normal equations A D^2 A^T x = A D^2 b (include/linv/wls.hpp). GPU
arrays (a, d and b all on one GPU) are solved there through _linv's *_gpu functions."""
from typing import Any

import numpy as _np

from . import _linv
from ._common import _contiguous, _float, _gpu_call, _matrix


def _options(weights: str, precision: str, storage: str, tolerance: float, max_iterations: int, device: str | None,
             check: bool) -> tuple[Any, ...]:
    """The native call's option arguments, in its order (the GPU calls' without device). Their number depends
    on device, which mypy cannot follow through the calls' overloads: those calls carry a type: ignore."""
    if device is None:
        return precision, storage, weights, float(tolerance), int(max_iterations), bool(check)
    return precision, storage, weights, float(tolerance), int(max_iterations), device, bool(check)


def _shape_of_system(what: Any, shape: Any) -> Any:
    if shape[0] > shape[1]:
        raise ValueError(f"{what}: a has shape {shape}: it must be m x n with m <= n (full row rank)")


def _weights_gpu(gpu: Any, what: Any, shape: Any, d: Any) -> Any:
    n = shape[1]
    if tuple(d.shape) != (n,):
        raise ValueError(f"{what}: a has shape {shape} and d has shape {tuple(d.shape)}: d needs {n} entries, one "
                         f"per column of a")
    return gpu.fortran(gpu.adopt(d).reshape(n, 1))


def _weights(what: Any, shape: Any, dtype: Any, d: Any) -> Any:
    d = _float(d, "d")
    n = shape[1]
    if d.shape != (n,):
        raise ValueError(f"{what}: a has shape {shape} and d has shape {d.shape}: d needs {n} entries, one per "
                         f"column of a")
    return _contiguous(d.astype(dtype, copy=False)).reshape(n, 1)


def _rhs(what: Any, shape: Any, dtype: Any, b: Any) -> Any:
    b = _float(b, "b")
    n = shape[1]
    vector = b.ndim == 1
    b2 = b.reshape(-1, 1) if vector else b
    if b2.ndim != 2 or b2.shape[0] != n:
        raise ValueError(f"{what}: a has shape {shape} and b has shape {b.shape}: b needs {n} rows, one per "
                         f"column of a")
    return _contiguous(b2.astype(dtype, copy=False)), vector


def _system(what: Any, a: Any) -> Any:
    a = _matrix(a)
    _shape_of_system(what, a.shape)
    return a


def wls(a: Any, d: Any, b: Any, *, weights: str = "squared", precision: str = "native", storage: str = "full",
        tolerance: float = 0.0, max_iterations: int = 100, device: Any = None, check: bool = False,
        report: bool = False, form: str = "normal") -> Any:
    """Weighted least squares: x minimising ||D (b - a^T x)||_2, from a D^2 a^T x = a D^2 b.

    With form="statsmodels", the same problem as statsmodels' WLS(y, X, weights=w) and SciPy pose it:
    wls(X, w, y, form="statsmodels") is beta minimising sum_i w_i (y_i - x_i^T beta)^2, X tall (n x p, one
    row per observation), w the weights of the squared residuals (a = X^T, D^2 = diag(w): linv::WlsForm).

    Parameters
    ----------
    a : array_like, shape (m, n)
        m <= n and full row rank (the interior-point and SLAM layout: one column per observation); with
        form="statsmodels", X of shape (n, p), n >= p.
    d : array_like, shape (n,)
        The weights: the diagonal of D^2 (weights="squared", the default) or of D (weights="plain").
    b : array_like, shape (n,) or (n, k)
    weights : {"squared", "plain"}
    precision : {"native", "mixed"}
        "mixed" (float64 data only): C = a D^2 a^T formed and factored in float32, the residual in float64,
        refined until ||r||_2 / ||x||_2 <= tolerance; if refinement fails, C is redone in float64 and the
        report says so.
    storage : {"full", "packed"}
        C in an m x m array, or in LAPACK's rectangular full packed format (half the memory).
    tolerance : float
        Mixed precision's stopping test; 0: float64's own level.
    max_iterations : int
        Mixed precision's refinement steps at most.
    device : str, optional
        "cpu", "cuda", "cuda:N" or "auto" (linv's choice by size). Left out: where the data lies (the CPU
        for NumPy arrays). GPU arrays (a, d and b all, on one GPU, one dtype) are solved on their GPU,
        made column-major there by their framework when they are not, and x comes back there as their
        kind of array.
    check : bool
        Fill the report's scaled_residual (the least-squares test of lstsq).
    report : bool
        Return (x, report).

    Returns
    -------
    x : ndarray, shape (m,) or (m, k)
        a's dtype (float32 stays float32); a GPU array for GPU arrays.

    Raises
    ------
    NotPositiveDefiniteError
        C is singular (a rank deficient, or weights zero where they matter), naming the failing minor.
    ValueError
        Shapes that do not fit (naming both), or a bad keyword.
    """
    gpu = _gpu_call("wls", device, a=a, d=d, b=b)
    options = _options(weights, precision, storage, tolerance, max_iterations,
                       None if gpu else "cpu" if device is None else device, check)
    if form != "normal":
        # statsmodels' form (or a misspelt one): the library checks X, w and y and says so in their names
        if gpu:
            a, w, y = gpu.matrix(a, "X"), gpu.adopt(d).reshape(-1, 1), gpu.adopt(b)
            vector = len(tuple(y.shape)) == 1
            y = gpu.fortran(y.reshape(-1, 1) if vector else y)
            x, rep = _linv.wls_gpu(a, gpu.fortran(w), y, *options, gpu.framework, form)  # type: ignore[call-overload]
        else:
            a = _matrix(a, "X")
            w = _contiguous(_float(d, "w").astype(a.dtype, copy=False).reshape(-1, 1))
            y = _float(b, "y").astype(a.dtype, copy=False)
            vector = y.ndim == 1
            y2 = _contiguous(y.reshape(-1, 1) if vector else y)
            x, rep = _linv.wls(a, w, y2, *options, form)  # type: ignore[call-overload]
    elif gpu:
        a = gpu.matrix(a, "a")
        _shape_of_system("wls", tuple(a.shape))
        d2 = _weights_gpu(gpu, "wls", tuple(a.shape), d)
        b2, vector = gpu.columns(b, a.shape[1], a.shape)
        x, rep = _linv.wls_gpu(a, d2, b2, *options, gpu.framework, form)  # type: ignore[call-overload]
    else:
        a = _system("wls", a)
        d2 = _weights("wls", a.shape, a.dtype, d)
        b2, vector = _rhs("wls", a.shape, a.dtype, b)
        x, rep = _linv.wls(a, d2, b2, *options, form)  # type: ignore[call-overload]
    if vector:
        x = x.reshape(-1)
    return (x, rep) if report else x


class WeightedLeastSquares:
    """A weighted least-squares system for one matrix a, re-factored for each new set of weights.

    The pattern of interior-point methods and iteratively reweighted least squares: a stays on its device,
    and each `factor(d)` re-forms and re-factors C = a D^2 a^T there without reallocating. A system made
    from a GPU array lives on its GPU; there d and b may be GPU arrays (on that GPU, of a's dtype: used in
    place, x comes back as b's kind of array) or NumPy arrays (moved there, x comes back as NumPy).

    Parameters
    ----------
    a : array_like, shape (m, n)
        m <= n, full row rank.
    weights, precision, storage, tolerance, max_iterations, device, check
        As for `wls`.

    Examples
    --------
    >>> system = linv.WeightedLeastSquares(a)
    >>> for d in weight_sets:
    ...     x = system.factor(d).solve(b)
    """

    def __init__(self, a: Any, *, weights: str = "squared", precision: str = "native", storage: str = "full",
                 tolerance: float = 0.0, max_iterations: int = 100, device: Any = None, check: bool = False) -> None:
        gpu = _gpu_call("WeightedLeastSquares", device, a=a)
        if gpu:
            a = gpu.matrix(a, "a")
            self.shape, self.dtype = tuple(a.shape), _np.dtype(gpu.dtype)
            _shape_of_system("WeightedLeastSquares", self.shape)
            self._native = _linv.wls_object_gpu(a, *_options(weights, precision, storage, tolerance, max_iterations,
                                                              None, check))
        else:
            a = _system("WeightedLeastSquares", a)
            self.shape, self.dtype = a.shape, a.dtype
            self._native = _linv.wls_object(a, *_options(weights, precision, storage, tolerance, max_iterations,
                                                          "cpu" if device is None else device, check))
        self._factored = False

    @property
    def device(self) -> Any:
        """Where a, C and its factor live ("cpu" or "cuda:N")."""
        return self._native.device

    def factor(self, d: Any) -> Any:
        """Form C = a D^2 a^T for the weights d (shape (n,)) and factor it; returns self.

        Raises
        ------
        NotPositiveDefiniteError
            C is singular, naming the failing minor.
        """
        gpu = _gpu_call("WeightedLeastSquares.factor", None, d=d)
        if gpu:
            gpu.require_dtype(self.dtype, "the system's a and C")
            self._native.factor_gpu(_weights_gpu(gpu, "WeightedLeastSquares.factor", self.shape, d))
        else:
            self._native.factor(_weights("WeightedLeastSquares.factor", self.shape, self.dtype, d))
        self._factored = True
        return self

    def solve(self, b: Any, *, report: bool = False) -> Any:
        """x with a D^2 a^T x = a D^2 b for the weights last factored; b of shape (n,) or (n, k).

        Returns
        -------
        x : ndarray, shape (m,) or (m, k)
            With the report when report=True.
        """
        if not self._factored:
            raise ValueError("WeightedLeastSquares.solve: call factor(d) first")
        gpu = _gpu_call("WeightedLeastSquares.solve", None, b=b)
        if gpu:
            gpu.require_dtype(self.dtype, "the system's a and C")
            b2, vector = gpu.columns(b, self.shape[1], self.shape)
            x, rep = self._native.solve_gpu(b2, gpu.framework)
        else:
            b2, vector = _rhs("WeightedLeastSquares.solve", self.shape, self.dtype, b)
            x, rep = self._native.solve(b2)
        if vector:
            x = x.reshape(-1)
        return (x, rep) if report else x
