#!/usr/bin/env python3
"""End-to-end tests of `linv inv|solve --distributed` under mpiexec (ScaLAPACK over Open MPI), and of
`--devices` without GPUs: results checked against NumPy with bounds scaled by n * eps * cond, exit codes,
one error message per job, reports from process 0 only, and outputs that land whole or not at all; and of
`linv parafac2` with its slabs dealt out over processes and of `linv adl` and `linv ksvd` with their
voxels dealt out (MPI, and CPU processes linv starts), against the one-process fit.

Run: python3 tests/cli/test_distributed_cli.py --linv build/bin/linv --mpiexec mpiexec   (ctest does this)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402  (its run() and cond1())
from test_cli import cond1  # noqa: E402

LINV = None
MPIEXEC = None
THRESHOLD = 30.0  # LAPACK's test threshold for scaled ratios
# Open MPI refuses to start as root unless told (CI runs as root), and runs more processes than cores only
# when told.
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")


def mpirun(processes, *args, expect=0):
    """Runs linv as an MPI job; asserts the exit code; returns (stdout, stderr)."""
    cmd = [MPIEXEC, "-n", str(processes), LINV, *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=ENV)
    if p.returncode != expect:
        raise AssertionError(f"{' '.join(cmd)}: exit {p.returncode}, expected {expect}\n"
                             f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p.stdout, p.stderr


def linv(*args, expect=0):
    """One linv process, as tests/cli/test_cli.py runs them."""
    test_cli.LINV = LINV
    return test_cli.run(*args, expect=expect)


class Distributed(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.rng = np.random.default_rng()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_inverse_and_solve_follow_numpy_on_every_grid(self):
        n = 157
        a = self.rng.uniform(-1, 1, (n, n))
        b = self.rng.uniform(-1, 1, (n, 3))
        np.save(self.path("A.npy"), a)  # C order, as NumPy writes
        np.save(self.path("Af.npy"), np.asfortranarray(a))
        np.save(self.path("B.npy"), b)
        bound = THRESHOLD * n * np.finfo(float).eps * cond1(a)
        for processes, grid in ((1, None), (2, None), (4, "2x2"), (3, "3x1")):
            extra = ["--grid", grid] if grid else []
            with self.subTest(processes=processes, grid=grid):
                mpirun(processes, "inv", self.path("A.npy"), "-o", self.path("X.npy"), "--distributed", "--block", 16,
                       "--report", self.path("r.json"), *extra)
                x = np.load(self.path("X.npy"))
                self.assertLess(np.abs(x - np.linalg.inv(a)).sum(0).max() / np.abs(np.linalg.inv(a)).sum(0).max(),
                                bound)
                report = json.load(open(self.path("r.json")))
                self.assertEqual(report["distributed"]["processes"], processes)
                self.assertLessEqual(report["scaled_residual"], THRESHOLD)
                self.assertAlmostEqual(np.log10(report["rcond"]), np.log10(1 / cond1(a)), places=3)
                mpirun(processes, "solve", self.path("Af.npy"), self.path("B.npy"), "-o", self.path("Y.npy"),
                       "--distributed", "--block", 32, "-q", *extra)
                y = np.load(self.path("Y.npy"))
                want = np.linalg.solve(a, b)
                self.assertLess(np.abs(y - want).sum(0).max() / np.abs(want).sum(0).max(), bound)
                # a 1-D right-hand side gives a 1-D solution, as on one process
                np.save(self.path("v.npy"), b[:, 0])
                mpirun(processes, "solve", self.path("Af.npy"), self.path("v.npy"), "-o", self.path("z.npy"),
                       "--distributed", "--block", 32, "-q", *extra)
                z = np.load(self.path("z.npy"))
                self.assertEqual(z.shape, (n,))
                self.assertLess(np.abs(z - want[:, 0]).max() / np.abs(want[:, 0]).max(), bound)

    def test_spd_matrices_take_cholesky_and_float32_stays_float32(self):
        n = 90
        g = self.rng.uniform(-1, 1, (n, n))
        s = g @ g.T / n + np.eye(n)
        np.save(self.path("S.npy"), s)
        mpirun(2, "inv", self.path("S.npy"), "-o", self.path("X.npy"), "--distributed", "--report", self.path("r.json"))
        self.assertEqual(json.load(open(self.path("r.json")))["method"], "cholesky")
        np.save(self.path("F.npy"), self.rng.uniform(-1, 1, (40, 40)).astype(np.float32))
        mpirun(2, "inv", self.path("F.npy"), "-o", self.path("XF.npy"), "--distributed", "-q")
        self.assertEqual(np.load(self.path("XF.npy")).dtype, np.float32)

    def test_failures_say_one_thing_and_leave_outputs_alone(self):
        n = 60
        a = self.rng.uniform(-1, 1, (n, n))
        a[:, 17] = 0  # exactly singular: column 18
        np.save(self.path("S.npy"), a)
        np.save(self.path("X.npy"), np.arange(3.0))  # an earlier result, to be kept
        before = open(self.path("X.npy"), "rb").read()
        _, err = mpirun(3, "inv", self.path("S.npy"), "-o", self.path("X.npy"), "--distributed", expect=4)
        self.assertIn("pivot 18", err)
        self.assertEqual(err.count("linv: error"), 1, err)  # process 0 speaks for the job
        self.assertEqual(open(self.path("X.npy"), "rb").read(), before)
        self.assertEqual([f for f in os.listdir(self.dir.name) if f.startswith(".") or "tmp" in f], [])
        # usage: a grid that does not fit the job, a shape that does not fit, a method the engine lacks
        np.save(self.path("A.npy"), self.rng.uniform(-1, 1, (n, n)))
        np.save(self.path("R.npy"), self.rng.uniform(-1, 1, (n + 1, 2)))
        mpirun(3, "inv", self.path("A.npy"), "-o", self.path("Y.npy"), "--distributed", "--grid", "2x2", expect=2)
        _, err = mpirun(2, "solve", self.path("A.npy"), self.path("R.npy"), "-o", self.path("Y.npy"), "--distributed",
                        expect=2)
        self.assertIn(f"{n}x{n}", err)
        mpirun(2, "inv", self.path("A.npy"), "-o", self.path("Y.npy"), "--distributed", "--method", "gauss-jordan",
               expect=2)
        # input: a file that is not there, one that is not .npy
        mpirun(2, "inv", self.path("missing.npy"), "-o", self.path("Y.npy"), "--distributed", expect=3)
        self.assertFalse(os.path.exists(self.path("Y.npy")))

    def test_local_jobs_need_an_engine_for_their_devices(self):
        np.save(self.path("A.npy"), self.rng.uniform(-1, 1, (20, 20)))
        # CPU processes started by linv have no MPI job for ScaLAPACK: said, not hung
        _, err = linv("inv", self.path("A.npy"), "-o", self.path("X.npy"), "--devices", "cpu,cpu", expect=5)
        self.assertIn("MPI", err)
        linv("inv", self.path("A.npy"), "-o", self.path("X.npy"), "--devices", "cpu,cpu", "--distributed", expect=2)

    def test_parafac2_over_processes_is_the_one_process_fit(self):
        # a PARAFAC2 model plus noise: 5 subjects of 20 time points, 100 to 140 voxels
        I, F, K = 20, 3, 5
        A = self.rng.standard_normal((I, F))
        H = np.linalg.qr(self.rng.standard_normal((F, F)))[0]
        C = self.rng.uniform(0.2, 1.2, (K, F))
        files = []
        for k in range(K):
            P = np.linalg.qr(self.rng.standard_normal((100 + 10 * k, F)))[0]
            X = A @ np.diag(C[k]) @ (P @ H).T
            files.append(self.path(f"x{k}.npy"))
            np.save(files[-1], X + 0.05 * np.abs(X).max() * self.rng.standard_normal(X.shape))
        np.save(self.path("stack.npy"), np.stack([np.load(f)[:, :100] for f in files]))
        common = ["-F", F, "--tol", 0, "--iters", 40, "-q"]
        for inputs in (files, [self.path("stack.npy")]):
            linv("parafac2", *inputs, "-o", self.path("one"), "--device", "cpu", *common)
            one = {n: np.load(self.path(f"one/{n}.npy")) for n in ("A", "H", "C")}
            for how, run in (("mpiexec -n 2", lambda *a: mpirun(2, *a, "--distributed", "--device", "cpu")),
                             ("mpiexec -n 4", lambda *a: mpirun(4, *a, "--distributed")),
                             ("--devices cpu,cpu,cpu", lambda *a: linv(*a, "--devices", "cpu,cpu,cpu"))):
                with self.subTest(inputs=len(inputs), how=how):
                    out = self.path("many")
                    run("parafac2", *inputs, "-o", out, *common)
                    # the same iterations, the sums added in another order: float64 rounding, amplified by
                    # 40 iterations and the conditioning of the ALS steps (1e-9, as the GPU's tests allow)
                    for name, want in one.items():
                        got = np.load(os.path.join(out, f"{name}.npy"))
                        self.assertLess(np.abs(got - want).max() / np.abs(want).max(), 1e-9, name)
                    for k in range(K):
                        want = np.load(self.path(f"one/P_{k}.npy"))
                        got = np.load(os.path.join(out, f"P_{k}.npy"))
                        self.assertLess(np.abs(got - want).max(), 1e-7, f"P_{k}")
                    with open(os.path.join(out, "report.json")) as f:
                        report = json.load(f)
                    self.assertGreater(report["distributed"]["processes"], 1)
                    self.assertEqual(report["slabs"], K)
                    self.assertEqual(len(report["columns"]), K)
        # more processes than slabs, and a slab of other rows: refused, one message for the job, no output
        _, err = mpirun(2, "parafac2", files[0], "-o", self.path("bad"), "-F", F, "--distributed", expect=2)
        self.assertEqual(err.count("linv: error"), 1, err)
        self.assertIn("2 processes", err)
        np.save(self.path("short.npy"), self.rng.standard_normal((I - 1, 50)))
        _, err = mpirun(2, "parafac2", files[0], self.path("short.npy"), "-o", self.path("bad"), "-F", F,
                        "--distributed", expect=2)
        self.assertEqual(err.count("linv: error"), 1, err)
        self.assertIn("rows", err)
        self.assertFalse(os.path.exists(self.path("bad")))

    def test_adl_over_processes_is_the_one_process_fit(self):
        T, N = 30, 1001
        X = self.rng.standard_normal((T, 4)) @ self.rng.standard_normal((4, N)) + 0.3 * self.rng.standard_normal((T, N))
        np.save(self.path("X.npy"), X)  # C order: each process reads its columns row by row
        np.save(self.path("Xf.npy"), np.asfortranarray(X))
        np.save(self.path("task.npy"), X[:, :2] / np.linalg.norm(X[:, :2], axis=0))
        common = ["-k", 6, "--iters", 15, "--task", self.path("task.npy"), "--c", 0.3, "-q"]
        linv("adl", self.path("X.npy"), "--dictionary", self.path("D1.npy"), "--codes", self.path("S1.npy"),
             "--device", "cpu", *common)
        D1, S1 = np.load(self.path("D1.npy")), np.load(self.path("S1.npy"))
        for how, run in (("mpiexec -n 2", lambda *a: mpirun(2, *a, "--distributed")),
                         ("mpiexec -n 4", lambda *a: mpirun(4, *a, "--distributed", "--device", "cpu")),
                         ("--devices cpu,cpu,cpu", lambda *a: linv(*a, "--devices", "cpu,cpu,cpu"))):
            for source in ("X.npy", "Xf.npy"):
                with self.subTest(how=how, source=source):
                    run("adl", self.path(source), "--dictionary", self.path("D.npy"), "--codes", self.path("S.npy"),
                        "--report", self.path("r.json"), *common)
                    # the same steps, the sums over voxels added in another order: (T + N) eps per step (the
                    # bound of tests/cuda/test_adl_gpu.cpp)
                    bound = 30 * (T + N) * np.finfo(float).eps * 8 * 40
                    D, S = np.load(self.path("D.npy")), np.load(self.path("S.npy"))
                    self.assertEqual(S.shape, S1.shape)
                    self.assertLess(np.abs(D - D1).max() / np.abs(D1).max(), bound)
                    self.assertLess(np.abs(S - S1).max() / np.abs(S1).max(), bound)
                    with open(self.path("r.json")) as f:
                        self.assertGreater(json.load(f)["distributed"]["processes"], 1)
        # more processes than voxels: one message for the job, no output
        np.save(self.path("thin.npy"), X[:, :1])
        _, err = mpirun(2, "adl", self.path("thin.npy"), "--dictionary", self.path("Dt.npy"), "--codes",
                        self.path("St.npy"), "-k", 1, "--distributed", expect=2)
        self.assertEqual(err.count("linv: error"), 1, err)
        self.assertFalse(os.path.exists(self.path("Dt.npy")))

    def test_ksvd_over_processes_is_the_one_process_fit(self):
        T, N, K = 30, 900, 12
        truth = self.rng.uniform(-1, 1, (T, K))
        G = np.zeros((K, N))
        for j in range(N):
            G[self.rng.choice(K, 3, replace=False), j] = self.rng.uniform(1, 2, 3) * self.rng.choice([-1, 1], 3)
        X = truth @ G + 0.05 * self.rng.standard_normal((T, N))
        np.save(self.path("X.npy"), X)
        np.save(self.path("Xf.npy"), np.asfortranarray(X))
        start = self.rng.standard_normal((T, K))
        start[:, 1] = start[:, 0]  # an atom OMP never uses: the job's worst signal replaces it
        np.save(self.path("start.npy"), start / np.linalg.norm(start, axis=0))
        for variant in ([], ["--approximate"]):
            common = ["-k", K, "--sparsity", 3, "--iters", 2, "--initial", self.path("start.npy"), "-q", *variant]
            linv("ksvd", self.path("X.npy"), "--dictionary", self.path("D1.npy"), "--codes", self.path("G1.npy"),
                 "--device", "cpu", *common)
            D1, G1 = np.load(self.path("D1.npy")), np.load(self.path("G1.npy"))
            for how, run in (("mpiexec -n 2", lambda *a: mpirun(2, *a, "--distributed")),
                             ("mpiexec -n 4", lambda *a: mpirun(4, *a, "--distributed", "--device", "cpu")),
                             ("--devices cpu,cpu,cpu", lambda *a: linv(*a, "--devices", "cpu,cpu,cpu"))):
                for source in ("X.npy", "Xf.npy"):
                    with self.subTest(how=how, source=source, variant=variant):
                        run("ksvd", self.path(source), "--dictionary", self.path("D.npy"), "--codes",
                            self.path("G.npy"), "--report", self.path("r.json"), *common)
                        # the same steps, an atom update's sums over its users added in another order (see
                        # DistKsvd.FollowsTheOneProcessFit); an atom's sign is the eigensolver's own
                        D, Gd = np.load(self.path("D.npy")), np.load(self.path("G.npy"))
                        self.assertEqual(Gd.shape, G1.shape)
                        np.testing.assert_allclose(np.abs(np.sum(D * D1, axis=0)), 1.0, atol=1e-10)
                        self.assertLess(np.abs(D @ Gd - D1 @ G1).max() / np.abs(X).max(), 1e-9)
                        with open(self.path("r.json")) as f:
                            report = json.load(f)
                        self.assertGreater(report["distributed"]["processes"], 1)
                        self.assertEqual(len(report["rmse"]), 3)
        # more processes than signals: one message for the job, no output
        np.save(self.path("thin.npy"), X[:, :1])
        _, err = mpirun(2, "ksvd", self.path("thin.npy"), "--dictionary", self.path("Dt.npy"), "--codes",
                        self.path("Gt.npy"), "-k", 1, "--sparsity", 1, "--distributed", expect=2)
        self.assertEqual(err.count("linv: error"), 1, err)
        self.assertFalse(os.path.exists(self.path("Dt.npy")))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--linv", required=True)
    ap.add_argument("--mpiexec", required=True)
    args, rest = ap.parse_known_args()
    LINV, MPIEXEC = os.path.abspath(args.linv), args.mpiexec
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
