#!/usr/bin/env python3
"""Peer for `linv adl` (atom-assisted dictionary learning by majorisation-minimisation): the same
iteration in PyTorch, which linv's GPU version is timed against, and a NumPy twin of it that checks the
algorithm against linv on the CPU.

The iteration (include/linv/adl.hpp), X: T×N, D: T×K, S: K×N, the first M atoms assisted by task δ (T×M):
    start   D projected onto the constraints (random normal, seeded, or given), S = 0
    outer   G = DᵀD, c_S = λmax(G), DᵀX;   Ts times: S = soft(S + (DᵀX − G S)/c_S, λ/(2c_S))
            H = SSᵀ, c_D = λmax(H), XSᵀ;   Td times: D = proj(D + (XSᵀ − D H)/c_D)
            f = ‖X‖² − 2⟨D, XSᵀ⟩ + ⟨D, D H⟩ + λ‖S‖₁   (float64, from the products: no extra pass over X)
    proj    assisted atom i: onto the ball of radius √c around δ_i; free atom: onto the ball of radius √c_d
    λ       default 0.5 ‖X‖_F / √(T N)
One code path serves both libraries (`_adl` below, on a small table of operations), so what the NumPy
twin verifies here is what PyTorch runs on the GPU.

Timing (PyTorch on CUDA): CUDA events around a whole call after one warm-up call, median of `repeats`;
TF32 off, so FP32 means FP32. NumPy: a host clock. Run alone it prints one line per case:

    python3 bench/peers/torch_adl.py [--sizes 274x20000] [--iters 10] [--dtype f32,f64] [--device cuda]
                                     [--backend torch|numpy] [--atoms 10] [--repeats 3] [--json OUT.json]

Checking the algorithm against linv (NumPy, float64, the same X and initial dictionary):

    python3 bench/peers/torch_adl.py --backend numpy --check-linv build/bin/linv
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

DTYPES = ("f32", "f64")


class _NumpyOps:
    name = "numpy"

    def __init__(self):
        import numpy as np
        self.np = np

    def array(self, a, dtype):
        return self.np.asarray(a, dtype=self.np.float32 if dtype == "f32" else self.np.float64)

    def zeros(self, rows, cols, like):
        return self.np.zeros((rows, cols), dtype=like.dtype)

    def randn(self, rows, cols, seed, like):
        return self.np.random.default_rng(seed).standard_normal((rows, cols)).astype(like.dtype)

    def largest_eigenvalue(self, A):
        return float(self.np.linalg.eigvalsh(A.astype(self.np.float64))[-1])

    def soft(self, A, t):  # sign(a) max(|a| - t, 0), as a - clip(a, -t, t)
        return A - A.clip(-t, t)

    def at_least(self, x, v):
        return self.np.maximum(x, v)

    def copy(self, A):
        return A.copy()

    def column_norms(self, A):
        return self.np.sqrt((A.astype(self.np.float64) ** 2).sum(axis=0))

    def scale_columns(self, A, s):
        return A * self.np.asarray(s, dtype=A.dtype)[None, :]

    def dot(self, A, B):  # <A, B> in float64
        return float((A.astype(self.np.float64) * B.astype(self.np.float64)).sum())

    def abs_sum(self, A):
        return float(abs(A.astype(self.np.float64)).sum())

    def to_numpy(self, A):
        return A


class _TorchOps:
    name = "torch"

    def __init__(self, device):
        import torch
        self.torch = torch
        self.device = torch.device(device)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

    def array(self, a, dtype):
        t = self.torch.float32 if dtype == "f32" else self.torch.float64
        if isinstance(a, self.torch.Tensor):
            return a.to(device=self.device, dtype=t)
        return self.torch.as_tensor(a, dtype=t, device=self.device)

    def zeros(self, rows, cols, like):
        return self.torch.zeros((rows, cols), dtype=like.dtype, device=self.device)

    def randn(self, rows, cols, seed, like):
        g = self.torch.Generator(device=self.device).manual_seed(seed)
        return self.torch.randn((rows, cols), generator=g, dtype=like.dtype, device=self.device)

    def largest_eigenvalue(self, A):
        return float(self.torch.linalg.eigvalsh(A.double())[-1])

    def soft(self, A, t):
        return A - A.clamp(-t, t)

    def at_least(self, x, v):
        return x.clamp(min=v)

    def copy(self, A):
        return A.clone()

    def column_norms(self, A):
        return self.torch.linalg.vector_norm(A.double(), dim=0)

    def scale_columns(self, A, s):
        return A * s.to(A.dtype)[None, :]

    def dot(self, A, B):
        return float((A.double() * B.double()).sum())

    def abs_sum(self, A):
        return float(A.double().abs().sum())

    def to_numpy(self, A):
        return A.cpu().numpy()


def _project(ops, D, task, c, c_d):
    """Each column of D onto its ball: around task's column (radius √c) for the first M, around 0 (√c_d).
    A column at distance `dist` is scaled by radius / max(dist, radius), i.e. min(1, radius / dist)."""
    M = 0 if task is None else task.shape[1]
    out = ops.copy(D)
    if M > 0:
        E = out[:, :M] - task
        r = math.sqrt(c)
        out[:, :M] = task + ops.scale_columns(E, r / ops.at_least(ops.column_norms(E), r))
    if M < D.shape[1]:
        F = out[:, M:]
        r = math.sqrt(c_d)
        out[:, M:] = ops.scale_columns(F, r / ops.at_least(ops.column_norms(F), r))
    return out


def _adl(ops, X, K, lam, iters, Ts, Td, c_d, seed, task, c, D0):
    """The iteration on `ops`' arrays; returns (D, S, objective history, lambda)."""
    T, N = X.shape
    xx = ops.dot(X, X)
    if lam is None:
        lam = 0.5 * math.sqrt(xx / (T * N))
    D = ops.randn(T, K, seed, X) if D0 is None else D0
    D = _project(ops, D, task, c, c_d)
    S = ops.zeros(K, N, X)
    history = [xx]
    for _ in range(iters):
        G = D.T @ D
        cs = ops.largest_eigenvalue(G)
        DtX = D.T @ X
        for _ in range(Ts):
            if cs > 0:
                S = ops.soft(S + (DtX - G @ S) / cs, lam / (2 * cs))
            else:  # D = 0: S = 0 minimises f
                S = S * 0
        H = S @ S.T
        cd = ops.largest_eigenvalue(H)
        P = X @ S.T
        for _ in range(Td):
            if cd > 0:  # S = 0 leaves f independent of D
                D = _project(ops, D + (P - D @ H) / cd, task, c, c_d)
        history.append(xx - 2 * ops.dot(D, P) + ops.dot(D, D @ H) + lam * ops.abs_sum(S))
    return D, S, history, lam


