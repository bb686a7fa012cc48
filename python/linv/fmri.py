"""Sparse coding and factorisations for fMRI (include/linv/fmri.hpp, adl.hpp, parafac2.hpp).

Orientation: data X is T x N, time points by voxels (one column per voxel's time course). A dictionary D
is T x K (one time course per atom, one atom per column); codes are K x N (one spatial map per row), so
X ~ D @ codes. PARAFAC2 takes slabs X_k of I x J_k: the shared mode (time points) first, then that slab's
own columns (e.g. the voxels of slice k, or one subject's voxels); J_k may differ between slabs.

Results are NumPy arrays (`omp`) or small dataclasses holding the factors (`ksvd`, `adl`, `parafac2`).
float32 data is computed and returned in float32.

GPU arrays (PyTorch, CuPy; every array argument of a call on one GPU, one dtype) are computed on their GPU
and the results (codes, dictionaries, factors) come back there as the same kind of array; histories
(rmse, objective, loss) and reports stay NumPy. They are made column-major there by their framework when
they are not. ADL's task and initial dictionary and PARAFAC2's starting factors are read by linv in host
memory: given as GPU arrays, they are copied there.
"""
from dataclasses import dataclass, field

from typing import Any

import numpy as _np

from . import _linv
from ._common import _contiguous, _float, _gpu_call, _matrix

__all__ = ["omp", "ksvd", "adl", "parafac2", "KsvdResult", "AdlResult", "Parafac2Result"]


def _same(name: Any, a: Any, dtype: Any, shape: Any = None, what: str = "", gpu: Any = None) -> Any:
    """An optional matrix argument with the data's dtype (NumPy) or a column-major GPU array of the call
    (gpu: its _Gpu), of `shape` when given."""
    if a is None:
        return None
    if gpu:
        a = gpu.matrix(a, name)
    else:
        a = _contiguous(_matrix(a, name).astype(dtype, copy=False))
    if shape is not None and tuple(a.shape) != shape:
        raise ValueError(f"{what}: {name} has shape {tuple(a.shape)}; it must have shape {shape}")
    return a


@dataclass
class KsvdResult:
    """What k-SVD learned.

    Attributes
    ----------
    dictionary : ndarray, shape (T, K)
        Unit-norm atoms (time courses), one per column.
    codes : ndarray, shape (K, N)
        Batch-OMP codes of X against the final dictionary, at most `sparsity` nonzeros per column.
    rmse : ndarray, shape (iterations + 1,)
        sqrt(||X - D codes||_F^2 / (T N)) after each iteration's sparse coding, then the final one.
    replaced : int
        Atoms replaced (unused or too coherent), over all iterations.
    """
    dictionary: _np.ndarray
    codes: _np.ndarray
    rmse: _np.ndarray
    replaced: int


@dataclass
class AdlResult:
    """What atom-assisted dictionary learning found.

    Attributes
    ----------
    dictionary : ndarray, shape (T, K)
        The assisted atoms first (near the task's time courses), then the free ones.
    codes : ndarray, shape (K, N)
        The sparse spatial maps S.
    objective : ndarray
        f = ||X - D S||_F^2 + lam ||S||_1 at the start and after each outer iteration (never increasing).
    inner_objective : ndarray
        f after each inner step (per outer iteration: the coefficient steps, then the dictionary steps).
    lam : float
        The lambda used.
    """
    dictionary: _np.ndarray
    codes: _np.ndarray
    objective: _np.ndarray
    inner_objective: _np.ndarray
    lam: float


@dataclass
class Parafac2Result:
    """A fitted PARAFAC2 model X_k ~ A diag(C[k]) (P_k H)^T.

    Attributes
    ----------
    A : ndarray, shape (I, F)
        The shared mode (e.g. time courses); unit-norm columns.
    H : ndarray, shape (F, F)
        Carries the components' scale: B_k = P_k H are slab k's component maps.
    C : ndarray, shape (K, F)
        Row k: each component's strength in slab k; unit-norm columns.
    P : list of ndarray, shapes (J_k, F)
        Orthonormal columns.
    loss_history : ndarray
        ||X - model||^2 after each iteration.
    loss : float
        ||X - model||^2 of the returned model.
    norm_squared : float
        ||X||^2, the sum of the slabs' squared Frobenius norms.
    variance_explained : float
        1 - loss / norm_squared.
    """
    A: _np.ndarray
    H: _np.ndarray
    C: _np.ndarray
    P: list = field(default_factory=list)
    loss_history: _np.ndarray | None = None
    loss: float = 0.0
    norm_squared: float = 0.0
    variance_explained: float = 0.0

    def slab(self, k: Any) -> Any:
        """The model of slab k, A diag(C[k]) (P_k H)^T, shape (I, J_k)."""
        return (self.A * self.C[k]) @ (self.P[k] @ self.H).T


