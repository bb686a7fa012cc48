"""GPU arrays of other frameworks (PyTorch, CuPy) stay on their GPU: linv reads them in place, after the
work their framework queued, and returns the same kind of array on the same GPU, float32 kept. Each GPU
path is compared with NumPy (or linv's CPU path) within bounds scaled by n eps cond, and its inputs are
checked to be left as they were. The GPU tests skip, saying why, without a usable GPU or without the
framework; the checks made before linv reads an array (test_gpu_array_checks_need_no_gpu) run everywhere."""
import numpy as np
import pytest

import linv
from test_batched import random_stack
from test_linv import THRESHOLD, random_matrix, scaled_inverse_residual, scaled_solve_residual
from test_wls import problem, reference

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)


def _need_gpu():
    if not linv.info()["gpus"]:
        pytest.skip(f"no CUDA GPU usable ({linv.info()['why_no_gpu']}): GPU tests skipped")


def _torch():
    _need_gpu()
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: its GPU-array tests skipped")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device: its GPU-array tests skipped")
    return torch


def _cupy():
    _need_gpu()
    return pytest.importorskip("cupy", reason="CuPy is not installed: its GPU-array tests skipped")


class Torch:
    """PyTorch's side of the tests: NumPy arrays to its CUDA tensors and back, and what a result must be."""

    def __init__(self):
        self.torch = _torch()
        self.index = self.torch.cuda.current_device()
        self.device = f"cuda:{self.index}"

    def put(self, a, order="C"):
        t = self.torch.from_numpy(np.ascontiguousarray(a)).to(self.device)
        return t.t().contiguous().t() if order == "F" and t.dim() == 2 else t

    def get(self, x):
        return x.detach().cpu().numpy()

    def check(self, x, dtype, shape=None):
        assert isinstance(x, self.torch.Tensor), type(x)
        assert x.device == self.torch.device(self.device) and str(x.dtype) == f"torch.{np.dtype(dtype).name}"
        assert shape is None or tuple(x.shape) == tuple(shape)


class CuPy:
    def __init__(self):
        self.cupy = _cupy()
        self.index = self.cupy.cuda.Device().id
        self.device = f"cuda:{self.index}"

    def put(self, a, order="C"):
        return self.cupy.asarray(a, order=order)

    def get(self, x):
        return self.cupy.asnumpy(x)

    def check(self, x, dtype, shape=None):
        assert isinstance(x, self.cupy.ndarray), type(x)
        assert x.device.id == self.index and x.dtype == np.dtype(dtype)
        assert shape is None or tuple(x.shape) == tuple(shape)


@pytest.fixture(params=["torch", "cupy"])
def fw(request):
    return Torch() if request.param == "torch" else CuPy()


class Untouched:
    """Host copies of GPU arrays taken before a call, to check after it that linv only read them."""

    def __init__(self, fw, *arrays):
        self.fw, self.arrays = fw, arrays
        self.before = [fw.get(x).copy() for x in arrays]

    def check(self):
        for x, before in zip(self.arrays, self.before):
            np.testing.assert_array_equal(self.fw.get(x), before)


def relative_error(x, ref):
    x, ref = np.asarray(x, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    return np.abs(x - ref).max() / np.abs(ref).max()


def unit_atoms(t, k, dtype=np.float64):
    d = RNG.standard_normal((t, k))
    return (d / np.linalg.norm(d, axis=0)).astype(dtype)


def spd_matrix(n, dtype):
    g = RNG.uniform(-1, 1, (n, n))
    return (g @ g.T / n + np.eye(n)).astype(dtype)


# ---- inv and solve of one matrix ----

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_torch_inverse_stays_on_the_gpu(dtype, order):
    torch = _torch()
    a = random_matrix(257, np.dtype(dtype), order)
    t = torch.from_numpy(np.ascontiguousarray(a)).cuda()
    if order == "F":
        t = t.t().contiguous().t()
    x, report = linv.inv(t, report=True)
    assert isinstance(x, torch.Tensor) and x.device == t.device and str(x.dtype) == f"torch.{dtype}"
    assert report["device"] == f"cuda:{t.device.index}"
    assert scaled_inverse_residual(a, x.cpu().numpy()) <= THRESHOLD


def test_torch_input_produced_on_another_stream_is_waited_for():
    torch = _torch()
    n = 2048
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):  # still being written when linv is called
        g = torch.rand(n, n, dtype=torch.float64, device="cuda") * 2 - 1
        a = g @ g.t() / n + torch.eye(n, dtype=torch.float64, device="cuda")
        x = linv.inv(a)
    stream.synchronize()
    assert scaled_inverse_residual(a.cpu().numpy(), x.cpu().numpy()) <= THRESHOLD


@pytest.mark.parametrize("vector", [True, False])
def test_torch_solve(vector):
    torch = _torch()
    a = random_matrix(300, np.float64)
    b = RNG.uniform(-1, 1, 300 if vector else (300, 3))
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    x = linv.solve(ta, tb)
    assert isinstance(x, torch.Tensor) and tuple(x.shape) == b.shape and x.device == ta.device
    assert scaled_solve_residual(a, x.cpu().numpy(), b) <= THRESHOLD


