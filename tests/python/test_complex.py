"""Complex matrices through linv's own functions (inv, solve, cholesky, lstsq, pinv, slogdet, LU, Cholesky, stacks)
against NumPy, to n eps cond bounds, over sizes, layouts and scales near the ends of the range; and the errors
where complex numbers are not taken."""
import numpy as np
import pytest

import linv
from test_linv import THRESHOLD

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)

DTYPES = [np.complex64, np.complex128]
SIZES = [1, 2, 5, 16, 33]


def random(shape, dtype, scale=1.0):
    return (scale * (RNG.uniform(-1, 1, shape) + 1j * RNG.uniform(-1, 1, shape))).astype(dtype)


def bound(a, dtype, factor=30):
    """factor n eps cond(a), cond in complex128."""
    return factor * max(a.shape[-2:]) * np.finfo(dtype).eps * np.linalg.cond(a.astype(np.complex128))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_inverse_solve_and_determinant_against_numpy(dtype, n, order):
    a = np.asarray((random((n, n), dtype) + 2 * np.eye(n)).astype(dtype), order=order)
    b = random((n, 3), dtype)
    ref_inv, ref_x = np.linalg.inv(a.astype(np.complex128)), np.linalg.solve(a.astype(np.complex128), b)
    x, report = linv.inv(a, check=True, report=True)
    assert x.dtype == dtype and report["precision"] == np.dtype(dtype).name
    assert report["scaled_residual"] <= 30
    assert np.abs(x - ref_inv).max() <= bound(a, dtype) * np.abs(ref_inv).max()
    y = linv.solve(a, b)
    assert y.dtype == dtype and np.abs(y - ref_x).max() <= bound(a, dtype) * np.abs(ref_x).max()
    sign, logdet = linv.slogdet(a)
    ref_sign, ref_log = np.linalg.slogdet(a.astype(np.complex128))
    assert abs(sign - ref_sign) <= bound(a, dtype) and abs(logdet - ref_log) <= bound(a, dtype) * max(1, abs(ref_log))
    lu = linv.LU(a)
    assert np.abs(lu.solve(b) - ref_x).max() <= bound(a, dtype) * np.abs(ref_x).max()
    assert abs(lu.det - np.linalg.det(a.astype(np.complex128))) <= bound(a, dtype) * abs(lu.det)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_hermitian_positive_definite_takes_cholesky(dtype, n, order):
    g = random((n, n), dtype)
    h = g @ g.conj().T + n * np.eye(n, dtype=dtype)
    a = np.asarray((h + h.conj().T) / 2, order=order)  # exactly Hermitian (the product's triangles round apart)
    ref = np.linalg.cholesky(a.astype(np.complex128))
    lower, report = linv.cholesky(a, check=True, report=True)
    assert lower.dtype == dtype and report["scaled_residual"] <= 30
    assert np.abs(lower - ref).max() <= bound(a, dtype) * np.abs(ref).max()
    x, report = linv.solve(a, np.ones(n, dtype=dtype), report=True)
    assert report["method"] == ("triangular" if n == 1 else "cholesky"), report["method_reason"]
    factors = linv.Cholesky(a)  # a C-ordered Hermitian array is conj(a) read in Fortran order: not used so
    assert np.abs(factors.solve(np.ones(n)) - x).max() <= bound(a, dtype) * np.abs(x).max()
    assert abs(factors.slogdet()[0] - 1) <= bound(a, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7, 4), (4, 7), (12, 12)])
def test_least_squares_and_pseudoinverse_against_numpy(dtype, shape):
    a, b = random(shape, dtype), random(shape[0], dtype)
    ref_x = np.linalg.lstsq(a.astype(np.complex128), b.astype(np.complex128), rcond=None)[0]
    x, report = linv.lstsq(a, b, check=True, report=True)
    assert x.dtype == dtype and report["rank"] == min(shape) and report["scaled_residual"] <= 30
    cond = np.linalg.cond(a.astype(np.complex128))  # least squares: the error grows with cond^2
    assert np.abs(x - ref_x).max() <= bound(a, dtype) * cond * np.abs(ref_x).max()
    p = linv.pinv(a, check=True)
    ref_p = np.linalg.pinv(a.astype(np.complex128))
    assert p.dtype == dtype and np.abs(p - ref_p).max() <= bound(a, dtype) * np.abs(ref_p).max()


