// Scaled residuals, on the device the operands live on. They are computed in float64 whatever the working
// precision, so that the measurement itself adds no error of the size being measured.
#include "linv/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/dense_steps.hpp"
#include "kernels/backend.hpp"
#include "linv/dense.hpp"

namespace linv {
namespace {

using dense_steps::widened;

// C := alpha op(A) op(B) + beta C in float64 (complex128) where the operands live.
template <Scalar W>
void product(Op op_a, Op op_b, double alpha, const Matrix<W>& A, const Matrix<W>& B, double beta, Matrix<W>& C) {
  kernels::dense<W>(A.device()).gemm(op_a, op_b, W(alpha), A.view(), B.view(), W(beta), C.view());
}

double ratio(double num, double den) {
  // an overflowed or NaN result has no accuracy to claim (not a zero residual from inf / inf or a skipped NaN)
  if (!std::isfinite(num) || !std::isfinite(den)) return std::numeric_limits<double>::infinity();
  if (num == 0) return 0;
  return den > 0 ? num / den : std::numeric_limits<double>::infinity();
}

}  // namespace

template <Scalar T>
double norm1(ConstMatrixView<T> A) {
  return kernels::dense<T>(A.device()).norm1(A);
}

template <Scalar T>
double scaled_residual_inverse(ConstMatrixView<T> A, ConstMatrixView<T> X, double eps) {
  const index n = A.rows();
  if (n == 0) return 0;
  const Matrix<wide_t<T>> a = widened(A), x = widened(X);
  Matrix<wide_t<T>> r = identity<wide_t<T>>(n, A.device());
  product(Op::None, Op::None, 1.0, a, x, -1.0, r);  // A X - I
  return ratio(norm1<wide_t<T>>(r), static_cast<double>(n) * eps * norm1<wide_t<T>>(a) * norm1<wide_t<T>>(x));
}

template <Scalar T>
double scaled_left_residual_inverse(ConstMatrixView<T> A, ConstMatrixView<T> X, double eps) {
  const index n = A.rows();
  if (n == 0) return 0;
  const Matrix<wide_t<T>> a = widened(A), x = widened(X);
  Matrix<wide_t<T>> r = identity<wide_t<T>>(n, A.device());
  product(Op::None, Op::None, 1.0, x, a, -1.0, r);  // X A - I
  return ratio(norm1<wide_t<T>>(r), static_cast<double>(n) * eps * norm1<wide_t<T>>(a) * norm1<wide_t<T>>(x));
}

template <Scalar T>
double scaled_residual_solve(ConstMatrixView<T> A, ConstMatrixView<T> X, ConstMatrixView<T> B, double eps) {
  const index n = A.rows();
  if (n == 0 || B.cols() == 0) return 0;
  const Matrix<wide_t<T>> a = widened(A), x = widened(X);
  Matrix<wide_t<T>> r = widened(B);
  const double bnorm = norm1<wide_t<T>>(r);
  product(Op::None, Op::None, 1.0, a, x, -1.0, r);  // A X - B
  return ratio(norm1<wide_t<T>>(r), static_cast<double>(n) * eps * (norm1<wide_t<T>>(a) * norm1<wide_t<T>>(x) + bnorm));
}

template <Scalar T>
double scaled_residual_lstsq(ConstMatrixView<T> A, ConstMatrixView<T> X, ConstMatrixView<T> B, double eps) {
  const index m = A.rows(), n = A.cols();
  if (m == 0 || n == 0 || B.cols() == 0) return 0;
  const Matrix<wide_t<T>> a = widened(A), x = widened(X);
  Matrix<wide_t<T>> r = widened(B);
  const double bnorm = norm1<wide_t<T>>(r);
  product(Op::None, Op::None, -1.0, a, x, 1.0, r);  // r = B - A X
  Matrix<wide_t<T>> g(n, B.cols(), A.device());
  product(Op::Transpose, Op::None, 1.0, a, r, 0.0, g);  // A^H r
  const double an = norm1<wide_t<T>>(a);
  return ratio(norm1<wide_t<T>>(g), static_cast<double>(std::max(m, n)) * eps * an * (an * norm1<wide_t<T>>(x) + bnorm));
}

template <Scalar T>
double scaled_residual_pinv(ConstMatrixView<T> A, ConstMatrixView<T> P, double eps) {
  const index m = A.rows(), n = A.cols();
  if (m == 0 || n == 0) return 0;
  const Matrix<wide_t<T>> a = widened(A), p = widened(P);
  Matrix<wide_t<T>> pa(n, n, A.device()), r = widened(A);
  product(Op::None, Op::None, 1.0, p, a, 0.0, pa);
  product(Op::None, Op::None, 1.0, a, pa, -1.0, r);  // A P A - A
  const double an = norm1<wide_t<T>>(a);
  return ratio(norm1<wide_t<T>>(r), static_cast<double>(std::max(m, n)) * eps * an * an * norm1<wide_t<T>>(p));
}

template <Scalar T>
double scaled_residual_cholesky(ConstMatrixView<T> A, ConstMatrixView<T> L, double eps) {
  const index n = A.rows();
  if (n == 0) return 0;
  const Matrix<wide_t<T>> l = widened(L);
  Matrix<wide_t<T>> r = widened(A);
  const double anorm = norm1<wide_t<T>>(r);
  product(Op::None, Op::Transpose, -1.0, l, l, 1.0, r);  // A - L L^H
  return ratio(norm1<wide_t<T>>(r), static_cast<double>(n) * eps * anorm);
}

#define LINV_INSTANTIATE(T)                                                                             \
  template double norm1<T>(ConstMatrixView<T>);                                                         \
  template double scaled_residual_inverse<T>(ConstMatrixView<T>, ConstMatrixView<T>, double);           \
  template double scaled_left_residual_inverse<T>(ConstMatrixView<T>, ConstMatrixView<T>, double);      \
  template double scaled_residual_solve<T>(ConstMatrixView<T>, ConstMatrixView<T>, ConstMatrixView<T>,  \
                                           double);                                                     \
  template double scaled_residual_lstsq<T>(ConstMatrixView<T>, ConstMatrixView<T>, ConstMatrixView<T>,  \
                                           double);                                                     \
  template double scaled_residual_pinv<T>(ConstMatrixView<T>, ConstMatrixView<T>, double);              \
  template double scaled_residual_cholesky<T>(ConstMatrixView<T>, ConstMatrixView<T>, double);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
LINV_INSTANTIATE(std::complex<float>)
LINV_INSTANTIATE(std::complex<double>)
#undef LINV_INSTANTIATE

}  // namespace linv
