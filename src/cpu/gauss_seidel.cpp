// Gauss-Seidel iteration, all right-hand sides at once and in matrix-level operations: with
// A = L + D + U (strictly lower, diagonal, strictly upper) a sweep is
//     (D + L) X_new = B - U X_old        (one triangular product, one triangular solve: 2 n^2 k flops).
// The residual comes for free: B - A X_new = U X_old - U X_new, and U X_new is the next sweep's product.
#include <cmath>
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "common/lapack.hpp"
#include "cpu/algorithms.hpp"
#include "linv/errors.hpp"

namespace linv::cpu {
namespace {

namespace k = lapack;

template <Real T>
double norm_inf(ConstMatrixView<T> A) {
  double best = 0;
  std::vector<double> rows(static_cast<std::size_t>(A.rows()), 0.0);
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < A.rows(); ++i) rows[i] += std::abs(static_cast<double>(A(i, j)));
  for (double r : rows) best = std::max(best, r);
  return best;
}

}  // namespace

template <Real T>
kernels::IterationOutcome gauss_seidel(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X, double tolerance,
                              int max_iterations) {
  const index n = A.rows(), nrhs = B.cols();
  kernels::IterationOutcome out;
  if (n == 0 || nrhs == 0) return out;
  for (index i = 0; i < n; ++i)
    if (A(i, i) == T(0))
      throw NumericalError(fmt::format("gauss-seidel needs a nonzero diagonal, but a({},{}) = 0; use --method lu",
                                       i + 1, i + 1));

  // U: the strict upper triangle (zero diagonal) for the triangular product; D + L is read from A.
  Matrix<T> upper(n, n);
  for (index j = 1; j < n; ++j)
    for (index i = 0; i < j; ++i) upper(i, j) = A(i, j);

  const double a_norm = norm_inf<T>(A), b_norm = norm_inf<T>(B);
  Matrix<T> product = Matrix<T>::uninitialized(n, nrhs);  // U X_old
  Matrix<T> next = Matrix<T>::uninitialized(n, nrhs);     // U X_new
  auto multiply_upper = [&](MatrixView<T> out_view) {
    for (index j = 0; j < nrhs; ++j)
      for (index i = 0; i < n; ++i) out_view(i, j) = X(i, j);
    k::trmm<T>(Side::Left, Uplo::Upper, Op::None, Diag::NonUnit, T(1), upper.view(), out_view);
  };
  multiply_upper(product.view());

  double best = std::numeric_limits<double>::infinity();
  for (int it = 1; it <= max_iterations; ++it) {
    // X := (D + L)^-1 (B - U X)
    for (index j = 0; j < nrhs; ++j)
      for (index i = 0; i < n; ++i) X(i, j) = B(i, j) - product(i, j);
    k::trsm<T>(Side::Left, Uplo::Lower, Op::None, Diag::NonUnit, T(1), A, X);
    multiply_upper(next.view());
    // residual B - A X_new = U X_old - U X_new
    double r_norm = 0;
    {
      std::vector<double> rows(static_cast<std::size_t>(n), 0.0);
      for (index j = 0; j < nrhs; ++j)
        for (index i = 0; i < n; ++i) rows[i] += std::abs(static_cast<double>(product(i, j)) - next(i, j));
      for (double r : rows) r_norm = std::max(r_norm, r);
    }
    const double x_norm = norm_inf<T>(ConstMatrixView<T>(X));
    const double eta = r_norm / (a_norm * x_norm + b_norm);
    out.iterations = it;
    out.backward_error = eta;
    if (!std::isfinite(eta) || !std::isfinite(x_norm))
      throw NoConvergence("gauss-seidel", it, eta, tolerance,
                          "the iteration overflowed (the matrix is neither diagonally dominant nor SPD)");
    // Growing iterates shrink the normwise backward error without approaching a solution. Any solution
    // has ||A|| ||X|| <= cond(A) ||B||, so past ||B|| / eps the matrix is singular to working precision
    // or the iteration diverges: either way there is no answer to return.
    if (a_norm * x_norm > b_norm / std::numeric_limits<T>::epsilon())
      throw NoConvergence("gauss-seidel", it, eta, tolerance,
                          "the iterates grow without bound (the matrix is singular, or neither diagonally dominant nor SPD)");
    if (eta <= tolerance) return out;
    best = std::min(best, eta);
    if (it > 20 && eta > 1e6 * best)
      throw NoConvergence("gauss-seidel", it, eta, tolerance,
                          "the iteration diverges (the matrix is neither diagonally dominant nor SPD)");
    std::swap(product, next);
  }
  throw NoConvergence("gauss-seidel", max_iterations, out.backward_error, tolerance, "iteration limit reached");
}

template kernels::IterationOutcome gauss_seidel<float>(ConstMatrixView<float>, ConstMatrixView<float>, MatrixView<float>, double,
                                              int);
template kernels::IterationOutcome gauss_seidel<double>(ConstMatrixView<double>, ConstMatrixView<double>, MatrixView<double>,
                                               double, int);

}  // namespace linv::cpu
