// The CPU backend's dense and mixed families (src/kernels/dense.hpp, vectors.hpp): LAPACK through
// src/common/lapack.hpp, and the source documents' algorithms and mixed-precision refinement
// (src/cpu/algorithms.hpp). The oracle every other backend is tested against.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "common/lapack.hpp"
#include "cpu/algorithms.hpp"
#include "cpu/backend.hpp"
#include "cpu/lu_rcond.hpp"
#include "linv/errors.hpp"

namespace linv::cpu {
namespace {

// The methods complex matrices do not take in this version (src/core refuses them before they get here).
[[noreturn]] void real_only(const char* what) {
  throw InvalidArgument(fmt::format("{} is for real matrices in this version; complex ones take LU with partial "
                                    "pivoting, Cholesky, the triangular methods and Householder QR",
                                    what));
}

// |a| for the scaling of extreme matrices, of a finite a: a complex number's larger part, which (unlike its
// modulus) cannot overflow.
template <Scalar T>
real_t<T> magnitude_of(T a) {
  if constexpr (Complex<T>)
    return std::max(std::abs(a.real()), std::abs(a.imag()));
  else
    return std::abs(a);
}

template <Scalar T>
class Dense final : public kernels::Dense<T> {
 public:
  kernels::DensePreferences preferences() const override { return {}; }  // LU, and LAPACK's trtri
  bool runs(kernels::Optional) const override { return true; }  // the reference: every method

  double norm1(ConstMatrixView<T> A) const override {
    double best = 0;
    for (index j = 0; j < A.cols(); ++j) {
      double s = 0;
      for (index i = 0; i < A.rows(); ++i) s += static_cast<double>(std::abs(A(i, j)));
      if (std::isnan(s)) return s;  // as LAPACK's lange: a NaN is not a small entry
      best = std::max(best, s);
    }
    return best;
  }

  kernels::Magnitude magnitude(ConstMatrixView<T> A) const override {
    kernels::Magnitude m;
    real_t<T> largest = 0;
    for (index j = 0; j < A.cols(); ++j)
      for (index i = 0; i < A.rows(); ++i) {
        if (is_finite(A(i, j))) {
          largest = std::max(largest, magnitude_of(A(i, j)));
        } else if (!m.first_non_finite) {
          m.first_non_finite = std::pair{i, j};
        }
      }
    m.max_abs = static_cast<double>(largest);
    return m;
  }

  Structure detect_structure(ConstMatrixView<T> A) const override {
    const index n = A.rows();
    bool lower = true, upper = true, symmetric = true;
    if constexpr (Complex<T>)  // Hermitian: a real diagonal
      for (index j = 0; j < n && symmetric; ++j) symmetric = A(j, j).imag() == 0;
    for (index j = 0; j < n && (lower || upper || symmetric); ++j)
      for (index i = 0; i < j; ++i) {  // (i, j) above the diagonal, (j, i) its mirror below
        const T above = A(i, j), below = A(j, i);
        if (above != T(0)) lower = false;
        if (below != T(0)) upper = false;
        if (above != conjugate(below)) symmetric = false;
      }
    if (lower && upper) return Structure::Diagonal;
    if (lower) return Structure::Lower;
    if (upper) return Structure::Upper;
    return symmetric ? Structure::Symmetric : Structure::General;
  }

  std::optional<std::pair<index, index>> first_asymmetric(ConstMatrixView<T> A) const override {
    const index n = A.rows();
    double max_abs = 0;
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) max_abs = std::max(max_abs, static_cast<double>(std::abs(A(i, j))));
    const double tol = static_cast<double>(n) * std::numeric_limits<real_t<T>>::epsilon() * max_abs;
    for (index j = 0; j < n; ++j)
      for (index i = j; i < n; ++i) {  // a Hermitian matrix's diagonal is its own conjugate: real
        const wide_t<T> below = A(i, j), above = A(j, i);
        if (std::abs(below - conjugate(above)) > tol) return std::pair{i, j};
      }
    return std::nullopt;
  }

