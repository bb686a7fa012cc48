"""The linv Python package against NumPy: results within scaled bounds on fresh random inputs, shapes and
dtypes as numpy.linalg keeps them, the errors Python users expect, and memory that outlives its inputs.
GPU cases skip, saying why, where no GPU is usable."""
import gc

import numpy as np
import pytest

import linv

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py, seeding.py)
THRESHOLD = 30.0  # LAPACK's test ratio, as the C++ tests


def scaled_inverse_residual(a, x):
    n = a.shape[0]
    a64, x64 = a.astype(np.float64), x.astype(np.float64)
    r = a64 @ x64 - np.eye(n)
    eps = np.finfo(a.dtype).eps
    return np.abs(r).sum(0).max() / (n * eps * np.abs(a64).sum(0).max() * np.abs(x64).sum(0).max())


def scaled_solve_residual(a, x, b):
    n = a.shape[0]
    a64, x64, b64 = (v.astype(np.float64).reshape(n, -1) for v in (a, x, b))
    eps = np.finfo(a.dtype).eps
    r = b64 - a64 @ x64
    return np.abs(r).sum(0).max() / (n * eps * (np.abs(a64).sum(0).max() * np.abs(x64).sum(0).max()
                                                + np.abs(b64).sum(0).max()))


def random_matrix(n, dtype, order="C"):
    a = RNG.uniform(-1, 1, (n, n)) + n ** 0.5 * np.eye(n)  # well conditioned: float32 too
    return np.asarray(a, dtype=dtype, order=order)


def test_info_says_what_was_built():
    i = linv.info()
    assert i["version"] == linv.__version__
    assert isinstance(i["cuda"], bool)
    assert i["gpus"] or i["why_no_gpu"]


def test_cpu_threads_can_be_set_and_refuse_zero():
    before = linv.cpu_threads()
    assert before >= 1 and linv.info()["cpu_threads"] == before
    try:
        linv.set_cpu_threads(1)
        assert linv.cpu_threads() == 1
        assert "(1 threads)" in linv.info()["blas"]
        a = RNG.standard_normal((50, 50))
        assert np.abs(linv.inv(a) @ a - np.eye(50)).max() < 1e-8
        with pytest.raises(ValueError, match="at least 1"):
            linv.set_cpu_threads(0)
    finally:
        linv.set_cpu_threads(before)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("n", [1, 7, 130])
def test_inv_matches_numpy(dtype, order, n):
    a = random_matrix(n, dtype, order)
    before = a.copy()
    x = linv.inv(a)
    assert x.dtype == dtype and x.shape == (n, n)
    assert scaled_inverse_residual(a, x) <= THRESHOLD
    ref = np.linalg.inv(a.astype(np.float64))
    cond = np.linalg.cond(a.astype(np.float64), 1)
    assert np.abs(x - ref).max() / np.abs(ref).max() <= THRESHOLD * n * np.finfo(dtype).eps * cond
    np.testing.assert_array_equal(a, before)  # the input is read, never written


def test_inv_takes_integers_as_float64_and_reports():
    a = np.array([[4, 1], [2, 3]])
    x, report = linv.inv(a, report=True, check=True)
    assert x.dtype == np.float64
    np.testing.assert_allclose(x, np.linalg.inv(a.astype(float)), rtol=1e-14)
    for key in ("method", "device", "seconds", "rcond", "scaled_residual", "notes"):
        assert key in report
    assert report["device"] == "cpu" and report["method"] == "lu"
    assert report["scaled_residual"] <= THRESHOLD


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_solve_keeps_the_shape_of_b(dtype):
    n = 50
    a = random_matrix(n, dtype)
    b1 = RNG.uniform(-1, 1, n).astype(dtype)
    x1 = linv.solve(a, b1)
    assert x1.shape == (n,) and x1.dtype == dtype
    assert scaled_solve_residual(a, x1, b1) <= THRESHOLD
    b3 = np.asfortranarray(RNG.uniform(-1, 1, (n, 3)).astype(dtype))
    x3 = linv.solve(a, b3)
    assert x3.shape == (n, 3)
    assert scaled_solve_residual(a, x3, b3) <= THRESHOLD