@pytest.mark.parametrize("order", ["C", "F"])
def test_cupy_inverse_and_solve(order):
    cupy = _cupy()
    a = random_matrix(200, np.float32, order)
    ca = cupy.asarray(a, order=order)
    x = linv.inv(ca)
    assert isinstance(x, cupy.ndarray) and x.dtype == cupy.float32
    assert scaled_inverse_residual(a, cupy.asnumpy(x)) <= THRESHOLD
    b = RNG.uniform(-1, 1, (200, 2)).astype(np.float32)
    y = linv.solve(ca, cupy.asarray(b))
    assert isinstance(y, cupy.ndarray) and y.shape == b.shape
    assert scaled_solve_residual(a, cupy.asnumpy(y), b) <= THRESHOLD


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_inv_and_solve_match_numpy(fw, dtype, order):
    n = 150
    a = random_matrix(n, np.dtype(dtype), order)
    b = RNG.uniform(-1, 1, (n, 2)).astype(dtype)
    ga, gb = fw.put(a, order), fw.put(b, order)
    untouched = Untouched(fw, ga, gb)
    eps, cond = np.finfo(dtype).eps, np.linalg.cond(a.astype(np.float64), 1)
    x = linv.inv(ga)
    fw.check(x, dtype, (n, n))
    assert relative_error(fw.get(x), np.linalg.inv(a.astype(np.float64))) <= THRESHOLD * n * eps * cond
    y, report = linv.solve(ga, gb, report=True, check=True)
    fw.check(y, dtype, (n, 2))
    assert report["device"] == fw.device and report["scaled_residual"] <= THRESHOLD
    ref = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
    assert relative_error(fw.get(y), ref) <= THRESHOLD * n * eps * cond
    untouched.check()


# ---- cholesky, slogdet, lstsq, pinv ----

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_cholesky_and_slogdet_on_the_gpu(fw, dtype, order):
    n = 90
    spd = spd_matrix(n, dtype)
    a = random_matrix(n, np.dtype(dtype))
    gspd, ga = fw.put(spd, order), fw.put(a, order)
    untouched = Untouched(fw, gspd, ga)
    eps = np.finfo(dtype).eps
    l, report = linv.cholesky(gspd, report=True, check=True)
    fw.check(l, dtype, (n, n))
    assert report["device"] == fw.device and report["scaled_residual"] <= THRESHOLD
    lh = fw.get(l).astype(np.float64)
    assert np.all(np.triu(lh, 1) == 0)
    assert np.abs(lh @ lh.T - spd).max() <= THRESHOLD * n * eps * np.abs(spd).max()
    ref = np.linalg.cholesky(spd.astype(np.float64))
    assert relative_error(lh, ref) <= THRESHOLD * n * eps * np.linalg.cond(spd.astype(np.float64))
    sign, logdet = linv.slogdet(ga)
    rsign, rlog = np.linalg.slogdet(a.astype(np.float64))
    assert sign == rsign and abs(logdet - rlog) <= THRESHOLD * n * eps * max(1.0, abs(rlog))
    untouched.check()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lstsq_and_pinv_go_through_the_host(fw, dtype):
    n = 40
    tall = RNG.uniform(-1, 1, (3 * n, n)).astype(dtype)
    eps, cond = np.finfo(dtype).eps, np.linalg.cond(tall.astype(np.float64))
    gt = fw.put(tall)
    for shape in (3 * n, (3 * n, 2)):
        b = RNG.uniform(-1, 1, shape).astype(dtype)
        gb = fw.put(b)
        untouched = Untouched(fw, gt, gb)
        x, report = linv.lstsq(gt, gb, report=True)
        fw.check(x, dtype, (n,) if b.ndim == 1 else (n, 2))
        assert report["rank"] == n and report["device"] == "cpu"
        ref = np.linalg.lstsq(tall.astype(np.float64), b.astype(np.float64), rcond=None)[0]
        assert relative_error(fw.get(x), ref) <= THRESHOLD * 3 * n * eps * cond ** 2
        untouched.check()
    p = linv.pinv(gt)
    fw.check(p, dtype, (n, 3 * n))
    assert relative_error(fw.get(p), np.linalg.pinv(tall.astype(np.float64))) <= THRESHOLD * 3 * n * eps * cond


