#!/usr/bin/env python3
"""Deblur a photograph with linv.imaging, next to scikit-image's Wiener deconvolution.

A camera does not blur a picture with a boundary condition: the lens spreads light from a scene larger
than the frame, and the sensor keeps the middle. So this script blurs the whole photograph, crops away a
margin wider than the PSF, and adds noise; the deblurring then sees only the cropped frame, as it would
for a real photograph, and has to assume something about what lies beyond it (linv's "reflexive" boundary
mirrors the frame).

    python3 examples/python/deblur_photo.py                  # camera man, 512 x 512, figure in a temp dir
    python3 examples/python/deblur_photo.py --out figures --device cuda

Needs scikit-image (the photograph, the metrics and the Wiener filter) and matplotlib (the figure); without
them it says so and exits 0.
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import linv


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="auto", help='where linv deblurs: "cpu", "cuda[:N]" or "auto"')
    parser.add_argument("--out", type=Path, default=None, help="folder for the figure (default: a temp dir)")
    parser.add_argument("--small", action="store_true", help="a 128 x 128 photograph, for tests")
    args = parser.parse_args()

    try:
        import matplotlib
        matplotlib.use("Agg")  # files only, no window
        import matplotlib.pyplot as plt
        from skimage import data, metrics, restoration, transform
    except ImportError as e:
        print(f"deblur_photo: skipped, it needs scikit-image and matplotlib ({e})")
        return 0

    # The scene: scikit-image's camera man as grey values in [0, 1] (float64, as linv computes).
    scene = data.camera().astype(np.float64) / 255.0
    if args.small:
        scene = transform.resize(scene, (160, 160), anti_aliasing=True)

    # The camera: a Gaussian PSF (out of focus), applied to the whole scene; then the frame is cropped out
    # of its middle, a margin of 16 pixels (more than the PSF's radius of 4) each side, so that nothing in
    # the frame depends on how the convolution treats the scene's own edges.
    psf = linv.imaging.gaussian_psf(9, 2.0)
    margin = 16
    sigma = 0.01  # the sensor's noise, standard deviation in units of the full range
    blurred_scene = linv.imaging.convolve(scene, psf, boundary="zero")
    crop = (slice(margin, -margin), slice(margin, -margin))
    truth = scene[crop]
    rng = np.random.default_rng(1)
    degraded = np.clip(blurred_scene[crop] + sigma * rng.standard_normal(truth.shape), 0.0, 1.0)
    print(f"photograph {truth.shape[0]} x {truth.shape[1]}, Gaussian PSF 9 x 9 sigma 2, noise sigma {sigma}")

    # linv: Tikhonov-regularised deconvolution with a Laplacian regulariser; lambda chosen by linv (GCV or
    # the discrepancy principle, see the report), the frame mirrored beyond its edges.
    t = time.perf_counter()
    restored, report = linv.deblur(degraded, psf, boundary="reflexive", device=args.device, report=True)
    t_linv = time.perf_counter() - t
    print(f"linv.deblur: lambda {report['lambda']:.3g} ({report['lambda_from']}), on {report['device']}, "
          f"{t_linv * 1e3:.0f} ms")

    # scikit-image: the unsupervised Wiener-Hunt deconvolution (it estimates the noise and image priors
    # itself, as linv chooses lambda itself). It assumes a periodic scene, so the frame's opposite edges
    # meet, which rings along the edges of a cropped photograph.
    t = time.perf_counter()
    wiener, _ = restoration.unsupervised_wiener(degraded, psf, rng=1)
    t_skimage = time.perf_counter() - t

    def scores(x):
        return (metrics.peak_signal_noise_ratio(truth, x, data_range=1.0),
                metrics.structural_similarity(truth, x, data_range=1.0))

    rows = [("degraded", degraded, None), ("linv.deblur", restored, t_linv),
            ("skimage unsupervised_wiener", wiener, t_skimage)]
    print(f"{'':28s} {'PSNR dB':>8s} {'SSIM':>6s} {'time':>8s}")
    for name, x, seconds in rows:
        psnr, ssim = scores(x)
        when = "" if seconds is None else f"{seconds * 1e3:6.0f} ms"
        print(f"{name:28s} {psnr:8.2f} {ssim:6.3f} {when:>8s}")

    # The figure: the degraded frame and both restorations, each titled with its scores.
    out = args.out if args.out is not None else Path(tempfile.mkdtemp(prefix="linv-deblur-"))
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 3, figsize=(12, 4.8), constrained_layout=True)
    for ax, (name, x, _) in zip(axes, rows):
        psnr, ssim = scores(x)
        ax.imshow(np.clip(x, 0, 1), cmap="gray", vmin=0, vmax=1)
        ax.set_title(f"{name}\nPSNR {psnr:.2f} dB, SSIM {ssim:.3f}", fontsize=10)
        ax.axis("off")
    path = out / "deblur_photo.png"
    fig.savefig(path, dpi=100)
    print(f"figure: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
