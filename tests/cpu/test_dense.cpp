// The dense API: decomposition objects, triangular inverse, least squares, pseudoinverse, products,
// and the errors for bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>
#include <string>

#include "common/lapack.hpp"
#include "common/norm_estimate.hpp"
#include "kernels/backend.hpp"
#include "linv/accuracy.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "support/adversarial.hpp"
#include "support/dense_checks.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

using testing::eps;
using testing::kResidualThreshold;

template <Real T>
class Dense : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Dense, Types);

using testing::contains;

TYPED_TEST(Dense, LUDeterminantMatchesProductOfFactors) {
  using T = TypeParam;
  Matrix<T> a = Matrix<T>::from_rows({{0, 2, 1}, {3, 1, 4}, {1, 5, 9}});  // det = -(... ) computed below
  // det by cofactors: 0*(1*9-4*5) - 2*(3*9-4*1) + 1*(3*5-1*1) = -46 + 14 = -32
  LU<T> lu(a.view());
  EXPECT_EQ(lu.determinant().sign, -1);
  EXPECT_NEAR(lu.determinant().value(), -32.0, 32.0 * 10 * eps<T>());
  EXPECT_FALSE(lu.is_singular());
  EXPECT_GT(lu.rcond(), 0.01);
}

TYPED_TEST(Dense, LUOfSingularMatrixHasZeroDeterminantAndRefusesToSolve) {
  using T = TypeParam;
  Matrix<T> a = Matrix<T>::from_rows({{1, 2, 3}, {2, 4, 6}, {1, 0, 1}});
  LU<T> lu(a.view());
  EXPECT_TRUE(lu.is_singular() || lu.rcond() < eps<T>());
  if (lu.is_singular()) {
    EXPECT_EQ(lu.determinant().sign, 0);
    EXPECT_EQ(lu.determinant().value(), 0.0);
  }
  try {
    (void)lu.inverse();
    FAIL() << "no error";
  } catch (const SingularMatrix& e) {
    EXPECT_GE(e.pivot(), 1);
    EXPECT_LE(e.pivot(), 3);
    EXPECT_TRUE(contains(e.what(), "pivot"));
    EXPECT_EQ(e.exit_code(), ExitCode::numerical);
  }
}

TYPED_TEST(Dense, ExactlyZeroPivotIsNamed) {
  using T = TypeParam;
  Matrix<T> a = Matrix<T>::from_rows({{1, 2, 0}, {3, 4, 0}, {5, 6, 0}});  // third column zero: pivot 3
  try {
    (void)inv<T>(a.view(), {.method = Method::LU});
    FAIL() << "no error";
  } catch (const SingularMatrix& e) {
    EXPECT_EQ(e.pivot(), 3);
    EXPECT_TRUE(contains(e.what(), "pivot 3 is exactly zero")) << e.what();
  }
  for (Method m : {Method::GaussJordan, Method::CALU}) {
    try {
      (void)inv<T>(a.view(), {.method = m});
      FAIL() << "no error from " << to_string(m);
    } catch (const SingularMatrix& e) {
      EXPECT_EQ(e.pivot(), 3) << to_string(m);
    }
  }
}

// Where one tile of the tournament holds every row of the panel (n <= kTile), its one game is partial
// pivoting on the panel: the same pivots as LAPACK.
TYPED_TEST(Dense, TournamentPivotingIsPartialPivotingWithinOneTile) {
  using T = TypeParam;
  const Matrix<T> a = random_uniform<T>(200, 200, testing::case_seed(31));
  const LU<T> partial(a.view()), tournament(a.view(), Pivoting::Tournament);
  EXPECT_EQ(tournament.pivoting(), Pivoting::Tournament);
  EXPECT_TRUE(tournament.fallback_reason().empty());
  EXPECT_EQ(tournament.pivots(), partial.pivots());
}

// Several tiles and rounds (2100 rows: 9 leaves, then 2 games, then the final), both factorization
// objects and the methods: solutions as accurate as partial pivoting's, the growth reported.
TYPED_TEST(Dense, TournamentLUIsAsAccurateAsPartialPivoting) {
  using T = TypeParam;
  const index n = 2100;
  const Matrix<T> a = random_uniform<T>(n, n, testing::case_seed(32));
  const Matrix<T> b = random_uniform<T>(n, 2, testing::case_seed(33));
  const LU<T> lu(a.view(), Pivoting::Tournament);
  EXPECT_EQ(lu.pivoting(), Pivoting::Tournament);
  EXPECT_GT(lu.growth(), 1.0);
  EXPECT_LE(lu.growth(), lu_growth_limit(n));
  const Matrix<T> x = lu.solve(b.view());
  EXPECT_LE(scaled_residual_solve<T>(a.view(), x.view(), b.view(), eps<T>()), kResidualThreshold);
  // float32 at this order can be singular to working precision; the solve is still backward stable
  const Solution<T> s =
      solve<T>(a.view(), b.view(), {.method = Method::CALU, .compute_residual = true, .allow_ill_conditioned = true});
  EXPECT_EQ(s.report.method, Method::CALU);
  EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
  EXPECT_EQ(s.report.growth, lu.growth());
  EXPECT_TRUE(contains(s.report.to_json(), "\"growth\"")) << s.report.to_json();
  if constexpr (std::is_same_v<T, double>) {  // n eps cond is far below 1: the determinant's sign is exact
    const LU<T> partial(a.view());
    EXPECT_EQ(lu.determinant().sign, partial.determinant().sign);
  }
}

// Wilkinson's matrix (ones on the diagonal and in the last column, -1 below the diagonal) makes both
// pivotings grow 2^(n-1): the tournament gives way to partial pivoting and says so.
TYPED_TEST(Dense, TournamentFallsBackToPartialPivotingOnGrowth) {
  using T = TypeParam;
  const index n = 40;
  Matrix<T> a(n, n);
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < n; ++i) a(i, j) = i == j || j == n - 1 ? T(1) : i > j ? T(-1) : T(0);
  const LU<T> lu(a.view(), Pivoting::Tournament);
  EXPECT_EQ(lu.pivoting(), Pivoting::Partial);
  EXPECT_TRUE(contains(lu.fallback_reason(), "grew the entries")) << lu.fallback_reason();
  EXPECT_NEAR(lu.growth(), std::ldexp(1.0, static_cast<int>(n - 1)), std::ldexp(1.0, static_cast<int>(n - 1)) * 1e-6);
  const Solution<T> s = inv<T>(a.view(), {.method = Method::CALU, .allow_ill_conditioned = true});
  // partial pivoting grows as much here (2^(n-1)), so Householder QR inverts, and the report says both
  EXPECT_EQ(s.report.method, Method::QR);
  bool refactored = false, qr = false;
  for (const std::string& note : s.report.notes) {
    refactored = refactored || contains(note, "factored again with partial pivoting");
    qr = qr || contains(note, "Householder QR");
  }
  EXPECT_TRUE(refactored);
  EXPECT_TRUE(qr);
}

