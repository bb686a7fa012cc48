// The CPU backend's own algorithms on LAPACK (src/common/lapack.hpp): the source documents' blocked
// Gauss-Jordan, GETS triangular inverse and Gauss-Seidel, and mixed-precision refinement. src/cpu/dense.cpp
// hands them out as the dense and mixed families' methods.
#pragma once

#include "kernels/dense.hpp"
#include "kernels/vectors.hpp"
#include "linv/dense.hpp"
#include "linv/matrix.hpp"

namespace linv::cpu {

// In-place LU with tournament pivoting (Pivoting::Tournament, shaped by kernels::Tournament): the
// factors and LAPACK-style pivots of P A = L U, the first zero pivot, and the growth max|U| / max|A|.
template <Real T>
kernels::LuOutcome tournament_lu(MatrixView<T> A, std::vector<int>& pivots);

// In-place LU without pivoting (Pivoting::Randomized, on the butterflied matrix): recursive, the bulk in
// trsm and gemm. The first exactly zero pivot and the growth max|U| / max|A|.
template <Real T>
kernels::LuOutcome unpivoted_lu(MatrixView<T> A);

// X := op(W) X or X op(W) for the butterflies W of r (kernels::Dense::butterflies says which).
template <Real T>
void apply_butterflies(ConstMatrixView<T> r, Side side, Op op, MatrixView<T> X);
// max |a(i, j)| over A, or over its upper triangle (diagonal included).
template <Scalar T>
double max_abs_entry(ConstMatrixView<T> A, bool upper_only);

// In-place inverse by blocked Gauss-Jordan elimination with partial (row) pivoting: 2n^3 flops, the
// bulk in matrix products. Throws SingularMatrix naming the first exactly zero pivot. Returns the
// 1-based index of the smallest pivot (for the message when the result is singular to working precision).
template <Real T>
index gauss_jordan_inverse(MatrixView<T> A);

// In-place inverse of the lower triangle of L by Gaussian elimination on the triangle ("GETS"):
// blocked Gauss-Jordan without pivoting restricted to the triangle, n^3/3 flops. The strict upper
// triangle is neither read nor written. Throws SingularMatrix naming a zero diagonal entry.
template <Real T>
void gets_lower_inverse(MatrixView<T> L, Diag diag);

// Gauss-Seidel for A X = B, every right-hand side at once: each sweep solves (D + L) X_new = B - U X
// with one triangular solve and one triangular product. X holds the starting guess and the result.
// Stops when ||B - A X||_inf / (||A||_inf ||X||_inf + ||B||_inf) <= tolerance; throws NoConvergence when
// the iteration diverges (iterates growing past ||B|| / (eps ||A||)) or reaches max_iterations, and
// NumericalError on a zero diagonal entry.
template <Real T>
kernels::IterationOutcome gauss_seidel(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X, double tolerance,
                              int max_iterations);

// X := A^-1 B to float64 accuracy from a float32 LU (or Cholesky) factorization that can judge A
// (kernels::float32_cannot_judge): corrections against the float64 residual while each at least halves it.
// Converged (no failure) means every column passes LAPACK's test ||b - A x||_inf <= ||x||_inf ||A||_inf eps
// sqrt(n); otherwise the caller factors in float64.
kernels::MixedOutcome refine_mixed(ConstMatrixView<double> A, ConstMatrixView<double> B, MatrixView<double> X,
                               bool cholesky);

// X := the least-squares solution of A X ~ B (m >= n) from the normal equations: A^T A formed in float64,
// factored by a float32 Cholesky, corrections d = (A^T A)^-1 A^T (B - A X) with the residual in float64.
// Refused (the failure says why) when A^T A is too ill conditioned for float32, where QR is the accurate
// method.
kernels::MixedOutcome refine_least_squares(ConstMatrixView<double> A, ConstMatrixView<double> B, MatrixView<double> X);

}  // namespace linv::cpu
