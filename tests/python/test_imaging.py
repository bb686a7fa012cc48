"""linv.imaging against SciPy and a float64 NumPy reference: PSFs as fspecial makes them, the convolution
as scipy.signal.convolve2d under each boundary, and deblurring as the solution of the regularised normal
equations, within bounds scaled by n eps cond, on fresh random images."""
import numpy as np
import pytest
from scipy.signal import convolve2d

import linv

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)
THRESHOLD = 30.0
EPS = np.finfo(np.float64).eps
SCIPY_BOUNDARY = {"zero": "fill", "reflexive": "symm", "periodic": "wrap"}


def scipy_convolve(f, k, boundary):
    return convolve2d(f, k, mode="same", boundary=SCIPY_BOUNDARY[boundary])


def dense_h(shape, k, boundary):
    h, w = shape
    cols = []
    for j in range(w):
        for i in range(h):
            e = np.zeros(shape)
            e[i, j] = 1.0
            cols.append(scipy_convolve(e, k, boundary).ravel(order="F"))
    return np.array(cols).T


def test_psfs_are_fspecial():
    size, sigma = 5, 1.3
    x = np.arange(size) - size // 2
    g = np.exp(-(x[:, None] ** 2 + x[None, :] ** 2) / (2 * sigma ** 2))
    g /= g.sum()
    k = linv.imaging.gaussian_psf(size, sigma)
    assert k.shape == (size, size) and k.dtype == np.float64
    assert np.abs(k - g).max() <= THRESHOLD * size * EPS * g.max()
    np.testing.assert_array_equal(linv.imaging.psf(f"gaussian:size={size},sigma={sigma}"), k)
    for kernel in (linv.imaging.box_psf(3), linv.imaging.disk_psf(2.5), linv.imaging.motion_psf(7, 30)):
        assert abs(kernel.sum() - 1) <= THRESHOLD * kernel.size * EPS
    np.testing.assert_allclose(linv.imaging.box_psf(3), np.full((3, 3), 1 / 9), rtol=4 * EPS)
    assert abs(linv.imaging.sharpen_psf(0.2).sum() - 1) <= THRESHOLD * 9 * EPS
    with pytest.raises(ValueError, match="sigma|gaussian"):
        linv.imaging.psf("gaussian:size=5,sigma=-1")


@pytest.mark.parametrize("boundary", ["zero", "reflexive", "periodic"])
def test_convolve_matches_scipy(boundary):
    f = RNG.uniform(0, 1, (23, 17))
    k = RNG.uniform(0, 1, (5, 3))
    k /= k.sum()
    g = linv.imaging.convolve(f, k, boundary=boundary)
    ref = scipy_convolve(f, k, boundary)
    assert g.shape == f.shape
    assert np.abs(g - ref).max() <= THRESHOLD * k.size * EPS * np.abs(f).max()
    # the adjoint: <H f, y> = <f, H^T y>
    y = RNG.uniform(-1, 1, f.shape)
    ht_y = linv.imaging.convolve(y, k, boundary=boundary, adjoint=True)
    assert abs(np.vdot(g, y) - np.vdot(f, ht_y)) <= THRESHOLD * f.size * EPS * np.abs(g).sum() * np.abs(y).max()
    h = linv.imaging.system_matrix(f.shape, k, boundary=boundary)
    assert np.abs(h @ f.ravel(order="F") - ref.ravel(order="F")).max() <= THRESHOLD * k.size * EPS


def test_degrade_keeps_dtype_channels_and_seed():
    f = RNG.uniform(0, 1, (20, 24, 3)).astype(np.float32)
    g = linv.degrade(f, "gaussian:size=5,sigma=1")
    assert g.shape == f.shape and g.dtype == np.float32
    k = linv.imaging.gaussian_psf(5, 1)
    for c in range(3):
        ref = scipy_convolve(f[:, :, c].astype(np.float64), k, "reflexive")
        assert np.abs(g[:, :, c] - ref).max() <= THRESHOLD * np.finfo(np.float32).eps
    n1 = linv.degrade(f, k, noise="gaussian:var=0.001", seed=7)
    n2 = linv.degrade(f, k, noise="gaussian:var=0.001", seed=7)
    np.testing.assert_array_equal(n1, n2)
    noise = (n1.astype(np.float64) - g)[2:-2, 2:-2]
    assert 0.5 * 0.001 < noise.var() < 2 * 0.001  # clipping at 0 and 1 takes a little away
    with pytest.raises(ValueError, match=r"\(9, 9\).*\(5, 5\)"):
        linv.degrade(np.zeros((5, 5)), np.ones((9, 9)))


def regularised_problem(boundary):
    """A small noisy blurred image and its identity-regularised solution in float64, from the dense system
    matrix: shape, lambda, the PSF, g, the normal matrix H^T H + lambda I and the reference image."""
    shape, lam = (14, 12), 0.01
    k = linv.imaging.gaussian_psf(5, 1.0)
    f = RNG.uniform(0, 1, shape)
    g = scipy_convolve(f, k, boundary) + RNG.normal(0, 0.01, shape)
    h = dense_h(shape, k, boundary)
    c = h.T @ h + lam * np.eye(h.shape[1])
    ref = np.linalg.solve(c, h.T @ g.ravel(order="F")).reshape(shape, order="F")
    return shape, lam, k, g, c, ref


@pytest.mark.parametrize("path,boundary", [("dense", "zero"), ("dense", "reflexive"), ("spectral", "periodic"),
                                           ("spectral", "reflexive")])
def test_deblur_solves_the_regularised_normal_equations(path, boundary):
    shape, lam, k, g, c, ref = regularised_problem(boundary)
    x, report = linv.deblur(g, k, lam=lam, boundary=boundary, regularizer="identity", path=path, prior="tikhonov",
                            report=True)
    assert x.shape == shape and report["lambda"] == lam and report["device"] == "cpu"
    cond = np.linalg.cond(c)
    assert np.abs(x - ref).max() / np.abs(ref).max() <= THRESHOLD * c.shape[0] * EPS * cond


def test_deblur_colour_and_float32():
    shape = (16, 16)
    k = linv.imaging.gaussian_psf(3, 0.8)
    f = RNG.uniform(0, 1, shape + (3,))
    g = linv.degrade(f, k)
    x = linv.deblur(g, k, lam=0.02, path="dense", prior="tikhonov")
    assert x.shape == f.shape and x.dtype == np.float64
    for c in range(3):
        xc = linv.deblur(g[:, :, c], k, lam=0.02, path="dense", prior="tikhonov")
        assert np.abs(x[:, :, c] - xc).max() <= THRESHOLD * g.size * EPS * np.abs(xc).max()
    x32, report = linv.deblur(g.astype(np.float32), k, report=True)
    assert x32.dtype == np.float32 and report["lambda"] > 0 and report["lambda_from"]
    with pytest.raises(ValueError, match="path"):
        linv.deblur(g, k, path="magic")


def test_phantom_and_noise_estimate():
    p = linv.imaging.phantom(64)
    assert p.shape == (64, 64) and 0 <= p.min() and p.max() <= 1
    sigma = 0.05
    noisy = p + RNG.normal(0, sigma, p.shape)
    assert 0.7 * sigma < linv.imaging.estimate_noise(noisy) < 1.3 * sigma
