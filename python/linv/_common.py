"""What the modules of the linv package share: its exception classes and the coercion of NumPy inputs."""
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


def _float(a, name="a"):
    """a as a float32 or float64 array (float32 stays float32; other numeric types become float64)."""
    a = _np.asarray(a)
    if a.dtype not in (_np.float32, _np.float64):
        if not (_np.issubdtype(a.dtype, _np.number) or a.dtype == _np.bool_):
            raise ValueError(f"{name} must hold real numbers; its dtype is {a.dtype}")
        if _np.iscomplexobj(a):
            raise ValueError(f"{name} must be real; its dtype is {a.dtype}")
        a = a.astype(_np.float64)
    return a


def _contiguous(a):
    """a itself when C- or Fortran-contiguous (linv reads it in place), else a C-contiguous copy."""
    return a if a.flags.c_contiguous or a.flags.f_contiguous else _np.ascontiguousarray(a)


def _matrix(a, name="a"):
    a = _np.asarray(a)
    a = _float(a, name)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a matrix (2-D); its shape is {a.shape}")
    return _contiguous(a)


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
    return _contiguous(b2.astype(dtype, copy=False)), vector


def _shaped(out, vector, report):
    """The native call's result with b's shape restored, and the report when asked for."""
    x, rep = out if report else (out, None)
    if vector:
        x = x.reshape(-1)
    return (x, rep) if report else x


