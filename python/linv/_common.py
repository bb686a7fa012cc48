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


# What takes complex numbers: the dense core, on the CPU and on a GPU.
COMPLEX_FUNCTIONS = "linv.inv, solve, lstsq, pinv, cholesky, slogdet, plu, LU and Cholesky"


def _computed(arrays, half=True, complex=False):
    """The one dtype linv computes the arrays {name: ndarray} in, by numpy.linalg's rule: float32 when every
    one is float32, float64 when any is float64, an integer or bool (float16 too where `half`: it is exact in
    float64; numpy.linalg refuses it); where `complex`, complex64 and complex128 promote as NumPy promotes
    them (float64 with complex64 is complex128). A TypeError, not a silent change of value or precision, for
    complex numbers where the caller computes in real ones, longdouble and anything that is not a number."""
    result = _np.dtype(_np.float32)
    for name, array in arrays.items():
        dtype = array.dtype
        if dtype.kind == "f" and dtype.itemsize in (4, 8):  # float32 and float64, in either byte order
            result = _np.promote_types(result, dtype)
        elif dtype == _np.bool_ or _np.issubdtype(dtype, _np.integer) or (half and dtype == _np.float16):
            result = _np.promote_types(result, _np.float64)
        elif complex and dtype.kind == "c" and dtype.itemsize in (8, 16):
            result = _np.promote_types(result, dtype)
        elif dtype.kind == "c" and dtype.itemsize in (8, 16):
            raise TypeError(f"{name} is {dtype}: this computes in real numbers only (complex ones go to "
                            f"{COMPLEX_FUNCTIONS}); dropping the imaginary part would change the answer")
        elif dtype.kind in "fc" and dtype.itemsize > (8 if dtype.kind == "f" else 16):
            raise TypeError(f"{name} is {dtype}: linv computes in float32 and float64 (complex64 and complex128), "
                            f"which would round it; convert it yourself (numpy.linalg refuses it too)")
        else:
            raise TypeError(f"{name} is {dtype}: array type {dtype} is unsupported in linalg (linv takes float32, "
                            f"float64, integers and bool)")
    return result


_NATIVE = (_np.float32, _np.float64)
_NATIVE_COMPLEX = _NATIVE + (_np.complex64, _np.complex128)


def _float(a, name="a", complex=False):
    """a as a float32 or float64 array (float32 and float64 kept; integers, bool and float16 as float64,
    exactly; complex64 and complex128 kept where `complex`; the rest a TypeError: _computed)."""
    a = _host(a, name)
    if a.dtype not in (_NATIVE_COMPLEX if complex else _NATIVE):
        a = a.astype(_computed({name: a}, complex=complex))
    return a


def _contiguous(a):
    """a itself when C- or Fortran-contiguous (linv reads it in place), else a C-contiguous copy."""
    return a if a.flags.c_contiguous or a.flags.f_contiguous else _np.ascontiguousarray(a)


def _matrix(a, name="a", complex=False):
    a = _float(a, name, complex)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a matrix (2-D); its shape is {a.shape}")
    return _contiguous(a)


def _square(a, name="a", complex=False):
    a = _matrix(a, name, complex)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} must be a square matrix; its shape is {a.shape}")
    return a


def _columns(what, shape, dtype, b):
    """b as an (n, k) block of a's dtype, and whether it was a vector (n,), naming both shapes (a's is
    `shape`) if b does not fit."""
    b = _host(b, "b")
    _computed({"b": b}, complex=_np.dtype(dtype).kind == "c")  # longdouble (and complex for real a) refused
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


def _cuda_device(a):
    """The GPU index of a GPU array of another framework (PyTorch, CuPy, anything with __dlpack__ on a CUDA
    device), which linv uses where it lies; None for anything else."""
    if isinstance(a, _np.ndarray) or not hasattr(a, "__dlpack_device__"):
        return None
    kind, index = a.__dlpack_device__()
    return index if kind in _DLPACK_CUDA else None


def _gpu_array(a):
    """Whether a is a GPU array of another framework (see _cuda_device)."""
    return _cuda_device(a) is not None


def _framework(a):
    """The kind of array results go back as: "torch" for PyTorch tensors, else "cupy"."""
    return "torch" if type(a).__module__.split(".")[0] == "torch" else "cupy"


