// Weighted least squares on the CPU: against a float64 QR least-squares solution, in every precision
// and storage, on random, ill-conditioned and rank-deficient problems.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "linv/accuracy.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "linv/wls.hpp"
#include "support/dense_checks.hpp"
#include "support/testing.hpp"
#include "support/wls_checks.hpp"

namespace linv {
namespace {

using testing::kResidualThreshold;

using testing::normal_cond;
using testing::Problem;
using testing::qr_reference;
using testing::random_problem;

TEST(Wls, EveryPrecisionAndStorageAgreesWithQr) {
  const auto seed = testing::case_seed(1);
  LINV_TRACE_SEED(seed);
  const Problem p = random_problem(60, 150, seed, false);
  const Solution<double> ref = qr_reference(p);
  const double bound = 2 * testing::kForwardThreshold * 150 * testing::eps<double>() * normal_cond(p);
  for (Precision precision : {Precision::Native, Precision::Mixed})
    for (Storage storage : {Storage::Full, Storage::Packed}) {
      SCOPED_TRACE(std::string(precision == Precision::Mixed ? "mixed" : "double") +
                   (storage == Storage::Full ? " full" : " packed"));
      const Solution<double> s = wls<double>(p.A.view(), p.d.view(), p.b.view(),
                                             {.precision = precision, .storage = storage, .compute_residual = true});
      EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
      EXPECT_LE((testing::relative_difference<double, double>(s.x.view(), ref.x.view())), bound);
      if (precision == Precision::Mixed) {
        EXPECT_EQ(s.report.stop, StopReason::Converged);
        EXPECT_GE(s.report.iterations, 0);
      }
    }
  const Solution<float> f = wls<float>(p.A.cast<float>().view(), p.d.cast<float>().view(), p.b.cast<float>().view(),
                                       {.storage = Storage::Packed, .compute_residual = true});
  EXPECT_LE(f.report.scaled_residual, kResidualThreshold);
}

// With n >> m the least-squares residual b - A^T x stays large, and computing r = A D^2 (b - A^T x) has a
// rounding error of its own: the default tolerance must sit above it, or refinement never stops. Each
// step shrinks the error by about rho = m cond(C) eps_32 (C = A D^2 A^T factored in float32), so from
// float32's error to float64's takes log(eps_64) / log(rho) steps; allow 30 times rho and two more steps.
TEST(Wls, FewUnknownsConvergeAtTheDefaultTolerance) {
  for (index m : {1, 2, 3}) {
    const auto seed = testing::case_seed(10 + static_cast<std::uint64_t>(m));
    LINV_TRACE_SEED(seed);
    const Problem p = random_problem(m, 4000, seed, false);
    const Solution<double> s = wls<double>(p.A.view(), p.d.view(), p.b.view(), {.precision = Precision::Mixed});
    EXPECT_EQ(s.report.stop, StopReason::Converged) << "m " << m;
    const double rho = std::min(0.5, 30.0 * static_cast<double>(m) * normal_cond(p) * testing::eps<float>());
    const double steps = std::ceil(std::log(testing::eps<double>()) / std::log(rho)) + 2;
    EXPECT_LE(s.report.iterations, steps) << "m " << m << ", cond(C) " << normal_cond(p);
  }
}

TEST(Wls, GradedWeightsConvergeOrFallBackVisibly) {
  const auto seed = testing::case_seed(2);
  LINV_TRACE_SEED(seed);
  const Problem p = random_problem(100, 200, seed, true);
  const Solution<double> s = wls<double>(p.A.view(), p.d.view(), p.b.view(),
                                         {.precision = Precision::Mixed, .tolerance = 1e-8, .compute_residual = true});
  EXPECT_TRUE(s.report.stop == StopReason::Converged || s.report.stop == StopReason::FellBack)
      << to_string(s.report.stop);
  EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
}

// Interior-point methods grade the weights over 16 orders of magnitude as they converge. Mixed precision
// promises float64's accuracy: its forward error stays within 10x of the float64 path's on the same
// problem (or it falls back to float64, saying so). The reference solves the normal equations in long
// double. Stopping as soon as the residual was under float64's level once left errors 1000x larger.
TEST(Wls, MixedForwardErrorIsFloat64sUnderGradedWeights) {
  const index m = 40, n = 160;
  for (double range : {1e2, 1e4, 1e6, 1e8}) {
    const auto seed = testing::case_seed(20 + static_cast<std::uint64_t>(std::log10(range)));
    LINV_TRACE_SEED(seed);
    SCOPED_TRACE("weights 1/" + std::to_string(range) + " to " + std::to_string(range));
    Problem p = random_problem(m, n, seed, false);
    for (index i = 0; i < n; ++i)  // D^2 from 1/range to range, in random order
      p.d(i, 0) = std::pow(range, 2.0 * p.d(i, 0) / 0.99 - 1.0);
    // x from the normal equations A D^2 A^T x = A D^2 b in long double
    std::vector<long double> c(static_cast<std::size_t>(m * m)), rhs(static_cast<std::size_t>(m));
    for (index i = 0; i < m; ++i) {
      for (index j = 0; j < m; ++j) {
        long double s = 0;
        for (index t = 0; t < n; ++t) s += static_cast<long double>(p.A(i, t)) * p.d(t, 0) * p.A(j, t);
        c[static_cast<std::size_t>(i + j * m)] = s;
      }
      long double s = 0;
      for (index t = 0; t < n; ++t) s += static_cast<long double>(p.A(i, t)) * p.d(t, 0) * p.b(t, 0);
      rhs[static_cast<std::size_t>(i)] = s;
    }
    for (index k = 0; k < m; ++k) {  // Cholesky, then the two triangular solves, in place
      auto at = [&](index i, index j) -> long double& { return c[static_cast<std::size_t>(i + j * m)]; };
      at(k, k) = std::sqrt(at(k, k));
      for (index i = k + 1; i < m; ++i) at(i, k) /= at(k, k);
      for (index j = k + 1; j < m; ++j)
        for (index i = j; i < m; ++i) at(i, j) -= at(i, k) * at(j, k);
    }
    for (index i = 0; i < m; ++i) {
      for (index k = 0; k < i; ++k) rhs[static_cast<std::size_t>(i)] -= c[static_cast<std::size_t>(i + k * m)] * rhs[static_cast<std::size_t>(k)];
      rhs[static_cast<std::size_t>(i)] /= c[static_cast<std::size_t>(i + i * m)];
    }
    for (index i = m - 1; i >= 0; --i) {
      for (index k = i + 1; k < m; ++k) rhs[static_cast<std::size_t>(i)] -= c[static_cast<std::size_t>(k + i * m)] * rhs[static_cast<std::size_t>(k)];
      rhs[static_cast<std::size_t>(i)] /= c[static_cast<std::size_t>(i + i * m)];
    }
    Matrix<double> reference(m, 1);
    for (index i = 0; i < m; ++i) reference(i, 0) = static_cast<double>(rhs[static_cast<std::size_t>(i)]);
    const Matrix<double> b = Matrix<double>::copy_of(p.b.block(0, 0, n, 1));
    const Solution<double> native = wls<double>(p.A.view(), p.d.view(), b.view(), {});
    const Solution<double> mixed = wls<double>(p.A.view(), p.d.view(), b.view(), {.precision = Precision::Mixed});
    const double native_error = testing::relative_difference<double, double>(native.x.view(), reference.view());
    const double mixed_error = testing::relative_difference<double, double>(mixed.x.view(), reference.view());
    EXPECT_LE(mixed_error, 10 * std::max(native_error, m * testing::eps<double>())) << mixed.report.to_json();
  }
}

TEST(Wls, RankDeficientNamesTheMinorAndWeightsAreChecked) {
  const auto seed = testing::case_seed(3);
  LINV_TRACE_SEED(seed);
  Problem p = random_problem(30, 80, seed, false);
  for (index j = 0; j < 80; ++j) p.A(17, j) = 0;  // row 18 of A: C has a zero row and column
  for (Precision precision : {Precision::Native, Precision::Mixed}) {
    try {
      (void)wls<double>(p.A.view(), p.d.view(), p.b.view(), {.precision = precision});
      FAIL() << "a rank-deficient A should be refused";
    } catch (const NotPositiveDefinite& e) {
      EXPECT_EQ(e.minor(), 18);
      EXPECT_EQ(e.exit_code(), ExitCode::numerical);
    }
  }
  const Problem q = random_problem(20, 50, seed, false);
  Matrix<double> negative = Matrix<double>::copy_of(q.d.view());
  negative(7, 0) = -1;
  try {
    (void)wls<double>(q.A.view(), negative.view(), q.b.view());
    FAIL() << "a negative weight should be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(testing::contains(e.what(), "weight 8"));
  }
  // with --weights d the same vector holds D: its square is positive
  EXPECT_NO_THROW((void)wls<double>(q.A.view(), negative.view(), q.b.view(), {.weights = Weights::Plain}));
  const Matrix<double> short_d = random_uniform<double>(49, 1, seed);
  EXPECT_THROW((void)wls<double>(q.A.view(), short_d.view(), q.b.view()), ShapeMismatch);
  const Matrix<double> tall = random_uniform<double>(60, 50, seed);
  EXPECT_THROW((void)wls<double>(tall.view(), q.d.view(), q.b.view()), InvalidArgument);
}

TEST(Wls, OneSystemRefactoredForNewWeights) {
  const auto seed = testing::case_seed(4);
  LINV_TRACE_SEED(seed);
  const Problem p = random_problem(40, 90, seed, false);
  const Matrix<double> d2 = random_uniform<double>(90, 1, seed + 9, 0.5, 2.0);
  for (Storage storage : {Storage::Full, Storage::Packed}) {
    WeightedLeastSquares<double> system(p.A.view(), {.precision = Precision::Mixed, .storage = storage});
    system.factor(p.d.view());
    const Solution<double> first = system.solve(p.b.view());
    system.factor(d2.view());
    const Solution<double> second = system.solve(p.b.view());
    const Solution<double> direct = wls<double>(p.A.view(), d2.view(), p.b.view());
    EXPECT_LE((testing::relative_difference<double, double>(second.x.view(), direct.x.view())), 1e-10);
    EXPECT_GT((testing::relative_difference<double, double>(first.x.view(), direct.x.view())), 1e-6)
        << "new weights must change the solution";
  }
}

// statsmodels' form: X n x p (one row per observation) with the weights of the squared residuals is the
// normal form with A = X^T, so the answer is the normal form's bit for bit, at every shape from one
// parameter to as many observations as parameters (n = p, the square edge the normal form allows).
TEST(Wls, StatsmodelsFormIsTheNormalFormOfXTransposed) {
  for (index p : {1, 2, 7, 40})
    for (index n : {p, p + 1, 3 * p + 7}) {
      const auto seed = testing::case_seed(static_cast<std::uint64_t>(700 + 100 * p + n));
      LINV_TRACE_SEED(seed);
      SCOPED_TRACE("p " + std::to_string(p) + ", n " + std::to_string(n));
      const Problem q = random_problem(p, n, seed, true);
      Matrix<double> X(n, p);
      for (index j = 0; j < p; ++j)
        for (index i = 0; i < n; ++i) X(i, j) = q.A(j, i);
      // graded weights can leave C = A D^2 A^T singular to working precision: then both forms refuse alike
      std::string normal_refusal, design_refusal;
      std::optional<Solution<double>> normal_solution, design_solution;
      try {
        normal_solution = wls<double>(q.A.view(), q.d.view(), q.b.view(), {.compute_residual = true});
      } catch (const SingularMatrix& e) {
        normal_refusal = e.what();
      }
      try {
        design_solution =
            wls<double>(X.view(), q.d.view(), q.b.view(), {.form = WlsForm::Design, .compute_residual = true});
      } catch (const SingularMatrix& e) {
        design_refusal = e.what();
      }
      ASSERT_EQ(design_refusal, normal_refusal);
      if (!normal_solution) continue;
      const Solution<double>& normal = *normal_solution;
      const Solution<double>& design = *design_solution;
      ASSERT_EQ(design.x.rows(), p);
      for (index j = 0; j < design.x.cols(); ++j)
        for (index i = 0; i < p; ++i) EXPECT_EQ(design.x(i, j), normal.x(i, j)) << i << ", " << j;
      EXPECT_LE(design.report.scaled_residual, kResidualThreshold);
    }
}

// f() throws E, whose message says `says`.
template <class E, class F>
void expect_refusal(F&& f, const char* says) {
  try {
    (void)f();
    ADD_FAILURE() << "expected a refusal saying '" << says << "'";
  } catch (const E& e) {
    EXPECT_TRUE(testing::contains(e.what(), says)) << e.what();
  }
}

TEST(Wls, StatsmodelsFormNamesXWAndY) {
  const Problem q = random_problem(3, 10, testing::case_seed(790), false);
  Matrix<double> X(10, 3);
  const WlsOptions design{.form = WlsForm::Design};
  const WlsOptions plain{.form = WlsForm::Design, .weights = Weights::Plain};
  const ConstMatrixView<double> w = q.d.view(), y = q.b.view();
  expect_refusal<InvalidArgument>([&] { return wls<double>(q.A.view(), w, y, design); }, "fewer observations");
  expect_refusal<ShapeMismatch>([&] { return wls<double>(X.view(), w.block(0, 0, 9, 1), y, design); }, "X and w");
  expect_refusal<ShapeMismatch>([&] { return wls<double>(X.view(), w, y.block(0, 0, 9, 2), design); }, "X and y");
  expect_refusal<InvalidArgument>([&] { return wls<double>(X.view(), w, y, plain); }, "squared residuals");
  // the normal form's refusal of a tall A points to this form
  expect_refusal<InvalidArgument>([&] { return wls<double>(X.view(), w, y); }, "statsmodels form");
  EXPECT_EQ(parse_wls_form("statsmodels"), WlsForm::Design);
  expect_refusal<InvalidArgument>([&] { return parse_wls_form("scipy"); }, "expected normal or statsmodels");
}

}  // namespace
}  // namespace linv
