// Every inversion/solve method on every matrix kind, several sizes, float and double: either the
// result meets the scaled accuracy bounds, or the documented error is raised.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "linv/accuracy.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "support/dense_checks.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

using testing::eps;
using testing::kForwardThreshold;
using testing::kResidualThreshold;

// Ok: must succeed; OkOrNumerical: may fail with a NumericalError, and must be accurate if it does not
// (Gauss-Seidel on a matrix it is not guaranteed for: it may converge by luck on small sizes).
enum class Outcome { Ok, OkOrNumerical, Singular, NotSymmetricOrPD, ZeroDiagonal };

// Cholesky methods succeed exactly when the matrix is symmetric and LAPACK's float64 potrf succeeds.
template <Real T>
bool cholesky_applies(const Matrix<T>& A) {
  const Structure s = detect_structure<T>(A.view());
  if (s != Structure::Symmetric && s != Structure::Diagonal) return false;
  try {
    Matrix<double> a = A.template cast<double>();
    Cholesky<double> c(a.view());
    return c.rcond() >= eps<T>();
  } catch (const NotPositiveDefinite&) {
    return false;
  }
}

// `cond` is the exact 1-norm condition number of A from a float64 inverse (infinity when singular).
// Matrices within a factor 100 of singular to working precision (cond ~ 1/eps) may go either way.
template <Real T>
Outcome expected(MatrixKind kind, Method method, const Matrix<T>& A, double cond) {
  const index n = A.rows();
  if (n == 0) return Outcome::Ok;
  const bool symmetric_pd = kind == MatrixKind::SPD || kind == MatrixKind::Identity;
  const bool singular = cond * eps<T>() > 100;
  if (cond * eps<T>() > 0.01 && !singular) return Outcome::OkOrNumerical;
  const bool dominant = kind == MatrixKind::Band || kind == MatrixKind::Sparse || kind == MatrixKind::Identity;
  switch (method) {
    case Method::Cholesky:
    case Method::CholeskyGETS:
      if (symmetric_pd) return singular ? Outcome::Singular : Outcome::Ok;
      return cholesky_applies(A) ? Outcome::Ok : Outcome::NotSymmetricOrPD;
    case Method::GaussSeidel:
      if (kind == MatrixKind::Hollow) return Outcome::ZeroDiagonal;
      if (dominant) return Outcome::Ok;
      return Outcome::OkOrNumerical;
    default:
      return singular ? Outcome::Singular : Outcome::Ok;
  }
}

// Runs one method on one matrix: checks the documented failure, or returns the solution to be checked.
template <Real T>
std::optional<Solution<T>> run_expecting(Outcome outcome, const std::function<Solution<T>()>& run) {
  switch (outcome) {
    case Outcome::Singular:
      EXPECT_THROW(run(), SingularMatrix);
      return std::nullopt;
    case Outcome::NotSymmetricOrPD:
    case Outcome::ZeroDiagonal:
      EXPECT_THROW(run(), NumericalError);
      return std::nullopt;
    case Outcome::Ok:
    case Outcome::OkOrNumerical:
      try {
        return run();
      } catch (const NumericalError& e) {
        if (outcome == Outcome::Ok) ADD_FAILURE() << e.what();
        return std::nullopt;
      }
  }
  return std::nullopt;
}

// The float64 reference (LAPACK LU on the same, rounded, matrix) and the exact 1-norm condition number;
// no reference and infinite cond for the kinds that are singular by construction.
struct Reference {
  std::optional<Matrix<double>> x;
  double cond = 1.0;
};

template <Real T>
Reference reference(MatrixKind kind, const Matrix<T>& A, const Matrix<T>* B) {
  const index n = A.rows();
  Reference r;
  if (n == 0) return r;
  r.cond = std::numeric_limits<double>::infinity();
  if (kind == MatrixKind::Singular || (kind == MatrixKind::Hollow && n == 1)) return r;
  Matrix<double> Ad = A.template cast<double>();
  LU<double> lu(Ad.view());
  Matrix<double> inverse = lu.inverse();
  r.cond = norm1<double>(Ad.view()) * norm1<double>(inverse.view());
  r.x = B ? lu.solve(B->template cast<double>().view()) : std::move(inverse);
  return r;
}

constexpr MatrixKind kKinds[] = {MatrixKind::Random, MatrixKind::SPD,      MatrixKind::Band,    MatrixKind::Hollow,
                                 MatrixKind::Sparse, MatrixKind::Identity, MatrixKind::IllCond, MatrixKind::Singular};