  std::vector<T> diagonal(ConstMatrixView<T> A) const override {
    std::vector<T> d(static_cast<std::size_t>(std::min(A.rows(), A.cols())));
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = A(static_cast<index>(i), static_cast<index>(i));
    return d;
  }

  void zero_triangle(MatrixView<T> A, Uplo which) const override {
    for (index j = 0; j < A.cols(); ++j)
      for (index i = 0; i < A.rows(); ++i)
        if ((which == Uplo::Upper && i < j) || (which == Uplo::Lower && i > j)) A(i, j) = T(0);
  }

  void set_diagonal(MatrixView<T> A, T value) const override {
    for (index i = 0; i < std::min(A.rows(), A.cols()); ++i) A(i, i) = value;
  }

  void mirror_lower(MatrixView<T> A) const override {
    for (index j = 1; j < A.cols(); ++j)
      for (index i = 0; i < j; ++i) A(i, j) = conjugate(A(j, i));
    if constexpr (Complex<T>)  // a Hermitian matrix's diagonal is real: what is left there is rounding
      for (index i = 0; i < std::min(A.rows(), A.cols()); ++i) A(i, i).imag(0);
  }

  void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta,
            MatrixView<T> C) const override {
    lapack::gemm<T>(op_a, op_b, alpha, A, B, beta, C);
  }
  void syrk(Uplo uplo, Op op, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C) const override {
    lapack::syrk<T>(uplo, op, alpha, A, beta, C);
  }
  void trsm(Side side, Uplo uplo, Op op, Diag diag, T alpha, ConstMatrixView<T> A, MatrixView<T> B) const override {
    lapack::trsm<T>(side, uplo, op, diag, alpha, A, B);
  }

  kernels::LuOutcome lu_factor(MatrixView<T> A, std::vector<int>& pivots, Pivoting pivoting) const override {
    if constexpr (Complex<T>) {
      if (pivoting != Pivoting::Partial) real_only("tournament and randomized pivoting");
    } else {
      if (pivoting == Pivoting::Tournament) return tournament_lu<T>(A, pivots);
      if (pivoting == Pivoting::Randomized) {
        pivots.resize(static_cast<std::size_t>(A.rows()));
        for (std::size_t i = 0; i < pivots.size(); ++i) pivots[i] = static_cast<int>(i) + 1;
        return unpivoted_lu<T>(A);
      }
    }
    pivots.assign(static_cast<std::size_t>(A.rows()), 0);
    const double a_max = max_abs_entry<T>(A, false);
    const index info = lapack::getrf<T>(A, pivots.data());
    return {info, a_max > 0 ? max_abs_entry<T>(A, true) / a_max : 0.0};
  }
  void lu_solve(ConstMatrixView<T> LU, const std::vector<int>& pivots, MatrixView<T> B, Op op) const override {
    lapack::getrs<T>(op, LU, pivots.data(), B);
  }
  void butterflies(ConstMatrixView<T> r, Side side, Op op, MatrixView<T> X) const override {
    if constexpr (Complex<T>)
      real_only("the random butterfly transform");
    else
      apply_butterflies<T>(r, side, op, X);
  }
  void lu_inverse(MatrixView<T> LU, const std::vector<int>& pivots) const override {
    lapack::getri<T>(LU, pivots.data());
  }
  double lu_rcond(ConstMatrixView<T> LU, const std::vector<int>&, double anorm) const override {
    if constexpr (Real<T>) {  // small factors: gecon's estimate without LAPACKE (src/cpu/lu_rcond.hpp)
      const index n = LU.rows();
      if (n <= kSmallRcondOrder && (n <= 1 || LU.ld() == n)) {
        std::array<T, 3 * kSmallRcondOrder> work;
        const double rcond =
            cpu::lu_rcond<T>(LU.data(), n, anorm, std::numeric_limits<double>::infinity(), work.data());
        if (rcond > 0 && std::isfinite(rcond)) return rcond;  // else it overflowed, or is 0: gecon decides
      }
    }
    return lapack::gecon<T>(LU, anorm);
  }

