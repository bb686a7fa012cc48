"""linv.slam against NumPy: the bordered Jacobian's step and pseudoinverse as numpy.linalg.lstsq and pinv
(and the damped normal equations), within bounds scaled by n eps cond(J)^2, on fresh random Jacobians."""
import numpy as np
import pytest

import linv

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)
THRESHOLD = 30.0


def bordered(n, segments, k, dtype):
    """k dense columns, then `segments` segment columns on consecutive runs of rows tiling all n."""
    cuts = np.sort(RNG.choice(np.arange(1, n), segments - 1, replace=False))
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [n]])
    j = np.zeros((n, k + segments))
    j[:, :k] = RNG.uniform(-1, 1, (n, k))
    for s, (a, b) in enumerate(zip(starts, ends)):
        j[a:b, k + s] = RNG.uniform(0.5, 2, b - a) * RNG.choice([-1, 1], b - a)
    return j.astype(dtype), starts, ends - starts


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [1, 3])
def test_step_and_pinv_match_numpy(dtype, k):
    n, segments = 300, 40
    j, starts, lengths = bordered(n, segments, k, dtype)
    J = linv.slam.BorderedJacobian(j, k)
    assert J.shape == j.shape and J.dense_cols == k and J.device == "cpu"
    np.testing.assert_array_equal(J.starts, starts)
    np.testing.assert_array_equal(J.lengths, lengths)
    np.testing.assert_array_equal(J.toarray(), j)
    j64 = j.astype(np.float64)
    eps = np.finfo(dtype).eps
    cond2 = np.linalg.cond(j64) ** 2
    d = RNG.uniform(-1, 1, (n, 2)).astype(dtype)
    x, report = J.step(d, report=True)
    ref = np.linalg.lstsq(j64, d.astype(np.float64), rcond=None)[0]
    assert x.shape == (j.shape[1], 2) and x.dtype == dtype
    assert np.abs(x - ref).max() / np.abs(ref).max() <= THRESHOLD * n * eps * cond2
    assert report["method"] == "bordered-schur"
    x1 = linv.slam.step(j, d[:, 0], k)
    assert x1.shape == (j.shape[1],)
    assert np.abs(x1 - ref[:, 0]).max() / np.abs(ref[:, 0]).max() <= THRESHOLD * n * eps * cond2

    p = J.pinv()
    refp = np.linalg.pinv(j64)
    assert p.shape == (j.shape[1], n) and p.dtype == dtype
    assert np.abs(p - refp).max() / np.abs(refp).max() <= THRESHOLD * n * eps * cond2

    damping = 0.1
    jtj = j64.T @ j64
    c = jtj + damping * np.diag(np.diag(jtj))
    refd = np.linalg.solve(c, j64.T @ d.astype(np.float64))
    xd = J.step(d, damping=damping)
    assert np.abs(xd - refd).max() / np.abs(refd).max() <= THRESHOLD * n * eps * np.linalg.cond(c)
    if dtype == np.float64:
        ni = J.normal_inverse(damping=damping)
        refi = np.linalg.inv(c)
        assert np.abs(ni - refi).max() / np.abs(refi).max() <= THRESHOLD * n * eps * np.linalg.cond(c)


def test_sparse_step_matches_lstsq():
    n, m = 200, 30
    j = RNG.uniform(-1, 1, (n, m)) * (RNG.uniform(0, 1, (n, m)) < 0.3)
    j[np.arange(m), np.arange(m)] = 3.0  # full column rank
    d = RNG.uniform(-1, 1, n)
    x, report = linv.slam.sparse_step(j, d, tolerance=1e-13, report=True)
    ref = np.linalg.lstsq(j, d, rcond=None)[0]
    cond2 = np.linalg.cond(j) ** 2
    assert report["method"] == "cgls" and report["iterations"] >= 1
    assert np.abs(x - ref).max() / np.abs(ref).max() <= THRESHOLD * (1e-13 + n * np.finfo(float).eps) * cond2
    # SciPy's sparse formats, taken as stored (never dense): the same step, float32 data kept float32
    scipy_sparse = pytest.importorskip("scipy.sparse")
    for sp in (scipy_sparse.csr_matrix(j), scipy_sparse.coo_matrix(j), scipy_sparse.csc_array(j)):
        xs = linv.slam.sparse_step(sp, d, tolerance=1e-13)
        assert xs.shape == (m,)
        assert np.abs(xs - ref).max() / np.abs(ref).max() <= THRESHOLD * (1e-13 + n * np.finfo(float).eps) * cond2
    assert linv.slam.sparse_step(scipy_sparse.csr_matrix(j.astype(np.float32)), d).dtype == np.float32
    with pytest.raises(ValueError, match="200"):
        linv.slam.sparse_step(scipy_sparse.csr_matrix(j), d[:-1])


def test_slam_errors():
    j, _, _ = bordered(50, 5, 1, np.float64)
    with pytest.raises(ValueError, match=r"\(50, 6\).*\(49,\)"):
        linv.slam.step(j, np.ones(49))
    bad = j.copy()
    bad[0, 3] = 1.0  # a second segment nonzero in row 0
    with pytest.raises(ValueError):
        linv.slam.BorderedJacobian(bad, 1)
    unobservable = j.copy()
    unobservable[:, 2] = 0.0  # a segment with no observation: rank deficiency, not a malformed J
    with pytest.raises(linv.SingularMatrixError) as e:
        linv.slam.step(unobservable, np.ones(50))
    assert e.value.pivot == 3 and "column 3 of J" in str(e.value)


def test_gpu_step_matches_cpu():
    if not linv.info()["gpus"]:
        pytest.skip(f"no CUDA GPU usable ({linv.info()['why_no_gpu']}): GPU tests skipped")
    j, _, _ = bordered(400, 50, 2, np.float64)
    d = RNG.uniform(-1, 1, 400)
    x = linv.slam.BorderedJacobian(j, 2, device="cuda").step(d)
    ref = np.linalg.lstsq(j, d, rcond=None)[0]
    assert np.abs(x - ref).max() / np.abs(ref).max() <= THRESHOLD * 400 * np.finfo(float).eps * np.linalg.cond(j) ** 2
