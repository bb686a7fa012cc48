// Shared by the CPU and GPU batched tests: batches whose members are made regular, exactly singular,
// singular in exact arithmetic (a dependent column or row) or just either side of machine epsilon, and
// per-matrix checks of the conditioning policy and of accuracy.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "linv/accuracy.hpp"
#include "linv/batched.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "support/dense_checks.hpp"

namespace linv::testing {

// What a member of a test batch is made to be.
struct Member {
  enum class Kind {
    random,       // uniform in [-1, 1]: regular unless its rcond happens to lie near machine epsilon
    zero_column,  // a zero column: its first zero pivot is exactly that column
    dependent,    // a column a multiple of another, or a row a combination of two others, exactly
    below_eps,    // a permuted diagonal of rcond eps (1 - 2^-6): singular to working precision
    above_eps,    // the same at eps (1 + 2^-6): regular
  };
  Kind kind = Kind::random;
  index pivot = 0;   // zero_column: the zero pivot's column; below_eps: the smallest pivot's column
  double rcond = 0;  // below_eps, above_eps: the rcond as designed (exact: 1 / (||A||_1 ||A^-1||_1))
};

// Entries of magnitude up to 1 with 10 fractional bits: their multiples by small integers and sums of two
// such are exact in float32 and float64, so a dependent member is exactly singular as stored.
template <Real T>
T dyadic(std::mt19937_64& rng) {
  return static_cast<T>(static_cast<int>(rng() % 2049) - 1024) / T(1024);
}

// A nonzero integer factor in [-8, 8].
inline int small_factor(std::mt19937_64& rng) {
  const int f = static_cast<int>(rng() % 16) - 8;
  return f >= 0 ? f + 1 : f;
}

// count n x n matrices as an n x (n count) batch: members 1 and 2 just below and above machine epsilon,
// every seventh from 3 a zero column at a varying position, every seventh from 5 dependent (alternately a
// scaled copy of a column and a row that is a combination of two others, by random integer factors; a
// copy of a column where n < 3), the rest random (where n = 1, all but the zero ones: a 1 x 1 matrix has
// rcond 1 or a zero pivot). `members` receives what each is.
template <Real T>
Matrix<T> mixed_batch(index n, index count, std::uint64_t seed, std::vector<Member>& members) {
  Matrix<T> A = random_uniform<T>(n, n * count, seed, T(-1), T(1));
  members.assign(static_cast<std::size_t>(count), Member{});
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  const auto entry = [&](index m, index i, index j) -> T& { return A(i, m * n + j); };
  for (index m = 0; m < count; ++m) {
    Member& member = members[static_cast<std::size_t>(m)];
    if (m % 7 == 3) {
      const index column = (m * 5) % n;
      for (index i = 0; i < n; ++i) entry(m, i, column) = T(0);
      member = {Member::Kind::zero_column, column + 1, 0.0};
    } else if (m % 7 == 5 && n >= 2) {
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < n; ++i) entry(m, i, j) = dyadic<T>(rng);
      const index a = static_cast<index>(rng() % static_cast<std::uint64_t>(n));
      const index b = (a + 1 + static_cast<index>(rng() % static_cast<std::uint64_t>(n - 1))) % n;
      if (n < 3 || m % 14 == 5) {  // column b := f column a
        const T f = static_cast<T>(small_factor(rng));
        for (index i = 0; i < n; ++i) entry(m, i, b) = f * entry(m, i, a);
      } else {  // row c := f row a + g row b
        index c = (b + 1) % n;
        if (c == a) c = (c + 1) % n;
        const T f = static_cast<T>(small_factor(rng)), g = static_cast<T>(small_factor(rng));
        for (index j = 0; j < n; ++j) entry(m, c, j) = f * entry(m, a, j) + g * entry(m, b, j);
      }
      member = {Member::Kind::dependent, 0, 0.0};
    } else if ((m == 1 || m == 2) && n >= 2) {
      // P D with D's entries in [0.5, 1] and random signs, one of them exactly 1 and one (at `small`)
      // eps (1 -+ 2^-6): ||A||_1 = 1 and ||A^-1||_1 = 1 / that one, exactly.
      const double rcond = eps<T>() * (m == 1 ? 1 - 1.0 / 64 : 1 + 1.0 / 64);
      std::vector<index> row(static_cast<std::size_t>(n));
      std::iota(row.begin(), row.end(), index{0});
      std::shuffle(row.begin(), row.end(), rng);
      const index small = static_cast<index>(rng() % static_cast<std::uint64_t>(n));
      const index one = (small + 1) % n;
      std::uniform_real_distribution<double> magnitude(0.5, 1.0);
      for (index j = 0; j < n; ++j) {
        for (index i = 0; i < n; ++i) entry(m, i, j) = T(0);
        const double d = j == small ? rcond : j == one ? 1.0 : magnitude(rng);
        entry(m, row[static_cast<std::size_t>(j)], j) = static_cast<T>(rng() % 2 ? d : -d);
      }
      member = {m == 1 ? Member::Kind::below_eps : Member::Kind::above_eps, small + 1, rcond};
    }
  }
  return A;
}

