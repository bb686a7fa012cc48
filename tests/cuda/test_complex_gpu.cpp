// Complex matrices on the GPU against the CPU backend (the oracle, itself tested against the real embedding
// in tests/cpu/test_complex.cpp): the same method, the same errors and pivots, results within n eps cond of
// each other, over sizes around cuSOLVER's and the kernels' block sizes and at extreme scales. Device memory
// starts as NaN (LINV_POISON_DEVICE_MEMORY, set by the test main), so unwritten output shows. Skips without
// a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "linv/accuracy.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "support/complex_batches.hpp"
#include "support/complex_matrices.hpp"
#include "support/dense_checks.hpp"
#include "support/gpu.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

using testing::contains;
using testing::hermitian_positive_definite;
using testing::random_complex;
using testing::kForwardThreshold;
using testing::kResidualThreshold;

template <Complex T>
class CudaComplex : public ::testing::Test {};
using Types = ::testing::Types<std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CudaComplex, Types);

template <Complex T>
constexpr double eps() {
  return std::numeric_limits<real_t<T>>::epsilon();
}

// ||X - Y||_1 / ||Y||_1, in complex128.
template <Complex T>
double difference(ConstMatrixView<T> X, ConstMatrixView<T> Y) {
  double num = 0, den = 0;
  for (index j = 0; j < X.cols(); ++j) {
    double sn = 0, sd = 0;
    for (index i = 0; i < X.rows(); ++i) {
      sn += std::abs(std::complex<double>(X(i, j)) - std::complex<double>(Y(i, j)));
      sd += std::abs(std::complex<double>(Y(i, j)));
    }
    num = std::max(num, sn), den = std::max(den, sd);
  }
  return den > 0 ? num / den : num;
}

Device gpu() { return Device::cuda(0); }

std::mt19937_64 generator(std::uint64_t salt) { return std::mt19937_64(testing::case_seed(salt)); }

// Around cuSOLVER's panel widths and the kernels' 32 x 8 tiles.
const std::vector<index> kSizes = {1, 2, 7, 31, 32, 33, 64, 255, 257, 600};

TYPED_TEST(CudaComplex, SolveAndInverseAgreeWithTheCpu) {
  REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937_64 g = generator(1);
  for (index n : kSizes)  // up to 4 right-hand sides (complex128) or 16 go through the one-launch solves
    for (index nrhs : {index{1}, index{3}, index{4}, index{5}, index{16}, index{17}, index{40}}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", nrhs " + std::to_string(nrhs));
      const Matrix<T> a = random_complex<T>(n, n, g), b = random_complex<T>(n, nrhs, g);
      const Solution<T> cpu = solve<T>(a.view(), b.view(), {.compute_residual = true});
      const Solution<T> dev =
          solve<T>(a.to(gpu()).view(), b.to(gpu()).view(), {.compute_residual = true});
      EXPECT_EQ(dev.report.device, gpu());
      EXPECT_EQ(dev.report.method, cpu.report.method);
      EXPECT_LE(dev.report.scaled_residual, kResidualThreshold);
      const double cond = 1 / cpu.report.rcond;
      // the estimates agree within the estimator's factor of 3 (both are lower bounds of ||A^-1||_1)
      EXPECT_LE(dev.report.rcond, 3 * cpu.report.rcond);
      EXPECT_GE(dev.report.rcond, cpu.report.rcond / 3);
      const Matrix<T> x = dev.x.to(Device::cpu());
      EXPECT_LE(difference<T>(x.view(), cpu.x.view()), 2 * kForwardThreshold * n * eps<T>() * cond);

      if (nrhs != 1) continue;
      const Solution<T> i = inv<T>(a.to(gpu()).view(), {.compute_residual = true});
      EXPECT_EQ(i.report.method, n == 1 ? Method::Triangular : Method::LU);
      EXPECT_LE(i.report.scaled_residual, kResidualThreshold);
      const Matrix<T> xi = i.x.to(Device::cpu());
      EXPECT_LE(scaled_residual_inverse<T>(a.view(), xi.view(), eps<T>()), kResidualThreshold);
      EXPECT_LE(difference<T>(xi.view(), inv<T>(a.view()).x.view()), 2 * kForwardThreshold * n * eps<T>() * cond);
    }
}

