// Shared by the CPU and GPU fMRI tests: random normal matrices and dictionaries, Aharon et al.'s
// synthetic sparse data, and the fraction of true atoms a learned dictionary recovers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "linv/dense.hpp"
#include "linv/generate.hpp"
#include "linv/matrix.hpp"

namespace linv::testing {

// A dictionary of unit-norm random atoms.
inline Matrix<double> random_dictionary(index T, index K, std::uint64_t seed) {
  Matrix<double> D = random_uniform<double>(T, K, seed, -1.0, 1.0);
  for (index a = 0; a < K; ++a) {
    double s = 0;
    for (index i = 0; i < T; ++i) s += D(i, a) * D(i, a);
    for (index i = 0; i < T; ++i) D(i, a) /= std::sqrt(s);
  }
  return D;
}

// A matrix of standard normal entries (seeded).
inline Matrix<double> random_normal(index rows, index cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix<double> A(rows, cols);
  for (index e = 0; e < A.size(); ++e) A.data()[e] = normal(rng);
  return A;
}

// The fraction of truth's atoms that some learned atom matches to |correlation| >= 0.99.
inline double recovered_fraction(const Matrix<double>& truth, const Matrix<double>& learned) {
  index found = 0;
  for (index a = 0; a < truth.cols(); ++a) {
    double best = 0;
    for (index b = 0; b < learned.cols(); ++b) {
      double c = 0;
      for (index i = 0; i < truth.rows(); ++i) c += truth(i, a) * learned(i, b);
      best = std::max(best, std::abs(c));
    }
    found += best >= 0.99 ? 1 : 0;
  }
  return static_cast<double>(found) / static_cast<double>(truth.cols());
}

// Recovery tests average over this many fresh problems (see Ksvd.RecoversTheDictionaryAndItsErrorNeverGrows).
constexpr int kRecoveryTrials = 10;

// Noiseless 3-sparse data over a random 20 x 40 dictionary, 1500 signals.
struct SparseSynthetic {
  Matrix<double> truth, X;
};
inline SparseSynthetic sparse_synthetic(std::uint64_t seed) {
  const index T = 20, K = 40, N = 1500, T0 = 3;
  SparseSynthetic s{random_dictionary(T, K, seed), Matrix<double>()};
  Matrix<double> codes(K, N);
  std::mt19937_64 rng(seed + 1);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (index j = 0; j < N; ++j)
    for (index t = 0; t < T0; ++t)
      codes(static_cast<index>(rng() % static_cast<std::uint64_t>(K)), j) = value(rng) + (value(rng) > 0 ? 1.0 : -1.0);
  s.X = matmul<double>(s.truth.view(), codes.view());
  return s;
}

}  // namespace linv::testing