# ---- LU and Cholesky objects ----

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("pivoting", ["partial", "tournament", "randomized"])
def test_lu_of_a_gpu_array(fw, dtype, pivoting):
    n = 80
    a = random_matrix(n, np.dtype(dtype))
    ga = fw.put(a)
    untouched = Untouched(fw, ga)
    eps, cond = np.finfo(dtype).eps, np.linalg.cond(a.astype(np.float64), 1)
    lu = linv.LU(ga, pivoting=pivoting)
    for shape in (n, (n, 3)):
        b = RNG.uniform(-1, 1, shape).astype(dtype)
        gb = fw.put(b)
        x = lu.solve(gb)
        fw.check(x, dtype, b.shape)
        assert scaled_solve_residual(a, fw.get(x), b) <= THRESHOLD
        ref = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
        assert relative_error(fw.get(x), ref) <= THRESHOLD * n * eps * cond
        assert isinstance(lu.solve(b), np.ndarray)  # a NumPy b: moved to the factors, x back as NumPy
    xi = lu.inv()
    fw.check(xi, dtype, (n, n))
    assert scaled_inverse_residual(a, fw.get(xi)) <= THRESHOLD
    if pivoting != "randomized":  # whose factors are those of a times random butterflies
        sign, log_abs = lu.slogdet()
        rsign, rlog = np.linalg.slogdet(a.astype(np.float64))
        assert sign == rsign and abs(log_abs - rlog) <= THRESHOLD * n * eps * max(1.0, abs(rlog))
        assert lu.det == pytest.approx(rsign * np.exp(rlog), rel=THRESHOLD * n * eps * max(1.0, abs(rlog)))
        slack = n * eps * cond  # an estimate of ||a^-1|| from below (exact after inv), within 3
        assert (1 - slack) / cond <= lu.rcond() <= 3 / cond
    untouched.check()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cholesky_object_and_numpy_factors_with_gpu_b(fw, dtype):
    n = 70
    spd = spd_matrix(n, dtype)
    gspd = fw.put(spd)
    untouched = Untouched(fw, gspd)
    eps, cond = np.finfo(dtype).eps, np.linalg.cond(spd.astype(np.float64), 1)
    ch = linv.Cholesky(gspd)
    b = RNG.uniform(-1, 1, n).astype(dtype)
    x = ch.solve(fw.put(b))
    fw.check(x, dtype, (n,))
    assert scaled_solve_residual(spd, fw.get(x), b) <= THRESHOLD
    xi = ch.inv()
    fw.check(xi, dtype, (n, n))
    assert relative_error(fw.get(xi), np.linalg.inv(spd.astype(np.float64))) <= THRESHOLD * n * eps * cond
    sign, log_abs = ch.slogdet()
    rsign, rlog = np.linalg.slogdet(spd.astype(np.float64))
    assert sign == 1 and abs(log_abs - rlog) <= THRESHOLD * n * eps * max(1.0, abs(rlog))
    assert (1 - n * eps * cond) / cond <= ch.rcond() <= 3 / cond
    untouched.check()
    # factors made from NumPy on the GPU take b from a framework there, and give x as its kind of array
    a = random_matrix(n, np.dtype(dtype))
    lu = linv.LU(a, device=fw.device)
    y = lu.solve(fw.put(b))
    fw.check(y, dtype, (n,))
    assert scaled_solve_residual(a, fw.get(y), b) <= THRESHOLD
    assert isinstance(lu.inv(), np.ndarray)
    with pytest.raises(ValueError, match="factors live on cpu"):
        linv.LU(a).solve(fw.put(b))
    with pytest.raises(TypeError, match="one dtype"):
        ch.solve(fw.put(b.astype(np.float64 if dtype == "float32" else np.float32)))


# ---- stacks: the batched kernels on the GPU ----

def assert_stack_close(x, ref, a, dtype):
    n = a.shape[-1]
    cond = np.linalg.cond(a.astype(np.float64), 1)
    err = np.abs(x.astype(np.float64) - ref).max(axis=(-2, -1)) / np.abs(ref).max(axis=(-2, -1))
    assert np.all(err <= THRESHOLD * n * np.finfo(dtype).eps * cond)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("lead,n", [((3, 4), 7), ((5,), 33), ((2,), 64), ((2,), 70)])
def test_inv_of_a_gpu_stack(fw, dtype, lead, n):
    a = random_stack(lead, n, np.dtype(dtype))
    ga = fw.put(a)
    untouched = Untouched(fw, ga)
    x, report = linv.inv(ga, report=True, check=True)
    fw.check(x, dtype, a.shape)
    assert report["device"] == fw.device and report["singular"] == 0
    assert_stack_close(fw.get(x), np.linalg.inv(a.astype(np.float64)), a, dtype)
    untouched.check()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", [6, 70])
def test_solve_of_a_gpu_stack_broadcasts_as_numpy(fw, dtype, n):
    a = random_stack((3, 1), n, np.dtype(dtype))
    ga = fw.put(a)
    eps = np.finfo(dtype).eps
    cond = np.linalg.cond(a.astype(np.float64), 1).max()
    for b in (RNG.uniform(-1, 1, (4, n, 2)), RNG.uniform(-1, 1, n), RNG.uniform(-1, 1, (n, 3))):
        b = b.astype(dtype)
        gb = fw.put(b)
        untouched = Untouched(fw, ga, gb)
        x, report = linv.solve(ga, gb, report=True)
        ref = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
        fw.check(x, dtype, ref.shape)
        assert report["device"] == fw.device
        assert relative_error(fw.get(x), ref) <= THRESHOLD * n * eps * cond
        untouched.check()
    one = random_stack((), n, np.dtype(dtype))  # one matrix against a stack of right-hand sides
    b = RNG.uniform(-1, 1, (5, n, 2)).astype(dtype)
    x = linv.solve(fw.put(one), fw.put(b))
    fw.check(x, dtype, (5, n, 2))
    ref = np.linalg.solve(one.astype(np.float64), b.astype(np.float64))
    assert relative_error(fw.get(x), ref) <= THRESHOLD * n * eps * np.linalg.cond(one.astype(np.float64), 1)


