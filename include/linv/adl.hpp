// Atom-assisted dictionary learning (ADL) for fMRI by block majorisation-minimisation. The data X is
// T x N (time points x voxels); the dictionary D is T x K (time courses), the codes S are K x N (spatial
// maps), and
//
//     minimise  f(D, S) = ||X - D S||_F^2 + lambda ||S||_1
//     subject to ||d_i - delta_i||^2 <= c    for the first M atoms (assisted: delta_i is a time course the
//                                             user expects, e.g. a design convolved with the HRF)
//                ||d_i||^2 <= c_d            for the other K - M atoms (free).
//
// Each outer iteration first updates S with D fixed, then D with S fixed, each by a few steps of
// majorisation-minimisation (a proximal gradient step with step 1 / (2 c)):
//   coefficients, Ts times:  S := soft(S + (D^T X - D^T D S) / c_S, lambda / (2 c_S)),  c_S = ||D^T D||_2
//   dictionary,   Td times:  D := proj(D + (X S^T - D S S^T) / c_D),                    c_D = ||S S^T||_2
// where soft is the entrywise soft threshold and proj projects each column onto its constraint set: the
// ball of radius sqrt(c) around delta_i for an assisted atom, the ball of radius sqrt(c_d) around 0 for a
// free one. Only the ball around delta_i constrains an assisted atom, whatever delta_i's own norm: an
// assisted atom stays near the user's time course, at the user's scale, and the codes absorb the
// difference in scale from the free atoms. D^T X and X S^T are the only passes over X per outer
// iteration.
//
// f never increases: every step minimises a majoriser of f in one block. The step constants are the
// largest eigenvalues of D^T D and S S^T (LAPACK syevr), exactly the Lipschitz constants of the blocks'
// gradients divided by 2; the descent argument needs only c > ||.||_2 / 2, so the eigenvalue's rounding
// cannot break it.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "linv/matrix.hpp"
#include "linv/report.hpp"

namespace linv::fmri {

struct AdlOptions {
  index atoms = 10;  // K
  // lambda; NaN: the default, 0.5 * ||X||_F / sqrt(T N) (half the root mean square of X's entries,
  // so that scaling X scales lambda and S with it and leaves D unchanged)
  double lambda = std::numeric_limits<double>::quiet_NaN();
  int max_iterations = 200;  // outer iterations
  int coefficient_steps = 20;  // Ts
  int dictionary_steps = 20;   // Td
  double c = std::numeric_limits<double>::quiet_NaN();  // squared radius around delta_i (needed with a task)
  double c_d = 1;            // squared radius of the free atoms
  // Stop early once an outer iteration lowers f by at most this fraction of f (0: run all iterations).
  double tolerance = 0;
  std::uint64_t seed = 0;    // the random normal initial dictionary
  // Called after each outer iteration with the iteration (from 1) and f, e.g. to show progress.
  std::function<void(int, double)> progress = {};
};

template <Real T>
struct AdlResult {
  Matrix<T> dictionary;  // T x K: the M assisted atoms first
  Matrix<T> codes;       // K x N
  // f at the start (D projected onto the constraints, S = 0: f = ||X||_F^2), then after each outer
  // iteration (iterations + 1 entries).
  std::vector<double> objective;
  // f after each inner step: per outer iteration, Ts values after the coefficient steps, then Td after
  // the dictionary steps.
  std::vector<double> inner_objective;
  double lambda = 0;     // the lambda used
  Report report;         // outer iterations run, stop (converged: the tolerance met), device, seconds
};

// task: T x M time courses delta_1..delta_M for the first M atoms (M <= K; empty: none). initial: a T x K
// dictionary to start from instead of random normal entries (seeded). Either start is first projected
// onto the constraint set, and S starts at zero.
//
// f is computed from the products the iteration forms (||X||^2 - 2 <D^T X, S> + <S, D^T D S> + lambda
// ||S||_1 and the like, accumulated in double), so its rounding is about eps ||X||_F^2 (with eps that of
// T), which is large relative to f when D S fits X closely.
//
// Throws InvalidArgument for K < 1, M > K, negative or infinite lambda, c or c_d not positive and finite,
// fewer than one inner step; ShapeMismatch when the task or the initial dictionary does not fit X and K;
// NonFiniteInput for NaN or Inf in X, the task or the initial dictionary.
template <Real T>
AdlResult<T> adl(ConstMatrixView<T> X, const AdlOptions& options, ConstMatrixView<T> task = {},
                 const Matrix<T>* initial_dictionary = nullptr);

}  // namespace linv::fmri
