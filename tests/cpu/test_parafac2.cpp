// PARAFAC2: recovery of a known model (noise-free and noisy, float and double, ragged slabs on both of the
// code paths: slabs wider and narrower than their rows), a loss that never increases beyond rounding,
// orthonormal P_k, the reported loss against an explicitly formed model, the output conventions, and bad
// input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/parafac2.hpp"
#include "support/parafac2_synthetic.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

using testing::Synthetic;
using testing::synthetic;

constexpr double kThreshold = 30;  // LAPACK's test threshold for scaled ratios

template <Real T>
std::vector<Matrix<T>> as(const std::vector<Matrix<double>>& X) {
  std::vector<Matrix<T>> out;
  for (const Matrix<double>& x : X) out.push_back(x.cast<T>());
  return out;
}

template <Real T>
std::vector<ConstMatrixView<T>> views(const std::vector<Matrix<T>>& X) {
  std::vector<ConstMatrixView<T>> out;
  for (const Matrix<T>& x : X) out.push_back(x.view());
  return out;
}

// |cos| of the angle between column a of X and column b of Y.
template <class MX, class MY>
double congruence(const MX& X, index a, const MY& Y, index b) {
  double xy = 0, xx = 0, yy = 0;
  for (index i = 0; i < X.rows(); ++i) {
    const double x = static_cast<double>(X(i, a)), y = static_cast<double>(Y(i, b));
    xy += x * y, xx += x * x, yy += y * y;
  }
  return std::abs(xy) / std::sqrt(xx * yy);
}

// The smallest Tucker congruence of A, C and the stacked B_k with the truth, under the best matching of
// components (all permutations; F is small).
template <Real T>
double recovery(const Synthetic& s, const fmri::Parafac2Result<T>& r) {
  const index F = s.H.rows(), K = s.C.rows();
  index rows = 0;
  for (const Matrix<double>& b : s.B) rows += b.rows();
  Matrix<double> truth(rows, F), fitted(rows, F);
  for (index k = 0, at = 0; k < K; at += s.B[static_cast<std::size_t>(k)].rows(), ++k) {
    const Matrix<T>& P = r.P[static_cast<std::size_t>(k)];
    for (index c = 0; c < F; ++c)
      for (index j = 0; j < P.rows(); ++j) {
        truth(at + j, c) = s.B[static_cast<std::size_t>(k)](j, c);
        double t = 0;
        for (index g = 0; g < F; ++g) t += static_cast<double>(P(j, g)) * static_cast<double>(r.H(g, c));
        fitted(at + j, c) = t;
      }
  }
  std::vector<index> perm(static_cast<std::size_t>(F));
  std::iota(perm.begin(), perm.end(), index{0});
  double best = 0;
  do {
    double worst = 1;
    for (index c = 0; c < F; ++c) {
      const index p = perm[static_cast<std::size_t>(c)];
      worst = std::min({worst, congruence(s.A, c, r.A, p), congruence(s.C, c, r.C, p), congruence(truth, c, fitted, p)});
    }
    best = std::max(best, worst);
  } while (std::next_permutation(perm.begin(), perm.end()));
  return best;
}

// ||X - truth||^2: what the true model (A, C and the B_k = P_k H the data were made from) leaves, the noise.
double truth_loss(const Synthetic& s) {
  double loss = 0;
  for (std::size_t k = 0; k < s.X.size(); ++k) {
    const Matrix<double>& X = s.X[k];
    const Matrix<double>& B = s.B[k];
    for (index j = 0; j < X.cols(); ++j)
      for (index i = 0; i < X.rows(); ++i) {
        double m = 0;
        for (index c = 0; c < s.A.cols(); ++c) m += s.A(i, c) * s.C(static_cast<index>(k), c) * B(j, c);
        loss += (X(i, j) - m) * (X(i, j) - m);
      }
  }
  return loss;
}

// ||X - model||^2 formed explicitly in float64.
template <Real T>
double explicit_loss(const std::vector<Matrix<double>>& X, const fmri::Parafac2Result<T>& r) {
  const index I = r.A.rows(), F = r.H.rows();
  const Matrix<double> A = r.A.template cast<double>(), H = r.H.template cast<double>();
  double loss = 0;
  for (std::size_t k = 0; k < X.size(); ++k) {
    const Matrix<double> P = r.P[k].template cast<double>();
    Matrix<double> B(P.rows(), F), AD = A.clone(), M = X[k].clone();
    gemm<double>(Op::None, Op::None, 1.0, P.view(), H.view(), 0.0, B.view());
    for (index c = 0; c < F; ++c)
      for (index i = 0; i < I; ++i) AD(i, c) *= static_cast<double>(r.C(static_cast<index>(k), c));
    gemm<double>(Op::None, Op::Transpose, -1.0, AD.view(), B.view(), 1.0, M.view());
    for (index e = 0; e < M.size(); ++e) loss += M.data()[e] * M.data()[e];
  }
  return loss;
}

template <class T>
class Parafac2Typed : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Parafac2Typed, Types);

