#!/usr/bin/env python3
"""GPU inverse benchmark: `linv bench inverse --device cuda` against PyTorch and CuPy, in one run.

First `linv bench inverse` runs alone on the GPU (it generates its matrices there and times `linv::inv`,
a call that returns when the inverse is complete, with a host clock after a warm-up, median of --repeats, for every method that applies to each kind:
general: auto, lu, calu, rbt, gauss-jordan; spd: auto, cholesky, cholesky-gets). Then, in this process, the ceilings
(FP64/FP32 matrix-product rate with TF32 off, device-to-device copy bandwidth) and the peers
(bench/peers/torch_cupy.py) on matrices of the same definitions, timed the same way:
    general  entries uniform in [-1, 1]       torch.linalg.inv; cupy.linalg.inv
    spd      G Gᵀ / n + I, G as above         torch.cholesky_inverse(torch.linalg.cholesky); cupy.linalg.inv
The floor of a case is its flops (general 2n³, spd n³) at the dtype's matrix-product rate or its bytes
(A read, X written) at the copy rate, whichever is larger; floor_fraction = floor_s / linv_s; ratio =
peer_s / linv_s (above 1: linv is faster). Errors are the scaled residuals ‖AX − I‖₁ / (n·ε·‖A‖₁·‖X‖₁).

Writes bench/results/<h100|h200|slug>/inverse.json in the format of ../shared/BENCHMARKS.md (and copies
it to $OUT/ when OUT is set), then prints a table and the targets, each met or missed. A peer that cannot
be imported or used is skipped, and that is said in the output and in the JSON.

    python3 bench/gpu_inverse.py --linv build/bin/linv [--sizes 1024,4096,8192,16384] [--dtypes f64,f32]
        [--kinds general,spd] [--methods auto,lu,calu,rbt,gauss-jordan,cholesky,cholesky-gets] [--peers torch,cupy]
        [--repeats 5] [--out-dir bench/results] [--dry-run [--dry-run-device NAME]]

--dry-run runs neither linv nor any GPU code: it fakes linv's report, the peers and the ceilings with
plausible numbers (a fixed seed) and goes through the same rows, table, targets and JSON, written under a
fresh temporary --out-dir unless one is given (never into bench/results by default) and marked
"dry_run": true. It needs neither a GPU, nor PyTorch, nor CuPy.

versions.linv is $LINV_GIT_SHA if set, else `git rev-parse --short HEAD`, else linv's own version.
Exit status: 0, or 1 when linv failed (the peers still run and the JSON is still written).
"""
import argparse
import datetime
import importlib.util
import json
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

_spec = importlib.util.spec_from_file_location("linv_bench_peers", os.path.join(HERE, "peers", "torch_cupy.py"))
peers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(peers)  # imports neither torch nor cupy until a peer is asked for
_spec = importlib.util.spec_from_file_location("linv_cpu_inverse", os.path.join(HERE, "cpu_inverse.py"))
cpu_inverse = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cpu_inverse)
write_json = cpu_inverse.write_json  # one atomic JSON writer for every benchmark
_spec = importlib.util.spec_from_file_location("linv_plot_sweep", os.path.join(HERE, "plot_sweep.py"))
plot_sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plot_sweep)  # imports matplotlib only when asked to plot

KINDS = ("general", "spd")
DTYPES = ("f64", "f32")
KIND_METHODS = {"general": ("auto", "lu", "calu", "rbt", "gauss-jordan"), "spd": ("auto", "cholesky", "cholesky-gets")}
METHODS = ("auto", "lu", "calu", "rbt", "gauss-jordan", "cholesky", "cholesky-gets")
PRIMARY = "torch"
# linv's targets: linv auto against torch.
TARGETS = [
    {"target": "general inverse FP64 >= 1.8x torch at n=16384", "case": "inverse fp64", "n": 16384, "ratio": 1.8},
    {"target": "general inverse FP64 >= 3x torch at n=4096", "case": "inverse fp64", "n": 4096, "ratio": 3.0},
    {"target": "SPD inverse FP64 >= 2.5x torch at n=16384", "case": "spd inverse fp64", "n": 16384, "ratio": 2.5},
    {"target": "FP32 inverse >= 2x torch at n=16384, linv residual <= 10x torch's", "case": "inverse fp32",
     "n": 16384, "ratio": 2.0, "residual_factor": 10.0},
]


