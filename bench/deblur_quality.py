#!/usr/bin/env python3
"""Deblurring quality on photographs: `linv deblur` (everything automatic) against scikit-image's restorations.

Images (float64 in [0, 1]): scikit-image's camera, astronaut (grey by rgb2gray, and RGB) and coins, each
"whole" (the image resized so that a 256-pixel interior plus a margin of M pixels fills it: camera and
astronaut 512x512 -> 288x288, coins 303x384 -> 288x365; anti-aliased) and "crop" (the middle 128x128 of the
original image, with its real surroundings as the margin), plus the 128x128 modified Shepp-Logan phantom from
`linv degrade phantom:128` (its surround is black, so the margin is zeros).

Camera-like blur: the scene continues past the frame. The image with the margin is blurred by
scipy.ndimage.convolve(mode='reflect') and the interior is kept; the truth is the same interior. So the blur
near the frame saw real scene, which no boundary condition of a restoration knows exactly (the phantom is the
exception: its surround is black and its mirror image is black too). Colour: each channel alike.

PSFs (one array, saved as .npy and given to every method): fspecial('gaussian', 7, 1.5) (computed here,
checked against linv's), fspecial('motion', 9, 30), fspecial('disk', 3), fspecial('unsharp', 0.2) (these three
read from `linv degrade` of a single bright pixel with a zero boundary, cropped to the nonzero block).
Noise after the blur (fixed seeds from the case name): none; Gaussian var 1e-4, 1e-3, 1e-2 (clipped to [0, 1]
as imnoise does); Poisson of peak 255 (poisson(255 x)/255, clipped); salt and pepper 2 % and 5 %.
Motion runs on the crops and the phantom only: linv's automatic path for a PSF without the reflexive
symmetry is conjugate gradients, which runs to its 1000-iteration limit (about 30 s a channel at 256x256) on the
noise-free images.

Methods, on the same degraded image and PSF:
  linv               `linv deblur g.npy -o r.npy --psf psf.npy --report rep.json --quiet` (defaults: lambda auto,
                     reflexive boundary, Laplacian regulariser, robust auto)
  linv-gcv           the same with --lambda gcv
  linv-discrepancy   the same with --lambda discrepancy (exit code 4 is recorded as a failure)
  wiener-oracle      skimage.restoration.wiener(g, psf, balance), balance the best PSNR against the truth on a
                     log grid (41 values, 1e-7 .. 10); colour: per channel, one balance for all three
  unsupervised-wiener  skimage.restoration.unsupervised_wiener(g, psf, rng=seed), per channel
  rl-oracle          skimage.restoration.richardson_lucy(clip(g, 0, 1), psf, num_iter=k), k the best of
                     {1, 2, 5, 10, 20, 30, 50} against the truth; per channel
  degraded           g itself
PSNR and SSIM (skimage.metrics, data_range=1, channel_axis=-1 for colour) of each result clipped to [0, 1].

Writes bench/results/cpu/deblur-quality.json (rows schema) and docs/deblurring-quality.md, and prints the
targets last. --quick runs two crops, the Gaussian PSF and two noises (writes under the temp directory unless
--out/--doc are given).

    python3 bench/deblur_quality.py --linv build/bin/linv [--jobs 2] [--quick]
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one thread a worker
    os.environ.setdefault(_var, "1")

import argparse
import concurrent.futures
import datetime
import importlib.util
import json
import math
import re
import shlex
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np
import scipy
import skimage
from scipy import ndimage
from skimage import color, data, img_as_float, restoration, transform
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
_spec = importlib.util.spec_from_file_location("linv_cpu_inverse", os.path.join(HERE, "cpu_inverse.py"))
cpu_inverse = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cpu_inverse)  # shared helpers (cpu_name, write_json)

MARGIN = 16
WHOLE = 256
CROP = 128
BALANCES = np.logspace(-7, 1, 41)  # 5 a decade; sharpening wants balances below 1e-4
RL_ITERS = (1, 2, 5, 10, 20, 30, 50)
LINV_TIMEOUT = 600

PSFS = {  # name -> (linv spec, description)
    "gaussian": ("gaussian:size=7,sigma=1.5", "fspecial('gaussian', 7, 1.5)"),
    "motion": ("motion:len=9,angle=30", "fspecial('motion', 9, 30)"),
    "disk": ("disk:radius=3", "fspecial('disk', 3)"),
    "sharpen": ("sharpen:alpha=0.2", "fspecial('unsharp', 0.2)"),
}
NOISES = {  # name -> description
    "none": "no noise",
    "gauss1e-4": "Gaussian, variance 1e-4, clipped to [0, 1]",
    "gauss1e-3": "Gaussian, variance 1e-3, clipped to [0, 1]",
    "gauss1e-2": "Gaussian, variance 1e-2, clipped to [0, 1]",
    "poisson255": "Poisson counts of peak 255: poisson(255 x)/255, clipped to [0, 1]",
    "sp2%": "salt and pepper, 2 % of the pixels set to 0 or 1 (half each)",
    "sp5%": "salt and pepper, 5 % of the pixels set to 0 or 1 (half each)",
}
GAUSS_POISSON = ("gauss1e-4", "gauss1e-3", "gauss1e-2", "poisson255")
SALT_PEPPER = ("sp2%", "sp5%")
METHODS = ("degraded", "linv", "linv-gcv", "linv-discrepancy", "wiener-oracle", "unsupervised-wiener", "rl-oracle")
LINV_VARIANTS = {"linv": [], "linv-gcv": ["--lambda", "gcv"], "linv-discrepancy": ["--lambda", "discrepancy"]}


# ---------------------------------------------------------------- images and PSFs

def gaussian_psf(size=7, sigma=1.5):
    """MATLAB's fspecial('gaussian', size, sigma)."""
    x = np.arange(size) - (size - 1) / 2
    xx, yy = np.meshgrid(x, x)
    k = np.exp(-(xx ** 2 + yy ** 2) / (2 * sigma ** 2))
    k[k < np.finfo(float).eps * k.max()] = 0
    return k / k.sum()


