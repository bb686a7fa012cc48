"""Images as linear inverse problems (include/linv/imaging.hpp): g = H f + n, H the convolution with a
point-spread function (PSF) under a boundary condition.

Images are arrays of shape (height, width), or (height, width, channels) for colour, values in [0, 1].
linv computes in float64; float32 images come back as float32.

PSFs follow MATLAB's fspecial: `gaussian_psf`, `box_psf`, `disk_psf`, `motion_psf`, `sharpen_psf`, or
`psf("gaussian:size=5,sigma=1")`. Any 2-D kernel array (a measured PSF) is accepted where a PSF is.
Boundaries: "zero", "reflexive" (the scene mirrored at the frame; right for photographs) or "periodic".

GPU arrays (PyTorch, CuPy): `deblur` runs on their GPU; `convolve` and `degrade` take them too but run on
the CPU (linv's convolution and noise are host code), copying the image there and the result back; either
way the result is the caller's kind of array on its GPU. A PSF given as a GPU array is copied to the host
(linv reads kernels there). The other functions take host arrays only.
"""
from typing import Any

import numpy as _np

from . import _linv
from ._common import _contiguous, _float, _gpu_array, _gpu_call

__all__ = ["psf", "gaussian_psf", "box_psf", "disk_psf", "motion_psf", "sharpen_psf", "convolve", "degrade",
           "deblur", "phantom", "system_matrix", "estimate_noise", "estimate_poisson"]


def psf(spec: Any) -> Any:
    """The kernel of a PSF given by linv's spec string.

    Parameters
    ----------
    spec : str
        "gaussian:size=5,sigma=1", "box:size=3", "disk:radius=3", "motion:len=9,angle=30" or
        "sharpen:alpha=0.2" (the `linv degrade --psf` forms).

    Returns
    -------
    kernel : ndarray of float64
        kernel[rows // 2, cols // 2] is its centre.

    Raises
    ------
    ValueError
        A bad spec, naming the part at fault.
    """
    return _linv.psf(str(spec))[0]


def gaussian_psf(size: int = 3, sigma: float = 0.5) -> Any:
    """fspecial('gaussian', size, sigma): a size x size Gaussian kernel summing to 1."""
    return psf(f"gaussian:size={int(size)},sigma={float(sigma)!r}")


def box_psf(size: int = 3) -> Any:
    """fspecial('average', size): a size x size box of equal weights summing to 1."""
    return psf(f"box:size={int(size)}")


def disk_psf(radius: float = 5.0) -> Any:
    """fspecial('disk', radius): each pixel weighted by its area inside the circle, summing to 1."""
    return psf(f"disk:radius={float(radius)!r}")


def motion_psf(length: float = 9.0, angle: float = 0.0) -> Any:
    """fspecial('motion', length, angle): linear motion of `length` pixels at `angle` degrees."""
    return psf(f"motion:len={float(length)!r},angle={float(angle)!r}")


def sharpen_psf(alpha: float = 0.2) -> Any:
    """fspecial('unsharp', alpha): the 3 x 3 unsharp-masking kernel."""
    return psf(f"sharpen:alpha={float(alpha)!r}")


def _kernel(p: Any) -> Any:
    """A PSF argument (spec string or kernel array; a GPU array is copied to the host) as (float64 kernel,
    name)."""
    if isinstance(p, str):
        return _linv.psf(p)[0], p
    if _gpu_array(p):
        p = _gpu_call("psf", None, psf=p).to_numpy(p)
    k = _float(p, "psf")
    if k.ndim != 2:
        raise ValueError(f"psf must be a spec string or a 2-D kernel; its shape is {k.shape}")
    return _contiguous(k.astype(_np.float64, copy=False)), "kernel"


def _image(f: Any, name: Any, gpu: Any = None) -> Any:
    """f as (float64 height x (width * channels) with the channels side by side, channels, dtype, shape);
    for a GPU array (gpu: its _Gpu) a column-major GPU array made by its framework, and dtype's name."""
    if gpu:
        shape, dtype, f = tuple(f.shape), gpu.dtype, gpu.adopt(f)
        concatenate = gpu.concatenate
    else:
        f = _float(f, name)
        shape, dtype = f.shape, f.dtype
        concatenate = _np.concatenate
    if len(shape) == 2:
        side = f
    elif len(shape) == 3 and 1 <= shape[2] <= 4:
        side = concatenate([f[:, :, c] for c in range(shape[2])], axis=1)
    else:
        raise ValueError(f"{name} must be an image of shape (height, width) or (height, width, channels) with 1 to 4 "
                         f"channels; its shape is {shape}")
    channels = 1 if len(shape) == 2 else shape[2]
    if gpu:
        return gpu.fortran(gpu.astype(side, "float64")), channels, dtype, shape
    if channels == 1:
        return _contiguous(side.astype(_np.float64, copy=False)), 1, dtype, shape
    return _np.asfortranarray(side, dtype=_np.float64), channels, dtype, shape


