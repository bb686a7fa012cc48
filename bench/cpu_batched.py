#!/usr/bin/env python3
"""CPU batched inverse benchmark: `linv bench batched --device cpu` against numpy.linalg.inv on stacks of
the same shapes, side by side in one run.

linv times linv::batched::inv_into on matrices it generates (uniform in [-1, 1]; a warm-up, median of
--repeats); NumPy times numpy.linalg.inv on a stack drawn the same way (a warm-up, median of --repeats).
ratio = numpy seconds / linv seconds (above 1: linv is faster). Writes bench/results/cpu/<name>.json (the
rows format of ../shared/BENCHMARKS.md), with the CPU model and its thread count.

    python3 bench/cpu_batched.py --linv build/bin/linv [--cases 4:1048576,8:100000,...] [--name batched]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_inverse import cpu_name, median_time, write_json  # noqa: E402
from gpu_inverse import git_sha  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def numpy_seconds(n, batch, dtype, repeats):
    a = np.random.default_rng().uniform(-1, 1, (batch, n, n)).astype(dtype)
    return median_time(lambda: np.linalg.inv(a), repeats)[0]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--linv", required=True)
    p.add_argument("--cases", default="4:1048576,8:100000,16:100000,32:65536,64:16384")
    p.add_argument("--dtypes", default="f64,f32")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--name", default="batched", help="results file name, without .json")
    p.add_argument("--out-dir", default=os.path.join(REPO, "bench", "results"))
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rows.json")
        cmd = [args.linv, "bench", "batched", "--device", "cpu", "--cases", args.cases, "--dtypes", args.dtypes,
               "--repeats", str(args.repeats), "--json", path]
        print("running: " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        with open(path) as f:
            linv_rows = json.load(f)["rows"]
    rows = []
    for r in linv_rows:
        dtype = {"f64": np.float64, "f32": np.float32}[r["dtype"]]
        peer = numpy_seconds(r["n"], r["batch"], dtype, args.repeats)
        rows.append({"case": f"batched inverse {'fp64' if r['dtype'] == 'f64' else 'fp32'} (cpu)", "n": r["n"],
                     "batch": r["batch"], "linv_s": r["seconds"], "peer": "numpy.linalg.inv", "peer_s": peer,
                     "ratio": peer / r["seconds"], "linv_error": r["max_scaled_residual"],
                     "method": r["method_used"]})
    result = {"benchmark": "batched-cpu", "device": cpu_name(), "date": datetime.date.today().isoformat(),
              "versions": {"linv": git_sha(), "numpy": np.__version__},
              "command": "python3 bench/cpu_batched.py " + " ".join(sys.argv[1:]), "cpu_threads": os.cpu_count(),
              "rows": rows}
    out = os.path.join(args.out_dir, "cpu", args.name + ".json")
    write_json(result, out)
    print(f"\n{'case':28} {'n':>4} {'batch':>8} {'linv s':>10} {'numpy s':>10} {'ratio':>7}")
    for r in rows:
        print(f"{r['case']:28} {r['n']:>4} {r['batch']:>8} {r['linv_s']:10.4g} {r['peer_s']:10.4g} {r['ratio']:7.2f}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
