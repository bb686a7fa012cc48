// Weighted least squares on the CPU: against a float64 QR least-squares solution, in every precision
// and storage, on random, ill-conditioned and rank-deficient problems.
#include <gtest/gtest.h>

#include <cmath>

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
// rounding error of its own: the default tolerance must sit above it, or refinement never stops.
TEST(Wls, FewUnknownsConvergeAtTheDefaultTolerance) {
  for (index m : {1, 2, 3}) {
    const auto seed = testing::case_seed(10 + static_cast<std::uint64_t>(m));
    LINV_TRACE_SEED(seed);
    const Problem p = random_problem(m, 4000, seed, false);
    const Solution<double> s = wls<double>(p.A.view(), p.d.view(), p.b.view(), {.precision = Precision::Mixed});
    EXPECT_EQ(s.report.stop, StopReason::Converged) << "m " << m;
    EXPECT_LE(s.report.iterations, 5) << "m " << m;
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

}  // namespace
}  // namespace linv
