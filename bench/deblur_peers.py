#!/usr/bin/env python3
"""Deblurring against the peers an imaging user would pick: BM3D deblurring and total variation with its
weight picked against the truth, beside linv's defaults (Tikhonov) and linv's total-variation prior, on
photographs blurred as a camera blurs them. Every output is clipped to [0, 1].

Cases: bench/deblur_noise_sweep.py's images (tuned: camera, rocket, brick; held-out, never looked at while
setting linv's rules: astronaut, coffee, grass, chelsea), grey, central 256x256 crops, the blur seeing 16
pixels of real scene past the frame; PSFs Gaussian 9x9 sigma 2, disk radius 3, motion 9 px at 30 degrees;
Gaussian noise sigma 0.01 and 0.03, clipped to [0, 1].

Methods:
  degraded      g itself
  linv          linv.imaging.deblur(g, psf): every default (Tikhonov, lambda auto)
  linv-tv       linv.imaging.deblur(g, psf, prior="tv"): the weight from the noise it estimates
  bm3d          bm3d.bm3d_deblurring(g[:, :, None], sigma, psf) (the `bm3d` package, PyPI; given a 2-D g it
                takes minutes) with the true sigma, on g edge-padded by 64 pixels (its transforms are periodic),
                cropped back
  tv-oracle     isotropic TV-L2 by ADMM (periodic FFT solves on g edge-padded by 32 pixels, 200 iterations),
                the weight the best of 6 (0.0003 .. 0.0096, doubling) against the truth
Writes the rows schema (bench/results/cpu/deblur-peers.json) and prints, per image set and noise, the mean
PSNR and SSIM of each method and linv's margin to the best peer per case.

    python3 bench/deblur_peers.py [--images camera,rocket] [--psfs gaussian] [--sigmas 0.01]
"""
import argparse
import os
import sys
import time

import numpy as np
from skimage.metrics import structural_similarity

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deblur_noise_sweep import HELD_OUT, TUNED, cases, psnr, write_results  # noqa: E402

import linv  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TV_WEIGHTS = [0.0003 * 2 ** k for k in range(6)]
if not hasattr(np, "trapz"):  # the bm3d package calls np.trapz, gone from NumPy 2.4
    np.trapz = np.trapezoid


def ssim(truth, x):
    return float(structural_similarity(truth, np.clip(x, 0, 1), data_range=1.0))


def otf(psf, shape):
    """The PSF's transfer function on a grid of `shape`, centred at the origin."""
    padded = np.zeros(shape)
    padded[:psf.shape[0], :psf.shape[1]] = psf
    padded = np.roll(padded, (-(psf.shape[0] // 2), -(psf.shape[1] // 2)), axis=(0, 1))
    return np.fft.fft2(padded)


def tv_admm(g, psf, weight, iterations=200, pad=32):
    """min 1/2 ||k * f - g||^2 + weight sum |grad f| by ADMM, periodic on g edge-padded by `pad`."""
    gp = np.pad(g, pad, mode="edge")
    K = otf(psf, gp.shape)
    Dy, Dx = otf(np.array([[1.0], [-1.0]]), gp.shape), otf(np.array([[1.0, -1.0]]), gp.shape)
    rho = 10 * weight
    denominator = np.abs(K) ** 2 + rho * (np.abs(Dy) ** 2 + np.abs(Dx) ** 2)
    KG = np.conj(K) * np.fft.fft2(gp)
    f = gp.copy()
    zy = zx = uy = ux = np.zeros_like(gp)
    for _ in range(iterations):
        rhs = KG + rho * (np.conj(Dy) * np.fft.fft2(zy - uy) + np.conj(Dx) * np.fft.fft2(zx - ux))
        F = rhs / denominator
        f = np.real(np.fft.ifft2(F))
        gy, gx = np.real(np.fft.ifft2(Dy * F)), np.real(np.fft.ifft2(Dx * F))
        vy, vx = gy + uy, gx + ux
        norm = np.sqrt(vy ** 2 + vx ** 2)
        keep = np.maximum(0, 1 - (weight / rho) / np.maximum(norm, 1e-300))
        zy, zx = keep * vy, keep * vx
        uy, ux = vy - zy, vx - zx
    return f[pad:-pad, pad:-pad]


def bm3d_deblur(g, psf, sigma, pad=64):
    import bm3d
    gp = np.pad(g, pad, mode="edge")
    return np.asarray(bm3d.bm3d_deblurring(gp[:, :, None], sigma, psf)).reshape(gp.shape)[pad:-pad, pad:-pad]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", default=",".join(TUNED + HELD_OUT))
    ap.add_argument("--psfs", default="gaussian,disk,motion")
    ap.add_argument("--sigmas", default="0.01,0.03")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "cpu", "deblur-peers.json"))
    args = ap.parse_args()
    rows = []
    sigmas = [float(x) for x in args.sigmas.split(",")]
    for image, psf_name, psf, sigma, truth, g in cases(args.images.split(","), args.psfs.split(","), sigmas):
        case = f"{image}/{psf_name}/{sigma:g}"
        base = {"case": case, "image": image, "set": "tuned" if image in TUNED else "held-out",
                "psf": psf_name, "sigma": sigma}

        def add(method, x, seconds, **extra):
            rows.append(dict(base, method=method, psnr=psnr(truth, x), ssim=ssim(truth, x), seconds=seconds,
                             **extra))
            print(f"{case:24s} {method:10s} {rows[-1]['psnr']:6.2f} dB  {rows[-1]['ssim']:.3f}  {seconds:6.2f} s",
                  flush=True)

        add("degraded", g, 0.0)
        for method, prior in (("linv", "tikhonov"), ("linv-tv", "tv")):
            start = time.perf_counter()
            x, report = linv.imaging.deblur(g, psf, prior=prior, report=True)
            add(method, x, time.perf_counter() - start, **({"tv_weight": report["tv_weight"]} if prior == "tv" else {}))
        start = time.perf_counter()
        x = bm3d_deblur(g, psf, sigma)
        add("bm3d", x, time.perf_counter() - start)
        best = None
        for weight in TV_WEIGHTS:
            start = time.perf_counter()
            x = tv_admm(g, psf, weight)
            seconds = time.perf_counter() - start
            if best is None or psnr(truth, x) > psnr(truth, best[0]):
                best = (x, seconds, weight)
        add("tv-oracle", best[0], best[1], weight=best[2])
    write_results(args.out, "deblur-peers", rows)
    methods = ["degraded", "linv", "linv-tv", "bm3d", "tv-oracle"]
    print("\nmean PSNR / SSIM")
    print(f"{'set':9s} {'sigma':6s} " + " ".join(f"{m:>15s}" for m in methods) + "   linv-tv vs best peer (mean, worst)")
    for group in ("tuned", "held-out"):
        for sigma in sorted({r["sigma"] for r in rows}):
            sel = [r for r in rows if r["set"] == group and r["sigma"] == sigma]
            if not sel:
                continue
            cells = []
            for m in methods:
                p = [r["psnr"] for r in sel if r["method"] == m]
                q = [r["ssim"] for r in sel if r["method"] == m]
                cells.append(f"{np.mean(p):7.2f} / {np.mean(q):.3f}")
            margins = []
            for case in sorted({r["case"] for r in sel}):
                by = {r["method"]: r["psnr"] for r in sel if r["case"] == case}
                margins.append(by["linv-tv"] - max(by["bm3d"], by["tv-oracle"]))
            print(f"{group:9s} {sigma:<6g} " + " ".join(f"{c:>15s}" for c in cells)
                  + f"   {np.mean(margins):+.2f}, {min(margins):+.2f}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