def _restore(side: Any, channels: Any, dtype: Any, shape: Any, gpu: Any = None) -> Any:
    if channels == 1:
        out = side.reshape(shape)
    else:
        w = side.shape[1] // channels
        out = (gpu.stack if gpu else _np.stack)([side[:, c * w:(c + 1) * w] for c in range(channels)], axis=2)
    return gpu.astype(out, dtype) if gpu else out.astype(dtype, copy=False)


def _check_kernel(what: Any, image_shape: Any, kernel: Any) -> Any:
    if kernel.shape[0] > image_shape[0] or kernel.shape[1] > image_shape[1]:
        raise ValueError(f"{what}: the PSF has shape {kernel.shape}, larger than the image of shape {image_shape}")


def convolve(f: Any, psf: Any, *, boundary: str = "reflexive", adjoint: bool = False) -> Any:
    """H f: the image convolved with the PSF, cropped to f's size (conv2's "same"), or H^T f.

    Parameters
    ----------
    f : array_like, shape (height, width) or (height, width, channels)
    psf : str or array_like
        A spec string or a 2-D kernel.
    boundary : {"reflexive", "zero", "periodic"}
        What lies beyond the frame.
    adjoint : bool
        Apply H^T instead of H.

    Returns
    -------
    g : ndarray
        f's shape and dtype. For a GPU array f: computed on the CPU (f copied to the host, g back to f's
        GPU as f's kind of array).
    """
    gpu = _gpu_call("convolve", None, f=f)
    if gpu:
        return gpu.back(convolve(gpu.host(f), psf, boundary=boundary, adjoint=adjoint))
    kernel, _ = _kernel(psf)
    side, channels, dtype, shape = _image(f, "f")
    _check_kernel("convolve", shape, kernel)
    w = shape[1]
    parts: list[Any] = [_linv.convolve(_contiguous(side[:, c * w:(c + 1) * w]), kernel, boundary, bool(adjoint))
             for c in range(channels)]
    return _restore(_np.concatenate(parts, axis=1), channels, dtype, shape)


def degrade(f: Any, psf: Any, *, boundary: str = "reflexive", noise: Any = None, seed: Any = None) -> Any:
    """A degraded image g = H f + n: blur by the PSF, then noise as MATLAB's imnoise.

    Parameters
    ----------
    f : array_like, shape (height, width) or (height, width, channels)
        The scene, values in [0, 1].
    psf : str or array_like
    boundary : {"reflexive", "zero", "periodic"}
    noise : str, optional
        "gaussian:var=0.001[,mean=0]" (added, then clipped to [0, 1]), "saltpepper:density=0.05" or
        "poisson[:peak=255]". None: blur only.
    seed : int, optional
        The noise's seed (channel c uses seed + c); None: a fresh one.

    Returns
    -------
    g : ndarray
        f's shape and dtype. For a GPU array f: computed on the CPU, where linv's convolution and noise
        run (f copied to the host, g back to f's GPU as f's kind of array).
    """
    gpu = _gpu_call("degrade", None, f=f)
    if gpu:
        return gpu.back(degrade(gpu.host(f), psf, boundary=boundary, noise=noise, seed=seed))
    g = convolve(f, psf, boundary=boundary)
    if noise is None:
        return g
    if seed is None:
        seed = int(_np.random.default_rng().integers(0, 2 ** 63))
    side, channels, dtype, shape = _image(g, "g")
    w = shape[1]
    parts: list[Any] = [_linv.add_noise(_contiguous(side[:, c * w:(c + 1) * w]), str(noise), int(seed) + c)
             for c in range(channels)]
    return _restore(_np.concatenate(parts, axis=1), channels, dtype, shape)


