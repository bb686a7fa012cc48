"""Structured pseudoinverses for visual SLAM Gauss-Newton steps (include/linv/slam.hpp).

The Jacobian J (n residual rows x m parameters, n >> m) has k dense leading columns (the motion
parameters) and then one column per segment: each segment column's nonzeros are one contiguous run of
rows, the runs in order and tiling all n rows, so each row has k + 1 nonzeros. J^T J is then an arrowhead,
solved through the Schur complement of its diagonal in O(n k + m k^2 + k^3) instead of O(m^3).

    J = linv.slam.BorderedJacobian(j, k=1)     # checks the structure once; keep it for the loop
    x = J.step(d)                             # (J^T J)^-1 J^T d, the Gauss-Newton step
    x = J.step(d, damping=1e-3)               # Levenberg-Marquardt: J^T J + damping diag(J^T J)
    P = J.pinv()                              # J^+ materialised, m x n

Host arrays only: a GPU array (PyTorch, CuPy) is refused with a TypeError; J itself can live on a GPU
(device="cuda"), with NumPy arrays in and out.
"""
from typing import Any

import numpy as _np

from . import _linv
from ._common import _contiguous, _float, _matrix

__all__ = ["BorderedJacobian", "step", "pinv", "sparse_step"]


def _rhs(what: Any, shape: Any, dtype: Any, d: Any) -> Any:
    d = _float(d, "d")
    vector = d.ndim == 1
    d2 = d.reshape(-1, 1) if vector else d
    if d2.ndim != 2 or d2.shape[0] != shape[0]:
        raise ValueError(f"{what}: J has shape {shape} and d has shape {d.shape}: d needs {shape[0]} rows, one per "
                         f"row of J")
    return _contiguous(d2.astype(dtype, copy=False)), vector


def _is_scipy_sparse(j: Any) -> Any:
    """Whether j is a SciPy sparse matrix or array, without importing SciPy for those who lack it."""
    sparse = __import__("sys").modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(j)


class BorderedJacobian:
    """A SLAM Jacobian with k dense leading columns and one segment column per run of rows, kept on a device.

    Parameters
    ----------
    j : array_like, shape (n, m)
        The Jacobian as a dense array: the first k columns dense, then at most one nonzero per row among
        the others, the segment columns following the rows in order, each on one contiguous run (a zero
        column is allowed here, and refused by `step` and `pinv`).
    k : int
        The dense (motion) columns; the source formulation has k = 1. On a GPU at most 32.
    device : str
        "cpu", "cuda", "cuda:N" or "auto": where J lives and its steps run.

    Raises
    ------
    ValueError
        j does not have that structure (naming the row or column at fault).
    """

    def __init__(self, j: Any, k: int = 1, *, device: str = "cpu") -> None:
        j = _matrix(j, "j")
        k = int(k)
        if not 0 <= k <= j.shape[1]:
            raise ValueError(f"k = {k} dense columns, but J has shape {j.shape}")
        self.dtype = j.dtype
        self._native = _linv.bordered_jacobian(j, k, device)

    shape = property(lambda self: tuple(self._native.shape), doc="(n, m)")
    dense_cols = property(lambda self: self._native.dense_cols, doc="k, the dense leading columns")
    device = property(lambda self: self._native.device, doc="where J lives")
    starts = property(lambda self: _np.asarray(self._native.starts), doc="each segment's first row")
    lengths = property(lambda self: _np.asarray(self._native.lengths), doc="each segment's number of rows")

    def step(self, d: Any, *, damping: float = 0.0, report: bool = False) -> Any:
        """x = (J^T J + damping diag(J^T J))^-1 J^T d, without forming J^+.

        Parameters
        ----------
        d : array_like, shape (n,) or (n, c)
            The residuals (one step per column).
        damping : float
            Levenberg-Marquardt damping; 0 is the Gauss-Newton step (the least-squares solution).
        report : bool
            Return (x, report).

        Returns
        -------
        x : ndarray, shape (m,) or (m, c)

        Raises
        ------
        SingularMatrixError
            J's columns are dependent to working precision: a zero column (an unobservable parameter), a
            dense column the columns before it explain (the Schur complement not positive definite there),
            or J^T J singular to the rounding of its sums over J's rows. `pivot` is the column (1-based).
        """
        d2, vector = _rhs("step", self.shape, self.dtype, d)
        x, rep = self._native.step(d2, float(damping))
        if vector:
            x = x.reshape(-1)
        return (x, rep) if report else x

    def pinv(self, *, damping: float = 0.0, report: bool = False) -> Any:
        """J^+ = (J^T J + damping diag(J^T J))^-1 J^T, materialised (m x n). Errors as `step`."""
        p, rep = self._native.pinv(float(damping))
        return (p, rep) if report else p

    def normal_inverse(self, *, damping: float = 0.0) -> Any:
        """(J^T J + damping diag(J^T J))^-1 (m x m), from the Schur complement in O(m^2 k). CPU only."""
        return self._native.normal_inverse(float(damping))

    def toarray(self) -> Any:
        """J as a dense array."""
        return self._native.to_dense()


