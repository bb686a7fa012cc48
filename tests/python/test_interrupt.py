"""Ctrl-C stops linv's long iterative runs (k-SVD, ADL, PARAFAC2) after the iteration in progress, with
Python's KeyboardInterrupt, and linv works normally afterwards."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import linv

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)
DELAY = 0.3  # seconds before the simulated Ctrl-C
LIMIT = 1.0  # the most an interrupted run may go on (the promise)


def _interrupted_after(delay, run):
    """Runs `run` with a SIGINT sent to this process `delay` seconds in; the seconds it went on after."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach only the main thread")
    # Python's own handler, as in an interactive session: a process started in the background by a shell
    # inherits SIGINT ignored, and then Python installs none
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    return time.monotonic() - start - delay


# The problems are small (an iteration takes milliseconds) so that a loaded machine keeps the promise too:
# linv checks for Ctrl-C once an iteration (k-SVD: also before each atom update). The iteration limits end
# a run that missed its Ctrl-C within about half a minute, which then fails instead of hanging.
def test_ctrl_c_stops_ksvd():
    x = RNG.standard_normal((16, 300))
    late = _interrupted_after(DELAY, lambda: linv.fmri.ksvd(x, 8, 2, iterations=1000))
    assert late < LIMIT
    d = linv.fmri.ksvd(x[:, :200], 8, 2, iterations=2).dictionary  # still usable afterwards
    assert d.shape == (16, 8)


def test_ctrl_c_stops_adl():
    x = RNG.standard_normal((32, 1000))
    late = _interrupted_after(DELAY, lambda: linv.fmri.adl(x, 16, max_iterations=20_000, tolerance=0.0))
    assert late < LIMIT


def test_ctrl_c_stops_parafac2():
    slabs = [RNG.standard_normal((20, 300)) for _ in range(20)]
    late = _interrupted_after(DELAY, lambda: linv.fmri.parafac2(slabs, 3, max_iterations=20_000, tolerance=0.0))
    assert late < LIMIT