def omp(dictionary: Any, x: Any, sparsity: Any, *, tolerance: float = 0.0, kernel: str = "auto", device: Any = None,
        report: bool = False) -> Any:
    """Orthogonal matching pursuit of each column of x over the dictionary's atoms (Batch-OMP).

    Parameters
    ----------
    dictionary : array_like, shape (T, K)
        The atoms, one per column (they need not be normalised).
    x : array_like, shape (T,) or (T, N)
        The signals, one per column.
    sparsity : int
        The atoms per signal at most (1 <= sparsity <= K).
    tolerance : float
        Also stop a signal once ||x - D gamma||_2^2 <= tolerance (0: only at `sparsity` atoms).
    kernel : {"auto", "thread", "warp"}
        The GPU kernel (a thread or a warp per signal); "auto" on the CPU.
    device : str, optional
        "cpu", "cuda", "cuda:N" or "auto"; left out, where the data lies (the CPU for NumPy arrays). GPU
        arrays (dictionary and x) are coded on their GPU and the codes come back there.
    report : bool
        Return (codes, report); the report adds "atoms_used", per signal.

    Returns
    -------
    codes : ndarray, shape (K,) or (K, N)
        x ~ dictionary @ codes. The atom chosen at each step is the first of largest |correlation| with
        the residual, as scikit-learn's orthogonal_mp_gram chooses.

    Raises
    ------
    ValueError
        dictionary and x with different time points (naming both shapes), or sparsity outside [1, K].
    """
    gpu = _gpu_call("omp", device, dictionary=dictionary, x=x)
    if gpu:
        d, xa = gpu.matrix(dictionary, "dictionary"), gpu.adopt(x)
    else:
        d, xa = _matrix(dictionary, "dictionary"), _float(x, "x")
    d_shape, x_shape = tuple(d.shape), tuple(xa.shape)
    vector = len(x_shape) == 1
    if len(x_shape) not in (1, 2) or x_shape[0] != d_shape[0]:
        raise ValueError(f"omp: the dictionary has shape {d_shape} and x has shape {x_shape}: x needs {d_shape[0]} "
                         f"rows (time points)")
    x2 = xa.reshape(-1, 1) if vector else xa
    if gpu:
        codes, count, rep = _linv.omp_gpu(d, gpu.fortran(x2), int(sparsity), float(tolerance), kernel, gpu.framework)
    else:
        codes, count, rep = _linv.omp(d, _contiguous(x2).astype(d.dtype, copy=False), int(sparsity),
                                      float(tolerance), kernel, "cpu" if device is None else device)
    rep["atoms_used"] = count
    if vector:
        codes = codes.reshape(-1)
    return (codes, rep) if report else codes


