// Batch-OMP and k-SVD on the GPU against the CPU backend: both OMP kernels (a thread and a warp per
// signal), float and double, the tolerance stop, dictionaries beyond the thread kernel's limits; k-SVD's
// GPU iterations follow the CPU's (same seed, same atom order) and recover a synthetic dictionary.
#include <gtest/gtest.h>

#include <cmath>

#include "linv/errors.hpp"
#include "linv/fmri.hpp"
#include "linv/generate.hpp"
#include "support/dense_checks.hpp"
#include "support/fmri_checks.hpp"
#include "support/gpu.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

// GPU and CPU codes: the same supports for (at least) `agree` of the signals, and where they agree the
// same coefficients to `tolerance` relative to the code's largest.
template <Real T>
void expect_same_codes(const fmri::SparseCodes<T>& gpu, const fmri::SparseCodes<T>& cpu, double agree, double tolerance) {
  ASSERT_EQ(gpu.signals, cpu.signals);
  index same = 0;
  for (index j = 0; j < cpu.signals; ++j) {
    const std::size_t s = static_cast<std::size_t>(j);
    bool match = gpu.count[s] == cpu.count[s];
    for (index t = 0; match && t < cpu.count[s]; ++t)
      match = gpu.atom[static_cast<std::size_t>(t + j * cpu.sparsity)] == cpu.atom[static_cast<std::size_t>(t + j * cpu.sparsity)];
    if (!match) continue;
    ++same;
    double largest = 0;
    for (index t = 0; t < cpu.count[s]; ++t)
      largest = std::max(largest, std::abs(static_cast<double>(cpu.value[static_cast<std::size_t>(t + j * cpu.sparsity)])));
    for (index t = 0; t < cpu.count[s]; ++t) {
      const std::size_t slot = static_cast<std::size_t>(t + j * cpu.sparsity);
      EXPECT_NEAR(gpu.value[slot], cpu.value[slot], tolerance * largest) << "signal " << j << " slot " << t;
    }
  }
  EXPECT_GE(static_cast<double>(same), agree * static_cast<double>(cpu.signals)) << same << " of " << cpu.signals;
}

template <Real T>
class FmriGpu : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FmriGpu, Types);

TYPED_TEST(FmriGpu, BatchOmpKernelsAgreeWithCpu) {
  using T = TypeParam;
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  // (T, K, T0): the thesis's fMRI shape, and one beyond the thread kernel (warp only)
  struct Case {
    index time_points, atoms, sparsity;
  };
  for (const Case c : {Case{50, 9, 6}, Case{40, 90, 12}}) {
    const auto seed = testing::case_seed(70 + static_cast<std::uint64_t>(c.atoms));
    LINV_TRACE_SEED(seed);
    const Matrix<T> D = testing::random_dictionary(c.time_points, c.atoms, seed).template cast<T>();
    const Matrix<T> X = random_uniform<T>(c.time_points, 3001, seed + 1, T(-1), T(1));
    const Matrix<T> Dg = D.to(gpu), Xg = X.to(gpu);
    const fmri::SparseCodes<T> cpu = fmri::batch_omp<T>(D.view(), X.view(), {.sparsity = c.sparsity});
    // float: D^T X from two BLAS libraries differs in the last bits, so a near-tie may go either way
    const double agree = std::is_same_v<T, double> ? 1.0 : 0.99;
    const double tolerance = std::is_same_v<T, double> ? 1e-10 : 1e-3;
    for (const fmri::OmpGpuKernel kernel :
         {fmri::OmpGpuKernel::Thread, fmri::OmpGpuKernel::Warp, fmri::OmpGpuKernel::Auto}) {
      const fmri::OmpOptions o{.sparsity = c.sparsity, .gpu_kernel = kernel};
      if (kernel == fmri::OmpGpuKernel::Thread && c.atoms > 16) {
        EXPECT_THROW((void)fmri::batch_omp<T>(Dg.view(), Xg.view(), o), InvalidArgument);
        continue;
      }
      SCOPED_TRACE(kernel == fmri::OmpGpuKernel::Thread ? "thread per signal"
                   : kernel == fmri::OmpGpuKernel::Warp ? "warp per signal"
                                                        : "auto");
      expect_same_codes(fmri::batch_omp<T>(Dg.view(), Xg.view(), o), cpu, agree, tolerance);
    }
  }
}

TEST(FmriGpu, BatchOmpStopsAtTheToleranceLikeTheCpu) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto seed = testing::case_seed(80);
  LINV_TRACE_SEED(seed);
  // exactly 4-sparse signals that OMP recovers (support/fmri_checks.hpp): with a tolerance above the tracked
  // residual's rounding each stops at 4 atoms, through the warp kernel (128 atoms, sparsity 10) and the
  // thread kernel (16 atoms, sparsity 8)
  struct Case {
    index atoms, sparsity;
    fmri::OmpGpuKernel kernel;
  };
  for (const Case c : {Case{128, 10, fmri::OmpGpuKernel::Warp}, Case{16, 8, fmri::OmpGpuKernel::Thread}}) {
    SCOPED_TRACE("atoms " + std::to_string(c.atoms));
    const Matrix<double> D = testing::random_dictionary(64, c.atoms, seed);
    const Matrix<double> truth = testing::exactly_recoverable_codes(D, 50, 4, seed + 1);
    const Matrix<double> X = matmul<double>(D.view(), truth.view());
    const Matrix<double> Dg = D.to(gpu), Xg = X.to(gpu);
    const fmri::SparseCodes<double> codes =
        fmri::batch_omp<double>(Dg.view(), Xg.view(), {.sparsity = c.sparsity, .tolerance = 1e-9, .gpu_kernel = c.kernel});
    for (index j = 0; j < 50; ++j) EXPECT_EQ(codes.count[static_cast<std::size_t>(j)], 4) << "signal " << j;
    EXPECT_LE((testing::relative_difference<double, double>(codes.to_dense().view(), truth.view())), 1e-12);
    EXPECT_THROW((void)fmri::batch_omp<double>(D.view(), Xg.view(), {.sparsity = 2}), InvalidArgument);  // D on the CPU
  }
}