TYPED_TEST(CudaComplex, HermitianPositiveDefiniteTakesCholesky) {
  REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937_64 g = generator(2);
  for (index n : kSizes) {
    SCOPED_TRACE("n " + std::to_string(n));
    const Matrix<T> a = hermitian_positive_definite<T>(n, g), b = random_complex<T>(n, 2, g);
    const Matrix<T> ga = a.to(gpu());
    const Method expected = n == 1 ? Method::Triangular : Method::Cholesky;
    const Solution<T> s = solve<T>(ga.view(), b.to(gpu()).view(), {.compute_residual = true});
    EXPECT_EQ(s.report.method, expected) << s.report.method_reason;
    EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    const Solution<T> l = cholesky<T>(ga.view(), {.compute_residual = true});
    EXPECT_LE(l.report.scaled_residual, kResidualThreshold);
    const Matrix<T> lh = l.x.to(Device::cpu());
    for (index j = 0; j < n; ++j) {
      EXPECT_EQ(lh(j, j).imag(), 0) << "L's diagonal is real";
      for (index i = 0; i < j; ++i) ASSERT_EQ(lh(i, j), T(0)) << "zeros above the diagonal";
    }
    const Solution<T> i = inv<T>(ga.view(), {.compute_residual = true});
    EXPECT_EQ(i.report.method, expected);
    EXPECT_LE(i.report.scaled_residual, kResidualThreshold);
    const Matrix<T> ih = i.x.to(Device::cpu());
    for (index c = 0; c < n; ++c)  // Hermitian, exactly: one triangle mirrored, a real diagonal
      for (index r = 0; r < n; ++r) ASSERT_EQ(ih(r, c), std::conj(ih(c, r)));
    const double cond = 1 / i.report.rcond;
    EXPECT_LE(difference<T>(ih.view(), inv<T>(a.view()).x.view()), 2 * kForwardThreshold * n * eps<T>() * cond);
  }
}

TYPED_TEST(CudaComplex, TriangularMatricesAndDeterminants) {
  REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937_64 g = generator(3);
  for (index n : kSizes) {
    SCOPED_TRACE("n " + std::to_string(n));
    for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
      const Matrix<T> a = testing::dominant_triangle<T>(n, uplo, g);
      const Solution<T> s = inv<T>(a.to(gpu()).view(), {.compute_residual = true});
      EXPECT_EQ(s.report.method, Method::Triangular);
      EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
      const Solution<T> c = inv<T>(a.view());
      EXPECT_LE(s.report.rcond, 3 * c.report.rcond);
      EXPECT_GE(s.report.rcond, c.report.rcond / 3);
      const Matrix<T> t = tri_inv<T>(a.to(gpu()).view(), uplo).to(Device::cpu());
      EXPECT_LE(scaled_residual_inverse<T>(a.view(), t.view(), eps<T>()), kResidualThreshold);
    }
    const Matrix<T> r = random_complex<T>(n, n, g);
    const Determinant dc = LU<T>(r.view()).determinant(), dg = LU<T>(r.to(gpu()).view()).determinant();
    EXPECT_NEAR(dg.log_abs, dc.log_abs, 60 * n * eps<T>() * std::max(1.0, std::abs(dc.log_abs)));
    EXPECT_NEAR(std::remainder(dg.phase - dc.phase, 2 * std::numbers::pi), 0, 60 * n * eps<T>());
  }
}

