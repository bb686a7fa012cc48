// What the dense drivers build on, for linv's callers too: FactorPrecision's names, Determinant, the input
// checks (require_finite, require_symmetric, detect_structure) and the products (gemm, syrk, matmul,
// identity). The drivers have a file each: lu.cpp, cholesky.cpp, triangular.cpp, inv.cpp, solve.cpp, lstsq.cpp.
#include "linv/dense.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "common/names.hpp"
#include "core/dense_steps.hpp"
#include "kernels/backend.hpp"
#include "linv/errors.hpp"

namespace linv {

using namespace dense_steps;

std::string_view to_string(FactorPrecision p) {
  switch (p) {
    case FactorPrecision::Auto: return "auto";
    case FactorPrecision::Float32: return "float32";
    case FactorPrecision::TF32: return "tf32";
    case FactorPrecision::BFloat16: return "bf16";
    case FactorPrecision::Float16: return "fp16";
  }
  return "?";
}

FactorPrecision parse_factor_precision(std::string_view name) {
  return parse_name(name, "factor precision",
                    {FactorPrecision::Auto, FactorPrecision::Float32, FactorPrecision::TF32, FactorPrecision::BFloat16,
                     FactorPrecision::Float16});
}

double Determinant::value() const { return sign == 0 ? 0.0 : sign * std::exp(log_abs); }

template <Scalar T>
void require_finite(ConstMatrixView<T> A, const char* name) {
  if (const auto at = dense_of(A).magnitude(A).first_non_finite) throw_non_finite<T>(A, *at, name);
}

template <Scalar T>
void require_symmetric(ConstMatrixView<T> A, const char* method) {
  const auto pair = dense_of(A).first_asymmetric(A);
  if (!pair) return;
  const auto [i, j] = *pair;
  const T a_ij = Matrix<T>::copy_of(A.block(i, j, 1, 1)).to(Device::cpu())(0, 0);
  const T a_ji = Matrix<T>::copy_of(A.block(j, i, 1, 1)).to(Device::cpu())(0, 0);
  // every digit the type holds, and the difference: the two may agree in the first six
  const int digits = std::numeric_limits<real_t<T>>::max_digits10;
  const auto shown = [digits](T a) {
    if constexpr (Complex<T>)
      return fmt::format("{:.{}g}{:+.{}g}i", a.real(), digits, a.imag(), digits);
    else
      return fmt::format("{:.{}g}", a, digits);
  };
  const double apart = std::abs(static_cast<wide_t<T>>(a_ij) - conjugate(static_cast<wide_t<T>>(a_ji)));
  if constexpr (Complex<T>)
    throw NumericalError(fmt::format("{} needs a Hermitian positive definite matrix, but a({},{}) = {} differs from the "
                                     "conjugate of a({},{}) = {} by {:.3g}",
                                     method, i + 1, j + 1, shown(a_ij), j + 1, i + 1, shown(a_ji), apart));
  else
    throw NumericalError(fmt::format("{} needs a symmetric positive definite matrix, but a({},{}) = {} differs from "
                                     "a({},{}) = {} by {:.3g}",
                                     method, i + 1, j + 1, shown(a_ij), j + 1, i + 1, shown(a_ji), apart));
}

template <Scalar T>
Structure detect_structure(ConstMatrixView<T> A) {
  return dense_of(A).detect_structure(A);
}

template <Scalar T>
void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta, MatrixView<T> C) {
  require_same_device(A, B, "gemm");
  require_same_device<T>(A, C, "gemm");
  const index am = op_a == Op::None ? A.rows() : A.cols(), ak = op_a == Op::None ? A.cols() : A.rows();
  const index bk = op_b == Op::None ? B.rows() : B.cols(), bn = op_b == Op::None ? B.cols() : B.rows();
  if (ak != bk) throw ShapeMismatch("gemm: op(A) and op(B)", am, ak, bk, bn);
  if (C.rows() != am || C.cols() != bn) throw ShapeMismatch("gemm: op(A) op(B) and C", am, bn, C.rows(), C.cols());
  dense_of(A).gemm(op_a, op_b, alpha, A, B, beta, C);
}

template <Real T>
void syrk(Uplo uplo, Op op, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C) {
  require_same_device<T>(A, C, "syrk");
  const index n = op == Op::None ? A.rows() : A.cols();
  if (C.rows() != n || C.cols() != n) throw ShapeMismatch("syrk: op(A) op(A)^T and C", n, n, C.rows(), C.cols());
  dense_of(A).syrk(uplo, op, alpha, A, beta, C);
}

template <Scalar T>
void symmetrize_from_lower(MatrixView<T> A) {
  require_square<T>(A, "symmetrize_from_lower");
  dense_of<T>(A).mirror_lower(A);
}

template <Scalar T>
Matrix<T> matmul(ConstMatrixView<T> A, ConstMatrixView<T> B) {
  Matrix<T> c(A.rows(), B.cols(), A.device());
  gemm<T>(Op::None, Op::None, T(1), A, B, T(0), c.view());
  return c;
}

template <Scalar T>
Matrix<T> identity(index n, Device device) {
  Matrix<T> m(n, n, device);
  if (n > 0) dense_of<T>(m).set_diagonal(m.view(), T(1));
  return m;
}

#define LINV_INSTANTIATE(T)                                                                                  \
  template Matrix<T> identity<T>(index, Device);                                                             \
  template void require_finite<T>(ConstMatrixView<T>, const char*);                                          \
  template void require_symmetric<T>(ConstMatrixView<T>, const char*);                                       \
  template Structure detect_structure<T>(ConstMatrixView<T>);                                                \
  template void gemm<T>(Op, Op, T, ConstMatrixView<T>, ConstMatrixView<T>, T, MatrixView<T>);                \
  template void symmetrize_from_lower<T>(MatrixView<T>);                                                    \
  template Matrix<T> matmul<T>(ConstMatrixView<T>, ConstMatrixView<T>);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
LINV_INSTANTIATE(std::complex<float>)
LINV_INSTANTIATE(std::complex<double>)
#undef LINV_INSTANTIATE
template void syrk<float>(Uplo, Op, float, ConstMatrixView<float>, float, MatrixView<float>);
template void syrk<double>(Uplo, Op, double, ConstMatrixView<double>, double, MatrixView<double>);

}  // namespace linv
