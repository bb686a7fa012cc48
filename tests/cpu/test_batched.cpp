// Batched inversion on the CPU: every order from 1 to 64, singular members, shape errors.
#include <gtest/gtest.h>

#include "linv/batched.hpp"
#include "linv/errors.hpp"
#include "support/batched_checks.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

template <Real T>
class Batched : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Batched, Types);

TYPED_TEST(Batched, EveryOrderWithSingularMembers) {
  using T = TypeParam;
  for (index n = 1; n <= batched::kMaxOrder; ++n) {
    const auto seed = testing::case_seed(static_cast<std::uint64_t>(n));
    LINV_TRACE_SEED(seed);
    std::vector<index> zero_pivot;
    const Matrix<T> A = testing::batch_with_singular<T>(n, 20, seed, zero_pivot);
    const batched::Result<T> r = batched::inv<T>(A.view());
    testing::expect_batch_inverse<T>(A.view(), r.x.view(), r.status, zero_pivot, nullptr, "n=" + std::to_string(n));
    EXPECT_EQ(r.status.singular, 3);  // matrices 3, 10 and 17
  }
}

TYPED_TEST(Batched, ManyMatricesAcrossThreads) {
  using T = TypeParam;
  const auto seed = testing::case_seed(100);
  LINV_TRACE_SEED(seed);
  std::vector<index> zero_pivot;
  const Matrix<T> A = testing::batch_with_singular<T>(4, 5000, seed, zero_pivot);
  const batched::Result<T> r = batched::inv<T>(A.view());
  testing::expect_batch_inverse<T>(A.view(), r.x.view(), r.status, zero_pivot, nullptr, "n=4");
}

TYPED_TEST(Batched, RegularBatchesNeedNoPivotsAndOutputsMustNotOverlap) {
  using T = TypeParam;
  const auto seed = testing::case_seed(101);
  LINV_TRACE_SEED(seed);
  const Matrix<T> A = random_uniform<T>(9, 9 * 40, seed, T(-1), T(1));
  Matrix<T> X(9, 9 * 40);
  const batched::Status s = batched::inv_into<T>(A.view(), X.view());
  EXPECT_EQ(s.singular, 0);
  EXPECT_TRUE(s.pivot.empty());
  testing::expect_batch_inverse<T>(A.view(), X.view(), s, std::vector<index>(40, 0), nullptr, "into");
  Matrix<T> Y = Matrix<T>::copy_of(A.view());
  EXPECT_THROW((void)batched::inv_into<T>(Y.view(), Y.view()), InvalidArgument);
}

TYPED_TEST(Batched, SolvesEveryOrderWithSingularMembers) {
  using T = TypeParam;
  for (index n : {1, 2, 5, 16, 33, 64}) {
    for (index nrhs : {1, 3}) {
      const auto seed = testing::case_seed(static_cast<std::uint64_t>(200 + 10 * n + nrhs));
      LINV_TRACE_SEED(seed);
      std::vector<index> zero_pivot;
      const Matrix<T> A = testing::batch_with_singular<T>(n, 20, seed, zero_pivot);
      const Matrix<T> B = random_uniform<T>(n, nrhs * 20, seed + 1, T(-1), T(1));
      const batched::Result<T> r = batched::solve<T>(A.view(), B.view());
      testing::expect_batch_solution<T>(A.view(), B.view(), r.x.view(), r.status, zero_pivot, nullptr, true,
                                        "n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs));
    }
  }
}

TEST(BatchedErrors, ShapesAndOrderAreChecked) {
  const Matrix<double> ragged = random_uniform<double>(4, 10, 1);
  try {
    (void)batched::inv<double>(ragged.view());
    FAIL() << "a 4 x 10 batch should be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(testing::contains(e.what(), "4 x 10"));
  }
  const Matrix<double> big = random_uniform<double>(65, 65, 1);
  EXPECT_THROW((void)batched::inv<double>(big.view()), InvalidArgument);
  const Matrix<double> empty(0, 0);
  EXPECT_EQ(batched::inv<double>(empty.view()).status.singular, 0);
  Matrix<double> wrong(4, 8);
  const Matrix<double> four = random_uniform<double>(4, 12, 2);
  EXPECT_THROW((void)batched::inv_into<double>(four.view(), wrong.view()), ShapeMismatch);
  const Matrix<double> rhs = random_uniform<double>(4, 4, 3);  // 3 matrices, 4 columns of right-hand sides
  EXPECT_THROW((void)batched::solve<double>(four.view(), rhs.view()), ShapeMismatch);
}

}  // namespace
}  // namespace linv
