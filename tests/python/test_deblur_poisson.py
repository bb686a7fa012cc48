"""linv.imaging.deblur on photon counts (noise_model "poisson"): the result against its definition, computed
here in float64 NumPy, f minimises J(f) = peak sum (H f - g - g log(H f / g)) + w sum_p ||D f(p)|| (the counts'
deviance plus total variation; H the PSF under the reflexive boundary, D forward differences whose last one
on each line is zero), on fresh random images, grey and colour, symmetric (spectral linear step) and motion
(conjugate gradients) PSFs; the photon peak estimated from the mean-variance relation over a sweep of peaks;
the automatic noise model on Poisson and on Gaussian data over sweeps of their levels; and the refusals."""
import numpy as np
import pytest
import linv
from test_deblur_tv import blur, gradient  # the same H (reflexive) and D as total variation's test

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)


def total_variation(f):
    dy, dx = gradient(f)
    magnitude = dy ** 2 + dx ** 2
    if f.ndim == 3:
        magnitude = magnitude.sum(axis=2)
    return np.sum(np.sqrt(magnitude))


def objective(f, g, k, peak, w):
    hf = blur(f, k)
    if np.any(hf[g > 0] <= 0):
        return np.inf
    positive = g > 0
    deviance = np.sum(hf - g) - np.sum(g[positive] * np.log(hf[positive] / g[positive]))
    return peak * deviance + w * total_variation(f)


def piecewise_image(shape, low=0.1):
    """Random rectangles on a background: edges for total variation to keep; no value below `low`."""
    f = np.full(shape, RNG.uniform(0.2, 0.4))
    for _ in range(8):
        r0, c0 = RNG.integers(0, shape[0] - 8), RNG.integers(0, shape[1] - 8)
        f[r0:r0 + RNG.integers(4, 20), c0:c0 + RNG.integers(4, 20)] = RNG.uniform(low, 1, shape[2:] or None)
    return f


def smooth_scene(shape):
    """A smooth random scene in [0.05, 1]: the blur leaves the noise as the finest detail."""
    f = blur(RNG.standard_normal(shape), linv.imaging.gaussian_psf(15, 4.0))
    return 0.05 + 0.95 * (f - f.min()) / (f.max() - f.min())


@pytest.mark.parametrize("psf", ["gaussian", "motion"])
@pytest.mark.parametrize("channels", [1, 3])
def test_poisson_total_variation_minimises_its_objective(psf, channels):
    k = linv.imaging.gaussian_psf(5, 1.2) if psf == "gaussian" else linv.imaging.motion_psf(5, 30)
    shape = (40, 48) if channels == 1 else (40, 48, 3)
    peak = float(RNG.choice([20.0, 200.0, 2000.0]))
    g = RNG.poisson(peak * blur(piecewise_image(shape), k)) / peak
    w = 0.5 * np.sqrt(peak)
    start = linv.imaging.deblur(g, k, prior="tikhonov", noise_model="gaussian")
    f, report = linv.imaging.deblur(g, k, noise_model="poisson", photon_peak=peak, tv_weight=w, report=True)
    assert report["method"] == "admm" and report["noise_model"] == "poisson" and report["prior"] == "tv"
    assert report["photon_peak"] == peak and report["tv_weight"] == w
    assert f.shape == g.shape and np.isfinite(f).all()
    j = objective(f, g, k, peak, w)
    assert np.isfinite(j) and j < objective(start, g, k, peak, w)
    scale = np.abs(f).max()
    for size in (1e-1, 1e-2, 1e-3):
        for _ in range(4):
            delta = RNG.standard_normal(shape)
            if RNG.random() < 0.5:
                delta = blur(delta, linv.imaging.gaussian_psf(7, 2.0))
            delta *= size * scale / np.abs(delta).max()
            assert j <= objective(f + delta, g, k, peak, w) + 1e-3 * j, f"perturbation of size {size}"


def test_the_photon_peak_is_found_across_a_sweep_of_peaks():
    # Measured on 128 x 128 smooth scenes, 15 draws per peak: the estimate errs by up to 1.75 times at any peak
    # and fails now and then at 8 counts per unit (half the blocks lie within two deviations of 0). What is
    # held here, on 256 x 256 scenes: the median error over the sweep within 30 %, every estimate from 14
    # counts per unit within 2.5 times, and the growing share above 0.6 at 10 of the 13 peaks at least.
    k = linv.imaging.gaussian_psf(9, 2.0)
    errors, shares = [], []
    for peak in np.geomspace(8, 5000, 13):
        scene = smooth_scene((256, 256))
        g = RNG.poisson(peak * blur(scene, k)) / peak
        fit = linv.imaging.estimate_poisson(g)
        errors.append(abs(np.log(fit["peak"] / peak)))
        shares.append(fit["signal_share"])
        if peak >= 14:
            assert errors[-1] < np.log(2.5), (peak, fit)
        # and in other units: counts as they come (peak 1 per count)
        counts = g * peak
        if peak >= 14:
            assert abs(np.log(linv.imaging.estimate_poisson(counts)["peak"])) < np.log(2.5)
    assert np.median(errors) < np.log(1.3), errors
    assert sum(s > 0.6 for s in shares) >= 10, shares