// Every tournament-pivoted result on the matrices that stress pivoting meets the residual bound, or the
// factorization gave way to partial pivoting and the report says so, or the matrix is singular to working
// precision and refused (Kahan's: its solutions overflow float32).
TYPED_TEST(Dense, TournamentOnAdversarialMatrices) {
  using T = TypeParam;
  testing::for_each_adversary<T>(34, [](const testing::Adversary& adv, index n, const Matrix<T>& a, const Matrix<T>& b) {
    const LU<T> lu(a.view(), Pivoting::Tournament);
    std::optional<Solution<T>> solution;
    try {
      solution = solve<T>(a.view(), b.view(), {.method = Method::CALU, .compute_residual = true});
    } catch (const SingularMatrix&) {
      EXPECT_LT(lu.rcond(), eps<T>());
      return;
    }
    const Solution<T>& s = *solution;
    EXPECT_EQ(s.report.growth, lu.growth());
    if (lu.pivoting() == Pivoting::Tournament) {
      EXPECT_LE(lu.growth(), lu_growth_limit(n));
      EXPECT_EQ(s.report.method, Method::CALU);
      EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    } else {
      EXPECT_FALSE(lu.fallback_reason().empty());
      // partial pivoting, or Householder QR where partial pivoting's growth was past trusting too
      EXPECT_TRUE(s.report.method == Method::LU || s.report.method == Method::QR) << to_string(s.report.method);
      bool said = false;
      for (const std::string& note : s.report.notes) said = said || contains(note, "partial pivoting");
      EXPECT_TRUE(said);
      EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    }
    if (!adv.growth_explodes) {
      EXPECT_EQ(lu.pivoting(), Pivoting::Tournament);
    }
  });
}

// The accuracy promise of inv and solve: on every matrix that stresses pivoting and with every method,
// a result comes back within the residual bound (through refinement or Householder QR, said in the
// report), or the matrix is refused as singular to working precision. Where partial pivoting's growth
// explodes (Wilkinson's and Foster's matrices), Householder QR solves, and the report says why.
TYPED_TEST(Dense, InverseAndSolveKeepTheResidualPromise) {
  using T = TypeParam;
  testing::for_each_adversary<T>(36, [](const testing::Adversary& adv, index, const Matrix<T>& a, const Matrix<T>& b) {
    for (Method m : {Method::Auto, Method::LU, Method::CALU, Method::GaussJordan}) {
      SCOPED_TRACE(std::string(to_string(m)));
      const SolveOptions o{.method = m, .compute_residual = true};
      for (bool inverse : {false, true}) {
        std::optional<Solution<T>> s;
        try {
          s = inverse ? inv<T>(a.view(), o) : solve<T>(a.view(), b.view(), o);
        } catch (const SingularMatrix&) {
          EXPECT_LT(LU<T>(a.view()).rcond(), 100 * eps<T>()) << "refused although well conditioned";
          continue;
        }
        EXPECT_LE(s->report.scaled_residual, kResidualThreshold) << (inverse ? "inverse" : "solve");
        const bool through_lu = m != Method::GaussJordan;
        if (adv.growth_explodes && through_lu) {
          EXPECT_EQ(s->report.method, Method::QR);
          bool said = false;
          for (const std::string& note : s->report.notes) said = said || contains(note, "Householder QR");
          EXPECT_TRUE(said);
        }
      }
    }
  });
}

// Wilkinson's growth matrix with columns scaled in [0.5, 2] (condition number about 50 at order 120, 2000
// at 2048): partial pivoting's growth 2^(n-1) once left a 68 % error behind a success, and at order 2048
// overflowed U and called the matrix singular. Householder QR solves it to the bound, and the rcond
// reported is R's, of the right size.
TYPED_TEST(Dense, WilkinsonGrowthMatrixIsSolvedByHouseholderQR) {
  using T = TypeParam;
  for (index n : {index{100}, index{120}, index{2048}}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    Matrix<T> a = testing::adversary<T>("wilkinson", n, 0);
    const Matrix<T> scale = random_uniform<T>(1, n, testing::case_seed(37), T(0.5), T(2));
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) a(i, j) *= scale(0, j);
    const Matrix<T> b = random_uniform<T>(n, 1, testing::case_seed(38));
    const Solution<T> s = solve<T>(a.view(), b.view(), {.compute_residual = true});
    EXPECT_EQ(s.report.method, Method::QR);
    EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    EXPECT_GT(s.report.rcond, 1e-6);  // cond(A) is at most a few thousand
    Matrix<double> a64(n, n), b64(n, 1);
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) a64(i, j) = a(i, j);
    for (index i = 0; i < n; ++i) b64(i, 0) = b(i, 0);
    const Matrix<double> x = solve<double>(a64.view(), b64.view(), {}).x;  // float64 Householder QR too
    double err = 0, xn = 0;
    for (index i = 0; i < n; ++i) {
      err = std::max(err, std::abs(static_cast<double>(s.x(i, 0)) - x(i, 0)));
      xn = std::max(xn, std::abs(x(i, 0)));
    }
    EXPECT_LE(err / xn, 30.0 * static_cast<double>(n) * eps<T>() / s.report.rcond);
  }
}

