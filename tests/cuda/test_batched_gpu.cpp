// Batched inversion and solves on the GPU against the CPU backend: every order from 1 to 64 in both
// precisions, batches mixing regular matrices with exactly singular ones, ones singular in exact
// arithmetic and ones either side of machine epsilon, with and without allow_ill_conditioned; device
// memory poisoned (NaN) before each run.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "linv/batched.hpp"
#include "linv/device.hpp"
#include "support/batched_checks.hpp"
#include "support/gpu.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

template <Real T>
class BatchedGpu : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(BatchedGpu, Types);

using testing::Member;

template <Real T>
void compare_with_cpu(index n, index count, std::uint64_t salt, bool allow = false) {
  const auto seed = testing::case_seed(salt);
  LINV_TRACE_SEED(seed);
  std::vector<Member> members;
  const Matrix<T> A = testing::mixed_batch<T>(n, count, seed, members);
  const batched::Options options{.allow_ill_conditioned = allow};
  const batched::Result<T> cpu = batched::inv<T>(A.view(), options);
  const Matrix<T> a = A.to(Device::cuda(0));
  const batched::Result<T> gpu = batched::inv<T>(a.view(), options);
  EXPECT_EQ(gpu.x.device(), Device::cuda(0));
  const Matrix<T> x = gpu.x.to(Device::cpu());
  testing::expect_batch_inverse<T>(A.view(), x.view(), gpu.status, members, &cpu.x,
                                   "n=" + std::to_string(n) + " count=" + std::to_string(count), allow);
}

TYPED_TEST(BatchedGpu, SmallEveryOrderAgreesWithCpu) {
  REQUIRE_GPU();
  for (index n : {1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 64}) compare_with_cpu<TypeParam>(n, 12, 500 + n);
}

TYPED_TEST(BatchedGpu, EveryOrderAgreesWithCpu) {
  REQUIRE_GPU();
  for (index n = 1; n <= batched::kMaxOrder; ++n) compare_with_cpu<TypeParam>(n, 75, 600 + n);
}

TYPED_TEST(BatchedGpu, AllowedIllConditionedResultsAreKept) {
  REQUIRE_GPU();
  for (index n : {2, 4, 8, 16, 32, 33, 64}) compare_with_cpu<TypeParam>(n, 40, 800 + n, true);
}

TYPED_TEST(BatchedGpu, SmallSolvesAgreeWithCpu) {
  REQUIRE_GPU();
  using T = TypeParam;
  for (index n : {1, 3, 8, 13, 32, 50}) {
    for (index nrhs : {1, 4}) {
      for (bool allow : {false, true}) {
        const auto seed = testing::case_seed(900 + 10 * n + nrhs);
        LINV_TRACE_SEED(seed);
        std::vector<Member> members;
        const Matrix<T> A = testing::mixed_batch<T>(n, 30, seed, members);
        const Matrix<T> B = random_uniform<T>(n, nrhs * 30, seed + 1, T(-1), T(1));
        const batched::Options options{.allow_ill_conditioned = allow};
        const batched::Result<T> cpu = batched::solve<T>(A.view(), B.view(), options);
        const Matrix<T> a = A.to(Device::cuda(0)), b = B.to(Device::cuda(0));
        const batched::Result<T> gpu = batched::solve<T>(a.view(), b.view(), options);
        const Matrix<T> x = gpu.x.to(Device::cpu());
        testing::expect_batch_solution<T>(A.view(), B.view(), x.view(), gpu.status, members, &cpu.x, false,
                                          "n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs), allow);
      }
    }
  }
}

// A NaN entry has no condition number: the matrix is named (rcond NaN, by the NaN's column) and its block
// is NaN, even when ill-conditioned results are allowed; its neighbours in the warp are unaffected.
TYPED_TEST(BatchedGpu, MatricesWithNaNAreRefused) {
  REQUIRE_GPU();
  using T = TypeParam;
  for (index n : {3, 8, 32, 40}) {
    const auto seed = testing::case_seed(950 + n);
    LINV_TRACE_SEED(seed);
    std::vector<Member> members;
    Matrix<T> A = testing::mixed_batch<T>(n, 12, seed, members);
    A(n - 1, 4 * n) = std::numeric_limits<T>::quiet_NaN();  // matrix 4, a random one
    const Matrix<T> a = A.to(Device::cuda(0));
    const batched::Result<T> gpu = batched::inv<T>(a.view(), {.allow_ill_conditioned = true});
    const Matrix<T> x = gpu.x.to(Device::cpu());
    bool named = false;
    for (const batched::Singular& s : gpu.status.singular) {
      if (s.matrix != 4) continue;
      named = true;
      EXPECT_TRUE(std::isnan(s.rcond));
      EXPECT_EQ(s.pivot, 1);  // the column of the NaN
      EXPECT_FALSE(s.kept);
    }
    EXPECT_TRUE(named) << "n=" << n;
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(x(i, 4 * n + j)));
    for (index m : {0, 6}) {  // random neighbours
      const Matrix<T> single = Matrix<T>::copy_of(A.block(0, m * n, n, n));
      const ConstMatrixView<T> xm = x.block(0, m * n, n, n);
      EXPECT_TRUE(testing::all_finite<T>(xm));
      EXPECT_LE(std::min(scaled_residual_inverse<T>(single.view(), xm, testing::eps<T>()),
                         scaled_left_residual_inverse<T>(single.view(), xm, testing::eps<T>())),
                testing::kResidualThreshold);
    }
  }
}

TYPED_TEST(BatchedGpu, LargeBatchesFillWholeBlocks) {
  REQUIRE_GPU();
  compare_with_cpu<TypeParam>(4, 100003, 700);  // not a multiple of the matrices per block
  compare_with_cpu<TypeParam>(48, 2001, 701);
}

}  // namespace
}  // namespace linv
