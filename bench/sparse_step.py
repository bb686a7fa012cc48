#!/usr/bin/env python3
"""Sparse least-squares step from a Matrix Market file: `linv pinv J.mtx --structure sparse --apply d.npy`
(CGLS on J in compressed rows, never dense) against what a SciPy or CuPy user writes, on the same files.

The case: a random J (--rows x --cols, --nonzeros entries, every column used, values N(0, 1)) written by
scipy.io.mmwrite (coordinate real general) and d (N(0, 1), 1-D .npy).

- linv: one process per run, `--device cpu` (all the CPU threads) and `--device cuda`; its report's seconds
  (the solve: J uploaded, CGLS, the result back), the process's wall time (start, reading J.mtx and d.npy,
  the solve, writing x.npy), its peak resident memory (wait4) and, on the GPU, the peak of the GPU's used
  memory over the run (nvidia-smi polled every 20 ms) less what was used before it; and the peak resident
  memory of `linv --version`, what loading linv's libraries (CUDA's among them) costs any run.
- peers, each in a process of its own measured the same way: SciPy (scipy.io.mmread, which is
  fast_matrix_market, then scipy.sparse.linalg.lsmr on the CPU) and CuPy (the same read, the CSR matrix
  uploaded, cupyx.scipy.sparse.linalg.lsmr). lsmr stops on its own test (||J^T r|| <= atol ||J|| ||r||): its
  atol is tightened by 10x from --tol until its relative normal-equation residual ||J^T (d - J x)|| / ||J^T d||
  is no larger than linv's, and the run that reaches it is the one timed (after a warm-up run), so both
  solutions are at least as accurate. Their in-process read, upload, solve and write times are recorded.
- ratio = peer seconds / linv seconds: the solve (peer's lsmr, plus its upload on the GPU, against linv's
  report, which includes forming J^T and the uploads); end to end in-process (the peer's read + upload +
  solve + write, after its imports and CUDA's start-up, against linv's whole process wall time, its start-up
  included: a bound in the peer's favour); and process to process (both processes' wall times, each with
  its start-up: Python's imports and CUDA's for the peer).

Writes bench/results/<cpu|h100|h200>/sparse_step.json (and copies it to $OUT/ when OUT is set).

    python3 bench/sparse_step.py --linv build/bin/linv [--devices cpu,cuda] [--repeats 3]
"""
import argparse
import datetime
import importlib.util
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("linv_gpu_inverse", os.path.join(HERE, "gpu_inverse.py"))
inverse_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inverse_bench)  # git_sha, save_result, device_dir
_spec = importlib.util.spec_from_file_location("linv_cpu_inverse", os.path.join(HERE, "cpu_inverse.py"))
cpu_inverse = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cpu_inverse)  # cpu_name


def relative_normal_residual(J, d, x):
    return float(np.linalg.norm(J.T @ (d - J @ x)) / np.linalg.norm(J.T @ d))


# ------------------------------------------------------------------------------------------------ peer


def peer_main(args):
    """In a process of its own: read, (upload,) solve to the target residual, write; prints a JSON line."""
    import scipy.io
    t = time.perf_counter()
    J = scipy.io.mmread(args.matrix).tocsr()
    d = np.load(args.rhs)
    read_s = time.perf_counter() - t
    if args.peer == "cupy":
        import cupy
        import cupyx.scipy.sparse
        import cupyx.scipy.sparse.linalg as linalg
        cupy.zeros(1)  # CUDA's start-up, which linv's wall time includes, is in the process wall time only
        cupy.cuda.Device().synchronize()
        t = time.perf_counter()
        A, b = cupyx.scipy.sparse.csr_matrix(J), cupy.asarray(d)
        cupy.cuda.Device().synchronize()
        upload_s = time.perf_counter() - t
        sync = cupy.cuda.Device().synchronize
        to_host = cupy.asnumpy
    else:
        import scipy.sparse.linalg as linalg
        A, b, upload_s = J, d, 0.0
        sync = lambda: None  # noqa: E731
        to_host = np.asarray

    def solve(atol):
        sync()
        t0 = time.perf_counter()
        out = linalg.lsmr(A, b, atol=atol, btol=atol, maxiter=100000)
        sync()
        return out, time.perf_counter() - t0

    solve(args.tol)  # warm-up (CuPy compiles its kernels on first use)
    atol = args.tol
    while True:
        out, solve_s = solve(atol)
        x = to_host(out[0])
        residual = relative_normal_residual(J, d, x)
        if residual <= args.target or atol < 1e-15:
            break
        atol /= 10
    t = time.perf_counter()
    np.save(args.out, x)
    write_s = time.perf_counter() - t
    print(json.dumps({"read_s": read_s, "upload_s": upload_s, "solve_s": solve_s, "write_s": write_s,
                      "iterations": int(out[2]), "atol": atol, "residual": residual}))


