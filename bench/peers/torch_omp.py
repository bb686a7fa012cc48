#!/usr/bin/env python3
"""Batched orthogonal matching pursuit in PyTorch: the peer of linv's GPU Batch-OMP.

All N signals advance together, one atom per step, from G = D^T D and D^T X (the same Gram-based
algorithm linv and scikit-learn's orthogonal_mp_gram use): the atom of largest |correlation|
(torch.argmax picks the first), then the least-squares coefficients on the support by a batched
Cholesky solve of G restricted to it (N small systems at once), then the correlations of the residual.
Codes are returned dense (K x N); deliver_to_host copies them to host memory, as linv's API returns them.

    python3 bench/peers/torch_omp.py --check   # compares against scikit-learn on a small problem (CPU)
"""
import argparse
import sys


def batched_omp(D, X, sparsity, deliver_to_host=True):
    """Codes (K x N) of X's columns over D's atoms with at most `sparsity` atoms each."""
    import torch
    K, N = D.shape[1], X.shape[1]
    G = D.T @ D
    alpha0 = D.T @ X  # K x N
    alpha = alpha0.clone()
    support = torch.empty((N, sparsity), dtype=torch.long, device=X.device)
    columns = torch.arange(N, device=X.device)
    gamma = None
    for step in range(sparsity):
        support[:, step] = torch.argmax(alpha.abs(), dim=0)
        S = support[:, : step + 1]  # N x s
        Gs = G[S.unsqueeze(2), S.unsqueeze(1)]  # N x s x s
        rhs = alpha0.T.gather(1, S).unsqueeze(2)  # N x s x 1
        L = torch.linalg.cholesky(Gs)
        gamma = torch.cholesky_solve(rhs, L).squeeze(2)  # N x s
        alpha = alpha0 - (G[:, S] * gamma.unsqueeze(0)).sum(2)  # K x N
    codes = torch.zeros((K, N), dtype=X.dtype, device=X.device)
    codes[support.T, columns.unsqueeze(0).expand(sparsity, N)] = gamma.T
    return codes.cpu() if deliver_to_host else codes


def check():
    """On a small random problem: the same codes as scikit-learn's orthogonal_mp_gram."""
    import numpy as np
    import torch
    from sklearn.linear_model import orthogonal_mp_gram
    rng = np.random.default_rng(1)
    D = rng.uniform(-1, 1, (40, 9))
    D /= np.linalg.norm(D, axis=0)
    X = rng.uniform(-1, 1, (40, 500))
    ours = batched_omp(torch.from_numpy(D), torch.from_numpy(X), 6).numpy()
    ref = orthogonal_mp_gram(D.T @ D, D.T @ X, n_nonzero_coefs=6)
    err = np.abs(ours - ref).max() / np.abs(ref).max()
    print(f"torch batched OMP against scikit-learn: max relative difference {err:.2e}")
    return err < 1e-10


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if args.check:
        sys.exit(0 if check() else 1)
    ap.print_help()