def linv_psf(linv, spec, tmp):
    """The kernel linv applies for spec: linv degrade of a single bright pixel, zero boundary, nonzero block."""
    n = 31
    delta = np.zeros((n, n))
    delta[n // 2, n // 2] = 1
    src, dst = os.path.join(tmp, "delta.npy"), os.path.join(tmp, "kernel.npy")
    np.save(src, delta)
    subprocess.run([linv, "degrade", src, "-o", dst, "--psf", spec, "--boundary", "zero", "--quiet"], check=True)
    k = np.load(dst)
    nz = np.argwhere(k != 0)
    lo, hi = nz.min(0), nz.max(0)
    if not np.array_equal(lo + hi, [n - 1, n - 1]):
        raise RuntimeError(f"PSF {spec}: the nonzero block {lo}..{hi} is not centred")
    return np.ascontiguousarray(k[lo[0]:hi[0] + 1, lo[1]:hi[1] + 1])


def make_psfs(linv, tmp):
    psfs = {name: linv_psf(linv, spec, tmp) for name, (spec, _) in PSFS.items() if name != "gaussian"}
    psfs["gaussian"] = gaussian_psf()
    check = linv_psf(linv, PSFS["gaussian"][0], tmp)
    return {name: psfs[name] for name in PSFS}, float(np.abs(check - psfs["gaussian"]).max())


def centre(img, h, w):
    r0, c0 = (img.shape[0] - h) // 2, (img.shape[1] - w) // 2
    return img[r0:r0 + h, c0:c0 + w]


def make_scenes(linv, tmp, names=None):
    """name -> scene with a MARGIN-pixel margin on each side (the truth is its interior)."""
    m2 = 2 * MARGIN
    cam = img_as_float(data.camera())
    astro = img_as_float(data.astronaut())
    astro_grey = color.rgb2gray(astro)
    coins = img_as_float(data.coins())
    whole = (WHOLE + m2, WHOLE + m2)
    coins_whole = (WHOLE + m2, round(coins.shape[1] * (WHOLE + m2) / coins.shape[0]))
    makers = {
        "camera-whole": lambda: transform.resize(cam, whole, anti_aliasing=True),
        "camera-crop": lambda: centre(cam, CROP + m2, CROP + m2),
        "astronaut-whole": lambda: transform.resize(astro_grey, whole, anti_aliasing=True),
        "astronaut-crop": lambda: centre(astro_grey, CROP + m2, CROP + m2),
        "astronaut-rgb-whole": lambda: transform.resize(astro, whole + (3,), anti_aliasing=True),
        "astronaut-rgb-crop": lambda: centre(astro, CROP + m2, CROP + m2),
        "coins-whole": lambda: transform.resize(coins, coins_whole, anti_aliasing=True),
        "coins-crop": lambda: centre(coins, CROP + m2, CROP + m2),
        "phantom": lambda: phantom(linv, tmp),
    }
    return {n: np.clip(np.ascontiguousarray(f(), dtype=np.float64), 0, 1)
            for n, f in makers.items() if names is None or n in names}


def phantom(linv, tmp):
    x, t = os.path.join(tmp, "phantom-x.npy"), os.path.join(tmp, "phantom-t.npy")
    subprocess.run([linv, "degrade", "phantom:128", "-o", x, "--truth", t, "--psf", "box:size=1", "--quiet"],
                   check=True)
    truth = np.load(t).astype(np.float64)
    return np.pad(truth, MARGIN)  # the phantom's surround is black past the frame too


def blur(scene, psf):
    """Camera-like: blur the whole scene (reflect past its edge), keep the interior."""
    def one(ch):
        return ndimage.convolve(ch, psf, mode="reflect")[MARGIN:-MARGIN, MARGIN:-MARGIN]
    if scene.ndim == 3:
        return np.stack([one(scene[..., c]) for c in range(scene.shape[2])], axis=-1)
    return one(scene)


def add_noise(b, noise, seed):
    rng = np.random.default_rng(seed)
    if noise == "none":
        return b.copy()
    if noise.startswith("gauss"):
        var = float(noise[len("gauss"):])
        return np.clip(b + rng.normal(0.0, math.sqrt(var), b.shape), 0, 1)
    if noise == "poisson255":
        return np.clip(rng.poisson(np.clip(b, 0, None) * 255) / 255, 0, 1)
    if noise.startswith("sp"):
        d = float(noise[2:-1]) / 100
        u = rng.random(b.shape)
        g = b.copy()
        g[u < d / 2] = 0
        g[(u >= d / 2) & (u < d)] = 1
        return g
    raise ValueError(noise)


# ---------------------------------------------------------------- methods

def metrics(truth, x):
    x = np.clip(np.nan_to_num(x, nan=0.0, posinf=1.0, neginf=0.0), 0, 1)
    kw = {"data_range": 1.0}
    if truth.ndim == 3:
        kw["channel_axis"] = -1
    return float(peak_signal_noise_ratio(truth, x, data_range=1.0)), float(structural_similarity(truth, x, **kw))


def per_channel(f, g):
    if g.ndim == 3:
        return np.stack([f(g[..., c], c) for c in range(g.shape[2])], axis=-1)
    return f(g, 0)


def run_linv(linv, variant, g_path, psf_path, tmp):
    out, rep = os.path.join(tmp, f"{variant}-r.npy"), os.path.join(tmp, f"{variant}-rep.json")
    cmd = [linv, "deblur", g_path, "-o", out, "--psf", psf_path, "--report", rep, "--quiet"] + LINV_VARIANTS[variant]
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=LINV_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, {"note": f"timed out after {LINV_TIMEOUT} s", "exit_code": None}
    wall = time.perf_counter() - start
    if p.returncode != 0:
        msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
        return None, {"note": f"exit {p.returncode}: {msg[-1] if msg else ''}", "exit_code": p.returncode,
                      "wall_seconds": wall}
    with open(rep) as f:
        r = json.load(f)
    info = {"seconds": r.get("seconds"), "wall_seconds": wall, "lambda": r.get("lambda"),
            "lambda_from": r.get("lambda_from"), "linv_method": r.get("method"), "robust": r.get("robust"),
            "iterations": r.get("iterations"), "noise_sigma": r.get("noise_sigma"), "exit_code": 0}
    notes = [f"{info['linv_method']}"]
    if info["iterations"]:
        notes.append(f"{info['iterations']} iterations")
    if info["robust"]:
        notes.append("robust")
    info["note"] = ", ".join(notes)
    return np.load(out), info


def wiener_oracle(g, psf, truth):
    best = None
    for b in BALANCES:
        start = time.perf_counter()
        x = per_channel(lambda ch, c: restoration.wiener(ch, psf, b), g)
        s = time.perf_counter() - start
        p, ss = metrics(truth, x)
        if best is None or p > best[0]:
            best = (p, ss, s, float(b))
    p, ss, s, b = best
    return {"psnr": p, "ssim": ss, "seconds": s, "param": {"balance": b}, "note": f"balance {b:.3g}"}


def unsupervised(g, psf, truth, seed):
    start = time.perf_counter()
    x = per_channel(lambda ch, c: restoration.unsupervised_wiener(ch, psf, rng=seed + c)[0], g)
    s = time.perf_counter() - start
    p, ss = metrics(truth, x)
    return {"psnr": p, "ssim": ss, "seconds": s, "note": ""}


def rl_oracle(g, psf, truth):
    gc = np.clip(g, 0, 1)
    best = None
    with np.errstate(all="ignore"):
        for k in RL_ITERS:
            start = time.perf_counter()
            x = per_channel(lambda ch, c: restoration.richardson_lucy(ch, psf, num_iter=k), gc)
            s = time.perf_counter() - start
            p, ss = metrics(truth, x)
            if best is None or p > best[0]:
                best = (p, ss, s, k)
    p, ss, s, k = best
    note = f"{k} iterations" + ("; the PSF has negative entries (RL assumes none)" if psf.min() < 0 else "")
    return {"psnr": p, "ssim": ss, "seconds": s, "param": {"num_iter": k}, "note": note}


def run_case(job):
    """All methods on one (image, psf, noise); returns the rows."""
    image, psf_name, noise, scene, psf, linv = (job[k] for k in ("image", "psf", "noise", "scene", "psf_array", "linv"))
    case = f"{image}/{psf_name}/{noise}"
    seed = zlib.crc32(case.encode())
    truth = scene[MARGIN:-MARGIN, MARGIN:-MARGIN]
    g = add_noise(blur(scene, psf), noise, seed)
    base = {"case": case, "image": image, "psf": psf_name, "noise": noise,
            "shape": list(truth.shape)}
    rows = []

    def add(method, res):
        row = dict(base, method=method, psnr=res.get("psnr"), ssim=res.get("ssim"), seconds=res.get("seconds"),
                   **{"lambda": res.get("lambda"), "lambda_from": res.get("lambda_from")}, note=res.get("note", ""))
        for k in ("param", "linv_method", "robust", "iterations", "noise_sigma", "exit_code", "wall_seconds"):
            if k in res:
                row[k] = res[k]
        rows.append(row)

    p, ss = metrics(truth, g)
    add("degraded", {"psnr": p, "ssim": ss, "note": "the degraded image, clipped"})
    with tempfile.TemporaryDirectory(prefix="linv-dq-") as tmp:
        g_path, psf_path = os.path.join(tmp, "g.npy"), os.path.join(tmp, "psf.npy")
        np.save(g_path, g)
        np.save(psf_path, psf)
        for variant in LINV_VARIANTS:
            x, info = run_linv(linv, variant, g_path, psf_path, tmp)
            res = dict(info)
            if x is not None:
                if x.shape != g.shape:
                    res["note"] = f"output shape {x.shape} != input {g.shape}"
                    x = None
                else:
                    res["psnr"], res["ssim"] = metrics(truth, x)
            add(variant, res)
    add("wiener-oracle", wiener_oracle(g, psf, truth))
    add("unsupervised-wiener", unsupervised(g, psf, truth, seed % 100000))
    add("rl-oracle", rl_oracle(g, psf, truth))
    return rows


# ---------------------------------------------------------------- summary

def table(rows):
    out = {}
    for r in rows:
        out.setdefault(r["case"], {})[r["method"]] = r
    return out


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def fmt(v, spec=".2f"):
    return "–" if v is None else format(v, spec)


def psf_spectrum(psf, shape):
    """min and max |H| at the frequencies of the reflexive (DCT) and periodic models on this frame."""
    f = np.abs(np.fft.fft2(psf, (2 * shape[0], 2 * shape[1])))
    return float(f.min()), float(f.max())


def evaluate(rows, psfs, shapes):
    cases = table(rows)

    def ps(case, method):
        r = cases[case].get(method)
        return None if r is None else r["psnr"]

    gp = [c for c, m in cases.items() if m["linv"]["noise"] in GAUSS_POISSON]
    sp = [c for c, m in cases.items() if m["linv"]["noise"] in SALT_PEPPER]
    nf = [c for c, m in cases.items() if m["linv"]["noise"] == "none"]
    targets = {}

    beat = [c for c in gp if ps(c, "linv") is not None and ps(c, "linv") >= ps(c, "unsupervised-wiener")]
    frac = len(beat) / len(gp) if gp else None
    targets["beats_unsupervised_wiener"] = {
        "target": "linv auto >= unsupervised_wiener PSNR in >= 90 % of the Gaussian- and Poisson-noise cases",
        "cases": len(gp), "linv_at_least_as_good": len(beat), "fraction": frac,
        "losses": sorted(set(gp) - set(beat)),
        "status": "not measured" if frac is None else ("met" if frac >= 0.9 else "not met")}

    gaps = [ps(c, "wiener-oracle") - ps(c, "linv") for c in gp if ps(c, "linv") is not None]
    failed = [c for c in gp if ps(c, "linv") is None]
    gap = mean(gaps)
    targets["near_oracle_wiener"] = {
        "target": "linv auto within 0.5 dB of the oracle-tuned wiener on average (Gaussian and Poisson cases)",
        "cases": len(gaps), "mean_gap_db": gap, "median_gap_db": float(np.median(gaps)) if gaps else None,
        "worst_gap_db": max(gaps) if gaps else None, "linv_failures": failed,
        "status": "not measured" if gap is None else ("met" if gap <= 0.5 and not failed else "not met")}

    below = [(c, ps(c, "linv") - ps(c, "degraded")) for c in gp]
    below = [(c, d) for c, d in below if d is not None and d < 0] + [(c, None) for c in failed]
    gains = [(c, None if ps(c, "linv") is None else ps(c, "linv") - ps(c, "degraded")) for c in gp]
    targets["never_below_degraded"] = {
        "target": "linv auto never below the degraded image's PSNR in a Gaussian- or Poisson-noise case",
        "cases": len(gp), "below": len(below), "min_gain_db": min((d for _, d in gains if d is not None), default=None),
        "cases_below": [{"case": c, "gain_db": d} for c, d in sorted(below, key=lambda t: t[1] or -1e9)],
        "status": "met" if not below and gp else ("not measured" if not gp else "not met")}

    sp_gain = [(c, None if ps(c, "linv") is None else ps(c, "linv") - ps(c, "degraded")) for c in sp]
    short = [(c, d) for c, d in sp_gain if d is None or d < 6]
    targets["salt_pepper_gain"] = {
        "target": "salt-and-pepper cases improve by >= 6 dB (linv auto against the degraded image)",
        "cases": len(sp), "reached": len(sp) - len(short),
        "min_gain_db": min((d for _, d in sp_gain if d is not None), default=None),
        "mean_gain_db": mean([d for _, d in sp_gain]),
        "short": [{"case": c, "gain_db": d} for c, d in sorted(short, key=lambda t: t[1] or -1e9)],
        "status": "not measured" if not sp else ("met" if not short else "not met")}

    spectra = {}
    for name, psf in psfs.items():
        lo = min(psf_spectrum(psf, s)[0] for s in shapes)
        hi = max(psf_spectrum(psf, s)[1] for s in shapes)
        spectra[name] = {"min_abs_H": lo, "max_abs_H": hi, "invertible": lo > 1e-12 * hi}
    inv = [c for c in nf if spectra[cases[c]["linv"]["psf"]]["invertible"]]
    nf_rows = {c: ps(c, "linv") for c in inv}
    miss = {c: p for c, p in nf_rows.items() if p is None or p < 40}
    per_psf = {}
    for c in nf:
        psf = cases[c]["linv"]["psf"]
        per_psf.setdefault(psf, []).append(ps(c, "linv"))
    targets["noise_free_40db"] = {
        "target": "noise-free cases: PSNR >= 40 dB where the PSF is invertible",
        "invertible_psfs": sorted(n for n, s in spectra.items() if s["invertible"]),
        "psf_spectra": spectra, "cases": len(inv), "reached": len(inv) - len(miss),
        "phantom": {c: ps(c, "linv") for c in nf if cases[c]["linv"]["image"] == "phantom"},
        "per_psf": {k: {"min": min((v for v in vs if v is not None), default=None),
                        "mean": mean(vs), "max": max((v for v in vs if v is not None), default=None)}
                    for k, vs in per_psf.items()},
        "missed": [{"case": c, "psnr": p} for c, p in sorted(miss.items(), key=lambda t: t[1] or 0)],
        "status": "not measured" if not inv else ("met" if not miss else "not met")}

    by_noise = {n: {m: mean([cases[c][m]["psnr"] for c in cases if cases[c]["linv"]["noise"] == n])
                    for m in METHODS} for n in NOISES if any(cases[c]["linv"]["noise"] == n for c in cases)}
    ssim_by_noise = {n: {m: mean([cases[c][m]["ssim"] for c in cases if cases[c]["linv"]["noise"] == n])
                         for m in METHODS} for n in by_noise}
    by_psf = {p: {m: mean([cases[c][m]["psnr"] for c in cases if cases[c]["linv"]["psf"] == p]) for m in METHODS}
              for p in PSFS if any(cases[c]["linv"]["psf"] == p for c in cases)}
    by_image = {}
    for c in cases:
        by_image.setdefault(cases[c]["linv"]["image"], None)
    by_image = {i: {m: mean([cases[c][m]["psnr"] for c in cases if cases[c]["linv"]["image"] == i]) for m in METHODS}
                for i in by_image}
    failures = [{"case": r["case"], "method": r["method"], "note": r["note"]} for r in rows
                if r["method"].startswith("linv") and r["psnr"] is None]
    far = sorted(((c, ps(c, "wiener-oracle") - ps(c, "linv")) for c in cases if ps(c, "linv") is not None),
                 key=lambda t: -t[1])
    lambda_from = {}
    for c in cases:
        k = (cases[c]["linv"].get("lambda_from") or "failed").split(" (")[0].split(", raised")[0]
        if "raised" in (cases[c]["linv"].get("lambda_from") or ""):
            k += ", raised for holes"
        lambda_from[k] = lambda_from.get(k, 0) + 1
    at_limit = [{"case": r["case"], "method": r["method"], "iterations": r["iterations"]} for r in rows
                if r["method"].startswith("linv") and (r.get("iterations") or 0) >= 1000]
    disc_below = sorted(((c, ps(c, "linv-discrepancy") - ps(c, "degraded")) for c in cases
                         if ps(c, "linv-discrepancy") is not None and ps(c, "linv-discrepancy") < ps(c, "degraded")),
                        key=lambda t: t[1])
    summary = {"cases": len(cases), "linv_auto_lambda_from": lambda_from,
               "linv_auto_same_as_gcv": sum(1 for c in cases if ps(c, "linv") == ps(c, "linv-gcv")),
               "linv_runs_at_iteration_limit": at_limit,
               "linv_discrepancy_below_degraded": [{"case": c, "gain_db": d} for c, d in disc_below],
               "mean_psnr_by_noise": by_noise, "mean_ssim_by_noise": ssim_by_noise,
               "mean_psnr_by_psf": by_psf, "mean_psnr_by_image": by_image, "linv_failures": failures,
               "linv_gap_to_wiener_oracle_worst": [{"case": c, "gap_db": d} for c, d in far[:15] if d > 1],
               "targets": {k: v["status"] for k, v in targets.items()}}
    return targets, summary


def target_lines(targets):
    t = targets
    b, w, d, s, n = (t[k] for k in ("beats_unsupervised_wiener", "near_oracle_wiener", "never_below_degraded",
                                    "salt_pepper_gain", "noise_free_40db"))
    pct = "–" if b["fraction"] is None else f"{100 * b['fraction']:.0f} %"
    return [
        (b["target"], b["status"], f"{b['linv_at_least_as_good']} of {b['cases']} ({pct})"),
        (w["target"], w["status"], f"mean gap {fmt(w['mean_gap_db'])} dB (median {fmt(w['median_gap_db'])}, "
                                   f"worst {fmt(w['worst_gap_db'])}) over {w['cases']} cases"),
        (d["target"], d["status"], f"{d['below']} of {d['cases']} below; smallest gain {fmt(d['min_gain_db'])} dB"),
        (s["target"], s["status"], f"{s['reached']} of {s['cases']} reach 6 dB; gain min {fmt(s['min_gain_db'])}, "
                                   f"mean {fmt(s['mean_gain_db'])} dB"),
        (n["target"], n["status"], f"{n['reached']} of {n['cases']} ({', '.join(n['invertible_psfs'])}); "
                                   + "; ".join(f"{k} {fmt(v['min'], '.1f')}..{fmt(v['max'], '.1f')} dB"
                                               for k, v in n["per_psf"].items())),
    ]


# ---------------------------------------------------------------- markdown

NOTES_BEGIN, NOTES_END = "<!-- notes:begin (kept when the script rewrites this file) -->", "<!-- notes:end -->"
SHORT = {"degraded": "degraded", "linv": "linv", "linv-gcv": "linv gcv", "linv-discrepancy": "linv discr.",
         "wiener-oracle": "wiener*", "unsupervised-wiener": "unsup. wiener", "rl-oracle": "RL*"}


def markdown(result, old_notes):
    rows, targets, summary = result["rows"], result["targets"], result["summary"]
    cases = table(rows)
    L = []
    L.append("# Deblurring quality on photographs: linv against scikit-image")
    L.append("")
    L.append(f"Written by `{result['command']}` on {result['date']} ({result['device']}; linv "
             f"{result['versions']['linv']}, scikit-image {result['versions']['skimage']}, "
             f"{summary['cases']} cases, {result['wall_seconds']:.0f} s). Results: "
             "`bench/results/cpu/deblur-quality.json`.")
    L.append("")
    L.append("## Method")
    m = result["method"]
    L.append(f"- **Images** (float64 in [0, 1]): {m['images']}")
    L.append(f"- **Camera-like blur**: {m['blur']}")
    L.append(f"- **PSFs**: {m['psfs']}")
    L.append(f"- **Noise** after the blur: {m['noise']}")
    L.append(f"- **Grid**: {m['grid']}")
    L.append(f"- **Methods**: {m['methods']}")
    L.append(f"- **Metrics**: {m['metrics']}")
    L.append("")
    L.append("## Targets")
    L.append("| target | status | measured |")
    L.append("|---|---|---|")
    for tgt, status, measured in target_lines(targets):
        L.append(f"| {tgt} | **{status}** | {measured} |")
    n = targets["noise_free_40db"]
    spec = ", ".join(f"{k} {v['min_abs_H']:.1e}" for k, v in n["psf_spectra"].items())
    L.append("")
    L.append(f"Smallest |H| of each PSF on the frames' reflexive/periodic frequency grids (the largest is 1, "
             f"sharpen's 6.3): {spec}. \"Invertible\" counts a PSF whose |H| has no zero there (smallest |H| above "
             "1e-12 of the largest): the Gaussian's and the disk's are invertible only in exact arithmetic.")
    if n["phantom"]:
        L.append("Noise-free phantom (the model is exact there: black past the frame, and black mirrored): "
                 + ", ".join(f"{c.split('/')[1]} {fmt(p, '.1f')} dB" for c, p in n["phantom"].items()) + ".")
    L.append("")
    L.append("## Mean PSNR (dB) by noise")
    head = "| noise | " + " | ".join(SHORT[x] for x in METHODS) + " |"
    L += [head, "|---" * (len(METHODS) + 1) + "|"]
    for noise, vals in summary["mean_psnr_by_noise"].items():
        best = max(v for k, v in vals.items() if v is not None)
        L.append(f"| {noise} | " + " | ".join(("**" + fmt(vals[x]) + "**") if vals[x] == best else fmt(vals[x])
                                            for x in METHODS) + " |")
    L.append("")
    L.append("Mean SSIM by noise:")
    L.append("")
    L += [head, "|---" * (len(METHODS) + 1) + "|"]
    for noise, vals in summary["mean_ssim_by_noise"].items():
        L.append(f"| {noise} | " + " | ".join(fmt(vals[x], ".3f") for x in METHODS) + " |")
    L.append("")
    L.append("## Mean PSNR (dB) by PSF and by image")
    L += ["| PSF | " + " | ".join(SHORT[x] for x in METHODS) + " |", "|---" * (len(METHODS) + 1) + "|"]
    for psf, vals in summary["mean_psnr_by_psf"].items():
        L.append(f"| {psf} | " + " | ".join(fmt(vals[x]) for x in METHODS) + " |")
    L.append("")
    L += ["| image | " + " | ".join(SHORT[x] for x in METHODS) + " |", "|---" * (len(METHODS) + 1) + "|"]
    for img, vals in summary["mean_psnr_by_image"].items():
        L.append(f"| {img} | " + " | ".join(fmt(vals[x]) for x in METHODS) + " |")
    L.append("")
    L.append("(* an oracle: its parameter is tuned against the truth. The motion PSF runs on crops and the phantom "
             "only, so its means are not comparable with the other PSFs'.)")
    L.append("")
    L.append("## Where linv loses")
    w = targets["never_below_degraded"]
    if w["cases_below"]:
        L.append("- Below the degraded image (Gaussian/Poisson noise): " + ", ".join(
            f"`{x['case']}` ({fmt(x['gain_db'], '+.2f')} dB)" for x in w["cases_below"]) + ".")
    s = targets["salt_pepper_gain"]
    if s["short"]:
        L.append("- Salt and pepper short of +6 dB: " + ", ".join(
            f"`{x['case']}` ({fmt(x['gain_db'], '+.2f')} dB)" for x in s["short"]) + ".")
    if summary["linv_gap_to_wiener_oracle_worst"]:
        L.append("- Furthest below the oracle Wiener (all noises): " + ", ".join(
            f"`{x['case']}` ({x['gap_db']:.1f} dB)" for x in summary["linv_gap_to_wiener_oracle_worst"]) + ".")
    lf = summary["linv_auto_lambda_from"]
    L.append(f"- linv auto chose λ by " + ", ".join(f"{k} in {v}" for k, v in lf.items()) + f" of {summary['cases']} "
             f"cases; its result equals `--lambda gcv`'s in {summary['linv_auto_same_as_gcv']}.")
    db = summary["linv_discrepancy_below_degraded"]
    if db:
        L.append(f"- `--lambda discrepancy` ends below the degraded image in {len(db)} cases, worst: " + ", ".join(
            f"`{x['case']}` ({x['gain_db']:+.1f} dB)" for x in db[:8]) + ".")
    def grouped(items, key):
        out = {}
        for x in items:
            out.setdefault(key(x), []).append(x)
        return out

    short_m = {"linv": "auto", "linv-gcv": "gcv", "linv-discrepancy": "discrepancy"}
    al = summary["linv_runs_at_iteration_limit"]
    if al:
        by_case = grouped(al, lambda x: x["case"])
        L.append(f"- Conjugate gradients stopped at the 1000-iteration limit (exit 0) in {len(al)} runs: " + ", ".join(
            f"`{c}` ({', '.join(short_m[x['method']] for x in xs)})" for c, xs in by_case.items()) + ".")
    if summary["linv_failures"]:
        by_msg = grouped(summary["linv_failures"],
                         lambda x: (x["method"], re.sub(r"\(([0-9.e+-]+)\)", "(σ)", x["note"])))
        for (method, msg), xs in by_msg.items():
            L.append(f"- {method} failed in {len(xs)} cases with \"{msg}\": " + ", ".join(f"`{x['case']}`" for x in xs)
                     + ".")
    L.append("")
    L.append(NOTES_BEGIN)
    L.append(old_notes.strip() if old_notes else "")
    L.append(NOTES_END)
    L.append("")
    L.append("## Every case")
    L.append("PSNR dB / SSIM; linv's λ and how it was chosen (GCV; DP: discrepancy principle; min: the smallest λ, "
             "where linv judged GCV's to treat the image as noise; R: robust data term on); "
             "wiener* with its balance, RL* with its iterations.")
    L.append("")
    L.append("| case | degraded | linv | λ | linv gcv | linv discr. | wiener* | unsup. wiener | RL* |")
    L.append("|---|---|---|---|---|---|---|---|---|")

    def cell(r, extra=""):
        if r is None:
            return "–"
        if r["psnr"] is None:
            return "fail"
        return f"{r['psnr']:.2f} / {r['ssim']:.3f}{extra}"

    for c, ms in cases.items():
        li = ms["linv"]
        lam = "–" if li.get("lambda") is None else f"{li['lambda']:.2g} " + short_from(li.get("lambda_from"))
        if li.get("robust"):
            lam += " R"
        wo, rl = ms["wiener-oracle"], ms["rl-oracle"]
        L.append(f"| {c} | {cell(ms['degraded'])} | {cell(li)} | {lam} | {cell(ms['linv-gcv'])} | "
                 f"{cell(ms['linv-discrepancy'])} | {cell(wo, ' (' + format(wo['param']['balance'], '.2g') + ')')} | "
                 f"{cell(ms['unsupervised-wiener'])} | {cell(rl, ' (' + str(rl['param']['num_iter']) + ')')} |")
    L.append("")
    return "\n".join(L)


def short_from(s):
    s = s or ""
    for prefix, short in (("generalised cross-validation", "GCV"), ("discrepancy", "DP"), ("the smallest lambda", "min"),
                          ("given", "given")):
        if s.startswith(prefix):
            return short
    return s


def read_notes(path):
    try:
        text = open(path).read()
    except OSError:
        return ""
    m = re.search(re.escape(NOTES_BEGIN) + r"(.*?)" + re.escape(NOTES_END), text, re.S)
    return m.group(1) if m else ""


# ---------------------------------------------------------------- main

def git_version():
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    dirty = subprocess.run(["git", "diff-index", "--quiet", "HEAD", "--", "src", "include", "apps"],
                           cwd=ROOT).returncode != 0
    return (sha or "unknown") + ("+uncommitted" if dirty else "")


def finish(result, out, doc):
    """Writes the JSON and the markdown, prints the summary and the targets."""
    summary, targets, wall = result["summary"], result["targets"], result["wall_seconds"]
    cpu_inverse.write_json(result, out)
    os.makedirs(os.path.dirname(doc), exist_ok=True)
    text = markdown(result, read_notes(doc))
    with open(doc + ".tmp", "w") as f:
        f.write(text)
    os.replace(doc + ".tmp", doc)

    print()
    print("mean PSNR (dB) by noise:")
    print(f"{'noise':12s}" + "".join(f"{SHORT[m]:>15s}" for m in METHODS))
    for noise, vals in summary["mean_psnr_by_noise"].items():
        print(f"{noise:12s}" + "".join(f"{fmt(vals[m]):>15s}" for m in METHODS))
    print()
    print("mean PSNR (dB) by PSF:")
    for psf, vals in summary["mean_psnr_by_psf"].items():
        print(f"{psf:12s}" + "".join(f"{fmt(vals[m]):>15s}" for m in METHODS))
    if summary["linv_failures"]:
        print()
        print("linv failures: " + "; ".join(f"{x['case']} {x['method']}: {x['note']}" for x in summary["linv_failures"]))
    print()
    print(f"wrote {out} and {doc} (the run took {wall:.0f} s)")
    print()
    print("targets:")
    for tgt, status, measured in target_lines(targets):
        print(f"  {status.upper():8s} {tgt}: {measured}")
    return 0


def rerender(args):
    with open(args.from_json) as f:
        result = json.load(f)
    linv = os.path.abspath(args.linv)
    with tempfile.TemporaryDirectory(prefix="linv-dq-setup-") as tmp:
        psfs, _ = make_psfs(linv, tmp)
    rows = result["rows"]
    names = [p for p in PSFS if any(r["psf"] == p for r in rows)]
    shapes = sorted({tuple(r["shape"][:2]) for r in rows})
    result["targets"], result["summary"] = evaluate(rows, {p: psfs[p] for p in names}, shapes)
    doc = args.doc or os.path.join(ROOT, "docs", "deblurring-quality.md")
    return finish(result, args.out or args.from_json, doc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", default=os.path.join("build", "bin", "linv"))
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="cases run side by side")
    ap.add_argument("--quick", action="store_true", help="two crops, the Gaussian PSF, two noises (a smoke test)")
    ap.add_argument("--out", help="results JSON (default bench/results/cpu/deblur-quality.json; --quick: temp dir)")
    ap.add_argument("--doc", help="markdown (default docs/deblurring-quality.md; --quick: temp dir)")
    ap.add_argument("--from-json", metavar="PATH", help="run nothing: re-evaluate the rows of this results file and "
                                                       "rewrite the JSON (--out, default PATH) and the markdown")
    args = ap.parse_args()
    if args.from_json:
        return rerender(args)
    command = os.environ.get("LINV_BENCH_COMMAND") or shlex.join(["python3", "bench/deblur_quality.py"] + sys.argv[1:])
    linv = os.path.abspath(args.linv)
    if not os.access(linv, os.X_OK):
        sys.exit(f"no linv binary at {linv} (build one, then pass --linv PATH)")
    if args.quick:
        out = args.out or os.path.join(tempfile.gettempdir(), "deblur-quality-quick.json")
        doc = args.doc or os.path.join(tempfile.gettempdir(), "deblurring-quality-quick.md")
    else:
        out = args.out or os.path.join(HERE, "results", "cpu", "deblur-quality.json")
        doc = args.doc or os.path.join(ROOT, "docs", "deblurring-quality.md")

    t0 = time.perf_counter()
    if args.quick:
        images, psf_names, noises = ["camera-crop", "phantom"], ["gaussian"], ["none", "gauss1e-3"]
    else:
        images, psf_names, noises = None, list(PSFS), list(NOISES)
    with tempfile.TemporaryDirectory(prefix="linv-dq-setup-") as tmp:
        psfs, gauss_check = make_psfs(linv, tmp)
        scenes = make_scenes(linv, tmp, images)
    jobs = []
    for image, scene in scenes.items():
        for psf in psf_names:
            if psf == "motion" and image.endswith("-whole"):
                continue  # conjugate gradients to the iteration limit at 256x256: see the docstring
            for noise in noises:
                jobs.append({"image": image, "psf": psf, "noise": noise, "scene": scene, "psf_array": psfs[psf],
                             "linv": linv})
    # the slowest first: motion (conjugate gradients), colour, large
    jobs.sort(key=lambda j: (j["psf"] != "motion", -j["scene"].size))
    print(f"{len(jobs)} cases, {args.jobs} at a time; linv {linv}", flush=True)
    rows = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_case, j): j for j in jobs}
        for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            rs = fut.result()
            rows += rs
            by = {r["method"]: r for r in rs}
            li = by["linv"]
            lam = "fail" if li["psnr"] is None else f"λ {fmt(li['lambda'], '.2g')} {li.get('lambda_from') or ''}"
            print(f"[{i:3d}/{len(jobs)} {time.perf_counter() - t0:6.0f} s] {rs[0]['case']:42s} "
                  + " ".join(f"{SHORT[m]} {fmt(by[m]['psnr'], '.2f')}" for m in METHODS)
                  + f"  ({lam}, {li.get('note', '')})", flush=True)
    order = {(j["image"], j["psf"], j["noise"]): i for i, j in enumerate(
        sorted(jobs, key=lambda j: (list(scenes).index(j["image"]), list(PSFS).index(j["psf"]),
                                    list(NOISES).index(j["noise"]))))}
    rows.sort(key=lambda r: (order[(r["image"], r["psf"], r["noise"])], METHODS.index(r["method"])))
    shapes = {tuple(s.shape[:2]) for s in scenes.values()}
    shapes = [(h - 2 * MARGIN, w - 2 * MARGIN) for h, w in shapes]
    targets, summary = evaluate(rows, {p: psfs[p] for p in psf_names}, shapes)
    wall = time.perf_counter() - t0
    ncpu = os.cpu_count()
    result = {
        "benchmark": "deblur-quality",
        "device": f"cpu ({cpu_inverse.cpu_name()}, {ncpu} cores)",
        "date": datetime.date.today().isoformat(),
        "versions": {"linv": git_version(), "skimage": skimage.__version__, "numpy": np.__version__,
                     "scipy": scipy.__version__, "python": sys.version.split()[0]},
        "command": command,
        "linv_binary": linv,
        "linv_binary_built": datetime.datetime.fromtimestamp(os.path.getmtime(linv), datetime.timezone.utc)
        .isoformat(timespec="seconds"),
        "wall_seconds": wall,
        "method": {
            "images": ("scikit-image's camera, astronaut (grey by rgb2gray, and RGB) and coins: '-whole' is the image "
                       f"resized (anti-aliased) so that a {WHOLE}-pixel-high interior plus a {MARGIN}-pixel margin "
                       f"fills it (camera, astronaut 512x512 -> {WHOLE + 2 * MARGIN}x{WHOLE + 2 * MARGIN}; coins "
                       f"303x384 -> {WHOLE + 2 * MARGIN}x365, interior {WHOLE}x333); '-crop' the middle "
                       f"{CROP}x{CROP} of the original, its real surroundings the margin; 'phantom' linv's 128x128 "
                       "modified Shepp-Logan phantom (`linv degrade phantom:128 --psf box:size=1 --truth`), "
                       "with a black margin."),
            "blur": (f"the image with its margin is blurred by scipy.ndimage.convolve(mode='reflect') and the "
                     f"{MARGIN}-pixel margin cut off; the truth is the same interior. The blur near the frame saw "
                     "real scene, which no restoration's boundary condition knows; colour: each channel alike."),
            "psfs": ("gaussian = fspecial('gaussian', 7, 1.5) computed here (max difference from linv's "
                     f"gaussian:size=7,sigma=1.5: {gauss_check:.1e}); motion = fspecial('motion', 9, 30) (5x9), "
                     "disk = fspecial('disk', 3) (7x7), sharpen = fspecial('unsharp', 0.2) (3x3), these three "
                     "from `linv degrade` of a single bright pixel (zero boundary), cropped to the nonzero block; "
                     "every method gets the same array (linv as --psf psf.npy)."),
            "noise": "; ".join(f"{k}: {v}" for k, v in NOISES.items()) + "; seeds from the CRC-32 of the case name.",
            "grid": ("every image x every PSF x every noise, except motion on the whole (256-pixel) images: linv's "
                     "automatic path for a PSF without reflexive symmetry is conjugate gradients, which runs to its "
                     "1000-iteration limit (about 30 s a channel) on noise-free 256x256 images; motion is measured "
                     "on the crops and the phantom."),
            "methods": ("linv: `linv deblur g.npy -o r.npy --psf psf.npy --report rep.json --quiet` with its "
                        "defaults (lambda auto, reflexive boundary, Laplacian regulariser, robust auto); linv-gcv "
                        "and linv-discrepancy add --lambda gcv / --lambda discrepancy (a non-zero exit is recorded "
                        "as a failure). wiener-oracle: skimage.restoration.wiener(g, psf, balance) (Laplacian "
                        "regulariser, periodic model), balance the best PSNR against the truth over "
                        f"{len(BALANCES)} log-spaced values 1e-7..10 (colour: per channel, one balance); "
                        "unsupervised-wiener: skimage.restoration.unsupervised_wiener(g, psf, rng=seed) per channel; "
                        "rl-oracle: skimage.restoration.richardson_lucy(clip(g, 0, 1), psf, num_iter=k) per "
                        f"channel, k the best of {list(RL_ITERS)} against the truth; degraded: g itself. "
                        "The oracles know the truth, linv and unsupervised_wiener do not."),
            "metrics": ("PSNR and SSIM from skimage.metrics (data_range=1, channel_axis=-1 for colour) of each "
                        "result clipped to [0, 1]. seconds: linv's own report (the solve, not process start); "
                        "skimage: the call at the chosen parameter (per channel summed)."),
            "parallelism": f"{args.jobs} cases side by side, each single-threaded (OMP_NUM_THREADS=1 for linv too)",
            "quick": bool(args.quick),
        },
        "targets": targets,
        "summary": summary,
        "rows": rows,
    }
    return finish(result, out, doc)


if __name__ == "__main__":
    sys.exit(main())