def test_singular_members_of_a_gpu_stack(fw):
    n = 4
    a = random_stack((2, 3), n, np.float64)
    a[1, 2, :, 1] = 0.0  # matrix (1, 2): a zero column, an exactly zero pivot for the batched kernels
    ga = fw.put(a)
    with pytest.raises(linv.SingularMatrixError) as e:
        linv.inv(ga)
    assert e.value.index == (1, 2) and e.value.indices == [(1, 2)]
    x, report = linv.inv(ga, singular="nan", report=True)
    xh = fw.get(x)
    assert np.all(np.isnan(xh[1, 2])) and report["singular"] == 1 and report["pivots"][1, 2] >= 1
    regular = np.ones((2, 3), bool)
    regular[1, 2] = False
    assert_stack_close(xh[regular], np.linalg.inv(a[regular]), a[regular], "float64")
    xs = linv.solve(ga, fw.put(RNG.uniform(-1, 1, n)), singular="nan")
    assert np.all(np.isnan(fw.get(xs)[1, 2])) and np.all(np.isfinite(fw.get(xs)[regular]))


# ---- complex GPU arrays: the dense routines on their GPU ----

def complex_matrix(n, dtype, shift=None):
    a = RNG.uniform(-1, 1, (n, n)) + 1j * RNG.uniform(-1, 1, (n, n))
    return (a + (n ** 0.5 if shift is None else shift) * np.eye(n)).astype(dtype)