// Ragged slabs, two narrower than the recovery test's 60 rows (kept as data) and the others wider (reduced to Gram matrices).
const std::vector<index> kColumns = {120, 30, 200, 60, 90, 150, 45, 110};

TYPED_TEST(Parafac2Typed, RecoversAKnownModel) {
  using T = TypeParam;
  for (const double noise : {0.0, 0.05}) {
    const std::uint64_t seed = testing::case_seed(noise > 0 ? 1 : 2);
    LINV_TRACE_SEED(seed);
    SCOPED_TRACE(::testing::Message() << "noise " << noise);
    const Synthetic s = synthetic(60, kColumns, 3, noise, seed);
    const std::vector<Matrix<T>> X = as<T>(s.X);
    // without noise, ALS converges linearly all the way down to rounding, which can take more than the
    // default 1000 iterations when two components are alike in one mode
    const fmri::Parafac2Result<T> r =
        fmri::parafac2<T>(views(X), {.rank = 3, .max_iterations = noise > 0 ? 1000 : 10000, .seed = seed});
    if (noise == 0) {
      EXPECT_GE(recovery(s, r), 0.99);
    } else {
      // With noise the estimate moves off the truth by what the noise allows, more where two components are
      // alike (one draw in a few hundred came to 0.9896): what must hold is that it fits at least as well as
      // the true model, a feasible point of the same least-squares problem, and that its components are the
      // true ones by Lorenzo-Seva and ten Berge's rule (congruence 0.95 and up: "equal").
      EXPECT_LE(r.loss, truth_loss(s));
      EXPECT_GE(recovery(s, r), 0.95);
    }
    // noise at 5 % of the RMS leaves about 0.25 % of the variance unexplained
    EXPECT_GT(r.variance_explained, noise > 0 ? 0.99 : 1 - 1e-6);
  }
}

TYPED_TEST(Parafac2Typed, LossNeverIncreasesAndMatchesTheExplicitModel) {
  using T = TypeParam;
  const std::uint64_t seed = testing::case_seed(3);
  LINV_TRACE_SEED(seed);
  const Synthetic s = synthetic(40, kColumns, 4, 0.5, seed);
  const std::vector<Matrix<T>> X = as<T>(s.X);
  for (const fmri::Parafac2Start start : {fmri::Parafac2Start::Svd, fmri::Parafac2Start::Random}) {
    const fmri::Parafac2Result<T> r =
        fmri::parafac2<T>(views(X), {.rank = 4, .max_iterations = 300, .start = start, .seed = seed});
    ASSERT_EQ(static_cast<int>(r.loss_history.size()), r.report.iterations);
    // the iterations compute in float64; the loss is a difference of terms of size ||X||^2
    const double step = kThreshold * 4 * std::numeric_limits<double>::epsilon() * r.norm_squared;
    for (std::size_t t = 1; t < r.loss_history.size(); ++t)
      EXPECT_LE(r.loss_history[t], r.loss_history[t - 1] + step) << "iteration " << t + 1;
    // the returned model, formed explicitly: its P_k and the loss from T's products over J_k terms
    const double eps = std::numeric_limits<T>::epsilon();
    const double widest = static_cast<double>(*std::max_element(kColumns.begin(), kColumns.end()));
    const double bound = kThreshold * widest * eps * r.norm_squared;
    const double loss = explicit_loss(s.X, r);
    EXPECT_NEAR(r.loss, loss, bound);
    EXPECT_LE(loss, r.loss_history.back() + bound);  // the final P-step can only improve the fit
    EXPECT_NEAR(r.variance_explained, 1 - r.loss / r.norm_squared, 1e-12);
    double norm = 0;
    for (const Matrix<double>& x : s.X)
      for (index e = 0; e < x.size(); ++e) norm += x.data()[e] * x.data()[e];
    EXPECT_NEAR(r.norm_squared, norm, kThreshold * widest * eps * norm);  // sums of J_k products
  }
}

TYPED_TEST(Parafac2Typed, OutputsFollowBrosConventions) {
  using T = TypeParam;
  const std::uint64_t seed = testing::case_seed(4);
  LINV_TRACE_SEED(seed);
  const Synthetic s = synthetic(40, kColumns, 3, 0.2, seed);
  const std::vector<Matrix<T>> X = as<T>(s.X);
  const fmri::Parafac2Result<T> r = fmri::parafac2<T>(views(X), {.rank = 3, .max_iterations = 50, .seed = seed});
  const double eps = std::numeric_limits<T>::epsilon();
  ASSERT_EQ(r.P.size(), kColumns.size());
  for (std::size_t k = 0; k < r.P.size(); ++k) {  // P_k^T P_k = I to J_k eps
    const Matrix<T>& P = r.P[k];
    ASSERT_EQ(P.rows(), kColumns[k]);
    ASSERT_EQ(P.cols(), 3);
    for (index a = 0; a < 3; ++a)
      for (index b = 0; b < 3; ++b) {
        double t = 0;
        for (index j = 0; j < P.rows(); ++j) t += static_cast<double>(P(j, a)) * static_cast<double>(P(j, b));
        EXPECT_LE(std::abs(t - (a == b)), kThreshold * static_cast<double>(P.rows()) * eps) << "slab " << k;
      }
  }
  double previous = std::numeric_limits<double>::infinity();
  for (index c = 0; c < 3; ++c) {
    for (const Matrix<T>* M : {&r.A, &r.C}) {
      double norm = 0, sign = 0;
      for (index i = 0; i < M->rows(); ++i) {
        norm += static_cast<double>((*M)(i, c)) * static_cast<double>((*M)(i, c));
        sign += (*M)(i, c) > 0 ? 1 : ((*M)(i, c) < 0 ? -1 : 0);
      }
      EXPECT_NEAR(norm, 1.0, kThreshold * static_cast<double>(M->rows()) * eps);
      EXPECT_GE(sign, 0) << "component " << c;
    }
    double size = 0;
    for (index g = 0; g < 3; ++g) size += static_cast<double>(r.H(g, c)) * static_cast<double>(r.H(g, c));
    EXPECT_LE(size, previous) << "component " << c;
    previous = size;
  }
}