def _host(a, name):
    """a as NumPy reads it, refusing GPU arrays with a TypeError that says which arrays are taken (the
    functions that take GPU arrays check for them before they get here)."""
    if _gpu_array(a):
        raise TypeError(f"{name} is a GPU array (on cuda:{a.__dlpack_device__()[1]}); this linv function takes host "
                        f"arrays only (NumPy, or anything numpy.asarray reads): copy it to the host with its framework "
                        f"(e.g. tensor.cpu() or cupy.asnumpy(x)). The functions that take GPU arrays are listed in "
                        f"docs/python.md")
    return _np.asarray(a)


class _Gpu:
    """The GPU arrays of one call (PyTorch, CuPy, or anything with __dlpack__ on a CUDA device; other
    producers' arrays are taken through CuPy): their GPU, dtype and framework, which the results come back
    as, and the few array operations the package needs, done by that framework on that GPU (layouts,
    reshapes, host copies). linv itself computes through _linv's *_gpu functions, which read the arrays in
    place (python/src/common.hpp, Gpu)."""

    def __init__(self, what, index, dtype, framework):
        self.what, self.index, self.dtype, self.framework = what, index, dtype, framework

    # ---- checks and layouts ----

    def adopt(self, x):
        """x as an array of this call's framework (CuPy takes other producers' arrays through DLPack); a
        PyTorch tensor detached from autograd (linv reads its values, which DLPack does not export otherwise),
        its lazy conjugation or negation (x.mH, x.conj()) carried out, as DLPack has no way to carry them."""
        if self.framework == "torch":  # each step only where needed: three no-op views cost 7 us a call
            if x.requires_grad:
                x = x.detach()
            if x.is_conj():
                x = x.resolve_conj()
            return x.resolve_neg() if x.is_neg() else x
        if type(x).__module__.split(".")[0] == "cupy":
            return x
        return self._cupy().from_dlpack(x)

    def require_dtype(self, dtype, owner):
        """Refuses this call's arrays unless they have the dtype of `owner` (factors or a system made earlier)."""
        if self.dtype != str(_np.dtype(dtype)):
            raise TypeError(f"{self.what}: {owner} are {_np.dtype(dtype)} and this array is {self.dtype}: give them "
                            f"one dtype")

    def matrix(self, x, name, *, square=False, order="F"):
        """x checked to be a 2-D array of this call, column-major ("F") or in either order ("any", for the
        operations that read a C-ordered matrix as its transpose), made so by its framework if it is not."""
        shape = tuple(x.shape)
        if len(shape) != 2:
            raise ValueError(f"{self.what}: {name} must be a matrix (2-D); its shape is {shape}")
        if square and shape[0] != shape[1]:
            raise ValueError(f"{self.what}: {name} must be a square matrix; its shape is {shape}")
        x = self.adopt(x)
        if order == "any" and self._c_contiguous(x):
            return x
        return self.fortran(x)

    def hermitian(self, x, name):
        """A Hermitian (symmetric) x as matrix() makes it: in either order where it is real (its own
        transpose), column-major where it is complex (a C-ordered one would be read as its conjugate)."""
        return self.matrix(x, name, square=True, order="F" if self.dtype.startswith("complex") else "any")

    def columns(self, b, rows, a_shape, name="b"):
        """b of shape (rows,) or (rows, k) as a column-major (rows, k) array, and whether it was a vector."""
        shape = tuple(b.shape)
        vector = len(shape) == 1
        if len(shape) not in (1, 2) or shape[0] != rows:
            raise ValueError(f"{self.what}: a has shape {tuple(a_shape)} and {name} has shape {shape}: {name} needs "
                             f"{rows} rows")
        b = self.adopt(b)
        return self.fortran(b.reshape(rows, 1) if vector else b), vector

    def fortran(self, x):
        """A 2-D array in column-major order, made by its framework on its GPU if it is not already."""
        if self.framework == "torch":
            if x.dim() == 2 and (x.shape[0] <= 1 or x.stride(0) == 1) and (x.shape[1] <= 1 or
                                                                           x.stride(1) >= max(x.shape[0], 1)):
                return x
            return x.t().contiguous().t()
        return self._cupy().asfortranarray(x)

    def contiguous(self, x):
        """x in C order, copied by its framework if it is not."""
        return x.contiguous() if self.framework == "torch" else self._cupy().ascontiguousarray(x)

    def _c_contiguous(self, x):
        return x.is_contiguous() if self.framework == "torch" else x.flags.c_contiguous

    # ---- array operations of the framework ----

    def broadcast_to(self, x, shape):
        return x.broadcast_to(shape) if self.framework == "torch" else self._cupy().broadcast_to(x, shape)

    def concatenate(self, xs, axis):
        if self.framework == "torch":
            import torch
            return torch.cat(xs, dim=axis)
        return self._cupy().concatenate(xs, axis=axis)

    def stack(self, xs, axis):
        if self.framework == "torch":
            import torch
            return torch.stack(xs, dim=axis)
        return self._cupy().stack(xs, axis=axis)

    def astype(self, x, dtype):
        """x as `dtype` ("float32" or "float64"), x itself when it is that already."""
        if self.framework == "torch":
            import torch
            return x.to(getattr(torch, dtype))
        return x.astype(dtype, copy=False)

    def zeros(self, shape, dtype=None):
        dtype = dtype or self.dtype
        if self.framework == "torch":
            import torch
            return torch.zeros(shape, dtype=getattr(torch, dtype), device=f"cuda:{self.index}")
        cupy = self._cupy()
        with cupy.cuda.Device(self.index):
            return cupy.zeros(shape, dtype=dtype)

    def to_numpy(self, x):
        """A host copy of a GPU array of this call."""
        if self.framework == "torch":
            return x.detach().cpu().numpy()
        return self._cupy().asnumpy(self.adopt(x))

    def from_numpy(self, x):
        """A NumPy array copied to this call's GPU as an array of its framework."""
        if self.framework == "torch":
            import torch
            return torch.from_numpy(_np.ascontiguousarray(x) if x.strides and min(x.strides) < 0 else x).to(
                f"cuda:{self.index}")
        cupy = self._cupy()
        with cupy.cuda.Device(self.index):
            return cupy.asarray(x)

    def host(self, x):
        """A host copy of x for the functions linv runs on the CPU only (None stays None)."""
        return None if x is None else self.to_numpy(x)

    def back(self, out):
        """The result of a CPU call on host copies, moved to this GPU: an array, or (array, report)."""
        if isinstance(out, tuple):
            return (self.from_numpy(out[0]),) + out[1:]
        return self.from_numpy(out)

    def _cupy(self):
        try:
            import cupy
        except ImportError:
            raise TypeError(f"{self.what}: GPU arrays other than PyTorch's are used through CuPy, which is not "
                            f"installed") from None
        return cupy


