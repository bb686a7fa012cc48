"""linv.torch against torch.linalg on the same tensors (CUDA ones where a GPU is usable, CPU ones everywhere
PyTorch is installed): the same shapes, dtypes, devices, named results and info tensors, values to n eps cond
bounds; torch.linalg.LinAlgError for failures; the differences on purpose refused clearly. Skips, saying so,
without PyTorch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed: linv.torch's tests skipped")

import linv  # noqa: E402
from linv import torch as la  # noqa: E402

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)


def devices():
    found = ["cpu"]
    if torch.cuda.is_available() and linv.info()["gpus"]:
        found.append("cuda")
    return found


def tensor(shape, dtype, device, shift=0.0):
    a = RNG.uniform(-1, 1, shape)
    if dtype.is_complex:
        a = a + 1j * RNG.uniform(-1, 1, shape)
    if shift and len(shape) >= 2:
        a = a + shift * np.eye(shape[-2], shape[-1])
    return torch.from_numpy(a).to(dtype=dtype, device=device)


def bound(a, factor=30):
    """factor n eps cond(a), over a batch: the largest."""
    a64 = a.detach().cpu().double() if not a.is_complex() else a.detach().cpu().cdouble()
    cond = float(torch.linalg.cond(a64).max()) if a.numel() else 1.0
    return factor * max(a.shape[-1], 1) * torch.finfo(a.dtype).eps * cond


def close(x, ref, a, scale=None):
    assert x.shape == ref.shape and x.dtype == ref.dtype and x.device == ref.device, (x.shape, ref.shape, x.dtype)
    if x.numel():
        size = float(ref.abs().max()) if scale is None else scale
        assert float((x - ref).abs().max()) <= bound(a) * max(size, 1e-30)


CASES = [(d, t) for d in devices() for t in (torch.float64, torch.float32, torch.complex128, torch.complex64)]


@pytest.mark.parametrize("device,dtype", CASES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (33, 33), (3, 4, 4), (2, 3, 6, 6)])
def test_inverse_and_determinant_as_torch(device, dtype, shape):
    a = tensor(shape, dtype, device, shift=3)
    close(la.inv(a), torch.linalg.inv(a), a)
    x, info = la.inv_ex(a)
    ref_x, ref_info = torch.linalg.inv_ex(a)
    close(x, ref_x, a)
    assert info.shape == ref_info.shape and info.dtype == ref_info.dtype and info.device == ref_info.device
    assert bool((info == 0).all())
    sign, logabsdet = la.slogdet(a)
    ref = torch.linalg.slogdet(a)
    assert sign.dtype == ref.sign.dtype and logabsdet.dtype == ref.logabsdet.dtype
    if dtype.is_complex:  # det / |det|: to rounding
        close(sign, ref.sign, a, scale=1.0)
    else:
        assert torch.equal(sign, ref.sign)
    close(logabsdet, ref.logabsdet, a, scale=max(1.0, float(ref.logabsdet.abs().max())))
    close(la.det(a), torch.linalg.det(a), a)
    out = torch.full_like(a, float("nan"))  # poisoned: every entry must be written
    assert la.inv(a, out=out) is out and not bool(out.isnan().any())


@pytest.mark.parametrize("device,dtype", CASES)
@pytest.mark.parametrize("a_shape,b_shape", [((6, 6), (6,)), ((6, 6), (6, 3)), ((4, 5, 5), (4, 5)),
                                             ((4, 5, 5), (4, 5, 2)), ((2, 1, 5, 5), (3, 5, 2))])
@pytest.mark.parametrize("left", [True, False])
def test_solve_as_torch(device, dtype, a_shape, b_shape, left):
    a = tensor(a_shape, dtype, device, shift=3)
    vector = len(b_shape) == 1 or b_shape == a_shape[:-1]  # torch's rule
    if not left and not vector:  # X A = B: B (..., k, n)
        b_shape = b_shape[:-2] + b_shape[-2:][::-1]
    b = tensor(b_shape, dtype, device)
    if not left and vector:  # torch refuses vectors for X A = B: so does linv.torch
        with pytest.raises(RuntimeError, match="Incompatible shapes"):
            torch.linalg.solve(a, b, left=left)
        with pytest.raises(RuntimeError, match="Incompatible shapes"):
            la.solve(a, b, left=left)
        return
    ref = torch.linalg.solve(a, b, left=left)
    close(la.solve(a, b, left=left), ref, a)
    x, info = la.solve_ex(a, b, left=left)
    close(x, ref, a)
    assert info.shape == torch.linalg.solve_ex(a, b, left=left).info.shape and info.dtype == torch.int32


@pytest.mark.parametrize("device,dtype", CASES)
@pytest.mark.parametrize("shape", [(1, 1), (7, 7), (3, 5, 5)])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_as_torch(device, dtype, shape, upper):
    g = tensor(shape, dtype, device)
    a = g @ g.mH + shape[-1] * torch.eye(shape[-1], dtype=dtype, device=device)
    junk = torch.triu(tensor(shape, dtype, device), 1) * 9  # the triangle torch does not read
    a = a + (junk.mT if upper else junk)
    close(la.cholesky(a, upper=upper), torch.linalg.cholesky(a, upper=upper), a)
    factor, info = la.cholesky_ex(a, upper=upper)
    close(factor, torch.linalg.cholesky_ex(a, upper=upper).L, a)
    assert bool((info == 0).all()) and info.dtype == torch.int32
    bad = a.clone()
    bad[..., 0, 0] = -1
    _, info = la.cholesky_ex(bad)
    assert bool((info == 1).all())
    with pytest.raises(torch.linalg.LinAlgError):
        la.cholesky(bad)


@pytest.mark.parametrize("device,dtype", CASES)
def test_singular_matrices_raise_torchs_error_and_fill_info(device, dtype):
    a = tensor((3, 4, 4), dtype, device, shift=3)
    a[1] = 0
    with pytest.raises(torch.linalg.LinAlgError) as error:
        la.inv(a)
    assert isinstance(error.value, linv.SingularMatrixError) and error.value.index == (1,)
    x, info = la.inv_ex(a)
    assert info.tolist() == [0, 1, 0] and bool(x[1].isnan().all()) and not bool(x[0].isnan().any())
    x, info = la.solve_ex(a, tensor((3, 4), dtype, device))
    assert info.tolist() == [0, 1, 0] and bool(x[1].isnan().all())
    with pytest.raises(torch.linalg.LinAlgError):
        la.inv_ex(a, check_errors=True)
    one = torch.zeros(3, 3, dtype=dtype, device=device)
    x, info = la.inv_ex(one)
    assert info.shape == () and int(info) >= 1 and bool(x.isnan().all())


@pytest.mark.parametrize("device,dtype", CASES)
def test_lstsq_and_pinv_as_torch(device, dtype):
    a, b = tensor((9, 4), dtype, device), tensor((9, 2), dtype, device)
    result = la.lstsq(a, b, driver="gelsd")
    ref = torch.linalg.lstsq(a.cpu(), b.cpu(), driver="gelsd")
    cond = float(torch.linalg.cond(a.cpu().double()))  # least squares: the error grows with cond^2
    assert result.solution.shape == ref.solution.shape and result.solution.dtype == ref.solution.dtype
    assert float((result.solution.cpu() - ref.solution).abs().max()) <= bound(a) * cond * float(ref.solution.abs().max())
    assert result.solution.device == a.device and int(result.rank) == 4
    assert result.residuals.shape == ref.residuals.shape
    close(result.singular_values.cpu(), ref.singular_values, a.cpu())
    p = la.pinv(a)
    close(p, torch.linalg.pinv(a), a)
    with pytest.raises(ValueError, match="atol"):
        la.pinv(a, atol=1e-3)


@pytest.mark.parametrize("device,dtype", CASES)
@pytest.mark.parametrize("shape", [(1, 1), (6, 6), (3, 5, 5), (4, 7), (7, 4), (2, 3, 5)])
def test_lu_factor_as_torch(device, dtype, shape):
    a = tensor(shape, dtype, device, shift=2)
    ref = torch.linalg.lu_factor_ex(a)
    factors, pivots, info = la.lu_factor_ex(a)
    assert pivots.shape == ref.pivots.shape and pivots.dtype == ref.pivots.dtype and pivots.device == a.device
    assert info.shape == ref.info.shape and info.dtype == ref.info.dtype and bool((info == 0).all())
    p, l, u = torch.lu_unpack(factors, pivots)
    close(p @ l @ u, a, a)
    if not dtype.is_complex:  # complex pivots are chosen by |re| + |im| (LAPACK's) or by |z| (torch's on CUDA)
        assert torch.equal(pivots, ref.pivots)  # the same partial pivoting: the same rows chosen
        close(factors, ref.LU, a)
    assert la.lu_factor(a).LU.shape == factors.shape
    singular = a.clone()
    singular[..., :, 0] = 0  # the first column zero: an exactly zero first pivot
    _, _, info = la.lu_factor_ex(singular)
    assert bool((info == 1).all())
    with pytest.raises(torch.linalg.LinAlgError):
        la.lu_factor_ex(singular, check_errors=True)
    with pytest.raises(ValueError, match="pivot=False"):
        la.lu_factor(a, pivot=False)


@pytest.mark.parametrize("device,dtype", CASES)
@pytest.mark.parametrize("a_shape,b_shape", [((5, 5), (5, 2)), ((3, 5, 5), (3, 5, 1)), ((2, 1, 4, 4), (3, 4, 2))])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_as_torch(device, dtype, a_shape, b_shape, left, adjoint):
    a = tensor(a_shape, dtype, device, shift=3)
    if not left:
        b_shape = b_shape[:-2] + b_shape[-2:][::-1]
    b = tensor(b_shape, dtype, device)
    factors, pivots = la.lu_factor(a)
    x = la.lu_solve(factors, pivots, b, left=left, adjoint=adjoint)
    ref = torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, left=left, adjoint=adjoint)
    close(x, ref, a)
    # torch's own factors, and a lazily conjugated right-hand side (its conjugation carried out, on any device)
    close(la.lu_solve(*torch.linalg.lu_factor(a), b, left=left, adjoint=adjoint), ref, a)
    close(la.lu_solve(factors, pivots, b.conj(), left=left, adjoint=adjoint),
          torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b.conj(), left=left, adjoint=adjoint), a)
    out = torch.full_like(ref, float("nan"))
    assert la.lu_solve(factors, pivots, b, left=left, adjoint=adjoint, out=out) is out
    assert not bool(out.isnan().any())


def test_complex_and_refusals():
    a = torch.from_numpy(RNG.uniform(-1, 1, (5, 5)) + 1j * RNG.uniform(-1, 1, (5, 5)) + 3 * np.eye(5))
    close(la.inv(a), torch.linalg.inv(a), a)
    close(la.solve(a, a[:, :2].clone()), torch.linalg.solve(a, a[:, :2].clone()), a)
    sign, logabsdet = la.slogdet(a)
    ref = torch.linalg.slogdet(a)
    assert abs(complex(sign) - complex(ref.sign)) <= bound(a) and abs(float(logabsdet - ref.logabsdet)) <= bound(a)
    h = a @ a.mH
    close(la.cholesky(h), torch.linalg.cholesky(h), h)
    with pytest.raises(ValueError, match="requires grad"):
        la.inv(torch.eye(3, dtype=torch.float64, requires_grad=True))
    with pytest.raises(TypeError, match="torch.Tensor"):
        la.inv(np.eye(3))
    with pytest.raises(RuntimeError, match="same dtype"):
        la.solve(torch.eye(2, dtype=torch.float64), torch.ones(2, dtype=torch.float32))