// The four ways of applying the butterflies W (kernels::Dense::butterflies) agree: W X = (X^T W^T)^T and
// W^T X = (X^T W)^T, and W^T W is W's Gram matrix, near the identity (factors e^(+-0.05)).
TYPED_TEST(Dense, ButterfliesAgreeFromEitherSide) {
  using T = TypeParam;
  const kernels::Dense<T>& dense = kernels::dense<T>(Device::cpu());
  for (index n : {1, 2, 3, 7, 64, 101}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const Matrix<T> r = random_uniform<T>(n, kernels::kButterflyDepth, testing::case_seed(40 + n));
    Matrix<T> r_pos(n, kernels::kButterflyDepth);  // the factors are positive: 1.5 + u in [0.5, 2.5]
    for (index j = 0; j < r.cols(); ++j)
      for (index i = 0; i < n; ++i) r_pos(i, j) = T(1.5) + r(i, j);
    Matrix<T> w = Matrix<T>::identity(n), wt = Matrix<T>::identity(n), w_right = Matrix<T>::identity(n),
              wt_right = Matrix<T>::identity(n);
    dense.butterflies(r_pos.view(), Side::Left, Op::None, w.view());            // W
    dense.butterflies(r_pos.view(), Side::Left, Op::Transpose, wt.view());      // W^T
    dense.butterflies(r_pos.view(), Side::Right, Op::None, w_right.view());     // W
    dense.butterflies(r_pos.view(), Side::Right, Op::Transpose, wt_right.view());  // W^T
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) {
        const double tolerance = 8 * eps<T>();
        EXPECT_NEAR(w(i, j), w_right(i, j), tolerance);
        EXPECT_NEAR(wt(i, j), wt_right(i, j), tolerance);
        EXPECT_NEAR(w(i, j), wt(j, i), tolerance);
      }
  }
}

// Random butterflies, then LU without pivoting, then refinement: solutions as accurate as partial
// pivoting's, inverses within the bound, the same determinant and a comparable rcond; orders that are
// odd, prime or 1 exercise the butterflies' odd blocks.
TYPED_TEST(Dense, RandomizedLUIsAsAccurateAsPartialPivoting) {
  using T = TypeParam;
  for (index n : {1, 2, 3, 37, 300, 1001}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const auto seed = testing::case_seed(60 + n);
    LINV_TRACE_SEED(seed);
    const Matrix<T> a = random_uniform<T>(n, n, seed);
    const Matrix<T> b = random_uniform<T>(n, 3, seed + 1);
    const LU<T> lu(a.view(), Pivoting::Randomized), partial(a.view());
    ASSERT_EQ(lu.pivoting(), Pivoting::Randomized) << lu.fallback_reason();
    try {  // refinement reaches partial pivoting's backward error, or says it could not
      EXPECT_LE(scaled_residual_solve<T>(a.view(), lu.solve(b.view()).view(), b.view(), eps<T>()), kResidualThreshold);
      EXPECT_LE(lu.refinement_steps(), LU<T>::kMaxRefinementSteps);
    } catch (const NumericalError& e) {
      EXPECT_TRUE(contains(e.what(), "refinement stalled")) << e.what();
    }
    try {  // the inverse by Newton steps reaches partial pivoting's accuracy, or says it could not
      const Matrix<T> x = lu.inverse();
      const double residual = scaled_residual_inverse<T>(a.view(), x.view(), eps<T>());
      EXPECT_LE(residual, kResidualThreshold);
      // as accurate as getri's (1e-4 against 2e-3 measured at orders 500-2000 in float64)
      const double partials = scaled_residual_inverse<T>(a.view(), partial.inverse().view(), eps<T>());
      // 2: a few roundings of a 1 x 1 or 2 x 2 matrix, where the butterflies' scaling and the division each
      // round once (at n = 1 a residual of 1 + 1e-16 against partial pivoting's 0 failed)
      EXPECT_LE(residual, std::max(10 * partials, 2.0)) << "growth " << lu.growth() << ", residual " << residual;
      EXPECT_GE(lu.refinement_steps(), 1);
      EXPECT_LE(lu.refinement_steps(), LU<T>::kMaxRefinementSteps);
    } catch (const NumericalError& e) {
      EXPECT_TRUE(contains(e.what(), "Newton")) << e.what();
    }
    const Solution<T> inverse = inv<T>(a.view(), {.method = Method::RBT, .compute_residual = true,
                                                   .allow_ill_conditioned = true});
    EXPECT_LE(inverse.report.scaled_residual, kResidualThreshold) << "growth " << lu.growth();
    // the determinants carry n eps cond (times the growth, without pivoting) of relative error: compared
    // where that is small (float32 at order 1001 is not: one run's signs differed)
    const double cond = 1 / partial.rcond(), error = 10 * n * eps<T>() * cond * std::max(1.0, lu.growth());
    if (error < 0.1) {
      EXPECT_EQ(lu.determinant().sign, partial.determinant().sign);
      EXPECT_NEAR(lu.determinant().log_abs, partial.determinant().log_abs, error);
    }
    const LU<T> fresh(a.view(), Pivoting::Randomized);  // the estimate, not inverse()'s exact value
    // comparable where the factors carry digits: growth eps well below rcond (float32 at order 2050 has
    // rcond 3e-7 and growth 4e4, and its estimate came out 10x low)
    if (partial.rcond() > 1e3 * eps<T>() * fresh.growth()) {
      EXPECT_LE(fresh.rcond(), 10 * partial.rcond());
      EXPECT_GE(fresh.rcond(), partial.rcond() / 10);
    }
    const Solution<T> s =
        solve<T>(a.view(), b.view(), {.method = Method::RBT, .compute_residual = true, .allow_ill_conditioned = true});
    EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    if (s.report.method == Method::RBT) {
      EXPECT_EQ(s.report.growth, lu.growth());
    } else {  // refinement stalled or the estimate could not judge (float32 at the larger orders), said
      EXPECT_EQ(s.report.method, Method::LU);
      EXPECT_TRUE(contains(s.report.to_json(), "partial pivoting")) << s.report.to_json();
    }
  }
}

// A zero column no longer shows as a zero pivot once the butterflies have mixed it: the randomized
// factorization hands such a matrix to partial pivoting, which names the column.
TYPED_TEST(Dense, RandomizedLURefusesASingularMatrix) {
  using T = TypeParam;
  Matrix<T> z = random_uniform<T>(300, 300, testing::case_seed(72));
  for (index i = 0; i < 300; ++i) z(i, 270) = T(0);
  const Matrix<T> b = random_uniform<T>(300, 1, testing::case_seed(73));
  for (bool inverse : {false, true}) {
    try {
      if (inverse) {
        (void)inv<T>(z.view(), {.method = Method::RBT});
      } else {
        (void)solve<T>(z.view(), b.view(), {.method = Method::RBT});
      }
      ADD_FAILURE() << "a matrix with a zero column should be refused (" << (inverse ? "inverse" : "solve") << ")";
    } catch (const SingularMatrix& e) {
      EXPECT_EQ(e.pivot(), 271) << e.what();
    }
  }
}

