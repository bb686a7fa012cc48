// Shared by the PARAFAC2 tests that compare a fit against the CPU's (the GPU's, the distributed one's):
// how far two fits may differ, from the conditioning of what they solve.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "common/lapack.hpp"
#include "linv/parafac2.hpp"

namespace linv::testing {

// max |P^T P - I|
template <Real T>
inline double orthogonality(const Matrix<T>& P) {
  double worst = 0;
  for (index a = 0; a < P.cols(); ++a)
    for (index b = 0; b < P.cols(); ++b) {
      double t = 0;
      for (index i = 0; i < P.rows(); ++i) t += static_cast<double>(P(i, a)) * P(i, b);
      worst = std::max(worst, std::abs(t - (a == b ? 1.0 : 0.0)));
    }
  return worst;
}

// cond_2(Q_k) for Q_k = X_k^T A diag(c_k) H^T of the fitted model, in float64 (LAPACK gesdd).
template <Real T>
inline double condition_of_q(const fmri::Parafac2Result<T>& r, const Matrix<double>& X, index k) {
  const index F = r.H.rows();
  Matrix<double> AD = r.A.template cast<double>(), M(X.rows(), F), Q(X.cols(), F), U(X.cols(), F), VT(F, F);
  const Matrix<double> H = r.H.template cast<double>();
  for (index c = 0; c < F; ++c)
    for (index i = 0; i < AD.rows(); ++i) AD(i, c) *= static_cast<double>(r.C(k, c));
  cpu::lapack::gemm<double>(Op::None, Op::Transpose, 1.0, AD.view(), H.view(), 0.0, M.view());
  cpu::lapack::gemm<double>(Op::Transpose, Op::None, 1.0, X.view(), M.view(), 0.0, Q.view());
  std::vector<double> s(static_cast<std::size_t>(F));
  EXPECT_EQ(cpu::lapack::gesdd<double>(Q.view(), s.data(), U.view(), VT.view()), 0);
  return s.front() / s.back();
}

// The largest cond_2 of the final ALS steps' normal equations: A, H and C each solve with the Hadamard
// product of the other two factors' Gram matrices (H^T H * C^T C for A, and so on), so a rounding
// difference in the data's Gram matrices moves a factor by up to that condition number times as much
// (an H100 run at rank 34 moved H by 6.6e-9 where the loss history agreed to 1e-9).
template <Real T>
inline double als_condition(const fmri::Parafac2Result<T>& r) {
  auto gram = [](const Matrix<T>& F) {
    const Matrix<double> f = F.template cast<double>();
    Matrix<double> g(f.cols(), f.cols());
    cpu::lapack::gemm<double>(Op::Transpose, Op::None, 1.0, f.view(), f.view(), 0.0, g.view());
    return g;
  };
  const Matrix<double> a = gram(r.A), h = gram(r.H), c = gram(r.C);
  double worst = 1;
  for (const auto& [x, y] : {std::pair{&h, &c}, std::pair{&a, &c}, std::pair{&a, &h}}) {
    const index F = x->rows();
    Matrix<double> G(F, F), U(F, F), VT(F, F);
    for (index j = 0; j < F; ++j)
      for (index i = 0; i < F; ++i) G(i, j) = (*x)(i, j) * (*y)(i, j);
    std::vector<double> s(static_cast<std::size_t>(F));
    EXPECT_EQ(cpu::lapack::gesdd<double>(G.view(), s.data(), U.view(), VT.view()), 0);
    worst = std::max(worst, s.front() / s.back());
  }
  return worst;
}

}  // namespace linv::testing
