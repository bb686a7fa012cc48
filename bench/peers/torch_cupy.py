#!/usr/bin/env python3
"""GPU peers for the inverse benchmark: PyTorch and CuPy (both call cuSOLVER/cuBLAS), and the ceilings.

Matrices (the same definitions as `linv bench inverse`, generated on the GPU, never zeros):
    general  entries uniform in [-1, 1]
    spd      G Gᵀ / n + I, G uniform in [-1, 1] (n×n), symmetrised exactly
Peers:
    torch  general: torch.linalg.inv(A)
           spd:     torch.cholesky_inverse(torch.linalg.cholesky(A))   (the pair is timed together)
    cupy   general and spd: cupy.linalg.inv(A)   (an LU inverse, getrf + getrs, also on SPD input)
Each is timed with CUDA events after one warm-up call, median of `repeats`. The scaled residual
‖A X − I‖₁ / (n · ε · ‖A‖₁ · ‖X‖₁) is computed in float64 on the GPU, ε being that of the dtype computed in.
TF32 is off in PyTorch (and CuPy is left at its default, plain FP32 compute), so FP32 means FP32.

Ceilings, measured once: FP64 and FP32 matrix-product rate (torch.matmul, 8192³, 2n³ flops, median of 5
after a warm-up) and device-to-device copy bandwidth (a 2 GiB copy, bytes read + written). CuPy measures
them when PyTorch is missing.

A missing or unusable peer is skipped and said so: every result is a dict, with "skipped" (the reason)
instead of timings. Run alone, it prints the ceilings and one line per peer and case:

    python3 bench/peers/torch_cupy.py [--sizes 1024,4096] [--dtypes f64,f32] [--kinds general,spd]
                                      [--peers torch,cupy] [--repeats 5] [--json OUT.json]
"""
import argparse
import gc
import importlib
import json
import statistics
import sys

EPS = {"f64": 2.220446049250313e-16, "f32": 1.1920928955078125e-07}
ELEM_BYTES = {"f64": 8, "f32": 4}
PEER_NAMES = {
    ("torch", "general"): "torch.linalg.inv",
    ("torch", "spd"): "torch.cholesky_inverse(torch.linalg.cholesky)",
    ("cupy", "general"): "cupy.linalg.inv",
    ("cupy", "spd"): "cupy.linalg.inv",
}
PEER_NOTES = {("cupy", "spd"): "LU inverse (getrf + getrs) applied to the SPD matrix"}
PEERS = ("torch", "cupy")
MATMUL_N = 8192
COPY_BYTES = 2 << 30


def case_seed(kind, dtype, n):
    """A fixed seed per case, so a rerun inverts the same matrices."""
    return (1 if kind == "spd" else 0) * 1_000_003 + (1 if dtype == "f32" else 0) * 7919 + n


# --------------------------------------------------------------------------------------------- backends


class _Backend:
    """What the peers need from torch or cupy: matrices, events, norms, freeing memory."""
    name = ""

    def uniform(self, n, dtype, seed):  # n×n, entries uniform in [-1, 1]
        raise NotImplementedError

    def matrix(self, kind, dtype, n, seed):
        g = self.uniform(n, dtype, seed)
        if kind == "general":
            return g
        a = g @ g.T
        del g
        a = a + a.T  # exact symmetry (a GEMM need not produce it)
        a *= 0.5 / n
        self.add_to_diagonal(a, 1.0)
        return a

    def time(self, fn, repeats):
        """(last result, [seconds]): one warm-up call, then `repeats` calls each between two events."""
        out = fn()
        self.synchronize()
        seconds = []
        for _ in range(repeats):
            out = None  # free the last result before the next call allocates its own
            start, end = self.event(), self.event()
            start.record()
            out = fn()
            end.record()
            end.synchronize()
            seconds.append(self.elapsed(start, end))
        return out, seconds

    def scaled_residual(self, a, x, dtype):
        a64, x64 = self.to_f64(a), self.to_f64(x)
        n = a64.shape[0]
        norm_a, norm_x = self.norm1(a64), self.norm1(x64)
        r = a64 @ x64
        del a64, x64
        self.add_to_diagonal(r, -1.0)
        norm_r = self.norm1(r)
        del r
        return norm_r / (n * EPS[dtype] * norm_a * norm_x)