// A random matrix whose rcond lies within this factor of machine epsilon may be accepted or refused
// (docs/design.md, "Accuracy in tests"): the rcond computed in working precision is itself uncertain there.
inline constexpr double kAmbiguousFactor = 100;

// Each matrix's exact rcond from a float64 inverse, the reference a random member is judged by.
template <Real T>
std::vector<double> reference_rconds(ConstMatrixView<T> A) {
  const index n = A.rows(), count = n == 0 ? 0 : A.cols() / n;
  Matrix<double> A64(n, n * count);
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < n; ++i) A64(i, j) = static_cast<double>(A(i, j));
  const batched::Result<double> inverse = batched::inv<double>(A64.view(), {.allow_ill_conditioned = true});
  std::vector<double> rcond(static_cast<std::size_t>(count), 0.0);
  for (index m = 0; m < count; ++m) {
    const ConstMatrixView<double> x = inverse.x.block(0, m * n, n, n);
    if (all_finite<double>(x))
      rcond[static_cast<std::size_t>(m)] = 1.0 / (norm1<double>(A64.block(0, m * n, n, n)) * norm1<double>(x));
  }
  return rcond;
}

// How a batch's status must treat each member, and the accuracy of everything it computed. `check(m, x)`
// asserts the accuracy of the computed block x of a member the status did not refuse. With
// allow_ill_conditioned, members singular only to working precision must be kept (not NaN).
template <Real T, class Check>
void expect_policy(ConstMatrixView<T> A, ConstMatrixView<T> X, index block_cols, const batched::Status& status,
                   const std::vector<Member>& members, bool allow_ill_conditioned, const std::string& what,
                   const Check& check) {
  const index n = A.rows(), count = static_cast<index>(members.size());
  const std::vector<double> reference = reference_rconds<T>(A);
  std::map<index, batched::Singular> named;
  for (const batched::Singular& s : status.singular) {
    ASSERT_TRUE(named.emplace(s.matrix, s).second) << what << ": matrix " << s.matrix << " named twice";
    ASSERT_TRUE(s.matrix >= 0 && s.matrix < count) << what;
  }
  ASSERT_TRUE(std::is_sorted(status.singular.begin(), status.singular.end(),
                             [](const auto& a, const auto& b) { return a.matrix < b.matrix; }))
      << what << ": singular matrices must come in batch order";
  for (index m = 0; m < count; ++m) {
    SCOPED_TRACE(what + " matrix " + std::to_string(m));
    const Member& member = members[static_cast<std::size_t>(m)];
    const ConstMatrixView<T> x = X.block(0, m * block_cols, n, block_cols);
    const auto it = named.find(m);
    const double rcond = reference[static_cast<std::size_t>(m)];
    const bool must_be_singular = member.kind == Member::Kind::zero_column ||
                                  member.kind == Member::Kind::dependent || member.kind == Member::Kind::below_eps ||
                                  (member.kind == Member::Kind::random && rcond < eps<T>() / kAmbiguousFactor);
    const bool must_be_regular = member.kind == Member::Kind::above_eps ||
                                 (member.kind == Member::Kind::random && rcond >= eps<T>() * kAmbiguousFactor);
    if (must_be_singular) {
      ASSERT_NE(it, named.end()) << "a singular matrix is not named";
    }
    if (must_be_regular) {
      ASSERT_EQ(it, named.end()) << "a regular matrix is named singular";
    }
    if (it == named.end()) {
      check(m, x);
      continue;
    }
    const batched::Singular& s = it->second;
    EXPECT_TRUE(s.pivot >= 1 && s.pivot <= n) << "pivot " << s.pivot;
    EXPECT_TRUE(s.rcond >= 0 && s.rcond < eps<T>()) << "rcond " << s.rcond;
    if (member.kind == Member::Kind::zero_column) {
      EXPECT_EQ(s.pivot, member.pivot);
      EXPECT_EQ(s.rcond, 0.0);
    }
    if (member.kind == Member::Kind::below_eps) {
      EXPECT_EQ(s.pivot, member.pivot);
      // 1 / (||A||_1 ||A^-1||_1) from entries exact but for the rounding of 1 / d: a few roundings off.
      // LAPACK's estimator finds a diagonal's norm exactly, so it is held to the same.
      EXPECT_LE(std::abs(s.rcond / member.rcond - 1), 4 * eps<T>());
    }
    EXPECT_EQ(s.kept, allow_ill_conditioned && s.rcond > 0);
    if (s.kept) {
      const bool written = std::any_of(x.data(), x.data() + n * block_cols, [](T v) { return !std::isnan(v); });
      EXPECT_TRUE(written) << "a kept result must not be NaN";
      if (member.kind == Member::Kind::below_eps) check(m, x);  // exact arithmetic on a diagonal
    } else {
      for (index j = 0; j < block_cols; ++j)
        for (index i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(x(i, j))) << "a refused matrix's block must be NaN";
    }
  }
}

