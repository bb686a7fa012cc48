"""linv.inv and linv.solve over stacks (..., n, n) against NumPy: broadcasting as numpy.linalg, linv's
batched kernels within scaled bounds on fresh random inputs, and singular members named."""
import numpy as np
import pytest

import linv

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)
THRESHOLD = 30.0


def random_stack(lead, n, dtype):
    a = RNG.uniform(-1, 1, lead + (n, n)) + n ** 0.5 * np.eye(n)  # well conditioned: float32 too
    return a.astype(dtype)


def norm1(m):
    return np.abs(m).sum(axis=-2).max(axis=-1)


def check_inverses(a, x):
    """Each matrix's scaled residual and forward error within the LAPACK-style bounds."""
    n = a.shape[-1]
    eps = np.finfo(a.dtype).eps
    a64, x64 = a.astype(np.float64), x.astype(np.float64)
    residual = norm1(a64 @ x64 - np.eye(n)) / (n * eps * norm1(a64) * norm1(x64))
    assert residual.max() <= THRESHOLD
    ref = np.linalg.inv(a64)
    cond = np.linalg.cond(a64, 1)
    err = np.abs(x64 - ref).max(axis=(-2, -1)) / np.abs(ref).max(axis=(-2, -1))
    assert np.all(err <= THRESHOLD * n * eps * cond)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("lead,n", [((5,), 1), ((3, 4), 7), ((2,), 64), ((2,), 70)])
def test_inv_of_a_stack_matches_numpy(dtype, lead, n):
    a = random_stack(lead, n, dtype)
    before = a.copy()
    x, report = linv.inv(a, report=True, check=True)
    assert x.shape == a.shape and x.dtype == dtype
    check_inverses(a, x)
    assert report["singular"] == 0 and report["pivots"].shape == lead
    assert report["scaled_residual"] <= THRESHOLD
    if n <= 64:
        assert report["method"] == "batched-lu" and report["operation"] == "batched-inv"
    np.testing.assert_array_equal(a, before)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_solve_broadcasts_as_numpy(dtype):
    n = 6
    eps = np.finfo(dtype).eps
    a = random_stack((3, 1), n, dtype)
    cases = [RNG.uniform(-1, 1, (4, n, 2)),   # a (3, 1) against b (4,): (3, 4)
             RNG.uniform(-1, 1, n),          # a vector for every matrix
             RNG.uniform(-1, 1, (n, 3))]     # one block for every matrix
    for b in cases:
        b = b.astype(dtype)
        x, report = linv.solve(a, b, report=True, check=True)
        ref = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
        assert x.shape == ref.shape and x.dtype == dtype
        assert report["scaled_residual"] <= THRESHOLD
        cond = np.linalg.cond(a.astype(np.float64), 1).max()
        assert np.abs(x - ref).max() / np.abs(ref).max() <= THRESHOLD * n * eps * cond
    # a single matrix against a stack of right-hand sides
    one = random_stack((), n, dtype)
    b = RNG.uniform(-1, 1, (5, n, 2)).astype(dtype)
    x = linv.solve(one, b)
    ref = np.linalg.solve(one.astype(np.float64), b.astype(np.float64))
    assert x.shape == (5, n, 2)
    assert np.abs(x - ref).max() / np.abs(ref).max() <= THRESHOLD * n * eps * np.linalg.cond(one.astype(float), 1)


def test_large_orders_go_one_by_one():
    n = 70
    a = random_stack((3,), n, np.float64)
    b = RNG.uniform(-1, 1, (3, n, 2))
    x, report = linv.solve(a, b, report=True)
    ref = np.linalg.solve(a, b)
    cond = np.linalg.cond(a, 1).max()
    assert np.abs(x - ref).max() / np.abs(ref).max() <= THRESHOLD * n * np.finfo(float).eps * cond
    assert any("each matrix by linv::solve" in note for note in report["notes"])