@pytest.mark.parametrize("dtype", DTYPES)
def test_extreme_scales_and_stacks(dtype):
    far = {np.complex64: 100, np.complex128: 1000}[dtype]
    a, b = (random((6, 6), dtype) + 2 * np.eye(6)).astype(dtype), random(6, dtype)
    x = linv.solve(a, b)
    for e in (-far, far):
        s = (a * np.ldexp(1.0, e)).astype(dtype)
        assert np.abs(linv.solve(s, b) * np.ldexp(1.0, e) - x).max() <= bound(a, dtype) * np.abs(x).max()
    stack = (random((3, 4, 4), dtype) + 2 * np.eye(4)).astype(dtype)
    xs, report = linv.inv(stack, check=True, report=True)
    assert xs.dtype == dtype and report["scaled_residual"] <= 30
    assert np.abs(xs - np.linalg.inv(stack.astype(np.complex128))).max() <= 1e3 * np.finfo(dtype).eps
    stack[1] = 0
    with pytest.raises(linv.SingularMatrixError) as error:
        linv.inv(stack)
    assert error.value.index == (1,)
    nan_block = linv.inv(stack, singular="nan")[1]
    assert np.isnan(nan_block.real).all() and np.isnan(nan_block.imag).all()


@pytest.mark.parametrize("n", [1, 2, 17, 64, 150])
def test_mixed_precision_refines_complex64_factors_to_complex128(n):
    g = RNG.uniform(-1, 1, (n, n)) + 1j * RNG.uniform(-1, 1, (n, n)) + 2 * np.eye(n)
    b = RNG.uniform(-1, 1, (n, 2)) + 1j * RNG.uniform(-1, 1, (n, 2))
    x, report = linv.solve(g, b, precision="mixed", report=True, check=True)
    assert x.dtype == np.complex128 and report["scaled_residual"] <= THRESHOLD
    eps, cond = np.finfo(np.float64).eps, np.linalg.cond(g, 1)
    ref = np.linalg.solve(g, b)
    assert np.abs(x - ref).max() / np.abs(ref).max() <= THRESHOLD * n * eps * cond
    if n > 1:
        assert report["precision"].startswith("mixed (complex64") and report["stop"] == "converged"
    xi = linv.inv(g, precision="mixed")
    assert np.abs(xi - np.linalg.inv(g)).max() / np.abs(np.linalg.inv(g)).max() <= THRESHOLD * n * eps * cond


def test_errors_for_complex_input_where_it_is_not_taken():
    a = np.eye(3, dtype=np.complex128)
    a[1, 2] = complex(1, np.nan)  # a NaN in the imaginary part only is named
    with pytest.raises(linv.InputError, match="row 1, column 2|row 2, column 3"):
        linv.inv(a)
    g = np.array([[2 + 1j, 1], [1j, 3]])
    with pytest.raises(ValueError, match="auto, lu, cholesky and triangular"):
        linv.inv(g, method="gauss-jordan")
    with pytest.raises(ValueError, match="complex128 matrix"):  # complex64 factors refine complex128 only
        linv.solve(g.astype(np.complex64), np.ones(2, dtype=np.complex64), precision="mixed")
    with pytest.raises(ValueError, match="partial pivoting"):
        linv.LU(g, pivoting="randomized")
    with pytest.raises(TypeError, match="real numbers only"):  # complex data in a real-only method
        linv.wls(np.eye(2), np.ones(2), np.array([1j, 1]))
    with pytest.raises(linv.NumericalError, match="Hermitian"):  # symmetric, not Hermitian
        linv.cholesky(np.array([[4, 1j], [1j, 3]]))
