// Batched inversion on the GPU against the CPU backend: every order from 1 to 64 in both precisions,
// batches mixing singular and regular matrices, device memory poisoned (NaN) before each run.
#include <gtest/gtest.h>

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

template <Real T>
void compare_with_cpu(index n, index count, std::uint64_t salt) {
  const auto seed = testing::case_seed(salt);
  LINV_TRACE_SEED(seed);
  std::vector<index> zero_pivot;
  const Matrix<T> A = testing::batch_with_singular<T>(n, count, seed, zero_pivot);
  const batched::Result<T> cpu = batched::inv<T>(A.view());
  const Matrix<T> a = A.to(Device::cuda(0));
  const batched::Result<T> gpu = batched::inv<T>(a.view());
  EXPECT_EQ(gpu.x.device(), Device::cuda(0));
  EXPECT_EQ(gpu.status.singular, cpu.status.singular);
  const Matrix<T> x = gpu.x.to(Device::cpu());
  testing::expect_batch_inverse<T>(A.view(), x.view(), gpu.status, zero_pivot, &cpu.x,
                                   "n=" + std::to_string(n) + " count=" + std::to_string(count));
}

TYPED_TEST(BatchedGpu, SmallEveryOrderAgreesWithCpu) {
  REQUIRE_GPU();
  for (index n : {1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 64}) compare_with_cpu<TypeParam>(n, 12, 500 + n);
}

TYPED_TEST(BatchedGpu, EveryOrderAgreesWithCpu) {
  REQUIRE_GPU();
  for (index n = 1; n <= batched::kMaxOrder; ++n) compare_with_cpu<TypeParam>(n, 75, 600 + n);
}

TYPED_TEST(BatchedGpu, SmallSolvesAgreeWithCpu) {
  REQUIRE_GPU();
  using T = TypeParam;
  for (index n : {1, 3, 8, 13, 32, 50}) {
    for (index nrhs : {1, 4}) {
      const auto seed = testing::case_seed(900 + 10 * n + nrhs);
      LINV_TRACE_SEED(seed);
      std::vector<index> zero_pivot;
      const Matrix<T> A = testing::batch_with_singular<T>(n, 30, seed, zero_pivot);
      const Matrix<T> B = random_uniform<T>(n, nrhs * 30, seed + 1, T(-1), T(1));
      const batched::Result<T> cpu = batched::solve<T>(A.view(), B.view());
      const Matrix<T> a = A.to(Device::cuda(0)), b = B.to(Device::cuda(0));
      const batched::Result<T> gpu = batched::solve<T>(a.view(), b.view());
      const Matrix<T> x = gpu.x.to(Device::cpu());
      testing::expect_batch_solution<T>(A.view(), B.view(), x.view(), gpu.status, zero_pivot, &cpu.x, false,
                                        "n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs));
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
