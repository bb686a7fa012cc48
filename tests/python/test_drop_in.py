"""linv.linalg as a drop-in for numpy.linalg: NumPy's own test cases (numpy_cases.py), and a hypothesis suite
against NumPy over dtypes, byte orders, shapes (stacks, broadcasting, 0 x 0, empty stacks), strides and
subclasses, to n eps cond bounds; and no value or precision changed without an error, in linv.linalg and in
linv's own functions (the silent cases of the first drop-in trial)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import linv
import numpy_cases
import scipy_cases
from linv import linalg

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)


# NumPy's complex cases linv.linalg fails, and why: lstsq's complex64 2 x 2 matrix [[1+2j, 2+3j], [3+4j, 4+5j]]
# (cond 21), in each of its 28 layouts, where gelsy's x leaves a residual of 1.9e-6 (7 eps ||b||, within
# n eps cond) and NumPy's test allows 1.5e-6 (its gelsd is exact on it).
NUMPY_COMPLEX_KNOWN = {"lstsq": 28}


def test_numpy_linalg_own_cases():
    """Every real case of NumPy's test_linalg.py passes for every function linv.linalg provides, and every
    complex one but the known ones above."""
    pytest.importorskip("numpy.linalg.tests.test_linalg", reason="this NumPy was installed without its tests")
    outcomes = numpy_cases.run()
    assert set(outcomes) == set(numpy_cases.CLASSES)
    for function, results in outcomes.items():
        real = [(name, error) for name, complex_, error in results if not complex_]
        assert len(real) > 300, (function, len(real))
        failed = [(name, error) for name, error in real if error is not None]
        assert not failed, (function, len(failed), failed[:5])
        complex_failed = [(name, error) for name, complex_, error in results if complex_ and error is not None]
        assert len(complex_failed) <= NUMPY_COMPLEX_KNOWN.get(function, 0), (function, complex_failed[:5])
        assert all(name.startswith("csingle") for name, _ in complex_failed), complex_failed[:5]


# SciPy's tests linv.scipy fails besides the overwrite ones (test_scipy_linalg_own_tests), and why; any other
# failure is a regression.
SCIPY_KNOWN = {
    "TestSolve": {"test_exactly_singular_gh22263[positive definite]",  # linv's own message
                  "test_assume_a_keyword"},  # a misspelt structure: KeyError, as SciPy's inv (solve: ValueError)
    "TestInv": {"test_dtypes[longdouble]", "test_dtypes[clongdouble]"},  # a TypeError: 64-bit parts would round it
    "TestDet": {"test_1x1_all_singleton_dims", "test_1by1_stacked_input_output",  # SciPy: float64 for 1 x 1
                "test_sample_compatible_dtype_input[e]", "test_sample_compatible_dtype_input[f]",
                "test_sample_compatible_dtype_input[F]",  # SciPy computes a float32 det in float64
                "test_incompatible_dtype_input", "test_empty_edge_cases"},  # messages
    "TestSolveTriangular": set(), "TestLUSolve": set(), "TestChoFactor": set(),
    "TestLUFactor": set(),
}


def test_scipy_linalg_own_tests():
    """SciPy's tests of the functions linv.scipy provides, complex ones included: the tests that solve and inv
    overwrote a (linv never writes a there) and the known ones above fail, nothing else (on 2026-11-29, SciPy
    1.17.1: TestSolve 1117 of 1167 pass, 48 of the others overwrite_a; TestInv 51 of 54; TestDet 27 of 35;
    TestSolveTriangular 29 of 29; TestLUFactor 47 of 47; TestLUSolve 27 of 27; TestChoFactor 5 of 5)."""
    pytest.importorskip("scipy.linalg.tests.test_basic", reason="this SciPy was installed without its tests")
    outcomes = scipy_cases.run()
    for owner, results in outcomes.items():
        assert len(results) >= 5, (owner, len(results))  # the class ran
        unexpected = [(name, reason) for name, reason in results
                      if reason is not None and not name.startswith("test_overwrite")
                      and name not in SCIPY_KNOWN[owner]]
        assert not unexpected, (owner, unexpected[:5])
    passed = {owner: sum(reason is None for _, reason in results) / len(results) for owner, results in outcomes.items()}
    assert passed["TestSolve"] >= 0.90 and passed["TestInv"] >= 0.90 and passed["TestLUFactor"] == 1, passed


def wide(a):
    """a in float64, or complex128 for a complex a: where the references' conditioning is measured."""
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


