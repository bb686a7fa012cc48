// Bordered SLAM Jacobians on the GPU against the CPU backend: the step J^+ d, the materialised J^+ and the
// conditioning they report, with and without damping, one and several dense columns, float and double;
// unobservable parameters and rank-deficient Jacobians named.
#include <gtest/gtest.h>

#include <cmath>

#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "linv/slam.hpp"
#include "support/dense_checks.hpp"
#include "support/gpu.hpp"
#include "support/slam_checks.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

// J with `k` dense columns on the segments of a random bordered Jacobian.
template <Real T>
slam::BorderedJacobian<T> with_dense_columns(index rows, index cols, index k, std::uint64_t seed) {
  const slam::BorderedJacobian<T> base = slam::random_bordered_jacobian<T>(rows, cols, seed);
  return slam::BorderedJacobian<T>(random_uniform<T>(rows, k, seed + 1, T(-1), T(1)), base.starts(), base.lengths(),
                                   base.values());
}

template <Real T>
class SlamGpu : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SlamGpu, Types);

TYPED_TEST(SlamGpu, StepAndPseudoinverseAgreeWithCpu) {
  using T = TypeParam;
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  for (index k : {1, 3}) {
    for (double damping : {0.0, 0.1}) {
      const auto seed = testing::case_seed(40 + static_cast<std::uint64_t>(k));
      LINV_TRACE_SEED(seed);
      SCOPED_TRACE("k " + std::to_string(k) + " damping " + std::to_string(damping));
      const slam::BorderedJacobian<T> J = with_dense_columns<T>(700, 60, k, seed);
      const Matrix<T> d = random_uniform<T>(700, 2, seed + 2, T(-1), T(1));
      const slam::BorderedJacobian<T> Jd = J.to(gpu);
      const Matrix<T> d_gpu = d.to(gpu);
      const Matrix<T> step = slam::pinv_apply(Jd, d_gpu.view(), damping).x.to(Device::cpu());
      const Matrix<T> step_cpu = slam::pinv_apply(J, d.view(), damping).x;
      // the arrowhead's condition is modest here (values of magnitude 0.5 to 2)
      const double bound = 1e4 * testing::eps<T>();
      EXPECT_LE((testing::relative_difference<T, T>(step.view(), step_cpu.view())), bound);
      const Matrix<T> P = slam::pinv(Jd, damping).x.to(Device::cpu());
      const Matrix<T> P_cpu = slam::pinv(J, damping).x;
      EXPECT_EQ(P.rows(), J.cols());
      EXPECT_EQ(P.cols(), J.rows());
      EXPECT_LE((testing::relative_difference<T, T>(P.view(), P_cpu.view())), bound);
      // the same conditioning from either backend, to the rounding of J^T J's sums
      const double level = testing::eps<T>() * std::sqrt(static_cast<double>(J.rows()));
      const double rcond_gpu = slam::pinv_apply(Jd, d_gpu.view(), damping).report.rcond;
      const double rcond_cpu = slam::pinv_apply(J, d.view(), damping).report.rcond;
      EXPECT_LE(std::abs(rcond_gpu - rcond_cpu), 30 * level * rcond_cpu);
    }
  }
}