def ksvd(x: Any, atoms: Any, sparsity: Any, *, iterations: int = 10, exact: bool = True, seed: int = 0,
         clear: bool = True, coherence: float = 0.8, min_use: int = 4, keep_better_codes: bool = False,
         initial: Any = None, device: Any = None, report: bool = False) -> Any:
    """k-SVD dictionary learning: x ~ dictionary @ codes with sparse codes.

    Parameters
    ----------
    x : array_like, shape (T, N)
        The signals (time points x voxels).
    atoms : int
        K, the dictionary's atoms.
    sparsity : int
        T0, the atoms per signal at most.
    iterations : int
    exact : bool
        Each atom's rank-1 update by its exact leading singular pair, or by one power step.
    seed : int
        The initial dictionary (K distinct signals) and the atom orders.
    clear : bool
        Replace atoms more coherent than `coherence` with another, or used by fewer than `min_use` signals.
    coherence, min_use
        The clearing thresholds.
    keep_better_codes : bool
        Keep a signal's updated old code when the new sparse coding represents it worse.
    initial : array_like, shape (T, K), optional
        A dictionary to start from (its atoms are normalised).
    device : str, optional
        "cpu", "cuda", "cuda:N" or "auto"; left out, where x lies (the CPU for NumPy arrays). A GPU array
        x (and initial, if given, on its GPU) is learned from on its GPU.
    report : bool
        Return (result, report).

    Returns
    -------
    KsvdResult
    """
    gpu = _gpu_call("ksvd", device, x=x, initial=initial)
    xa = gpu.matrix(x, "x") if gpu else _matrix(x, "x")
    initial = _same("initial", initial, xa.dtype, (xa.shape[0], int(atoms)), "ksvd", gpu)
    options = (int(atoms), int(sparsity), int(iterations), bool(exact), int(seed), bool(clear), float(coherence),
               int(min_use), bool(keep_better_codes), initial)
    if gpu:
        d, codes, rmse, replaced, rep = _linv.ksvd_gpu(xa, *options, gpu.framework)
    else:
        d, codes, rmse, replaced, rep = _linv.ksvd(xa, *options, "cpu" if device is None else device)
    result = KsvdResult(d, codes, rmse, int(replaced))
    return (result, rep) if report else result


def adl(x: Any, atoms: Any, *, task: Any = None, lam: Any = None, c: Any = None, c_d: float = 1.0,
        max_iterations: int = 200, coefficient_steps: int = 20, dictionary_steps: int = 20, tolerance: float = 0.0,
        seed: int = 0, initial: Any = None, device: Any = None, report: bool = False) -> Any:
    """Atom-assisted dictionary learning: minimise ||x - D S||_F^2 + lam ||S||_1 with the first M atoms
    kept within sqrt(c) of the task's time courses and the others within sqrt(c_d) of 0.

    Parameters
    ----------
    x : array_like, shape (T, N)
        The data (time points x voxels).
    atoms : int
        K, the atoms (assisted and free).
    task : array_like, shape (T, M) or (T,), optional
        Time courses the first M atoms should stay near (e.g. a design convolved with the HRF); M <= K.
    lam : float, optional
        The sparsity weight; None: 0.5 ||x||_F / sqrt(T N).
    c : float, optional
        The squared radius around each task time course (needed with a task).
    c_d : float
        The squared radius of the free atoms.
    max_iterations, coefficient_steps, dictionary_steps : int
        Outer iterations, and the majorisation-minimisation steps on S and on D in each.
    tolerance : float
        Stop once an outer iteration lowers f by at most this fraction (0: run them all).
    seed : int
        The random normal initial dictionary.
    initial : array_like, shape (T, K), optional
        A dictionary to start from instead.
    device : str, optional
        "cpu", "cuda", "cuda:N" or "auto"; left out, where x lies (the CPU for NumPy arrays). A GPU array
        x (task and initial, if given, on its GPU too) runs on its GPU; task and initial are copied to the
        host, where linv reads them.
    report : bool
        Return (result, report).

    Returns
    -------
    AdlResult
    """
    gpu = _gpu_call("adl", device, x=x, task=task, initial=initial)
    xa = gpu.matrix(x, "x") if gpu else _matrix(x, "x")
    if task is not None:
        t = gpu.adopt(task) if gpu else _float(task, "task")
        task = _same("task", t.reshape(-1, 1) if len(t.shape) == 1 else t, xa.dtype, gpu=gpu)
        if task.shape[0] != xa.shape[0]:
            raise ValueError(f"adl: x has shape {tuple(xa.shape)} and task has shape {tuple(t.shape)}: the task needs "
                             f"{xa.shape[0]} rows (time points)")
        if c is None:
            raise ValueError("adl: a task needs c, the squared radius around its time courses")
    initial = _same("initial", initial, xa.dtype, (xa.shape[0], int(atoms)), "adl", gpu)
    nan = float("nan")
    options = (int(atoms), task, nan if lam is None else float(lam), int(max_iterations), int(coefficient_steps),
               int(dictionary_steps), nan if c is None else float(c), float(c_d), float(tolerance), int(seed), initial)
    if gpu:
        d, s, objective, inner, lam_used, rep = _linv.adl_gpu(xa, *options, gpu.framework)
    else:
        d, s, objective, inner, lam_used, rep = _linv.adl(xa, *options, "cpu" if device is None else device)
    result = AdlResult(d, s, objective, inner, float(lam_used))
    return (result, rep) if report else result


