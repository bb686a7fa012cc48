// Shared by the CPU and GPU batched tests: batches with singular members, and per-matrix accuracy checks.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "linv/accuracy.hpp"
#include "linv/batched.hpp"
#include "linv/dense.hpp"
#include "linv/generate.hpp"
#include "support/dense_checks.hpp"

namespace linv::testing {

// count random n x n matrices (uniform in [-1, 1]) as an n x (n count) batch; every seventh one gets a
// zero column (at a position that varies), so its first zero pivot is exactly that column.
template <Real T>
Matrix<T> batch_with_singular(index n, index count, std::uint64_t seed, std::vector<index>& zero_pivot) {
  Matrix<T> A = random_uniform<T>(n, n * count, seed, T(-1), T(1));
  zero_pivot.assign(static_cast<std::size_t>(count), 0);
  for (index m = 3; m < count; m += 7) {
    const index column = (m * 5) % n;
    for (index i = 0; i < n; ++i) A(i, m * n + column) = T(0);
    zero_pivot[static_cast<std::size_t>(m)] = column + 1;
  }
  return A;
}

// Each regular matrix's inverse is backward stable (scaled residual below the threshold) and agrees with
// `reference` (when given) to n eps cond; each singular one is NaN.
template <Real T>
void expect_batch_inverse(ConstMatrixView<T> A, ConstMatrixView<T> X, const batched::Status& status,
                          const std::vector<index>& zero_pivot, const Matrix<T>* reference, const std::string& what) {
  const index n = A.rows(), count = n == 0 ? 0 : A.cols() / n;
  const index singular = std::count_if(zero_pivot.begin(), zero_pivot.end(), [](index p) { return p != 0; });
  ASSERT_EQ(status.singular, singular) << what;
  // the per-matrix pivots come back only when some matrix is singular
  const std::vector<index> pivot = singular > 0 ? status.pivot : std::vector<index>(zero_pivot.size(), 0);
  ASSERT_EQ(static_cast<index>(pivot.size()), count) << what;
  for (index m = 0; m < count; ++m) {
    SCOPED_TRACE(what + " matrix " + std::to_string(m));
    const ConstMatrixView<T> a = A.block(0, m * n, n, n), x = X.block(0, m * n, n, n);
    ASSERT_EQ(pivot[static_cast<std::size_t>(m)], zero_pivot[static_cast<std::size_t>(m)]);
    if (zero_pivot[static_cast<std::size_t>(m)] != 0) {
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(x(i, j))) << "a singular matrix's block must be NaN";
      continue;
    }
    ASSERT_TRUE(all_finite<T>(x)) << "unwritten (NaN) or overflowed output";
    EXPECT_LE(std::min(scaled_residual_inverse<T>(a, x, eps<T>()), scaled_left_residual_inverse<T>(a, x, eps<T>())),
              kResidualThreshold);
    if (reference != nullptr) {
      const ConstMatrixView<T> r = reference->block(0, m * n, n, n);
      const double cond = norm1<T>(a) * norm1<T>(r);
      const double bound = 2 * kForwardThreshold * static_cast<double>(n) * eps<T>() * cond;
      EXPECT_LE((relative_difference<T, T>(x, r)), bound);
    }
  }
}

// Each regular system's solution has a scaled residual below the threshold (when `backward_stable`) and
// agrees with `reference` (when given) to n eps cond; each singular one is NaN.
template <Real T>
void expect_batch_solution(ConstMatrixView<T> A, ConstMatrixView<T> B, ConstMatrixView<T> X,
                           const batched::Status& status, const std::vector<index>& zero_pivot,
                           const Matrix<T>* reference, bool backward_stable, const std::string& what) {
  const index n = A.rows(), count = n == 0 ? 0 : A.cols() / n, nrhs = count == 0 ? 0 : B.cols() / count;
  const index singular = std::count_if(zero_pivot.begin(), zero_pivot.end(), [](index p) { return p != 0; });
  ASSERT_EQ(status.singular, singular) << what;
  for (index m = 0; m < count; ++m) {
    SCOPED_TRACE(what + " system " + std::to_string(m));
    const ConstMatrixView<T> a = A.block(0, m * n, n, n), b = B.block(0, m * nrhs, n, nrhs),
                             x = X.block(0, m * nrhs, n, nrhs);
    if (zero_pivot[static_cast<std::size_t>(m)] != 0) {
      ASSERT_EQ(status.pivot[static_cast<std::size_t>(m)], zero_pivot[static_cast<std::size_t>(m)]);
      for (index j = 0; j < nrhs; ++j)
        for (index i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(x(i, j))) << "a singular system's block must be NaN";
      continue;
    }
    ASSERT_TRUE(all_finite<T>(x)) << "unwritten (NaN) or overflowed output";
    if (backward_stable) {
      EXPECT_LE(scaled_residual_solve<T>(a, x, b, eps<T>()), kResidualThreshold);
    }
    if (reference != nullptr) {
      const ConstMatrixView<T> r = reference->block(0, m * nrhs, n, nrhs);
      const double cond = norm1<T>(a) * norm1<T>(LU<T>(a).inverse().view());
      const double bound = 2 * kForwardThreshold * static_cast<double>(n) * eps<T>() * cond;
      EXPECT_LE((relative_difference<T, T>(x, r)), bound);
    }
  }
}

}  // namespace linv::testing
