// PARAFAC2 for fMRI: K slabs X_k (I x J_k, e.g. time points x the voxels of slice k; J_k may differ)
// modelled as
//
//   X_k ~ A diag(c_k) (P_k H)^T,   k = 1..K,
//
// with A (I x F, e.g. time courses), C (K x F, row k = c_k: each component's strength in slab k), H
// (F x F) and P_k (J_k x F) with orthonormal columns, so that the slab's component maps B_k = P_k H
// share one cross-product B_k^T B_k = H^T H (Harshman's PARAFAC2 constraint).
//
// Direct fitting by alternating least squares (Kiers, ten Berge and Bro, 1999; Bro's parafac2.m): each
// iteration sets every P_k to the polar factor of X_k^T A diag(c_k) H^T (the best P_k for the current
// A, H, C), then makes one CP-ALS sweep over the projected slabs Y_k = X_k P_k (an I x F x K array),
// updating A, then H, then C. The loss ||X - model||^2 never increases.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "linv/matrix.hpp"
#include "linv/report.hpp"

namespace linv::fmri {

enum class Parafac2Start {
  Svd,     // A: the F leading left singular vectors of [X_1 ... X_K]; C: ones plus N(0, 0.1^2) noise; H = I
           // (Bro's parafac2.m with Options(3) = 1; TensorLy's init='svd' uses ones without noise)
  Random,  // A and C uniform in [0, 1), H = I (Bro's Options(3) = 2)
};

struct Parafac2Options {
  index rank = 0;               // F, between 1 and min(I, J_k)
  int max_iterations = 1000;
  // Stop once the loss changes by at most tolerance * (the previous loss), or by less than its own
  // rounding error (F eps ||X||^2: noise-free data); 0: always run max_iterations.
  double tolerance = 1e-7;
  Parafac2Start start = Parafac2Start::Svd;
  std::uint64_t seed = 0;       // the random start, or the noise on C of the SVD start
  // Called after each iteration with the iteration (from 1) and its loss, e.g. to show progress.
  std::function<void(int, double)> progress = {};
};

// Starting factors given by the caller, used instead of options.start: A (I x F), H (F x F), C (K x F).
template <Real T>
struct Parafac2Init {
  ConstMatrixView<T> A, H, C;
};

// The fitted model, in the convention of Bro's parafac2.m: A and C have unit-norm columns (their scale
// is carried by H's columns), each column of A and of C has at least as many positive as negative
// entries (signs moved into H), and components are ordered by size ||h_f|| = ||B_k(:, f)||, largest
// first (parafac2.m orders them smallest first). P_k are the polar factors for the final A, H, C, i.e.
// the P-step that would begin the next iteration, so `loss` is at most the last entry of
// `loss_history` (up to rounding in the working precision).
template <Real T>
struct Parafac2Result {
  Matrix<T> A;               // I x F
  Matrix<T> H;               // F x F
  Matrix<T> C;               // K x F
  std::vector<Matrix<T>> P;  // K matrices J_k x F with orthonormal columns
  std::vector<double> loss_history;  // ||X - model||^2 after each iteration (computed in float64)
  double loss = 0;                   // ||X - model||^2 of the returned model
  double norm_squared = 0;           // ||X||^2 = sum_k ||X_k||_F^2
  double variance_explained = 0;     // 1 - loss / ||X||^2
  // iterations run, stop (converged or iteration limit), device, seconds
  Report report;
};

// Fits a rank-F PARAFAC2 model to the slabs (all of I rows, host memory). Throws ShapeMismatch when the
// slabs' row counts differ or `init` does not fit, InvalidArgument for F outside [1, min(I, J_k)], a
// negative tolerance or iteration count, or no slabs, and NonFiniteInput for NaN or Inf in the data or
// the starting factors.
template <Real T>
Parafac2Result<T> parafac2(const std::vector<ConstMatrixView<T>>& slabs, const Parafac2Options& options,
                           const Parafac2Init<T>* init = nullptr);

}  // namespace linv::fmri
