// Higham and Tisseur's block 1-norm estimator (SIAM J. Matrix Anal. Appl. 21(4), 2000, Algorithm 2.4;
// MATLAB's normest1, SciPy's onenormest): a lower bound of ||B||_1 for an operator B seen only through
// products with blocks of t vectors, exact in most cases and within a factor 3 in nearly all. A backend
// whose products cost the same for t vectors as for one (a bandwidth-bound triangular solve reads the
// factors once) gets a sharper estimate than LAPACK's one-vector lacn2 for fewer passes: typically two
// products with B and two with B^T. The loop runs on the host over n x t blocks; `apply` takes them to
// wherever B lives. For complex T (std::complex) the signs are y / |y| and no two columns are tested for
// being parallel, as the paper's complex variant does; `apply`'s transpose is then the conjugate transpose.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

namespace linv::cpu {

// apply(X, transpose) replaces the host block X (n x t, column-major, leading dimension n) by B X, or
// by B^T X when transpose is true. Deterministic: the random starting columns come from a fixed seed.
template <class T, class Apply>
double block_norm1_estimate(std::int64_t n, int t, Apply&& apply, int max_iterations = 5) {
  using Block = std::vector<T>;
  constexpr bool kComplex = !std::is_floating_point_v<T>;  // std::complex: B^T X reads B^H X
  // sign(y): +-1, or y / |y| for a complex y (1 at 0)
  auto sign_of = [](T y) -> T {
    if constexpr (kComplex) {
      const auto m = std::abs(y);
      return m > 0 ? y / m : T(1);
    } else {
      return y >= T(0) ? T(1) : T(-1);
    }
  };
  const auto N = static_cast<std::size_t>(n);
  if (n == 0) return 0.0;
  auto column = [&](Block& X, int j) { return X.data() + static_cast<std::size_t>(j) * N; };
  auto norm1 = [&](const T* x) {
    double s = 0;
    for (std::size_t i = 0; i < N; ++i) s += static_cast<double>(std::abs(x[i]));
    return s;
  };
  if (n <= 2 * t) {  // small: the exact norm, t columns of the identity at a time
    double best = 0;
    for (std::int64_t j0 = 0; j0 < n; j0 += t) {
      Block X(N * static_cast<std::size_t>(t), T(0));
      for (int j = 0; j < t && j0 + j < n; ++j) column(X, j)[j0 + j] = T(1);
      apply(X, false);
      for (int j = 0; j < t && j0 + j < n; ++j) best = std::max(best, norm1(column(X, j)));
    }
    return best;
  }

  std::mt19937_64 random(0x6c696e76);  // "linv"
  auto random_signs = [&](T* x) {
    for (std::size_t i = 0; i < N; ++i) x[i] = (random() & 1) ? T(1) : T(-1);
  };
  // Columns of +-1 entries are parallel when |x^T y| = n.
  auto parallel = [&](const T* x, const T* y) {
    if constexpr (kComplex) {
      return false;  // complex signs are never tested (Higham and Tisseur, section 2)
    } else {
      double d = 0;
      for (std::size_t i = 0; i < N; ++i) d += static_cast<double>(x[i]) * static_cast<double>(y[i]);
      return std::abs(d) == static_cast<double>(n);
    }
  };
  // Column j of S resampled until it is parallel to no earlier column of S nor any of S_old (a bounded
  // number of tries: with n > 2t a clash is unlikely, and a remaining one only costs sharpness).
  auto make_distinct = [&](Block& S, const Block* S_old, int j) {
    for (int tries = 0; tries < 64; ++tries) {
      bool clash = false;
      for (int i = 0; i < j && !clash; ++i) clash = parallel(column(S, j), column(S, i));
      for (int i = 0; S_old && i < t && !clash; ++i) clash = parallel(column(S, j), S_old->data() + i * N);
      if (!clash) return;
      random_signs(column(S, j));
    }
  };

  Block X(N * static_cast<std::size_t>(t));
  std::fill(X.begin(), X.begin() + static_cast<std::ptrdiff_t>(N), T(1));
  for (int j = 1; j < t; ++j) {
    random_signs(column(X, j));
    make_distinct(X, nullptr, j);
  }
  for (T& x : X) x /= static_cast<T>(n);

  std::vector<bool> used(N, false);  // unit vectors already tried
  std::vector<std::int64_t> ind(static_cast<std::size_t>(t), -1);
  std::int64_t ind_best = -1;
  double est = 0, est_old = 0;
  Block S(N * static_cast<std::size_t>(t), T(0)), S_old;
  for (int k = 1;; ++k) {
    Block Y = X;
    apply(Y, false);
    int j_best = 0;
    est = 0;
    for (int j = 0; j < t; ++j) {
      const double s = norm1(column(Y, j));
      if (s > est) est = s, j_best = j;
    }
    if (k >= 2 && est <= est_old) {
      est = est_old;
      break;
    }
    if (k >= 2) ind_best = ind[static_cast<std::size_t>(j_best)];
    est_old = est;
    if (k > max_iterations) break;
    S_old = S;
    for (std::size_t i = 0; i < Y.size(); ++i) S[i] = sign_of(Y[i]);
    if (k >= 2) {
      bool all_parallel = true;  // no new direction: converged
      for (int j = 0; j < t && all_parallel; ++j) {
        bool found = false;
        for (int i = 0; i < t && !found; ++i) found = parallel(column(S, j), S_old.data() + i * N);
        all_parallel = found;
      }
      if (all_parallel) break;
    }
    for (int j = 0; j < t; ++j) make_distinct(S, k >= 2 ? &S_old : nullptr, j);
    Block Z = S;
    apply(Z, true);
    std::vector<double> h(N, 0.0);
    for (int j = 0; j < t; ++j)
      for (std::size_t i = 0; i < N; ++i) h[i] = std::max(h[i], static_cast<double>(std::abs(Z[j * N + i])));
    const double h_max = *std::max_element(h.begin(), h.end());
    if (k >= 2 && ind_best >= 0 && h_max == h[static_cast<std::size_t>(ind_best)]) break;
    std::vector<std::int64_t> order(N);
    std::iota(order.begin(), order.end(), std::int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return h[static_cast<std::size_t>(a)] > h[static_cast<std::size_t>(b)];
    });
    bool all_used = true;
    for (int j = 0; j < t; ++j) all_used = all_used && used[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])];
    if (all_used) break;
    // The next block: unit vectors at the t largest entries of h not tried before.
    int taken = 0;
    for (std::size_t p = 0; p < N && taken < t; ++p) {
      const std::int64_t i = order[p];
      if (used[static_cast<std::size_t>(i)]) continue;
      used[static_cast<std::size_t>(i)] = true;
      ind[static_cast<std::size_t>(taken++)] = i;
    }
    if (taken < t) break;  // every unit vector was tried
    std::fill(X.begin(), X.end(), T(0));
    for (int j = 0; j < t; ++j) column(X, j)[ind[static_cast<std::size_t>(j)]] = T(1);
  }
  return est;
}

}  // namespace linv::cpu
