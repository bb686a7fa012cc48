#!/usr/bin/env python3
"""PARAFAC2 with linv.fmri.parafac2 on synthetic fMRI-like data, checked against the truth it was made from.

Each slab X_k is one subject (or one slice): time points x voxels. The time courses are shared by all
slabs (the shared mode, A), each subject expresses each component with its own strength (C[k]), and each
subject has its own voxels and its own spatial maps B_k = P_k H (PARAFAC2 lets the maps differ between
slabs, and the number of voxels too, as long as their cross-products H^T H stay the same):

    X_k = A diag(C[k]) B_k^T + noise,   A: time points x F,   B_k: voxels_k x F

    python3 examples/python/parafac2_fmri.py                 # 8 subjects, 160 time points, 3 components
    python3 examples/python/parafac2_fmri.py --device cuda

The fit is the variance explained; the factor match is the congruence (|cosine|) between each true time
course and the fitted one it is matched to. Nothing is drawn, so --out is accepted for symmetry with the
other examples and only receives the fitted factors (parafac2_fmri.npz).
"""
import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import linv


def time_courses(t, rank):
    """Smooth task-like time courses: block designs of different periods, blurred by a haemodynamic-like
    response (a gamma bump), plus a slow drift."""
    courses = []
    for f in range(rank - 1):
        period = 20 + 14 * f
        blocks = ((np.arange(t) + 5 * f) % period < period // 2).astype(float)
        hrf = np.arange(16) ** 5 * np.exp(-np.arange(16))  # peaks after 5 time points
        courses.append(np.convolve(blocks, hrf / hrf.sum())[:t])
    courses.append(np.linspace(-1, 1, t) ** 2)              # the drift
    courses = np.column_stack(courses)
    return courses - courses.mean(axis=0)                    # each voxel's mean removed, as in preprocessing


def congruence(true, fitted):
    """The per-component |cosine| between true and fitted columns, after matching each true component to
    the fitted one that makes the sum largest (PARAFAC2 finds components in any order and sign)."""
    t = true / np.linalg.norm(true, axis=0)
    f = fitted / np.linalg.norm(fitted, axis=0)
    cos = np.abs(t.T @ f)                                    # F x F
    rank = cos.shape[0]
    best = max(itertools.permutations(range(rank)), key=lambda p: cos[range(rank), p].sum())
    return cos[range(rank), best], best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="auto", help='where linv fits: "cpu", "cuda[:N]" or "auto"')
    parser.add_argument("--out", type=Path, default=None, help="folder for the fitted factors (default: a temp dir)")
    parser.add_argument("--small", action="store_true", help="4 subjects of 60 time points, for tests")
    args = parser.parse_args()

    rng = np.random.default_rng(7)
    subjects, t, rank = (4, 60, 3) if args.small else (8, 160, 3)
    noise = 0.1                                              # relative to the signal, per slab

    # The truth. A: shared time courses; C: each subject's strength of each component (positive);
    # H: F x F, the same for everybody; P_k: orthonormal voxels_k x F, a subject's own spatial patterns.
    A = time_courses(t, rank)
    C = rng.uniform(0.5, 1.5, size=(subjects, rank))
    H = rng.standard_normal((rank, rank)) + 2 * np.eye(rank)
    slabs = []
    for k in range(subjects):
        voxels = 200 + 25 * k                                # subjects need not have the same voxels
        P, _ = np.linalg.qr(rng.standard_normal((voxels, rank)))
        signal = A @ np.diag(C[k]) @ (P @ H).T               # time points x voxels
        e = rng.standard_normal(signal.shape)
        slabs.append(signal + noise * np.linalg.norm(signal) / np.linalg.norm(e) * e)
    print(f"{subjects} slabs of {t} time points x {slabs[0].shape[1]}..{slabs[-1].shape[1]} voxels, "
          f"rank {rank}, noise {noise:.0%} of the signal")

    # The fit. slabs: a list of (time points x voxels_k) arrays, the shared mode (time) first. PARAFAC2's
    # alternating least squares can stall in a flat stretch of the loss ("swamp") short of the best fit,
    # so, as usual, it starts from the SVD and from a few random points, and the lowest loss wins.
    start = time.perf_counter()
    fits = [linv.parafac2(slabs, rank, tolerance=1e-9, max_iterations=2000, start=how, seed=seed,
                          device=args.device, report=True)
            for how, seed in [("svd", 0)] + [("random", s) for s in range(1, 5)]]
    result, report = min(fits, key=lambda fit: fit[0].loss)
    seconds = time.perf_counter() - start
    print(f"linv.parafac2 on {report.get('device', args.device)}: {len(fits)} starts in {seconds * 1e3:.0f} ms; "
          f"variance explained {', '.join(f'{r.variance_explained:.5f}' for r, _ in fits)}; "
          f"the best took {len(result.loss_history)} iterations")
    # With 10 % noise the best possible fit explains about 1 / (1 + 0.1^2) = 99 % of the variance.
    print(f"fit: variance explained {result.variance_explained:.4f}")

    # The match: the time courses (shared mode, A) and the subjects' strengths (C), component by component.
    a_match, order = congruence(A, result.A)
    c_match = np.abs(np.sum(C / np.linalg.norm(C, axis=0) * result.C[:, order], axis=0))
    for f in range(rank):
        print(f"component {f}: fitted #{order[f]}, time-course congruence {a_match[f]:.4f}, "
              f"subject-strength congruence {c_match[f]:.4f}")
    print(f"smallest time-course congruence {a_match.min():.4f} (above 0.95: the components were recovered)")

    out = args.out if args.out is not None else Path(tempfile.mkdtemp(prefix="linv-parafac2-"))
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "parafac2_fmri.npz", A=result.A, C=result.C, H=result.H, A_true=A, C_true=C)
    print(f"factors: {out / 'parafac2_fmri.npz'}")
    return 0 if a_match.min() > 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
