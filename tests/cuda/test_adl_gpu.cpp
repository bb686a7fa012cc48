// ADL on the GPU against the CPU backend (the oracle): the same start and the same steps give the same
// objective history, dictionary and codes to rounding, through each path of the GPU's coefficient steps
// (fused with K <= 32 and any number of steps; one product and one pass per step beyond); the objective
// never rises at any inner step, in float and double; the constraints hold.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "linv/adl.hpp"
#include "linv/generate.hpp"
#include "support/dense_checks.hpp"
#include "support/fmri_checks.hpp"
#include "support/gpu.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

using testing::random_normal;

// Low-rank signal plus noise with a few task time courses that it contains.
struct Problem {
  Matrix<double> X, task;
};
Problem problem(index T, index N, index M, std::uint64_t seed) {
  const Matrix<double> sources = random_normal(T, 4, seed), maps = random_normal(4, N, seed + 1);
  Problem p{matmul<double>(sources.view(), maps.view()), Matrix<double>(T, M)};
  const Matrix<double> noise = random_normal(T, N, seed + 2);
  for (index e = 0; e < p.X.size(); ++e) p.X.data()[e] += 0.3 * noise.data()[e];
  for (index j = 0; j < M; ++j) {
    double norm = 0;
    for (index i = 0; i < T; ++i) norm += sources(i, j) * sources(i, j);
    for (index i = 0; i < T; ++i) p.task(i, j) = sources(i, j) / std::sqrt(norm);
  }
  return p;
}

TEST(AdlGpu, FollowsTheCpu) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  struct Case {
    index T, N, K, M;
    int Ts, Td;
    const char* what;
  };
  for (const Case c : {Case{40, 3000, 10, 2, 10, 10, "fused, K = 10"}, Case{30, 2000, 6, 0, 40, 5, "fused in two launches"},
                       Case{36, 1500, 40, 3, 6, 6, "K = 40: a product and a pass per step"},
                       Case{20, 700, 32, 1, 5, 5, "fused, K = 32"}}) {
    SCOPED_TRACE(c.what);
    const auto seed = testing::case_seed(300 + static_cast<std::uint64_t>(c.K + c.Ts));
    LINV_TRACE_SEED(seed);
    const Problem p = problem(c.T, c.N, c.M, seed);
    const fmri::AdlOptions o{.atoms = c.K, .max_iterations = 8, .coefficient_steps = c.Ts, .dictionary_steps = c.Td,
                             .c = 0.3, .seed = seed + 3};
    const ConstMatrixView<double> task = c.M > 0 ? p.task.view() : ConstMatrixView<double>{};
    const fmri::AdlResult<double> cpu = fmri::adl<double>(p.X.view(), o, task);
    const Matrix<double> Xg = p.X.to(gpu);
    const fmri::AdlResult<double> g = fmri::adl<double>(Xg.view(), o, task);
    ASSERT_EQ(g.objective.size(), cpu.objective.size());
    ASSERT_EQ(g.inner_objective.size(), cpu.inner_objective.size());
    ASSERT_TRUE(g.dictionary.device() == gpu && g.codes.device() == gpu);
    EXPECT_NEAR(g.lambda, cpu.lambda, 1e-14 * cpu.lambda);  // from ||X||_F, summed in another order
    // the same steps with different association in the products: rounding of order (T + N) eps per step,
    // not amplified by the nonexpansive steps (the bound of bench/peers/torch_adl.py's check)
    const double bound = 30.0 * static_cast<double>(c.T + c.N) * std::numeric_limits<double>::epsilon() * 8 * (c.Ts + c.Td);
    EXPECT_LE(testing::max_relative_difference(g.objective, cpu.objective), bound);
    EXPECT_LE(testing::max_relative_difference(g.inner_objective, cpu.inner_objective), bound);
    EXPECT_LE((testing::relative_difference<double, double>(g.dictionary.to(Device::cpu()).view(), cpu.dictionary.view())),
              bound);
    EXPECT_LE((testing::relative_difference<double, double>(g.codes.to(Device::cpu()).view(), cpu.codes.view())), bound);
  }
}

template <Real T>
class AdlGpuTyped : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(AdlGpuTyped, Types);

TYPED_TEST(AdlGpuTyped, ObjectiveNeverRisesAndConstraintsHold) {
  using T = TypeParam;
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto seed = testing::case_seed(320);
  LINV_TRACE_SEED(seed);
  const Problem p = problem(50, 4000, 2, seed);
  const double c = 0.2, c_d = 1.5;
  const Matrix<T> task = p.task.template cast<T>();
  const Matrix<T> Xg = p.X.template cast<T>().to(gpu);
  const fmri::AdlResult<T> r = fmri::adl<T>(
      Xg.view(), {.atoms = 8, .max_iterations = 25, .coefficient_steps = 12, .dictionary_steps = 12, .c = c, .c_d = c_d, .seed = seed},
      task.view());
  // f is computed from the products, so its rounding is about eps_T ||X||_F^2
  const double slack = 50 * std::numeric_limits<T>::epsilon() * r.objective.front();
  for (std::size_t i = 1; i < r.objective.size(); ++i) EXPECT_LE(r.objective[i], r.objective[i - 1] + slack) << i;
  for (std::size_t i = 1; i < r.inner_objective.size(); ++i)
    EXPECT_LE(r.inner_objective[i], r.inner_objective[i - 1] + slack) << "inner step " << i;
  EXPECT_LT(r.objective.back(), 0.5 * r.objective.front());
  const Matrix<T> D = r.dictionary.to(Device::cpu());
  const double round = 10 * std::numeric_limits<T>::epsilon();
  for (index j = 0; j < 8; ++j) {
    double d2 = 0;
    for (index i = 0; i < 50; ++i) {
      const double e = static_cast<double>(D(i, j)) - (j < 2 ? static_cast<double>(task(i, j)) : 0.0);
      d2 += e * e;
    }
    EXPECT_LE(d2, (j < 2 ? c : c_d) * (1 + round)) << "atom " << j;
  }
}

}  // namespace
}  // namespace linv