constexpr Method kMethods[] = {Method::Auto,        Method::LU,           Method::CALU,       Method::Cholesky,
                               Method::GaussJordan, Method::CholeskyGETS, Method::GaussSeidel};
constexpr index kSizes[] = {0, 1, 2, 7, 197, 300};

template <Real T>
class Methods : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Methods, Types);

TYPED_TEST(Methods, InverseOnEveryKind) {
  using T = TypeParam;
  std::uint64_t salt = 100;
  for (MatrixKind kind : kKinds)
    for (index n : kSizes) {
      const auto seed = testing::case_seed(salt++);
      LINV_TRACE_SEED(seed);
      SCOPED_TRACE(std::string(to_string(kind)) + " n=" + std::to_string(n) + " " + type_name<T>());
      Matrix<T> A = generate<T>(kind, n, {.seed = seed});
      const Reference ref = reference<T>(kind, A, nullptr);
      for (Method method : kMethods) {
        SCOPED_TRACE(std::string("method ") + std::string(to_string(method)));
        const std::optional<Solution<T>> result = run_expecting<T>(expected<T>(kind, method, A, ref.cond), [&] {
          return inv<T>(A.view(), {.method = method, .compute_residual = true});
        });
        if (!result) continue;
        const Solution<T>& s = *result;
        ASSERT_EQ(s.x.rows(), n);
        ASSERT_TRUE(testing::all_finite<T>(s.x.view()));
        // Direct methods are backward stable in one residual (Du Croz & Higham: LU-based inverses bound
        // ||XA - I||, Gauss-Jordan ||AX - I||); assert the scaled residual the method guarantees.
        const double right = s.report.scaled_residual;
        const double left = scaled_left_residual_inverse<T>(A.view(), s.x.view(), eps<T>());
        EXPECT_LE(std::min(right, left), kResidualThreshold) << "right " << right << " left " << left;
        if (ref.x) {
          const double fwd = testing::relative_difference<T, double>(s.x.view(), ref.x->view());
          EXPECT_LE(fwd, kForwardThreshold * static_cast<double>(n) * eps<T>() * ref.cond) << "cond " << ref.cond;
        }
        EXPECT_NE(s.report.method, Method::Auto);
      }
    }
}

TYPED_TEST(Methods, SolveOnEveryKind) {
  using T = TypeParam;
  std::uint64_t salt = 500;
  for (MatrixKind kind : kKinds)
    for (index n : kSizes) {
      const auto seed = testing::case_seed(salt++);
      LINV_TRACE_SEED(seed);
      SCOPED_TRACE(std::string(to_string(kind)) + " n=" + std::to_string(n) + " " + type_name<T>());
      Matrix<T> A = generate<T>(kind, n, {.seed = seed});
      Matrix<T> B = random_uniform<T>(n, 3, seed ^ 0x5eed);
      const Reference ref = reference<T>(kind, A, &B);
      for (Method method : kMethods) {
        SCOPED_TRACE(std::string("method ") + std::string(to_string(method)));
        const std::optional<Solution<T>> result = run_expecting<T>(expected<T>(kind, method, A, ref.cond), [&] {
          return solve<T>(A.view(), B.view(), {.method = method, .compute_residual = true});
        });
        if (!result) continue;
        const Solution<T>& s = *result;
        ASSERT_EQ(s.x.rows(), n);
        ASSERT_EQ(s.x.cols(), 3);
        // A solve through an explicit inverse is forward stable (error ~ n eps cond, checked below) but
        // not backward stable: its residual can exceed LU's by up to cond(A) (Higham, ASNA ch. 14).
        if (method != Method::GaussJordan) {
          EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
        }
        if (ref.x) {
          const double fwd = testing::relative_difference<T, double>(s.x.view(), ref.x->view());
          EXPECT_LE(fwd, kForwardThreshold * static_cast<double>(n) * eps<T>() * ref.cond) << "cond " << ref.cond;
        }
      }
    }
}

