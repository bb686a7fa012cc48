"""GPU timing of deblur (Tikhonov, total variation, the nonlocal prior, every default (auto: the noise model
 and the prior as the data call for them), and total variation with the Poisson data term on photon counts
 at 100 per unit) on torch CUDA tensors, as a Python user calls it:
 CUDA events, one warm-up, median of 5; the same image through NumPy on the CPU for agreement and quality.
 Writes the rows schema to the path given, after every row (a run cut short keeps what it measured); a second
 argument keeps only the cases whose name contains it.
    python3 bench/gpu_deblur_tv.py bench/results/h100/deblur-tv.json [motion]"""
import json, os, statistics, time, sys
import numpy as np, torch, linv
from scipy import ndimage
from skimage import data, img_as_float
rows = []
def timed(fn, repeats=5):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(repeats):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); out = fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e) / 1e3)
    return statistics.median(ts), out
for name, n, colour, psf_name in [("astronaut", 512, True, "gaussian"), ("camera", 512, False, "gaussian"),
                                  ("camera", 256, False, "gaussian"), ("camera", 512, False, "motion")]:
    k = linv.imaging.gaussian_psf(9, 2) if psf_name == "gaussian" else linv.imaging.motion_psf(9, 30)
    a = img_as_float(getattr(data, name)())
    a = a[:n, :n] if colour else a[:n, :n]
    b = np.stack([ndimage.convolve(a[..., c], k, mode="reflect") for c in range(3)], -1) if colour else ndimage.convolve(a, k, mode="reflect")
    gaussian = np.clip(b + np.random.default_rng(1).normal(0, 0.01, b.shape), 0, 1)
    counts = np.random.default_rng(1).poisson(100 * np.maximum(b, 0)) / 100
    for prior, g in [("tikhonov", gaussian), ("tv", gaussian), ("nonlocal", gaussian), ("auto", gaussian),
                     ("poisson", counts)]:
        case = f"{name} {n}x{n}{' rgb' if colour else ''} {psf_name} {prior}"
        if len(sys.argv) > 2 and sys.argv[2] not in case:
            continue
        gt = torch.tensor(g, device="cuda", dtype=torch.float64)
        options = (dict(noise_model="poisson") if prior == "poisson" else {} if prior == "auto"
                   else dict(prior=prior, noise_model="gaussian"))
        sec, (f, rep) = timed(lambda: linv.imaging.deblur(gt, k, report=True, **options))
        t0 = time.perf_counter(); fc = linv.imaging.deblur(g, k, **options); cpu_s = time.perf_counter() - t0
        diff = float(np.abs(f.cpu().numpy() - fc).max())
        psnr = lambda x: 10 * np.log10(1 / np.mean((np.clip(x, 0, 1) - a) ** 2))
        row = dict(case=case, gpu_s=sec, cpu16_s=cpu_s, iterations=rep["iterations"],
                   psnr=float(psnr(f.cpu().numpy())), psnr_cpu=float(psnr(fc)), max_gpu_cpu_diff=diff, tv_weight=rep["tv_weight"],
                   prior_ran=rep["prior"], noise_model_ran=rep["noise_model"])
        rows.append(row); print(json.dumps(row), flush=True)
        with open(sys.argv[1] + ".tmp", "w") as out:
            json.dump({"rows": rows}, out, indent=1)
        os.replace(sys.argv[1] + ".tmp", sys.argv[1])
