"""Memory: results outlive their inputs, linv leaks nothing over many calls, and results are linv's own
memory handed to NumPy without a copy (the array's base is the buffer linv allocated, not a copy of it).
test_linv.py already checks that inverses of single matrices outlive their inputs; the rest is here."""
import gc
import os
import tempfile

import numpy as np
import pytest

import linv
from linv import _common

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)


def spd(n, rng=RNG):
    a = rng.uniform(-1, 1, (n, n))
    return a @ a.T + n * np.eye(n)


def address(a):
    return a.__array_interface__["data"][0]


def linv_buffer(x):
    """The memoryview at the root of x's base chain (nanobind's export of linv's matrix), or None."""
    base = x
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return base if isinstance(base, memoryview) else None


def assert_linv_memory(x):
    """x is a view of linv's memory: it owns no data, and its first element is the first element of the
    buffer linv exported (pointer identity, no copy between the two)."""
    assert isinstance(x, np.ndarray)
    assert not x.flags.owndata
    buf = linv_buffer(x)
    assert buf is not None, f"the base of the result is {type(x.base)}, not linv's buffer"
    assert type(buf.obj).__name__ == "nb_ndarray"  # nanobind's array, which holds linv's matrix
    exported = np.asarray(buf)  # the buffer protocol: no copy either
    assert address(exported) <= address(x) < address(exported) + exported.nbytes
    assert np.shares_memory(x, exported)


# ---- results outlive their inputs ----------------------------------------------------------------------