def case_name(kind, dtype):
    return ("spd " if kind == "spd" else "") + "inverse " + {"f64": "fp64", "f32": "fp32"}[dtype]


def device_dir(name):
    up = name.upper()
    if "H100" in up:
        return "h100"
    if "H200" in up:
        return "h200"
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"


def floor_seconds(kind, dtype, n, ceil):
    """Flops at the dtype's matrix-product rate or bytes (A read, X written) at the copy rate, the larger."""
    if not ceil:
        return None
    flops = (2.0 if kind == "general" else 1.0) * n ** 3
    rate = ceil["fp64_tflops" if dtype == "f64" else "fp32_tflops"] * 1e12
    nbytes = 2.0 * n * n * peers.ELEM_BYTES[dtype]
    return max(flops / rate, nbytes / (ceil["copy_tbps"] * 1e12))


def list_arg(convert=str):
    """Accepts `--x a,b` and `--x a b` (and both mixed)."""
    return lambda text: [convert(v) for v in text.split(",") if v]


def flatten(lists):
    return [v for sub in lists for v in sub]


def git_sha():
    """$LINV_GIT_SHA, else `git rev-parse --short HEAD` (the GPU machine's copy of the tree may have no .git)."""
    if os.environ.get("LINV_GIT_SHA"):
        return os.environ["LINV_GIT_SHA"]
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO)
        return r.stdout.strip() or None
    except OSError:
        return None


# --------------------------------------------------------------------------------------------- linv


def linv_command(args, json_path):
    return [args.linv, "bench", "inverse", "--device", "cuda", "--sizes", ",".join(map(str, args.sizes)),
            "--dtypes", ",".join(args.dtypes), "--kinds", ",".join(args.kinds),
            "--methods", ",".join(args.methods), "--repeats", str(args.repeats), "--json", json_path]


