// Shared by the CPU and GPU weighted least-squares tests: random problems (the paper's graded weights
// optional), a float64 QR reference, and the normal equations' condition number.
#pragma once

#include <cmath>

#include "linv/dense.hpp"
#include "linv/generate.hpp"

namespace linv::testing {

struct Problem {
  Matrix<double> A, d, b;
};

inline Problem random_problem(index m, index n, std::uint64_t seed, bool graded_weights) {
  Problem p{random_uniform<double>(m, n, seed, -1.0, 1.0), random_uniform<double>(n, 1, seed + 1, 0.01, 1.0),
            random_uniform<double>(n, 2, seed + 2, -1.0, 1.0)};
  if (graded_weights && n > 1)  // the paper's Table 2: D^2_i = 10^(-4 + 8 i / (n - 1)); one weight stays as drawn
    for (index i = 0; i < n; ++i) p.d(i, 0) = std::pow(10.0, -4.0 + 8.0 * static_cast<double>(i) / (n - 1));
  return p;
}

// The same problem as a least-squares problem min || A_w x - b_w || with A_w = (A D)^T, b_w = D b.
inline Solution<double> qr_reference(const Problem& p) {
  const index m = p.A.rows(), n = p.A.cols();
  Matrix<double> aw(n, m), bw(n, p.b.cols());
  for (index i = 0; i < n; ++i) {
    const double w = std::sqrt(p.d(i, 0));
    for (index r = 0; r < m; ++r) aw(i, r) = p.A(r, i) * w;
    for (index j = 0; j < p.b.cols(); ++j) bw(i, j) = p.b(i, j) * w;
  }
  return lstsq<double>(aw.view(), bw.view());
}

// cond_1(A D^2 A^T), the sensitivity of the normal equations.
inline double normal_cond(const Problem& p) {
  const index m = p.A.rows(), n = p.A.cols();
  Matrix<double> c(m, m);
  for (index j = 0; j < m; ++j)
    for (index i = 0; i < m; ++i) {
      double s = 0;
      for (index t = 0; t < n; ++t) s += p.A(i, t) * p.d(t, 0) * p.A(j, t);
      c(i, j) = s;
    }
  return norm1<double>(c.view()) * norm1<double>(LU<double>(c.view()).inverse().view());
}

}  // namespace linv::testing