// The policy for a batch of inverses, and each computed inverse backward stable (the smaller of the two
// scaled residuals below the threshold) and, with a reference (a CPU result), within n eps cond of it.
template <Real T>
void expect_batch_inverse(ConstMatrixView<T> A, ConstMatrixView<T> X, const batched::Status& status,
                          const std::vector<Member>& members, const Matrix<T>* reference, const std::string& what,
                          bool allow_ill_conditioned = false) {
  const index n = A.rows();
  expect_policy<T>(A, X, n, status, members, allow_ill_conditioned, what, [&](index m, ConstMatrixView<T> x) {
    const ConstMatrixView<T> a = A.block(0, m * n, n, n);
    ASSERT_TRUE(all_finite<T>(x)) << "unwritten (NaN) or overflowed output";
    EXPECT_LE(std::min(scaled_residual_inverse<T>(a, x, eps<T>()), scaled_left_residual_inverse<T>(a, x, eps<T>())),
              kResidualThreshold);
    if (reference == nullptr) return;
    const ConstMatrixView<T> r = reference->block(0, m * n, n, n);
    if (!all_finite<T>(r)) return;  // refused there, near machine epsilon
    const double cond = norm1<T>(a) * norm1<T>(r);
    EXPECT_LE((relative_difference<T, T>(x, r)), 2 * kForwardThreshold * static_cast<double>(n) * eps<T>() * cond);
  });
}