def condition(a):
    return np.linalg.cond(wide(a)) if a.shape[-1] else 1.0


def singular_to_working_precision(a, dtype):
    """Whether some matrix of the stack a is singular to dtype's precision, within rounding of linv's rule
    (it refuses a matrix whose estimated reciprocal 1-norm condition number is below eps, where NumPy returns
    an answer with no accurate digit): a refusal there is right, an answer is too."""
    n = a.shape[-1]
    if a.size == 0:
        return False
    with np.errstate(divide="ignore"):
        rcond = 1 / np.linalg.cond(wide(a), 1)
    return bool(np.min(rcond) < 10 * n * np.finfo(dtype).eps)


def refused_or_answered(function, *args):
    """For a matrix singular to working precision: linv refuses it with a LinAlgError or answers in the
    reference's shape; no answer there has a digit to compare."""
    try:
        function(*args)
    except np.linalg.LinAlgError as e:
        assert "rcond" in str(e) or "singular" in str(e), e


@st.composite
def stacks(draw, square=True):
    """A matrix or stack of one dtype, byte order, layout and stride, with its own conditioning."""
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64, np.bool_, ">f8", "<f4", np.complex128,
                                  np.complex64, ">c16"]))
    lead = draw(st.sampled_from([(), (0,), (1,), (3,), (2, 2)]))
    n = draw(st.integers(0, 9))
    m = n if square else draw(st.integers(0, 9))
    step = draw(st.sampled_from([1, 2]))
    layout = draw(st.sampled_from(["C", "F", "T"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    base = rng.uniform(-1, 1, lead + (m * step, n * step))
    if np.dtype(dtype).kind == "c":
        base = base + 1j * rng.uniform(-1, 1, base.shape)
    if square and n:
        base += 3 * np.eye(n * step)  # well conditioned; the bounds below scale with cond all the same
    if np.dtype(dtype) == np.bool_:
        base = (base > 0) | np.eye(n * step, m * step, dtype=bool).T if n == m else base > 0
    elif np.issubdtype(np.dtype(dtype), np.integer):
        base = np.round(4 * base)
    a = base[..., ::step, ::step].astype(dtype)
    if layout == "F":
        a = np.asfortranarray(a)
    elif layout == "T":
        a = np.swapaxes(np.swapaxes(a, -1, -2).copy(), -1, -2)
    return a


def computed(a):
    return np.float32 if np.dtype(a.dtype) == np.float32 else np.float64


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stacks())
def test_inv_det_slogdet_against_numpy(a):
    try:
        expected = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        with pytest.raises(np.linalg.LinAlgError):
            linalg.inv(a)
        return
    if singular_to_working_precision(a, expected.dtype):
        refused_or_answered(linalg.inv, a)
        return
    x = linalg.inv(a)
    assert x.shape == expected.shape and x.dtype == expected.dtype
    eps = np.finfo(x.dtype).eps
    n = max(a.shape[-1], 1)
    if a.size:
        bound = 10 * n * eps * np.max(np.linalg.cond(wide(a))) * np.abs(expected).max()
        assert np.abs(x - expected).max() <= bound
    sign, logdet = linalg.slogdet(a)
    ref_sign, ref_log = np.linalg.slogdet(a)
    assert np.shape(sign) == np.shape(ref_sign) and np.result_type(sign) == np.result_type(ref_sign)
    assert np.result_type(logdet) == np.result_type(ref_log)
    if np.iscomplexobj(a):  # a complex sign is det / |det|: equal to rounding
        assert np.allclose(sign, ref_sign, rtol=0, atol=100 * n * eps)
    else:
        assert np.all(sign == ref_sign)
    assert np.allclose(logdet, ref_log, rtol=0, atol=10 * n * eps * max(1.0, float(np.max(np.abs(ref_log), initial=0))))
    assert np.shape(linalg.det(a)) == np.shape(np.linalg.det(a))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stacks(), st.sampled_from(["vector", "matrix", "broadcast"]), st.integers(0, 3))
def test_solve_against_numpy(a, kind, k):
    n = a.shape[-1]
    if kind == "vector":
        b = RNG.uniform(-1, 1, n)
    elif kind == "matrix":
        b = RNG.uniform(-1, 1, a.shape[:-2] + (n, k))
    else:
        b = RNG.uniform(-1, 1, (1,) * (a.ndim - 2) + (n, k)) if a.ndim > 2 else RNG.uniform(-1, 1, (2, n, k))
    b = b.astype(np.float32) if RNG.integers(2) else b
    if RNG.integers(3) == 0:  # a complex right-hand side, for real a too: NumPy promotes
        b = b + 1j * RNG.uniform(-1, 1, b.shape).astype(b.dtype)
    try:
        expected = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        with pytest.raises(np.linalg.LinAlgError):
            linalg.solve(a, b)
        return
    except ValueError:
        with pytest.raises(ValueError):
            linalg.solve(a, b)
        return
    if singular_to_working_precision(a, expected.dtype):
        refused_or_answered(linalg.solve, a, b)
        return
    x = linalg.solve(a, b)
    assert x.shape == expected.shape and x.dtype == expected.dtype
    if x.size:
        eps = np.finfo(x.dtype).eps
        bound = 10 * n * eps * np.max(np.linalg.cond(wide(a))) * np.abs(expected).max()
        assert np.abs(x - expected).max() <= bound


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stacks(square=False))
def test_pinv_lstsq_against_numpy(a):
    expected = np.linalg.pinv(a)
    x = linalg.pinv(a)
    assert x.shape == expected.shape and x.dtype == expected.dtype
    if a.size:
        eps = np.finfo(x.dtype).eps
        bound = 10 * max(a.shape[-2:]) * eps * np.max(np.linalg.cond(wide(a))) * np.abs(expected).max()
        assert np.abs(x - expected).max() <= bound
    if a.ndim == 2:
        b = RNG.uniform(-1, 1, a.shape[0])
        if np.iscomplexobj(a):
            b = b + 1j * RNG.uniform(-1, 1, a.shape[0])
        x, residuals, rank, s = linalg.lstsq(a, b)
        ref = np.linalg.lstsq(a, b)
        assert x.shape == ref[0].shape and residuals.shape == ref[1].shape and rank == ref[2]
        assert s.shape == ref[3].shape and x.dtype == ref[0].dtype
        assert residuals.dtype == ref[1].dtype and s.dtype == ref[3].dtype
        if a.size and rank == min(a.shape):
            eps = np.finfo(x.dtype).eps
            assert np.abs(x - ref[0]).max() <= 10 * max(a.shape) * eps * condition(a) ** 2 * max(1, np.abs(ref[0]).max())


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.complex64])
def test_cholesky_reads_one_triangle_as_numpy(upper, dtype):
    for shape in [(5, 5), (3, 4, 4), (0, 0), (2, 0, 0)]:
        g = RNG.uniform(-1, 1, shape) + (1j * RNG.uniform(-1, 1, shape) if np.dtype(dtype).kind == "c" else 0)
        a = (g @ np.swapaxes(g, -1, -2).conj() + shape[-1] * np.eye(shape[-1])).astype(dtype)
        junk = np.triu(RNG.uniform(-9, 9, shape), 1)  # what the other triangle holds is not read
        a = a + (np.swapaxes(junk, -1, -2) if upper else junk)
        c, ref = linalg.cholesky(a, upper=upper), np.linalg.cholesky(a, upper=upper)
        atol = 100 * np.finfo(dtype).eps * max(shape[-1], 1)
        assert c.shape == ref.shape and c.dtype == ref.dtype and np.allclose(c, ref, atol=atol)
    with pytest.raises(np.linalg.LinAlgError):
        linalg.cholesky(-np.eye(3))