TYPED_TEST(CudaComplex, ExtremeScalesGiveTheCpusAnswer) {
  REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937_64 g = generator(4);
  const Matrix<T> a = random_complex<T>(40, 40, g), b = random_complex<T>(40, 2, g);
  const int far = std::numeric_limits<real_t<T>>::max_exponent - 24;
  for (int e : {-far, -far / 2, far / 2, far}) {
    SCOPED_TRACE("2^" + std::to_string(e));
    Matrix<T> s = a.clone();
    for (index k = 0; k < s.size(); ++k) s.data()[k] *= std::ldexp(real_t<T>(1), e);
    const Solution<T> cpu = solve<T>(s.view(), b.view());
    const Solution<T> dev = solve<T>(s.to(gpu()).view(), b.to(gpu()).view(), {.compute_residual = true});
    EXPECT_LE(dev.report.scaled_residual, kResidualThreshold);
    const Matrix<T> x = dev.x.to(Device::cpu());
    EXPECT_LE(difference<T>(x.view(), cpu.x.view()), 2 * kForwardThreshold * 40 * eps<T>() / cpu.report.rcond);
    const Solution<T> i = inv<T>(s.to(gpu()).view(), {.compute_residual = true});
    EXPECT_LE(i.report.scaled_residual, kResidualThreshold);
  }
}

TYPED_TEST(CudaComplex, BadInputGetsTheCpusErrors) {
  REQUIRE_GPU();
  using T = TypeParam;
  const real_t<T> nan = std::numeric_limits<real_t<T>>::quiet_NaN();
  Matrix<T> a = Matrix<T>::from_rows({{T(1), T(2)}, {T(3), T(4)}});
  a(1, 0) = T(1, nan);  // a NaN in the imaginary part only
  try {
    (void)inv<T>(a.to(gpu()).view());
    FAIL() << "no error";
  } catch (const NonFiniteInput& e) {
    EXPECT_TRUE(contains(e.what(), "row 2, column 1")) << e.what();
  }
  // exactly singular, at every size: the CPU's pivot named
  std::mt19937_64 g = generator(5);
  for (index n : {2, 33, 300}) {
    Matrix<T> s = random_complex<T>(n, n, g);
    for (index i = 0; i < n; ++i) s(i, n / 2) = s(i, 0) * T(0, 2);  // a column 2i times the first
    index cpu_pivot = 0, gpu_pivot = 0;
    try {
      (void)inv<T>(s.view());
    } catch (const SingularMatrix& e) {
      cpu_pivot = e.pivot();
    }
    try {
      (void)inv<T>(s.to(gpu()).view());
      ADD_FAILURE() << "no error at n " << n;
    } catch (const SingularMatrix& e) {
      gpu_pivot = e.pivot();
    }
    EXPECT_GT(gpu_pivot, 0) << n;
    if (n == 2) {  // beyond 2 x 2, rounding may stop the two at different pivots
      EXPECT_EQ(gpu_pivot, cpu_pivot);
    }
  }
  // Hermitian but indefinite: an explicit Cholesky names the minor, Auto falls back to LU
  const Matrix<T> h = Matrix<T>::from_rows({{T(1), T(2, 1)}, {T(2, -1), T(1)}});
  try {
    (void)cholesky<T>(h.to(gpu()).view());
    FAIL() << "no error";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.minor(), 2);
  }
  const Solution<T> f = solve<T>(h.to(gpu()).view(), Matrix<T>::from_rows({{T(1)}, {T(0, 1)}}).to(gpu()).view());
  EXPECT_EQ(f.report.method, Method::LU);
  // what complex matrices do not take on the GPU either: refused, saying which they do
  const Matrix<T> m = Matrix<T>::from_rows({{T(2, 1), T(1)}, {T(0, 1), T(3)}});
  for (Method method : {Method::GaussJordan, Method::CALU, Method::RBT, Method::CholeskyGETS}) {
    try {
      (void)inv<T>(m.to(gpu()).view(), {.method = method});
      FAIL() << "no error for " << to_string(method);
    } catch (const InvalidArgument& e) {
      EXPECT_TRUE(contains(e.what(), "auto, lu, cholesky and triangular")) << e.what();
    }
  }
  try {
    (void)lstsq<T>(m.to(gpu()).view(), m.to(gpu()).view());
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "CPU")) << e.what();
  }
}