def test_counts_on_one_level_give_their_lattice_peak():
    """Blocks that share one mean leave the mean-variance slope unseen; counts / peak still lie on a lattice
    of step 1 / peak whose variance, mean / peak, the blocks show. A flat scene of counts gives its peak
    (measured: 0.5 % of draws missed at worst, so two of three draws asked); 8-bit rounding of Gaussian noise
    whose variance is not mean / 255 gives none (0 of 1500 measured)."""
    for peak in (10.0, 30.0, 300.0, 3000.0):
        for level in (0.2, 0.6):
            found = [linv.imaging.estimate_poisson(RNG.poisson(peak * level, (64, 64)) / peak)["peak"]
                     for _ in range(3)]
            assert sum(abs(np.log(p / peak)) < np.log(1.5) for p in found) >= 2, (peak, level, found)
    # counts as they come: one per unit
    found = [linv.imaging.estimate_poisson(RNG.poisson(9.0, (64, 64)).astype(float))["peak"] for _ in range(3)]
    assert sum(abs(np.log(p)) < np.log(1.5) for p in found) >= 2, found
    for sigma in (0.01, 0.03):
        eight_bit = np.round((0.5 + RNG.normal(0, sigma, (64, 64))) * 255) / 255
        assert linv.imaging.estimate_poisson(eight_bit)["peak"] == np.inf, sigma


def test_rounding_without_noise_is_not_photon_noise():
    """Noise-free images rounded to 8 bits fit a line through their edges and their rounding; the automatic
    model keeps them Gaussian, over sizes, PSFs and a photograph with a little Gaussian noise."""
    k_all = (linv.imaging.gaussian_psf(5, 1.0), linv.imaging.disk_psf(3), linv.imaging.motion_psf(9, 30))
    for n in (32, 64, 128, 256):
        for k in k_all:
            g = np.round(np.clip(blur(linv.imaging.phantom(n), k), 0, 1) * 255) / 255
            _, report = linv.imaging.deblur(g, k, prior="tikhonov", report=True)
            assert " grows" not in report["noise_model_from"], (n, report["noise_model_from"])
    from skimage import data
    scene = data.camera()[128:384, 128:384] / 255.0
    for sigma in (0.0, 0.002, 0.01, 0.03):
        g = np.round(np.clip(blur(scene, k_all[1]) + RNG.normal(0, sigma, scene.shape), 0, 1) * 255) / 255
        _, report = linv.imaging.deblur(g, k_all[1], prior="tikhonov", report=True)
        assert " grows" not in report["noise_model_from"], (sigma, report["noise_model_from"])


@pytest.mark.parametrize("photograph", [False, True])
def test_the_noise_model_follows_the_data(photograph):
    k = linv.imaging.disk_psf(3)
    if photograph:
        from skimage import data
        scene = data.camera()[128:384, 128:384] / 255.0
    else:
        scene = smooth_scene((256, 256))  # 128 x 128 scenes dipped to a share of 0.56 now and then
    blurred = blur(scene, k)
    # from 10 counts per unit, where the photon noise is under twice the counts' step (1 / peak) wherever the
    # mean is under 4 counts: the lattice, not the step, then tells counts from rounding
    for peak in (10.0, 30.0, 100.0, 1000.0, 3000.0):
        g = RNG.poisson(peak * np.maximum(blurred, 0)) / peak
        _, report = linv.imaging.deblur(g, k, report=True)
        assert report["noise_model"] == "poisson" and report["prior"] == "tv", (peak, report["noise_model_from"])
        assert abs(np.log(report["photon_peak"] / peak)) < np.log(1.5), (peak, report["photon_peak"])
        # the Tikhonov prior asked for keeps the Gaussian model, and says why
        _, report = linv.imaging.deblur(g, k, prior="tikhonov", report=True)
        assert report["noise_model"] == "gaussian" and report["prior"] == "tikhonov"
        assert ("Tikhonov" in report["noise_model_from"]) == (" grows" in report["noise_model_from"])
    for sigma in (0.002, 0.005, 0.01, 0.02, 0.03, 0.05):
        g = np.clip(blurred + RNG.normal(0, sigma, blurred.shape), 0, 1)
        _, report = linv.imaging.deblur(g, k, report=True)
        assert report["noise_model"] == "gaussian" and report["prior"] == "nonlocal", (sigma, report["noise_model_from"])
    # counts with a negative pixel (a background subtracted) are not photon counts
    g = RNG.poisson(100 * blurred) / 100
    g -= g.min() + 0.01
    _, report = linv.imaging.deblur(g, k, report=True)
    assert report["noise_model"] == "gaussian"
    assert ("negative" in report["noise_model_from"]) == (" grows" in report["noise_model_from"])