TEST(Methods, AutoReportsWhatItPicked) {
  const auto seed = testing::case_seed(900);
  LINV_TRACE_SEED(seed);
  auto spd = generate<double>(MatrixKind::SPD, 30, {.seed = seed});
  auto r = inv<double>(spd.view());
  EXPECT_EQ(r.report.method, Method::Cholesky);
  EXPECT_NE(r.report.method_reason.find("positive definite"), std::string::npos);

  auto general = generate<double>(MatrixKind::Random, 30, {.seed = seed});
  EXPECT_EQ(inv<double>(general.view()).report.method, Method::LU);

  Matrix<double> lower = Cholesky<double>(spd.view()).L();
  r = inv<double>(lower.view());
  EXPECT_EQ(r.report.method, Method::Triangular);
  EXPECT_NE(r.report.method_reason.find("lower"), std::string::npos);

  // symmetric but indefinite: Auto tries Cholesky, falls back to LU, and says so
  Matrix<double> indefinite = spd.clone();
  for (index i = 0; i < 30; ++i) indefinite(i, i) -= 2.0;
  r = inv<double>(indefinite.view(), {.compute_residual = true});
  EXPECT_EQ(r.report.method, Method::LU);
  EXPECT_NE(r.report.method_reason.find("not positive definite"), std::string::npos);
  EXPECT_LE(std::min(r.report.scaled_residual,
                     scaled_left_residual_inverse<double>(indefinite.view(), r.x.view(), eps<double>())),
            kResidualThreshold);
}

TEST(Methods, IllConditionedIsRefusedUnlessAllowed) {
  const auto seed = testing::case_seed(903);
  LINV_TRACE_SEED(seed);
  // cond 1e9 in float32: singular to working precision (rcond far below 1.2e-7), yet not singular
  const Matrix<float> a = generate<float>(MatrixKind::IllCond, 60, {.cond = 1e9, .seed = seed});
  for (Method m : {Method::LU, Method::GaussJordan}) {
    SCOPED_TRACE(std::string(to_string(m)));
    EXPECT_THROW((void)inv<float>(a.view(), {.method = m}), SingularMatrix);
    auto s = inv<float>(a.view(), {.method = m, .compute_residual = true, .allow_ill_conditioned = true});
    EXPECT_LT(s.report.rcond, eps<float>());
    ASSERT_FALSE(s.report.notes.empty());
    EXPECT_TRUE(testing::contains(s.report.notes.back(), "singular to working precision"));
    // backward stable all the same: one of the two residuals is small
    EXPECT_LE(std::min(s.report.scaled_residual, scaled_left_residual_inverse<float>(a.view(), s.x.view(), eps<float>())),
              kResidualThreshold);
  }
  // exactly zero pivots are refused whatever the caller allows
  Matrix<float> z = Matrix<float>::from_rows({{1, 2}, {2, 4}});
  EXPECT_THROW((void)inv<float>(z.view(), {.allow_ill_conditioned = true}), SingularMatrix);
}

TEST(Methods, ExplicitCholeskyOnIndefiniteMatrixNamesTheMinor) {
  Matrix<double> a = Matrix<double>::from_rows({{4, 2, 0}, {2, 1, 3}, {0, 3, 5}});  // minor 2 is 4*1-2*2 = 0
  try {
    (void)inv<double>(a.view(), {.method = Method::Cholesky});
    FAIL() << "no error";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.minor(), 2);
    EXPECT_EQ(e.exit_code(), ExitCode::numerical);
    EXPECT_NE(std::string(e.what()).find("order 2"), std::string::npos);
  }
}

TEST(Methods, GaussSeidelReportsIterationsAndFailsClearly) {
  const auto seed = testing::case_seed(901);
  LINV_TRACE_SEED(seed);
  auto band = generate<double>(MatrixKind::Band, 50, {.seed = seed});
  auto r = inv<double>(band.view(), {.method = Method::GaussSeidel});
  EXPECT_GT(r.report.iterations, 0);
  EXPECT_EQ(r.report.stop, StopReason::Converged);
  // an iteration limit too small to converge
  try {
    (void)inv<double>(band.view(), {.method = Method::GaussSeidel, .max_iterations = 2});
    FAIL() << "no error";
  } catch (const NoConvergence& e) {
    EXPECT_EQ(e.iterations(), 2);
    EXPECT_EQ(e.exit_code(), ExitCode::numerical);
  }
}

