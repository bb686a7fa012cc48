#!/usr/bin/env python3
"""Deblurring photon-limited images: linv's Poisson data term with total variation (every default: the noise
model and the photon peak found in the data) against Richardson-Lucy with its iteration count picked against
the truth (the best PSNR over 1..300 iterations, which no user can pick) and against linv's Gaussian
total variation on the same data.

Images: scikit-image photographs, grey, central 256x256 crops, blurred with a 16-pixel margin of real scene
past the frame (bench/deblur_noise_sweep.py's cases), then counts drawn from Poisson(peak * blurred) and
divided by peak. "tuned": the photographs the Poisson weight rule was set on (camera, astronaut); "held-out":
never looked at while setting it, reported apart. PSFs: Gaussian 9x9 sigma 2, disk radius 3, motion length 9
at 30 degrees. Richardson-Lucy applies the blur and its adjoint with the same reflexive boundary
(scipy.ndimage convolve and correlate, mode reflect), so it gains nothing or loses nothing at the frame.

Writes the rows schema of BENCHMARKS.md (bench/results/cpu/deblur-poisson.json by default) and prints the
mean PSNR per (set, peak) and linv's margin over the oracle Richardson-Lucy (mean and worst).

    python3 bench/deblur_poisson.py [--images camera,rocket] [--psfs gaussian,disk] [--peaks 10,100]
"""
import argparse
import os
import time

import numpy as np
from scipy import ndimage
from skimage.metrics import structural_similarity

import linv
from deblur_noise_sweep import MARGIN, PSFS, scene, write_results

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUNED = ("camera", "astronaut")
HELD_OUT = ("rocket", "brick", "coffee", "grass", "chelsea")


def psnr(truth, x):
    return float(10 * np.log10(1 / np.mean((truth - np.clip(x, 0, 1)) ** 2)))


def ssim(truth, x):
    return float(structural_similarity(truth, np.clip(x, 0, 1), data_range=1.0))


def richardson_lucy_oracle(g, psf, truth, iterations=300):
    """Richardson-Lucy from a flat start; the iterate of best PSNR against the truth and its count."""
    f = np.full_like(g, max(g.mean(), 1e-12))
    best = (None, -np.inf, 0)
    for k in range(1, iterations + 1):
        ratio = g / np.maximum(ndimage.convolve(f, psf, mode="reflect"), 1e-12)
        f = f * ndimage.correlate(ratio, psf, mode="reflect")
        p = psnr(truth, f)
        if p > best[1]:
            best = (f.copy(), p, k)
    return best[0], best[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", default=",".join(TUNED + HELD_OUT))
    ap.add_argument("--psfs", default="gaussian,disk,motion")
    ap.add_argument("--peaks", default="10,100,1000")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "cpu", "deblur-poisson.json"))
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = []
    for image in args.images.split(","):
        s = scene(image)
        truth = s[MARGIN:-MARGIN, MARGIN:-MARGIN]
        for psf_name in args.psfs.split(","):
            psf = PSFS[psf_name]()
            blurred = ndimage.convolve(s, psf, mode="reflect")[MARGIN:-MARGIN, MARGIN:-MARGIN]
            for peak in (float(p) for p in args.peaks.split(",")):
                g = rng.poisson(peak * np.maximum(blurred, 0)) / peak
                case = f"{image}/{psf_name}/{peak:g}"
                base = {"case": case, "image": image, "set": "tuned" if image in TUNED else "held-out",
                        "psf": psf_name, "peak": peak}

                def add(method, x, seconds, **extra):
                    rows.append(dict(base, method=method, psnr=psnr(truth, x), ssim=ssim(truth, x),
                                     seconds=seconds, **extra))
                    print(f"{case:22s} {method:12s} {rows[-1]['psnr']:6.2f} dB  {rows[-1]['ssim']:.3f}  "
                          f"{seconds:6.2f} s", flush=True)

                add("degraded", g, 0.0)
                start = time.perf_counter()
                x, rep = linv.imaging.deblur(g, psf, report=True)
                add("linv", x, time.perf_counter() - start, noise_model=rep["noise_model"],
                    photon_peak=rep["photon_peak"], iterations=rep["iterations"])
                start = time.perf_counter()
                x = linv.imaging.deblur(g, psf, prior="tv", noise_model="gaussian")
                add("linv-gaussian-tv", x, time.perf_counter() - start)
                start = time.perf_counter()
                x, k = richardson_lucy_oracle(g, psf, truth)
                add("rl-oracle", x, (time.perf_counter() - start) * k / 300, iterations=k)
    write_results(args.out, "deblur-poisson", rows)
    methods = ["degraded", "linv", "linv-gaussian-tv", "rl-oracle"]
    print("\nmean PSNR / SSIM")
    print(f"{'set':9s} {'peak':6s} " + " ".join(f"{m:>16s}" for m in methods) + "   linv - rl-oracle (mean, worst)")
    for group in ("tuned", "held-out"):
        for peak in sorted({r["peak"] for r in rows}):
            sel = [r for r in rows if r["set"] == group and r["peak"] == peak]
            if not sel:
                continue
            cells = [f"{np.mean([r['psnr'] for r in sel if r['method'] == m]):7.2f} / "
                     f"{np.mean([r['ssim'] for r in sel if r['method'] == m]):.3f}" for m in methods]
            margins = []
            for case in sorted({r["case"] for r in sel}):
                by = {r["method"]: r["psnr"] for r in sel if r["case"] == case}
                margins.append(by["linv"] - by["rl-oracle"])
            print(f"{group:9s} {peak:<6g} " + " ".join(f"{c:>16s}" for c in cells)
                  + f"   {np.mean(margins):+.2f}, {min(margins):+.2f}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
