// Shared by the CPU and GPU fMRI tests: random normal matrices and dictionaries, Aharon et al.'s
// synthetic sparse data, and the fraction of true atoms a learned dictionary recovers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "linv/dense.hpp"
#include "linv/errors.hpp"
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

// Codes (D.cols() x signals, `sparsity` nonzeros a column: 1, 1.25, 1.5, ...) whose every support S meets
// Tropp's exact recovery condition max_{j not in S} ||D_S^+ d_j||_1 < 1 with a margin (0.9): OMP then
// picks S's atoms first, in exact arithmetic and with rounding to spare. A random support need not meet
// it (a 4-sparse one of a random 64 x 128 dictionary fails about one time in fifty, and OMP then takes a
// wrong atom and needs a fifth): supports are drawn until one does.
inline Matrix<double> exactly_recoverable_codes(const Matrix<double>& D, index signals, index sparsity,
                                                std::uint64_t seed) {
  const index T = D.rows(), K = D.cols();
  std::mt19937_64 rng(seed);
  std::vector<index> order(static_cast<std::size_t>(K));
  Matrix<double> codes(K, signals);
  for (index j = 0; j < signals; ++j) {
    for (int attempt = 0;; ++attempt) {
      if (attempt == 1000) throw InvalidArgument("no support of this dictionary meets the exact recovery condition");
      for (index a = 0; a < K; ++a) order[static_cast<std::size_t>(a)] = a;
      std::shuffle(order.begin(), order.end(), rng);
      Matrix<double> S(T, sparsity), rest(T, K - sparsity);
      for (index i = 0; i < T; ++i) {
        for (index t = 0; t < sparsity; ++t) S(i, t) = D(i, order[static_cast<std::size_t>(t)]);
        for (index r = 0; r < K - sparsity; ++r) rest(i, r) = D(i, order[static_cast<std::size_t>(sparsity + r)]);
      }
      // D_S^+ d_j = (S^T S)^-1 S^T d_j for every other atom at once
      const auto at_b = [T](const Matrix<double>& A, const Matrix<double>& B) {
        Matrix<double> C(A.cols(), B.cols());
        for (index q = 0; q < B.cols(); ++q)
          for (index p = 0; p < A.cols(); ++p)
            for (index i = 0; i < T; ++i) C(p, q) += A(i, p) * B(i, q);
        return C;
      };
      const Matrix<double> gram = at_b(S, S), cross = at_b(S, rest);
      const Matrix<double> z = solve<double>(gram.view(), cross.view()).x;
      double worst = 0;
      for (index r = 0; r < z.cols(); ++r) {
        double sum = 0;
        for (index t = 0; t < sparsity; ++t) sum += std::abs(z(t, r));
        worst = std::max(worst, sum);
      }
      if (worst >= 0.9) continue;
      for (index t = 0; t < sparsity; ++t)
        codes(order[static_cast<std::size_t>(t)], j) = 1.0 + 0.25 * static_cast<double>(t);
      break;
    }
  }
  return codes;
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