TEST(Methods, MixedLeastSquaresUsesNormalEquationsOnlyWhenWellConditioned) {
  const auto seed = testing::case_seed(903);
  LINV_TRACE_SEED(seed);
  const index m = 300, n = 40;
  const Matrix<double> A = random_uniform<double>(m, n, seed, -1.0, 1.0);
  const Matrix<double> B = random_uniform<double>(m, 2, seed + 1, -1.0, 1.0);
  const LstsqOptions mixed{.precision = Precision::Mixed, .compute_residual = true};
  const Solution<double> ne = lstsq<double>(A.view(), B.view(), mixed);
  EXPECT_EQ(ne.report.method, Method::NormalEquations);
  EXPECT_EQ(ne.report.stop, StopReason::Converged);
  EXPECT_LE(ne.report.scaled_residual, kResidualThreshold);
  const Solution<double> qr = lstsq<double>(A.view(), B.view());
  EXPECT_LE((testing::relative_difference<double, double>(ne.x.view(), qr.x.view())), 1e-10);  // cond(A) ~ 3

  // an ill-conditioned A (one column scaled by 1e-6): QR, and the report says why
  Matrix<double> ill = Matrix<double>::copy_of(A.view());
  for (index i = 0; i < m; ++i) ill(i, 7) *= 1e-6;
  const Solution<double> fallback = lstsq<double>(ill.view(), B.view(), mixed);
  EXPECT_EQ(fallback.report.method, Method::QR);
  ASSERT_FALSE(fallback.report.notes.empty());
  EXPECT_TRUE(testing::contains(fallback.report.notes[0], "normal equations not used"));
  EXPECT_LE(fallback.report.scaled_residual, kResidualThreshold);

  // rank deficient (a repeated column): QR, with the rank
  Matrix<double> deficient = Matrix<double>::copy_of(A.view());
  for (index i = 0; i < m; ++i) deficient(i, 3) = deficient(i, 2);
  const Solution<double> rd = lstsq<double>(deficient.view(), B.view(), mixed);
  EXPECT_EQ(rd.report.method, Method::QR);
  EXPECT_EQ(rd.report.rank, n - 1);

  const Matrix<float> f = random_uniform<float>(10, 3, seed);
  EXPECT_THROW((void)lstsq<float>(f.view(), f.view(), {.precision = Precision::Mixed}), InvalidArgument);
}

TEST(Methods, MixedPrecisionReachesDoubleAccuracy) {
  const auto seed = testing::case_seed(902);
  LINV_TRACE_SEED(seed);
  for (MatrixKind kind : {MatrixKind::Random, MatrixKind::SPD}) {
    auto a = generate<double>(kind, 120, {.seed = seed});
    auto b = random_uniform<double>(120, 2, seed + 1);
    auto s = solve<double>(a.view(), b.view(), {.precision = Precision::Mixed, .compute_residual = true});
    EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    EXPECT_LE(s.report.backward_error, std::sqrt(120.0) * eps<double>());  // LAPACK's stopping test
    EXPECT_NE(s.report.precision.find("mixed"), std::string::npos);
    auto i = inv<double>(a.view(), {.precision = Precision::Mixed, .compute_residual = true});
    EXPECT_LE(std::min(i.report.scaled_residual, scaled_left_residual_inverse<double>(a.view(), i.x.view(), eps<double>())),
              kResidualThreshold);
  }
  // where A is singular to float32's working precision, float32 factors cannot judge it: float64 factors,
  // judges (as the float64 path would) and solves, and the report says so
  for (double cond : {1e9, 1e12}) {
    auto ill = generate<double>(MatrixKind::IllCond, 150, {.cond = cond, .seed = seed});
    auto rhs = random_uniform<double>(150, 2, seed + 3);
    auto r = solve<double>(ill.view(), rhs.view(), {.method = Method::LU, .precision = Precision::Mixed,
                                                    .compute_residual = true});
    EXPECT_EQ(r.report.stop, StopReason::FellBack) << "cond " << cond;
    EXPECT_LE(r.report.scaled_residual, kResidualThreshold) << "cond " << cond;
    ASSERT_FALSE(r.report.notes.empty());
    EXPECT_TRUE(testing::contains(r.report.notes[0], "singular to float32's working precision"));
  }
  // an exactly singular matrix is refused as the float64 path refuses it, with a consistent right-hand side
  // (refinement converges there: a null direction does not show in the residual) or an inconsistent one
  // (X grows without bound)
  {
    auto singular = generate<double>(MatrixKind::Random, 60, {.seed = seed});
    for (index j = 0; j < 60; ++j) singular(59, j) = singular(0, j) + singular(1, j);
    auto inside = Matrix<double>(60, 1), outside = random_uniform<double>(60, 1, seed + 4);
    gemm<double>(Op::None, Op::None, 1.0, singular.view(), random_uniform<double>(60, 1, seed + 5).view(), 0.0,
                 inside.view());
    for (const Matrix<double>* rhs : {&inside, &outside}) {
      EXPECT_THROW(solve<double>(singular.view(), rhs->view()), SingularMatrix);
      EXPECT_THROW(solve<double>(singular.view(), rhs->view(), {.method = Method::LU, .precision = Precision::Mixed}),
                   SingularMatrix);
    }
  }
  // entries beyond float32's range are scaled by a power of two into it first, exactly, and refined as any
  auto huge = generate<double>(MatrixKind::Random, 80, {.seed = seed});
  for (index k = 0; k < huge.size(); ++k) huge.data()[k] *= 1e39;
  auto b = random_uniform<double>(80, 1, seed + 2);
  auto scaled = solve<double>(huge.view(), b.view(), {.method = Method::LU, .precision = Precision::Mixed, .compute_residual = true});
  EXPECT_EQ(scaled.report.stop, StopReason::Converged);
  EXPECT_LE(scaled.report.scaled_residual, kResidualThreshold);
  // Wilkinson's growth matrix of order 140 grows 2^139-fold under partial pivoting, past float32's range: the
  // float32 factorization overflows, it falls back to float64 (which turns to Householder QR), and the
  // report says so
  const index w = 140;
  Matrix<double> growth(w, w);
  for (index i = 0; i < w; ++i) {
    for (index j = 0; j < i; ++j) growth(i, j) = -1;
    growth(i, i) = 1;
    growth(i, w - 1) = 1;
  }
  const auto rhs_w = random_uniform<double>(w, 1, seed + 2);
  auto s = solve<double>(growth.view(), rhs_w.view(), {.method = Method::LU, .precision = Precision::Mixed, .compute_residual = true});
  EXPECT_EQ(s.report.stop, StopReason::FellBack);
  EXPECT_FALSE(s.report.notes.empty());
  EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
  // float matrices cannot be refined "to float64"; other methods have no mixed variant
  auto f = generate<float>(MatrixKind::Random, 5, {.seed = seed});
  EXPECT_THROW(solve<float>(f.view(), f.view(), {.precision = Precision::Mixed}), InvalidArgument);
  EXPECT_THROW(inv<double>(huge.view(), {.method = Method::GaussJordan, .precision = Precision::Mixed}), InvalidArgument);
  // tensor-core factorizations are a GPU feature
  EXPECT_THROW(solve<double>(huge.view(), b.view(), {.precision = Precision::Mixed, .factor_precision = FactorPrecision::TF32}),
               InvalidArgument);
  EXPECT_EQ(parse_factor_precision("bf16"), FactorPrecision::BFloat16);
  EXPECT_EQ(parse_factor_precision("auto"), FactorPrecision::Auto);
  // a factor precision without mixed precision is a mistake, not something to ignore
  EXPECT_THROW(solve<double>(huge.view(), b.view(), {.factor_precision = FactorPrecision::Float32}), InvalidArgument);
  EXPECT_THROW((void)parse_factor_precision("fp8"), InvalidArgument);
  EXPECT_TRUE(std::isnan(s.report.backward_error)) << "fell back: no refinement error to report";
}