// The policy for a batch of solves, and each computed solution with a scaled residual below the threshold
// (when `backward_stable`) and, with a reference, within n eps cond of it.
template <Real T>
void expect_batch_solution(ConstMatrixView<T> A, ConstMatrixView<T> B, ConstMatrixView<T> X,
                           const batched::Status& status, const std::vector<Member>& members,
                           const Matrix<T>* reference, bool backward_stable, const std::string& what,
                           bool allow_ill_conditioned = false) {
  const index n = A.rows(), count = static_cast<index>(members.size()), nrhs = count == 0 ? 0 : B.cols() / count;
  expect_policy<T>(A, X, nrhs, status, members, allow_ill_conditioned, what, [&](index m, ConstMatrixView<T> x) {
    const ConstMatrixView<T> a = A.block(0, m * n, n, n), b = B.block(0, m * nrhs, n, nrhs);
    ASSERT_TRUE(all_finite<T>(x)) << "unwritten (NaN) or overflowed output";
    if (backward_stable) {
      EXPECT_LE(scaled_residual_solve<T>(a, x, b, eps<T>()), kResidualThreshold);
    }
    if (reference == nullptr) return;
    const ConstMatrixView<T> r = reference->block(0, m * nrhs, n, nrhs);
    if (!all_finite<T>(r)) return;  // refused there, near machine epsilon
    const double cond = norm1<T>(a) * norm1<T>(LU<T>(a).inverse().view());
    EXPECT_LE((relative_difference<T, T>(x, r)), 2 * kForwardThreshold * static_cast<double>(n) * eps<T>() * cond);
  });
}

// Solving a batch with Options::op = Transpose is solving the batch of its explicit transposes: the same
// solution bits, the same singular members with the same pivots and rcond (both are computed from the
// system's matrix, A(k)^T); and a NaN is named as an entry of A(k)^T. On `device`, order n (above
// kMaxOrder: matrix by matrix through the one-matrix path), singular members included.
template <Real T>
void expect_transposed_solves(Device device, index n, index nrhs, std::uint64_t seed) {
  SCOPED_TRACE("n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs));
  std::vector<Member> members;
  const index count = 23;
  const Matrix<T> A = mixed_batch<T>(n, count, seed, members);
  Matrix<T> At(n, n * count);
  for (index k = 0; k < count; ++k)
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) At(i, k * n + j) = A(j, k * n + i);
  const Matrix<T> B = random_uniform<T>(n, nrhs * count, seed + 1, T(-1), T(1));
  const Matrix<T> a = A.to(device), at = At.to(device), b = B.to(device);
  const batched::Result<T> got = batched::solve<T>(a.view(), b.view(), {.op = Op::Transpose});
  const batched::Result<T> want = batched::solve<T>(at.view(), b.view());
  const Matrix<T> x = got.x.to(Device::cpu()), y = want.x.to(Device::cpu());
  for (index j = 0; j < x.cols(); ++j)
    for (index i = 0; i < x.rows(); ++i)
      ASSERT_TRUE(x(i, j) == y(i, j) || (std::isnan(x(i, j)) && std::isnan(y(i, j))))
          << "entry (" << i << ", " << j << "): " << x(i, j) << " against " << y(i, j);
  ASSERT_EQ(got.status.singular.size(), want.status.singular.size());
  for (std::size_t s = 0; s < got.status.singular.size(); ++s) {
    const batched::Singular &g = got.status.singular[s], &w = want.status.singular[s];
    EXPECT_EQ(g.matrix, w.matrix);
    EXPECT_EQ(g.pivot, w.pivot) << "matrix " << g.matrix;
    EXPECT_TRUE(g.rcond == w.rcond || (std::isnan(g.rcond) && std::isnan(w.rcond))) << "matrix " << g.matrix;
    EXPECT_EQ(g.kept, w.kept);
  }
  Matrix<T> bad = Matrix<T>::copy_of(A.view());
  bad(n - 1, 4 * n) = std::numeric_limits<T>::quiet_NaN();  // matrix 4, stored row n, column 1
  try {
    (void)batched::solve<T>(bad.to(device).view(), b.view(), {.op = Op::Transpose});
    ADD_FAILURE() << "a NaN was taken";
  } catch (const NonFiniteInput& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("matrix 4 of the stack"), std::string::npos) << what;
    EXPECT_NE(what.find("row 1, column " + std::to_string(n)), std::string::npos) << what;
  }
}