  index cholesky_factor(MatrixView<T> A) const override { return lapack::potrf<T>(Uplo::Lower, A); }
  void cholesky_solve(ConstMatrixView<T> L, MatrixView<T> B) const override { lapack::potrs<T>(Uplo::Lower, L, B); }
  void cholesky_inverse(MatrixView<T> L, TriangularInverse how) const override {
    if (how == TriangularInverse::Lapack) {
      lapack::potri<T>(Uplo::Lower, L);
    } else if constexpr (Complex<T>) {
      real_only("elimination on the triangle (GETS)");
    } else {
      gets_lower_inverse<T>(L, Diag::NonUnit);  // X = L^-1
      lapack::lauum<T>(Uplo::Lower, L);         // X^T X = L^-T L^-1 = A^-1
    }
    mirror_lower(L);
  }
  double cholesky_rcond(ConstMatrixView<T> L, double anorm) const override {
    return lapack::pocon<T>(Uplo::Lower, L, anorm);
  }

  void triangular_inverse(MatrixView<T> A, Uplo uplo, TriangularInverse how, Diag diag) const override {
    if (how == TriangularInverse::Lapack) {
      lapack::trtri<T>(uplo, diag, A);  // cannot fail: the caller checked the diagonal
    } else if constexpr (Complex<T>) {
      real_only("elimination on the triangle (GETS)");
    } else if (uplo == Uplo::Lower) {
      gets_lower_inverse<T>(A, diag);
    } else {  // inv(U) = inv(U^T)^T: eliminate on the transposed (lower) triangle
      const index n = A.rows();
      Matrix<T> t = Matrix<T>::uninitialized(n, n);
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < n; ++i) t(i, j) = A(j, i);
      gets_lower_inverse<T>(t.view(), diag);
      for (index j = 0; j < n; ++j)
        for (index i = 0; i <= j; ++i) A(i, j) = t(j, i);
    }
  }
  double triangular_rcond(ConstMatrixView<T> A, Uplo uplo, Diag diag) const override {
    return lapack::trcon<T>(uplo, diag, A);
  }

  index gauss_jordan_inverse(MatrixView<T> A) const override {
    if constexpr (Complex<T>)
      real_only("Gauss-Jordan elimination");
    else
      return cpu::gauss_jordan_inverse<T>(A);
  }
  kernels::IterationOutcome gauss_seidel(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X,
                                         double tolerance, int max_iterations) const override {
    if constexpr (Complex<T>)
      real_only("Gauss-Seidel");
    else
      return cpu::gauss_seidel<T>(A, B, X, tolerance, max_iterations);
  }

  index qr_solve(MatrixView<T> A, MatrixView<T> B) const override { return lapack::qr_solve<T>(A, B); }
  index least_squares(MatrixView<T> A, MatrixView<T> B, double rcond) const override {
    return lapack::gelsy<T>(A, B, rcond);
  }
  int svd(MatrixView<T> A, real_t<T>* s, MatrixView<T> U, MatrixView<T> VT) const override {
    return lapack::gesdd<T>(A, s, U, VT);
  }
  int largest_eigenpair(MatrixView<T> A, T& value, T* vector) const override {
    if constexpr (Complex<T>)
      real_only("the largest eigenpair");
    else
      return lapack::largest_eigenpair<T>(A, value, vector);
  }
  int orthonormalize(MatrixView<T> A) const override {
    if constexpr (Complex<T>)
      real_only("orthonormalization");
    else
      return lapack::orthonormalize<T>(A);
  }
};