def parafac2(slabs: Any, rank: Any, *, max_iterations: int = 1000, tolerance: float = 1e-7, start: str = "svd",
             seed: int = 0, init: Any = None, device: Any = None, report: bool = False) -> Any:
    """Fit a rank-F PARAFAC2 model X_k ~ A diag(c_k) (P_k H)^T by alternating least squares.

    Parameters
    ----------
    slabs : sequence of array_like, shapes (I, J_k); or an array of shape (K, I, J)
        The slabs, shared mode first: every slab has the same I rows (e.g. time points); its columns are
        its own (e.g. the voxels of slice k) and their number may differ between slabs. TensorLy's
        parafac2 takes its slices the other way round (J_k x I, slice k = P_k B diag(A[k]) C^T): pass
        [s.T for s in slices], and linv's A, H and C are TensorLy's C, B and A.
    rank : int
        F, between 1 and min(I, J_k).
    max_iterations : int
    tolerance : float
        Stop once the loss changes by at most this fraction of itself (0: run max_iterations).
    start : {"svd", "random"}
        The starting factors when `init` is not given.
    seed : int
    init : tuple of array_like (A, H, C), optional
        Starting factors of shapes (I, F), (F, F), (K, F).
    device : str, optional
        "cpu", "cuda", "cuda:N" or "auto"; left out, where the slabs lie (the CPU for NumPy arrays). GPU
        slabs (a list of GPU arrays, or one of shape (K, I, J), with init on their GPU if given) are fitted
        on their GPU; A, H, C and P come back there, and init is copied to the host, where linv reads it.
    report : bool
        Return (result, report).

    Returns
    -------
    Parafac2Result
        A and C with unit-norm columns, components ordered largest first.

    Raises
    ------
    ValueError
        Slabs whose row counts differ (naming the shapes), rank out of range, or init that does not fit.
    """
    if hasattr(slabs, "shape") and len(slabs.shape) == 3:  # (K, I, J): NumPy's, or a GPU array
        slabs = list(slabs)
    slabs = list(slabs)
    init = tuple(init) if init is not None else (None, None, None)
    if len(init) != 3 or len({v is None for v in init}) > 1:
        raise ValueError("parafac2: init is (A, H, C), all three given")
    gpu = _gpu_call("parafac2", device, **{f"slab {k}": s for k, s in enumerate(slabs)},
                    **{f"init {n}": v for n, v in zip("AHC", init)})
    if gpu:
        slabs = [gpu.matrix(s, f"slab {k}") for k, s in enumerate(slabs)]
        dtype = gpu.dtype
    else:
        slabs = [_matrix(s, f"slab {k}") for k, s in enumerate(slabs)]
        dtype = _np.result_type(*[s.dtype for s in slabs]) if slabs else None
        slabs = [_contiguous(s.astype(dtype, copy=False)) for s in slabs]
    if not slabs:
        raise ValueError("parafac2 needs at least one slab")
    rows = slabs[0].shape[0]
    for k, s in enumerate(slabs):
        if s.shape[0] != rows:
            raise ValueError(f"parafac2: slab 0 has shape {tuple(slabs[0].shape)} and slab {k} has shape "
                             f"{tuple(s.shape)}: every slab needs the same number of rows (the shared mode)")
    a0 = h0 = c0 = None
    if any(v is not None for v in init):
        f = int(rank)
        a0, h0, c0 = (_same(n, v, dtype, shape, "parafac2 init", gpu)
                      for n, v, shape in zip("AHC", init, [(rows, f), (f, f), (len(slabs), f)]))
    options = (int(rank), int(max_iterations), float(tolerance), start, int(seed), a0, h0, c0)
    if gpu:
        a, h, c, p, history, extra, rep = _linv.parafac2_gpu(slabs, *options, gpu.framework)
    else:
        a, h, c, p, history, extra, rep = _linv.parafac2(slabs, *options, "cpu" if device is None else device)
    result = Parafac2Result(a, h, c, list(p), history, extra["loss"], extra["norm_squared"],
                            extra["variance_explained"])
    return (result, rep) if report else result