def step(j: Any, d: Any, k: int = 1, *, damping: float = 0.0, device: str = "cpu", report: bool = False) -> Any:
    """The Gauss-Newton (or Levenberg-Marquardt) step for a bordered Jacobian in one call.

    Parameters
    ----------
    j : array_like, shape (n, m)
        The Jacobian (see `BorderedJacobian` for the structure it must have).
    d : array_like, shape (n,) or (n, c)
    k : int
        Its dense leading columns.
    damping, device, report
        As `BorderedJacobian` and its `step`.

    Returns
    -------
    x : ndarray, shape (m,) or (m, c)
    """
    return BorderedJacobian(j, k, device=device).step(d, damping=damping, report=report)


def pinv(j: Any, k: int = 1, *, damping: float = 0.0, device: str = "cpu", report: bool = False) -> Any:
    """J^+ of a bordered Jacobian (m x n), as `BorderedJacobian(j, k).pinv()`."""
    return BorderedJacobian(j, k, device=device).pinv(damping=damping, report=report)


def sparse_step(j: Any, d: Any, *, tolerance: float = 1e-10, max_iterations: int = 1000, device: str = "cpu",
                report: bool = False) -> Any:
    """The least-squares step argmin ||J x - d||_2 for a Jacobian without the bordered structure.

    J's nonzeros are kept in compressed rows and each column of d is solved by CGLS (conjugate
    gradients on the normal equations, without forming J^T J), in float64 whatever J's dtype.
    A SciPy sparse J (any format) is taken as it is stored, never made dense.

    Parameters
    ----------
    j : array_like or scipy.sparse matrix/array, shape (n, m)
    d : array_like, shape (n,) or (n, c)
    tolerance : float
        On ||J^T (d - J x)|| / ||J^T d||, per column.
    max_iterations : int
    device : str
        "cpu", "cuda", "cuda:N" or "auto".
    report : bool
        Return (x, report); its iterations are the most any column took.

    Returns
    -------
    x : ndarray, shape (m,) or (m, c)

    Raises
    ------
    NumericalError
        A column reached max_iterations first.
    """
    if _is_scipy_sparse(j):
        csr = j.tocsr()  # a view when j is CSR already
        dtype = _np.float32 if csr.dtype == _np.float32 else _np.float64
        d2, vector = _rhs("sparse_step", csr.shape, dtype, d)
        x, rep = _linv.slam_sparse_step_csr(int(csr.shape[0]), int(csr.shape[1]), csr.indptr.astype(_np.int64),
                                            csr.indices.astype(_np.int64), csr.data.astype(dtype, copy=False), d2,
                                            float(tolerance), int(max_iterations), device)
    else:
        j = _matrix(j, "j")
        d2, vector = _rhs("sparse_step", j.shape, j.dtype, d)
        x, rep = _linv.slam_sparse_step(j, d2, float(tolerance), int(max_iterations), device)
    if vector:
        x = x.reshape(-1)
    return (x, rep) if report else x