# ------------------------------------------------------------------------------------------------ measuring


class GpuMemory:
    """The peak of the GPU's used memory while a process runs, less what was used before (nvidia-smi)."""

    def __init__(self):
        self.before = self.used()
        self.peak = self.before
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.poll, daemon=True)

    @staticmethod
    def used():
        r = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"],
                           capture_output=True, text=True, check=True)
        return float(r.stdout.split()[0]) * 2**20

    def poll(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, self.used())
            time.sleep(0.02)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def bytes(self):
        return self.peak - self.before


def run_measured(cmd, gpu):
    """(wall seconds, peak resident bytes, GPU bytes or None, stdout) of one process."""
    monitor = GpuMemory() if gpu else None
    if monitor:
        monitor.__enter__()
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    out, err = p.stdout.read(), p.stderr.read()
    if monitor:
        monitor.__exit__()
    if p.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed ({p.returncode}): {err}")
    return wall, usage.ru_maxrss * 1024, monitor.bytes() if monitor else None, out


def median_runs(cmd, gpu, repeats):
    runs = [run_measured(cmd, gpu) for _ in range(repeats + 1)][1:]  # the first warms the file cache
    pick = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
    return pick, [r[0] for r in runs]


def available(module):
    return importlib.util.find_spec(module) is not None


def gpu_name():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"], capture_output=True,
                           text=True, check=True)
        return r.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


