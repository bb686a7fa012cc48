#!/usr/bin/env python3
"""Fault injection for the linv command-line tool: whatever stops a run (a write failing half way, a full
disk, a read-only directory, an output written over its own input, a signal, host memory running out), the
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
import tempfile
import time
import unittest

import numpy as np

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


class FaultTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="linv-faults-")
        self.dir = self._tmp.name
        self.rng = np.random.default_rng(SEED)

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def save(self, name, array):
        p = self.path(name)
        np.save(p, array)
        return p

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

    # ---- 3. the output is one of the inputs -------------------------------------------------------
    def test_output_over_its_own_input(self):
        n = 50
        a = self.rng.uniform(-1, 1, (n, n)) + n * np.eye(n)
        path = self.save("a.npy", a)
        # A second name for the input's file: replacing the file by a rename leaves that file (and this
        # name) as it was, where writing into the input in place would change both.
        os.link(path, self.path("a-link.npy"))
        before = read_bytes(path)
        run("inv", path, "-o", path, "--quiet", expect=0)
        x = np.load(path)
        self.assertLess(np.linalg.norm(x @ a - np.eye(n), 1), 30 * n * np.finfo(float).eps * np.linalg.cond(a, 1))
        self.assertEqual(read_bytes(self.path("a-link.npy")), before)
        self.assert_nothing_lost(self.dir, path, read_bytes(path), others=["a-link.npy"])

        rhs = self.rng.standard_normal((n, 2))
        b = self.save("b.npy", rhs)
        run("solve", self.path("a-link.npy"), b, "-o", b, "--quiet", expect=0)
        residual = np.linalg.norm(a @ np.load(b) - rhs, 1) / (np.linalg.norm(a, 1) * np.linalg.norm(np.load(b), 1))
        self.assertLess(residual, 30 * n * np.finfo(float).eps)

        singular = self.path("singular.npy")
        run("gen", "--kind", "singular", "-n", 20, "-o", singular, expect=0)
        before = read_bytes(singular)
        err = run("inv", singular, "-o", singular, expect=4)
        self.assert_one_line_error(err, "singular")
        self.assertEqual(read_bytes(singular), before)
        self.assertEqual([n for n in os.listdir(self.dir) if TEMPORARY.match(n)], [])

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