// max over columns of ||b - A x||_inf / (||A||_inf ||x||_inf), the test LAPACK's refinement stops on.
double complex_backward_error(ConstMatrixView<std::complex<double>> A, ConstMatrixView<std::complex<double>> B,
                              ConstMatrixView<std::complex<double>> X) {
  using C = std::complex<double>;
  Matrix<C> r = Matrix<C>::copy_of(B);
  lapack::gemm<C>(Op::None, Op::None, C(-1), A, X, C(1), r.view());
  double anorm = 0;
  for (index i = 0; i < A.rows(); ++i) {
    double row = 0;
    for (index j = 0; j < A.cols(); ++j) row += std::abs(A(i, j));
    anorm = std::max(anorm, row);
  }
  double worst = 0;
  for (index j = 0; j < X.cols(); ++j) {
    double rmax = 0, xmax = 0;
    for (index i = 0; i < X.rows(); ++i) rmax = std::max(rmax, std::abs(r(i, j))), xmax = std::max(xmax, std::abs(X(i, j)));
    worst = std::max(worst, xmax > 0 ? rmax / (anorm * xmax) : rmax);
  }
  return worst;
}

class Mixed final : public kernels::Mixed {
 public:
  kernels::MixedOutcome solve(ConstMatrixView<double> A, ConstMatrixView<double> B, MatrixView<double> X,
                              bool cholesky, FactorPrecision low) const override {
    if (low != FactorPrecision::Float32)
      throw InvalidArgument(fmt::format("a {} factorization needs a CUDA GPU (tensor cores); on the CPU use float32",
                                        to_string(low)));
    return refine_mixed(A, B, X, cholesky);
  }
  // LAPACK's zcgesv and zcposv, whose own fallback to complex128 is reported as a failure: the core then
  // factors in complex128 itself and judges the matrix as it judges every other.
  kernels::MixedOutcome solve_complex(ConstMatrixView<std::complex<double>> A, ConstMatrixView<std::complex<double>> B,
                                      MatrixView<std::complex<double>> X, bool cholesky) const override {
    kernels::MixedOutcome out;
    int iter = 0;
    const int info = lapack::mixed_solve(A, B, X, cholesky, iter);
    if (info > 0) {
      out.failure = cholesky ? fmt::format("A is not positive definite (leading minor {})", info)
                             : fmt::format("the complex128 factorization has an exactly zero pivot at {}", info);
    } else if (iter < 0) {
      out.failure = iter == -2   ? "A does not fit complex64"
                    : iter == -3 ? (cholesky ? "A is not positive definite in complex64"
                                             : "the complex64 factorization hit a zero pivot")
                    : iter == -31 ? "refinement did not converge in 30 steps"
                                  : fmt::format("LAPACK refined no further (ITER {})", iter);
    } else {
      out.iterations = iter;
      out.backward_error = complex_backward_error(A, B, X);
    }
    return out;
  }
  std::string float64_is_as_fast(Device) const override { return ""; }  // float32 LAPACK: twice the SIMD lanes
  kernels::MixedOutcome least_squares(ConstMatrixView<double> A, ConstMatrixView<double> B,
                                      MatrixView<double> X) const override {
    return refine_least_squares(A, B, X);
  }
  void round_to_float(ConstMatrixView<double> src, MatrixView<float> dst) const override {
    for (index j = 0; j < src.cols(); ++j)
      for (index i = 0; i < src.rows(); ++i) dst(i, j) = static_cast<float>(src(i, j));
  }
  void add_correction(ConstMatrixView<float> d, MatrixView<double> x) const override {
    for (index j = 0; j < x.cols(); ++j)
      for (index i = 0; i < x.rows(); ++i) x(i, j) += d(i, j);
  }
};

}  // namespace

template <Scalar T>
const kernels::Dense<T>& dense() { return kernels::instance<Dense<T>>(); }
template const kernels::Dense<float>& dense<float>();
template const kernels::Dense<double>& dense<double>();
template const kernels::Dense<std::complex<float>>& dense<std::complex<float>>();
template const kernels::Dense<std::complex<double>>& dense<std::complex<double>>();

const kernels::Mixed& mixed() { return kernels::instance<Mixed>(); }

}  // namespace linv::cpu