// Mixed precision takes method rbt: float64-accurate either way, by the randomized LU where the device
// factors in float64, else from float32 LU factors (partial pivoting, said).
TEST(DenseMixed, AcceptsTheRandomizedMethod) {
  const index n = 150;
  const Matrix<double> a = random_uniform<double>(n, n, testing::case_seed(70));
  const Matrix<double> b = random_uniform<double>(n, 2, testing::case_seed(71));
  const Solution<double> s = solve<double>(
      a.view(), b.view(), {.method = Method::RBT, .precision = Precision::Mixed, .compute_residual = true});
  EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
  if (s.report.method == Method::LU) {
    EXPECT_TRUE(contains(s.report.method_reason + s.report.to_json(), "partial pivoting")) << s.report.to_json();
  } else {
    EXPECT_EQ(s.report.method, Method::RBT);
  }
}

// Mixed precision on a triangular or diagonal matrix (auto's choice; 1 x 1 included): nothing to refine, so
// substitution in float64, said in the report; it was refused with "not triangular".
TEST(DenseMixed, TriangularMatricesAreSolvedBySubstitution) {
  for (index n : {1, 2, 9, 40}) {
    Matrix<double> a = random_uniform<double>(n, n, testing::case_seed(72 + static_cast<std::uint64_t>(n)));
    for (index j = 0; j < n; ++j) {
      a(j, j) += 4;
      for (index i = 0; i < j; ++i) a(i, j) = 0;  // lower triangular
    }
    const Matrix<double> b = random_uniform<double>(n, 2, testing::case_seed(73));
    const Solution<double> s = solve<double>(a.view(), b.view(), {.precision = Precision::Mixed, .compute_residual = true});
    EXPECT_EQ(s.report.method, Method::Triangular) << n;
    EXPECT_EQ(s.report.precision, "float64") << n;
    EXPECT_LE(s.report.scaled_residual, kResidualThreshold) << n;
    const Solution<double> x = inv<double>(a.view(), {.precision = Precision::Mixed, .compute_residual = true});
    EXPECT_LE(x.report.scaled_residual, kResidualThreshold) << n;
    bool said = false;
    for (const std::string& note : x.report.notes) said = said || contains(note, "no factorization to refine");
    EXPECT_TRUE(said) << x.report.to_json();
  }
}

// The matrices that stress pivoting: every randomized result meets the residual bound, or it gave way to
// partial pivoting and the report says so, or the matrix is singular to working precision and refused.
TYPED_TEST(Dense, RandomizedLUOnAdversarialMatrices) {
  using T = TypeParam;
  testing::for_each_adversary<T>(35, [](const testing::Adversary&, index, const Matrix<T>& a, const Matrix<T>& b) {
    std::optional<Solution<T>> solution;
    try {
      solution = solve<T>(a.view(), b.view(), {.method = Method::RBT, .compute_residual = true});
    } catch (const SingularMatrix&) {
      EXPECT_LT(LU<T>(a.view()).rcond(), 100 * eps<T>());
      return;
    }
    const Solution<T>& s = *solution;
    EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    if (s.report.method == Method::LU) {
      bool said = false;
      for (const std::string& note : s.report.notes) said = said || contains(note, "partial pivoting");
      EXPECT_TRUE(said);
    } else {
      EXPECT_EQ(s.report.method, Method::RBT);
    }
  });
}

// The randomized LU never has the last word on singularity: on permutation-like, zero-diagonal matrices of
// cond 1e8 to 1e12 (where it meets tiny pivots) the inverse and the solve come back within the bound,
// falling back to partial pivoting where needed, with partial pivoting's verdict.
TYPED_TEST(Dense, RandomizedLUNeverRefusesWhatPartialPivotingInverts) {
  using T = TypeParam;
  if (std::is_same_v<T, float>) GTEST_SKIP() << "cond 1e8 and above is singular to float32's working precision";
  std::uint64_t salt = 740;
  for (index n : {64, 200})
    for (double cond : {1e8, 1e10, 1e12})
      for (double noise : {0.0, 1e-3 / cond}) {  // noise below the smallest entry: the condition stays
        const auto seed = testing::case_seed(salt++);
        LINV_TRACE_SEED(seed);
        SCOPED_TRACE(fmt::format("n {} cond {:g} noise {:g}", n, cond, noise));
        const Matrix<T> A = testing::permutation_like<T>(n, cond, noise, seed);
        ASSERT_GE(LU<T>(A.view()).rcond(), 100 * eps<T>());
        const Solution<T> s = inv<T>(A.view(), {.method = Method::RBT, .compute_residual = true});
        EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
        const Matrix<T> b = random_uniform<T>(n, 1, seed + 2);
        const Solution<T> x = solve<T>(A.view(), b.view(), {.method = Method::RBT, .compute_residual = true});
        EXPECT_LE(x.report.scaled_residual, kResidualThreshold);
      }
}