# ------------------------------------------------------------------------------------------------ main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", help="the linv binary, e.g. build/bin/linv")
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--cols", type=int, default=50000)
    ap.add_argument("--nonzeros", type=int, default=1050000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--devices", default=None, help="cpu,cuda (default: cuda too where nvidia-smi sees a GPU)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-10, help="linv's CGLS tolerance, and lsmr's first atol")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    # a peer's own process
    ap.add_argument("--peer", choices=["scipy", "cupy"], help=argparse.SUPPRESS)
    ap.add_argument("--matrix", help=argparse.SUPPRESS)
    ap.add_argument("--rhs", help=argparse.SUPPRESS)
    ap.add_argument("--target", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer:
        return peer_main(args)
    if not args.linv:
        ap.error("--linv is required")
    import scipy.io
    import scipy.sparse
    gpu = gpu_name()
    devices = args.devices.split(",") if args.devices else (["cpu", "cuda"] if gpu else ["cpu"])
    command = os.environ.get("LINV_BENCH_COMMAND") or shlex.join(["python3", "bench/sparse_step.py"] + sys.argv[1:])

    rows = []
    with tempfile.TemporaryDirectory(prefix="linv-sparse-") as tmp:
        rng = np.random.default_rng(args.seed)
        n, m, nnz = args.rows, args.cols, args.nonzeros
        r = rng.integers(0, n, nnz)
        c = np.concatenate([np.arange(m), rng.integers(0, m, nnz - m)])  # every column used
        J = scipy.sparse.coo_matrix((rng.standard_normal(nnz), (r, c)), shape=(n, m)).tocsr()
        J.sum_duplicates()
        d = rng.standard_normal(n)
        jpath, dpath = os.path.join(tmp, "J.mtx"), os.path.join(tmp, "d.npy")
        scipy.io.mmwrite(jpath, J)
        np.save(dpath, d)
        case = {"n": n, "m": m, "nonzeros": int(J.nnz), "mtx_bytes": os.path.getsize(jpath),
                "dense_bytes": 8 * n * m}
        print(f"J: {n} x {m}, {J.nnz} nonzeros, {case['mtx_bytes'] / 1e6:.1f} MB .mtx "
              f"(dense: {case['dense_bytes'] / 2**30:.1f} GiB)", flush=True)

        startup_rss = run_measured([args.linv, "--version"], False)[1]  # the libraries' share of every run's memory
        for device in devices:
            on_gpu = device != "cpu"
            xpath, report = os.path.join(tmp, f"x-{device}.npy"), os.path.join(tmp, f"r-{device}.json")
            cmd = [args.linv, "pinv", jpath, "--structure", "sparse", "--apply", dpath, "-o", xpath, "--device",
                   device, "--tol", str(args.tol), "--report", report, "-q"]
            (wall, rss, gpu_bytes, _), walls = median_runs(cmd, on_gpu, args.repeats)
            with open(report) as f:
                rep = json.load(f)
            x = np.load(xpath)
            residual = relative_normal_residual(J, d, x)
            peer = "cupy" if on_gpu else "scipy"
            row = {"case": f"sparse step on {device}", **case, "device": gpu if on_gpu else cpu_inverse.cpu_name(),
                   "linv_s": rep["seconds"], "linv_wall_s": wall, "linv_wall_s_all": walls,
                   "linv_iterations": rep.get("iterations"), "linv_peak_rss_bytes": rss,
                   "linv_gpu_bytes": gpu_bytes, "linv_startup_rss_bytes": startup_rss, "linv_residual": residual,
                   "linv_notes": rep.get("notes", [])}
            if available(peer):
                ppath = os.path.join(tmp, f"p-{device}.npy")
                pcmd = [sys.executable, os.path.abspath(__file__), "--peer", peer, "--matrix", jpath, "--rhs", dpath,
                        "--tol", str(args.tol), "--target", repr(residual), "--out", ppath]
                (pwall, prss, pgpu, out), pwalls = median_runs(pcmd, on_gpu, args.repeats)
                p = json.loads(out.strip().splitlines()[-1])
                peer_solve = p["solve_s"] + p["upload_s"]
                peer_total = p["read_s"] + p["upload_s"] + p["solve_s"] + p["write_s"]
                y = np.load(ppath)
                row.update({"peer": ("cupyx.scipy.sparse.linalg.lsmr" if on_gpu else "scipy.sparse.linalg.lsmr")
                            + " after scipy.io.mmread", "peer_s": peer_solve, "peer_read_s": p["read_s"],
                            "peer_upload_s": p["upload_s"], "peer_write_s": p["write_s"],
                            "peer_total_s": peer_total, "peer_process_wall_s": pwall, "peer_iterations": p["iterations"],
                            "peer_atol": p["atol"], "peer_residual": p["residual"], "peer_peak_rss_bytes": prss,
                            "peer_gpu_bytes": pgpu, "ratio": peer_solve / rep["seconds"],
                            "ratio_end_to_end": peer_total / wall, "ratio_process": pwall / wall,
                            "solution_difference": float(np.abs(x - y).max() / np.abs(y).max())})
            rows.append(row)

    def mb(v):
        return "–" if v is None else f"{v / 2**20:.0f}"

    print(f"\n{'case':<22} {'linv s':>8} {'wall s':>7} {'its':>4} {'RSS MB':>7} {'GPU MB':>7} | {'peer s':>7} "
          f"{'total s':>7} {'its':>4} {'RSS MB':>7} {'GPU MB':>7} | {'ratio':>6} {'e2e':>6} {'proc':>6}")
    for row in rows:
        print(f"{row['case']:<22} {row['linv_s']:8.3f} {row['linv_wall_s']:7.3f} {row['linv_iterations']:>4} "
              f"{mb(row['linv_peak_rss_bytes']):>7} {mb(row['linv_gpu_bytes']):>7} | "
              f"{row.get('peer_s', float('nan')):7.3f} {row.get('peer_total_s', float('nan')):7.3f} "
              f"{row.get('peer_iterations', '–'):>4} {mb(row.get('peer_peak_rss_bytes')):>7} "
              f"{mb(row.get('peer_gpu_bytes')):>7} | {row.get('ratio', float('nan')):6.2f} "
              f"{row.get('ratio_end_to_end', float('nan')):6.2f} {row.get('ratio_process', float('nan')):6.2f}")
    versions = {"linv": inverse_bench.git_sha() or "unknown", "python": sys.version.split()[0],
                "numpy": np.__version__, "scipy": scipy.__version__}
    if available("cupy") and gpu:
        import cupy
        versions["cupy"] = cupy.__version__
    result = {"benchmark": "sparse_step", "device": gpu or cpu_inverse.cpu_name(),
              "date": datetime.date.today().isoformat(), "versions": versions, "command": command,
              "rows": rows}
    inverse_bench.save_result(result, args.out_dir, gpu or "cpu", "sparse_step.json")


if __name__ == "__main__":
    sys.exit(main())
