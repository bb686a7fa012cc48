#!/usr/bin/env python3
"""A PyTorch pipeline that inverts its CUDA tensors with linv.inv instead of torch.linalg.inv.

The pipeline: estimate a covariance matrix from samples on the GPU, invert it (the precision matrix),
and score the samples by their Mahalanobis distance. linv.inv takes the CUDA tensor where it lies and
returns a CUDA tensor on the same GPU (DLPack, no copy through the host), so swapping it in is one line.
The script checks linv's inverse against torch.linalg.inv by the scaled residual
||A X - I||_1 / (n eps ||A||_1 ||X||_1) (LAPACK's test ratio: order 1 is as good as the arithmetic allows)
and times both with CUDA events.

    python3 examples/python/torch_pipeline.py               # n = 2048, float64, on the first GPU
    python3 examples/python/torch_pipeline.py --device cuda:1 --dtype float32

Without PyTorch, or without a GPU that PyTorch and linv can use, it says so and exits 0.
"""
import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

import linv


def scaled_residual(torch, a, x):
    """||A X - I||_1 / (n eps ||A||_1 ||X||_1), computed on the GPU in the matrices' precision."""
    n = a.shape[0]
    eye = torch.eye(n, dtype=a.dtype, device=a.device)
    norm1 = lambda m: torch.linalg.matrix_norm(m, ord=1).item()  # the largest column sum
    return norm1(a @ x - eye) / (n * torch.finfo(a.dtype).eps * norm1(a) * norm1(x))


def gpu_time(torch, fn, repeats):
    """The median milliseconds of fn() on the GPU, by CUDA events around each call, after a warm-up."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="auto", help='"cuda", "cuda:N" or "auto" (the first GPU)')
    parser.add_argument("--out", type=Path, default=None, help="folder for the timings (default: a temp dir)")
    parser.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    parser.add_argument("--small", action="store_true", help="n = 128 and few repeats, for tests")
    args = parser.parse_args()

    try:
        import torch
    except ImportError:
        print("torch_pipeline: skipped, PyTorch is not installed")
        return 0
    if args.device == "cpu":
        print("torch_pipeline: skipped, --device cpu: this example is about CUDA tensors")
        return 0
    if not torch.cuda.is_available():
        print("torch_pipeline: skipped, PyTorch sees no CUDA GPU")
        return 0
    if not linv.info()["gpus"]:
        print(f"torch_pipeline: skipped, linv cannot use a GPU: {linv.info().get('why_no_gpu', 'built without CUDA')}")
        return 0
    gpu = torch.device("cuda" if args.device == "auto" else args.device)
    dtype = getattr(torch, args.dtype)
    n, samples, repeats = (128, 512, 3) if args.small else (2048, 8192, 10)

    # Correlated samples on the GPU: z = W g with g standard normal, so their covariance is W W^T.
    gen = torch.Generator(device=gpu).manual_seed(0)
    w = torch.randn(n, n, device=gpu, dtype=dtype, generator=gen) / n ** 0.5 + torch.eye(n, device=gpu, dtype=dtype)
    z = w @ torch.randn(n, samples, device=gpu, dtype=dtype, generator=gen)

    # The sample covariance (symmetric positive definite when there are more samples than dimensions).
    mean = z.mean(dim=1, keepdim=True)
    cov = (z - mean) @ (z - mean).T / (samples - 1)

    # The step linv replaces: cov_inv = torch.linalg.inv(cov). The tensor stays on its GPU; the result is a
    # torch tensor on the same GPU, ready for the rest of the pipeline.
    precision = linv.inv(cov)
    assert isinstance(precision, torch.Tensor) and precision.device == cov.device and precision.dtype == cov.dtype

    # The rest of the pipeline, in PyTorch: Mahalanobis distances d_i^2 = (z_i - mean)^T P (z_i - mean).
    centred = z - mean
    d2 = ((precision @ centred) * centred).sum(dim=0)
    print(f"{samples} samples of dimension {n} ({args.dtype}) on {torch.cuda.get_device_name(gpu)}: "
          f"mean squared Mahalanobis distance {d2.mean().item():.1f} (about n = {n} expected)")

    # Accuracy: linv's inverse against torch's, by the scaled residual, and their relative difference.
    reference = torch.linalg.inv(cov)
    r_linv, r_torch = scaled_residual(torch, cov, precision), scaled_residual(torch, cov, reference)
    diff = (torch.linalg.matrix_norm(precision - reference, ord=1) / torch.linalg.matrix_norm(reference, ord=1)).item()
    print(f"scaled residual: linv {r_linv:.3g}, torch {r_torch:.3g}; relative difference {diff:.2e} "
          f"(condition number {torch.linalg.cond(cov).item():.3g})")

    # Speed: both on the same tensor, timed by CUDA events on the current stream.
    t_linv = gpu_time(torch, lambda: linv.inv(cov), repeats)
    t_torch = gpu_time(torch, lambda: torch.linalg.inv(cov), repeats)
    print(f"inverse of {n} x {n}: linv.inv {t_linv:.2f} ms, torch.linalg.inv {t_torch:.2f} ms (median of {repeats})")

    out = args.out if args.out is not None else Path(tempfile.mkdtemp(prefix="linv-torch-"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "torch_pipeline.txt").write_text(f"n {n} dtype {args.dtype} linv_ms {t_linv:.4f} torch_ms {t_torch:.4f} "
                                            f"residual_linv {r_linv:.4g} residual_torch {r_torch:.4g}\n")
    # A scaled residual up to a few tens is LAPACK's test suite's threshold for a pass.
    return 0 if r_linv < 30 else 1


if __name__ == "__main__":
    sys.exit(main())