// Scale invariance: A and B scaled by 2^k for k across the whole exponent range give the same answers, scaled,
// the same verdicts and rconds (the scaling is exact), for inv, solve, lstsq, pinv and cholesky; where the
// true answer does not fit the type, NumericalError says so instead of returning Inf.
TYPED_TEST(Dense, PowersOfTwoChangeNothingButTheScale) {
  using T = TypeParam;
  const auto seed = testing::case_seed(760);
  LINV_TRACE_SEED(seed);
  const index n = 12;
  const int top = std::numeric_limits<T>::max_exponent - 8, bottom = std::numeric_limits<T>::min_exponent + 8;
  const Matrix<T> A = generate<T>(MatrixKind::Random, n, {.seed = seed});
  const Matrix<T> S = generate<T>(MatrixKind::SPD, n, {.seed = seed + 1});
  const Matrix<T> B = random_uniform<T>(n, 2, seed + 2), tall = random_uniform<T>(2 * n, n, seed + 3);
  const Solution<T> inverse = inv<T>(A.view()), solution = solve<T>(A.view(), B.view());
  auto scaled = [](const Matrix<T>& M, int k) {
    Matrix<T> m = Matrix<T>::copy_of(M.view());
    for (index i = 0; i < m.size(); ++i) m.data()[i] = std::ldexp(m.data()[i], k);
    return m;
  };
  auto same_up_to = [](const Matrix<T>& x, const Matrix<T>& ref, int k) {
    for (index i = 0; i < x.size(); ++i)
      if (std::ldexp(x.data()[i], -k) != ref.data()[i]) return false;
    return true;
  };
  for (int k : {bottom, bottom / 2, -100, -33, 0, 33, 100, top / 2, top}) {
    SCOPED_TRACE(fmt::format("2^{}", k));
    const Matrix<T> a = scaled(A, k);
    // A^-1 is 2^-k A^-1: representable while -k stays within the range too
    if (-k > bottom && -k < top) {
      const Solution<T> i = inv<T>(a.view(), {.compute_residual = true});
      EXPECT_TRUE(same_up_to(i.x, inverse.x, -k));
      // rcond to rounding: gecon's triangular solves (latrs) rescale against underflow by factors that are
      // not powers of two, which moved float32's estimate by an ulp at 2^-117
      EXPECT_NEAR(i.report.rcond, inverse.report.rcond, 8 * std::numeric_limits<T>::epsilon() * inverse.report.rcond);
      EXPECT_LE(i.report.scaled_residual, kResidualThreshold);
      const Solution<T> x = solve<T>(a.view(), B.view(), {.compute_residual = true});
      EXPECT_TRUE(same_up_to(x.x, solution.x, -k));
      EXPECT_LE(x.report.scaled_residual, kResidualThreshold);
      const Solution<T> p = pinv<T>(a.view(), {.compute_residual = true});
      EXPECT_LE(p.report.scaled_residual, kResidualThreshold);
    }
    // B scaled alone: X scales with it, exactly while every entry of B and X stays normal (a subnormal one has
    // lost bits: run seed 827253702710091081 put an entry of X under 2^-1022 at 2^-1013); else the residual
    // promise holds
    const Solution<T> xb = solve<T>(A.view(), scaled(B, k).view(), {.compute_residual = true});
    auto smallest = [](const Matrix<T>& M) {
      T least = std::numeric_limits<T>::infinity();
      for (index i = 0; i < M.size(); ++i) least = std::min(least, std::abs(M.data()[i]));
      return least;
    };
    if (std::ldexp(std::min(smallest(B), smallest(solution.x)), k) >= std::numeric_limits<T>::min()) {
      EXPECT_TRUE(same_up_to(xb.x, solution.x, k));
    }
    EXPECT_LE(xb.report.scaled_residual, kResidualThreshold);
    const Solution<T> ls = lstsq<T>(scaled(tall, k).view(), scaled(tall, k).block(0, 0, 2 * n, 1), {.compute_residual = true});
    EXPECT_LE(ls.report.scaled_residual, kResidualThreshold);
    EXPECT_NEAR(static_cast<double>(ls.x(0, 0)), 1.0, 1e3 * eps<T>());  // the first column of itself: e_1
    if (k % 2 == 0) {
      const Solution<T> l = cholesky<T>(scaled(S, k).view(), {.compute_residual = true});
      EXPECT_LE(l.report.scaled_residual, kResidualThreshold);
    }
  }
  // an inverse that cannot be represented is a numerical failure, not Inf
  EXPECT_THROW((void)inv<T>(scaled(A, bottom - 30).view()), NumericalError);
}

TYPED_TEST(Dense, CholeskyObject) {
  using T = TypeParam;
  const auto seed = testing::case_seed(10);
  LINV_TRACE_SEED(seed);
  for (index n : {1, 2, 33, 150}) {
    Matrix<T> a = generate<T>(MatrixKind::SPD, n, {.cond = 100, .seed = seed});
    Cholesky<T> chol(a.view());
    Matrix<T> l = chol.L();
    for (index j = 1; j < n; ++j) EXPECT_EQ(l(0, j), T(0));
    EXPECT_LE(scaled_residual_cholesky<T>(a.view(), l.view(), eps<T>()), kResidualThreshold);
    // log det = 2 sum log l_ii agrees with LU's
    Matrix<T> copy = a.clone();
    EXPECT_NEAR(chol.determinant().log_abs, LU<T>(copy.view()).determinant().log_abs,
                1e3 * n * eps<T>() * std::max(1.0, std::abs(chol.determinant().log_abs)));
    Matrix<T> b = random_uniform<T>(n, 2, seed + 1);
    Matrix<T> x = chol.solve(b.view());
    EXPECT_LE(scaled_residual_solve<T>(a.view(), x.view(), b.view(), eps<T>()), kResidualThreshold);
    for (auto how : {TriangularInverse::Lapack, TriangularInverse::GETS}) {
      Matrix<T> ai = chol.inverse(how);
      EXPECT_EQ(detect_structure<T>(ai.view()) == Structure::Symmetric || n == 1, true);
      EXPECT_LE(std::min(scaled_residual_inverse<T>(a.view(), ai.view(), eps<T>()),
                         scaled_left_residual_inverse<T>(a.view(), ai.view(), eps<T>())),
                kResidualThreshold);
    }
  }
}

TYPED_TEST(Dense, TriangularInverseBothMethodsBothTriangles) {
  using T = TypeParam;
  const auto seed = testing::case_seed(11);
  LINV_TRACE_SEED(seed);
  for (index n : {0, 1, 2, 17, 128, 129, 300}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    // a well-conditioned triangle: the Cholesky factor of an SPD matrix (cond(L) = sqrt(cond(A)))
    Matrix<T> spd = generate<T>(MatrixKind::SPD, n, {.cond = 1e4, .seed = seed + n});
    Matrix<T> lower = n > 0 ? Cholesky<T>(spd.view()).L() : Matrix<T>();
    Matrix<T> upper(n, n);
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) upper(i, j) = lower(j, i);
    // garbage in the triangle the routine must ignore
    Matrix<T> lower_dirty = lower.clone();
    for (index j = 1; j < n; ++j) lower_dirty(0, j) = T(7);
    Matrix<T> ref_lower = Matrix<T>(n, n);
    for (auto how : {TriangularInverse::Lapack, TriangularInverse::GETS}) {
      Matrix<T> li = tri_inv<T>(lower_dirty.view(), Uplo::Lower, how);
      EXPECT_LE(scaled_residual_inverse<T>(lower.view(), li.view(), eps<T>()), kResidualThreshold);
      for (index j = 1; j < n; ++j) EXPECT_EQ(li(0, j), T(0));  // result is triangular
      Matrix<T> ui = tri_inv<T>(upper.view(), Uplo::Upper, how);
      EXPECT_LE(scaled_residual_inverse<T>(upper.view(), ui.view(), eps<T>()), kResidualThreshold);
      // unit diagonal: the stored diagonal is ignored
      Matrix<T> unit = lower.clone();
      for (index i = 0; i < n; ++i) unit(i, i) = T(0);
      Matrix<T> unit_true = lower.clone();
      for (index i = 0; i < n; ++i) unit_true(i, i) = T(1);
      for (index j = 0; j < n; ++j)  // keep it well conditioned: scale the strict part down
        for (index i = j + 1; i < n; ++i) {
          unit(i, j) /= T(4 * n);
          unit_true(i, j) /= T(4 * n);
        }
      Matrix<T> unit_inv = tri_inv<T>(unit.view(), Uplo::Lower, how, Diag::Unit);
      EXPECT_LE(scaled_residual_inverse<T>(unit_true.view(), unit_inv.view(), eps<T>()), kResidualThreshold);
    }
  }
}