def run_linv(cmd, json_path, timeout):
    """(linv's report or None, failure dict or None). linv's own output goes straight to ours."""
    print("running: " + shlex.join(cmd), flush=True)
    failure = None
    try:
        rc = subprocess.run(cmd, timeout=timeout).returncode
        if rc != 0:
            failure = {"exit_code": rc, "why": f"linv exited with {rc} (see its message above)"}
    except subprocess.TimeoutExpired:
        failure = {"exit_code": None, "why": f"linv ran past --linv-timeout {timeout} s and was stopped"}
    except OSError as e:
        failure = {"exit_code": None, "why": f"cannot run linv: {e}"}
    data = None
    if os.path.exists(json_path):
        try:
            with open(json_path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            failure = failure or {"exit_code": 0, "why": f"linv's --json file is unreadable: {e}"}
    elif failure is None:
        failure = {"exit_code": 0, "why": "linv wrote no --json file"}
    if failure:
        print(f"LINV FAILED: {failure['why']}; the peers still run, linv's fields are null", flush=True)
    return data, failure


# --------------------------------------------------------------------------------------------- dry run


FAKE_CEILINGS = {"fp64_tflops": 56.9, "fp32_tflops": 51.1, "copy_tbps": 3.0}  # H100, BENCHMARKS.md


def _fake_times(rng, seconds, repeats):
    return [seconds * rng.uniform(0.97, 1.05) for _ in range(repeats)]


def fake_linv(args, device):
    """A report shaped like `linv bench inverse --json`, with made-up but plausible numbers."""
    rng = random.Random(1)
    rows = []
    eff = {"auto": 0.75, "lu": 0.75, "calu": 0.8, "rbt": 0.8, "gauss-jordan": 0.6, "cholesky": 0.7, "cholesky-gets": 0.65}
    for kind in args.kinds:
        for dtype in args.dtypes:
            for n in args.sizes:
                floor = floor_seconds(kind, dtype, n, FAKE_CEILINGS)
                for m in (m for m in KIND_METHODS[kind] if m in args.methods):
                    ts = _fake_times(rng, 2e-4 + floor / (eff[m] * n / (n + 1500)), args.repeats)
                    used = {"general": "lu", "spd": "cholesky"}[kind] if m == "auto" else m
                    rows.append({"kind": kind, "dtype": dtype, "n": n, "method": m, "method_used": used,
                                 "seconds": statistics.median(ts), "seconds_all": ts,
                                 "scaled_residual": rng.uniform(0.3, 4.0) * (3 if dtype == "f32" else 1),
                                 "rcond": rng.uniform(1e-6, 1e-4)})
    return {"device": device, "linv_version": "0.1.0", "rows": rows}


def fake_peer(peer, kind, dtype, n, repeats):
    rng = random.Random(peers.case_seed(kind, dtype, n) * 2 + (peer == "cupy"))
    r = {"peer": peers.PEER_NAMES[(peer, kind)], "kind": kind, "dtype": dtype, "n": n}
    if (peer, kind) in peers.PEER_NOTES:
        r["note"] = peers.PEER_NOTES[(peer, kind)]
    # cupy's SPD peer is a full LU inverse: twice the flops of the Cholesky pair.
    floor = floor_seconds("general" if peer == "cupy" else kind, dtype, n, FAKE_CEILINGS)
    ts = _fake_times(rng, 5e-4 + floor / (0.45 * n / (n + 4096)), repeats)
    r.update(seconds=statistics.median(ts), seconds_all=ts, scaled_residual=rng.uniform(0.3, 4.0))
    return r


# --------------------------------------------------------------------------------------------- rows


def make_row(case, n, method, lr, pr, floor):
    linv_s, peer_s = (lr or {}).get("seconds"), pr.get("seconds")
    row = {"case": case, "n": n, "batch": 1, "linv_s": linv_s, "peer": pr["peer"], "peer_s": peer_s,
           "ratio": peer_s / linv_s if linv_s and peer_s else None,
           "floor_s": floor, "floor_fraction": floor / linv_s if floor and linv_s else None,
           "linv_error": (lr or {}).get("scaled_residual"), "peer_error": pr.get("scaled_residual"),
           "linv_method": method, "method_used": (lr or {}).get("method_used"),
           "linv_rcond": (lr or {}).get("rcond"),
           "linv_s_all": (lr or {}).get("seconds_all"), "peer_s_all": pr.get("seconds_all")}
    if lr is None:
        row["linv_missing"] = "no result from linv for this case"
    if "skipped" in pr:
        row["peer_skipped"] = pr["skipped"]
    if "note" in pr:
        row["peer_note"] = pr["note"]
    return row


def build_rows(args, linv_data, peer_results, ceil):
    """Per (kind, dtype, n): every linv method against torch (auto first), then linv auto against cupy."""
    linv_rows = {(r["kind"], r["dtype"], int(r["n"]), r["method"]): r for r in (linv_data or {}).get("rows", [])}
    rows = []
    for kind in args.kinds:
        for dtype in args.dtypes:
            for n in args.sizes:
                case, floor = case_name(kind, dtype), floor_seconds(kind, dtype, n, ceil)
                for m in (m for m in KIND_METHODS[kind] if m in args.methods):
                    rows.append(make_row(case, n, m, linv_rows.get((kind, dtype, n, m)),
                                         peer_results[(PRIMARY, kind, dtype, n)], floor))
                for p in (p for p in args.peers if p != PRIMARY):
                    rows.append(make_row(case, n, "auto", linv_rows.get((kind, dtype, n, "auto")),
                                         peer_results[(p, kind, dtype, n)], floor))
    return rows


def primary_row(rows, case, n, method="auto"):
    return next((r for r in rows if r["case"] == case and r["n"] == n and r["linv_method"] == method
                 and r["peer"] == peers.PEER_NAMES[(PRIMARY, "spd" if case.startswith("spd") else "general")]),
                None)


def evaluate_targets(rows):
    out = []
    for t in TARGETS:
        r = primary_row(rows, t["case"], t["n"])
        if r is None:
            continue  # that case or size was not run
        res = dict(t, measured_ratio=r["ratio"], linv_error=r["linv_error"], peer_error=r["peer_error"])
        ok_residual = True
        if "residual_factor" in t and r["linv_error"] is not None and r["peer_error"]:
            res["residual_vs_peer"] = r["linv_error"] / r["peer_error"]
            ok_residual = res["residual_vs_peer"] <= t["residual_factor"]
        if r["ratio"] is None or ("residual_factor" in t and "residual_vs_peer" not in res):
            res["status"] = "not measured"
        else:
            res["status"] = "met" if r["ratio"] >= t["ratio"] and ok_residual else "missed"
        out.append(res)
    return out


# --------------------------------------------------------------------------------------------- output


def fmt(v, spec, missing="–"):
    """v formatted by spec, or `missing` right-aligned to the same width."""
    width = int(re.match(r"\d*", spec).group() or 0)
    return missing.rjust(width) if v is None else format(v, spec)


def print_table(rows, targets, status):
    cupy_s = {(r["case"], r["n"]): r["peer_s"] for r in rows if r["peer"].startswith("cupy")}
    head = (f"{'case':17s} {'n':>6s} {'linv method':22s} {'linv s':>9s} {'torch s':>9s} {'ratio':>7s} "
            f"{'floor':>6s} {'linv res':>9s} {'torch res':>9s} {'cupy s':>9s}")
    print()
    print(head)
    print("-" * len(head))
    mine = [r for r in rows if not r["peer"].startswith("cupy")]
    for r in [r for r in mine if r["linv_method"] == "auto"] + [r for r in mine if r["linv_method"] != "auto"]:
        method = r["linv_method"] + (f" -> {r['method_used']}" if r["method_used"] and
                                     r["method_used"] != r["linv_method"] else "")
        auto = r["linv_method"] == "auto"
        print(f"{r['case']:17s} {r['n']:6d} {method:22s} {fmt(r['linv_s'], '9.5f')} {fmt(r['peer_s'], '9.5f')} "
              f"{fmt(r['ratio'], '6.2f', '–')}{'x' if r['ratio'] else ' '} "
              f"{fmt(r['floor_fraction'], '6.0%')} {fmt(r['linv_error'], '9.3g')} {fmt(r['peer_error'], '9.3g')} "
              f"{fmt(cupy_s.get((r['case'], r['n'])) if auto else None, '9.5f', '–' if auto else '')}".rstrip())
    for p, s in status.items():
        if not s["available"]:
            print(f"{p} SKIPPED: {s['reason']}")
    if targets:
        print()
        for t in targets:
            got = "–" if t["measured_ratio"] is None else f"{t['measured_ratio']:.2f}x"
            if "residual_vs_peer" in t:
                got += f", residual {t['residual_vs_peer']:.2f}x torch's"
            print(f"target {t['status'].upper():12s} {t['target']}: {got}")


def torch_result_header(benchmark, status, linv_data, command):
    """The fields every torch-peer benchmark's JSON starts with: what ran, on what, with which versions."""
    torch_ok = status["torch"]["available"]
    device = (peers.device_name(["torch"]) if torch_ok else None) or (linv_data or {}).get("device") or "unknown GPU"
    return {"benchmark": benchmark, "device": device, "date": datetime.date.today().isoformat(),
            "versions": {"linv": git_sha() or "unknown", "cuda": peers.cuda_version(["torch"]) if torch_ok else None,
                         "torch": status["torch"].get("version"), "python": sys.version.split()[0]},
            "command": command}


def torch_time(fn, repeats):
    """(median, all) seconds of fn() by CUDA events, after one warm-up call."""
    import torch
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times), times


