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

#include "cpu/lapack.hpp"
#include "linv/parafac2.hpp"
#include "support/dense_checks.hpp"
#include "support/gpu.hpp"
#include "support/parafac2_synthetic.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

// max |P^T P - I|
template <Real T>
double orthogonality(const Matrix<T>& P) {
  double worst = 0;
  for (index a = 0; a < P.cols(); ++a)
    for (index b = 0; b < P.cols(); ++b) {
      double t = 0;
      for (index i = 0; i < P.rows(); ++i) t += static_cast<double>(P(i, a)) * P(i, b);
      worst = std::max(worst, std::abs(t - (a == b ? 1.0 : 0.0)));
    }
  return worst;
}

// cond_2(Q_k) for Q_k = X_k^T A diag(c_k) H^T of the fitted model, in float64 (LAPACK gesdd).
template <Real T>
double condition_of_q(const fmri::Parafac2Result<T>& r, const Matrix<double>& X, index k) {
  const index F = r.H.rows();
  Matrix<double> AD = r.A.template cast<double>(), M(X.rows(), F), Q(X.cols(), F), U(X.cols(), F), VT(F, F);
  const Matrix<double> H = r.H.template cast<double>();
  for (index c = 0; c < F; ++c)
    for (index i = 0; i < AD.rows(); ++i) AD(i, c) *= static_cast<double>(r.C(k, c));
  cpu::lapack::gemm<double>(Op::None, Op::Transpose, 1.0, AD.view(), H.view(), 0.0, M.view());
  cpu::lapack::gemm<double>(Op::Transpose, Op::None, 1.0, X.view(), M.view(), 0.0, Q.view());
  std::vector<double> s(static_cast<std::size_t>(F));
  EXPECT_EQ(cpu::lapack::gesdd<double>(Q.view(), s.data(), U.view(), VT.view()), 0);
  return s.front() / s.back();
}

// The largest cond_2 of the final ALS steps' normal equations: A, H and C each solve with the Hadamard
// product of the other two factors' Gram matrices (H^T H * C^T C for A, and so on), so a rounding
// difference in the data's Gram matrices moves a factor by up to that condition number times as much
// (an H100 run at rank 34 moved H by 6.6e-9 where the loss history agreed to 1e-9).
template <Real T>
double als_condition(const fmri::Parafac2Result<T>& r) {
  auto gram = [](const Matrix<T>& F) {
    const Matrix<double> f = F.template cast<double>();
    Matrix<double> g(f.cols(), f.cols());
    cpu::lapack::gemm<double>(Op::Transpose, Op::None, 1.0, f.view(), f.view(), 0.0, g.view());
    return g;
  };
  const Matrix<double> a = gram(r.A), h = gram(r.H), c = gram(r.C);
  double worst = 1;
  for (const auto& [x, y] : {std::pair{&h, &c}, std::pair{&a, &c}, std::pair{&a, &h}}) {
    const index F = x->rows();
    Matrix<double> G(F, F), U(F, F), VT(F, F);
    for (index j = 0; j < F; ++j)
      for (index i = 0; i < F; ++i) G(i, j) = (*x)(i, j) * (*y)(i, j);
    std::vector<double> s(static_cast<std::size_t>(F));
    EXPECT_EQ(cpu::lapack::gesdd<double>(G.view(), s.data(), U.view(), VT.view()), 0);
    worst = std::max(worst, s.front() / s.back());
  }
  return worst;
}

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
    const double bound = 1e-9, factors = (std::is_same_v<T, float> ? 1e-5 : bound) * als_condition(cpu);
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
      EXPECT_LE(orthogonality(P), 30 * static_cast<double>(P.rows()) * eps) << "P_" << k;
      const double kappa = condition_of_q(cpu, s.X[k], static_cast<index>(k));
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
