// Weighted least squares through the normal equations A D^2 A^T x = A D^2 b (Jung and O'Leary,
// "Exploiting structure of symmetric or triangular matrices on a GPU"): min || D (b - A^T x) || for an
// m x n matrix A (m <= n, full row rank), diagonal weights D, b of length n; x has m entries.
//
// C = A D^2 A^T is formed as a symmetric rank-n update of one triangle (half the flops of a general
// product), stored full or in LAPACK's rectangular full packed format (half the memory), and factored
// by Cholesky. A, d and b are scaled by powers of two first where their entries lie far from 1 (exact; x
// does not depend on d's scale), so no entry of C over- or underflows; C's condition is estimated (Higham
// and Tisseur's estimator: products with A for ||C||, the factor's solves for ||C^-1||) and judged; and
// with compute_residual a result whose least-squares residual exceeds lstsq's bound is solved again by QR
// on the weighted problem, or refused with NumericalError naming the residual reached. Mixed precision follows the paper's Algorithm 1: C formed and factored in float32, the
// residual r = A D^2 b - A D^2 A^T x computed in float64 (from A, never from C), corrections solved with
// the float32 factor, until ||r||_2 / ||x||_2 <= tolerance or the iteration limit, in which case C is
// formed and factored in float64 and the report says so.
#pragma once

#include <memory>

#include "linv/dense.hpp"
#include "linv/matrix.hpp"

namespace linv {

enum class Weights {
  Squared,  // d holds the diagonal of D^2 (the default)
  Plain,    // d holds the diagonal of D
};
enum class Storage {
  Full,    // C in an m x m array (one triangle used)
  Packed,  // C in rectangular full packed format: m (m + 1) / 2 entries (on the GPU, plus a transient
           // (m/2) x (m/2) workspace while C is formed and factored)
};

// How the system is given.
enum class WlsForm {
  Normal,  // A m x n (m <= n), d, b: x minimising ||D (b - A^T x)|| (interior-point methods, SLAM)
  Design,  // X n x p (n >= p, one row per observation), w, y, as statsmodels' WLS(y, X, weights=w) and SciPy
           // take it: beta minimising sum_i w_i (y_i - x_i^T beta)^2, the normal form with A = X^T and
           // D^2 = diag(w) (so Weights::Squared only). Errors name X, w and y.
};
std::string_view to_string(WlsForm f);  // "normal", "statsmodels"
WlsForm parse_wls_form(std::string_view name);

struct WlsOptions {
  WlsForm form = WlsForm::Normal;  // wls() only: a WeightedLeastSquares system is always in the normal form
  Precision precision = Precision::Native;  // Mixed: float64 data, the paper's Algorithm 1
  Storage storage = Storage::Full;
  Weights weights = Weights::Squared;
  // Mixed: stop at ||r||_2 / ||x||_2 <= tolerance; 0 means float64's own level, the rounding error of
  // computing r: eps64 (m ||A D||_F^2 ||x|| + n ||A D||_F ||D b||) / ||x|| (||A D||_F^2 bounds ||C||_2).
  double tolerance = 0;
  int max_iterations = 100;
  bool compute_residual = false;  // report.scaled_residual: the least-squares test of lstsq
  bool check_finite = true;
  // C = A D^2 A^T singular to working precision (its rcond below sqrt(n) eps: C's entries are sums of n
  // terms, rounded to about sqrt(n) eps relative) gives an x without one determined digit, so it is refused
  // with SingularMatrix; with this set, x comes back with a note (interior-point methods near their end).
  bool allow_ill_conditioned = false;
};

// A weighted least-squares system for a fixed A, re-formed and re-factored for each new set of weights
// without reallocating (the pattern of interior-point methods). A, d and b live on one device, CPU or GPU.
template <Real T>
class WeightedLeastSquares {
 public:
  WeightedLeastSquares(ConstMatrixView<T> A, const WlsOptions& options = {});
  // Forms C = A D^2 A^T for weights d (n entries) and factors it; throws NotPositiveDefinite naming the
  // failing minor, or SingularMatrix with C's rcond, when C is singular (A rank deficient, or weights zero
  // or negligible where they matter).
  void factor(ConstMatrixView<T> d);
  // x for right-hand side b (n x k): the solution of A D^2 A^T x = A D^2 b, with the report.
  Solution<T> solve(ConstMatrixView<T> b);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// One-shot: factor for d, solve for b.
template <Real T>
Solution<T> wls(ConstMatrixView<T> A, ConstMatrixView<T> d, ConstMatrixView<T> b, const WlsOptions& options = {});

}  // namespace linv
