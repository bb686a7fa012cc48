// Complex matrices through the dense core (complex64 and complex128 on the CPU): every result against an
// independent float64 reference, the real embedding [Re A, -Im A; Im A, Re A] solved by the real path,
// to bounds scaled by n eps cond; the methods Auto picks; the errors for what complex matrices do not take.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

#include "linv/accuracy.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "support/complex_batches.hpp"
#include "support/complex_matrices.hpp"
#include "support/dense_checks.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

using testing::contains;
using testing::hermitian_positive_definite;
using testing::random_complex;
using testing::kForwardThreshold;
using testing::kResidualThreshold;

template <Complex T>
class ComplexDense : public ::testing::Test {};
using Types = ::testing::Types<std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(ComplexDense, Types);

template <Complex T>
constexpr double eps() {
  return std::numeric_limits<real_t<T>>::epsilon();
}

// The real embedding of A in float64: A x = b holds exactly when E [Re x; Im x] = [Re b; Im b].
template <Complex T>
Matrix<double> embedding(ConstMatrixView<T> A) {
  const index m = A.rows(), n = A.cols();
  Matrix<double> e(2 * m, 2 * n);
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < m; ++i) {
      const double re = A(i, j).real(), im = A(i, j).imag();
      e(i, j) = re, e(i, j + n) = -im, e(i + m, j) = im, e(i + m, j + n) = re;
    }
  return e;
}

// [Re B; Im B]
template <Complex T>
Matrix<double> stacked(ConstMatrixView<T> B) {
  Matrix<double> s(2 * B.rows(), B.cols());
  for (index j = 0; j < B.cols(); ++j)
    for (index i = 0; i < B.rows(); ++i) s(i, j) = B(i, j).real(), s(i + B.rows(), j) = B(i, j).imag();
  return s;
}

// ||X - [top] + i [bottom]||_1 / ||reference||_1, the reference the stacked float64 solution.
template <Complex T>
double forward_error(ConstMatrixView<T> X, const Matrix<double>& reference) {
  const index m = X.rows();
  double num = 0, den = 0;
  for (index j = 0; j < X.cols(); ++j) {
    double sn = 0, sd = 0;
    for (index i = 0; i < m; ++i) {
      const std::complex<double> r(reference(i, j), reference(i + m, j));
      sn += std::abs(std::complex<double>(X(i, j)) - r);
      sd += std::abs(r);
    }
    num = std::max(num, sn), den = std::max(den, sd);
  }
  return den > 0 ? num / den : num;
}

std::mt19937_64 generator(std::uint64_t salt) { return std::mt19937_64(testing::case_seed(salt)); }

const std::vector<index> kSizes = {1, 2, 3, 7, 16, 33, 64, 100};

TYPED_TEST(ComplexDense, SolveAndInverseMatchTheRealEmbeddingToNEpsCond) {
  using T = TypeParam;
  std::mt19937_64 g = generator(1);
  for (index n : kSizes)
    for (index nrhs : {index{1}, index{3}}) {
      const Matrix<T> a = random_complex<T>(n, n, g), b = random_complex<T>(n, nrhs, g);
      const Solution<T> s = solve<T>(a.view(), b.view(), {.compute_residual = true});
      EXPECT_EQ(s.report.method, n == 1 ? Method::Triangular : Method::LU) << n;  // 1 x 1 is diagonal
      EXPECT_EQ(s.report.precision, type_name<T>());
      EXPECT_LE(s.report.scaled_residual, kResidualThreshold) << n;
      const Solution<double> ref = solve<double>(embedding<T>(a.view()).view(), stacked<T>(b.view()).view());
      const double cond = 1 / s.report.rcond;
      EXPECT_LE(forward_error<T>(s.x.view(), ref.x), kForwardThreshold * n * eps<T>() * cond) << "n " << n;

      const Solution<T> i = inv<T>(a.view(), {.compute_residual = true});
      EXPECT_LE(i.report.scaled_residual, kResidualThreshold) << n;
      EXPECT_LE(scaled_residual_inverse<T>(a.view(), i.x.view(), eps<T>()), kResidualThreshold) << n;
      const Matrix<T> x = matmul<T>(i.x.view(), b.view());
      EXPECT_LE(forward_error<T>(x.view(), ref.x), kForwardThreshold * n * eps<T>() * cond) << "n " << n;
    }
}

