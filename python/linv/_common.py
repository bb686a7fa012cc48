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




# DLPack device types of memory a CUDA kernel can read: kDLCUDA, kDLCUDAHost (pinned), kDLCUDAManaged.
_DLPACK_CUDA = (2, 3, 13)


def _gpu_array(a):
    """Whether a is a GPU array of another framework (PyTorch, CuPy, anything with __dlpack__ on a CUDA
    device), which linv uses where it lies."""
    if isinstance(a, _np.ndarray) or not hasattr(a, "__dlpack_device__"):
        return False
    return a.__dlpack_device__()[0] in _DLPACK_CUDA


def _framework(a):
    """The kind of array results go back as: "torch" for PyTorch tensors, else "cupy"."""
    return "torch" if type(a).__module__.split(".")[0] == "torch" else "cupy"


def _gpu_matrix(a, name, device, square=True):
    """Checks a GPU array for linv: float32/float64, 2-D (square), and `device` None, "auto" or its own GPU."""
    dtype = str(a.dtype).rsplit(".", 1)[-1]
    if dtype not in ("float32", "float64"):
        raise TypeError(f"{name} is a GPU array of dtype {a.dtype}: linv takes float32 or float64 there (convert it "
                        f"with your framework, e.g. a.double())")
    shape = tuple(a.shape)
    if len(shape) != 2:
        raise ValueError(f"{name} is a GPU array of shape {shape}: stacks of GPU arrays are not supported yet; "
                         f"pass one matrix, or a NumPy stack")
    if square and shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square matrix; its shape is {shape}")
    where = a.__dlpack_device__()[1]
    if device not in (None, "auto", "cuda", f"cuda:{where}"):
        raise ValueError(f"{name} lies on cuda:{where}; device={device!r} would move it: move it yourself, or leave "
                         f"device out")
    return dtype
