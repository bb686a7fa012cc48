"""linv.wls and linv.WeightedLeastSquares against a float64 NumPy reference on fresh random inputs, with
error bounds scaled by n eps cond(C), C = A D^2 A^T (the normal equations square the condition)."""
import numpy as np
import pytest

import linv

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)
THRESHOLD = 30.0


def problem(m, n, k, dtype):
    a = RNG.uniform(-1, 1, (m, n)).astype(dtype)
    d = RNG.uniform(0.5, 2.0, n).astype(dtype)
    b = RNG.uniform(-1, 1, (n, k) if k else n).astype(dtype)
    return a, d, b


def reference(a, d2, b):
    a, d2, b = (v.astype(np.float64) for v in (a, d2, b))
    c = (a * d2) @ a.T
    x = np.linalg.solve(c, (a * d2) @ b)
    return x, np.linalg.cond(c)


def assert_close(x, ref, cond, dtype, n):
    bound = THRESHOLD * n * np.finfo(dtype).eps * cond
    assert np.abs(x - ref).max() / np.abs(ref).max() <= bound


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("storage", ["full", "packed"])
@pytest.mark.parametrize("k", [0, 3])
def test_wls_matches_the_normal_equations(dtype, storage, k):
    m, n = 40, 120
    a, d, b = problem(m, n, k, dtype)
    x, report = linv.wls(a, d, b, storage=storage, report=True, check=True)
    assert x.dtype == dtype and x.shape == ((m, k) if k else (m,))
    ref, cond = reference(a, d, b)
    assert_close(x, ref, cond, dtype, n)
    assert report["operation"] == "wls" and report["device"] == "cpu"
    # the plain weights give the same system with d squared
    xp = linv.wls(a, np.sqrt(d), b, weights="plain", storage=storage)
    assert_close(xp, ref, cond, dtype, n)


def test_wls_mixed_precision_reaches_float64():
    m, n = 60, 200
    a, d, b = problem(m, n, 0, np.float64)
    x, report = linv.wls(a, d, b, precision="mixed", report=True)
    ref, cond = reference(a, d, b)
    assert_close(x, ref, cond, np.float64, n)
    assert "mixed" in report["precision"] and report["iterations"] >= 1
    assert report["stop"] in ("converged", "fell back to float64")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_factor_once_per_set_of_weights(dtype):
    m, n = 30, 90
    a, _, b = problem(m, n, 2, dtype)
    system = linv.WeightedLeastSquares(a)
    assert system.device == "cpu"
    with pytest.raises(ValueError, match="factor"):
        system.solve(b)
    for _ in range(3):
        d = RNG.uniform(0.1, 3.0, n).astype(dtype)
        x, report = system.factor(d).solve(b, report=True)
        ref, cond = reference(a, d, b)
        assert x.dtype == dtype and x.shape == (m, 2)
        assert_close(x, ref, cond, dtype, n)
        assert_close(system.solve(b[:, 0]), ref[:, 0], cond, dtype, n)


def test_wls_in_statsmodels_form():
    rng = RNG
    X, w, y = rng.uniform(-1, 1, (300, 5)), rng.uniform(0.1, 2, 300), rng.uniform(-1, 1, 300)
    beta = linv.wls(X, w, y, form="statsmodels")
    ref = np.linalg.lstsq(X * np.sqrt(w)[:, None], y * np.sqrt(w), rcond=None)[0]
    kappa = np.linalg.cond(X * np.sqrt(w)[:, None])
    assert beta.shape == (5,)
    assert np.abs(beta - ref).max() <= 30 * 300 * np.finfo(float).eps * kappa ** 2 * np.abs(ref).max()
    with pytest.raises(ValueError, match="fewer observations"):
        linv.wls(X.T, w, y, form="statsmodels")
    with pytest.raises(ValueError, match="form"):
        linv.wls(X, w, y, form="scipy")


def test_wls_errors():
    a, d, b = problem(5, 12, 0, np.float64)
    with pytest.raises(ValueError, match=r"\(5, 12\).*\(11,\)"):
        linv.wls(a, d[:-1], b)
    with pytest.raises(ValueError, match=r"\(5, 12\).*\(13,\)"):
        linv.wls(a, d, np.ones(13))
    with pytest.raises(ValueError, match=r"\(12, 5\)"):
        linv.wls(a.T, d[:5], b[:5])
    with pytest.raises(ValueError, match="weights"):
        linv.wls(a, d, b, weights="cubed")
    d0 = np.zeros(12)  # every weight zero: C = 0
    with pytest.raises(linv.NotPositiveDefiniteError) as e:
        linv.wls(a, d0, b)
    assert e.value.minor >= 1


def test_gpu_wls_matches_cpu():
    if not linv.info()["gpus"]:
        pytest.skip(f"no CUDA GPU usable ({linv.info()['why_no_gpu']}): GPU tests skipped")
    a, d, b = problem(50, 150, 0, np.float64)
    x, report = linv.wls(a, d, b, device="cuda", report=True)
    ref, cond = reference(a, d, b)
    assert report["device"] == "cuda:0"
    assert_close(x, ref, cond, np.float64, 150)


def test_a_tiny_column_under_a_huge_weight_keeps_float32():
    """Found by the long property run: D scaled by its own largest entry, and A by its own, left the column
    that makes C (4.9e-10 under a weight of 2.8e17, in float32) to underflow, and C was called singular.
    D is scaled by the largest weighted column now; the answer is NumPy's in float64 to float32's accuracy."""
    a = np.array([[0.1257302, -4.92128949e-10, 0.6404226, 0.1049001, -0.5356694, 0.3615951, 1.304, 0.9470810,
                   -0.7037352, -1.2654215, -0.6232744, 0.0413260, -9.98593126e9]], dtype=np.float32)
    d = np.array([0, 2.8109144e17, 7.5714128e-24, 8.8614316e-13, 0, 1.3899673e-3] + [0] * 7, dtype=np.float32)
    b = np.linspace(-1, 1, 13, dtype=np.float32)[:, None]
    x = linv.wls(a, d, b)
    a64, d64, b64 = (v.astype(np.float64) for v in (a, d, b))
    ref = np.linalg.solve((a64 * d64) @ a64.T, (a64 * d64) @ b64)
    assert x.dtype == np.float32
    assert abs(x[0, 0] - ref[0, 0]) <= 30 * np.finfo(np.float32).eps * abs(ref[0, 0])