TYPED_TEST(ComplexDense, HermitianPositiveDefiniteTakesCholeskyWithLLHermitian) {
  using T = TypeParam;
  std::mt19937_64 g = generator(2);
  for (index n : kSizes) {
    const Matrix<T> a = hermitian_positive_definite<T>(n, g), b = random_complex<T>(n, 2, g);
    const Solution<T> s = solve<T>(a.view(), b.view(), {.compute_residual = true});
    const Method expected = n == 1 ? Method::Triangular : Method::Cholesky;  // 1 x 1 is diagonal
    EXPECT_EQ(s.report.method, expected) << n << ": " << s.report.method_reason;
    EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    const Solution<T> l = cholesky<T>(a.view(), {.compute_residual = true});
    EXPECT_LE(l.report.scaled_residual, kResidualThreshold) << n;  // ||A - L L^H||
    for (index j = 0; j < n; ++j) {
      EXPECT_EQ(l.x(j, j).imag(), 0) << "L's diagonal is real";
      EXPECT_GT(l.x(j, j).real(), 0);
      for (index i = 0; i < j; ++i) EXPECT_EQ(l.x(i, j), T(0)) << "zeros above the diagonal";
    }
    const Solution<T> i = inv<T>(a.view(), {.compute_residual = true});
    EXPECT_EQ(i.report.method, expected);
    EXPECT_LE(i.report.scaled_residual, kResidualThreshold);
    for (index c = 0; c < n; ++c)  // the inverse of a Hermitian matrix is Hermitian
      for (index r = 0; r < n; ++r) EXPECT_EQ(i.x(r, c), std::conj(i.x(c, r)));
  }
}

TYPED_TEST(ComplexDense, SymmetricButNotHermitianIsNotCholeskys) {
  using T = TypeParam;
  // complex symmetric (A = A^T), not Hermitian: LU, and an explicit Cholesky names the pair
  const Matrix<T> a = Matrix<T>::from_rows({{T(4, 1), T(1, 2)}, {T(1, 2), T(3, -1)}});
  const Solution<T> s = inv<T>(a.view());
  EXPECT_EQ(s.report.method, Method::LU);
  EXPECT_LE(scaled_residual_inverse<T>(a.view(), s.x.view(), eps<T>()), kResidualThreshold);
  try {
    (void)cholesky<T>(a.view());
    FAIL() << "no error";
  } catch (const NumericalError& e) {
    EXPECT_TRUE(contains(e.what(), "Hermitian positive definite"));
    EXPECT_TRUE(contains(e.what(), "a(1,1)")) << "the diagonal is not real";
  }
  // Hermitian but indefinite: Auto falls back to LU, an explicit Cholesky names the minor
  const Matrix<T> h = Matrix<T>::from_rows({{T(1), T(2, 1)}, {T(2, -1), T(1)}});
  const Solution<T> f = solve<T>(h.view(), Matrix<T>::from_rows({{T(1)}, {T(0, 1)}}).view());
  EXPECT_EQ(f.report.method, Method::LU);
  EXPECT_TRUE(contains(f.report.method_reason, "not positive definite"));
  try {
    (void)cholesky<T>(h.view());
    FAIL() << "no error";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.minor(), 2);
  }
}

TYPED_TEST(ComplexDense, TriangularMatricesTakeTheTriangularMethod) {
  using T = TypeParam;
  std::mt19937_64 g = generator(3);
  for (index n : kSizes)
    for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
      const Matrix<T> a = testing::dominant_triangle<T>(n, uplo, g);
      const Solution<T> s = inv<T>(a.view(), {.compute_residual = true});
      EXPECT_EQ(s.report.method, Method::Triangular);
      EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
      const Matrix<T> t = tri_inv<T>(a.view(), uplo);
      EXPECT_LE(scaled_residual_inverse<T>(a.view(), t.view(), eps<T>()), kResidualThreshold);
    }
}

