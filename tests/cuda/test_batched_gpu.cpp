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

// A NaN or Inf is named by matrix and entry; members at the ends of the range are judged alone, scaled.
TYPED_TEST(BatchedGpu, NonFiniteEntriesAreNamedAndExtremeMembersJudgedAlone) {
  REQUIRE_GPU();
  using T = TypeParam;
  for (index n : {3, 8, 32, 40}) testing::expect_extremes_judged<T>(Device::cuda(0), n, testing::case_seed(950 + n));
}

// Transposed solves on the GPU: the register kernel reads each lane's row from the stored matrix's column;
// every group size, the block kernel (33-64), and the one-matrix path (65).
TYPED_TEST(BatchedGpu, TransposedSolvesAreTheTransposesSolved) {
  REQUIRE_GPU();
  for (index n : {1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 48, 64, 65})
    for (index nrhs : {1, 3})
      testing::expect_transposed_solves<TypeParam>(Device::cuda(0), n, nrhs, testing::case_seed(960 + 10 * n + nrhs));
}

TYPED_TEST(BatchedGpu, LargeBatchesFillWholeBlocks) {
  REQUIRE_GPU();
  compare_with_cpu<TypeParam>(4, 100003, 700);  // not a multiple of the matrices per block
  compare_with_cpu<TypeParam>(48, 2001, 701);
}

}  // namespace
}  // namespace linv
