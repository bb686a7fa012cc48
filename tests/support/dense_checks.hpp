// Accuracy assertions shared by the dense tests. Bounds are LAPACK-test-style ratios: a scaled residual
// (already divided by n eps ||A|| ||X||) must stay below kResidualThreshold, and a forward error must stay
// below kForwardThreshold * n * eps * cond. The thresholds are LAPACK's own test thresholds (30).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "linv/accuracy.hpp"
#include "linv/dense.hpp"

namespace linv::testing {

inline constexpr double kResidualThreshold = 30.0;
inline constexpr double kForwardThreshold = 30.0;

template <Real T>
constexpr double eps() {
  return std::numeric_limits<T>::epsilon();
}

// ||X - Xref||_1 / ||Xref||_1
template <Real T, Real U>
double relative_difference(ConstMatrixView<T> X, ConstMatrixView<U> Xref) {
  double num = 0, den = 0;
  for (index j = 0; j < X.cols(); ++j) {
    double sn = 0, sd = 0;
    for (index i = 0; i < X.rows(); ++i) {
      sn += std::abs(static_cast<double>(X(i, j)) - static_cast<double>(Xref(i, j)));
      sd += std::abs(static_cast<double>(Xref(i, j)));
    }
    num = std::max(num, sn);
    den = std::max(den, sd);
  }
  return den > 0 ? num / den : num;
}

// max_i |a_i - b_i| / |b_i|: how far two histories (objectives, losses) of one length are apart
inline double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
  return worst;
}

template <Real T>
bool all_finite(ConstMatrixView<T> X) {
  for (index j = 0; j < X.cols(); ++j)
    for (index i = 0; i < X.rows(); ++i)
      if (!std::isfinite(X(i, j))) return false;
  return true;
}

}  // namespace linv::testing