TYPED_TEST(Dense, TriangularZeroDiagonalIsNamed) {
  using T = TypeParam;
  Matrix<T> l = Matrix<T>::from_rows({{2, 0, 0}, {1, 0, 0}, {4, 5, 6}});
  for (auto how : {TriangularInverse::Lapack, TriangularInverse::GETS}) {
    try {
      (void)tri_inv<T>(l.view(), Uplo::Lower, how);
      FAIL() << "no error";
    } catch (const SingularMatrix& e) {
      EXPECT_EQ(e.pivot(), 2);
    }
  }
}

TYPED_TEST(Dense, LeastSquaresOverAndUnderdetermined) {
  using T = TypeParam;
  const auto seed = testing::case_seed(12);
  LINV_TRACE_SEED(seed);
  for (auto [m, n] : {std::pair<index, index>{60, 20}, {20, 60}, {33, 33}, {1, 5}, {5, 1}}) {
    SCOPED_TRACE(shape_string(m, n));
    Matrix<T> a = random_uniform<T>(m, n, seed + m * 100 + n);
    Matrix<T> b = random_uniform<T>(m, 3, seed + 7);
    auto s = lstsq<T>(a.view(), b.view(), {.compute_residual = true});
    EXPECT_EQ(s.x.rows(), n);
    EXPECT_EQ(s.report.rank, std::min(m, n));
    EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    if (m < n) {  // consistent: the minimum-norm solution solves A X = B exactly
      EXPECT_LE(scaled_residual_solve<T>(a.view(), s.x.view(), b.view(), eps<T>()), kResidualThreshold);
    }
  }
}

TYPED_TEST(Dense, LeastSquaresRankDeficientReportsRank) {
  using T = TypeParam;
  const auto seed = testing::case_seed(13);
  LINV_TRACE_SEED(seed);
  Matrix<T> a = random_uniform<T>(40, 10, seed);
  for (index i = 0; i < 40; ++i) a(i, 9) = a(i, 0) + a(i, 1);  // rank 9
  Matrix<T> b = random_uniform<T>(40, 1, seed + 1);
  auto s = lstsq<T>(a.view(), b.view(), {.compute_residual = true});
  EXPECT_EQ(s.report.rank, 9);
  EXPECT_FALSE(s.report.notes.empty());
  EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
}

TYPED_TEST(Dense, PseudoinverseAgreesWithInverseAndPenroseConditions) {
  using T = TypeParam;
  const auto seed = testing::case_seed(14);
  LINV_TRACE_SEED(seed);
  for (auto [m, n] : {std::pair<index, index>{50, 20}, {20, 50}, {30, 30}, {0, 4}}) {
    SCOPED_TRACE(shape_string(m, n));
    Matrix<T> a = random_uniform<T>(m, n, seed + m + n);
    auto p = pinv<T>(a.view(), {.compute_residual = true});
    EXPECT_EQ(p.x.rows(), n);
    EXPECT_EQ(p.x.cols(), m);
    EXPECT_LE(p.report.scaled_residual, kResidualThreshold);
  }
  Matrix<T> sq = generate<T>(MatrixKind::SPD, 25, {.cond = 10, .seed = seed});
  auto p = pinv<T>(sq.view());
  auto i = inv<T>(sq.view());
  const double diff = testing::relative_difference<T, T>(p.x.view(), i.x.view());
  EXPECT_LE(diff, 30 * 25 * eps<T>() * 10 * 25);  // n eps cond, cond(1-norm) <= n cond(2-norm)
  // rank-deficient: rank reported, small singular values dropped
  Matrix<T> r1 = Matrix<T>::from_rows({{1, 2}, {2, 4}, {3, 6}});
  auto pr = pinv<T>(r1.view(), {.compute_residual = true});
  EXPECT_EQ(pr.report.rank, 1);
  EXPECT_LE(pr.report.scaled_residual, kResidualThreshold);
}

TYPED_TEST(Dense, ProductsAndShapeErrors) {
  using T = TypeParam;
  const auto seed = testing::case_seed(15);
  Matrix<T> a = random_uniform<T>(7, 5, seed), b = random_uniform<T>(5, 3, seed + 1);
  Matrix<T> c = matmul<T>(a.view(), b.view());
  for (index i = 0; i < 7; ++i)
    for (index j = 0; j < 3; ++j) {
      double s = 0;
      for (index k = 0; k < 5; ++k) s += static_cast<double>(a(i, k)) * b(k, j);
      EXPECT_NEAR(c(i, j), s, 5 * 5 * eps<T>() * 5);
    }
  Matrix<T> g(5, 5);
  syrk<T>(Uplo::Lower, Op::Transpose, T(1), a.view(), T(0), g.view());  // A^T A, lower triangle
  Matrix<T> full(5, 5);
  gemm<T>(Op::Transpose, Op::None, T(1), a.view(), a.view(), T(0), full.view());
  for (index j = 0; j < 5; ++j)
    for (index i = j; i < 5; ++i) EXPECT_NEAR(g(i, j), full(i, j), 50 * eps<T>());
  try {
    (void)matmul<T>(a.view(), a.view());
    FAIL() << "no error";
  } catch (const ShapeMismatch& e) {
    EXPECT_TRUE(contains(e.what(), "7x5")) << e.what();
    EXPECT_EQ(e.exit_code(), ExitCode::usage);
  }
  EXPECT_THROW(syrk<T>(Uplo::Lower, Op::None, T(1), a.view(), T(0), g.view()), ShapeMismatch);
}