def adl_numpy(X, K, lam, iters, Ts, Td, c_d, seed, task=None, c=None, D0=None, dtype="f64"):
    ops = _NumpyOps()
    X = ops.array(X, dtype)
    return _adl(ops, X, K, lam, iters, Ts, Td, c_d, seed, None if task is None else ops.array(task, dtype), c,
                None if D0 is None else ops.array(D0, dtype))


def adl_torch(X, K, lam, iters, Ts, Td, c_d, seed, task=None, c=None, D0=None, dtype="f32", device="cuda"):
    """The iteration in PyTorch; X, task and D0 as NumPy arrays or tensors. Returns (D, S, history, lambda)."""
    ops = _TorchOps(device)
    X = ops.array(X, dtype)
    return _adl(ops, X, K, lam, iters, Ts, Td, c_d, seed, None if task is None else ops.array(task, dtype), c,
                None if D0 is None else ops.array(D0, dtype))


# --------------------------------------------------------------------------------------------- timing


def _time(backend, device, X, args, dtype, repeats):
    """Seconds of whole calls (after one warm-up call): CUDA events on a GPU, a host clock otherwise."""
    run = (lambda: adl_numpy(X, args.atoms, None, args.iters, args.inner_s, args.inner_d, 1.0, 1, dtype=dtype)) \
        if backend == "numpy" else \
        (lambda: adl_torch(X, args.atoms, None, args.iters, args.inner_s, args.inner_d, 1.0, 1, dtype=dtype,
                           device=device))
    out = run()
    seconds = []
    cuda = backend == "torch" and device.startswith("cuda")
    if cuda:
        import torch
    for _ in range(repeats):
        out = None
        if cuda:
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = run()
            end.record()
            end.synchronize()
            seconds.append(start.elapsed_time(end) / 1000)
        else:
            t0 = time.perf_counter()
            out = run()
            seconds.append(time.perf_counter() - t0)
    return seconds, out