TYPED_TEST(ComplexDense, DeterminantMatchesTheEmbeddingAndTheCofactors) {
  using T = TypeParam;
  // det [[1+i, 2], [3i, 4-i]] = (1+i)(4-i) - 6i = 5 - 3i
  const Matrix<T> a = Matrix<T>::from_rows({{T(1, 1), T(2)}, {T(0, 3), T(4, -1)}});
  const Determinant d = LU<T>(a.view()).determinant();
  EXPECT_EQ(d.sign, 1);
  EXPECT_NEAR(d.log_abs, std::log(std::abs(std::complex<double>(5, -3))), 10 * eps<T>());
  EXPECT_NEAR(d.phase, std::arg(std::complex<double>(5, -3)), 10 * eps<T>());
  // a row interchange alone: det [[0, 1], [1, 0]] = -1, phase pi
  const Determinant p = LU<T>(Matrix<T>::from_rows({{T(0), T(1)}, {T(1), T(0)}}).view()).determinant();
  EXPECT_NEAR(std::abs(p.phase), std::numbers::pi, 10 * eps<T>());
  EXPECT_EQ(p.log_abs, 0);
  // |det A|^2 = det of the real embedding, over sizes
  std::mt19937_64 g = generator(4);
  for (index n : kSizes) {
    const Matrix<T> r = random_complex<T>(n, n, g);
    const Determinant c = LU<T>(r.view()).determinant();
    const Determinant e = LU<double>(embedding<T>(r.view()).view()).determinant();
    EXPECT_EQ(e.sign, 1);
    EXPECT_NEAR(2 * c.log_abs, e.log_abs, 60 * n * eps<T>() * std::max(1.0, std::abs(e.log_abs))) << n;
    EXPECT_GT(c.phase, -std::numbers::pi);
    EXPECT_LE(c.phase, std::numbers::pi);
    // Cholesky's determinant of a Hermitian positive definite matrix is real and positive: LU's agrees
    const Matrix<T> h = hermitian_positive_definite<T>(n, g);
    const Determinant dc = Cholesky<T>(h.view()).determinant(), dl = LU<T>(h.view()).determinant();
    EXPECT_NEAR(dc.log_abs, dl.log_abs, 60 * n * eps<T>() * std::max(1.0, std::abs(dl.log_abs)));
    EXPECT_NEAR(std::remainder(dl.phase, 2 * std::numbers::pi), 0, 60 * n * eps<T>());
  }
}

TYPED_TEST(ComplexDense, LeastSquaresAndPseudoinverseMatchTheEmbedding) {
  using T = TypeParam;
  std::mt19937_64 g = generator(5);
  for (auto [m, n] : std::vector<std::pair<index, index>>{{1, 1}, {5, 3}, {3, 5}, {40, 17}, {17, 40}, {64, 64}}) {
    const Matrix<T> a = random_complex<T>(m, n, g), b = random_complex<T>(m, 2, g);
    const Solution<T> s = lstsq<T>(a.view(), b.view(), {.compute_residual = true});
    EXPECT_EQ(s.report.rank, std::min(m, n));
    EXPECT_LE(s.report.scaled_residual, kResidualThreshold) << m << "x" << n;  // ||A^H (B - A X)||
    const Solution<T> p = pinv<T>(a.view(), {.compute_residual = true});
    EXPECT_LE(p.report.scaled_residual, kResidualThreshold) << m << "x" << n;  // ||A P A - A||
    EXPECT_EQ(p.x.rows(), n);
    EXPECT_EQ(p.x.cols(), m);
    // pinv(A) B is the minimum-norm least-squares solution, as gelsy's X
    const Matrix<T> x = matmul<T>(p.x.view(), b.view());
    const double cond = 1 / p.report.rcond;
    Matrix<double> ref(2 * n, 2);
    for (index j = 0; j < 2; ++j)
      for (index i = 0; i < n; ++i) ref(i, j) = s.x(i, j).real(), ref(i + n, j) = s.x(i, j).imag();
    EXPECT_LE(forward_error<T>(x.view(), ref), kForwardThreshold * std::max(m, n) * eps<T>() * cond * cond)
        << m << "x" << n;
  }
  // a rank-deficient A: the rank is seen, A P A = A still holds
  Matrix<T> r = random_complex<T>(6, 4, g);
  for (index i = 0; i < 6; ++i) r(i, 3) = r(i, 0) * T(0, 2);  // column 4 = 2i column 1
  const Solution<T> d = pinv<T>(r.view(), {.compute_residual = true});
  EXPECT_EQ(d.report.rank, 3);
  EXPECT_LE(d.report.scaled_residual, kResidualThreshold);
}