// A NaN or Inf anywhere in a batch on `device` is NonFiniteInput naming the matrix and the entry (A of inv
// and solve, B of solve); members scaled to the ends of the range (2^+-(max_exponent - 24), entries near the
// largest number) are judged alone by the one-matrix path, which scales them: inverted within the bound, or
// refused with the reason (an inverse that overflows), never with a NaN rcond. The random members around
// them keep their results.
template <Real T>
void expect_extremes_judged(Device device, index n, std::uint64_t seed) {
  SCOPED_TRACE("n=" + std::to_string(n));
  std::vector<Member> members;
  const index count = 12;
  Matrix<T> A = random_uniform<T>(n, n * count, seed, T(-1), T(1));
  for (index k = 0; k < count; ++k)
    for (index i = 0; i < n; ++i) A(i, k * n + i) += static_cast<T>(n);  // diagonally dominant: regular
  const Matrix<T> B = random_uniform<T>(n, 2 * count, seed + 1, T(-1), T(1));
  for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
    Matrix<T> a = Matrix<T>::copy_of(A.view()), b = Matrix<T>::copy_of(B.view());
    a(n - 1, 4 * n) = bad;  // matrix 4, row n, column 1
    const Matrix<T> on_a = a.to(device), on_ok_a = A.to(device), on_b = B.to(device);
    for (int which = 0; which < 2; ++which) {
      try {
        if (which == 0) (void)batched::inv<T>(on_a.view());
        else (void)batched::solve<T>(on_a.view(), on_b.view());
        ADD_FAILURE() << "a non-finite entry was taken";
      } catch (const NonFiniteInput& e) {
        EXPECT_TRUE(std::string(e.what()).find("matrix 4 of the stack") != std::string::npos) << e.what();
        EXPECT_TRUE(std::string(e.what()).find("row " + std::to_string(n) + ", column 1") != std::string::npos) << e.what();
      }
    }
    b(0, 2 * 7 + 1) = bad;  // right-hand side 2 of matrix 7
    try {
      (void)batched::solve<T>(on_ok_a.view(), b.to(device).view());
      ADD_FAILURE() << "a non-finite right-hand side was taken";
    } catch (const NonFiniteInput& e) {
      EXPECT_TRUE(std::string(e.what()).find("B holds") != std::string::npos) << e.what();
      EXPECT_TRUE(std::string(e.what()).find("matrix 7 of the stack") != std::string::npos) << e.what();
    }
  }
  // members 2, 5 and 9 scaled to the ends of the range; member 11's entries near the largest number
  const int far = std::numeric_limits<T>::max_exponent - 24;
  const std::vector<std::pair<index, int>> scalings = {{2, -far}, {5, far}, {9, std::numeric_limits<T>::min_exponent - 10}};
  Matrix<T> a = Matrix<T>::copy_of(A.view());
  for (const auto& [k, e] : scalings)
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) a(i, k * n + j) = std::ldexp(a(i, k * n + j), e);
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < n; ++i)
      a(i, 11 * n + j) = static_cast<T>(std::numeric_limits<T>::max() / (4 * static_cast<double>(n)) *
                                        static_cast<double>(A(i, 11 * n + j)) / (2.0 * static_cast<double>(n)));
  const Matrix<T> on_a = a.to(device);
  const batched::Result<T> r = batched::inv<T>(on_a.view());
  const Matrix<T> x = r.x.to(Device::cpu());
  for (const batched::Singular& s : r.status.singular) {
    EXPECT_FALSE(std::isnan(s.rcond)) << "matrix " << s.matrix;
    EXPECT_EQ(s.matrix, 9) << "only the member whose inverse overflows is refused: " << s.why;
    EXPECT_FALSE(s.why.empty());
  }
  for (index k = 0; k < count; ++k) {
    if (k == 9) continue;  // subnormal entries: its inverse overflows
    const Matrix<T> single = Matrix<T>::copy_of(a.block(0, k * n, n, n));
    const ConstMatrixView<T> xk = x.block(0, k * n, n, n);
    ASSERT_TRUE(all_finite<T>(xk)) << "matrix " << k;
    const Solution<T> alone = inv<T>(single.view(), {.compute_residual = true});
    EXPECT_LE((relative_difference<T, T>(xk, alone.x.view())),
              2 * kForwardThreshold * static_cast<double>(n) * eps<T>() / alone.report.rcond)
        << "matrix " << k;
  }
}

}  // namespace linv::testing