def bench(args):
    rows = []
    for size in args.sizes.split(","):
        T, N = (int(v) for v in size.lower().split("x"))
        for dtype in args.dtype.split(","):
            if dtype not in DTYPES:
                raise SystemExit(f"--dtype {dtype}: expected f32 or f64")
            if args.backend == "torch":
                try:
                    import torch
                except ImportError as e:
                    rows.append({"peer": "torch", "time_points": T, "voxels": N, "dtype": dtype,
                                 "skipped": f"PyTorch missing: {e}"})
                    print(f"torch T={T} N={N} {dtype}: skipped (PyTorch missing)")
                    continue
                g = torch.Generator(device=args.device).manual_seed(N)
                X = torch.rand((T, N), generator=g, device=args.device,
                               dtype=torch.float32 if dtype == "f32" else torch.float64) * 2 - 1
            else:
                import numpy as np
                X = np.random.default_rng(N).uniform(-1, 1, (T, N)).astype(np.float32 if dtype == "f32" else np.float64)
            seconds, out = _time(args.backend, args.device, X, args, dtype, args.repeats)
            median = statistics.median(seconds)
            rows.append({"peer": "torch" if args.backend == "torch" else "numpy", "device": args.device
                         if args.backend == "torch" else "cpu", "time_points": T, "voxels": N, "atoms": args.atoms,
                         "dtype": dtype, "iterations": args.iters, "coefficient_steps": args.inner_s,
                         "dictionary_steps": args.inner_d, "seconds": median, "seconds_all": seconds,
                         "seconds_per_iteration": median / args.iters, "final_objective": out[2][-1]})
            print(f"{args.backend} T={T} N={N} K={args.atoms} {dtype} {args.iters} iterations "
                  f"(Ts={args.inner_s}, Td={args.inner_d}) {median:9.4f} s, {median / args.iters:.4f} s per iteration",
                  flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows}, f, indent=2)


# --------------------------------------------------------------------------------------------- check


def check_linv(linv, seed=7):
    """Runs linv adl and the NumPy twin (float64) on the same X, task and initial dictionary and compares
    the objective histories, D and S. Returns the largest relative differences."""
    import numpy as np
    rng = np.random.default_rng(seed)
    T, N, K, M, iters, Ts, Td, c, c_d = 60, 500, 6, 2, 30, 10, 10, 0.2, 1.0
    X = rng.standard_normal((T, N))
    task = rng.standard_normal((T, M))
    task /= np.linalg.norm(task, axis=0)
    D0 = rng.standard_normal((T, K))
    with tempfile.TemporaryDirectory() as d:
        p = lambda name: os.path.join(d, name)
        np.save(p("x.npy"), X), np.save(p("task.npy"), task), np.save(p("d0.npy"), D0)
        subprocess.run([linv, "adl", p("x.npy"), "-k", str(K), "--task", p("task.npy"), "--c", str(c), "--cd", str(c_d),
                        "--iters", str(iters), "--inner-s", str(Ts), "--inner-d", str(Td), "--initial", p("d0.npy"),
                        "--dictionary", p("d.npy"), "--codes", p("s.npy"), "--report", p("r.json"), "-q"], check=True)
        with open(p("r.json")) as f:
            report = json.load(f)
        D_linv, S_linv = np.load(p("d.npy")), np.load(p("s.npy"))
    D, S, history, lam = adl_numpy(X, K, None, iters, Ts, Td, c_d, 0, task=task, c=c, D0=D0)
    f_linv = np.array(report["objective"])
    out = {
        "lambda": abs(report["lambda"] - lam) / lam,
        "objective": float(np.max(np.abs(f_linv - np.array(history)) / np.array(history))),
        "dictionary": float(np.linalg.norm(D_linv - D) / np.linalg.norm(D)),
        "codes": float(np.linalg.norm(S_linv - S) / np.linalg.norm(S)),
    }
    # both compute in float64 with different association (BLAS blocking, the fused update): rounding of
    # order (T + N) eps per step, and no amplification by the nonexpansive steps of a well-scaled problem
    bound = 30 * (T + N) * np.finfo(np.float64).eps * iters * (Ts + Td)
    out["bound"] = bound
    out["ok"] = all(out[k] <= bound for k in ("lambda", "objective", "dictionary", "codes"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="274x20000", help="comma-separated TxN (time points x voxels)")
    ap.add_argument("--atoms", type=int, default=10)
    ap.add_argument("--iters", type=int, default=10, help="outer iterations per call")
    ap.add_argument("--inner-s", type=int, default=20, help="coefficient steps per iteration (Ts)")
    ap.add_argument("--inner-d", type=int, default=20, help="dictionary steps per iteration (Td)")
    ap.add_argument("--dtype", default="f32,f64", help="f32, f64 or both")
    ap.add_argument("--device", default="cuda", help="torch device (cuda, cuda:1, cpu)")
    ap.add_argument("--backend", default="torch", choices=("torch", "numpy"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--check-linv", metavar="LINV", help="compare the NumPy twin with this linv binary and exit")
    args = ap.parse_args()
    if args.check_linv:
        result = check_linv(args.check_linv)
        print(json.dumps(result, indent=2))
        sys.exit(0 if result["ok"] else 1)
    bench(args)


if __name__ == "__main__":
    main()
