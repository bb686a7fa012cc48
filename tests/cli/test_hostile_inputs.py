#!/usr/bin/env python3
"""The inputs that made linv hang, return NaN, Inf, zero or a wrong answer with exit 0, or refuse a good
matrix for its scale: each gives a correct answer (checked against NumPy) or the documented error now, and
each command's extreme parameters finish within a time limit. Output clashes, modes and links are in
test_faults.py; the property-based sweeps around these points are tests/python/test_properties.py.

Run: python3 tests/cli/test_hostile_inputs.py --linv build/bin/linv   (ctest does this)
     ... --device cuda   (the same probes on the GPU, where the command takes --device)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

LINV = None
DEVICE = None  # --device: every command that takes the option runs there (the GPU run of these probes)
_TAKES_DEVICE = {}
CPU_ONLY = {"lstsq", "pinv"}  # their --help says so; --device cuda is a usage error there
EPS = np.finfo(float).eps
TIME_LIMIT = 60  # seconds: any command past it is a hang


def run(*args, expect):
    """Runs linv within TIME_LIMIT (on DEVICE where the command takes --device and names none); asserts the
    exit code; returns (stdout, stderr)."""
    args = [str(a) for a in args]
    if DEVICE and "--device" not in args and takes_device(args[0]):
        args += ["--device", DEVICE]
    p = subprocess.run([LINV, *args], capture_output=True, text=True, timeout=TIME_LIMIT)
    if p.returncode != expect:
        raise AssertionError(f"linv {' '.join(map(str, args))}: exit {p.returncode}, expected {expect}\n"
                             f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p.stdout, p.stderr


def takes_device(command):
    if command in CPU_ONLY:
        return False
    if command not in _TAKES_DEVICE:
        text = subprocess.run([LINV, command, "--help"], capture_output=True, text=True).stdout
        _TAKES_DEVICE[command] = "--device" in text
    return _TAKES_DEVICE[command]


def scaled_residual(a, x, b):
    """||A X - B||_1 / (n eps (||A|| ||X|| + ||B||)), computed at the operands' own scale (powers of two,
    exact) so that entries near the ends of the range neither overflow nor underflow."""
    sa, sx, sb = (2.0 ** -np.frexp(np.abs(m).max())[1] for m in (a, x, b))
    a, x, b = a * sa, x * sx, b * sb  # A X - B becomes (sa sx) A X - sb B: compare at a common scale
    r = a @ x - b * (sa * sx / sb)
    n = a.shape[0]
    return np.linalg.norm(r, 1) / (n * EPS * (np.linalg.norm(a, 1) * np.linalg.norm(x, 1)
                                              + np.linalg.norm(b, 1) * sa * sx / sb))


class HostileInputs(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="linv-hostile-")
        self.dir = self._tmp.name
        self.rng = np.random.default_rng(40)

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def save(self, name, array):
        np.save(self.path(name), array)
        return self.path(name)

    def one_line_error(self, stderr, *parts):
        lines = [line for line in stderr.splitlines() if line.strip()]
        self.assertTrue(lines and lines[-1].startswith("linv: error: "), stderr)
        for part in parts:
            self.assertIn(part, lines[-1])
        self.assertLess(len(lines[-1]), 600, "a message a person can read")

    # ---- the dense solvers at the ends of the range ---------------------------------------------
    def test_scale_never_makes_a_good_matrix_singular(self):
        a = self.rng.standard_normal((50, 50)) + 10 * np.eye(50)
        b = self.rng.standard_normal((50, 1))
        for scale in [1e-307, 2.0 ** -1000, 1e-200, 1e200, 2.0 ** 1000]:
            x_path = self.path("x.npy")
            run("inv", self.save("a.npy", a * scale), "-o", x_path, "--report", self.path("r.json"), expect=0)
            x = np.load(x_path)
            self.assertTrue(np.isfinite(x).all())
            self.assertLess(np.linalg.norm((a * scale) @ x - np.eye(50), 1), 30 * 50 * EPS * np.linalg.cond(a, 1))
            run("solve", self.path("a.npy"), self.save("b.npy", b), "-o", x_path, expect=0)
            self.assertLess(scaled_residual(a * scale, np.load(x_path), b), 30)
        # the cases: 1e-307 I (rcond 1), entries near 1e307, float32 A 1e-37
        run("inv", self.save("i.npy", 1e-307 * np.eye(5)), "-o", self.path("x.npy"), expect=0)
        np.testing.assert_allclose(np.load(self.path("x.npy")), 1e307 * np.eye(5), rtol=1e-15)
        big = a / np.abs(a).max() * 1e307
        run("inv", self.save("big.npy", big), "-o", self.path("x.npy"), expect=0)
        self.assertTrue(np.isfinite(np.load(self.path("x.npy"))).all())
        small32 = (a * 1e-37).astype(np.float32)
        run("inv", self.save("s32.npy", small32), "-o", self.path("x.npy"), expect=0)
        x = np.load(self.path("x.npy"))
        self.assertEqual(x.dtype, np.float32)
        self.assertLess(np.abs(x.astype(float) @ small32.astype(float) - np.eye(50)).max(), 1e-3)

    def test_an_inverse_that_does_not_fit_is_a_numerical_error(self):
        # entries of 1e-310 (subnormal): the inverse's entries exceed the largest float64
        a = (self.rng.standard_normal((6, 6)) + 6 * np.eye(6)) * 1e-310
        _, err = run("inv", self.save("a.npy", a), "-o", self.path("x.npy"), expect=4)
        self.one_line_error(err, "overflows")
        self.assertFalse(os.path.exists(self.path("x.npy")))

    def test_lstsq_of_huge_right_hand_sides(self):
        a = self.rng.standard_normal((30, 10))
        b = self.rng.standard_normal((30, 2))
        b = b / np.abs(b).max() * 1.7e308
        run("lstsq", self.save("a.npy", a), self.save("b.npy", b), "-o", self.path("x.npy"), expect=0)
        x = np.load(self.path("x.npy"))
        ref = np.linalg.lstsq(a, b / 1e300, rcond=None)[0] * 1e300
        self.assertTrue(np.isfinite(x).all())
        np.testing.assert_allclose(x, ref, rtol=1e-12)

    def test_mixed_precision_refuses_what_float64_refuses(self):
        run("gen", "--kind", "singular", "-n", 50, "-o", self.path("s.npy"), expect=0)
        run("gen", "--kind", "illcond", "--cond", "1e18", "-n", 50, "-o", self.path("ill.npy"), expect=0)
        b = self.save("b.npy", np.ones(50))
        for matrix in ["s.npy", "ill.npy"]:
            run("solve", self.path(matrix), b, "-o", self.path("x.npy"), expect=4)
            _, err = run("solve", self.path(matrix), b, "-o", self.path("x.npy"), "--precision", "mixed", expect=4)
            self.one_line_error(err, "singular")

    def test_no_message_names_pivot_zero(self):
        run("gen", "--kind", "illcond", "--cond", "1e18", "-n", 50, "-o", self.path("ill.npy"), expect=0)
        _, err = run("solve", self.path("ill.npy"), self.save("b.npy", np.ones(50)), "-o", self.path("x.npy"),
                     "--precision", "mixed", expect=4)
        self.assertNotIn("pivot: 0", err)
        self.assertNotIn("pivot 0 ", err)

    # ---- weighted least squares ----------------------------------------------------------------
    def wls_reference(self, a, d, b):
        w = np.sqrt(d)
        return np.linalg.lstsq((a * w).T, b * w, rcond=None)[0]

    def test_wls_at_any_scale(self):
        m, n = 20, 40
        a = self.rng.standard_normal((m, n))
        d = self.rng.uniform(0.5, 2, n)
        b = self.rng.standard_normal(n)
        ref = self.wls_reference(a, d, b)
        for precision in ["double", "mixed"]:
            for a_scale, d_scale, b_scale in [(1e155, 1, 1), (1, 1e150, 1), (1, 1, 1e300), (1e-155, 1e-150, 1e-300)]:
                with self.subTest(precision=precision, a=a_scale, d=d_scale, b=b_scale):
                    run("wls", self.save("a.npy", a * a_scale), self.save("d.npy", d * d_scale),
                        self.save("b.npy", b * b_scale), "-o", self.path("x.npy"), "--precision", precision, expect=0)
                    x = np.load(self.path("x.npy")) * a_scale / b_scale
                    np.testing.assert_allclose(x, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())

    def test_wls_refuses_what_has_no_answer(self):
        m, n = 20, 40
        a = self.rng.standard_normal((m, n))
        a[3] = a[0] + a[1]  # rank deficient: C = A D^2 A^T singular
        d = self.rng.uniform(0.5, 2, n)
        b = self.rng.standard_normal(n)
        for precision in ["double", "single", "mixed"]:
            _, err = run("wls", self.save("a.npy", a), self.save("d.npy", d), self.save("b.npy", b), "-o",
                         self.path("x.npy"), "--precision", precision, expect=4)
            self.one_line_error(err, "A D^2 A^T")
        # one weight 1e155 times the others: C singular to working precision (cond ~ 1e310)
        a = self.rng.standard_normal((m, n))
        d[3] = 1e155
        _, err = run("wls", self.save("a.npy", a), self.save("d.npy", d), self.save("b.npy", b), "-o",
                     self.path("x.npy"), expect=4)
        self.one_line_error(err, "A D^2 A^T")
        # a NaN in b is named whatever the weights
        d = np.ones(n)
        d[1] = 0
        b[1] = np.nan
        _, err = run("wls", self.save("a.npy", a), self.save("d.npy", d), self.save("b.npy", b), "-o",
                     self.path("x.npy"), expect=3)
        self.one_line_error(err, "b holds NaN at row 2")

    # ---- imaging -------------------------------------------------------------------------------
    def test_poisson_noise_of_any_peak_returns(self):
        for peak in ["1e12", "1e19", "1e20", "1e300"]:
            run("degrade", "phantom:64", "-o", self.path("g.npy"), "--noise", f"poisson:peak={peak}", "-q", expect=0)
            g = np.load(self.path("g.npy"))
            self.assertTrue(np.isfinite(g).all() and g.min() >= 0 and g.max() <= 1)

    def test_non_finite_pixels_are_named(self):
        run("degrade", "phantom:32", "-o", self.path("g.npy"), "-q", expect=0)
        g = np.load(self.path("g.npy"))
        for bad in [np.nan, np.inf]:
            g2 = g.copy()
            g2[5, 7] = bad
            path = self.save("bad.npy", g2)
            for command in ["deblur", "degrade"]:
                _, err = run(command, path, "-o", self.path("out.npy"), expect=3)
                self.one_line_error(err, "pixel (row 6, column 8)")
                self.assertFalse(os.path.exists(self.path("out.npy")))

    def test_psfs_at_the_edges(self):
        for sigma in ["1e-300", "1e-160", "1e300"]:
            run("degrade", "phantom:32", "-o", self.path("g.npy"), "--psf", f"gaussian:size=5,sigma={sigma}", "-q",
                expect=0)
            self.assertTrue(np.isfinite(np.load(self.path("g.npy"))).all())
        # a Laplacian summing to rounding is no blur: refused, not amplified 1e15-fold
        lap = np.array([[0, 0.1, 0], [0.1, -0.4, 0.1], [0, 0.1, 0]])
        lap[1, 1] += 8.9e-16
        for command in ["degrade", "deblur"]:
            _, err = run(command, "phantom:32" if command == "degrade" else self.path("g.npy"), "-o",
                         self.path("out.npy"), "--psf", self.save("lap.npy", lap), expect=2)
            self.one_line_error(err, "difference filter")
        nan_psf = np.ones((3, 3))
        nan_psf[1, 2] = np.nan
        _, err = run("degrade", "phantom:32", "-o", self.path("out.npy"), "--psf", self.save("n.npy", nan_psf),
                     expect=3)
        self.one_line_error(err, "NaN at row 2, column 3")

    def test_lambda_must_be_a_finite_weight(self):
        run("degrade", "phantom:32", "-o", self.path("g.npy"), "-q", expect=0)
        for value in ["inf", "nan", "-1", "1e400"]:
            run("deblur", self.path("g.npy"), "-o", self.path("r.npy"), "--lambda", value, expect=2)

    # ---- option values -------------------------------------------------------------------------
    def test_bad_option_values_are_usage_errors(self):
        a = self.save("a.npy", self.rng.standard_normal((8, 8)) + 8 * np.eye(8))
        out = self.path("x.npy")
        cases = [
            ["bench", "inverse", "--device", "cpu", "--sizes", "8,abc", "--repeats", 1],
            ["bench", "inverse", "--device", "cpu", "--sizes", "99999999999999999999", "--repeats", 1],
            ["bench", "inverse", "--device", "cpu", "--sizes", "1e3", "--repeats", 1],
            ["bench", "inverse", "--device", "cpu", "--sizes", "-5", "--repeats", 1],
            ["bench", "batched", "--device", "cpu", "--cases", "8:abc", "--repeats", 1],
            ["pinv", a, "-o", out, "--rcond", "nan"],
            ["pinv", a, "-o", out, "--rcond", "-1"],
            ["lstsq", a, a, "-o", out, "--rcond", "inf"],
            ["solve", a, a, "-o", out, "--method", "gauss-seidel", "--tol", "nan"],
            ["solve", a, a, "-o", out, "--method", "gauss-seidel", "--tol", "2"],
            ["solve", a, a, "-o", out, "--method", "gauss-seidel", "--max-iter", "-3"],
            ["pinv", a, "-o", out, "--structure", "bordered", "--damping", "nan"],
            ["pinv", a, "-o", out, "--structure", "bordered", "--damping", "-1"],
            ["gen", "--kind", "illcond", "--cond", "0", "-n", 5, "-o", out],
            ["gen", "--kind", "random", "-n", "99999999999999999999", "-o", out],
            ["inv", a, "-o", out, "--device", "cuda:-1"],
        ]
        for args in cases:
            with self.subTest(args=" ".join(map(str, args))):
                _, err = run(*args, expect=2)
                self.assertNotIn("internal error", err)
                self.assertLess(max((len(line) for line in err.splitlines()), default=0), 400,
                                "no 310-digit ranges")
        self.assertFalse(os.path.exists(out))

    # ---- batches -------------------------------------------------------------------------------
    def test_batches_name_the_matrix_and_entry(self):
        stack = self.rng.standard_normal((6, 4, 4)) + 4 * np.eye(4)
        bad = stack.copy()
        bad[2, 1, 3] = np.nan
        _, err = run("inv", "--batch", self.save("s.npy", bad), "-o", self.path("x.npy"), expect=3)
        self.one_line_error(err, "matrix 2 of the stack", "row 2, column 4")
        tiny = stack.copy()
        tiny[3] *= 1e-310  # its inverse does not fit float64
        _, err = run("inv", "--batch", self.save("t.npy", tiny), "-o", self.path("x.npy"), expect=4)
        self.one_line_error(err, "matrix 3", "overflows")
        self.assertNotIn("nan", err)
        scaled = stack.copy()
        scaled[1] *= 2.0 ** -1000
        scaled[4] *= 2.0 ** 1000
        run("inv", "--batch", self.save("u.npy", scaled), "-o", self.path("x.npy"), expect=0)
        np.testing.assert_allclose(np.load(self.path("x.npy")) @ scaled, np.broadcast_to(np.eye(4), (6, 4, 4)),
                                   atol=1e-12)

    # ---- messages ------------------------------------------------------------------------------
    def test_containers_agree_on_a_missing_array(self):
        np.savez(self.path("z.npz"), x=np.eye(2))
        run("inv", self.path("z.npz") + ":y", "-o", self.path("x.npy"), expect=3)

    def test_png_errors_name_a_byte(self):
        with open(self.path("broken.png"), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + b"\x00" * 20)
        _, err = run("deblur", self.path("broken.png"), "-o", self.path("r.png"), expect=3)
        self.assertNotIn(":0:", err)

    def test_asymmetry_is_shown_to_every_digit(self):
        a = np.eye(3) * 4
        a[0, 1], a[1, 0] = 1.0, 1.0 + 1e-9
        _, err = run("chol", self.save("a.npy", a), "-o", self.path("l.npy"), expect=4)
        self.one_line_error(err, "1.000000001", "by 1")


def main():
    global LINV, DEVICE
    parser = argparse.ArgumentParser()
    parser.add_argument("--linv", required=True)
    parser.add_argument("--device", help="run every command that takes --device there (e.g. cuda)")
    args, rest = parser.parse_known_args()
    LINV = os.path.abspath(args.linv)
    DEVICE = args.device
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