def _gpu_call(what, device, complex=False, **arrays):
    """The _Gpu of a call whose array arguments are `arrays` (None for those not given), or None when none of
    them is a GPU array (the NumPy path). GPU arrays must not be mixed with host arrays in one call, and must
    share one GPU and one dtype (float32 or float64; complex64 or complex128 too where `complex`); `device`
    must be None, "auto", "cuda" or their GPU."""
    given = {name: a for name, a in arrays.items() if a is not None}
    # each array's device asked once (a PyTorch tensor answers __dlpack_device__ in Python, 3 us a call)
    places = {name: _cuda_device(a) for name, a in given.items()}
    on_gpu = {name: a for name, a in given.items() if places[name] is not None}
    if not on_gpu:
        return None
    first, a = next(iter(on_gpu.items()))
    for name in given:
        if name not in on_gpu:
            raise TypeError(f"{what}: {first} is a GPU array and {name} is not: put {name} on {first}'s GPU with your "
                            f"framework (linv does not mix GPU and host arrays in one call)")
    where = places[first]
    dtype = None
    for name, x in on_gpu.items():
        if places[name] != where:
            raise ValueError(f"{what}: {first} lies on cuda:{where} and {name} on cuda:{places[name]}: put "
                             f"them on one GPU")
        d = str(x.dtype).rsplit(".", 1)[-1]
        if d in ("complex64", "complex128") and not complex:
            raise TypeError(f"{what}: {name} is a GPU array of dtype {x.dtype}: this computes in real numbers only "
                            f"(complex ones go to {COMPLEX_FUNCTIONS}); dropping the imaginary part would change "
                            f"the answer")
        if d not in ("float32", "float64", "complex64", "complex128"):
            raise TypeError(f"{what}: {name} is a GPU array of dtype {x.dtype}: linv takes float32 or float64 there "
                            f"(complex64 or complex128 in {COMPLEX_FUNCTIONS}); convert it with your framework, "
                            f"e.g. a.double()")
        if dtype is not None and d != dtype:
            raise TypeError(f"{what}: {first} is {dtype} and {name} is {d}: give them one dtype")
        dtype = d
    if device not in (None, "auto", "cuda", f"cuda:{where}"):
        raise ValueError(f"{what}: {first} lies on cuda:{where}; device={device!r} would move it: move it yourself, "
                         f"or leave device out")
    return _Gpu(what, where, dtype, _framework(a))
