// How accurate a result is, measured the way LAPACK's test suite does: residuals scaled by the
// dimension, the unit roundoff of the working precision and the norms involved. A value of order 1-10
// means "as accurate as backward-stable arithmetic in that precision allows". All norms are 1-norms.
// Each runs on the device its operands live on.
#pragma once

#include "linv/matrix.hpp"

namespace linv {

template <Scalar T>
double norm1(ConstMatrixView<T> A);  // max column sum of |a_ij|

// ||A X - I|| / (n eps ||A|| ||X||)
template <Scalar T>
double scaled_residual_inverse(ConstMatrixView<T> A, ConstMatrixView<T> X, double eps);
// ||X A - I|| / (n eps ||A|| ||X||): the residual some inversion methods bound instead (Du Croz & Higham)
template <Scalar T>
double scaled_left_residual_inverse(ConstMatrixView<T> A, ConstMatrixView<T> X, double eps);
// ||A X - B|| / (n eps (||A|| ||X|| + ||B||))
template <Scalar T>
double scaled_residual_solve(ConstMatrixView<T> A, ConstMatrixView<T> X, ConstMatrixView<T> B, double eps);
// Least squares: ||A^T (B - A X)|| / (max(m,n) eps ||A|| (||A|| ||X|| + ||B||)) — zero at the exact
// solution of any consistent or inconsistent problem.
template <Scalar T>
double scaled_residual_lstsq(ConstMatrixView<T> A, ConstMatrixView<T> X, ConstMatrixView<T> B, double eps);
// Pseudoinverse, first Penrose condition: ||A P A - A|| / (max(m,n) eps ||A|| ||P|| ||A||)
template <Scalar T>
double scaled_residual_pinv(ConstMatrixView<T> A, ConstMatrixView<T> P, double eps);
// Cholesky: ||A - L L^T|| / (n eps ||A||), L lower triangular
template <Scalar T>
double scaled_residual_cholesky(ConstMatrixView<T> A, ConstMatrixView<T> L, double eps);

}  // namespace linv
