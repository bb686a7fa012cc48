"""Reading and writing the formats linv reads (include/linv/io.hpp), chosen by the file name:

    .npy            NumPy, float32/float64 (complex64/complex128 matrices too), 2-D, or 3-D as a stack of
                    matrices
    .mtx            Matrix Market (array or coordinate; real, integer, pattern or complex; general,
                    symmetric, skew, hermitian)
    .mat[:name]     MATLAB, in builds with matio (`formats()["mat"]`), complex variables too; `name` picks
                    the variable
    .png, .pgm      images (8 or 16 bits) as values in [0, 1]; PNG in builds with libpng
    .nii, .nii.gz   NIfTI-1/2 fMRI runs (read_fmri) and maps or runs written back (write_fmri), in builds
                    with libnifti2

Writes are atomic: a temporary file beside the target, renamed into place. `write` and `write_fmri` take host arrays:
a GPU array (PyTorch, CuPy) is refused with a TypeError (copy it to the host with its framework).
"""
import os as _os

from typing import Any

import numpy as _np

from . import _linv
from ._common import _contiguous, _float

__all__ = ["read", "write", "read_fmri", "write_fmri", "grid_space", "formats"]

# The keys of a NIfTI space (read_fmri's third result, write_fmri's `space`).
_SPACE_KEYS = ("shape", "voxel_size", "spatial_units", "tr", "qform_code", "quatern", "qoffset", "qfac",
               "sform_code", "srow", "descrip")

_IMAGES = (".png", ".pgm")
_COMPLEX = (".npy", ".npz", ".mtx", ".mat")  # where complex matrices are read and written


def _kind(path: Any) -> Any:
    p = str(path)
    base = p.lower()
    if ".mat:" in base:
        return ".mat"
    if base.endswith(".nii.gz"):
        return ".nii.gz"
    return _os.path.splitext(base)[1]


def formats() -> Any:
    """Which formats this build reads and writes (dict of extension to bool)."""
    return _linv.formats()


def read(path: Any, *, grey: bool = False) -> Any:
    """Read a matrix, a stack of matrices or an image.

    Parameters
    ----------
    path : str or os.PathLike
        .npy, .mtx, .mat[:name], .png, .pgm, or .nii/.nii.gz (an fMRI run, see `read_fmri`).
    grey : bool
        Images only: convert colour to grey (ITU-R BT.709 weights) and drop alpha.

    Returns
    -------
    ndarray
        A matrix in the file's element type (float32 or float64; complex64 or complex128 from .npy and
        .mat, complex128 from a Matrix Market complex field); a 3-D .npy as (count, rows, cols); an
        image as float64 (height, width) or (height, width, channels) in [0, 1]; an fMRI run as its
        time points x voxels matrix.

    Raises
    ------
    InputError
        A missing or unreadable file, or a format this build lacks (saying so).
    """
    p = _os.fspath(path)
    kind = _kind(p)
    if kind in _IMAGES:
        pixels, channels = _linv.read_image(p, bool(grey))
        if channels == 1:
            return pixels
        w = pixels.shape[1] // channels
        return _np.stack([pixels[:, c * w:(c + 1) * w] for c in range(channels)], axis=2)
    if kind in (".nii", ".nii.gz"):
        return read_fmri(p)[0]
    if kind == ".npy":
        shape: tuple[int, ...] = ()
        try:
            with open(p, "rb") as f:  # the header says whether this is one matrix or a stack
                version = _np.lib.format.read_magic(f)
                header = (_np.lib.format.read_array_header_1_0 if version == (1, 0)
                          else _np.lib.format.read_array_header_2_0)
                shape = header(f)[0]
        except (ValueError, OSError):
            pass  # linv's reader says what is wrong with the file
        if len(shape) == 3:
            return _linv.read_stack(p)
    return _linv.read_matrix(p)


def read_fmri(path: Any, mask: Any = None) -> Any:
    """Read a NIfTI fMRI run as linv factors it.

    Parameters
    ----------
    path : str or os.PathLike
        A 4-D (or 3-D) .nii or .nii.gz image.
    mask : str or os.PathLike, optional
        A 3-D image on the same grid: only voxels where it is nonzero are kept.

    Returns
    -------
    signals : ndarray, shape (T, N)
        Time points x voxels.
    voxels : ndarray of int64, shape (N,)
        Each column's linear voxel index x + nx (y + ny z).
    space : dict
        The image's grid and orientation, as write_fmri takes it: "shape" (nx, ny, nz), "voxel_size" (in
        "spatial_units": 0 unknown, 1 m, 2 mm, 3 micron), "tr" (seconds between volumes), "qform_code",
        "quatern" (b, c, d), "qoffset" (x, y, z), "qfac", "sform_code", "srow" (three rows of four),
        "descrip".
    """
    return _linv.read_fmri(_os.fspath(path), "" if mask is None else _os.fspath(mask))