def test_stacks_solves_and_factorizations_outlive_their_inputs():
    kept = []
    for _ in range(50):
        a, b = spd(6), RNG.standard_normal((6, 2))
        stack = np.stack([a, 2 * a, 3 * a])
        results = (linv.inv(stack), linv.solve(a, b), linv.solve(stack, b), linv.cholesky(a))
        lu, chol = linv.LU(a.copy()), linv.Cholesky(a.copy())  # the factors outlive the matrices too
        kept.append((a, b, stack, results, lu, chol))
        del stack, results, lu, chol
    gc.collect()
    for a, b, stack, (x_stack, x, x_stacks, l), lu, chol in kept:
        np.testing.assert_allclose(x_stack, np.linalg.inv(stack), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(x_stacks, np.linalg.solve(stack, b), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(l, np.linalg.cholesky(a), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(lu.solve(b), x, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(chol.solve(b), x, rtol=1e-10, atol=1e-12)


def test_linv_memory_lives_as_long_as_its_base():
    x = linv.inv(spd(8))
    values, buf = x.copy(), linv_buffer(x)
    del x
    gc.collect()
    np.testing.assert_array_equal(np.asarray(buf).reshape(8, 8).T, values)  # column-major, read as C order


# ---- no leaks ------------------------------------------------------------------------------------------

def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# A leak of one result per call would be at least its 512 bytes of data (8 x 8 float64) plus linv's matrix
# header and nanobind's wrapper: keeping every result alive, as such a leak would, grows the resident set by
# about 16 MB over 10 000 calls (measured on x86-64 Linux). Once warmed up (the allocator's arenas and
# NumPy's and Python's free lists filled), repeating the same call moves it by under one page (measured: 0 MB
# for each case below). 3 MB sits far from both: a leaked result or report dict fails, allocator noise does
# not. (A leak of a few bytes per call, under 300, would pass: RSS cannot see that little.)
LEAK_BOUND = 3 << 20
CALLS = 10_000


@pytest.mark.parametrize("what", ["inv", "inv report", "solve", "solve report", "inv stack"])
def test_no_leak_over_many_calls(what):
    rng = np.random.default_rng(3)
    a, b, stack = spd(8, rng), rng.standard_normal((8, 8)), np.stack([spd(8, rng) for _ in range(4)])
    call = {"inv": lambda: linv.inv(a),
            "inv report": lambda: linv.inv(a, report=True, check=True),
            "solve": lambda: linv.solve(a, b),
            "solve report": lambda: linv.solve(a, b, report=True, check=True),
            "inv stack": lambda: linv.inv(stack)}[what]
    for _ in range(1000):  # warm-up
        call()
    gc.collect()
    before = rss_bytes()
    for _ in range(CALLS):
        call()
    gc.collect()
    growth = rss_bytes() - before
    assert growth < LEAK_BOUND, f"{what}: the resident set grew by {growth / 2**20:.1f} MB over {CALLS} calls"


# ---- zero copy -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_inverse_is_linv_memory_without_a_copy(order, dtype):
    a = np.asarray(spd(8), dtype=dtype, order=order)
    x = linv.inv(a)
    assert x.dtype == dtype and x.flags.writeable
    assert_linv_memory(x)
    # linv's matrix is column-major, so the result is Fortran-ordered, or, for a C-ordered input (inverted
    # as its transpose), that matrix read as its transpose: C-ordered, no copy either way.
    assert x.flags.c_contiguous if order == "C" else x.flags.f_contiguous
    x[0, 0] = 42.0  # the same memory: what is written through the result is what linv's buffer holds
    assert 42.0 in np.asarray(linv_buffer(x))


def test_other_results_are_linv_memory_without_a_copy():
    a, b = spd(8), RNG.standard_normal((8, 3))
    tall = RNG.standard_normal((12, 5))
    image = RNG.uniform(0, 1, (32, 32))
    results = {
        "inv stack": linv.inv(np.stack([a, a])),
        "solve": linv.solve(a, b), "solve vector": linv.solve(a, b[:, 0]), "solve stack": linv.solve(np.stack([a, a]), b),
        "cholesky": linv.cholesky(a), "lstsq": linv.lstsq(tall, tall[:, 0]), "pinv": linv.pinv(tall),
        "LU.solve": linv.LU(a).solve(b), "Cholesky.solve": linv.Cholesky(a).solve(b),
        "wls": linv.wls(tall.T, np.ones(12), np.ones(12)),
        "deblur": linv.deblur(image, linv.imaging.gaussian_psf(3, 0.5)),
        "psf": linv.imaging.psf("gaussian:size=5,sigma=1"), "phantom": linv.imaging.phantom(32),
    }
    for name, x in results.items():
        try:
            assert_linv_memory(x)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


def test_read_hands_over_linv_memory():
    a = spd(5)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "a.npy")
        np.save(path, a)
        x = linv.read(path)
    np.testing.assert_array_equal(x, a)
    assert_linv_memory(x)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_inputs_are_used_in_place(order, dtype):
    # "Arrays in C or Fortran order are used in place": float32 and float64 arrays in either order reach
    # linv's module as the very same object (no conversion, no copy), and are left as they were.
    a = np.asarray(spd(6), dtype=dtype, order=order)
    assert _common._float(a) is a
    assert _common._square(a) is a
    kept = a.copy()
    linv.inv(a)
    linv.solve(a, np.ones(6, dtype=dtype))
    np.testing.assert_array_equal(a, kept)
    # A read-only input is accepted (linv only reads it), so there was no need to copy it to write.
    a.flags.writeable = False
    np.testing.assert_allclose(linv.inv(a) @ a, np.eye(6), atol=1e-4 if dtype == np.float32 else 1e-12)


def test_strided_inputs_are_copied_once_and_still_right():
    # Neither C nor Fortran order (every other column): one contiguous copy, as promised, and a right result.
    wide = np.asarray(spd(12), order="C")
    a = wide[::2, ::2]
    assert not (a.flags.c_contiguous or a.flags.f_contiguous)
    c = _common._contiguous(a)
    assert c is not a and c.flags.c_contiguous
    np.testing.assert_allclose(linv.inv(a), np.linalg.inv(a), rtol=1e-10, atol=1e-12)