def test_subclasses_named_results_and_errors_as_numpy():
    m = np.asmatrix(np.array([[2.0, 1.0], [1.0, 3.0]]))
    assert type(linalg.inv(m)) is np.matrix and type(linalg.solve(m, np.asmatrix([[1.0], [2.0]]))) is np.matrix
    result = linalg.slogdet(np.diag([2.0, -3.0]))
    assert result.sign == -1 and np.isclose(result.logabsdet, np.log(6))
    for bad in (np.ones(3), np.ones((2, 3))):
        with pytest.raises(np.linalg.LinAlgError):
            linalg.inv(bad)
    for value in (np.nan, np.inf):
        a = np.eye(3)
        a[1, 2] = value
        for function in (linalg.inv, lambda x: linalg.solve(x, np.ones(3))):
            with pytest.raises(np.linalg.LinAlgError):
                function(a)
    with pytest.raises(np.linalg.LinAlgError):
        linalg.inv(np.zeros((2, 2)))
    for dtype in (np.float16, np.longdouble, object):
        with pytest.raises(TypeError):
            linalg.inv(np.eye(2, dtype=dtype))
    # a complex b with a real a is solved in complex numbers, as NumPy promotes (it once lost the imaginary part)
    assert np.allclose(linalg.solve(np.diag([2.0, 4.0]), np.array([1 + 2j, 3 - 1j])), [0.5 + 1j, 0.75 - 0.25j])


