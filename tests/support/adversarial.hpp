// Matrices that stress pivoting (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., ch. 9,
// and the test set of Grigori, Demmel and Xiang's CALU paper): some make every pivoting strategy's growth
// factor explode, the others are hard in other ways (grading, ill-conditioning, triangular, orthogonal).
// Tournament pivoting must either stay accurate on them or give way to partial pivoting and say so.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "linv/dense.hpp"
#include "linv/generate.hpp"
#include "support/testing.hpp"

namespace linv::testing {

struct Adversary {
  std::string name;
  bool growth_explodes;  // exponential growth for partial pivoting too: tested at small orders (no overflow)
};

inline std::vector<Adversary> adversaries() {
  return {{"wilkinson", true}, {"foster", true},  {"graded rows", false}, {"graded columns", false},
          {"kahan", false},    {"orthogonal", false}, {"ill-conditioned", false}, {"hollow", false}};
}

// The named matrix of order n (seeded where random).
template <Real T>
Matrix<T> adversary(const std::string& name, index n, std::uint64_t seed) {
  Matrix<T> a(n, n);
  const Matrix<T> r = random_uniform<T>(n, n, seed);
  if (name == "wilkinson") {  // ones on the diagonal and in the last column, -1 below: growth 2^(n-1)
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) a(i, j) = i == j || j == n - 1 ? T(1) : i > j ? T(-1) : T(0);
  } else if (name == "foster") {  // Foster (1994): a Volterra equation by the trapezium rule, k h = 2/3
    const double kh = 2.0 / 3.0;
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) {
        double v = 0;
        if (j == n - 1) v = i == n - 1 ? 1 - kh / 2 : -1;
        else if (i == j) v = 1 - kh / 2;
        else if (i > j) v = j == 0 ? -kh / 2 : -kh;
        a(i, j) = static_cast<T>(v);
      }
  } else if (name == "graded rows" || name == "graded columns") {  // scales over six orders of magnitude
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) {
        const index k = name == "graded rows" ? i : j;
        a(i, j) = r(i, j) * static_cast<T>(std::pow(10.0, 3.0 - 6.0 * static_cast<double>(k) / static_cast<double>(n)));
      }
  } else if (name == "kahan") {  // Kahan's upper triangular matrix, s^2 + c^2 = 1, badly conditioned
    const double theta = 1.2, s = std::sin(theta), c = std::cos(theta);
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i)
        a(i, j) = static_cast<T>(i > j ? 0.0 : std::pow(s, static_cast<double>(i)) * (i == j ? 1.0 : -c));
  } else if (name == "orthogonal") {  // Q of a random matrix's QR: growth-free, perfectly conditioned
    a = generate<T>(MatrixKind::IllCond, n, {.cond = 1, .seed = seed});
  } else if (name == "ill-conditioned") {
    a = generate<T>(MatrixKind::IllCond, n, {.cond = 1e-2 / static_cast<double>(std::numeric_limits<T>::epsilon()), .seed = seed});
  } else {  // hollow: a zero diagonal, so every step must pivot
    a = generate<T>(MatrixKind::Hollow, n, {.seed = seed});
  }
  return a;
}

// visit(adversary, n, A, b) for every adversary at its orders (60 where growth explodes, otherwise 300 and
// 1100: two 256-row tiles and three rounds of the tournament; 300 and 600, two rounds, at reduced sizes),
// with fresh seeds from `salt` and the case traced.
template <Real T, class Visit>
void for_each_adversary(std::uint64_t salt, Visit&& visit) {
  for (const Adversary& adv : adversaries())
    for (index n : adv.growth_explodes ? std::vector<index>{60} : sizes<std::vector<index>>({300, 1100}, {300, 600})) {
      const auto seed = case_seed(salt++);
      LINV_TRACE_SEED(seed);
      SCOPED_TRACE(adv.name + " n=" + std::to_string(n));
      visit(adv, n, adversary<T>(adv.name, n, seed), random_uniform<T>(n, 1, seed + 1));
    }
}

// A permutation-like matrix with a zero diagonal: one n-cycle through a shuffled order (no fixed point),
// its entries log-spaced from 1 to 1 / cond in shuffled order (so cond is the 1-norm condition number), plus
// uniform noise in [-noise, noise] off the diagonal. The kind of matrix a randomized LU (no pivoting after
// the butterflies) finds hardest: partial pivoting inverts it without growth.
template <Real T>
Matrix<T> permutation_like(index n, double cond, double noise, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), index{0});
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<double> scales(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < scales.size(); ++i)
    scales[i] = n > 1 ? std::pow(cond, -static_cast<double>(i) / static_cast<double>(n - 1)) : 1.0;
  std::shuffle(scales.begin(), scales.end(), rng);
  Matrix<T> a = random_uniform<T>(n, n, seed + 1, T(-noise), T(noise));
  for (std::size_t i = 0; i < order.size(); ++i) a(order[i], order[(i + 1) % order.size()]) = static_cast<T>(scales[i]);
  for (index i = 0; i < n; ++i) a(i, i) = 0;
  return a;
}

}  // namespace linv::testing