def save_result(result, out_dir, device, name):
    """Writes result to out_dir/<device dir>/name (atomically) and, when OUT is set, copies it there."""
    path = os.path.join(out_dir, device_dir(device), name)
    write_json(result, path)
    print(f"wrote {path}")
    if os.environ.get("OUT"):
        os.makedirs(os.environ["OUT"], exist_ok=True)
        shutil.copy(path, os.path.join(os.environ["OUT"], name))
    return path


# ------------------------------------------------------------------- shared by the torch-peer benchmarks


def torch_bench_args(doc, script, add_options, repeats):
    """(options, command line) of a torch-peer benchmark: --linv, the script's own (add_options(parser)),
    --repeats and --out-dir. The command is LINV_BENCH_COMMAND when scripts/bench-gpu ran the script, so
    the results record what a person typed."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", required=True)
    add_options(ap)
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    command = os.environ.get("LINV_BENCH_COMMAND") or shlex.join(["python3", f"bench/{script}"] + sys.argv[1:])
    return args, command


def run_linv_json(cmd, prefix):
    """Runs `cmd --json FILE` (FILE in a temporary directory named from `prefix`), alone on the GPU before
    this process touches it: (linv's report or None, failure dict or None, the command as run)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        path = os.path.join(tmp, "linv.json")
        cmd = cmd + ["--json", path]
        return (*run_linv(cmd, path, None), cmd)


class LinvRuns:
    """The several `linv bench` runs of one benchmark: every command as run (the results' linv_commands) and
    every failure (their linv_failures), while the other runs and the peers go on."""

    def __init__(self):
        self.commands, self.failures = [], []

    def report(self, cmd, json_path):
        """Runs `cmd --json json_path`; linv's report, or None when it failed."""
        cmd = cmd + ["--json", json_path]
        self.commands.append(shlex.join(cmd))
        data, failure = run_linv(cmd, json_path, None)
        if failure:
            self.failures.append(failure)
        return data


def save_torch_result(benchmark, status, linv_data, command, fields, out_dir, **failures):
    """Writes <out_dir>/<device>/<benchmark>.json (and $OUT/): torch_result_header, then `fields`, then those
    of `failures` (linv_failure=..., linv_failures=...) that happened. Returns the result."""
    result = torch_result_header(benchmark, status, linv_data, command)
    result.update(fields)
    result.update({key: value for key, value in failures.items() if value})
    save_result(result, out_dir, result["device"], f"{benchmark}.json")
    return result


def print_summary(lines, targets, measured):
    """The closing table: the given lines (one a row), then each target, met or missed, and measured(t)."""
    print()
    for line in lines:
        print(line)
    for t in targets:
        print(f"target {t['status'].upper()}: {t['target']}: {measured(t)}")


def target_status(value, met):
    """"not measured" when value is None, else "met" or "missed" as met(value) says."""
    return "not measured" if value is None else ("met" if met(value) else "missed")


# --------------------------------------------------------------------------------------------- main


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linv", required=True, help="the linv binary, e.g. build/bin/linv")
    ap.add_argument("--sizes", type=list_arg(int), nargs="+", default=[[1024, 4096, 8192, 16384]])
    ap.add_argument("--dtypes", type=list_arg(), nargs="+", default=[list(DTYPES)])
    ap.add_argument("--kinds", type=list_arg(), nargs="+", default=[list(KINDS)])
    ap.add_argument("--methods", type=list_arg(), nargs="+", default=[list(METHODS)])
    ap.add_argument("--peers", type=list_arg(), nargs="+", default=[list(peers.PEERS)],
                    help="peers to run (torch is the primary peer); the others are reported as not requested")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out-dir", help="results root (default bench/results; a temporary folder with --dry-run)")
    ap.add_argument("--linv-timeout", type=float, help="stop linv after this many seconds")
    ap.add_argument("--plot", help="also draw time against n for linv and each peer as this PNG (bench/plot_sweep.py)")
    ap.add_argument("--dry-run", action="store_true", help="fake linv, the peers and the ceilings (no GPU)")
    ap.add_argument("--dry-run-device", default="NVIDIA H100 80GB HBM3", help="device name --dry-run reports")
    args = ap.parse_args()
    for name, known in (("sizes", None), ("dtypes", DTYPES), ("kinds", KINDS), ("methods", METHODS),
                        ("peers", peers.PEERS)):
        values = list(dict.fromkeys(flatten(getattr(args, name))))  # in order, once each
        bad = [v for v in values if (v not in known if known else v < 1)]
        if bad or not values:
            ap.error(f"--{name}: bad value(s) {bad}" + (f"; known: {','.join(known)}" if known else ""))
        setattr(args, name, values)
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    if not args.dry_run and not os.path.exists(args.linv):
        ap.error(f"--linv {args.linv}: no such file (build it with ./scripts/build)")
    return args


def main():
    args = parse_args()
    command = os.environ.get("LINV_BENCH_COMMAND") or shlex.join(["python3", "bench/gpu_inverse.py"] + sys.argv[1:])

    # 1. linv, alone on the GPU (nothing in this process has touched the GPU yet).
    with tempfile.TemporaryDirectory(prefix="linv-gpu-bench-") as tmp:
        linv_json = os.path.join(tmp, "linv.json")
        cmd = linv_command(args, linv_json)
        if args.dry_run:
            print("dry run: would run: " + shlex.join(cmd), flush=True)
            linv_data, linv_failure = fake_linv(args, args.dry_run_device), None
        else:
            linv_data, linv_failure = run_linv(cmd, linv_json, args.linv_timeout)

    # 2. Which peers can run, the ceilings, then the peers case by case (memory freed after each).
    if args.dry_run:
        status = {p: ({"available": True, "version": "dry-run"} if p in args.peers else None) for p in peers.PEERS}
        ceil, ceil_with = dict(FAKE_CEILINGS), "dry-run"
    else:
        status = {p: (peers.backend(p)[1] if p in args.peers else None) for p in peers.PEERS}
        ceil = peers.ceilings(args.peers)
        ceil_with = ceil.pop("measured_with") if ceil else None
    for p in peers.PEERS:
        if status[p] is None:
            status[p] = {"available": False, "reason": "not requested (--peers)"}
        s = status[p]
        print(f"peer {p}: " + (f"ok ({s['version']})" if s["available"] else f"SKIPPED: {s['reason']}"), flush=True)
    if ceil:
        print(f"ceilings ({ceil_with}): FP64 {ceil['fp64_tflops']} TFLOP/s, FP32 {ceil['fp32_tflops']} TFLOP/s "
              f"(TF32 off), copy {ceil['copy_tbps']} TB/s", flush=True)
    else:
        print("ceilings: SKIPPED (neither torch nor cupy usable): no floors", flush=True)

    peer_results = {}
    for kind in args.kinds:
        for dtype in args.dtypes:
            for n in args.sizes:
                for p in peers.PEERS:
                    if not status[p]["available"]:
                        r = {"peer": peers.PEER_NAMES[(p, kind)], "kind": kind, "dtype": dtype, "n": n,
                             "skipped": status[p]["reason"]}
                        if (p, kind) in peers.PEER_NOTES:
                            r["note"] = peers.PEER_NOTES[(p, kind)]
                    elif args.dry_run:
                        r = fake_peer(p, kind, dtype, n, args.repeats)
                    else:
                        r = peers.inverse(p, kind, dtype, n, args.repeats)
                    peer_results[(p, kind, dtype, n)] = r
                    if status[p]["available"]:
                        what = (f"SKIPPED: {r['skipped']}" if "skipped" in r else
                                f"{r['seconds']:.5f} s  residual {r['scaled_residual']:.3g}")
                        print(f"{case_name(kind, dtype):17s} n={n:5d}  {r['peer']:46s} {what}", flush=True)

    # 3. The results file.
    if args.dry_run:
        device = args.dry_run_device + " (dry run)"
    else:
        device = (peers.device_name(args.peers) if ceil else None) or (linv_data or {}).get("device") or "unknown GPU"
    rows = build_rows(args, linv_data, peer_results, ceil)
    targets = evaluate_targets(rows)
    linv_version = (linv_data or {}).get("linv_version")
    result = {
        "benchmark": "inverse", "device": device, "date": datetime.date.today().isoformat(),
        "versions": {"linv": git_sha() or linv_version or "unknown", "linv_version": linv_version,
                     "cuda": "dry-run" if args.dry_run else peers.cuda_version(args.peers),
                     "torch": status["torch"].get("version"), "cupy": status["cupy"].get("version"),
                     "python": sys.version.split()[0]},
        "command": command,
        "ceilings": ({k: ceil[k] for k in ("fp64_tflops", "fp32_tflops", "copy_tbps")} if ceil else None),
        "method": {"timing": f"CUDA events after one warm-up call, median of {args.repeats}; linv first, alone, "
                             "then the peers in one process",
                   "matrices": "general: uniform [-1, 1]; spd: G G^T / n + I, G uniform [-1, 1]",
                   "floor": "max(flops at the dtype's matmul rate, 2 n^2 elements at the copy rate); "
                            "flops 2n^3 general, n^3 spd",
                   "error": "||A X - I||_1 / (n eps ||A||_1 ||X||_1) in float64, eps of the dtype",
                   "ceilings_measured_with": ceil_with, "linv_command": shlex.join(cmd)},
        "peers": status,
    }
    if linv_failure:
        result["linv_failure"] = linv_failure
    if args.dry_run:
        result["dry_run"] = True
    result["targets"] = targets
    result["rows"] = rows

    out_dir = args.out_dir or (tempfile.mkdtemp(prefix="linv-gpu-bench-dry-") if args.dry_run
                               else os.path.join(HERE, "results"))
    path = os.path.join(out_dir, device_dir(device.replace(" (dry run)", "")), "inverse.json")
    write_json(result, path)
    print(f"wrote {path}")
    if os.environ.get("OUT"):
        if args.dry_run:
            print("dry run: not copied to $OUT")
        else:
            os.makedirs(os.environ["OUT"], exist_ok=True)
            shutil.copy(path, os.path.join(os.environ["OUT"], "inverse.json"))
            print(f"copied to {os.path.join(os.environ['OUT'], 'inverse.json')}")
    if args.plot:
        plot_sweep.plot(result, args.plot)
    if linv_failure:
        print(f"LINV FAILED: {linv_failure['why']}")
    print_table(rows, targets, status)  # last: the table and the targets
    return 1 if linv_failure else 0


if __name__ == "__main__":
    sys.exit(main())