class TorchBackend(_Backend):
    name = "torch"

    def __init__(self):
        import torch
        self.torch = torch
        # FP32 peers and the FP32 ceiling must be real FP32.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        self.dtypes = {"f64": torch.float64, "f32": torch.float32}
        self.version = torch.__version__

    def uniform(self, n, dtype, seed):
        gen = self.torch.Generator(device="cuda").manual_seed(seed)
        a = self.torch.rand(n, n, generator=gen, device="cuda", dtype=self.dtypes[dtype])
        return a.mul_(2.0).sub_(1.0)

    def add_to_diagonal(self, a, value):
        a.diagonal().add_(value)

    def inverse_fn(self, kind):
        t = self.torch
        if kind == "general":
            return t.linalg.inv
        return lambda a: t.cholesky_inverse(t.linalg.cholesky(a))

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def elapsed(self, start, end):
        return start.elapsed_time(end) / 1e3

    def synchronize(self):
        self.torch.cuda.synchronize()

    def to_f64(self, a):
        return a if a.dtype == self.torch.float64 else a.to(self.torch.float64)

    def norm1(self, a):
        return float(self.torch.linalg.matrix_norm(a, ord=1))

    def filled(self, nbytes):  # a 1-D float32 array of nbytes, not zeros
        return self.torch.rand(nbytes // 4, device="cuda", dtype=self.torch.float32)

    def copy_fn(self, src):
        dst = self.torch.empty_like(src)
        return lambda: dst.copy_(src)

    def free(self):
        gc.collect()
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()

    def device_name(self):
        return self.torch.cuda.get_device_name()

    def cuda_version(self):
        return self.torch.version.cuda


class CupyBackend(_Backend):
    name = "cupy"

    def __init__(self):
        import cupy
        self.cp = cupy
        self.dtypes = {"f64": cupy.float64, "f32": cupy.float32}
        self.version = cupy.__version__

    def uniform(self, n, dtype, seed):
        return self.cp.random.RandomState(seed).uniform(-1.0, 1.0, (n, n), dtype=self.dtypes[dtype])

    def add_to_diagonal(self, a, value):
        a.reshape(-1)[:: a.shape[0] + 1] += value  # a is C-contiguous: reshape is a view

    def inverse_fn(self, kind):
        return self.cp.linalg.inv

    def event(self):
        return self.cp.cuda.Event()

    def elapsed(self, start, end):
        return self.cp.cuda.get_elapsed_time(start, end) / 1e3

    def synchronize(self):
        self.cp.cuda.Device().synchronize()

    def to_f64(self, a):
        return a if a.dtype == self.cp.float64 else a.astype(self.cp.float64)

    def norm1(self, a):
        return float(self.cp.abs(a).sum(axis=0).max())

    def filled(self, nbytes):
        return self.cp.random.RandomState(1).uniform(-1.0, 1.0, nbytes // 4, dtype=self.cp.float32)

    def copy_fn(self, src):
        dst = self.cp.empty_like(src)
        return lambda: dst.data.copy_from_device_async(src.data, src.nbytes)  # cudaMemcpyAsync D2D

    def free(self):
        gc.collect()
        self.synchronize()
        self.cp.get_default_memory_pool().free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()

    def device_name(self):
        name = self.cp.cuda.runtime.getDeviceProperties(self.cp.cuda.Device().id)["name"]
        return name.decode() if isinstance(name, bytes) else name

    def cuda_version(self):
        v = self.cp.cuda.runtime.runtimeGetVersion()
        return f"{v // 1000}.{v % 1000 // 10}"


_BACKENDS = {"torch": TorchBackend, "cupy": CupyBackend}
_loaded = {}


def backend(peer):
    """(backend or None, status dict). The status says the version or why the peer is skipped."""
    if peer not in _loaded:
        try:
            importlib.import_module(peer)
        except Exception as e:  # ImportError, or a broken install failing at import
            _loaded[peer] = (None, {"available": False, "reason": f"cannot import {peer}: {e}"})
            return _loaded[peer]
        try:
            b = _BACKENDS[peer]()
            if peer == "torch" and not b.torch.cuda.is_available():
                raise RuntimeError("torch.cuda.is_available() is False (a CPU-only build, or no GPU)")
            if peer == "cupy" and b.cp.cuda.runtime.getDeviceCount() < 1:
                raise RuntimeError("no CUDA device")
            _loaded[peer] = (b, {"available": True, "version": b.version})
        except Exception as e:
            _loaded[peer] = (None, {"available": False, "reason": f"{peer} unusable: {e}"})
    return _loaded[peer]


def peer_status(peers=PEERS):
    return {p: backend(p)[1] for p in peers}


def first_backend(peers=PEERS):
    return next((b for b in (backend(p)[0] for p in peers) if b is not None), None)


# --------------------------------------------------------------------------------------------- measures


def inverse(peer, kind, dtype, n, repeats=5):
    """Times one peer on one case. Returns a dict: peer, kind, dtype, n and either seconds, seconds_all,
    scaled_residual (and a note) or skipped (why)."""
    result = {"peer": PEER_NAMES[(peer, kind)], "kind": kind, "dtype": dtype, "n": n}
    if (peer, kind) in PEER_NOTES:
        result["note"] = PEER_NOTES[(peer, kind)]
    b, status = backend(peer)
    if b is None:
        result["skipped"] = status["reason"]
        return result
    a = x = None
    try:
        a = b.matrix(kind, dtype, n, case_seed(kind, dtype, n))
        x, seconds = b.time(lambda: b.inverse_fn(kind)(a), repeats)
        result.update(seconds=statistics.median(seconds), seconds_all=seconds,
                      scaled_residual=b.scaled_residual(a, x, dtype))
    except Exception as e:  # out of memory, a cuSOLVER failure: say so and go on with the next case
        result["skipped"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    finally:
        del a, x
        b.free()
    return result


def ceilings(peers=PEERS, repeats=5):
    """{fp64_tflops, fp32_tflops, copy_tbps, measured_with} from the first usable peer, or None."""
    b = first_backend(peers)
    if b is None:
        return None
    out = {}
    try:
        for dtype in ("f64", "f32"):
            x = b.uniform(MATMUL_N, dtype, 11)
            y = b.uniform(MATMUL_N, dtype, 12)
            _, seconds = b.time(lambda: x @ y, repeats)
            out[f"{'fp64' if dtype == 'f64' else 'fp32'}_tflops"] = \
                round(2.0 * MATMUL_N ** 3 / statistics.median(seconds) / 1e12, 2)
            del x, y
            b.free()
        src = b.filled(COPY_BYTES)
        _, seconds = b.time(b.copy_fn(src), repeats)
        out["copy_tbps"] = round(2.0 * COPY_BYTES / statistics.median(seconds) / 1e12, 3)
        del src
    finally:
        b.free()
    out["measured_with"] = b.name
    return out


def device_name(peers=PEERS):
    b = first_backend(peers)
    return b.device_name() if b is not None else None


def cuda_version(peers=PEERS):
    b = first_backend(peers)
    return b.cuda_version() if b is not None else None


# --------------------------------------------------------------------------------------------- alone


def csv_list(text):
    return [s for s in text.split(",") if s]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=lambda s: [int(v) for v in csv_list(s)], default=[1024, 4096])
    ap.add_argument("--dtypes", type=csv_list, default=["f64", "f32"])
    ap.add_argument("--kinds", type=csv_list, default=["general", "spd"])
    ap.add_argument("--peers", type=csv_list, default=list(PEERS))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", help="also write everything to this file")
    args = ap.parse_args()
    unknown = set(args.peers) - set(PEERS)
    if unknown:
        ap.error(f"unknown peers {sorted(unknown)}; known: {', '.join(PEERS)}")

    status = peer_status(args.peers)
    for p, s in status.items():
        print(f"{p}: " + (s["version"] if s["available"] else "SKIPPED, " + s["reason"]), flush=True)
    ceil = ceilings(args.peers)
    print(f"device: {device_name(args.peers)}  ceilings: {ceil}", flush=True)
    results = []
    for kind in args.kinds:
        for dtype in args.dtypes:
            for n in args.sizes:
                for p in args.peers:
                    r = inverse(p, kind, dtype, n, args.repeats)
                    results.append(r)
                    what = (f"skipped: {r['skipped']}" if "skipped" in r
                            else f"{r['seconds']:.5f} s  residual {r['scaled_residual']:.3g}")
                    print(f"{kind:7s} {dtype} n={n:5d}  {r['peer']:46s} {what}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device_name(args.peers), "peers": status, "ceilings": ceil,
                       "results": results}, f, indent=2)
            f.write("\n")
    return 0 if any(s["available"] for s in status.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
