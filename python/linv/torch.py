"""torch.linalg's names and arguments over linv, for PyTorch tensors: `from linv import torch as la` and call
`la.inv(A)` where the code had `torch.linalg.inv(A)`.

    inv, inv_ex, solve, solve_ex, cholesky, cholesky_ex, lu_factor, lu_factor_ex, lu_solve, slogdet, det,
    lstsq, pinv

CUDA tensors stay on their GPU, read in place once the work queued on it is done (linv's GPU paths: the
dense routines, batched kernels for stacks), and results come back as tensors on that GPU, on the same
stream-ordered terms as linv's own functions; CPU tensors are computed on the CPU. torch's argument names
and results: `left=`, `upper=`, `check_errors=`, the `_ex` variants' `info` (an int32 tensor of the batch's
shape: 0, or the 1-based pivot or minor that failed), slogdet's and lstsq's named results, batches (..., n, n)
and torch's rule for a batch of vectors b (shape (..., n) where a is (..., n, n)). Failures raise
torch.linalg.LinAlgError (the error classes are also linv's own: SingularMatrixError, ...).

Where it differs from torch.linalg on purpose (each function's docstring has its own table):
- No autograd: a tensor that requires grad is refused with a ValueError (detach it, or use torch.linalg).
- Singular to working precision (rcond < eps) is an error, as in linv's own functions; torch returns an
  answer without a word.
- cholesky reads a's lower triangle (upper=True: its upper one), as torch does; the factor is linv's.
- lu_factor and lu_solve run on the tensor's GPU for square CUDA matrices (cuSOLVER's getrf and getrs; the
  pivots pass through host memory, n integers a matrix) and on the CPU otherwise (LAPACK's getrf, from
  linv.plu). lstsq runs on the CPU (CUDA tensors go through host memory, as linv.lstsq's); its residuals
  follow NumPy's rule (computed when m > n and the rank is full) for every driver; singular_values are torch's own
  (torch.linalg.svdvals) where driver is "gelsd" or "gelss", else empty, as torch gives them.
- pinv takes rtol (and hermitian, computed as general); atol is not supported (a ValueError).
- lu_factor(pivot=False) is refused (a ValueError): LU without pivoting is unstable, and linv's GPU
  solvers that do without pivoting (method="rbt") randomize first.
"""

from typing import Any, NamedTuple

import numpy as _np
import torch as _torch
from torch.linalg import LinAlgError

from . import _common, _linv
from . import cholesky as _cholesky, inv as _inv, lstsq as _lstsq, pinv as _pinv, plu as _plu, slogdet as _slogdet
from . import solve as _solve
from .scipy import lu_solve as _lu_solve

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "det", "inv", "inv_ex", "lstsq", "lu_factor", "lu_factor_ex",
           "lu_solve", "pinv", "slogdet", "solve", "solve_ex"]


# linv's errors as torch.linalg.LinAlgError, keeping their own class (and its pivot, minor, index) too.
class SingularMatrixError(_common.SingularMatrixError, LinAlgError):
    pass


class NotPositiveDefiniteError(_common.NotPositiveDefiniteError, LinAlgError):
    pass


class NumericalError(_common.NumericalError, LinAlgError):
    pass


_AS_TORCH = {_common.SingularMatrixError: SingularMatrixError,
             _common.NotPositiveDefiniteError: NotPositiveDefiniteError, _common.NumericalError: NumericalError}


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class LUFactorResult(NamedTuple):
    LU: Any
    pivots: Any


class LUFactorExResult(NamedTuple):
    LU: Any
    pivots: Any
    info: Any


class LstsqResult(NamedTuple):
    solution: Any
    residuals: Any
    rank: Any
    singular_values: Any