def test_no_value_or_precision_changed_without_an_error():
    """The silent cases of the first drop-in trial, in linv's own functions."""
    a = np.diag([2.0, 4.0])
    # complex numbers are computed as complex, a real a promoted with a complex b (once: the imaginary part lost)
    assert np.allclose(linv.solve(a, np.array([1 + 2j, 3 - 1j])), [0.5 + 1j, 0.75 - 0.25j])
    assert linv.inv(a + 0j).dtype == np.complex128 and linv.inv(a.astype(np.complex64)).dtype == np.complex64
    assert np.allclose(linv.lstsq(a, np.array([1j, 0])), [0.5j, 0])
    # factors keep their field: real factors refuse a complex b, rather than drop its imaginary part
    for call in (lambda: linv.LU(a).solve(np.array([1j, 1])), lambda: linv.Cholesky(a).solve(np.array([1j, 1])),
                 lambda: linv.inv(a.astype(np.longdouble)), lambda: linv.inv(a.astype(np.clongdouble)),
                 lambda: linv.wls(a, np.array([1j, 1]), np.ones(2))):
        with pytest.raises(TypeError):
            call()
    # complex factors take a real b, and a wider one is refused past their range as for real factors
    assert np.allclose(linv.LU(a + 0j).solve(np.array([1.0, 2.0])), [0.5, 0.5])
    with pytest.raises(ValueError, match="beyond the range"):
        linv.LU(a.astype(np.complex64)).solve(np.array([1e39 + 0j, 0]))
    # a float64 (or integer) b with a float32 a is solved in float64, as NumPy promotes
    one = np.eye(1, dtype=np.float32)
    x = linv.solve(one, [2**25 + 1])
    assert x.dtype == np.float64 and x[0] == 2**25 + 1
    assert linv.solve(one, np.array([1e39]))[0] == 1e39
    assert linv.solve(one, np.array([1.5], dtype=np.float32)).dtype == np.float32
    # factors keep their dtype: b is rounded to it, but not past its range
    with pytest.raises(ValueError, match="beyond the range"):
        linv.LU(one).solve(np.array([1e39]))
    assert linv.LU(one).solve(np.array([2.0]))[0] == 2.0
    # float16, bool and integers are exact in float64
    assert linv.inv(np.eye(2, dtype=np.float16)).dtype == np.float64
    assert linv.inv(np.eye(2, dtype=bool)).dtype == np.float64
    # a length-1 axis with any stride is read in place (NumPy leaves odd strides there)
    wide = np.arange(12.0).reshape(3, 4)[:1, ::3]  # shape (1, 2)
    assert linv.lstsq(wide, np.array([1.0])).shape == (2,)
    single = np.full((3, 5), 4.0)[::3, ::5]
    assert single.shape == (1, 1) and linv.inv(single)[0, 0] == 0.25


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
def test_scipy_factor_and_triangular_functions_against_scipy(dtype):
    """solve_triangular, lu_factor/lu_solve and cho_factor/cho_solve against scipy.linalg's, every trans and
    triangle, to n eps cond bounds."""
    sla = pytest.importorskip("scipy.linalg")
    from linv import scipy as lsc
    n = 7
    complex_ = np.dtype(dtype).kind == "c"
    draw = lambda *shape: RNG.uniform(-1, 1, shape) + (1j * RNG.uniform(-1, 1, shape) if complex_ else 0)  # noqa: E731
    a = (draw(n, n) + 3 * np.eye(n)).astype(dtype)
    b = draw(n, 2).astype(dtype)
    eps = np.finfo(dtype).eps
    tol = lambda m: 30 * n * eps * np.linalg.cond(wide(m))  # noqa: E731
    for trans in (0, 1, 2, "N", "T", "C"):
        for lower in (False, True):
            for unit in (False, True):
                x = lsc.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
                ref = sla.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
                t = np.tril(a) if lower else np.triu(a)
                assert x.dtype == ref.dtype and np.abs(x - ref).max() <= tol(t) * np.abs(ref).max()
    lu, piv = lsc.lu_factor(a)
    ref_lu, ref_piv = sla.lu_factor(a)
    assert np.array_equal(piv, ref_piv) and np.abs(lu - ref_lu).max() <= tol(a) * np.abs(ref_lu).max()
    for trans in (0, 1, 2):
        ref = sla.lu_solve((ref_lu, ref_piv), b, trans=trans)
        assert np.abs(lsc.lu_solve((lu, piv), b, trans=trans) - ref).max() <= tol(a) * np.abs(ref).max()
    h = a @ a.conj().T
    for lower in (False, True):
        c, low = lsc.cho_factor(h, lower=lower)
        ref_c, _ = sla.cho_factor(h, lower=lower)
        keep = np.tril if lower else np.triu
        assert low == lower and np.abs(keep(c) - keep(ref_c)).max() <= tol(h) * np.abs(ref_c).max()
        ref = sla.cho_solve((ref_c, lower), b)
        assert np.abs(lsc.cho_solve((c, low), b) - ref).max() <= tol(h) * np.abs(ref).max()
    with pytest.raises(np.linalg.LinAlgError):
        lsc.cho_factor(-np.eye(3))
    with pytest.warns(lsc.LinAlgWarning, match="exactly zero"):
        lsc.lu_factor(np.array([[1.0, 2.0], [2.0, 4.0]]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stacks(square=False))
def test_plu_and_lu_factor_against_scipy(a):
    """linv.plu and linv.scipy.lu_factor on any m x n matrix (wide, tall, empty; every dtype, byte order and
    layout): SciPy's shapes and dtypes, and P a = L U to 30 min(m, n) eps max|a|."""
    sla = pytest.importorskip("scipy.linalg")
    from linv import scipy as lsc
    if a.ndim > 2:  # one matrix of the stack
        a = a.reshape((-1,) + a.shape[-2:])[0] if a.size else np.zeros(a.shape[-2:], a.dtype)
    lu, piv = lsc.lu_factor(a)
    ref_lu, ref_piv = sla.lu_factor(a)
    # integers and bool are computed in float64, as in every linv function (SciPy's LAPACK-based functions
    # take float32 for bool and 8- and 16-bit integers)
    assert lu.shape == ref_lu.shape and lu.dtype == (ref_lu.dtype if a.dtype.kind in "fc" or not a.size else np.float64)
    assert piv.shape == ref_piv.shape and piv.dtype == ref_piv.dtype
    m, n = a.shape
    k = min(m, n)
    if k == 0:
        return
    lower = np.tril(lu[:, :k], -1) + np.eye(m, k)
    upper = np.triu(lu[:k, :])
    rows = np.arange(m)
    for i, p in enumerate(piv):  # LAPACK's interchanges, in order
        rows[[i, p]] = rows[[p, i]]
    w = wide(a)
    eps = np.finfo(lu.dtype).eps
    assert np.abs(w[rows] - wide(lower) @ wide(upper)).max() <= 30 * k * eps * max(np.abs(w).max(), np.finfo(float).tiny)
    full, pivots, zero_pivot = linv.plu(a)
    assert np.array_equal(pivots - 1, piv) and np.array_equal(full, lu)
    assert zero_pivot == next((i + 1 for i in range(k) if lu[i, i] == 0), 0)
