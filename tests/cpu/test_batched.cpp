// Batched inversion and solves on the CPU: every order from 1 to 64, the conditioning policy per matrix
// (exactly singular members, members singular in exact arithmetic, members either side of machine
// epsilon), the opt-in that keeps results singular only to working precision, shape errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

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

using testing::Member;

index count_kind(const std::vector<Member>& members, Member::Kind kind) {
  return std::count_if(members.begin(), members.end(), [&](const Member& m) { return m.kind == kind; });
}

TYPED_TEST(Batched, EveryOrderWithSingularMembers) {
  using T = TypeParam;
  for (index n = 1; n <= batched::kMaxOrder; ++n) {
    const auto seed = testing::case_seed(static_cast<std::uint64_t>(n));
    LINV_TRACE_SEED(seed);
    std::vector<Member> members;
    const Matrix<T> A = testing::mixed_batch<T>(n, 20, seed, members);
    const batched::Result<T> r = batched::inv<T>(A.view());
    testing::expect_batch_inverse<T>(A.view(), r.x.view(), r.status, members, nullptr, "n=" + std::to_string(n));
    EXPECT_EQ(count_kind(members, Member::Kind::zero_column), 3);  // matrices 3, 10 and 17
    EXPECT_EQ(count_kind(members, Member::Kind::dependent), n >= 2 ? 3 : 0);  // 5, 12 and 19
  }
}

TYPED_TEST(Batched, ManyMatricesAcrossThreads) {
  using T = TypeParam;
  const auto seed = testing::case_seed(100);
  LINV_TRACE_SEED(seed);
  std::vector<Member> members;
  const Matrix<T> A = testing::mixed_batch<T>(4, 5000, seed, members);
  const batched::Result<T> r = batched::inv<T>(A.view());
  testing::expect_batch_inverse<T>(A.view(), r.x.view(), r.status, members, nullptr, "n=4");
}

TYPED_TEST(Batched, IntoAGivenOutputThatMustNotOverlap) {
  using T = TypeParam;
  const auto seed = testing::case_seed(101);
  LINV_TRACE_SEED(seed);
  const Matrix<T> A = random_uniform<T>(9, 9 * 40, seed, T(-1), T(1));
  Matrix<T> X(9, 9 * 40);
  const batched::Status s = batched::inv_into<T>(A.view(), X.view());
  testing::expect_batch_inverse<T>(A.view(), X.view(), s, std::vector<Member>(40), nullptr, "into");
  Matrix<T> Y = Matrix<T>::copy_of(A.view());
  EXPECT_THROW((void)batched::inv_into<T>(Y.view(), Y.view()), InvalidArgument);
}