TEST(Parafac2, StartsFromGivenFactorsAndStopsAsAsked) {
  const std::uint64_t seed = testing::case_seed(5);
  LINV_TRACE_SEED(seed);
  const Synthetic s = synthetic(40, kColumns, 3, 0.1, seed);
  const auto X = views(s.X);
  // starting at the truth, one iteration already fits to the noise level
  const fmri::Parafac2Init<double> truth{s.A.view(), s.H.view(), s.C.view()};
  int calls = 0;
  const fmri::Parafac2Result<double> r =
      fmri::parafac2<double>(X, {.rank = 3, .max_iterations = 5, .tolerance = 0, .progress = [&](int it, double loss) {
                                   ++calls;
                                   EXPECT_EQ(it, calls);
                                   EXPECT_GT(loss, 0);
                                 }},
                             &truth);
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(r.report.iterations, 5);  // tolerance 0 runs every iteration
  EXPECT_EQ(r.report.stop, StopReason::IterationLimit);
  EXPECT_GE(recovery(s, r), 0.99);
  const fmri::Parafac2Result<double> c = fmri::parafac2<double>(X, {.rank = 3, .tolerance = 1e-3, .seed = seed});
  EXPECT_EQ(c.report.stop, StopReason::Converged);
  const std::size_t n = c.loss_history.size();
  ASSERT_GE(n, 2u);
  EXPECT_LE(c.loss_history[n - 2] - c.loss_history[n - 1], 1e-3 * c.loss_history[n - 2]);
  // no iterations: the start itself, with its P-step
  const fmri::Parafac2Result<double> z = fmri::parafac2<double>(X, {.rank = 3, .max_iterations = 0}, &truth);
  EXPECT_EQ(z.report.iterations, 0);
  EXPECT_TRUE(z.loss_history.empty());
  EXPECT_NEAR(z.loss, explicit_loss(s.X, z), 1e-10 * z.norm_squared);
}

TEST(Parafac2, RefusesBadInput) {
  const Synthetic s = synthetic(10, {20, 15}, 2, 0.1, testing::case_seed(6));
  const auto X = views(s.X);
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THROW(fmri::parafac2<double>({}, {.rank = 1}), InvalidArgument);
  EXPECT_THROW(fmri::parafac2<double>(X, {.rank = 0}), InvalidArgument);
  EXPECT_TRUE(testing::contains(message([&] { fmri::parafac2<double>(X, {.rank = 11}); }), "10 rows"));
  const Matrix<double> narrow(10, 3), short_rows(9, 20);
  EXPECT_TRUE(testing::contains(message([&] { fmri::parafac2<double>({X[0], narrow.view()}, {.rank = 4}); }), "10x3"));
  const std::string mismatch = message([&] { fmri::parafac2<double>({X[0], short_rows.view()}, {.rank = 2}); });
  EXPECT_TRUE(testing::contains(mismatch, "9x20"));
  EXPECT_TRUE(testing::contains(mismatch, "10x20"));
  EXPECT_THROW(fmri::parafac2<double>({X[0], short_rows.view()}, {.rank = 2}), ShapeMismatch);
  Matrix<double> bad = s.X[1].clone();
  bad(3, 4) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(fmri::parafac2<double>({X[0], bad.view()}, {.rank = 2}), NonFiniteInput);
  EXPECT_THROW(fmri::parafac2<double>(X, {.rank = 2, .tolerance = -1}), InvalidArgument);
  EXPECT_THROW(fmri::parafac2<double>(X, {.rank = 2, .max_iterations = -1}), InvalidArgument);
  const Matrix<double> H = Matrix<double>::identity(2), C(3, 2);  // 3 rows for 2 slabs
  const fmri::Parafac2Init<double> init{s.A.view(), H.view(), C.view()};
  const std::string wrong = message([&] { fmri::parafac2<double>(X, {.rank = 2}, &init); });
  EXPECT_TRUE(testing::contains(wrong, "initial C"));
  EXPECT_TRUE(testing::contains(wrong, "3x2"));
}

}  // namespace
}  // namespace linv