// Mixed precision is "float64 accuracy", so its forward error is within 10x of the float64 solve's on the
// same problem at every condition number up to 1e10 (or it factored in float64 and said so). LAPACK's
// backward test alone stopped refinement 10-20x short of that at cond 1e4 to 1e8. The true solution is
// known: b = A x rounded, the same b for both.
TEST(Methods, MixedPrecisionForwardErrorIsFloat64s) {
  const index n = 200;
  for (MatrixKind kind : {MatrixKind::IllCond, MatrixKind::SPD})
    for (double cond : {1e2, 1e4, 1e6, 1e8, 1e10}) {
      const auto seed = testing::case_seed(903 + static_cast<std::uint64_t>(std::log10(cond)));
      LINV_TRACE_SEED(seed);
      SCOPED_TRACE(std::string(to_string(kind)) + " cond " + std::to_string(cond));
      const Matrix<double> a = generate<double>(kind, n, {.cond = cond, .seed = seed});
      const Matrix<double> x = random_uniform<double>(n, 3, seed + 1);
      const Matrix<double> b = matmul<double>(a.view(), x.view());
      const SolveOptions o{.allow_ill_conditioned = true};
      const Matrix<double> native = solve<double>(a.view(), b.view(), o).x;
      const Solution<double> mixed = solve<double>(a.view(), b.view(), {.precision = Precision::Mixed,
                                                                        .allow_ill_conditioned = true});
      const double native_error = testing::relative_difference<double, double>(native.view(), x.view());
      const double mixed_error = testing::relative_difference<double, double>(mixed.x.view(), x.view());
      EXPECT_LE(mixed_error, 10 * std::max(native_error, n * eps<double>())) << mixed.report.to_json();
    }
}

}  // namespace
}  // namespace linv