def _tensor(x: Any, name: str) -> _torch.Tensor:
    if not isinstance(x, _torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor (linv.torch is torch.linalg's contract); it is {type(x)}: "
                        f"use linv.linalg for NumPy arrays")
    if x.requires_grad:
        raise ValueError(f"{name} requires grad: linv.torch does not differentiate; detach it, or use torch.linalg")
    return x


def _numpy(t: _torch.Tensor) -> _np.ndarray:
    """A CPU tensor's values as a NumPy array (a view where torch can give one: not of a lazily conjugated or
    negated tensor, whose bits NumPy has no way to carry)."""
    return t.resolve_conj().resolve_neg().numpy()


def _call(function: Any, *args: Any, **kwargs: Any) -> Any:
    """function on tensors: CUDA tensors as they are (linv's GPU paths), CPU tensors through NumPy views;
    linv's errors raised as torch.linalg.LinAlgError."""
    cpu = all(not isinstance(a, _torch.Tensor) or a.device.type == "cpu" for a in args)
    converted = [_numpy(a) if isinstance(a, _torch.Tensor) and cpu else a for a in args]
    try:
        out = function(*converted, **kwargs)
    except tuple(_AS_TORCH) as error:
        mine = _AS_TORCH[type(error)] if type(error) in _AS_TORCH else NumericalError
        raised = mine(str(error))
        raised.__dict__.update(error.__dict__)
        raise raised from error
    except _common.InputError as error:
        raise LinAlgError(str(error)) from error
    if not cpu:
        return out
    wrap = lambda x: _torch.from_numpy(_np.ascontiguousarray(x)) if isinstance(x, _np.ndarray) else x  # noqa: E731
    return tuple(wrap(x) for x in out) if isinstance(out, tuple) else wrap(out)


def _square(a: _torch.Tensor, name: str = "A") -> None:
    if a.dim() < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg: {name} must be batches of square matrices, but they are {tuple(a.shape)}")


def inv(A: _torch.Tensor, *, out: Any = None) -> _torch.Tensor:
    """A^-1 for A (..., n, n), as torch.linalg.inv.

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | autograd | differentiable | refused (ValueError): detach, or use torch.linalg |
    | singular to working precision (rcond < eps) | an answer | LinAlgError naming rcond |
    """
    A = _tensor(A, "A")
    _square(A)
    return _out(_call(_inv, A), out)


def inv_ex(A: _torch.Tensor, *, check_errors: bool = False, out: Any = None) -> tuple[_torch.Tensor, _torch.Tensor]:
    """(inverse, info) as torch.linalg.inv_ex: info 0, or the pivot of a singular matrix (whose block of the
    inverse is NaN); check_errors raises instead.

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | singular to working precision (rcond < eps) | info 0 and an answer | info the pivot and NaN in the result; check_errors raises |
    """
    A = _tensor(A, "A")
    _square(A)
    batch = tuple(A.shape[:-2])
    if check_errors:
        return inv(A, out=out), _info(0, A, batch)
    if A.dim() > 2:
        x, report = _call(_inv, A, singular="nan", report=True)
        return _out(x, out), _info(report["pivots"], A, batch)
    try:
        return _out(_call(_inv, A), out), _info(0, A, batch)
    except SingularMatrixError as error:
        return _out(_torch.full_like(A, float("nan")), out), _info(max(int(error.pivot), 1), A, batch)


def _vectors(A: _torch.Tensor, B: _torch.Tensor) -> bool:
    """torch's rule: B is a (batch of) vector(s) when it is 1-D or its shape is A's without the last dimension."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solved(A: _torch.Tensor, B: _torch.Tensor, left: bool, singular: str) -> tuple[_torch.Tensor, dict]:
    """X by torch's conventions (left, a batch of vectors) and linv's report."""
    vector = _vectors(A, B)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        if vector:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation XA = B "
                               f"({tuple(A.shape)} and {tuple(B.shape)}): B must be matrices (..., k, n), as torch "
                               f"requires")
        x, report = _solved(A.mT, B.mT, True, singular)
        return x.mT, report
    b = B.unsqueeze(-1) if vector and B.dim() > 1 else B
    x, report = _call(_solve, A, b, singular=singular, report=True)
    return (x.squeeze(-1) if vector and B.dim() > 1 else x), report


def _system(A: Any, B: Any) -> tuple[_torch.Tensor, _torch.Tensor]:
    A, B = _tensor(A, "A"), _tensor(B, "B")
    _square(A)
    if B.dtype != A.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type {A.dtype} "
                           f"and B of type {B.dtype} instead")
    return A, B


def solve(A: _torch.Tensor, B: _torch.Tensor, *, left: bool = True, out: Any = None) -> _torch.Tensor:
    """X with A X = B (left=False: X A = B), as torch.linalg.solve.

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | autograd | differentiable | refused (ValueError) |
    | singular to working precision (rcond < eps) | an answer | LinAlgError naming rcond |
    """
    A, B = _system(A, B)
    return _out(_solved(A, B, left, "raise")[0], out)


def solve_ex(A: _torch.Tensor, B: _torch.Tensor, *, left: bool = True, check_errors: bool = False,
             out: Any = None) -> tuple[_torch.Tensor, _torch.Tensor]:
    """(result, info) as torch.linalg.solve_ex: info 0, or the pivot of a singular matrix (whose block of the
    result is NaN); check_errors raises instead.

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | singular to working precision (rcond < eps) | info 0 and an answer | info the pivot and NaN in the result; check_errors raises |
    """
    A, B = _system(A, B)
    systems = _np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-1] if _vectors(A, B) else B.shape[:-2]))
    batch = tuple(A.shape[:-2])  # torch's info is A's: one per matrix factored
    try:
        x, report = _solved(A, B, left, "raise" if check_errors else "nan")
    except SingularMatrixError as error:  # one system (a stack leaves NaN blocks and says which)
        if check_errors or A.dim() > 2 or len(systems) > 0:
            raise
        return _out(_torch.full_like(B, float("nan")), out), _info(max(int(error.pivot), 1), A, batch)
    pivots = _np.asarray(report.get("pivots", _np.zeros(systems, dtype=_np.int32))).reshape(systems)
    # each system's pivot, back to the matrix of A it used (a broadcast axis of A: the largest over it)
    padded = (1,) * (len(systems) - len(batch)) + batch
    axes = tuple(i for i, (s, a) in enumerate(zip(systems, padded)) if a == 1 and s != 1)
    if axes:
        pivots = pivots.max(axis=axes, keepdims=True)
    return _out(x, out), _info(pivots.reshape(batch), A, batch)


def _hermitian_from(A: _torch.Tensor, upper: bool) -> _torch.Tensor:
    """The Hermitian (symmetric) matrix whose lower (upper) triangle is A's: what torch's cholesky reads."""
    half = A.triu() if upper else A.tril()
    strict = A.triu(1) if upper else A.tril(-1)
    full = half + strict.mH
    if full.is_complex():
        full = full - 1j * _torch.diag_embed(_torch.diagonal(full, dim1=-2, dim2=-1).imag)
    return full


def cholesky(A: _torch.Tensor, *, upper: bool = False, out: Any = None) -> _torch.Tensor:
    """L with A = L L^H (upper=True: U with A = U^H U) for A (..., n, n), as torch.linalg.cholesky: only the
    lower (upper) triangle of A is read.

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | triangle read | lower (upper=True: upper) | the same; the factor is linv's |
    """
    A = _tensor(A, "A")
    _square(A)
    full = _hermitian_from(A, upper)
    factors = _torch.empty_like(A)
    for index in _np.ndindex(*A.shape[:-2]):
        factors[index] = _call(_cholesky, full[index].contiguous())
    return _out(factors.mH if upper else factors, out)


def cholesky_ex(A: _torch.Tensor, *, upper: bool = False, check_errors: bool = False,
                out: Any = None) -> tuple[_torch.Tensor, _torch.Tensor]:
    """(L, info) as torch.linalg.cholesky_ex: info the first failing leading minor of each matrix, 0 if none.

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | info | the failing minor | the same |
    """
    A = _tensor(A, "A")
    _square(A)
    full = _hermitian_from(A, upper)
    factors = _torch.zeros_like(A)
    info = _np.zeros(A.shape[:-2], dtype=_np.int32)
    for index in _np.ndindex(*A.shape[:-2]):
        try:
            factors[index] = _call(_cholesky, full[index].contiguous())
        except NotPositiveDefiniteError as error:
            if check_errors:
                raise
            info[index] = error.minor
    return _out(factors.mH if upper else factors, out), _torch.from_numpy(info).to(A.device)


def slogdet(A: _torch.Tensor, *, out: Any = None) -> SlogdetResult:
    """(sign, logabsdet) for A (..., n, n), as torch.linalg.slogdet: sign 0 and logabsdet -inf for an exactly
    singular matrix; sign complex (det / |det|) for complex A.

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | autograd | differentiable | refused (ValueError) |
    """
    A = _tensor(A, "A")
    _square(A)
    real = A.real.dtype if A.is_complex() else A.dtype
    signs = _torch.empty(A.shape[:-2], dtype=A.dtype)
    logs = _torch.empty(A.shape[:-2], dtype=real)
    for index in _np.ndindex(*A.shape[:-2]):
        if A.shape[-1] == 0:
            signs[index], logs[index] = 1, 0
            continue
        sign, log = _call(_slogdet, A[index].contiguous())
        signs[index], logs[index] = complex(sign) if A.is_complex() else float(sign), float(log)
    return SlogdetResult(signs.to(A.device), logs.to(A.device))


def det(A: _torch.Tensor, *, out: Any = None) -> _torch.Tensor:
    """det A for A (..., n, n), as torch.linalg.det (from slogdet: it overflows where the determinant does).

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | autograd | differentiable | refused (ValueError) |
    """
    sign, logabsdet = slogdet(A)
    return _out(sign * _torch.exp(logabsdet), out)


def _plu_gpu(a: _torch.Tensor) -> Any:
    """linv.plu's (factors, 1-based pivots, first zero pivot or 0) of one square CUDA matrix, on its GPU."""
    gpu = _common._gpu_call("linalg.lu_factor", None, complex=True, A=a)
    return _linv.plu_gpu(gpu.matrix(a, "A", square=True), gpu.framework)


def _plu_solve_gpu(lu: _torch.Tensor, pivots: list[int], b: _torch.Tensor, trans: str) -> Any:
    """X with op(A) X = B (trans "N" or "C") from one CUDA matrix's factors, on its GPU."""
    gpu = _common._gpu_call("linalg.lu_solve", None, complex=True, LU=lu, B=b)
    return _linv.plu_solve_gpu(gpu.matrix(lu, "LU", square=True), pivots, gpu.matrix(b, "B"), trans, gpu.framework)


def _raise_zero_pivot(index: tuple, pivot: int) -> None:
    error = SingularMatrixError(f"linalg.lu_factor_ex: the factorization of the matrix at batch index {index} has an "
                                f"exactly zero pivot at position {pivot}")
    error.pivot = pivot
    raise error


def lu_factor_ex(A: _torch.Tensor, *, pivot: bool = True, check_errors: bool = False,
                 out: Any = None) -> LUFactorExResult:
    """(LU, pivots, info) as torch.linalg.lu_factor_ex for A (..., m, n): LAPACK's getrf factors (L unit below
    the diagonal, U on and above), the 1-based row interchanges (int32, (..., min(m, n))) and info, the
    1-based index of the first exactly zero pivot of each matrix, 0 if none (check_errors raises instead).

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | where it runs | the tensor's device | square CUDA matrices on their GPU; rectangular ones on the CPU |
    | synchronization | none on CUDA | the pivots and info pass through host memory |
    | `pivot=False` | LU without pivoting (CUDA only) | ValueError |
    """
    A = _tensor(A, "A")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.lu_factor: A must have at least 2 dimensions; its shape is {tuple(A.shape)}")
    if not pivot:
        raise ValueError("linv.torch.lu_factor: pivot=False (LU without pivoting) is not provided; it is unstable "
                         "without a randomization first (linv.solve(..., method='rbt') does that)")
    m, n = A.shape[-2:]
    on_gpu = A.is_cuda and m == n
    if on_gpu and A.dim() == 2 and n > 0:  # one matrix: its factors as they come, without a copy into a batch
        lu, piv, zero = _call(_plu_gpu, A)
        if check_errors and zero:
            _raise_zero_pivot((), zero)
        return LUFactorExResult(_out(lu, out), _torch.tensor(piv, dtype=_torch.int32, device=A.device),
                                _torch.tensor(zero, dtype=_torch.int32, device=A.device))
    source = A.detach() if on_gpu else A.detach().cpu()
    factors = _torch.empty_like(source)
    pivots = _torch.empty(A.shape[:-2] + (min(m, n),), dtype=_torch.int32, device=source.device)
    info = _np.zeros(A.shape[:-2], dtype=_np.int32)
    for index in _np.ndindex(*A.shape[:-2]):
        if m == 0 or n == 0:
            continue
        if on_gpu:
            lu, piv, info[index] = _call(_plu_gpu, source[index])
            factors[index], pivots[index] = lu, _torch.tensor(piv, dtype=_torch.int32, device=A.device)
        else:
            factors[index], pivots[index], info[index] = _call(_plu, _numpy(source[index]))
    if check_errors and info.any():
        first = next(zip(*_np.nonzero(info))) if info.ndim else ()
        _raise_zero_pivot(first, int(info[first]))
    return LUFactorExResult(_out(factors.to(A.device), out), pivots.to(A.device),
                            _torch.from_numpy(info).to(A.device))


def lu_factor(A: _torch.Tensor, *, pivot: bool = True, out: Any = None) -> LUFactorResult:
    """(LU, pivots) as torch.linalg.lu_factor: lu_factor_ex's factors. An exactly zero pivot is not an error
    here (as in torch): lu_solve refuses those factors.

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | where it runs | the tensor's device | square CUDA matrices on their GPU; rectangular ones on the CPU |
    | synchronization | none on CUDA | the pivots pass through host memory |
    | `pivot=False` | LU without pivoting (CUDA only) | ValueError |
    """
    factors, pivots, _ = lu_factor_ex(A, pivot=pivot, out=out)
    return LUFactorResult(factors, pivots)


def lu_solve(LU: _torch.Tensor, pivots: _torch.Tensor, B: _torch.Tensor, *, left: bool = True,
             adjoint: bool = False, out: Any = None) -> _torch.Tensor:
    """X with A X = B (left=False: X A = B; adjoint: A^H in place of A) from lu_factor's (LU, pivots), as
    torch.linalg.lu_solve; the batch dimensions of LU and B broadcast.

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | where it runs | the tensor's device | the tensors' device |
    | synchronization | none on CUDA | the pivots pass through host memory |
    | a zero on U's diagonal | inf or NaN in X | LinAlgError naming the pivot |
    """
    LU, pivots, B = _tensor(LU, "LU"), _tensor(pivots, "pivots"), _tensor(B, "B")
    _square(LU, "LU")
    if B.dtype != LU.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{LU.dtype} and B of type {B.dtype} instead")
    n = LU.shape[-1]
    if B.dim() < 2 or B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"linalg.lu_solve: LU has shape {tuple(LU.shape)} and B has shape {tuple(B.shape)}: B "
                           f"must be matrices (..., {n}, k)" + ("" if left else f" (left=False: (..., k, {n}))"))
    if LU.device != B.device:
        raise RuntimeError(f"linalg.lu_solve: LU is on {LU.device} and B on {B.device}: put them on one device")
    # X A = B <=> A^H X^H = B^H; X A^H = B <=> A X^H = B^H (the conjugate transpose: what getrs's "C" takes)
    trans = ("C" if adjoint else "N") if left else ("N" if adjoint else "C")
    rhs = B.detach() if left else B.detach().mH
    batch = tuple(_np.broadcast_shapes(tuple(LU.shape[:-2]), tuple(rhs.shape[:-2])))
    on_gpu = B.is_cuda
    if not on_gpu:
        LU, rhs = LU.cpu(), rhs.cpu()
    factors = LU.detach().broadcast_to(batch + (n, n))
    ipiv = pivots.detach().cpu().broadcast_to(batch + (n,))
    given = rhs.broadcast_to(batch + tuple(rhs.shape[-2:]))
    if on_gpu and not batch:  # one system: its solution as it comes, without a copy into a batch
        x = _call(_plu_solve_gpu, factors, ipiv.tolist(), given, trans)
        return _out(x if left else x.mH, out)
    x = _torch.empty(given.shape, dtype=B.dtype, device=given.device)
    for index in _np.ndindex(*batch):
        if on_gpu:
            x[index] = _call(_plu_solve_gpu, factors[index], ipiv[index].tolist(), given[index], trans)
        else:
            x[index] = _call(_lu_solve, (_numpy(factors[index]), _numpy(ipiv[index]) - 1), _numpy(given[index]),
                             trans=trans)
    return _out(x if left else x.mH, out)