TYPED_TEST(ComplexDense, ConjugateTransposeIsWhatTransposeMeans) {
  using T = TypeParam;
  const Matrix<T> a = Matrix<T>::from_rows({{T(1, 2), T(3, -1)}}), b = Matrix<T>::from_rows({{T(0, 1), T(2)}});
  Matrix<T> c(2, 2);
  gemm<T>(Op::Transpose, Op::None, T(1), a.view(), b.view(), T(0), c.view());  // A^H B
  EXPECT_EQ(c(0, 0), std::conj(T(1, 2)) * T(0, 1));
  EXPECT_EQ(c(1, 1), std::conj(T(3, -1)) * T(2));
  // LU::solve against A^H B = (A^-1)^H ... through solve of the conjugate transpose: A^H y = b
  std::mt19937_64 g = generator(6);
  const Matrix<T> m = random_complex<T>(9, 9, g), rhs = random_complex<T>(9, 1, g);
  Matrix<T> mh(9, 9);
  for (index j = 0; j < 9; ++j)
    for (index i = 0; i < 9; ++i) mh(i, j) = std::conj(m(j, i));
  const Solution<T> y = solve<T>(mh.view(), rhs.view(), {.compute_residual = true});
  EXPECT_LE(y.report.scaled_residual, kResidualThreshold);
}

TYPED_TEST(ComplexDense, ExtremeScalesGiveTheSameAnswer) {
  using T = TypeParam;
  std::mt19937_64 g = generator(7);
  const Matrix<T> a = random_complex<T>(12, 12, g), b = random_complex<T>(12, 1, g);
  const Solution<T> base = solve<T>(a.view(), b.view());
  const int far = std::numeric_limits<real_t<T>>::max_exponent - 24;  // 2^1000 for complex128, 2^104 for complex64
  for (int e : {-far, -far / 2, far / 2, far}) {
    Matrix<T> s = a.clone();
    for (index k = 0; k < s.size(); ++k) s.data()[k] *= std::ldexp(real_t<T>(1), e);
    const Solution<T> x = solve<T>(s.view(), b.view(), {.compute_residual = true});
    EXPECT_LE(x.report.scaled_residual, kResidualThreshold) << "2^" << e;
    for (index i = 0; i < 12; ++i) {  // X of 2^e A is 2^-e X, exactly where nothing over- or underflows
      const std::complex<double> want = std::complex<double>(base.x(i, 0)) * std::ldexp(1.0, -e);
      EXPECT_NEAR(std::abs(std::complex<double>(x.x(i, 0)) - want) / std::abs(want), 0, 1e3 * eps<T>()) << e;
    }
    const Determinant d = LU<T>(s.view()).determinant(), d0 = LU<T>(a.view()).determinant();
    EXPECT_NEAR(d.log_abs, d0.log_abs + 12 * e * std::numbers::ln2, 1e-6 * std::abs(d.log_abs));
    EXPECT_NEAR(d.phase, d0.phase, 1e3 * eps<T>());
  }
}

