// Shared by the CPU and GPU PARAFAC2 tests: a known PARAFAC2 model plus noise.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "linv/dense.hpp"
#include "linv/matrix.hpp"

namespace linv::testing {

// A PARAFAC2 model X_k = A diag(c_k) (P_k H)^T plus Gaussian noise of `noise` times the model's RMS.
// H is orthogonal times diag(1 .. 2) and C uniform in [0.2, 1.2], a well-posed model (no two components
// alike in every mode), so that ALS reaches it from the SVD start.
struct Synthetic {
  Matrix<double> A, H, C;
  std::vector<Matrix<double>> B;  // P_k H
  std::vector<Matrix<double>> X;
};

// Columns made orthonormal by modified Gram-Schmidt, twice (enough for float64 orthogonality).
inline void orthonormalize(Matrix<double>& Q) {
  for (int pass = 0; pass < 2; ++pass)
    for (index c = 0; c < Q.cols(); ++c) {
      for (index p = 0; p < c; ++p) {
        double t = 0;
        for (index i = 0; i < Q.rows(); ++i) t += Q(i, p) * Q(i, c);
        for (index i = 0; i < Q.rows(); ++i) Q(i, c) -= t * Q(i, p);
      }
      double norm = 0;
      for (index i = 0; i < Q.rows(); ++i) norm += Q(i, c) * Q(i, c);
      for (index i = 0; i < Q.rows(); ++i) Q(i, c) /= std::sqrt(norm);
    }
}

inline Synthetic synthetic(index I, const std::vector<index>& J, index F, double noise, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> strength(0.2, 1.2);
  auto gaussian = [&](index r, index c) {
    Matrix<double> m(r, c);
    for (index e = 0; e < m.size(); ++e) m.data()[e] = normal(rng);
    return m;
  };
  const index K = static_cast<index>(J.size());
  Synthetic s{gaussian(I, F), gaussian(F, F), Matrix<double>(K, F), {}, {}};
  orthonormalize(s.H);
  for (index c = 0; c < F; ++c)
    for (index r = 0; r < F; ++r) s.H(r, c) *= 1.0 + static_cast<double>(c) / static_cast<double>(std::max<index>(F - 1, 1));
  for (index e = 0; e < s.C.size(); ++e) s.C.data()[e] = strength(rng);
  for (index k = 0; k < K; ++k) {
    Matrix<double> P = gaussian(J[static_cast<std::size_t>(k)], F);
    orthonormalize(P);
    Matrix<double> B(J[static_cast<std::size_t>(k)], F), AD = s.A.clone(), X(I, J[static_cast<std::size_t>(k)]);
    gemm<double>(Op::None, Op::None, 1.0, P.view(), s.H.view(), 0.0, B.view());
    for (index c = 0; c < F; ++c)
      for (index i = 0; i < I; ++i) AD(i, c) *= s.C(k, c);
    gemm<double>(Op::None, Op::Transpose, 1.0, AD.view(), B.view(), 0.0, X.view());
    double power = 0;
    for (index e = 0; e < X.size(); ++e) power += X.data()[e] * X.data()[e];
    const double sigma = noise * std::sqrt(power / static_cast<double>(X.size()));
    for (index e = 0; e < X.size(); ++e) X.data()[e] += sigma * normal(rng);
    s.B.push_back(std::move(B));
    s.X.push_back(std::move(X));
  }
  return s;
}

}  // namespace linv::testing
