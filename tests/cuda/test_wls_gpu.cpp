// Weighted least squares on the GPU against the CPU backend and a float64 QR solution: every precision
// and storage, odd and even orders (the two RFP layouts), rank deficiency, re-factoring for new weights.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/wls.hpp"
#include "support/dense_checks.hpp"
#include "support/gpu.hpp"
#include "support/testing.hpp"
#include "support/wls_checks.hpp"

namespace linv {
namespace {

using testing::kResidualThreshold;

// After REQUIRE_GPU only: naming a device that does not exist throws.
Device gpu() { return Device::cuda(0); }

TEST(WlsGpu, AgreesWithCpuAndQrInEveryPrecisionAndStorage) {
  REQUIRE_GPU();
  for (index m : {1, 2, 37, 64}) {
    const auto seed = testing::case_seed(100 + static_cast<std::uint64_t>(m));
    LINV_TRACE_SEED(seed);
    const index n = 2 * m + 5;
    const testing::Problem p = testing::random_problem(m, n, seed, false);
    const Solution<double> ref = testing::qr_reference(p);
    const double bound = 2 * testing::kForwardThreshold * n * testing::eps<double>() * testing::normal_cond(p);
    const Matrix<double> A = p.A.to(gpu()), d = p.d.to(gpu()), b = p.b.to(gpu());
    for (Precision precision : {Precision::Native, Precision::Mixed})
      for (Storage storage : {Storage::Full, Storage::Packed}) {
        SCOPED_TRACE("m " + std::to_string(m) + (precision == Precision::Mixed ? " mixed" : " double") +
                     (storage == Storage::Full ? " full" : " packed"));
        const WlsOptions options{.precision = precision, .storage = storage, .compute_residual = true};
        const Solution<double> s = wls<double>(A.view(), d.view(), b.view(), options);
        EXPECT_EQ(s.report.device, gpu());
        EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
        const Matrix<double> x = s.x.to(Device::cpu());
        EXPECT_LE((testing::relative_difference<double, double>(x.view(), ref.x.view())), bound);
        if (precision == Precision::Mixed) {
          EXPECT_EQ(s.report.stop, StopReason::Converged);
        }
      }
    // float32 on the GPU, against the float32 CPU result
    const WlsOptions packed{.storage = Storage::Packed, .compute_residual = true};
    const Solution<float> f = wls<float>(p.A.cast<float>().to(gpu()).view(), p.d.cast<float>().to(gpu()).view(),
                                         p.b.cast<float>().to(gpu()).view(), packed);
    EXPECT_LE(f.report.scaled_residual, kResidualThreshold);
    const Solution<float> fc = wls<float>(p.A.cast<float>().view(), p.d.cast<float>().view(),
                                          p.b.cast<float>().view(), packed);
    const double fbound = 2 * testing::kForwardThreshold * n * testing::eps<float>() * testing::normal_cond(p);
    EXPECT_LE((testing::relative_difference<float, float>(f.x.to(Device::cpu()).view(), fc.x.view())), fbound);
  }
}

TEST(WlsGpu, RankDeficientNamesTheMinor) {
  REQUIRE_GPU();
  const auto seed = testing::case_seed(200);
  LINV_TRACE_SEED(seed);
  testing::Problem p = testing::random_problem(31, 80, seed, false);
  for (index j = 0; j < 80; ++j) p.A(20, j) = 0;  // row 21: C has a zero row and column, in RFP's T2 block
  for (Storage storage : {Storage::Full, Storage::Packed})
    for (Precision precision : {Precision::Native, Precision::Mixed}) {
      try {
        (void)wls<double>(p.A.to(gpu()).view(), p.d.to(gpu()).view(), p.b.to(gpu()).view(),
                          {.precision = precision, .storage = storage});
        FAIL() << "a rank-deficient A should be refused";
      } catch (const NotPositiveDefinite& e) {
        EXPECT_EQ(e.minor(), 21);
      }
    }
}

TEST(WlsGpu, OneSystemRefactoredForNewWeights) {
  REQUIRE_GPU();
  const auto seed = testing::case_seed(300);
  LINV_TRACE_SEED(seed);
  const testing::Problem p = testing::random_problem(40, 90, seed, true);
  const Matrix<double> d2 = random_uniform<double>(90, 1, seed + 9, 0.5, 2.0);
  const Matrix<double> A = p.A.to(gpu()), b = p.b.to(gpu());
  for (Storage storage : {Storage::Full, Storage::Packed}) {
    WeightedLeastSquares<double> system(A.view(), {.precision = Precision::Mixed, .storage = storage});
    system.factor(p.d.to(gpu()).view());
    (void)system.solve(b.view());
    system.factor(d2.to(gpu()).view());
    const Solution<double> second = system.solve(b.view());
    const Solution<double> cpu = wls<double>(p.A.view(), d2.view(), p.b.view());
    EXPECT_LE((testing::relative_difference<double, double>(second.x.to(Device::cpu()).view(), cpu.x.view())), 1e-10);
  }
  EXPECT_THROW((void)wls<double>(A.view(), p.d.view(), b.view()), InvalidArgument);  // d on the host
}

// statsmodels' form on the GPU: X transposed there (cuBLAS geam), then the normal form, so the answer is the
// GPU normal form's of X^T bit for bit; X a strided view (a block of a taller matrix) and float32 too.
TEST(WlsGpu, StatsmodelsFormIsTheNormalFormOfXTransposed) {
  REQUIRE_GPU();
  for (index p : {1, 5, 33})
    for (index n : {p, 4 * p + 3}) {
      const auto seed = testing::case_seed(static_cast<std::uint64_t>(900 + 100 * p + n));
      LINV_TRACE_SEED(seed);
      SCOPED_TRACE("p " + std::to_string(p) + ", n " + std::to_string(n));
      const testing::Problem q = testing::random_problem(p, n, seed, true);
      Matrix<double> taller(n + 3, p);  // X is its first n rows: leading dimension n + 3
      for (index j = 0; j < p; ++j)
        for (index i = 0; i < n + 3; ++i) taller(i, j) = i < n ? q.A(j, i) : std::nan("");
      const Matrix<double> X = taller.to(gpu()), A = q.A.to(gpu()), w = q.d.to(gpu()), y = q.b.to(gpu());
      const Solution<double> normal = wls<double>(A.view(), w.view(), y.view());
      const Solution<double> design =
          wls<double>(X.view().block(0, 0, n, p), w.view(), y.view(), {.form = WlsForm::Design});
      EXPECT_EQ(design.report.device, gpu());
      const Matrix<double> xn = normal.x.to(Device::cpu()), xd = design.x.to(Device::cpu());
      for (index j = 0; j < xd.cols(); ++j)
        for (index i = 0; i < p; ++i) EXPECT_EQ(xd(i, j), xn(i, j)) << i << ", " << j;
      // float32 with weights within [0.01, 1]: the graded 10^-4..10^4 make C singular to float32's precision
      const testing::Problem u = testing::random_problem(p, n, seed + 1, false);
      Matrix<float> taller_f(n + 3, p);
      for (index j = 0; j < p; ++j)
        for (index i = 0; i < n + 3; ++i) taller_f(i, j) = i < n ? static_cast<float>(u.A(j, i)) : std::nanf("");
      const Matrix<float> Xf = taller_f.to(gpu()), Af = u.A.cast<float>().to(gpu());
      const Matrix<float> wf = u.d.cast<float>().to(gpu()), yf = u.b.cast<float>().to(gpu());
      // a square A can still leave C singular to float32's precision: then both forms refuse alike
      std::string normal_refusal, design_refusal;
      Matrix<float> nf, df;
      try {
        nf = wls<float>(Af.view(), wf.view(), yf.view()).x.to(Device::cpu());
      } catch (const SingularMatrix& e) {
        normal_refusal = e.what();
      }
      try {
        df = wls<float>(Xf.view().block(0, 0, n, p), wf.view(), yf.view(), {.form = WlsForm::Design})
                 .x.to(Device::cpu());
      } catch (const SingularMatrix& e) {
        design_refusal = e.what();
      }
      ASSERT_EQ(design_refusal, normal_refusal);
      for (index j = 0; j < df.cols(); ++j)
        for (index i = 0; i < p; ++i) EXPECT_EQ(df(i, j), nf(i, j)) << i << ", " << j;
    }
}

}  // namespace
}  // namespace linv