TYPED_TEST(ComplexDense, BadInputGetsClearErrors) {
  using T = TypeParam;
  const real_t<T> nan = std::numeric_limits<real_t<T>>::quiet_NaN(), inf = std::numeric_limits<real_t<T>>::infinity();
  Matrix<T> a = Matrix<T>::from_rows({{T(1), T(2)}, {T(3), T(4)}});
  a(1, 0) = T(1, nan);  // a NaN in the imaginary part only
  try {
    (void)inv<T>(a.view());
    FAIL() << "no error";
  } catch (const NonFiniteInput& e) {
    EXPECT_TRUE(contains(e.what(), "row 2, column 1")) << e.what();
  }
  a(1, 0) = T(inf, 0);
  EXPECT_THROW((void)solve<T>(a.view(), Matrix<T>(2, 1).view()), NonFiniteInput);
  // exactly singular: the pivot named
  const Matrix<T> s = Matrix<T>::from_rows({{T(1, 1), T(2, 2)}, {T(1, 1), T(2, 2)}});
  try {
    (void)inv<T>(s.view());
    FAIL() << "no error";
  } catch (const SingularMatrix& e) {
    EXPECT_EQ(e.pivot(), 2);
  }
  // methods and precisions complex matrices do not take: refused, saying which they do
  const Matrix<T> g = Matrix<T>::from_rows({{T(2, 1), T(1)}, {T(0, 1), T(3)}});
  for (Method m : {Method::GaussJordan, Method::CALU, Method::RBT, Method::GaussSeidel, Method::CholeskyGETS}) {
    try {
      (void)inv<T>(g.view(), {.method = m});
      FAIL() << "no error for " << to_string(m);
    } catch (const InvalidArgument& e) {
      EXPECT_TRUE(contains(e.what(), "auto, lu, cholesky and triangular")) << e.what();
    }
  }
  if constexpr (std::is_same_v<T, std::complex<float>>) {  // complex128 refines from complex64 factors
    EXPECT_THROW((void)solve<T>(g.view(), g.view(), {.precision = Precision::Mixed}), InvalidArgument);
  }
  EXPECT_THROW((void)LU<T>(g.view(), Pivoting::Randomized), InvalidArgument);
  EXPECT_THROW((void)solve<T>(g.view(), Matrix<T>(3, 1).view()), ShapeMismatch);
}