def test_the_plain_call_gives_what_the_general_path_gives():
    """solve's shortcut for two same-dtype contiguous NumPy arrays (linv._plain_system) against the general
    path (taken here by naming the device, which the shortcut leaves out): the same bits, shape, dtype and
    errors, over both orders, vectors and blocks, every dtype and the empty system; neighbours it must not
    take (mixed dtypes, subclasses, strided or non-native arrays) still answer as NumPy promotes them."""
    for dtype in (np.float64, np.float32, np.complex128, np.complex64):
        for n in (0, 1, 2, 4, 7, 33):
            for order in ("C", "F"):
                for shape in ((n,), (n, 1), (n, 3)):
                    a = np.array(RNG.uniform(-1, 1, (n, n)) + n * np.eye(n), dtype=dtype, order=order)
                    if np.dtype(dtype).kind == "c":
                        a = a + 1j * RNG.uniform(-1, 1, (n, n)).astype(dtype)
                    b = np.array(RNG.uniform(-1, 1, shape), dtype=dtype, order=order)
                    assert linv._plain_system(a, b)
                    x = linv.solve(a, b)
                    y = linv.solve(a, b, device="cpu")
                    assert x.shape == y.shape == b.shape and x.dtype == y.dtype == dtype
                    np.testing.assert_array_equal(x, y)
                    x, rep = linv.solve(a, b, report=True)
                    assert rep["method"] in ("lu", "triangular", "diagonal", "cholesky")
    a = random_matrix(5, np.float32)
    b64 = RNG.uniform(-1, 1, 5)
    assert not linv._plain_system(a, b64)  # promoted to float64, as NumPy
    assert linv.solve(a, b64).dtype == np.float64
    a5, b5 = random_matrix(10, np.float64)[::2, ::2], RNG.uniform(-1, 1, 10)[::2]  # strided: the general path
    assert not linv._plain_system(a5, np.ones(5)) and not linv._plain_system(random_matrix(5, np.float64), b5)
    np.testing.assert_allclose(linv.solve(a5, b5), np.linalg.solve(a5, b5), rtol=1e-12)
    m = np.matrix(random_matrix(3, np.float64))
    assert not linv._plain_system(m, np.ones(3))
    assert not linv._plain_system(random_matrix(3, np.float64).astype(">f8"), np.ones(3).astype(">f8"))
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(linv.SingularMatrixError):
        linv.solve(singular, np.ones(2))
    with pytest.raises(ValueError, match="NaN"):
        linv.solve(np.array([[1.0, np.nan], [0.0, 1.0]]), np.ones(2))


def test_errors_are_the_ones_python_users_expect():
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    with pytest.raises(np.linalg.LinAlgError) as e:
        linv.inv(singular)
    assert isinstance(e.value, linv.SingularMatrixError)
    assert 1 <= e.value.pivot <= 3
    assert "pivot" in str(e.value)
    with pytest.raises(ValueError, match=r"\(3, 2\)"):
        linv.inv(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"\(4, 4\).*\(5,\)"):
        linv.solve(np.eye(4), np.ones(5))
    with pytest.raises(ValueError):
        linv.inv(np.eye(3), method="no-such-method")
    nan = np.eye(3)
    nan[1, 2] = np.nan
    with pytest.raises(linv.InputError, match="row 2, column 3"):
        linv.inv(nan)


def test_results_outlive_their_inputs():
    xs = []
    for _ in range(200):
        a = random_matrix(20, np.float64)
        xs.append((a.copy(), linv.inv(a)))
        del a
    gc.collect()
    for a, x in xs:
        assert scaled_inverse_residual(a, x) <= THRESHOLD


def test_gpu_inverse_matches_cpu():
    if not linv.info()["gpus"]:
        pytest.skip(f"no CUDA GPU usable ({linv.info()['why_no_gpu']}): GPU tests skipped")
    a = random_matrix(300, np.float64)
    x, report = linv.inv(a, device="cuda", report=True)
    assert report["device"] == "cuda:0"
    assert scaled_inverse_residual(a, x) <= THRESHOLD


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cholesky_lstsq_pinv_slogdet_match_numpy(dtype):
    n = 60
    g = RNG.uniform(-1, 1, (n, n))
    spd = (g @ g.T / n + np.eye(n)).astype(dtype)
    l, report = linv.cholesky(spd, report=True, check=True)
    assert l.dtype == dtype and np.all(np.triu(l, 1) == 0)
    assert report["scaled_residual"] <= THRESHOLD
    eps = np.finfo(dtype).eps
    assert np.abs(l.astype(float) @ l.T.astype(float) - spd).max() <= THRESHOLD * n * eps * np.abs(spd).max()

    tall = RNG.uniform(-1, 1, (3 * n, n)).astype(dtype)
    b = RNG.uniform(-1, 1, 3 * n).astype(dtype)
    x, report = linv.lstsq(tall, b, report=True)
    assert x.shape == (n,) and report["rank"] == n
    ref = np.linalg.lstsq(tall.astype(float), b.astype(float), rcond=None)[0]
    cond = np.linalg.cond(tall.astype(float))
    assert np.abs(x - ref).max() / np.abs(ref).max() <= THRESHOLD * 3 * n * eps * cond ** 2

    p = linv.pinv(tall)
    assert p.shape == (n, 3 * n) and p.dtype == dtype
    refp = np.linalg.pinv(tall.astype(float))
    assert np.abs(p - refp).max() / np.abs(refp).max() <= THRESHOLD * 3 * n * eps * cond

    a = random_matrix(n, dtype)
    sign, logdet = linv.slogdet(a)
    rsign, rlog = np.linalg.slogdet(a.astype(float))
    assert sign == rsign and abs(logdet - rlog) <= THRESHOLD * n * eps * max(1.0, abs(rlog))