TYPED_TEST(Dense, BadInputIsRejectedClearly) {
  using T = TypeParam;
  Matrix<T> rect(3, 4);
  try {
    (void)inv<T>(rect.view());
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "square")) << e.what();
    EXPECT_TRUE(contains(e.what(), "3x4")) << e.what();
  }
  Matrix<T> a = Matrix<T>::identity(3), b(4, 1);
  try {
    (void)solve<T>(a.view(), b.view());
    FAIL() << "no error";
  } catch (const ShapeMismatch& e) {
    EXPECT_TRUE(contains(e.what(), "3x3") && contains(e.what(), "4x1")) << e.what();
  }
  for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
    Matrix<T> m = Matrix<T>::identity(3);
    m(1, 2) = bad;
    try {
      (void)inv<T>(m.view());
      FAIL() << "no error";
    } catch (const NonFiniteInput& e) {
      EXPECT_TRUE(contains(e.what(), "row 2, column 3")) << e.what();
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    }
    EXPECT_THROW(LU<T>{m.view()}, NonFiniteInput);
    EXPECT_THROW(Cholesky<T>{m.view()}, NonFiniteInput);
    EXPECT_THROW((void)lstsq<T>(m.view(), a.view()), NonFiniteInput);
    EXPECT_THROW((void)pinv<T>(m.view()), NonFiniteInput);
  }
  Matrix<T> full = Matrix<T>::from_rows({{1, 2}, {3, 4}});
  EXPECT_THROW((void)inv<T>(full.view(), {.method = Method::Triangular}), InvalidArgument);
  EXPECT_THROW((void)inv<T>(full.view(), {.method = Method::Cholesky}), NumericalError);  // not symmetric
}

// The block 1-norm estimator (the GPU backend's rcond) on operators whose norm is known: a lower bound,
// and within the factor 3 Higham and Tisseur found in nearly every case (typically exact).
TEST(NormEstimate, BlockEstimatorBoundsTheOneNormFromBelowAndIsSharp) {
  std::mt19937_64 rng(testing::case_seed(71));
  std::normal_distribution<double> normal;
  for (std::int64_t n : {1, 2, 3, 4, 5, 37, 200, 501}) {
    for (int kind = 0; kind < 3; ++kind) {
      std::vector<double> B(static_cast<std::size_t>(n * n));
      for (double& b : B) b = normal(rng);
      if (kind == 1) {  // one heavy column at a random place: the one a good estimate must find
        const std::int64_t j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n));
        for (std::int64_t i = 0; i < n; ++i) B[static_cast<std::size_t>(i + j * n)] *= 50;
      }
      if (kind == 2)  // graded columns, as A^-1 of a graded matrix
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < n; ++i) B[static_cast<std::size_t>(i + j * n)] *= std::pow(10.0, -6.0 * j / n);
      double exact = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (std::int64_t i = 0; i < n; ++i) s += std::abs(B[static_cast<std::size_t>(i + j * n)]);
        exact = std::max(exact, s);
      }
      int passes = 0;
      const double est = cpu::block_norm1_estimate<double>(n, 2, [&](std::vector<double>& X, bool transpose) {
        ++passes;
        const std::int64_t t = static_cast<std::int64_t>(X.size()) / n;
        std::vector<double> Y(X.size(), 0.0);
        for (std::int64_t c = 0; c < t; ++c)
          for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t i = 0; i < n; ++i) {
              const double b = transpose ? B[static_cast<std::size_t>(j + i * n)] : B[static_cast<std::size_t>(i + j * n)];
              Y[static_cast<std::size_t>(i + c * n)] += b * X[static_cast<std::size_t>(j + c * n)];
            }
        X = Y;
      });
      SCOPED_TRACE(::testing::Message() << "n " << n << " kind " << kind << " seed " << testing::run_seed());
      EXPECT_LE(est, exact * (1 + 2 * n * eps<double>()));
      EXPECT_GE(est, exact / 3);
      EXPECT_LE(passes, 12);  // five iterations of two passes, and the last product
    }
  }
}

TEST(DenseNames, MethodsRoundTrip) {
  for (Method m : kSolveMethods) EXPECT_EQ(parse_method(to_string(m)), m);
  try {
    (void)parse_method("qr");  // a method linv runs, but not one inv and solve take
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "gauss-jordan"));
  }
  const Matrix<double> A = generate<double>(MatrixKind::Random, 5, {.seed = 1});
  try {
    (void)inv<double>(A.view(), {.method = Method::SVD});
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "not svd"));
  }
}

TEST(Reports, EnumsAreValuesAndPrintByName) {
  const Matrix<double> A = generate<double>(MatrixKind::Random, 20, {.seed = testing::case_seed(31)});
  const Report r = solve<double>(A.view(), A.view(), {.precision = Precision::Mixed}).report;
  EXPECT_EQ(r.operation, Operation::Solve);
  EXPECT_EQ(r.method, Method::LU);
  EXPECT_EQ(r.device, Device::cpu());
  EXPECT_EQ(r.stop, StopReason::Converged);
  const std::string json = r.to_json();
  EXPECT_TRUE(contains(json, "\"method\": \"lu\""));
  EXPECT_TRUE(contains(json, "\"operation\": \"solve\""));
  EXPECT_TRUE(contains(json, "\"stop_reason\": \"converged\""));
  EXPECT_TRUE(contains(json, "\"device\": \"cpu\""));
  // a direct method has no stop reason to print
  EXPECT_FALSE(contains(inv<double>(A.view()).report.to_json(), "stop_reason"));
}

TEST(AutoDevice, TheLibraryPicksWhereAnOperationIsWorthRunning) {
  // what the GPU does not run in this version, and single SLAM steps, stay on the CPU at any size
  for (Operation op : {Operation::LeastSquares, Operation::Pseudoinverse, Operation::SlamStep,
                       Operation::SlamPseudoinverse})
    EXPECT_EQ(auto_device(op, index{1} << 30), Device::cpu()) << to_string(op);
  EXPECT_EQ(auto_device(Operation::Inverse, 8192, Method::GaussSeidel), Device::cpu());
  // too small to repay a GPU's start, or large enough (the GPU when one is usable)
  EXPECT_EQ(auto_device(Operation::Inverse, 100), Device::cpu());
  EXPECT_EQ(auto_device(Operation::Inverse, 4096), Device::best());
  EXPECT_EQ(auto_device(Operation::BatchedInverse, 1000), Device::cpu());
  EXPECT_EQ(auto_device(Operation::BatchedInverse, index{1} << 22), Device::best());
  EXPECT_EQ(auto_device(Operation::Ksvd, 1000), Device::cpu());
  EXPECT_EQ(auto_device(Operation::Ksvd, 900000), Device::best());
}