// complex128 by mixed precision: complex64 factors (LAPACK's zcgesv and zcposv) refined to complex128's
// backward error, matching the native solve and inverse to n eps cond, around the sizes of the other tests; a
// matrix too ill-conditioned for complex64 falls back to complex128 factors and says so; a singular one names
// its pivot; what mixed precision does not take is refused by name.
TEST(ComplexMixed, Complex64FactorsRefinedToComplex128) {
  using C = std::complex<double>;
  constexpr double e = std::numeric_limits<double>::epsilon();
  std::mt19937_64 g = generator(46);
  for (index n : kSizes)
    for (index nrhs : {index{1}, index{3}}) {
      Matrix<C> a = random_complex<C>(n, n, g);
      for (index i = 0; i < n; ++i) a(i, i) += C(2, 0);  // no accidental near-singularity at small n
      const Matrix<C> b = random_complex<C>(n, nrhs, g);
      const Solution<C> native = solve<C>(a.view(), b.view());
      const Solution<C> s = solve<C>(a.view(), b.view(), {.precision = Precision::Mixed, .compute_residual = true});
      if (n == 1) {  // diagonal: solved by substitution, nothing to refine, and said
        EXPECT_EQ(s.report.method, Method::Triangular);
        EXPECT_EQ(s.report.precision, "complex128");
        ASSERT_FALSE(s.report.notes.empty());
        EXPECT_TRUE(contains(s.report.notes.front(), "no factorization to refine")) << s.report.notes.front();
      } else {
        EXPECT_EQ(s.report.stop, StopReason::Converged) << n;
        EXPECT_EQ(s.report.precision, "mixed (complex64 factorization, complex128 refinement)");
        EXPECT_LE(s.report.backward_error, std::sqrt(static_cast<double>(n)) * e) << n;
      }
      EXPECT_LE(s.report.scaled_residual, kResidualThreshold) << n;
      const double cond = 1 / native.report.rcond;
      const Matrix<double> ref = solve<double>(embedding<C>(a.view()).view(), stacked<C>(b.view()).view()).x;
      EXPECT_LE(forward_error<C>(s.x.view(), ref), kForwardThreshold * n * e * cond) << n;
      const Solution<C> i = inv<C>(a.view(), {.precision = Precision::Mixed, .compute_residual = true});
      EXPECT_LE(i.report.scaled_residual, kResidualThreshold) << n;
      EXPECT_LE(forward_error<C>(matmul<C>(i.x.view(), b.view()).view(), ref), kForwardThreshold * n * e * cond) << n;
    }
  // Hermitian positive definite: auto picks Cholesky, refined from complex64 Cholesky factors
  const Matrix<C> h = hermitian_positive_definite<C>(40, g), b = random_complex<C>(40, 2, g);
  const Solution<C> hs = solve<C>(h.view(), b.view(), {.precision = Precision::Mixed});
  EXPECT_EQ(hs.report.method, Method::Cholesky);
  EXPECT_EQ(hs.report.stop, StopReason::Converged);
  EXPECT_LE(scaled_residual_solve<C>(h.view(), hs.x.view(), b.view(), e), kResidualThreshold);
  // cond ~ 1e12, beyond complex64: complex128 factors take over, and the report says so
  Matrix<C> ill = random_complex<C>(30, 30, g);
  for (index i = 0; i < 30; ++i) ill(i, 0) = ill(i, 1) + C(1e-12 * (i % 3 == 0 ? 1 : -1), 0);
  const Solution<C> fb = solve<C>(ill.view(), b.view().block(0, 0, 30, 2), {.precision = Precision::Mixed,
                                                                            .allow_ill_conditioned = true});
  EXPECT_EQ(fb.report.stop, StopReason::FellBack);
  bool said = false;
  for (const std::string& note : fb.report.notes) said = said || contains(note, "complex128 factorization instead");
  EXPECT_TRUE(said);
  EXPECT_LE(scaled_residual_solve<C>(ill.view(), fb.x.view(), b.view().block(0, 0, 30, 2), e), kResidualThreshold);
  // exactly singular: the pivot named
  const Matrix<C> sing = Matrix<C>::from_rows({{C(1, 1), C(2, 2)}, {C(1, 1), C(2, 2)}});
  try {
    (void)solve<C>(sing.view(), Matrix<C>::from_rows({{C(1)}, {C(0, 1)}}).view(), {.precision = Precision::Mixed});
    FAIL() << "no error";
  } catch (const SingularMatrix& err) {
    EXPECT_EQ(err.pivot(), 2);
  }
  // refused by name: complex64 data, tensor-core factors, the randomized LU
  const Matrix<std::complex<float>> narrow(2, 2);
  try {
    (void)inv<std::complex<float>>(narrow.view(), {.precision = Precision::Mixed});
    FAIL() << "no error";
  } catch (const InvalidArgument& err) {
    EXPECT_TRUE(contains(err.what(), "complex128 matrix")) << err.what();
  }
  EXPECT_THROW((void)inv<C>(h.view(), {.precision = Precision::Mixed, .factor_precision = FactorPrecision::TF32}),
               InvalidArgument);
  EXPECT_THROW((void)inv<C>(h.view(), {.method = Method::RBT, .precision = Precision::Mixed}), InvalidArgument);
}

TYPED_TEST(ComplexDense, StacksByTheBatchedFamily) { testing::expect_complex_batches<TypeParam>(Device::cpu(), 300); }

}  // namespace
}  // namespace linv