// A zero column, dense or segment (a segment column of explicit zeros is one), a dense column that is a
// multiple of another, or one in the span of segment columns: refused on the GPU as on the CPU, by name.
TYPED_TEST(SlamGpu, RankDeficientJacobiansAreRefusedByName) {
  using T = TypeParam;
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto seed = testing::case_seed(60);
  LINV_TRACE_SEED(seed);
  const slam::BorderedJacobian<T> J = with_dense_columns<T>(500, 40, 2, seed);
  const Matrix<T> dense = J.to_dense();
  for (index column : {index{1}, index{2}, index{2 + 7}, J.cols() - 1}) {  // 0-based
    Matrix<T> zeroed = Matrix<T>::copy_of(dense.view());
    for (index r = 0; r < zeroed.rows(); ++r) zeroed(r, column) = T(0);
    testing::expect_refused(slam::BorderedJacobian<T>::from_dense(zeroed.view(), 2).to(gpu), {column + 1},
                            "zero column " + std::to_string(column + 1));
  }
  for (double factor : {2.0, -0.5}) {
    const auto multiple = testing::dyadic_jacobian<T>(500, 40, 3, seed, [&](Matrix<T>& d, const auto&) {
      for (index r = 0; r < d.rows(); ++r) d(r, 2) = static_cast<T>(factor) * d(r, 0);
    });
    testing::expect_refused(multiple.to(gpu), {1, 3}, "column 3 = " + std::to_string(factor) + " column 1");
  }
  const auto spanned = testing::dyadic_jacobian<T>(500, 40, 1, seed, [](Matrix<T>& d, const auto& base) {
    for (index r = 0; r < d.rows(); ++r) {
      const index j = base.segment_of(r);
      d(r, 0) = j == 2 ? T(2) * base.values()[static_cast<std::size_t>(r)]
                       : j == 5 ? T(-4) * base.values()[static_cast<std::size_t>(r)] : T(0);
    }
  });
  testing::expect_refused(spanned.to(gpu), {1, 1 + 3, 1 + 6}, "column 1 in the span of segments 3 and 6");
}

TEST(SlamGpu, SparseFallbackByCglsAgreesWithCpu) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto seed = testing::case_seed(50);
  LINV_TRACE_SEED(seed);
  Matrix<double> J = random_uniform<double>(400, 60, seed, -1.0, 1.0);  // about 5 % nonzeros plus a band
  for (index c = 0; c < 60; ++c)
    for (index r = 0; r < 400; ++r)
      if (r % 60 != c && (r * 7 + c * 13) % 20 != 0) J(r, c) = 0;
  const slam::SparseJacobian<double> sparse = slam::SparseJacobian<double>::from_dense(J.view());
  const Matrix<double> d = random_uniform<double>(400, 2, seed + 1, -1.0, 1.0);
  const Matrix<double> d_gpu = d.to(gpu);
  const slam::CglsOptions options{.tolerance = 1e-12, .max_iterations = 1000};
  const Solution<double> on_gpu = slam::cgls_apply(sparse, d_gpu.view(), options);
  const Matrix<double> ref = slam::cgls_apply(sparse, d.view(), options).x;
  EXPECT_EQ(on_gpu.report.stop, StopReason::Converged);
  EXPECT_EQ(on_gpu.report.device, gpu);
  EXPECT_LE((testing::relative_difference<double, double>(on_gpu.x.to(Device::cpu()).view(), ref.view())), 1e-9);
}

TEST(SlamGpuErrors, UnobservableParametersAndTooManyDenseColumns) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const slam::BorderedJacobian<double> J = slam::random_bordered_jacobian<double>(200, 12, 5);
  std::vector<double> values = J.values();
  for (index r = J.starts()[4]; r < J.starts()[4] + J.lengths()[4]; ++r) values[static_cast<std::size_t>(r)] = 0;
  const slam::BorderedJacobian<double> blind(Matrix<double>::copy_of(J.dense().view()), J.starts(), J.lengths(), values);
  const slam::BorderedJacobian<double> Jd = blind.to(gpu);
  const Matrix<double> d = random_uniform<double>(200, 1, 3).to(gpu);
  for (int what = 0; what < 2; ++what) {
    try {
      if (what == 0)
        (void)slam::pinv(Jd);
      else
        (void)slam::pinv_apply(Jd, d.view());
      FAIL() << "an unobservable parameter should be refused";
    } catch (const SingularMatrix& e) {
      EXPECT_EQ(e.pivot(), 6);  // 1 dense column, then segment 5
      EXPECT_TRUE(testing::contains(e.what(), "parameter 6"));
    }
  }
  const slam::BorderedJacobian<double> wide = with_dense_columns<double>(200, 12, 33, 1).to(gpu);
  EXPECT_THROW((void)slam::pinv_apply(wide, d.view()), InvalidArgument);  // the GPU's Schur complement: k <= 32
}

}  // namespace
}  // namespace linv