def test_automatic_noise_model_finds_counts_of_a_few_objects_on_a_dim_background():
    """Fluorescence-like scenes: one to three objects on a background of 0.1 to 0.3, at 10 to 1000 counts per
    unit, whose blocks lie mostly near 0, where clipped data lose variance and counts do not. The estimated
    peak can be low, the objects' edges adding variance (down to 0.42 times over 120 scenes), which costs
    nothing against the true peak (0.0 dB at the least, +0.08 on the mean): the result is held to that."""
    k = linv.imaging.disk_psf(3)
    for peak in (10.0, 30.0, 100.0, 1000.0):
        for _ in range(6):
            f = np.full((96, 96), RNG.uniform(0.1, 0.3))
            for _ in range(RNG.integers(1, 4)):
                r0, c0 = RNG.integers(0, 80, 2)
                f[r0:r0 + RNG.integers(4, 16), c0:c0 + RNG.integers(4, 16)] = RNG.uniform(0.1, 1)
            g = RNG.poisson(peak * blur(f, k)) / peak
            auto, report = linv.imaging.deblur(g, k, report=True)
            assert report["noise_model"] == "poisson", (peak, report["noise_model_from"])
            psnr = lambda x: 10 * np.log10(1 / np.mean((np.clip(x, 0, 1) - f) ** 2))  # noqa: E731
            given = linv.imaging.deblur(g, k, noise_model="poisson", photon_peak=peak)
            assert psnr(auto) > psnr(given) - 0.25, (peak, report["photon_peak"], psnr(auto), psnr(given))


def test_poisson_deblurring_beats_richardson_lucy_and_gaussian_total_variation():
    """On piecewise images at 30 counts per unit: above Richardson-Lucy at its best iteration (picked against
    the truth) on every image and by 0.5 dB on the mean of four, and above the Gaussian data term with total
    variation. Measured over 300 images: 2.1 dB above Richardson-Lucy on the mean, 0.25 dB at the least (bright
    scenes, where both do well), and 0.55 dB at the least above Gaussian total variation."""
    from scipy import ndimage
    k = linv.imaging.disk_psf(3)
    peak = 30.0
    margins = []
    for _ in range(4):
        truth = piecewise_image((96, 96))
        g = RNG.poisson(peak * blur(truth, k)) / peak

        def psnr(x):
            return 10 * np.log10(1 / np.mean((np.clip(x, 0, 1) - truth) ** 2))

        best = -np.inf
        f = np.full_like(g, g.mean())
        for _ in range(100):
            f = f * ndimage.correlate(g / np.maximum(ndimage.convolve(f, k, mode="reflect"), 1e-12), k, mode="reflect")
            best = max(best, psnr(f))
        ours, report = linv.imaging.deblur(g, k, report=True)
        ours = psnr(ours)
        assert report["noise_model"] == "poisson", report["noise_model_from"]
        assert ours > best, (ours, best)
        assert ours > psnr(linv.imaging.deblur(g, k, prior="tv", noise_model="gaussian")), ours
        margins.append(ours - best)
    assert np.mean(margins) > 0.5, margins


def test_poisson_refuses_what_it_cannot_do():
    g = RNG.poisson(50, (32, 32)) / 50.0
    k = "gaussian:size=3,sigma=1"
    with pytest.raises(ValueError, match="total-variation"):
        linv.imaging.deblur(g, k, noise_model="poisson", prior="tikhonov")
    with pytest.raises(ValueError, match="robust"):
        linv.imaging.deblur(g, k, noise_model="poisson", robust=True)
    bad = g.copy()
    bad[3, 5] = -0.25
    with pytest.raises(ValueError, match=r"pixel \(3, 5\).*-0\.25"):
        linv.imaging.deblur(bad, k, noise_model="poisson")
    for peak in (0.0, -0.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="photon peak"):
            linv.imaging.deblur(g, k, noise_model="poisson", photon_peak=peak)
    with pytest.raises(ValueError, match="noise model"):
        linv.imaging.deblur(g, k, noise_model="gamma")
    # Gaussian noise gives no peak to estimate
    flat = np.full((64, 64), 0.5) + RNG.normal(0, 0.01, (64, 64))
    with pytest.raises(ValueError, match="cannot be estimated"):
        linv.imaging.deblur(flat, k, noise_model="poisson")
