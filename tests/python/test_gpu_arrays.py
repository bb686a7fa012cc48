"""GPU arrays of other frameworks (PyTorch, CuPy) stay on their GPU: linv reads them in place, after the
work their framework queued, and returns the same kind of array on the same GPU, float32 kept. Skips,
saying why, without a usable GPU or without the framework."""
import numpy as np
import pytest

import linv
from test_linv import THRESHOLD, random_matrix, scaled_inverse_residual, scaled_solve_residual


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
    b = np.random.default_rng().uniform(-1, 1, 300 if vector else (300, 3))
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
    b = np.random.default_rng().uniform(-1, 1, (200, 2)).astype(np.float32)
    y = linv.solve(ca, cupy.asarray(b))
    assert isinstance(y, cupy.ndarray) and y.shape == b.shape
    assert scaled_solve_residual(a, cupy.asnumpy(y), b) <= THRESHOLD


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
