"""Weighted least squares through the normal equations A D^2 A^T x = A D^2 b (include/linv/wls.hpp)."""
from . import _linv
from ._common import _contiguous, _float, _matrix


def _options(weights, precision, storage, tolerance, max_iterations, device, check):
    """The native call's option arguments, in its order."""
    return precision, storage, weights, float(tolerance), int(max_iterations), device, bool(check)


def _weights(what, shape, dtype, d):
    d = _float(d, "d")
    n = shape[1]
    if d.shape != (n,):
        raise ValueError(f"{what}: a has shape {shape} and d has shape {d.shape}: d needs {n} entries, one per "
                         f"column of a")
    return _contiguous(d.astype(dtype, copy=False)).reshape(n, 1)


def _rhs(what, shape, dtype, b):
    b = _float(b, "b")
    n = shape[1]
    vector = b.ndim == 1
    b2 = b.reshape(-1, 1) if vector else b
    if b2.ndim != 2 or b2.shape[0] != n:
        raise ValueError(f"{what}: a has shape {shape} and b has shape {b.shape}: b needs {n} rows, one per "
                         f"column of a")
    return _contiguous(b2.astype(dtype, copy=False)), vector


def _system(what, a):
    a = _matrix(a)
    if a.shape[0] > a.shape[1]:
        raise ValueError(f"{what}: a has shape {a.shape}: it must be m x n with m <= n (full row rank)")
    return a


def wls(a, d, b, *, weights="squared", precision="native", storage="full", tolerance=0.0, max_iterations=100,
        device="cpu", check=False, report=False):
    """Weighted least squares: x minimising ||D (b - a^T x)||_2, from a D^2 a^T x = a D^2 b.

    Parameters
    ----------
    a : array_like, shape (m, n)
        m <= n and full row rank (the interior-point and SLAM layout: one column per observation).
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
    device : str
        "cpu", "cuda", "cuda:N" or "auto" (linv's choice by size).
    check : bool
        Fill the report's scaled_residual (the least-squares test of lstsq).
    report : bool
        Return (x, report).

    Returns
    -------
    x : ndarray, shape (m,) or (m, k)
        a's dtype (float32 stays float32).

    Raises
    ------
    NotPositiveDefiniteError
        C is singular (a rank deficient, or weights zero where they matter), naming the failing minor.
    ValueError
        Shapes that do not fit (naming both), or a bad keyword.
    """
    a = _system("wls", a)
    d2 = _weights("wls", a.shape, a.dtype, d)
    b2, vector = _rhs("wls", a.shape, a.dtype, b)
    x, rep = _linv.wls(a, d2, b2, *_options(weights, precision, storage, tolerance, max_iterations, device, check))
    if vector:
        x = x.reshape(-1)
    return (x, rep) if report else x


class WeightedLeastSquares:
    """A weighted least-squares system for one matrix a, re-factored for each new set of weights.

    The pattern of interior-point methods and iteratively reweighted least squares: a stays on its device,
    and each `factor(d)` re-forms and re-factors C = a D^2 a^T there without reallocating.

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

    def __init__(self, a, *, weights="squared", precision="native", storage="full", tolerance=0.0,
                 max_iterations=100, device="cpu", check=False):
        a = _system("WeightedLeastSquares", a)
        self.shape, self.dtype = a.shape, a.dtype
        self._native = _linv.wls_object(a, *_options(weights, precision, storage, tolerance, max_iterations,
                                                               device, check))
        self._factored = False

    @property
    def device(self):
        """Where a, C and its factor live ("cpu" or "cuda:N")."""
        return self._native.device

    def factor(self, d):
        """Form C = a D^2 a^T for the weights d (shape (n,)) and factor it; returns self.

        Raises
        ------
        NotPositiveDefiniteError
            C is singular, naming the failing minor.
        """
        self._native.factor(_weights("WeightedLeastSquares.factor", self.shape, self.dtype, d))
        self._factored = True
        return self

    def solve(self, b, *, report=False):
        """x with a D^2 a^T x = a D^2 b for the weights last factored; b of shape (n,) or (n, k).

        Returns
        -------
        x : ndarray, shape (m,) or (m, k)
            With the report when report=True.
        """
        if not self._factored:
            raise ValueError("WeightedLeastSquares.solve: call factor(d) first")
        b2, vector = _rhs("WeightedLeastSquares.solve", self.shape, self.dtype, b)
        x, rep = self._native.solve(b2)
        if vector:
            x = x.reshape(-1)
        return (x, rep) if report else x
