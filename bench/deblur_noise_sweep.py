#!/usr/bin/env python3
"""Where the automatic choice of lambda could have a cliff: linv.imaging.deblur with every default, swept
finely over the noise level on photographs blurred as a camera blurs them, each result against the degraded
image (PSNR of the output clipped to [0, 1]).

Images: scikit-image photographs, grey, central 256x256 crops; the blur sees a 16-pixel margin of real scene
past the frame (scipy.ndimage.convolve, mode reflect, on the crop with its margin, then the interior kept).
"tuned" images are the ones the rules of lambda auto were looked at on (camera, rocket, brick); "held-out"
images (astronaut, coffee, grass, chelsea) were never looked at while setting them, and are reported apart.
PSFs: Gaussian 9x9 sigma 2, disk radius 3, motion length 9 at 30 degrees (conjugate gradients: slow on
noise-free images), sharpen 0.2. Noise: Gaussian of the given standard deviations, one draw per (image, PSF,
sigma), clipped to [0, 1].

Writes the rows schema of BENCHMARKS.md (bench/results/cpu/deblur-noise-sweep.json by default) and prints a
table: the worst gain over the degraded image and the largest PSNR step between neighbouring noise levels,
per (image set, PSF).

    python3 bench/deblur_noise_sweep.py [--images camera,rocket] [--psfs gaussian,disk] [--sigmas 0,0.01]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

import numpy as np
from scipy import ndimage
from skimage import color, data, img_as_float
from skimage.metrics import peak_signal_noise_ratio

import linv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARGIN = 16
TUNED = ("camera", "rocket", "brick")
HELD_OUT = ("astronaut", "coffee", "grass", "chelsea")
PSFS = {"gaussian": lambda: linv.imaging.gaussian_psf(9, 2), "disk": lambda: linv.imaging.disk_psf(3),
        "motion": lambda: linv.imaging.motion_psf(9, 30), "sharpen": lambda: linv.imaging.sharpen_psf(0.2)}
SIGMAS = (0, 0.001, 0.003, 0.005, 0.008, 0.0095, 0.01, 0.0105, 0.015, 0.02, 0.03, 0.05)


def scene(name, n=256):
    a = img_as_float(getattr(data, name)())
    if a.ndim == 3:
        a = color.rgb2gray(a[..., :3])
    r0, c0 = (a.shape[0] - n) // 2 - MARGIN, (a.shape[1] - n) // 2 - MARGIN
    return np.ascontiguousarray(a[r0:r0 + n + 2 * MARGIN, c0:c0 + n + 2 * MARGIN])


def cases(images, psf_names, sigmas):
    """(image, PSF name, PSF, sigma, truth, g) for each case, degraded as the module's docstring says."""
    for image in images:
        s = scene(image)
        truth = s[MARGIN:-MARGIN, MARGIN:-MARGIN]
        for psf_name in psf_names:
            psf = PSFS[psf_name]()
            blurred = ndimage.convolve(s, psf, mode="reflect")[MARGIN:-MARGIN, MARGIN:-MARGIN]
            for sigma in sigmas:
                rng = np.random.default_rng(int(sigma * 1e6) + 7)
                yield image, psf_name, psf, sigma, truth, np.clip(blurred + rng.normal(0, sigma, blurred.shape), 0, 1)


def write_results(path, benchmark, rows):
    """The rows schema of BENCHMARKS.md at `path` (atomically), with the commit and the command that made it:
    the one writer of the CPU deblurring benchmarks."""
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    result = {"benchmark": benchmark, "date": datetime.date.today().isoformat(), "linv_version": sha, "device": "cpu",
              "command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]), "rows": rows}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as fh:
        json.dump(result, fh, indent=1)
    os.replace(path + ".tmp", path)


def psnr(truth, x):
    return float(peak_signal_noise_ratio(truth, np.clip(x, 0, 1), data_range=1.0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", default=",".join(TUNED + HELD_OUT))
    ap.add_argument("--psfs", default=",".join(PSFS))
    ap.add_argument("--sigmas", default=",".join(map(str, SIGMAS)))
    ap.add_argument("--prior", default="tikhonov", choices=["tikhonov", "tv"])
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "cpu", "deblur-noise-sweep.json"))
    args = ap.parse_args()
    sigmas = [float(s) for s in args.sigmas.split(",")]
    rows = []
    for image, psf_name, psf, sigma, truth, g in cases(args.images.split(","), args.psfs.split(","), sigmas):
        start = time.perf_counter()
        f, report = linv.imaging.deblur(g, psf, prior=args.prior, report=True)
        seconds = time.perf_counter() - start
        row = {"case": f"{image}/{psf_name}/{sigma:g}", "image": image, "prior": args.prior,
               "set": "tuned" if image in TUNED else "held-out", "psf": psf_name, "sigma": sigma,
               "noise_estimate": report["noise_sigma"], "psnr": psnr(truth, f), "psnr_degraded": psnr(truth, g),
               "lambda": report["lambda"], "lambda_from": report["lambda_from"], "seconds": seconds,
               "range": [float(f.min()), float(f.max())]}
        row["gain"] = row["psnr"] - row["psnr_degraded"]
        rows.append(row)
        print(f"{row['case']:28s} est {row['noise_estimate']:.4f} psnr {row['psnr']:6.2f} "
              f"(degraded {row['psnr_degraded']:6.2f}) lambda {row['lambda']:.3g} {seconds:.2f} s "
              f"{row['lambda_from'][:70]}", flush=True)
    write_results(args.out, "deblur-noise-sweep", rows)
    print(f"\n{'set':9s} {'psf':9s} {'worst gain':>10s} {'largest step':>12s}  (dB; step: between neighbouring sigmas)")
    for group in ("tuned", "held-out"):
        for psf_name in args.psfs.split(","):
            worst, step = None, 0.0
            for image in args.images.split(","):
                r = [x for x in rows if x["image"] == image and x["psf"] == psf_name and x["set"] == group]
                if not r:
                    continue
                gains = [x["gain"] for x in r]
                worst = min(gains) if worst is None else min(worst, min(gains))
                step = max([step] + [abs(p["psnr"] - q["psnr"]) for p, q in zip(r, r[1:])])
            if worst is not None:
                print(f"{group:9s} {psf_name:9s} {worst:10.2f} {step:12.2f}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