// Same seed, same initial dictionary and atom order: in float64 one GPU iteration of either variant is
// the CPU's to rounding (Ksvd.RoundingInTheDataStaysRounding shows why that holds); over several, a
// near-tie in OMP or in clearing may send the two runs different ways, so there both must learn about as
// well.
TEST(FmriGpu, KsvdFollowsTheCpu) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto seed = testing::case_seed(90);
  LINV_TRACE_SEED(seed);
  const Matrix<double> D = testing::random_dictionary(30, 12, seed);
  Matrix<double> X = matmul<double>(D.view(), random_uniform<double>(12, 2000, seed + 1, -1.0, 1.0).view());
  const Matrix<double> noise = random_uniform<double>(30, 2000, seed + 2, -0.05, 0.05);
  for (index e = 0; e < X.size(); ++e) X.data()[e] += noise.data()[e];
  const Matrix<double> Xg = X.to(gpu);
  for (const bool exact : {true, false}) {
    SCOPED_TRACE(exact ? "exact" : "approximate");
    const fmri::KsvdOptions one{.atoms = 12, .sparsity = 4, .iterations = 1, .exact = exact, .seed = seed + 3};
    const fmri::KsvdResult<double> cpu = fmri::ksvd<double>(X.view(), one);
    const fmri::KsvdResult<double> g = fmri::ksvd<double>(Xg.view(), one);
    ASSERT_EQ(g.rmse.size(), 2u);
    EXPECT_NEAR(g.rmse[0], cpu.rmse[0], 1e-10 * cpu.rmse[0]);  // the same initial dictionary and codes
    EXPECT_NEAR(g.rmse[1], cpu.rmse[1], 1e-10 * cpu.rmse[1]);
    ASSERT_TRUE(g.dictionary.device() == gpu);
    const Matrix<double> learned = g.dictionary.to(Device::cpu());
    for (index a = 0; a < 12; ++a) {  // an exact update's singular vector has a sign of its own: compare |d^T d'|
      double c = 0;
      for (index i = 0; i < 30; ++i) c += learned(i, a) * cpu.dictionary(i, a);
      EXPECT_NEAR(std::abs(c), 1.0, 1e-12) << "atom " << a;
    }
    const fmri::KsvdOptions several{.atoms = 12, .sparsity = 4, .iterations = 6, .exact = exact, .seed = seed + 3};
    const fmri::KsvdResult<double> cpu6 = fmri::ksvd<double>(X.view(), several);
    const fmri::KsvdResult<double> g6 = fmri::ksvd<double>(Xg.view(), several);
    ASSERT_EQ(g6.rmse.size(), cpu6.rmse.size());
    EXPECT_NEAR(g6.rmse.front(), cpu6.rmse.front(), 1e-10 * cpu6.rmse.front());  // the same initial dictionary
    EXPECT_LT(g6.rmse.back(), g6.rmse.front());
    EXPECT_LE(g6.rmse.back(), 1.05 * cpu6.rmse.back());
  }
}

TYPED_TEST(FmriGpu, KsvdRecoversTheDictionary) {
  using T = TypeParam;
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto seed = testing::case_seed(95);
  LINV_TRACE_SEED(seed);
  double recovered = 0;
  // one trial under the sanitizers (every kernel the same; the ten took 50 s under memcheck), judged alone
  const std::uint64_t trials = testing::sizes<std::uint64_t>(testing::kRecoveryTrials, 1);
  for (std::uint64_t trial = 0; trial < trials; ++trial) {
    const testing::SparseSynthetic s = testing::sparse_synthetic(seed + 10 * trial);
    const Matrix<T> Xg = s.X.template cast<T>().to(gpu);
    const fmri::KsvdResult<T> r =
        fmri::ksvd<T>(Xg.view(), {.atoms = 40, .sparsity = 3, .iterations = 80, .seed = seed + 10 * trial + 2});
    EXPECT_LT(r.rmse.back(), 0.4 * r.rmse.front()) << "trial " << trial;
    recovered += testing::recovered_fraction(s.truth, r.dictionary.to(Device::cpu()).template cast<double>()) /
                 static_cast<double>(trials);
  }
  if (trials == static_cast<std::uint64_t>(testing::kRecoveryTrials)) {
    EXPECT_GE(recovered, 0.9 - 1e-12);
  }
  // the approximate variant learns too
  const testing::SparseSynthetic s = testing::sparse_synthetic(seed + 100);
  const fmri::KsvdResult<T> approx = fmri::ksvd<T>(s.X.template cast<T>().to(gpu).view(),
                                                   {.atoms = 40, .sparsity = 3, .iterations = 40, .exact = false, .seed = seed});
  EXPECT_LT(approx.rmse.back(), 0.4 * approx.rmse.front());
}

}  // namespace
}  // namespace linv
