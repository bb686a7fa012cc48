#!/usr/bin/env python3
"""Fault injection for the linv command-line tool: whatever stops a run (a write failing half way, a full
disk, a read-only directory, an output naming an input or another output, a signal, host memory running out), the
exit code and a one-line message say what happened, no partial output exists at the target, an earlier
file there is intact (byte for byte), and no temporary file (linv writes ".NAME.tmp-PID-XXXX" beside the
target and renames it into place) is left behind.

Run: python3 tests/cli/test_faults.py --linv build/bin/linv   (ctest does this)
"""
import argparse
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cli import TempDirCase  # noqa: E402  (the per-test directory and seeded rng)

LINV = None
TEMPORARY = re.compile(r"^\..+\.tmp-\d+-[0-9a-f]{8}$")  # src/io/io.cpp, AtomicFile


def limit(resource_kind, value, ignore_sigxfsz=False):
    """A preexec_fn setting one resource limit in the child (and ignoring SIGXFSZ, so that a write past
    RLIMIT_FSIZE fails with EFBIG instead of killing the process)."""
    def apply():
        resource.setrlimit(resource_kind, (value, value))
        if ignore_sigxfsz:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return apply


def stop_signals_by_default():
    """A preexec_fn: SIGINT, SIGTERM and SIGHUP as a terminal's foreground process gets them. (linv leaves
    a signal ignored when it was ignored at its start, as a background job of a script has SIGINT.)"""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def run(*args, expect, preexec_fn=None):
    """Runs linv; asserts the exit code; returns stderr."""
    p = subprocess.run([LINV, *map(str, args)], capture_output=True, text=True, timeout=600, preexec_fn=preexec_fn)
    if p.returncode != expect:
        raise AssertionError(f"linv {' '.join(map(str, args))}: exit {p.returncode}, expected {expect}\n"
                             f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p.stderr


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def in_private_mounts(script, *args):
    """Runs a shell script in a mount namespace of its own (mounts made there vanish with it): as root
    with unshare -m, otherwise in a user namespace (unshare -rm) where the system allows one. Returns the
    CompletedProcess, or a reason why no namespace could be made."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return "unshare (util-linux) is not installed"
    flags = ["-m"] if os.geteuid() == 0 else ["-r", "-m"]
    probe = subprocess.run([unshare, *flags, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"no private mount namespace here: {probe.stderr.strip()}"
    return subprocess.run([unshare, *flags, "sh", "-c", script, "sh", *map(str, args)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "LINV": LINV})


class FaultTest(TempDirCase):
    prefix = "linv-faults-"

    def previous_output(self, name="out.npy"):
        """An earlier result at the target (a Matrix Market file unless it is .npy): its path and bytes."""
        p = self.path(name)
        if name.endswith(".npy"):
            np.save(p, self.rng.standard_normal((3, 3)))
        else:
            with open(p, "w") as f:
                f.write(f"%%MatrixMarket matrix array real general\n1 1\n{self.rng.standard_normal()}\n")
        return p, read_bytes(p)

    def assert_one_line_error(self, stderr, *parts):
        lines = [line for line in stderr.splitlines() if line.strip()]
        self.assertEqual(len(lines), 1, f"expected one line on stderr, got:\n{stderr}")
        self.assertTrue(lines[0].startswith("linv: error: "), lines[0])
        for part in parts:
            self.assertIn(part, lines[0])

    def assert_nothing_lost(self, folder, target, before, others=()):
        """target holds `before` (or is absent when before is None), and folder holds nothing else but
        `others` (names): no partial output, no temporary file."""
        if before is None:
            self.assertFalse(os.path.exists(target), f"{target} exists")
        else:
            self.assertEqual(read_bytes(target), before, f"{target} changed")
        names = sorted(os.listdir(folder))
        self.assertEqual([n for n in names if TEMPORARY.match(n)], [], "temporary files left behind")
        expected = sorted({*others, *([os.path.basename(target)] if before is not None else [])})
        self.assertEqual(names, expected)

    # ---- 1. a write failing half way --------------------------------------------------------------
    def test_write_past_the_file_size_limit(self):
        # 400 x 400 float64 is 1.2 MiB, the limit 64 KiB: the write fails after its first blocks. (matio,
        # which writes .mat files, does not check its writes: linv checks the size of what it wrote.)
        info = subprocess.run([LINV, "info"], capture_output=True, text=True, check=True).stdout
        for extension in (".npy", ".mtx", *([".mat"] if "MATLAB .mat files: yes" in info else [])):
            for ignored_by_parent in (True, False):  # linv ignores SIGXFSZ itself too
                with self.subTest(extension=extension, sigxfsz_ignored_by_parent=ignored_by_parent):
                    target, before = self.previous_output("out" + extension)
                    err = run("gen", "--kind", "random", "-n", 400, "-o", target, expect=3,
                              preexec_fn=limit(resource.RLIMIT_FSIZE, 64 << 10, ignored_by_parent))
                    # EFBIG's message; matio loses the reason, and linv says what it found
                    reason = "were written" if extension == ".mat" else os.strerror(27)
                    self.assert_one_line_error(err, f"could not write {target}", reason)
                    self.assert_nothing_lost(self.dir, target, before)
                    os.remove(target)

    def test_write_to_a_full_file_system(self):
        # A 256 KiB tmpfs holding an earlier output; the 1.2 MiB result does not fit. The mount exists only
        # inside the namespace, so the script copies what the file system holds afterwards out of it.
        mount_point, after = self.path("small"), self.path("after")
        os.mkdir(mount_point)
        os.mkdir(after)
        previous = self.save("previous.npy", self.rng.standard_normal((4, 4)))
        script = ('mount -t tmpfs -o size=256k linv-test "$1" || exit 99\n'
                  'cp "$2" "$1/out.npy"\n'
                  '"$LINV" gen --kind random -n 400 -o "$1/out.npy" 2>"$3/stderr"\n'
                  'echo $? >"$3/rc"\n'
                  'mkdir "$3/files" && cp -a "$1/." "$3/files/"\n')
        p = in_private_mounts(script, mount_point, previous, after)
        if isinstance(p, str):
            self.skipTest(p)
        if p.returncode == 99:
            self.skipTest(f"cannot mount a tmpfs here: {p.stderr.strip()}")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(read_bytes(os.path.join(after, "rc")).strip(), b"3")
        target = os.path.join(mount_point, "out.npy")
        self.assert_one_line_error(read_bytes(os.path.join(after, "stderr")).decode(), f"could not write {target}",
                                   os.strerror(28))  # ENOSPC
        self.assert_nothing_lost(os.path.join(after, "files"), os.path.join(after, "files", "out.npy"),
                                 read_bytes(previous))

    # ---- 2. a read-only output directory ----------------------------------------------------------
    def test_read_only_output_directory(self):
        folder = self.path("results")
        os.mkdir(folder)
        target = os.path.join(folder, "out.npy")
        np.save(target, np.arange(5.0))
        before = read_bytes(target)
        a = self.save("a.npy", np.eye(4) * 2)
        if os.geteuid() != 0:
            os.chmod(folder, 0o555)
            try:
                err = run("inv", a, "-o", target, expect=3)
            finally:
                os.chmod(folder, 0o755)
            reason = os.strerror(13)  # EACCES
        else:
            # Permissions do not bind root; a read-only bind mount does. It exists only in the namespace,
            # over the same directory, so what linv left there is visible here afterwards.
            script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" || exit 99\n'
                      'exec "$LINV" inv "$2" -o "$3"\n')
            p = in_private_mounts(script, folder, a, target)
            if isinstance(p, str):
                self.skipTest(f"running as root, where permissions do not bind, and {p}")
            if p.returncode == 99:
                self.skipTest(f"running as root, where permissions do not bind, and no read-only bind mount: "
                              f"{p.stderr.strip()}")
            self.assertEqual(p.returncode, 3, p.stderr)
            err = p.stderr
            reason = os.strerror(30)  # EROFS
        self.assert_one_line_error(err, f"could not write {target}", reason)
        self.assert_nothing_lost(folder, target, before)

    # ---- 2b. the second of two outputs cannot be written ------------------------------------------
    def test_second_output_unwritable_keeps_the_first(self):
        # k-SVD writes a dictionary, then the codes into a directory that does not exist: exit 3, and the
        # dictionary's earlier content stays (the outputs are renamed into place together, after the last)
        T, K, N = 8, 10, 60
        x = self.save("x.npy", self.rng.standard_normal((T, N)))
        d, before = self.previous_output("d.npy")
        codes = os.path.join(self.dir, "missing", "g.npy")
        report = self.path("r.json")
        err = run("ksvd", x, "-k", str(K), "--sparsity", "2", "--iters", "2", "--dictionary", d, "--codes", codes,
                     "--report", report, expect=3)
        self.assert_one_line_error(err, f"could not write {codes}")
        self.assert_nothing_lost(self.dir, d, before, others=["x.npy"])

    # ---- 3. outputs that would destroy data: an input, or another output ---------------------------
    def test_output_naming_an_input_is_refused_before_any_work(self):
        # Replacing an input destroys what the user kept (a photograph deblurred "in place", the matrix a
        # later step needs): exit 2 before anything is read or computed, whichever name reaches the file.
        n = 50
        a = self.rng.uniform(-1, 1, (n, n)) + n * np.eye(n)
        path = self.save("a.npy", a)
        os.link(path, self.path("a-hard.npy"))
        os.symlink("a.npy", self.path("a-soft.npy"))
        os.mkdir(self.path("sub"))
        before = read_bytes(path)
        for name in [path, self.path("a-hard.npy"), self.path("a-soft.npy"), os.path.join(self.dir, "sub", "..", "a.npy")]:
            err = run("inv", path, "-o", name, expect=2)
            self.assert_one_line_error(err, "names the input A")
            self.assertEqual(read_bytes(path), before)
        b = self.save("b.npy", self.rng.standard_normal((n, 2)))
        b_before = read_bytes(b)
        err = run("solve", path, b, "-o", b, expect=2)
        self.assert_one_line_error(err, "names the input B")
        self.assertEqual(read_bytes(b), b_before)
        self.assert_nothing_lost(self.dir, path, before, others=["a-hard.npy", "a-soft.npy", "b.npy", "sub"])

    def test_two_outputs_naming_one_file_are_refused(self):
        # The later output would replace the earlier one: the matrix by the report, the dictionary by the codes.
        a = self.save("a.npy", self.rng.uniform(-1, 1, (8, 8)) + 8 * np.eye(8))
        out, before = self.previous_output("out.npy")
        err = run("inv", a, "-o", out, "--report", out, expect=2)
        self.assert_one_line_error(err, "name the same file")
        os.symlink("out.npy", self.path("out-link.npy"))
        err = run("inv", a, "-o", self.path("out-link.npy"), "--report", out, expect=2)
        self.assert_one_line_error(err, "name the same file")
        x = self.save("x.npy", self.rng.standard_normal((8, 40)))
        err = run("ksvd", x, "-k", 4, "--sparsity", 2, "--iters", 1, "--dictionary", out, "--codes", out, expect=2)
        self.assert_one_line_error(err, "name the same file")
        self.assert_nothing_lost(self.dir, out, before, others=["a.npy", "out-link.npy", "x.npy"])

    def test_outputs_keep_their_mode_and_write_through_links(self):
        # An existing output's permissions stay (a private 0600 file stays private); a symbolic link at the
        # output's path is written through to its target, as cp and compilers do, and stays a link.
        a = self.rng.uniform(-1, 1, (8, 8)) + 8 * np.eye(8)
        path = self.save("a.npy", a)
        private, _ = self.previous_output("private.npy")
        os.chmod(private, 0o600)
        run("inv", path, "-o", private, "--quiet", expect=0)
        self.assertEqual(os.stat(private).st_mode & 0o777, 0o600)
        os.mkdir(self.path("real"))
        target, _ = self.previous_output(os.path.join("real", "x.npy"))
        os.symlink(os.path.join("real", "x.npy"), self.path("link.npy"))
        run("inv", path, "-o", self.path("link.npy"), "--quiet", expect=0)
        self.assertTrue(os.path.islink(self.path("link.npy")))
        np.testing.assert_allclose(np.load(target) @ a, np.eye(8), atol=1e-12)
        self.assertEqual([n for n in os.listdir(self.path("real")) if TEMPORARY.match(n)], [])

    def test_outputs_land_together_with_standard_output(self):
        # The report goes to a full standard output: the command fails (exit 3), and the matrix output,
        # complete as it was, is not placed either.
        path = self.save("a.npy", self.rng.uniform(-1, 1, (8, 8)) + 8 * np.eye(8))
        out, before = self.previous_output("out.npy")
        with open("/dev/full", "w") as full:
            p = subprocess.run([LINV, "inv", path, "-o", out, "--report", "-"], stdout=full, stderr=subprocess.PIPE,
                               text=True, timeout=600)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("could not write standard output", p.stderr)
        self.assert_nothing_lost(self.dir, out, before, others=["a.npy"])

    # ---- 4. signals -------------------------------------------------------------------------------
    def long_ksvd(self):
        """A k-SVD run of thousands of iterations (minutes; the tests stop it), its outputs' paths."""
        x = self.save("x.npy", self.rng.standard_normal((64, 2000)))
        dictionary, codes = self.path("d.npy"), self.path("g.npy")
        args = [LINV, "ksvd", x, "-k", 48, "--sparsity", 4, "--iters", 100000, "--dictionary", dictionary,
                "--codes", codes, "--device", "cpu", "--quiet"]
        return [str(a) for a in args], dictionary, codes

    def start_and_wait(self, args, seconds):
        """Starts linv and lets it run `seconds`; fails if it ended before."""
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=stop_signals_by_default)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        time.sleep(seconds)
        if p.poll() is not None:
            self.fail(f"linv ended before the signal: {p.communicate()}")
        return p

    def test_signals_while_computing(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            with self.subTest(signal=sig.name):
                args, dictionary, codes = self.long_ksvd()
                _, before = self.previous_output("d.npy")
                p = self.start_and_wait(args, 1.5)
                p.send_signal(sig)
                _, err = p.communicate(timeout=60)
                # Dying by the signal, as without a handler: a shell reports 128 + 2 = 130 for Ctrl-C.
                self.assertEqual(p.returncode, -sig, err)
                self.assertEqual(err, "")
                self.assert_nothing_lost(self.dir, dictionary, before, others=["x.npy"])
                self.assertFalse(os.path.exists(codes))

    def stop_while_writing(self, target):
        """Starts writing a large Matrix Market file (formatting 9 million numbers takes seconds) over
        `target` and stops linv (SIGSTOP) once its temporary file exists: returns the process and the
        temporary file's name."""
        p = subprocess.Popen([LINV, "gen", "--kind", "random", "-n", "3000", "-o", target], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=stop_signals_by_default)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p.poll() is None:
            temporary = [n for n in os.listdir(self.dir) if TEMPORARY.match(n)]
            if temporary:
                p.send_signal(signal.SIGSTOP)
                return p, temporary[0]
            time.sleep(0.001)
        self.fail(f"no temporary file appeared while linv wrote {target}: {p.communicate()}")

    def test_signals_while_writing(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            with self.subTest(signal=sig.name):
                target, before = self.previous_output("big.mtx")
                p, temporary = self.stop_while_writing(target)
                self.assertEqual(read_bytes(target), before, "the target was replaced before the signal")
                self.assertTrue(os.path.exists(self.path(temporary)))
                p.send_signal(sig)
                p.send_signal(signal.SIGCONT)
                _, err = p.communicate(timeout=60)
                self.assertEqual(p.returncode, -sig, err)
                if sig == signal.SIGKILL:
                    # SIGKILL cannot be caught: the temporary file stays (never a partial output at the
                    # target); the only leftover acceptable, and only for SIGKILL.
                    self.assertEqual(read_bytes(target), before)
                    self.assertEqual(sorted(os.listdir(self.dir)), sorted(["big.mtx", temporary]))
                    os.remove(self.path(temporary))
                else:
                    self.assert_nothing_lost(self.dir, target, before)

    # ---- 5. host memory running out ---------------------------------------------------------------
    def test_host_memory_limit(self):
        # A 46341 x 46341 float64 matrix needs 16 GiB; the address space is limited to 4 GiB.
        n = 46341
        target, before = self.previous_output()
        err = run("gen", "--kind", "random", "-n", n, "-o", target, expect=5,
                  preexec_fn=limit(resource.RLIMIT_AS, 4 << 30))
        self.assert_one_line_error(err, "out of memory on the host", f"needed {n * n * 8 / 2**20:.1f} MiB")
        self.assert_nothing_lost(self.dir, target, before)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--linv", required=True)
    parser.add_argument("--seed", type=int, default=None)
    args, rest = parser.parse_known_args()
    LINV = os.path.abspath(args.linv)
    SEED = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"fault tests: seed {SEED} (replay with --seed {SEED})", flush=True)
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