def grid_space(shape: Any, voxel_size: float = 2.0, tr: float = 2.0) -> Any:
    """A NIfTI space for synthetic data: `shape` (nx, ny, nz) voxels of `voxel_size` mm, axis-aligned and
    centred at the origin (qform and sform), `tr` seconds between volumes (0: not a time series)."""
    nx, ny, nz = (int(v) for v in shape)
    if min(nx, ny, nz) < 1:
        raise ValueError(f"grid_space: shape {tuple(shape)} needs at least one voxel along each axis")
    return _linv.grid_space(nx, ny, nz, float(voxel_size), float(tr))


def write_fmri(path: Any, values: Any, voxels: Any, space: Any) -> Any:
    """Write volumes on an fMRI grid as NIfTI, atomically: the inverse of read_fmri.

    Parameters
    ----------
    path : str or os.PathLike
        .nii, or .nii.gz (compressed).
    values : array_like, shape (V, N)
        V volumes (time points, or maps such as k-SVD's codes G, one per atom), column j at voxel
        voxels[j]; float32 is written as float32, anything else as float64. Voxels not listed are 0.
    voxels : array_like of int, shape (N,)
        Linear voxel indices x + nx (y + ny z), as read_fmri returns them.
    space : dict
        The grid and orientation: read_fmri's third result (so a map lands where its run was), or
        grid_space(...).

    Raises
    ------
    ValueError
        values not 2-D, voxels not 1-D integers, their lengths differing, a space missing keys, or an
        index outside the grid (naming it).
    """
    p = _os.fspath(path)
    if _kind(p) not in (".nii", ".nii.gz"):
        raise ValueError(f"write_fmri {p}: NIfTI files end in .nii or .nii.gz")
    v = _float(values, "values")
    if v.ndim != 2:
        raise ValueError(f"write_fmri {p}: values must be (volumes, voxels), 2-D; their shape is {v.shape}")
    idx = _np.asarray(voxels)
    if idx.ndim != 1 or not (_np.issubdtype(idx.dtype, _np.integer) or idx.size == 0):
        raise ValueError(f"write_fmri {p}: voxels must be a 1-D array of integers; got shape {idx.shape}, dtype "
                         f"{idx.dtype}")
    if idx.shape[0] != v.shape[1]:
        raise ValueError(f"write_fmri {p}: values have shape {v.shape} ({v.shape[1]} voxels) and voxels has shape "
                         f"{idx.shape}")
    missing = [k for k in _SPACE_KEYS if k not in space]
    if missing:
        raise ValueError(f"write_fmri {p}: space lacks {', '.join(missing)} (pass read_fmri's space, or grid_space())")
    _linv.write_fmri(p, _contiguous(v), _np.ascontiguousarray(idx, dtype=_np.int64), dict(space))


def write(path: Any, a: Any, *, bits: int = 16) -> Any:
    """Write a matrix, a stack of matrices or an image, atomically, in the format of the file name.

    Parameters
    ----------
    path : str or os.PathLike
        .npy, .mtx, .mat[:name] (with matio), .png or .pgm.
    a : array_like
        A matrix (float32 stays float32 in .npy, .mtx and .mat; complex64 and complex128 matrices go to
        .npy, .mtx and .mat, where Matrix Market holds complex128); a 3-D real array as a stack (.npy only); an
        image (height, width) or (height, width, channels) with values in [0, 1] for .png and .pgm (grey only).
    bits : {8, 16}
        Images: bits per sample (values are clipped to [0, 1]).

    Raises
    ------
    ValueError
        A shape the format cannot hold, naming it.
    """
    p = _os.fspath(path)
    kind = _kind(p)
    a = _float(a, complex=kind.split(":")[0] in _COMPLEX)
    if a.dtype.kind == "c" and a.ndim not in (1, 2):
        raise TypeError(f"write {p}: complex arrays are written as matrices (1-D or 2-D); this one has shape {a.shape}")
    if kind in _IMAGES:
        if a.ndim == 2:
            pixels, channels = a, 1
        elif a.ndim == 3 and 1 <= a.shape[2] <= 4:
            pixels, channels = _np.concatenate([a[:, :, c] for c in range(a.shape[2])], axis=1), a.shape[2]
        else:
            raise ValueError(f"write {p}: an image has shape (height, width) or (height, width, channels); "
                             f"this array has shape {a.shape}")
        _linv.write_image(p, _contiguous(pixels.astype(_np.float64, copy=False)), int(channels), int(bits))
    elif a.ndim == 3:
        if kind != ".npy":
            raise ValueError(f"write {p}: a stack of shape {a.shape} can only be written to .npy")
        _linv.write_stack(p, _np.ascontiguousarray(a.swapaxes(1, 2)))
    elif a.ndim == 2:
        _linv.write_matrix(p, _contiguous(a))
    elif a.ndim == 1:
        _linv.write_matrix(p, a.reshape(-1, 1))
    else:
        raise ValueError(f"write {p}: linv writes matrices, stacks and images; this array has shape {a.shape}")