def deblur(g: Any, psf: Any, *, lam: Any = None, rule: str = "auto", boundary: str = "reflexive",
           regularizer: str = "laplacian", robust: str = "auto", path: str = "auto", max_iterations: int = 1000,
           tolerance: float = 1e-10, prior: str = "auto", tv_weight: Any = None, noise_model: str = "auto",
           photon_peak: Any = None, device: Any = None, report: bool = False) -> Any:
    """The regularised reconstruction f = argmin ||H f - g||^2 + lam ||L f||^2 (prior "tikhonov"), or with
    isotropic total variation, f = argmin 1/2 ||H f - g||^2 + tv_weight sum_p ||grad f(p)|| (prior "tv"),
    started from the Tikhonov solution. For photon counts (noise_model "poisson"), the data term is the
    counts' negative log-likelihood, peak sum (H f - g log H f), with total variation.

    Parameters
    ----------
    g : array_like, shape (height, width) or (height, width, channels)
        The degraded image. Colour channels share one lambda and one factorisation.
    psf : str or array_like
        The PSF that blurred it: a spec such as "gaussian:size=5,sigma=1", or a kernel (scaled to sum 1, as a
        blur keeps brightness; its centre is kernel[rows // 2, cols // 2]).
    lam : float, optional
        The regularisation weight; None: chosen by `rule`.
    rule : {"auto", "gcv", "discrepancy"}
        How lam is chosen when not given (generalised cross-validation, the discrepancy principle, or
        linv's choice between them).
    boundary : {"reflexive", "zero", "periodic"}
    regularizer : {"laplacian", "gradient", "identity"}
        L.
    robust : {"auto", True, False}
        Leave salt-and-pepper pixels out of the data term ("auto": when at least 0.5 % of pixels are).
    path : {"auto", "spectral", "dense", "matrix-free"}
        The DFT/DCT direct solve where exact, the dense Cholesky of H^T H + lam L^T L (small images), or
        preconditioned conjugate gradients.
    max_iterations, tolerance
        The matrix-free path's limits (per solve; relative residual of the normal equations).
    prior : {"auto", "tikhonov", "tv", "nonlocal"}
        Tikhonov's linear filter, or total variation (edges kept sharp, flat areas smoothed; ADMM, whose
        linear step is the spectral solve, or conjugate gradients where that is not exact), or nonlocal
        (texture kept: a regularised inverse with a tenth of Tikhonov's lambda, each pixel averaged with
        those whose 5x5 patches look alike in the total-variation result; Gaussian noise only). "auto":
        total variation for Poisson data; for Gaussian noise the nonlocal prior under a blur and Tikhonov
        under a sharpening filter or with 4 % salt and pepper and more (its robust term), the two results
        blended between (the report's "prior_from" and "nonlocal_share" say how); with robust="on",
        Tikhonov (the prior with a robust term).
    tv_weight : float, optional
        Total variation's weight, in the image's units; None: proportional to the noise estimated in g (for
        Poisson data, from the photon noise at g's mean level).
    noise_model : {"auto", "gaussian", "poisson"}
        White noise, or photon counts g = counts / photon_peak (microscopy, astronomy, low light). "auto":
        Poisson where the noise variance grows with the intensity (estimate_poisson), no pixel is negative
        and the prior is not "tikhonov".
    photon_peak : float, optional
        Poisson: counts per unit of g; None: estimated from the noise's mean-variance relation.
    device : str, optional
        "cpu", "cuda", "cuda:N" or "auto". Left out: where g lies (the CPU for NumPy arrays). A GPU array g
        is deblurred on its GPU (made float64 and column-major there by its framework) and f comes back
        there as g's kind of array.
    report : bool
        Return (f, report); the report adds "lambda", "lambda_from", "noise_sigma", "robust", "tv_weight",
        "tv_weight_from", "prior" and "noise_model" (what ran), "prior_from", "noise_model_from",
        "photon_peak", "nonlocal_share" (the nonlocal result's share in f), and for the nonlocal prior "nonlocal_lambda" (its inverse's) and "nonlocal_h" (the similarity scale).

    Returns
    -------
    f : ndarray
        g's shape and dtype.

    Raises
    ------
    ValueError
        A PSF larger than the image (naming both shapes) or a bad option.
    """
    gpu = _gpu_call("deblur", device, g=g)
    kernel, name = _kernel(psf)
    side, channels, dtype, shape = _image(g, "g", gpu)
    _check_kernel("deblur", shape, kernel)
    if isinstance(robust, (bool, _np.bool_)):
        robust = "on" if robust else "off"
    options = (-1.0 if lam is None else float(lam), rule, boundary, regularizer, str(robust), path, channels,
               int(max_iterations), float(tolerance), prior, -1.0 if tv_weight is None else float(tv_weight),
               noise_model, -1.0 if photon_peak is None else float(photon_peak))
    if gpu:
        f, rep = _linv.deblur_gpu(side, kernel, name, *options, gpu.framework)
    else:
        f, rep = _linv.deblur(side, kernel, name, *options, "cpu" if device is None else device)
    f = _restore(f, channels, dtype, shape, gpu)
    return (f, rep) if report else f


def phantom(n: int = 256) -> Any:
    """The modified Shepp-Logan phantom (MATLAB's phantom('Modified Shepp-Logan', n)), n x n in [0, 1]."""
    return _linv.shepp_logan(int(n))


def system_matrix(shape: Any, psf: Any, *, boundary: str = "reflexive") -> Any:
    """The dense H of the convolution for images of `shape` (height, width), vectorised column by column
    (pixel (i, j) is entry i + j * height): H @ f.ravel(order="F") == convolve(f, psf).ravel(order="F").
    (height * width)^2 entries: for small images."""
    kernel, _ = _kernel(psf)
    _check_kernel("system_matrix", tuple(shape), kernel)
    return _linv.system_matrix(int(shape[0]), int(shape[1]), kernel, boundary)


def estimate_poisson(g: Any) -> Any:
    """The noise's mean-variance relation in g (blocks of 16 x 16: the variance of the finest diagonal wavelet
    detail against the mean, fitted robustly by variance = mean / peak + floor): a dict of "peak" (photon
    counts per unit of g; inf where the variance does not grow), "floor", "signal_share" (the
    intensity-dependent share of the variance at g's mean level), "mean" and "blocks" (those fitted)."""
    side, channels, _, _ = _image(g, "g")
    return _linv.estimate_poisson(side, channels)


def estimate_noise(g: Any) -> Any:
    """The standard deviation of white noise in g, from its finest diagonal wavelet detail (Donoho and
    Johnstone's median estimator); colour channels together."""
    side, channels, _, _ = _image(g, "g")
    return _linv.estimate_noise(side, channels)
