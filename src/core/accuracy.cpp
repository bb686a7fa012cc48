// Scaled residuals. They are computed in float64 whatever the working precision, so that the
// measurement itself adds no error of the size being measured.
#include "linv/accuracy.hpp"

#include <algorithm>
#include <cmath>

#include "cuda/dense.hpp"
#include "kernels/dense.hpp"

namespace linv {
namespace {

namespace k = kernels::cpu;

template <Real T>
Matrix<double> to_double(ConstMatrixView<T> A) {
  Matrix<double> m = Matrix<double>::uninitialized(A.rows(), A.cols());
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < A.rows(); ++i) m(i, j) = static_cast<double>(A(i, j));
  return m;
}

double ratio(double num, double den) {
  if (num == 0) return 0;
  return den > 0 ? num / den : std::numeric_limits<double>::infinity();
}

}  // namespace

template <Real T>
double norm1(ConstMatrixView<T> A) {
  if (A.device().is_cuda()) return cuda::norm1<T>(A);
  double best = 0;
  for (index j = 0; j < A.cols(); ++j) {
    double s = 0;
    for (index i = 0; i < A.rows(); ++i) s += std::abs(static_cast<double>(A(i, j)));
    best = std::max(best, s);
  }
  return best;
}

template <Real T>
double scaled_residual_inverse(ConstMatrixView<T> A, ConstMatrixView<T> X, double eps) {
  if (A.device().is_cuda()) return cuda::scaled_residual_inverse<T>(A, X, eps);
  const index n = A.rows();
  if (n == 0) return 0;
  Matrix<double> a = to_double(A), x = to_double(X);
  Matrix<double> r = Matrix<double>::identity(n);
  k::gemm<double>(Op::None, Op::None, 1.0, a.view(), x.view(), -1.0, r.view());
  return ratio(norm1<double>(r.view()), static_cast<double>(n) * eps * norm1(A) * norm1(X));
}

template <Real T>
double scaled_left_residual_inverse(ConstMatrixView<T> A, ConstMatrixView<T> X, double eps) {
  require_host(A.device(), "this accuracy measure");
  const index n = A.rows();
  if (n == 0) return 0;
  Matrix<double> a = to_double(A), x = to_double(X);
  Matrix<double> r = Matrix<double>::identity(n);
  k::gemm<double>(Op::None, Op::None, 1.0, x.view(), a.view(), -1.0, r.view());
  return ratio(norm1<double>(r.view()), static_cast<double>(n) * eps * norm1(A) * norm1(X));
}

template <Real T>
double scaled_residual_solve(ConstMatrixView<T> A, ConstMatrixView<T> X, ConstMatrixView<T> B, double eps) {
  if (A.device().is_cuda()) return cuda::scaled_residual_solve<T>(A, X, B, eps);
  const index n = A.rows();
  if (n == 0 || B.cols() == 0) return 0;
  Matrix<double> a = to_double(A), x = to_double(X), r = to_double(B);
  k::gemm<double>(Op::None, Op::None, 1.0, a.view(), x.view(), -1.0, r.view());
  return ratio(norm1<double>(r.view()), static_cast<double>(n) * eps * (norm1(A) * norm1(X) + norm1(B)));
}

template <Real T>
double scaled_residual_lstsq(ConstMatrixView<T> A, ConstMatrixView<T> X, ConstMatrixView<T> B, double eps) {
  require_host(A.device(), "this accuracy measure");
  const index m = A.rows(), n = A.cols();
  if (m == 0 || n == 0 || B.cols() == 0) return 0;
  Matrix<double> a = to_double(A), x = to_double(X), r = to_double(B);
  k::gemm<double>(Op::None, Op::None, -1.0, a.view(), x.view(), 1.0, r.view());  // r = B - A X
  Matrix<double> g(n, B.cols());
  k::gemm<double>(Op::Transpose, Op::None, 1.0, a.view(), r.view(), 0.0, g.view());  // A^T r
  const double an = norm1(A);
  return ratio(norm1<double>(g.view()),
               static_cast<double>(std::max(m, n)) * eps * an * (an * norm1(X) + norm1(B)));
}

template <Real T>
double scaled_residual_pinv(ConstMatrixView<T> A, ConstMatrixView<T> P, double eps) {
  require_host(A.device(), "this accuracy measure");
  const index m = A.rows(), n = A.cols();
  if (m == 0 || n == 0) return 0;
  Matrix<double> a = to_double(A), p = to_double(P);
  Matrix<double> pa(n, n);
  k::gemm<double>(Op::None, Op::None, 1.0, p.view(), a.view(), 0.0, pa.view());
  Matrix<double> r = to_double(A);
  k::gemm<double>(Op::None, Op::None, 1.0, a.view(), pa.view(), -1.0, r.view());  // A P A - A
  const double an = norm1(A);
  return ratio(norm1<double>(r.view()), static_cast<double>(std::max(m, n)) * eps * an * an * norm1(P));
}

template <Real T>
double scaled_residual_cholesky(ConstMatrixView<T> A, ConstMatrixView<T> L, double eps) {
  require_host(A.device(), "this accuracy measure");
  const index n = A.rows();
  if (n == 0) return 0;
  Matrix<double> l = to_double(L), r = to_double(A);
  k::gemm<double>(Op::None, Op::Transpose, -1.0, l.view(), l.view(), 1.0, r.view());  // A - L L^T
  return ratio(norm1<double>(r.view()), static_cast<double>(n) * eps * norm1(A));
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
#undef LINV_INSTANTIATE

}  // namespace linv
