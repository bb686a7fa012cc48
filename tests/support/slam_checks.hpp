// Shared by the CPU and GPU SLAM tests: Jacobians with (nearly) dependent columns, and the check that a
// rank-deficient one is refused by name.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "linv/slam.hpp"
#include "support/dense_checks.hpp"
#include "support/testing.hpp"

namespace linv::testing {

// 1 - R^2 of column `c` of J regressed on the others (1 / its variance inflation factor), by least squares
// on J itself in float64 (the normal matrix of a nearly dependent J is too ill-conditioned to invert).
inline double independence(const Matrix<double>& J, index c) {
  Matrix<double> others(J.rows(), J.cols() - 1), column(J.rows(), 1);
  for (index j = 0, o = 0; j < J.cols(); ++j) {
    MatrixView<double> to = j == c ? column.view() : others.block(0, o++, J.rows(), 1);
    for (index i = 0; i < J.rows(); ++i) to(i, 0) = J(i, j);
  }
  const Matrix<double> x = lstsq<double>(others.view(), column.view()).x;
  const Matrix<double> fit = matmul<double>(others.view(), x.view());
  double residual = 0, norm = 0;
  for (index i = 0; i < J.rows(); ++i) {
    residual += (column(i, 0) - fit(i, 0)) * (column(i, 0) - fit(i, 0));
    norm += column(i, 0) * column(i, 0);
  }
  return residual / norm;
}

// J with k dense columns of dyadic entries (10 fractional bits, so their multiples by powers of two and
// sums stay exact) on the segments of a random bordered Jacobian.
template <Real T>
using JacobianEdit = std::function<void(Matrix<T>&, const slam::BorderedJacobian<T>&)>;

template <Real T>
slam::BorderedJacobian<T> dyadic_jacobian(index n, index cols, index k, std::uint64_t seed, const JacobianEdit<T>& edit) {
  const slam::BorderedJacobian<T> base = slam::random_bordered_jacobian<T>(n, cols, seed);
  std::mt19937_64 rng(seed + 1);
  Matrix<T> dense(n, k);
  for (index c = 0; c < k; ++c)
    for (index r = 0; r < n; ++r) dense(r, c) = static_cast<T>(static_cast<int>(rng() % 2049) - 1024) / T(1024);
  edit(dense, base);
  return {std::move(dense), base.starts(), base.lengths(), base.values()};
}

// Every solver of a bordered J (normal_inverse only on the CPU, where it runs) refuses it with
// SingularMatrix naming one of `columns` (1-based), in the message too.
template <Real T>
void expect_refused(const slam::BorderedJacobian<T>& J, const std::vector<index>& columns, const std::string& what) {
  SCOPED_TRACE(what);
  const Matrix<T> d = random_uniform<T>(J.rows(), 2, 17, T(-1), T(1), J.device());
  for (int solver = 0; solver < (J.device().is_cpu() ? 3 : 2); ++solver) {
    try {
      if (solver == 0) (void)slam::pinv_apply(J, d.view());
      if (solver == 1) (void)slam::pinv(J);
      if (solver == 2) (void)slam::normal_inverse(J);
      ADD_FAILURE() << "solver " << solver << " returned a result for a rank-deficient J";
    } catch (const SingularMatrix& e) {
      EXPECT_NE(std::find(columns.begin(), columns.end(), e.pivot()), columns.end())
          << "solver " << solver << " named column " << e.pivot() << ": " << e.what();
      EXPECT_TRUE(contains(e.what(), "column " + std::to_string(e.pivot()) + " of J"));
      EXPECT_LT(e.rcond(), eps<T>());
    }
  }
}

}  // namespace linv::testing