def lstsq(A: _torch.Tensor, B: _torch.Tensor, rcond: float | None = None, *, driver: str | None = None) -> LstsqResult:
    """(solution, residuals, rank, singular_values) as torch.linalg.lstsq, for A (m, n) and B (m, k) or (m,)...
    by QR with column pivoting (LAPACK gelsy) on the CPU; see the module's notes for residuals and
    singular_values.

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | where it runs | the tensor's device | the CPU (CUDA tensors go through host memory) |
    | residuals | per driver | NumPy's rule (m > n and full rank) for every driver |
    | singular_values | from the driver | torch.linalg.svdvals for gelsd/gelss, else empty |
    """
    A, B = _tensor(A, "A"), _tensor(B, "B")
    if A.dim() != 2:
        raise ValueError(f"linv.torch.lstsq takes one matrix A (m, n); its shape is {tuple(A.shape)}")
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    m, n = A.shape
    a, b = A.cpu(), B.cpu()
    x, report = _call(_lstsq, a, b, rcond, report=True)
    rank = int(report["rank"])
    if m > n and rank == n:
        residuals = ((b - a @ x).abs() ** 2).sum(dim=0)
    else:
        residuals = _torch.empty(0, dtype=A.real.dtype if A.is_complex() else A.dtype)
    if driver in ("gelsd", "gelss"):
        values = _torch.linalg.svdvals(A)
    else:
        values = _torch.empty(0, dtype=A.real.dtype if A.is_complex() else A.dtype, device=A.device)
    return LstsqResult(x.to(A.device), residuals.to(A.device),
                       _torch.tensor(rank, dtype=_torch.int64, device=A.device), values)