def test_large_orders_name_their_singular_members_as_small_ones_do():
    # the library goes one by one above the batched kernels' order, with the batch's status: the same
    # refusal, NaN block and pivot as below it
    for n in (63, 64, 65, 90):
        a = random_stack((2, 2), n, np.float64)
        a[1, 0, :, 3] = 0.0
        with pytest.raises(linv.SingularMatrixError) as e:
            linv.inv(a)
        assert e.value.index == (1, 0) and 1 <= e.value.pivot <= n, n
        x, report = linv.inv(a, singular="nan", report=True)
        assert np.all(np.isnan(x[1, 0])) and report["singular"] == 1, n
        regular = np.ones((2, 2), bool)
        regular[1, 0] = False
        check_inverses(a[regular], x[regular])


def test_singular_members_are_named_or_nan():
    n = 4
    a = random_stack((2, 3), n, np.float64)
    a[1, 2, :, 1] = 0.0  # matrix (1, 2): a zero column
    with pytest.raises(linv.SingularMatrixError) as e:
        linv.inv(a)
    assert isinstance(e.value, np.linalg.LinAlgError)
    assert e.value.index == (1, 2) and e.value.indices == [(1, 2)] and 1 <= e.value.pivot <= n
    assert "(1, 2)" in str(e.value) and "(2, 3, 4, 4)" in str(e.value)
    x, report = linv.inv(a, singular="nan", report=True)
    assert np.all(np.isnan(x[1, 2])) and report["singular"] == 1
    assert report["pivots"][1, 2] >= 1 and np.count_nonzero(report["pivots"]) == 1
    regular = np.ones((2, 3), bool)
    regular[1, 2] = False
    check_inverses(a[regular], x[regular])
    with pytest.raises(linv.SingularMatrixError, match=r"matrix \(1, 2\)"):
        linv.solve(a, RNG.uniform(-1, 1, (n, 1)))
    xs = linv.solve(a, RNG.uniform(-1, 1, n), singular="nan")
    assert np.all(np.isnan(xs[1, 2])) and np.all(np.isfinite(xs[regular]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("n", [1, 3, 8, 33, 70])
def test_a_non_finite_entry_of_a_solved_stack_is_named_where_the_caller_put_it(dtype, n):
    # real stacks are solved transposed, in place: the entry named must still be the caller's (row, column)
    a = random_stack((2, 3), n, dtype)
    b = RNG.uniform(-1, 1, (2, 3, n, 2)).astype(dtype)
    row, col = n - 1, 0
    a[1, 2, row, col] = np.inf
    with pytest.raises(linv.InputError, match=rf"matrix 5 of the stack.*row {row + 1}, column {col + 1}\b"):
        linv.solve(a, b)


def test_stack_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3, 4\)"):
        linv.inv(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match=r"\(2, 4, 4\).*\(3, 4, 1\)"):
        linv.solve(np.ones((2, 4, 4)), np.ones((3, 4, 1)))
    with pytest.raises(ValueError, match=r"\(2, 4, 4\).*\(2, 5, 1\)"):
        linv.solve(np.ones((2, 4, 4)), np.ones((2, 5, 1)))
    with pytest.raises(ValueError, match="method"):
        linv.inv(np.ones((2, 3, 3)), method="gauss-jordan")
    with pytest.raises(ValueError, match="singular"):
        linv.inv(random_stack((2,), 3, np.float64), singular="ignore")


def test_empty_stacks():
    assert linv.inv(np.zeros((0, 3, 3))).shape == (0, 3, 3)
    assert linv.solve(np.zeros((0, 3, 3)), np.zeros(3)).shape == (0, 3)


def test_gpu_batches_match_cpu():
    if not linv.info()["gpus"]:
        pytest.skip(f"no CUDA GPU usable ({linv.info()['why_no_gpu']}): GPU tests skipped")
    a = random_stack((100,), 16, np.float64)
    x, report = linv.inv(a, device="cuda", report=True)
    assert report["device"] == "cuda:0"
    check_inverses(a, x)
