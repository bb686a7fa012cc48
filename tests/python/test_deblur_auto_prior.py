"""linv.imaging.deblur's automatic prior for Gaussian noise: the nonlocal prior under a blur, Tikhonov under a
sharpening filter or with many salt-and-pepper pixels, and between those ends the two results blended by
weights continuous in the PSF's smallest gain and the impulses' share. Checked: the blend is exactly its
definition, and swept finely through both bands (the PSF's width, the impulses' density) the share moves
monotonically, the result beats the degraded image and its quality moves without a step (no cliff)."""
import numpy as np
import pytest

import linv
from test_deblur_tv import blur  # the reflexive blur, channel by channel

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)


def scene(shape):
    """Random rectangles and a smooth ramp: edges and shading."""
    f = np.add.outer(np.linspace(0.2, 0.4, shape[0]), np.linspace(0, 0.1, shape[1]))
    if len(shape) == 3:
        f = np.repeat(f[..., None], shape[2], axis=2) * RNG.uniform(0.7, 1.3, shape[2])
    for _ in range(10):
        r0, c0 = RNG.integers(0, shape[0] - 8), RNG.integers(0, shape[1] - 8)
        f[r0:r0 + RNG.integers(4, shape[0] // 2), c0:c0 + RNG.integers(4, shape[1] // 2)] = RNG.uniform(0, 1)
    return np.clip(f, 0, 1)


def psnr(x, truth):
    return 10 * np.log10(1 / np.mean((np.clip(x, 0, 1) - truth) ** 2))


def salt_and_pepper(g, density):
    g = g.copy()
    u = RNG.uniform(size=g.shape)
    g[u < density / 2] = 0
    g[(u >= density / 2) & (u < density)] = 1
    return g


def test_the_ends_are_the_nonlocal_and_the_tikhonov_priors():
    truth = scene((96, 96))
    for k, expected in ((linv.imaging.gaussian_psf(7, 1.5), "nonlocal"), (linv.imaging.disk_psf(3), "nonlocal"),
                        (linv.imaging.sharpen_psf(0.2), "tikhonov")):
        g = np.clip(blur(truth, k) + RNG.normal(0, 0.01, truth.shape), 0, 1)
        f, report = linv.imaging.deblur(g, k, report=True)
        assert report["prior"] == expected and report["nonlocal_share"] == (expected == "nonlocal"), report["prior_from"]
        assert "DC gain" in report["prior_from"]
        np.testing.assert_array_equal(f, linv.imaging.deblur(g, k, prior=expected))
    # the robust term asked for is the Tikhonov prior's
    g = salt_and_pepper(np.clip(blur(truth, k) + RNG.normal(0, 0.01, truth.shape), 0, 1), 0.005)
    f, report = linv.imaging.deblur(g, k, robust="on", report=True)
    assert report["prior"] == "tikhonov" and report["robust"] and "robust" in report["prior_from"]
    np.testing.assert_array_equal(f, linv.imaging.deblur(g, k, robust="on", prior="tikhonov"))
    # Poisson data keep total variation, and say why
    k = linv.imaging.gaussian_psf(7, 1.5)
    g = RNG.poisson(100 * blur(np.kron(scene((64, 64)), np.ones((2, 2))), k)) / 100
    _, report = linv.imaging.deblur(g, k, report=True)
    assert report["prior"] == "tv" and report["nonlocal_share"] == 0 and "Poisson" in report["prior_from"]


@pytest.mark.parametrize("shape", [(80, 80), (64, 72, 3)])
def test_a_blend_is_its_definition(shape):
    """Between the ends f = s f_nonlocal + (1 - s) f_tikhonov, s the reported share, with each prior run as
    asked for by name (robust auto, Gaussian noise)."""
    truth = scene(shape)
    k = linv.imaging.gaussian_psf(5, 1.0)
    g = salt_and_pepper(np.clip(blur(truth, k) + RNG.normal(0, 0.01, shape), 0, 1), 0.02)
    f, report = linv.imaging.deblur(g, k, report=True)
    s = report["nonlocal_share"]
    assert 0 < s < 1, report["prior_from"]
    expected = s * linv.imaging.deblur(g, k, prior="nonlocal") + (1 - s) * linv.imaging.deblur(g, k, prior="tikhonov")
    np.testing.assert_allclose(f, expected, rtol=0, atol=1e-12)
    assert any("prior auto:" in note for note in report["notes"]), report["notes"]
    assert report["robust"] and psnr(f, truth) > psnr(g, truth)


def sweep(truth, cases):
    """deblur's auto prior and its two ends on each (g, k); their PSNRs, and the shares auto reported. The noise
    model is given: clipped white noise on these piecewise scenes can fit a variance growing with the
    intensity, which the noise model's own band blends towards Poisson data (test_deblur_choice.py and
    test_deblur_poisson.py sweep that band)."""
    shares, quality = [], {"auto": [], "nonlocal": [], "tikhonov": []}
    for g, k in cases:
        for prior in quality:
            f, report = linv.imaging.deblur(g, k, prior=prior, noise_model="gaussian", report=True)
            quality[prior].append(psnr(f, truth))
            if prior == "auto":
                assert psnr(f, truth) > psnr(g, truth), report["prior_from"]
                shares.append(report["nonlocal_share"])
    return np.array(shares), {prior: np.array(q) for prior, q in quality.items()}


def assert_no_cliff(shares, quality, largest_step):
    """The rule adds no step of its own. Its result is share * f_nonlocal + (1 - share) * f_tikhonov
    (test_a_blend_is_its_definition), so it is as continuous as its ends and its share: the share moves by at
    most `largest_step` between neighbouring cases (no switch), and a blend is at least as good as the worse
    of its ends (the squared error is convex; 0.05 dB for the clipping to [0, 1]). An end's own jump (GCV
    choosing another minimum on median-cleaned data) is that prior's, and auto follows it no further."""
    assert np.max(np.abs(np.diff(shares))) <= largest_step, np.round(shares, 2)
    assert np.all(quality["auto"] >= np.minimum(quality["nonlocal"], quality["tikhonov"]) - 0.05), quality


def test_no_cliff_across_the_psf_band():
    """PSFs from the identity to a sharpening filter, (1 - t) delta + t sharpen(0.2), in small steps: their
    largest gain over the DC gain, 1 + 5.3 t, crosses the band from 1.1 (nonlocal) to 1.5 (Tikhonov); the share
    falls monotonically from 1 to 0 in small steps, and every result beats the degraded image."""
    truth = scene((96, 96))
    noise = RNG.normal(0, 1, truth.shape)
    delta = np.zeros((3, 3))
    delta[1, 1] = 1
    cases = []
    for t in np.linspace(0, 0.15, 16):
        k = (1 - t) * delta + t * linv.imaging.sharpen_psf(0.2)
        cases.append((np.clip(blur(truth, k) + 0.01 * noise, 0, 1), k))
    shares, quality = sweep(truth, cases)
    assert shares[0] == 1 and shares[-1] == 0 and np.all(np.diff(shares) <= 0), np.round(shares, 2)
    assert_no_cliff(shares, quality, 0.3)  # the band (gain 1.1 to 1.5) spans about four of these steps


@pytest.mark.parametrize("shape", [(96, 96), (64, 64, 3)])
def test_no_cliff_across_the_impulse_band(shape):
    """Salt and pepper from 0.3 % to 8 % of the pixels in steps of 20 %: the share falls monotonically from 1
    (the nonlocal prior on median-cleaned data) to 0 (the robust Tikhonov) in small steps, and every result
    beats the degraded image."""
    truth = scene(shape)
    k = linv.imaging.gaussian_psf(5, 1.2)
    blurred = np.clip(blur(truth, k) + RNG.normal(0, 0.005, shape), 0, 1)
    u = RNG.uniform(size=shape)  # one draw: the impulses at density d are those at any smaller density, and more
    cases = []
    for density in np.geomspace(0.003, 0.08, 19):
        g = blurred.copy()
        g[u < density / 2] = 0
        g[(u >= density / 2) & (u < density)] = 1
        cases.append((g, k))
    shares, quality = sweep(truth, cases)
    assert shares[0] == 1 and shares[-1] == 0 and np.all(np.diff(shares) <= 0), np.round(shares, 2)
    assert_no_cliff(shares, quality, 0.2)  # the band (1 % to 4 %) spans about eight of these steps


@pytest.mark.skipif(not linv.info()["gpus"], reason="no GPU on this machine")
def test_a_gpu_blends_as_the_cpu():
    """The blends run where g lives: on a GPU, the same shares and, within the nonlocal prior's own GPU-CPU
    agreement (ADMM's rounding), the same image."""
    truth = scene((96, 96, 3))
    k = linv.imaging.gaussian_psf(5, 1.0)
    g = salt_and_pepper(np.clip(blur(truth, k) + RNG.normal(0, 0.01, truth.shape), 0, 1), 0.02)
    f, report = linv.imaging.deblur(g, k, report=True)
    f_gpu, report_gpu = linv.imaging.deblur(g, k, device="cuda", report=True)
    assert 0 < report["nonlocal_share"] < 1 and report_gpu["nonlocal_share"] == report["nonlocal_share"]
    assert report_gpu["device"].startswith("cuda"), report_gpu["device"]
    assert np.abs(np.asarray(f_gpu) - f).max() <= 1e-5, np.abs(np.asarray(f_gpu) - f).max()