// --device as the front ends pass it: a name, or "auto" for auto_device's choice; unknown names refused.
TEST(AutoDevice, ChooseDeviceReadsTheFrontEndsSpelling) {
  EXPECT_EQ(choose_device("cpu", Operation::Inverse, 1 << 20), Device::cpu());
  EXPECT_EQ(choose_device("auto", Operation::Inverse, 100), auto_device(Operation::Inverse, 100));
  EXPECT_EQ(choose_device("auto", Operation::LeastSquares, 1 << 20), Device::cpu());
  EXPECT_THROW((void)choose_device("gpu", Operation::Inverse, 100), InvalidArgument);
  EXPECT_TRUE(cpu_only_on(Device::cpu()).empty());  // the reference backend runs everything
}

// placed(): the view itself where it already lives, else a packed copy there (a strided view included).
TEST(Placed, GivesTheViewWhereItLivesAndAPackedCopyElsewhere) {
  const Matrix<double> A = random_uniform<double>(7, 5, testing::case_seed(40));
  Matrix<double> keep;
  const ConstMatrixView<double> same = placed(A.view(), Device::cpu(), keep);
  EXPECT_EQ(same.data(), A.data());
  EXPECT_TRUE(keep.empty());
  const ConstMatrixView<double> inner = A.view().block(1, 1, 4, 3);
  EXPECT_EQ(placed(inner, Device::cpu(), keep).data(), inner.data());
  if (!Device::best().is_cpu()) {
    const ConstMatrixView<double> there = placed(inner, Device::best(), keep);
    EXPECT_EQ(there.device(), Device::best());
    EXPECT_EQ(there.ld(), 4);
    const Matrix<double> back = keep.to(Device::cpu());
    for (index j = 0; j < 3; ++j)
      for (index i = 0; i < 4; ++i) EXPECT_EQ(back(i, j), A(i + 1, j + 1));
  }
}

TEST(Cholesky, FunctionReturnsTheFactorWithItsReport) {
  const auto seed = testing::case_seed(32);
  LINV_TRACE_SEED(seed);
  const Matrix<double> A = generate<double>(MatrixKind::SPD, 60, {.seed = seed});
  const Solution<double> s = cholesky<double>(A.view(), {.compute_residual = true});
  EXPECT_EQ(s.report.operation, Operation::Cholesky);
  EXPECT_LE(s.report.scaled_residual, testing::kResidualThreshold);
  EXPECT_GT(s.report.rcond, 0);
  for (index j = 1; j < 60; ++j) EXPECT_EQ(s.x(0, j), 0.0);  // zeros above the diagonal
  Matrix<double> indefinite = A.clone();
  indefinite(7, 7) = -1;
  EXPECT_THROW((void)cholesky<double>(indefinite.view()), NotPositiveDefinite);
  Matrix<double> asymmetric = A.clone();
  asymmetric(0, 5) += 1;
  EXPECT_THROW((void)cholesky<double>(asymmetric.view()), NumericalError);
}

TEST(MatrixCopy, CopiesViewsAndNamesBothShapesOnMismatch) {
  const Matrix<float> a = Matrix<float>::from_rows({{1, 2, 3}, {4, 5, 6}});
  Matrix<float> b(3, 3);
  copy<float>(a.view().block(0, 1, 2, 2), b.block(1, 0, 2, 2));
  EXPECT_EQ(b(1, 0), 2.0f);
  EXPECT_EQ(b(2, 1), 6.0f);
  EXPECT_EQ(b(0, 0), 0.0f);
  try {
    copy<float>(a.view(), b.view());
    FAIL() << "no error";
  } catch (const ShapeMismatch& e) {
    EXPECT_TRUE(contains(e.what(), "2x3"));
    EXPECT_TRUE(contains(e.what(), "3x3"));
  }
}

}  // namespace
}  // namespace linv

namespace linv {
namespace {

// The CPU family's condition estimate of small LU factors (src/cpu/lu_rcond.hpp, up to kSmallRcondOrder)
// against LAPACK's gecon on the same factors: the same estimator, so the same value to rounding, on both
// sides of the order where the family switches, at extreme scales and conditions; and where its unscaled
// solves overflow (a triangle whose inverse grows past the range), gecon's answer.
TYPED_TEST(Dense, SmallConditionEstimatesAreGecons) {
  using T = TypeParam;
  const kernels::Dense<T>& cpu = kernels::dense<T>(Device::cpu());
  std::uint64_t salt = 980;
  for (index n : {1, 2, 3, 7, 16, 31, 32, 33})
    for (double cond : {1e2, 0.1 / eps<T>(), 10 / eps<T>()})
      for (int e : {0, std::numeric_limits<T>::max_exponent / 2, -std::numeric_limits<T>::max_exponent / 2}) {
        const auto seed = testing::case_seed(salt++);
        LINV_TRACE_SEED(seed);
        SCOPED_TRACE(fmt::format("n {} cond {:.1e} scale 2^{}", n, cond, e));
        Matrix<T> a = generate<T>(MatrixKind::IllCond, n, {.cond = cond, .seed = seed});
        for (index k = 0; k < a.size(); ++k) a.data()[k] = std::ldexp(a.data()[k], e);
        std::vector<int> pivots;
        Matrix<T> lu = Matrix<T>::copy_of(a.view());
        if (cpu.lu_factor(lu.view(), pivots, Pivoting::Partial).zero_pivot != 0) continue;  // cond 10/eps at n = 2
        const double anorm = cpu.norm1(a.view());
        const double mine = cpu.lu_rcond(lu.view(), pivots, anorm), lapack = cpu::lapack::gecon<T>(lu.view(), anorm);
        EXPECT_NEAR(mine, lapack, 100 * n * eps<T>() * lapack);
      }
  // unit lower L with -4 below the diagonal (L^-1 grows as 5^k) and U = 2^(10 - max_exponent) I: the
  // unscaled solves overflow, gecon's scaled ones do not
  const index n = 24;
  Matrix<T> lu(n, n);
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < n; ++i)
      lu(i, j) = i == j ? T(std::ldexp(1.0, 10 - std::numeric_limits<T>::max_exponent)) : i > j ? T(-4) : T(0);
  std::vector<int> pivots(static_cast<std::size_t>(n));
  for (index i = 0; i < n; ++i) pivots[static_cast<std::size_t>(i)] = static_cast<int>(i) + 1;
  const double mine = cpu.lu_rcond(lu.view(), pivots, 1.0), lapack = cpu::lapack::gecon<T>(lu.view(), 1.0);
  EXPECT_EQ(mine, lapack) << "an overflowing estimate is gecon's";
}

}  // namespace
}  // namespace linv