def pinv(A: _torch.Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False,
         out: Any = None) -> _torch.Tensor:
    """The pseudoinverse of A (..., m, n) by the SVD, as torch.linalg.pinv with rtol (singular values below rtol
    times the largest dropped; default max(m, n) eps); hermitian is computed as general.

    How it differs from torch.linalg:

    | | torch.linalg | linv |
    |---|---|---|
    | `atol` | taken | ValueError (rtol only) |
    | `hermitian=True` | eigen-decomposition | the SVD (the same result to rounding) |
    """
    A = _tensor(A, "A")
    if atol:
        raise ValueError("linv.torch.pinv takes rtol only: an absolute cutoff (atol) is not supported")
    x = _torch.empty(A.shape[:-2] + (A.shape[-1], A.shape[-2]), dtype=A.dtype, device=A.device)
    for index in _np.ndindex(*A.shape[:-2]):
        x[index] = _call(_pinv, A[index].contiguous(), rtol)
    return _out(x, out)


def _out(x: _torch.Tensor, out: Any) -> _torch.Tensor:
    """x, copied into `out` where one is given (torch's out= argument)."""
    if out is None:
        return x
    out.resize_(x.shape).copy_(x)
    return out


def _info(pivots: Any, A: _torch.Tensor, batch: tuple) -> _torch.Tensor:
    """The _ex variants' info: an int32 tensor of the batch's shape on A's device."""
    info = _np.array(_np.broadcast_to(_np.asarray(pivots, dtype=_np.int32), batch))  # a copy, 0-d kept 0-d
    return _torch.from_numpy(info).to(A.device)
