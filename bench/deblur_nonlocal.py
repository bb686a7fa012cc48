#!/usr/bin/env python3
"""linv's nonlocal prior (`--prior nonlocal`), or with --prior auto its defaults (which take the nonlocal prior
for these cases' Gaussian noise and blurs), on bench/deblur_peers.py's 42 cases, beside the peers that
script measured (read from its results, the same cases drawn from the same seed): BM3D deblurring with the
true sigma and total variation with its weight picked against the truth, and linv's Tikhonov and TV.
Every output clipped to [0, 1]. Writes the rows schema of BENCHMARKS.md (bench/results/cpu/
deblur-nonlocal.json: linv's rows and the peers' rows it was compared with) and prints, per image set and
noise, the mean PSNR / SSIM of each method and linv's margin to the best peer per case.

    python3 bench/deblur_nonlocal.py [--prior auto --out bench/results/cpu/deblur-defaults.json]
                                     [--images camera,rocket] [--psfs gaussian] [--sigmas 0.01]
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deblur_noise_sweep import HELD_OUT, TUNED, cases, psnr, write_results  # noqa: E402
from deblur_peers import ssim  # noqa: E402

import linv  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = ("degraded", "linv", "linv-tv", "bm3d", "tv-oracle")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", default=",".join(TUNED + HELD_OUT))
    ap.add_argument("--psfs", default="gaussian,disk,motion")
    ap.add_argument("--sigmas", default="0.01,0.03")
    ap.add_argument("--peers", default=os.path.join(ROOT, "bench", "results", "cpu", "deblur-peers.json"))
    ap.add_argument("--prior", default="nonlocal", choices=["nonlocal", "auto"])
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "cpu", "deblur-nonlocal.json"))
    args = ap.parse_args()
    method = f"linv-{args.prior}"
    peers = {(r["case"], r["method"]): r for r in json.load(open(args.peers))["rows"]}
    rows = []
    for image, psf_name, psf, sigma, truth, g in cases(args.images.split(","), args.psfs.split(","),
                                                       [float(s) for s in args.sigmas.split(",")]):
        case = f"{image}/{psf_name}/{sigma:g}"
        start = time.perf_counter()
        x, report = linv.imaging.deblur(g, psf, prior=args.prior, report=True)
        seconds = time.perf_counter() - start
        rows.append({"case": case, "image": image, "set": "tuned" if image in TUNED else "held-out",
                     "psf": psf_name, "sigma": sigma, "method": method, "psnr": psnr(truth, x),
                     "ssim": ssim(truth, x), "seconds": seconds, "nonlocal_h": report["nonlocal_h"],
                     "prior_ran": report["prior"], "nonlocal_share": report["nonlocal_share"],
                     "stop": report["stop"]})
        rows.extend(peers[(case, method)] for method in PEERS if (case, method) in peers)
        best = max(peers[(case, m)]["psnr"] for m in ("bm3d", "tv-oracle"))
        print(f"{case:24s} {args.prior} {rows[-len(PEERS) - 1]['psnr']:6.2f} dB  best peer {best:6.2f}  "
              f"tv {peers[(case, 'linv-tv')]['psnr']:6.2f}  {seconds:5.2f} s", flush=True)
    write_results(args.out, f"deblur-{'nonlocal' if args.prior == 'nonlocal' else 'defaults'}", rows)
    print(f"\n{'set':9s} {'sigma':>5s} " + " ".join(f"{m:>15s}" for m in PEERS + (method,))
          + "  margin mean / worst")
    for group in ("tuned", "held-out"):
        for sigma in sorted({r["sigma"] for r in rows}):
            sel = [r for r in rows if r["set"] == group and r["sigma"] == sigma]
            if not sel:
                continue
            means = []
            for m in PEERS + (method,):
                v = [r for r in sel if r["method"] == m]
                means.append(f"{np.mean([r['psnr'] for r in v]):6.2f}/{np.mean([r['ssim'] for r in v]):.3f}")
            margins = [r["psnr"] - max(p["psnr"] for p in sel if p["case"] == r["case"] and p["method"] in
                                       ("bm3d", "tv-oracle")) for r in sel if r["method"] == method]
            print(f"{group:9s} {sigma:5g} " + " ".join(f"{s:>15s}" for s in means)
                  + f"  {np.mean(margins):+.2f} / {np.min(margins):+.2f}")


if __name__ == "__main__":
    main()