TYPED_TEST(Batched, SolvesEveryOrderWithSingularMembers) {
  using T = TypeParam;
  for (index n : {1, 2, 5, 16, 33, 64}) {
    for (index nrhs : {1, 3}) {
      const auto seed = testing::case_seed(static_cast<std::uint64_t>(200 + 10 * n + nrhs));
      LINV_TRACE_SEED(seed);
      std::vector<Member> members;
      const Matrix<T> A = testing::mixed_batch<T>(n, 20, seed, members);
      const Matrix<T> B = random_uniform<T>(n, nrhs * 20, seed + 1, T(-1), T(1));
      const batched::Result<T> r = batched::solve<T>(A.view(), B.view());
      testing::expect_batch_solution<T>(A.view(), B.view(), r.x.view(), r.status, members, nullptr, true,
                                        "n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs));
    }
  }
}

// A stack solved transposed (Options::op, what the Python package does with C-ordered stacks) is the stack
// of transposes solved, bit for bit, around the small-LU and LAPACK orders and past the batched ones.
TYPED_TEST(Batched, TransposedSolvesAreTheTransposesSolved) {
  for (index n : {1, 2, 3, 5, 8, 31, 32, 33, 64, 65})
    for (index nrhs : {1, 3})
      testing::expect_transposed_solves<TypeParam>(Device::cpu(), n, nrhs, testing::case_seed(300 + 10 * n + nrhs));
}

TEST(BatchedErrors, TransposedSolvesAreForRealMatricesAndInversesRefuseThem) {
  const Matrix<std::complex<double>> A(3, 6), B(3, 2);
  EXPECT_THROW((void)batched::solve<std::complex<double>>(A.view(), B.view(), {.op = Op::Transpose}), InvalidArgument);
  const Matrix<double> R = Matrix<double>::identity(3);
  EXPECT_THROW((void)batched::inv<double>(R.view(), {.op = Op::Transpose}), InvalidArgument);
}

// With allow_ill_conditioned, the matrices singular only to working precision keep their results and get a
// note each; exactly zero pivots are refused all the same.
TYPED_TEST(Batched, AllowedIllConditionedResultsAreKeptAndNoted) {
  using T = TypeParam;
  for (index n : {2, 8, 16, 33, 64}) {
    const auto seed = testing::case_seed(static_cast<std::uint64_t>(300 + n));
    LINV_TRACE_SEED(seed);
    std::vector<Member> members;
    const Matrix<T> A = testing::mixed_batch<T>(n, 30, seed, members);
    const Matrix<T> B = random_uniform<T>(n, 2 * 30, seed + 1, T(-1), T(1));
    const batched::Options allow{.allow_ill_conditioned = true};
    const batched::Result<T> inverse = batched::inv<T>(A.view(), allow);
    testing::expect_batch_inverse<T>(A.view(), inverse.x.view(), inverse.status, members, nullptr,
                                     "inverse n=" + std::to_string(n), true);
    const batched::Result<T> solution = batched::solve<T>(A.view(), B.view(), allow);
    testing::expect_batch_solution<T>(A.view(), B.view(), solution.x.view(), solution.status, members, nullptr, true,
                                      "solve n=" + std::to_string(n), true);
    for (const batched::Status* s : {&inverse.status, &solution.status}) {
      const auto kept = std::count_if(s->singular.begin(), s->singular.end(), [](const auto& m) { return m.kept; });
      EXPECT_GE(kept, 1);  // matrix 1 at least
      const std::string note = "matrix 1: singular to working precision";
      EXPECT_EQ(std::count_if(s->report.notes.begin(), s->report.notes.end(),
                              [](const std::string& text) { return testing::contains(text, "singular to working"); }),
                kept);
      EXPECT_TRUE(std::any_of(s->report.notes.begin(), s->report.notes.end(),
                              [&](const std::string& text) { return testing::contains(text, note); }));
    }
  }
}

// A NaN entry has no condition number: the matrix is named (rcond NaN, by the NaN's column) and its block
// is NaN, even when ill-conditioned results are allowed.
TYPED_TEST(Batched, NonFiniteEntriesAreNamedAndExtremeMembersJudgedAlone) {
  using T = TypeParam;
  for (index n : {3, 40}) testing::expect_extremes_judged<T>(Device::cpu(), n, testing::case_seed(static_cast<std::uint64_t>(400 + n)));
}

TEST(BatchedErrors, ShapesAndOrderAreChecked) {
  const Matrix<double> ragged = random_uniform<double>(4, 10, 1);
  try {
    (void)batched::inv<double>(ragged.view());
    FAIL() << "a 4 x 10 batch should be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(testing::contains(e.what(), "4 x 10"));
  }
  // above the batched kernels' order: each matrix by linv::inv, the same answer, and the report says so
  const Matrix<double> big = random_uniform<double>(65, 130, 1);
  const batched::Result<double> r = batched::inv<double>(big.view());
  EXPECT_TRUE(r.status.singular.empty());
  for (index k = 0; k < 2; ++k) {
    const Matrix<double> alone = linv::inv<double>(big.block(0, 65 * k, 65, 65)).x;
    EXPECT_EQ((testing::relative_difference<double, double>(r.x.block(0, 65 * k, 65, 65), alone.view())), 0.0) << k;
  }
  EXPECT_TRUE(testing::contains(r.status.report.notes.at(0), "each matrix by linv::inv")) << r.status.report.notes.at(0);
  const Matrix<double> empty(0, 0);
  EXPECT_TRUE(batched::inv<double>(empty.view()).status.singular.empty());
  Matrix<double> wrong(4, 8);
  const Matrix<double> four = random_uniform<double>(4, 12, 2);
  EXPECT_THROW((void)batched::inv_into<double>(four.view(), wrong.view()), ShapeMismatch);
  const Matrix<double> rhs = random_uniform<double>(4, 4, 3);  // 3 matrices, 4 columns of right-hand sides
  EXPECT_THROW((void)batched::solve<double>(four.view(), rhs.view()), ShapeMismatch);
}

}  // namespace
}  // namespace linv
