// PARAFAC2 on the GPU against the CPU backend (the oracle): from the same start the same iterations give
// the same loss history, factors and P_k to rounding, with slabs wider and narrower than their rows,
// ragged, and ranks on both sides of the batched eigensolver's limit (32); float32 follows to float32's
// accuracy; the P_k are orthonormal and the loss never rises.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "common/lapack.hpp"
#include "linv/parafac2.hpp"
#include "support/dense_checks.hpp"
#include "support/gpu.hpp"
#include "support/parafac2_checks.hpp"
#include "support/parafac2_synthetic.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

template <Real T>
class Parafac2Gpu : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Parafac2Gpu, Types);

TYPED_TEST(Parafac2Gpu, FollowsTheCpu) {
  using T = TypeParam;
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  struct Case {
    index I, F;
    std::vector<index> J;
    const char* what;
  };
  for (const Case& c : {Case{30, 4, {400, 650, 500}, "wide ragged slabs"}, Case{40, 3, {25, 60, 18, 40}, "narrow and wide"},
                        Case{40, 34, {60, 45}, "rank 34: the eigenproblems on the host"}}) {
    SCOPED_TRACE(c.what);
    const auto seed = testing::case_seed(400 + static_cast<std::uint64_t>(c.F));
    LINV_TRACE_SEED(seed);
    const testing::Synthetic s = testing::synthetic(c.I, c.J, c.F, 0.3, seed);
    std::vector<Matrix<T>> host, device;
    std::vector<ConstMatrixView<T>> on_cpu, on_gpu;
    for (const Matrix<double>& X : s.X) {
      host.push_back(X.cast<T>());
      device.push_back(host.back().to(gpu));
    }
    for (std::size_t k = 0; k < host.size(); ++k) on_cpu.push_back(host[k].view()), on_gpu.push_back(device[k].view());
    const fmri::Parafac2Options o{.rank = c.F, .max_iterations = 40, .tolerance = 0, .seed = seed + 1};
    const fmri::Parafac2Result<T> cpu = fmri::parafac2<T>(on_cpu, o), g = fmri::parafac2<T>(on_gpu, o);
    ASSERT_EQ(g.loss_history.size(), cpu.loss_history.size());
    // the iterations run in float64 on both; the data's Gram matrices differ by rounding (float64 sums
    // of float32 products are exact only up to their own rounding), amplified mildly over 40 iterations,
    // and in the factors by the conditioning of the ALS steps
    const double bound = 1e-9, factors = (std::is_same_v<T, float> ? 1e-5 : bound) * testing::als_condition(cpu);
    EXPECT_LE(testing::max_relative_difference(g.loss_history, cpu.loss_history), bound);
    const double dA = testing::relative_difference<T, T>(g.A.view(), cpu.A.view()),
                 dH = testing::relative_difference<T, T>(g.H.view(), cpu.H.view()),
                 dC = testing::relative_difference<T, T>(g.C.view(), cpu.C.view());
    EXPECT_LE(dA, factors);
    EXPECT_LE(dH, factors);
    EXPECT_LE(dC, factors);
    // the final P-step in T: a thin SVD of X_k^T M_k by LAPACK (CPU) or QR on the GPU and the SVD of R.
    // Both are backward stable, and the polar factor of Q_k moves by at most 2 / sigma_min(Q_k) times a
    // change of Q_k: P_k may differ by about kappa(Q_k) times the factors' difference plus Q_k's rounding.
    const double eps = std::numeric_limits<T>::epsilon(), moved = std::max({dA, dH, dC});
    // the final loss moves with the factors as the loss history does (1e-9 relative in float64: an H100
    // run at rank 34 differed by 4e-12 relative, 150 eps of the data's norm), and by its own rounding in T
    EXPECT_NEAR(g.loss, cpu.loss, std::max(100 * eps * g.norm_squared, bound * std::abs(cpu.loss)));
    for (std::size_t k = 0; k < g.P.size(); ++k) {
      ASSERT_TRUE(g.P[k].device() == gpu);
      const Matrix<T> P = g.P[k].to(Device::cpu());
      EXPECT_LE(testing::orthogonality(P), 30 * static_cast<double>(P.rows()) * eps) << "P_" << k;
      const double kappa = testing::condition_of_q(cpu, s.X[k], static_cast<index>(k));
      EXPECT_LE((testing::relative_difference<T, T>(P.view(), cpu.P[k].view())),
                30 * kappa * (moved + static_cast<double>(c.I) * eps))
          << "P_" << k << ", cond(Q_k) " << kappa;
    }
    for (std::size_t i = 1; i < g.loss_history.size(); ++i)
      EXPECT_LE(g.loss_history[i], g.loss_history[i - 1] * (1 + 1e-12)) << "iteration " << i + 1;
  }
}

}  // namespace
}  // namespace linv
