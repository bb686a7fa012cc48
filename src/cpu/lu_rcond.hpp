// LAPACK's condition estimate from LU factors (gecon: Hager's method with Higham's refinements, as lacn2),
// written out for small matrices, where LAPACKE's gecon costs more than the factorization itself in
// allocations, NaN scans and dlatrs's scaling logic: about 60 % of a whole 4 x 4 solve. Used by the CPU
// batched family (src/cpu/batched.cpp) and, up to kSmallRcondOrder, by the CPU dense family's lu_rcond.
// Without dlatrs's scaling its solves can overflow: callers check the result.
#pragma once

#include <algorithm>
#include <cmath>

#include "linv/matrix.hpp"

namespace linv::cpu {

// The order up to which the dense family estimates small factors here rather than by LAPACKE's gecon.
inline constexpr index kSmallRcondOrder = 32;

// x := U^-1 L^-1 x, or (transposed) x := L^-T U^-T x, for the LU factors `lu` of order n (LAPACK's layout,
// L unit lower) and the reciprocals of U's diagonal (a product instead of a division on the solve's
// critical path): A^-1 x and A^-T x up to the row interchanges, which change no 1-norm.
template <Real T>
inline void factors_solve(const T* lu, const T* reciprocal, index n, T* x, bool transposed) {
  if (!transposed) {
    for (index j = 0; j < n; ++j)
      for (index i = j + 1; i < n; ++i) x[i] -= lu[i + j * n] * x[j];
    for (index j = n - 1; j >= 0; --j) {
      x[j] *= reciprocal[j];
      for (index i = 0; i < j; ++i) x[i] -= lu[i + j * n] * x[j];
    }
  } else {
    for (index j = 0; j < n; ++j) {
      for (index i = 0; i < j; ++i) x[j] -= lu[i + j * n] * x[i];
      x[j] *= reciprocal[j];
    }
    for (index j = n - 1; j >= 0; --j)
      for (index i = j + 1; i < n; ++i) x[j] -= lu[i + j * n] * x[i];
  }
}

// A lower bound of the rcond (1-norm) from the LU factors in two solves with one vector, half what
// lu_rcond takes: for a triangular T and its comparison matrix M(T) (|t_ii| on the diagonal, -|t_ij| off
// it), |T^-1| <= M(T)^-1 elementwise (Higham, Accuracy and Stability of Numerical Algorithms, 8.3), so
// ||A^-1||_1 <= ||M(U)^-1||_1 ||M(L)^-1||_1, and ||M(T)^-1||_1 = ||M(T)^-T e||_inf since M(T)^-1 >= 0.
// Where it clears the threshold, so does gecon's estimate (which never lies below the true rcond), and
// the estimate is not needed. reciprocal: 1 / U's diagonal; x: n entries of work.
template <Real T>
inline double lu_rcond_lower_bound(const T* lu, const T* reciprocal, index n, double anorm, T* x) {
  double u_bound = 0, l_bound = 0;
  for (index j = 0; j < n; ++j) {  // M(U)^T x = e, forward
    T t = 1;
    for (index i = 0; i < j; ++i) t += std::abs(lu[i + j * n]) * x[i];
    x[j] = t * std::abs(reciprocal[j]);
    u_bound = std::max(u_bound, static_cast<double>(x[j]));
  }
  for (index j = n - 1; j >= 0; --j) {  // M(L)^T x = e, backward (unit diagonal)
    T t = 1;
    for (index i = j + 1; i < n; ++i) t += std::abs(lu[i + j * n]) * x[i];
    x[j] = t;
    l_bound = std::max(l_bound, static_cast<double>(t));
  }
  return 1 / (anorm * u_bound * l_bound);
}

// The reciprocal condition number (1-norm) from the LU factors and ||A||_1 as LAPACK's gecon computes it,
// or, where that already clears `threshold`, lu_rcond_lower_bound. gecon's estimate of ||A^-1||_1 is
// Hager's method with Higham's refinements, here step for step as LAPACK's lacn2 (about five dependent
// solves with one vector, O(n^2) against the factorization's O(n^3)); LAPACKE's gecon itself costs ten
// times more than the whole solve of a small matrix in allocations and NaN scans. work: 3n entries.
template <Real T>
inline double lu_rcond(const T* lu, index n, double anorm, double threshold, T* work) {
  if (anorm == 0) return 0;
  T *x = work, *sign = work + n, *reciprocal = work + 2 * n;
  for (index i = 0; i < n; ++i) reciprocal[i] = T(1) / lu[i + i * n];
  if (const double bound = lu_rcond_lower_bound(lu, reciprocal, n, anorm, x); bound >= threshold) return bound;
  const auto norm1 = [&] {
    double sum = 0;
    for (index i = 0; i < n; ++i) sum += std::abs(static_cast<double>(x[i]));
    return sum;
  };
  const auto largest = [&] {  // the first index of the largest |x_i|, as LAPACK's i?amax
    index j = 0;
    for (index i = 1; i < n; ++i)
      if (std::abs(x[i]) > std::abs(x[j])) j = i;
    return j;
  };
  const auto sign_of = [](T v) { return v >= T(0) ? T(1) : T(-1); };
  std::fill(x, x + n, T(1) / static_cast<T>(n));
  factors_solve(lu, reciprocal, n, x, false);
  double estimate = norm1();
  if (n > 1) {
    for (index i = 0; i < n; ++i) x[i] = sign[i] = sign_of(x[i]);
    factors_solve(lu, reciprocal, n, x, true);
    index j = largest();
    for (int iteration = 2;; ++iteration) {
      std::fill(x, x + n, T(0));
      x[j] = T(1);
      factors_solve(lu, reciprocal, n, x, false);
      const double previous = estimate;
      estimate = norm1();
      bool repeated = true;  // the same sign vector again: converged
      for (index i = 0; i < n; ++i) repeated = repeated && sign_of(x[i]) == sign[i];
      if (repeated || estimate <= previous) break;
      for (index i = 0; i < n; ++i) x[i] = sign[i] = sign_of(x[i]);
      factors_solve(lu, reciprocal, n, x, true);
      const index last = j;
      j = largest();
      if (x[last] == std::abs(x[j]) || iteration >= 5) break;
    }
    // the alternating-sign vector catches what the iteration missed on some special matrices
    for (index i = 0; i < n; ++i)
      x[i] = static_cast<T>((i % 2 == 0 ? 1 : -1) * (1 + static_cast<double>(i) / static_cast<double>(n - 1)));
    factors_solve(lu, reciprocal, n, x, false);
    estimate = std::max(estimate, 2 * norm1() / static_cast<double>(3 * n));
  }
  return estimate != 0 ? 1 / estimate / anorm : 0;
}

}  // namespace linv::cpu