// complex128 by mixed precision on the GPU: cuSOLVER's refinement from complex64 LU factors (a Hermitian
// matrix too, said), the native CPU solve's answer to n eps cond; too ill-conditioned for complex64, complex128
// factors take over and say so; exactly singular, the pivot is named.
TEST(CudaComplexMixed, Complex64FactorsRefinedToComplex128) {
  REQUIRE_GPU();
  using C = std::complex<double>;
  constexpr double e = std::numeric_limits<double>::epsilon();
  std::mt19937_64 g = generator(46);
  for (index n : kSizes)
    for (index nrhs : {index{1}, index{3}}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", nrhs " + std::to_string(nrhs));
      Matrix<C> a = random_complex<C>(n, n, g);
      for (index i = 0; i < n; ++i) a(i, i) += C(2, 0);
      const Matrix<C> b = random_complex<C>(n, nrhs, g);
      const Solution<C> cpu = solve<C>(a.view(), b.view());
      const Solution<C> dev = solve<C>(a.to(gpu()).view(), b.to(gpu()).view(),
                                       {.precision = Precision::Mixed, .compute_residual = true});
      EXPECT_EQ(dev.report.device, gpu());
      EXPECT_LE(dev.report.scaled_residual, kResidualThreshold);
      if (n > 1) {
        EXPECT_EQ(dev.report.stop, StopReason::Converged);
      }
      const double cond = 1 / cpu.report.rcond;
      EXPECT_LE(difference<C>(dev.x.to(Device::cpu()).view(), cpu.x.view()), 2 * kForwardThreshold * n * e * cond);
    }
  const Matrix<C> h = hermitian_positive_definite<C>(100, g), b = random_complex<C>(100, 2, g);
  const Solution<C> hs = solve<C>(h.to(gpu()).view(), b.to(gpu()).view(), {.precision = Precision::Mixed});
  EXPECT_EQ(hs.report.method, Method::Cholesky);
  bool said = false;
  for (const std::string& note : hs.report.notes) said = said || contains(note, "LU's");
  EXPECT_TRUE(said);
  EXPECT_LE(scaled_residual_solve<C>(h.view(), hs.x.to(Device::cpu()).view(), b.view(), e), kResidualThreshold);
  Matrix<C> ill = random_complex<C>(30, 30, g);
  for (index i = 0; i < 30; ++i) ill(i, 0) = ill(i, 1) + C(1e-12 * (i % 3 == 0 ? 1 : -1), 0);
  const Matrix<C> b30 = random_complex<C>(30, 1, g);
  const Solution<C> fb = solve<C>(ill.to(gpu()).view(), b30.to(gpu()).view(),
                                  {.precision = Precision::Mixed, .allow_ill_conditioned = true});
  // cuSOLVER's GMRES refinement may get there from complex64 factors where classical refinement cannot;
  // either way the answer meets complex128's residual bound, and a fallback is said
  EXPECT_TRUE(fb.report.stop == StopReason::FellBack || fb.report.stop == StopReason::Converged);
  if (fb.report.stop == StopReason::FellBack) {
    bool fell = false;
    for (const std::string& note : fb.report.notes) fell = fell || contains(note, "complex128 factorization instead");
    EXPECT_TRUE(fell);
  }
  EXPECT_LE(scaled_residual_solve<C>(ill.view(), fb.x.to(Device::cpu()).view(), b30.view(), e), kResidualThreshold);
  const Matrix<C> sing = Matrix<C>::from_rows({{C(1, 1), C(2, 2)}, {C(1, 1), C(2, 2)}});
  try {
    (void)inv<C>(sing.to(gpu()).view(), {.precision = Precision::Mixed});
    FAIL() << "no error";
  } catch (const SingularMatrix& err) {
    EXPECT_EQ(err.pivot(), 2);
  }
}

TYPED_TEST(CudaComplex, StacksByTheBatchedFamily) {
  REQUIRE_GPU();
  testing::expect_complex_batches<TypeParam>(gpu(), 300);
}

}  // namespace
}  // namespace linv
