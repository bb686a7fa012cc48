#!/usr/bin/env python3
"""Each prior of `linv deblur` on bench/deblur_quality.py's cases (its images, camera-like blur, PSFs and noises,
the same seeds): --prior tikhonov, tv, nonlocal and auto (the defaults), through linv.imaging.deblur. PSNR and
SSIM of the output clipped to [0, 1], per case. Resumes from the results file (a case and prior already there
is not run again), and writes it after every case (atomically).

    python3 bench/deblur_quality_priors.py [--priors auto] [--images phantom,camera-crop]
"""
import argparse
import json
import os
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deblur_quality as dq  # noqa: E402
import linv  # noqa: E402
from deblur_noise_sweep import write_results  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--priors", default="tikhonov,tv,nonlocal,auto")
    ap.add_argument("--images", default="camera-whole,camera-crop,astronaut-whole,astronaut-rgb-crop,coins-crop,"
                                        "phantom")
    ap.add_argument("--linv", default=os.path.join(ROOT, "build", "bin", "linv"), help="for the PSFs and the phantom")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "cpu", "deblur-quality-priors.json"))
    args = ap.parse_args()
    rows = json.load(open(args.out))["rows"] if os.path.exists(args.out) else []
    done = {(r["case"], r["method"]) for r in rows}
    tmp = tempfile.mkdtemp(prefix="linv-dqp-")
    psfs, _ = dq.make_psfs(args.linv, tmp)
    images = args.images.split(",")
    for image, scene in dq.make_scenes(args.linv, tmp, images).items():
        for psf_name, psf in psfs.items():
            if psf_name == "motion" and image.endswith("-whole"):
                continue  # as deblur_quality.py: motion on the crops and the phantom
            for noise in dq.NOISES:
                case = f"{image}/{psf_name}/{noise}"
                truth = scene[dq.MARGIN:-dq.MARGIN, dq.MARGIN:-dq.MARGIN]
                g = dq.add_noise(dq.blur(scene, psf), noise, zlib.crc32(case.encode()))
                for prior in args.priors.split(","):
                    if (case, f"linv-{prior}") in done:
                        continue
                    start = time.perf_counter()
                    f, report = linv.imaging.deblur(g, psf, prior=prior, report=True)
                    seconds = time.perf_counter() - start
                    psnr, ssim = dq.metrics(truth, f)
                    rows.append({"case": case, "image": image, "psf": psf_name, "noise": noise,
                                 "method": f"linv-{prior}", "psnr": psnr, "ssim": ssim, "seconds": seconds,
                                 "prior_ran": report["prior"], "nonlocal_share": report["nonlocal_share"],
                                 "noise_model_ran": report["noise_model"], "robust": report["robust"]})
                    print(f"{case:34s} {prior:9s} {psnr:6.2f} dB  ran {report['prior']}/{report['noise_model']}"
                          f"  {seconds:5.2f} s", flush=True)
                write_results(args.out, "deblur-quality-priors", rows)


if __name__ == "__main__":
    main()