def test_cholesky_names_the_failing_minor():
    a = np.eye(4)
    a[2, 2] = -1.0
    with pytest.raises(linv.NotPositiveDefiniteError) as e:
        linv.cholesky(a)
    assert isinstance(e.value, np.linalg.LinAlgError) and e.value.minor == 3
    with pytest.raises(ValueError, match=r"\(3, 2\).*\(4,\)"):
        linv.lstsq(np.ones((3, 2)), np.ones(4))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_factor_once_solve_many(dtype):
    n = 80
    a = random_matrix(n, dtype)
    lu = linv.LU(a)
    assert lu.pivoting == "partial" and len(lu.pivots) == n
    for k in (None, 3):
        b = RNG.uniform(-1, 1, n if k is None else (n, k)).astype(dtype)
        x = lu.solve(b)
        assert x.shape == b.shape and x.dtype == dtype
        assert scaled_solve_residual(a, x, b) <= THRESHOLD
    assert scaled_inverse_residual(a, lu.inv()) <= THRESHOLD
    sign, log_abs = lu.slogdet()
    rsign, rlog = np.linalg.slogdet(a.astype(float))
    assert sign == rsign and abs(log_abs - rlog) <= THRESHOLD * n * np.finfo(dtype).eps * max(1.0, abs(rlog))
    cond = np.linalg.cond(a.astype(float), 1)
    # after inv() rcond is exact but for the rounding of ||a^-1||, computed in the matrix's precision: at
    # least (1 - n eps cond) / cond, and the estimate it replaces rarely 3x above 1/cond
    slack = n * np.finfo(dtype).eps * cond
    assert (1 - slack) / cond <= lu.rcond() <= 3 / cond
    tournament = linv.LU(a, pivoting="tournament")
    # growth is max|U| / max|A|, which may fall below 1 (a float32 run gave 0.9996); U's first pivot is
    # the largest entry of A's first column under tournament pivoting as under partial pivoting
    first_column = np.abs(a[:, 0]).max() / np.abs(a).max()
    assert tournament.pivoting == "tournament" and tournament.growth >= first_column * (1 - 4 * np.finfo(dtype).eps)
    randomized = linv.LU(a, pivoting="randomized")
    assert randomized.pivoting == "randomized"
    assert scaled_solve_residual(a, randomized.solve(b), b) <= THRESHOLD
    g = RNG.uniform(-1, 1, (n, n))
    spd = (g @ g.T / n + np.eye(n)).astype(dtype)
    ch = linv.Cholesky(spd)
    b = RNG.uniform(-1, 1, n).astype(dtype)
    assert scaled_solve_residual(spd, ch.solve(b), b) <= THRESHOLD
    sign, log_abs = ch.slogdet()
    rsign, rlog = np.linalg.slogdet(spd.astype(float))
    assert sign == 1 and abs(log_abs - rlog) <= THRESHOLD * n * np.finfo(dtype).eps * max(1.0, abs(rlog))
    assert ch.det == pytest.approx(np.exp(log_abs))
    with pytest.raises(ValueError, match="pivoting"):
        linv.LU(a, pivoting="rook")


def test_mixed_precision_refines_to_float64_accuracy():
    a = random_matrix(200, np.float64)
    b = RNG.uniform(-1, 1, 200)
    x, report = linv.solve(a, b, precision="mixed", factor="float32", report=True, check=True)
    assert "float32" in report["precision"] and report["iterations"] >= 1
    assert scaled_solve_residual(a, x, b) <= THRESHOLD
    xi, report = linv.inv(a, precision="mixed", report=True, check=True)
    assert scaled_inverse_residual(a, xi) <= THRESHOLD
    with pytest.raises(ValueError, match="float64"):
        linv.solve(a.astype(np.float32), b.astype(np.float32), precision="mixed")  # a float64 b promotes a
    with pytest.raises(ValueError, match="'native' or 'mixed'"):
        linv.solve(a, b, precision="half")
    with pytest.raises(ValueError, match="stacks"):
        linv.inv(np.stack([a, a]), precision="mixed")


def test_docstrings_say_what_auto_picks_from_the_librarys_own_orders():
    # linv::describe_auto_method builds the sentence from the orders the CUDA backend uses; the docstrings
    # (and `linv inv --help`) take it from there
    text = linv._linv.describe_auto_method()
    for order in ("512", "256", "4096", "16384"):
        assert order in text
    for function in (linv.inv, linv.solve):
        flat = " ".join(function.__doc__.split())
        assert "AUTO_METHOD" not in flat and text[1:] in flat
