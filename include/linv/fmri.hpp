// Sparse coding for fMRI factorisation. The data X is T x N (time points x voxels); a dictionary D is
// T x K (time courses, one atom per column); codes Gamma are K x N with at most T0 nonzeros per column
// (spatial maps), so that X ~ D Gamma.
//
// Batch-OMP (Rubinstein, Zibulevsky and Elad, 2008): orthogonal matching pursuit for many signals at
// once from G = D^T D and D^T X, each signal's least-squares coefficients kept by a Cholesky factor of
// G restricted to its support and grown by one row per selected atom. The atom chosen at each step is
// the first of largest |correlation| with the residual, as scikit-learn's orthogonal_mp_gram chooses.
#pragma once

#include <vector>

#include "linv/matrix.hpp"

namespace linv::fmri {

// The codes of N signals: for signal j, count[j] (at most `sparsity`) atoms atom(t, j) with
// coefficients value(t, j), t < count[j], in the order they were selected.
template <Real T>
struct SparseCodes {
  index atoms = 0, signals = 0, sparsity = 0;
  std::vector<index> count;  // signals
  std::vector<index> atom;   // sparsity x signals, column by signal
  std::vector<T> value;      // sparsity x signals
  Matrix<T> to_dense() const;  // atoms x signals
};

struct OmpOptions {
  index sparsity = 0;     // T0, the atoms per signal at most (>= 1)
  double tolerance = 0;   // also stop once ||x - D gamma||_2^2 <= tolerance (0: only at T0 atoms)
};

// Batch-OMP of each column of X (T x N) over D's atoms (T x K; the atoms need not be normalised).
// Throws ShapeMismatch when D and X have different time points, InvalidArgument for sparsity < 1 or
// above K, NonFiniteInput for NaN or Inf. A signal whose residual is orthogonal to every remaining atom
// (or whose next atom is linearly dependent on the chosen ones) stops early.
template <Real T>
SparseCodes<T> batch_omp(ConstMatrixView<T> D, ConstMatrixView<T> X, const OmpOptions& options);

// The same from G = D^T D (K x K) and DtX = D^T X (K x N), with the signals' squared norms when a
// tolerance is given: what k-SVD reuses between its steps.
template <Real T>
SparseCodes<T> batch_omp_gram(ConstMatrixView<T> G, ConstMatrixView<T> DtX, const std::vector<double>& norms_squared,
                              const OmpOptions& options);

}  // namespace linv::fmri