def complex_error(x, ref):
    """max |x - ref| / max |ref|, in complex128 (relative_error's float64 would drop the imaginary parts)."""
    x, ref = np.asarray(x, dtype=np.complex128), np.asarray(ref, dtype=np.complex128)
    return np.abs(x - ref).max() / np.abs(ref).max()


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_complex_gpu_arrays_through_the_dense_routines(fw, dtype, order):
    n = 70
    a = complex_matrix(n, dtype)
    g = RNG.uniform(-1, 1, (n, n)) + 1j * RNG.uniform(-1, 1, (n, n))
    hpd = (g @ g.conj().T / n + np.eye(n)).astype(dtype)
    b = (RNG.uniform(-1, 1, (n, 3)) + 1j * RNG.uniform(-1, 1, (n, 3))).astype(dtype)
    ga, ghpd, gb = fw.put(a, order), fw.put(hpd, order), fw.put(b, order)
    untouched = Untouched(fw, ga, ghpd, gb)
    eps = np.finfo(dtype).eps
    a128, hpd128, b128 = a.astype(np.complex128), hpd.astype(np.complex128), b.astype(np.complex128)
    cond, cond_h = np.linalg.cond(a128, 1), np.linalg.cond(hpd128, 1)
    bound = THRESHOLD * n * eps * cond

    x, report = linv.inv(ga, report=True, check=True)
    fw.check(x, dtype, (n, n))
    assert report["device"] == fw.device and report["scaled_residual"] <= THRESHOLD
    assert complex_error(fw.get(x), np.linalg.inv(a128)) <= bound
    y, report = linv.solve(ga, gb, report=True, check=True)
    fw.check(y, dtype, (n, 3))
    assert report["device"] == fw.device and report["scaled_residual"] <= THRESHOLD
    assert complex_error(fw.get(y), np.linalg.solve(a128, b128)) <= bound
    y1 = linv.solve(ga, fw.put(b[:, 0].copy()))
    fw.check(y1, dtype, (n,))
    assert complex_error(fw.get(y1), np.linalg.solve(a128, b128[:, 0])) <= bound

    # Hermitian: a C-ordered array is read as itself (linv makes it column-major), not as its conjugate
    l, report = linv.cholesky(ghpd, report=True, check=True)
    fw.check(l, dtype, (n, n))
    assert report["scaled_residual"] <= THRESHOLD
    assert complex_error(fw.get(l), np.linalg.cholesky(hpd128)) <= THRESHOLD * n * eps * cond_h
    ch = linv.Cholesky(ghpd)
    assert complex_error(fw.get(ch.solve(gb)), np.linalg.solve(hpd128, b128)) <= THRESHOLD * n * eps * cond_h
    assert complex_error(fw.get(ch.inv()), np.linalg.inv(hpd128)) <= THRESHOLD * n * eps * cond_h

    sign, log_abs = linv.slogdet(ga)
    rsign, rlog = np.linalg.slogdet(a128)
    assert abs(sign - rsign) <= bound and abs(log_abs - rlog) <= THRESHOLD * n * eps * max(1.0, abs(rlog))
    lu = linv.LU(ga)
    assert complex_error(fw.get(lu.solve(gb)), np.linalg.solve(a128, b128)) <= bound
    xi = lu.inv()
    fw.check(xi, dtype, (n, n))
    assert complex_error(fw.get(xi), np.linalg.inv(a128)) <= bound
    sign, log_abs = lu.slogdet()
    assert abs(sign - rsign) <= bound and abs(log_abs - rlog) <= THRESHOLD * n * eps * max(1.0, abs(rlog))
    assert (1 - n * eps * cond) / cond <= lu.rcond() <= 3 / cond

    tall = np.vstack([a, a[: n // 2] * 0.5j])
    x, report = linv.lstsq(fw.put(tall), fw.put(np.vstack([b, b[: n // 2]])), report=True)
    fw.check(x, dtype, (n, 3))
    assert report["device"] == "cpu"
    p = linv.pinv(fw.put(tall))
    fw.check(p, dtype, (n, tall.shape[0]))
    assert complex_error(fw.get(p), np.linalg.pinv(tall.astype(np.complex128))) <= bound * np.linalg.cond(tall)
    untouched.check()


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_gpu_stacks_matrix_by_matrix(fw, dtype):
    n = 9
    a = np.stack([complex_matrix(n, dtype) for _ in range(4)]).reshape(2, 2, n, n)
    a[1, 0] = 0  # exactly singular: NaN, its pivot, the others solved
    b = (RNG.uniform(-1, 1, (2, 1, n, 2)) + 1j * RNG.uniform(-1, 1, (2, 1, n, 2))).astype(dtype)
    ga, gb = fw.put(a), fw.put(b)
    eps = np.finfo(dtype).eps
    x, report = linv.inv(ga, singular="nan", report=True)
    fw.check(x, dtype, a.shape)
    pivots = report["pivots"]
    assert report["device"] == fw.device and pivots.shape == (2, 2)
    assert pivots[1, 0] >= 1 and pivots[0, 0] == pivots[0, 1] == pivots[1, 1] == 0
    assert np.isnan(fw.get(x)[1, 0]).all()
    for i, j in ((0, 0), (0, 1), (1, 1)):
        ref = np.linalg.inv(a[i, j].astype(np.complex128))
        assert complex_error(fw.get(x)[i, j], ref) <= THRESHOLD * n * eps * np.linalg.cond(a[i, j], 1)
    with pytest.raises(linv.SingularMatrixError):
        linv.solve(ga, gb)
    a[1, 0] = complex_matrix(n, dtype)
    y = linv.solve(fw.put(a), gb)
    fw.check(y, dtype, (2, 2, n, 2))
    ref = np.linalg.solve(a.astype(np.complex128), b.astype(np.complex128))
    assert complex_error(fw.get(y), ref) <= THRESHOLD * n * eps * max(np.linalg.cond(m, 1) for m in a.reshape(4, n, n))


@pytest.mark.parametrize("dtype", ["complex128", "complex64", "float64"])
@pytest.mark.parametrize("n", [0, 1, 2, 33])
def test_gpu_arrays_around_the_edges(fw, dtype, n):
    # empty (b of shape (0, 2): any strides), 1 x 1 (auto's triangular path), 2 x 2, one past a tile; strided
    # views (every other row and column of a larger array), which the framework lays out first; mixed
    # precision for complex128 and float64
    def draw(*shape):
        x = RNG.uniform(-1, 1, shape) + (1j * RNG.uniform(-1, 1, shape) if dtype.startswith("complex") else 0)
        return x.astype(dtype)
    big = draw(2 * n, 2 * n)
    for i in range(n):
        big[2 * i, 2 * i] += n ** 0.5 + 1
    a = big[::2, ::2]
    b = draw(n, 2)
    ga, gb = fw.put(big)[::2, ::2], fw.put(b)  # a strided view of the GPU array
    eps = np.finfo(dtype).eps
    x = linv.inv(ga)
    fw.check(x, dtype, (n, n))
    y = linv.solve(ga, gb)
    fw.check(y, dtype, (n, 2))
    if n == 0:
        return
    a128, b128 = a.astype(np.complex128), b.astype(np.complex128)
    bound = THRESHOLD * n * eps * np.linalg.cond(a128, 1)
    assert complex_error(fw.get(x), np.linalg.inv(a128)) <= bound
    assert complex_error(fw.get(y), np.linalg.solve(a128, b128)) <= bound
    if dtype != "complex64":
        z, report = linv.solve(ga, gb, precision="mixed", report=True)
        fw.check(z, dtype, (n, 2))
        assert complex_error(fw.get(z), np.linalg.solve(a128, b128)) <= bound
        assert report["device"] == fw.device
    h = a128 @ a128.conj().T
    l = linv.cholesky(fw.put((h if dtype.startswith("complex") else h.real).astype(dtype)))
    assert complex_error(fw.get(l), np.linalg.cholesky(h)) <= THRESHOLD * n * eps * np.linalg.cond(h, 1)


# ---- weighted least squares ----

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("k", [0, 3])
def test_wls_of_gpu_arrays(fw, dtype, k):
    m, n = 30, 100
    a, d, b = problem(m, n, k, np.dtype(dtype))
    ga, gd, gb = fw.put(a), fw.put(d), fw.put(b)
    untouched = Untouched(fw, ga, gd, gb)
    eps = np.finfo(dtype).eps
    x, report = linv.wls(ga, gd, gb, report=True)
    fw.check(x, dtype, (m, k) if k else (m,))
    assert report["device"] == fw.device
    ref, cond = reference(a, d, b)
    assert relative_error(fw.get(x), ref) <= THRESHOLD * n * eps * cond
    system = linv.WeightedLeastSquares(ga)
    assert system.device == fw.device
    for _ in range(2):
        d = RNG.uniform(0.1, 3.0, n).astype(dtype)
        x = system.factor(fw.put(d)).solve(gb)
        fw.check(x, dtype, (m, k) if k else (m,))
        ref, cond = reference(a, d, b)
        assert relative_error(fw.get(x), ref) <= THRESHOLD * n * eps * cond
        assert isinstance(system.solve(b), np.ndarray)  # NumPy b: moved to the system's GPU, x back as NumPy
    untouched.check()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_wls_of_gpu_arrays_in_statsmodels_form(fw, dtype):
    # X (n x p, one row per observation) on the GPU: the library transposes it there; the answer is the
    # normal form's of X^T
    n, p = 120, 7
    a, d, b = problem(p, n, 0, np.dtype(dtype))
    X = np.ascontiguousarray(a.T)
    beta = linv.wls(fw.put(X), fw.put(d), fw.put(b), form="statsmodels")
    fw.check(beta, dtype, (p,))
    np.testing.assert_array_equal(fw.get(beta), fw.get(linv.wls(fw.put(a), fw.put(d), fw.put(b))))
    with pytest.raises(ValueError, match="X and w"):
        linv.wls(fw.put(X), fw.put(d[:-1]), fw.put(b), form="statsmodels")


# ---- imaging ----

def test_degrade_and_convolve_go_through_the_host(fw):
    k = linv.imaging.gaussian_psf(5, 1.0)
    f = RNG.uniform(0, 1, (20, 18, 3)).astype(np.float32)
    gf = fw.put(f)
    untouched = Untouched(fw, gf)
    g = linv.degrade(gf, k, noise="gaussian:var=0.001", seed=3)
    fw.check(g, "float32", f.shape)
    np.testing.assert_array_equal(fw.get(g), linv.degrade(f, k, noise="gaussian:var=0.001", seed=3))
    h = linv.imaging.convolve(gf, fw.put(k), boundary="zero", adjoint=True)  # a PSF on the GPU is copied too
    fw.check(h, "float32", f.shape)
    np.testing.assert_array_equal(fw.get(h), linv.imaging.convolve(f, k, boundary="zero", adjoint=True))
    untouched.check()


@pytest.mark.parametrize("path,boundary", [("dense", "zero"), ("spectral", "periodic"), ("spectral", "reflexive")])
def test_deblur_on_the_gpu_solves_the_regularised_normal_equations(fw, path, boundary):
    pytest.importorskip("scipy", reason="SciPy is not installed: the reference of this GPU test is missing")
    from test_imaging import EPS, regularised_problem
    shape, lam, k, g, c, ref = regularised_problem(boundary)
    gg = fw.put(g)
    untouched = Untouched(fw, gg)
    x, report = linv.deblur(gg, k, lam=lam, boundary=boundary, regularizer="identity", path=path, prior="tikhonov",
                            report=True)
    fw.check(x, "float64", shape)
    assert report["lambda"] == lam and report["device"] == fw.device
    assert relative_error(fw.get(x), ref) <= THRESHOLD * c.shape[0] * EPS * np.linalg.cond(c)
    untouched.check()


def test_deblur_of_a_colour_float32_gpu_image(fw):
    k = linv.imaging.gaussian_psf(3, 0.8)
    g = linv.degrade(RNG.uniform(0, 1, (16, 16, 3)), k).astype(np.float32)
    x = linv.deblur(fw.put(g), k, lam=0.02, path="dense", prior="tikhonov")
    fw.check(x, "float32", g.shape)
    ref = linv.deblur(g, k, lam=0.02, path="dense", prior="tikhonov")  # float64 inside, float32 out: as the CPU's
    assert np.abs(fw.get(x) - ref).max() <= THRESHOLD * g.size * np.finfo(np.float32).eps * np.abs(ref).max()


# ---- fMRI ----

@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_omp_of_gpu_arrays(fw, dtype):
    t, k, n, s = 30, 40, 60, 4
    d = unit_atoms(t, k, np.dtype(dtype))
    x = RNG.standard_normal((t, n)).astype(dtype)
    gd, gx = fw.put(d), fw.put(x)
    untouched = Untouched(fw, gd, gx)
    codes, report = linv.omp(gd, gx, s, report=True)
    fw.check(codes, dtype, (k, n))
    assert report["device"] == fw.device
    ref = linv.omp(d, x, s)
    got = fw.get(codes)
    eps = np.finfo(dtype).eps
    for j in range(n):
        support = np.flatnonzero(ref[:, j])
        assert set(np.flatnonzero(got[:, j])) == set(support)
        cond = np.linalg.cond(d[:, support].astype(np.float64))
        assert relative_error(got[support, j], ref[support, j]) <= THRESHOLD * t * eps * cond
    one = linv.omp(gd, gx[:, 0], s)
    fw.check(one, dtype, (k,))
    untouched.check()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_ksvd_and_adl_of_gpu_arrays(fw, dtype):
    t, n, k, s = 20, 200, 12, 3
    truth = unit_atoms(t, k)
    gamma = np.zeros((k, n))
    for j in range(n):
        gamma[RNG.choice(k, s, replace=False), j] = RNG.standard_normal(s)
    x = (truth @ gamma + 0.01 * RNG.standard_normal((t, n))).astype(dtype)
    gx = fw.put(x)
    untouched = Untouched(fw, gx)
    eps = np.finfo(dtype).eps
    x64 = x.astype(np.float64)
    r, report = linv.ksvd(gx, k, s, iterations=4, seed=int(RNG.integers(1 << 31)), report=True)
    fw.check(r.dictionary, dtype, (t, k))
    fw.check(r.codes, dtype, (k, n))
    assert report["device"] == fw.device
    d64, c64 = fw.get(r.dictionary).astype(np.float64), fw.get(r.codes).astype(np.float64)
    assert np.abs(np.linalg.norm(d64, axis=0) - 1).max() <= THRESHOLD * t * eps
    assert np.count_nonzero(c64, axis=0).max() <= s
    rmse = np.sqrt(((x64 - d64 @ c64) ** 2).sum() / (t * n))
    assert abs(r.rmse[-1] - rmse) <= THRESHOLD * t * s * eps * np.abs(x64).max()
    again = linv.ksvd(gx, k, s, iterations=1, initial=r.dictionary)  # a GPU dictionary to start from
    fw.check(again.dictionary, dtype, (t, k))

    m, c, c_d = 2, 0.5, 1.0
    task = RNG.standard_normal((t, m)).astype(dtype)
    gtask = fw.put(task)
    r, report = linv.adl(gx, 5, task=gtask, c=c, c_d=c_d, max_iterations=6, coefficient_steps=4,
                         dictionary_steps=4, seed=int(RNG.integers(1 << 31)), report=True)
    fw.check(r.dictionary, dtype, (t, 5))
    fw.check(r.codes, dtype, (5, n))
    assert report["device"] == fw.device and isinstance(r.objective, np.ndarray)
    d64, s64 = fw.get(r.dictionary).astype(np.float64), fw.get(r.codes).astype(np.float64)
    f = ((x64 - d64 @ s64) ** 2).sum() + r.lam * np.abs(s64).sum()
    scale = (x64 ** 2).sum()
    assert abs(r.objective[-1] - f) <= THRESHOLD * t * eps * scale
    assert np.all(np.diff(r.objective) <= THRESHOLD * t * eps * scale)
    radius = np.linalg.norm(d64[:, :m] - task.astype(np.float64), axis=0)
    assert np.all(radius <= np.sqrt(c) * (1 + THRESHOLD * eps))
    untouched.check()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_parafac2_of_gpu_slabs(fw, dtype):
    from test_fmri import parafac2_model
    i, f, widths, slabs = parafac2_model(dtype)
    gslabs = [fw.put(s) for s in slabs]
    untouched = Untouched(fw, *gslabs)
    r, report = linv.parafac2(gslabs, f, tolerance=1e-12, max_iterations=300, seed=int(RNG.integers(1 << 31)),
                              report=True)
    for v, shape in ((r.A, (i, f)), (r.H, (f, f)), (r.C, (len(widths), f))):
        fw.check(v, dtype, shape)
    for p, j in zip(r.P, widths):
        fw.check(p, dtype, (j, f))
    assert report["device"] == fw.device
    eps = np.finfo(dtype).eps
    norm = sum((s.astype(np.float64) ** 2).sum() for s in slabs)
    a64, h64, c64 = (fw.get(v).astype(np.float64) for v in (r.A, r.H, r.C))
    loss = 0.0
    for kk, s in enumerate(slabs):
        p64 = fw.get(r.P[kk]).astype(np.float64)
        assert np.abs(p64.T @ p64 - np.eye(f)).max() <= THRESHOLD * max(widths) * eps
        loss += ((s.astype(np.float64) - (a64 * c64[kk]) @ (p64 @ h64).T) ** 2).sum()
    assert abs(r.norm_squared - norm) <= THRESHOLD * sum(s.size for s in slabs) * eps * norm
    assert abs(r.loss - loss) <= THRESHOLD * f * sum(widths) * eps * norm
    started = linv.parafac2(fw.put(np.stack([s[:, :9] for s in slabs])), f, max_iterations=3,
                            init=(r.A, r.H, r.C))  # one (K, I, J) GPU array; a start on the GPU
    fw.check(started.C, dtype, (len(widths), f))
    untouched.check()


# ---- what is refused ----

def test_host_only_functions_and_mixed_calls_refuse_gpu_arrays(fw, tmp_path):
    a = fw.put(np.eye(4))
    with pytest.raises(TypeError, match="host arrays only"):
        linv.slam.BorderedJacobian(a, 1)
    with pytest.raises(TypeError, match="host arrays only"):
        linv.write(tmp_path / "a.npy", a)
    with pytest.raises(TypeError, match="host arrays only"):
        linv.imaging.estimate_noise(a)
    with pytest.raises(TypeError, match="b is a GPU array and a is not"):
        linv.solve(np.eye(4), fw.put(np.ones(4)))
    with pytest.raises(TypeError, match="a is a GPU array and d is not"):
        linv.wls(fw.put(np.ones((2, 4))), np.ones(4), fw.put(np.ones(4)))


def test_gpu_array_errors():
    torch = _torch()
    a = torch.ones(4, 4, dtype=torch.float64, device="cuda")
    with pytest.raises(linv.SingularMatrixError):
        linv.inv(a)
    with pytest.raises(TypeError, match="int64"):
        linv.inv(torch.eye(3, dtype=torch.int64, device="cuda"))
    with pytest.raises(ValueError, match="would move it"):
        linv.inv(torch.eye(3, dtype=torch.float64, device="cuda"), device="cpu")
    with pytest.raises(ValueError, match=r"\(3, 4\)"):
        linv.inv(torch.zeros(3, 4, dtype=torch.float64, device="cuda"))
    with pytest.raises(TypeError, match="one dtype"):
        linv.solve(torch.eye(3, dtype=torch.float64, device="cuda"), torch.ones(3, dtype=torch.float32, device="cuda"))
    with pytest.raises(ValueError, match=r"\(3, 3\).*\(4,\)"):
        linv.solve(torch.eye(3, dtype=torch.float64, device="cuda"), torch.ones(4, dtype=torch.float64, device="cuda"))
    with pytest.raises(linv.NotPositiveDefiniteError):
        linv.cholesky(-torch.eye(3, dtype=torch.float64, device="cuda"))
    with pytest.raises(ValueError, match=r"\(2, 3, 4\)"):
        linv.inv(torch.zeros(2, 3, 4, dtype=torch.float64, device="cuda"))


class FakeGpuArray:
    """Says it lives on a CUDA device (DLPack's kDLCUDA) and holds nothing: enough for the checks linv makes
    before it reads an array, which therefore run without a GPU."""

    def __init__(self, shape, dtype="float64", device=0):
        self.shape, self.dtype, self._device = tuple(shape), dtype, device

    def __dlpack_device__(self):
        return (2, self._device)


def test_gpu_array_checks_need_no_gpu(tmp_path):
    square = FakeGpuArray((3, 3))
    with pytest.raises(TypeError, match="host arrays only"):
        linv.slam.BorderedJacobian(square, 1)
    with pytest.raises(TypeError, match="host arrays only"):
        linv.write(tmp_path / "a.npy", square)
    with pytest.raises(TypeError, match="b is a GPU array and a is not"):
        linv.solve(np.eye(3), FakeGpuArray((3,)))
    with pytest.raises(TypeError, match="a is a GPU array and b is not"):
        linv.lstsq(square, np.ones(3))
    with pytest.raises(TypeError, match="int64"):
        linv.inv(FakeGpuArray((3, 3), "int64"))
    with pytest.raises(TypeError, match="one dtype"):
        linv.solve(square, FakeGpuArray((3,), "float32"))
    with pytest.raises(ValueError, match="one GPU"):
        linv.solve(square, FakeGpuArray((3,), device=1))
    with pytest.raises(ValueError, match="would move it"):
        linv.cholesky(square, device="cpu")
    with pytest.raises(ValueError, match="would move it"):
        linv.deblur(square, "box:size=3", device="cuda:1")
    with pytest.raises(ValueError, match=r"\(3, 4\)"):
        linv.LU(FakeGpuArray((3, 4)))
    with pytest.raises(ValueError, match=r"\(3, 4\)"):
        linv.slogdet(FakeGpuArray((3, 4)))
    with pytest.raises(TypeError, match="real numbers only"):
        linv.wls(FakeGpuArray((4, 3), "complex128"), FakeGpuArray((4,)), FakeGpuArray((4,)))
    with pytest.raises(TypeError, match="one dtype"):
        linv.solve(FakeGpuArray((3, 3), "complex64"), FakeGpuArray((3,), "complex128"))
    with pytest.raises(ValueError, match="all three"):
        linv.parafac2([square], 1, init=(square, None, None))
