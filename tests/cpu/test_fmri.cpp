// Batch-OMP against a plain float64 orthogonal matching pursuit (support by largest correlation with
// the explicit residual, coefficients by least squares on the support), exact recovery of sparse
// signals, the tolerance stop, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "linv/adl.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/fmri.hpp"
#include "linv/generate.hpp"
#include "linv/parafac2.hpp"
#include "support/dense_checks.hpp"
#include "support/fmri_checks.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

// Plain OMP of x over D's atoms: T0 steps, each choosing the atom of largest |D^T r| (first on ties),
// then the least-squares coefficients on the support and the explicit residual.
struct Reference {
  std::vector<index> support;
  Matrix<double> coefficients;
};
Reference plain_omp(const Matrix<double>& D, ConstMatrixView<double> x, index T0) {
  const index T = D.rows(), K = D.cols();
  Reference out;
  Matrix<double> r = Matrix<double>::copy_of(x);
  for (index n = 0; n < T0; ++n) {
    index best = 0;
    double best_value = -1;
    for (index a = 0; a < K; ++a) {
      double c = 0;
      for (index i = 0; i < T; ++i) c += D(i, a) * r(i, 0);
      if (std::abs(c) > best_value) best = a, best_value = std::abs(c);
    }
    out.support.push_back(best);
    Matrix<double> Ds(T, n + 1);
    for (index p = 0; p <= n; ++p)
      for (index i = 0; i < T; ++i) Ds(i, p) = D(i, out.support[static_cast<std::size_t>(p)]);
    out.coefficients = lstsq<double>(Ds.view(), x).x;
    for (index i = 0; i < T; ++i) {
      double fit = 0;
      for (index p = 0; p <= n; ++p) fit += Ds(i, p) * out.coefficients(p, 0);
      r(i, 0) = x(i, 0) - fit;
    }
  }
  return out;
}

TEST(BatchOmp, MatchesPlainOmpSupportsAndCoefficients) {
  const auto seed = testing::case_seed(1);
  LINV_TRACE_SEED(seed);
  const Matrix<double> D = testing::random_dictionary(40, 90, seed);
  const Matrix<double> X = random_uniform<double>(40, 300, seed + 1, -1.0, 1.0);
  const fmri::SparseCodes<double> codes = fmri::batch_omp<double>(D.view(), X.view(), {.sparsity = 6});
  for (index j = 0; j < X.cols(); ++j) {
    const Reference ref = plain_omp(D, X.view().block(0, j, 40, 1), 6);
    ASSERT_EQ(codes.count[static_cast<std::size_t>(j)], 6) << "signal " << j;
    for (index t = 0; t < 6; ++t) {
      const std::size_t slot = static_cast<std::size_t>(t + j * 6);
      ASSERT_EQ(codes.atom[slot], ref.support[static_cast<std::size_t>(t)]) << "signal " << j << " step " << t;
      EXPECT_NEAR(codes.value[slot], ref.coefficients(t, 0), 1e-10 * (1 + std::abs(ref.coefficients(t, 0))));
    }
  }
  // float: X is noise, so a few of its 300 greedy choices are near ties that float's rounding may break the
  // other way (seed 1880774837503246136 breaks one); where float chose the same atoms, its coefficients are
  // double's to float's accuracy, and ties stay rare
  const fmri::SparseCodes<float> f = fmri::batch_omp<float>(D.cast<float>().view(), X.cast<float>().view(), {.sparsity = 6});
  index other_choices = 0;
  for (index j = 0; j < X.cols(); ++j) {
    bool same = true;
    double largest = 0, error = 0;
    for (index t = 0; t < 6; ++t) {
      const std::size_t slot = static_cast<std::size_t>(t + j * 6);
      same = same && f.atom[slot] == codes.atom[slot];
      largest = std::max(largest, std::abs(codes.value[slot]));
      error = std::max(error, std::abs(static_cast<double>(f.value[slot]) - codes.value[slot]));
    }
    if (!same) {
      ++other_choices;
      continue;
    }
    EXPECT_LE(error, 1e-3 * largest) << "signal " << j;
  }
  EXPECT_LE(other_choices, 3);
}

TEST(BatchOmp, RecoversSparseSignalsAndStopsAtTheTolerance) {
  const auto seed = testing::case_seed(2);
  LINV_TRACE_SEED(seed);
  const Matrix<double> D = testing::random_dictionary(64, 128, seed);
  const Matrix<double> truth = testing::exactly_recoverable_codes(D, 50, 4, seed + 1);
  const Matrix<double> X = matmul<double>(D.view(), truth.view());
  const fmri::SparseCodes<double> codes = fmri::batch_omp<double>(D.view(), X.view(), {.sparsity = 4});
  EXPECT_LE((testing::relative_difference<double, double>(codes.to_dense().view(), truth.view())), 1e-12);
  // with a tolerance (above the rounding of the tracked residual, about eps ||x||^2), an exactly 4-sparse
  // signal that OMP recovers stops at 4 atoms even when 10 are allowed
  const fmri::SparseCodes<double> stopped = fmri::batch_omp<double>(D.view(), X.view(), {.sparsity = 10, .tolerance = 1e-9});
  for (index j = 0; j < 50; ++j) EXPECT_EQ(stopped.count[static_cast<std::size_t>(j)], 4) << "signal " << j;
}

// A signal that its first atom fits to rounding stops there, at any scale: the atoms after it would be
// chosen by rounding noise (scikit-learn's absolute thresholds stop only unit-scale signals).
TEST(BatchOmp, StopsWhenTheResidualIsRounding) {
  const auto seed = testing::case_seed(3);
  LINV_TRACE_SEED(seed);
  const Matrix<double> D = testing::random_dictionary(30, 12, seed);
  for (const double scale : {1e-9, 1.0, 1e9}) {
    SCOPED_TRACE("scale " + std::to_string(scale));
    Matrix<double> X = random_uniform<double>(30, 3, seed + 1, -1.0, 1.0);
    for (index i = 0; i < 30; ++i) X(i, 0) = -2.5 * scale * D(i, 7), X(i, 1) *= scale, X(i, 2) *= scale;
    const fmri::SparseCodes<double> codes = fmri::batch_omp<double>(D.view(), X.view(), {.sparsity = 4});
    EXPECT_EQ(codes.count[0], 1);
    EXPECT_EQ(codes.atom[0], 7);
    EXPECT_NEAR(codes.value[0], -2.5 * scale, 1e-14 * scale);
    EXPECT_EQ(codes.count[1], 4);  // generic signals use every atom they may
    EXPECT_EQ(codes.count[2], 4);
    const fmri::SparseCodes<float> f =
        fmri::batch_omp<float>(D.cast<float>().view(), X.cast<float>().view(), {.sparsity = 4});
    EXPECT_EQ(f.count[0], 1);
    EXPECT_EQ(f.atom[0], 7);
  }
}

// k-SVD's initial atoms are signals, which OMP fits exactly with one atom. Were their codes completed by
// atoms chosen by rounding noise, those signals would join arbitrary atoms' users and the exact update
// would turn a rounding-level change of X into changes of 1e-4 in the atoms (it did). A change of X by
// rounding changes the result by rounding.
TEST(Ksvd, RoundingInTheDataStaysRounding) {
  const auto seed = testing::case_seed(4);
  LINV_TRACE_SEED(seed);
  const Matrix<double> D = testing::random_dictionary(30, 12, seed);
  Matrix<double> X = matmul<double>(D.view(), random_uniform<double>(12, 2000, seed + 1, -1.0, 1.0).view());
  const Matrix<double> noise = random_uniform<double>(30, 2000, seed + 2, -0.05, 0.05);
  const Matrix<double> wiggle = random_uniform<double>(30, 2000, seed + 3, -1.0, 1.0);
  Matrix<double> Xp(30, 2000);
  for (index e = 0; e < X.size(); ++e) {
    X.data()[e] += noise.data()[e];
    Xp.data()[e] = X.data()[e] * (1 + 4 * std::numeric_limits<double>::epsilon() * wiggle.data()[e]);
  }
  for (const bool exact : {true, false}) {
    SCOPED_TRACE(exact ? "exact" : "approximate");
    const fmri::KsvdOptions o{.atoms = 12, .sparsity = 4, .iterations = 2, .exact = exact, .seed = seed + 4};
    const fmri::KsvdResult<double> a = fmri::ksvd<double>(X.view(), o), b = fmri::ksvd<double>(Xp.view(), o);
    for (std::size_t i = 0; i < a.rmse.size(); ++i) EXPECT_NEAR(a.rmse[i], b.rmse[i], 1e-12 * a.rmse[i]) << i;
    for (index j = 0; j < 12; ++j) {
      double c = 0;
      for (index i = 0; i < 30; ++i) c += a.dictionary(i, j) * b.dictionary(i, j);
      EXPECT_NEAR(std::abs(c), 1.0, 1e-12) << "atom " << j;
    }
  }
}

// The checkpoint runs before every atom update, so that a caller (Python's Ctrl-C) can stop an iteration
// that takes long; what it throws abandons the run.
TEST(Ksvd, CheckpointsComeBeforeEveryAtomAndCanStopTheRun) {
  const testing::SparseSynthetic s = testing::sparse_synthetic(testing::case_seed(6));
  int calls = 0;
  fmri::KsvdOptions o{.atoms = 40, .sparsity = 3, .iterations = 2, .seed = 7};
  o.checkpoint = [&] { ++calls; };
  (void)fmri::ksvd<double>(s.X.view(), o);
  EXPECT_EQ(calls, 2 * 40);
  struct Stop {};
  calls = 0;
  o.checkpoint = [&] {
    if (++calls == 45) throw Stop{};  // in the second iteration's atoms
  };
  EXPECT_THROW((void)fmri::ksvd<double>(s.X.view(), o), Stop);
  EXPECT_EQ(calls, 45);
}

// Noiseless data from a random dictionary and 3-sparse codes (Aharon et al.'s synthetic experiment at a
// smaller size): k-SVD finds at least 90 % of the true atoms to |correlation| >= 0.99.
TEST(Ksvd, RecoversTheDictionaryAndItsErrorNeverGrows) {
  const auto seed = testing::case_seed(5);
  LINV_TRACE_SEED(seed);
  // recovery is a property of the method on average (Aharon et al. report 96 % at this kind of size).
  // Over 200 single problems here: 95 % on average, from 82 to 100 %; resampled, averages of three
  // fall below 90 % in about 1.4 % of runs, averages of ten in about 0.01 %: ten fresh problems, 80
  // iterations each
  double recovered = 0;
  for (std::uint64_t trial = 0; trial < testing::kRecoveryTrials; ++trial) {
    const testing::SparseSynthetic s = testing::sparse_synthetic(seed + 10 * trial);
    const fmri::KsvdResult<double> r =
        fmri::ksvd<double>(s.X.view(), {.atoms = 40, .sparsity = 3, .iterations = 80, .seed = seed + 10 * trial + 2});
    ASSERT_EQ(r.rmse.size(), 81u);
    EXPECT_LT(r.rmse.back(), 0.4 * r.rmse.front()) << "trial " << trial;
    for (index j = 0; j < 40; ++j) {  // unit-norm atoms
      double norm = 0;
      for (index i = 0; i < 20; ++i) norm += r.dictionary(i, j) * r.dictionary(i, j);
      EXPECT_NEAR(norm, 1.0, 1e-12);
    }
    recovered += testing::recovered_fraction(s.truth, r.dictionary) / testing::kRecoveryTrials;
  }
  EXPECT_GE(recovered, 0.9 - 1e-12);  // tenths of 0.9 may sum to a hair less
  const testing::SparseSynthetic s = testing::sparse_synthetic(seed + 100);
  // keeping the better code per signal and no clearing: the exact variant's error never grows
  const fmri::KsvdResult<double> plain = fmri::ksvd<double>(
      s.X.view(), {.atoms = 40, .sparsity = 3, .iterations = 15, .seed = seed, .clear = false, .keep_better_codes = true});
  for (std::size_t i = 1; i < plain.rmse.size(); ++i)
    EXPECT_LE(plain.rmse[i], plain.rmse[i - 1] * (1 + 1e-12)) << "iteration " << i;
  // the approximate variant also learns
  const fmri::KsvdResult<double> approx =
      fmri::ksvd<double>(s.X.view(), {.atoms = 40, .sparsity = 3, .iterations = 40, .exact = false, .seed = seed});
  EXPECT_LT(approx.rmse.back(), 0.4 * approx.rmse.front());
  EXPECT_THROW((void)fmri::ksvd<double>(s.X.view(), {.atoms = 1501, .sparsity = 2}), InvalidArgument);
  EXPECT_THROW((void)fmri::ksvd<double>(s.X.view(), {.atoms = 10, .sparsity = 11}), InvalidArgument);
}

TEST(SyntheticFmri, ShapesSparsityNoiseAndSeeds) {
  const auto seed = testing::case_seed(9);
  LINV_TRACE_SEED(seed);
  // A cube: a blob's support (radius at most 0.2 x 2.45 of the largest side) then holds under half of the
  // volume. In a flat 12 x 10 x 4 volume one blob may cover most of it, and five averaged over half now and
  // then (1272 of 2400 voxels for case seed 11167110158402908073).
  const fmri::SyntheticOptions o{.time_points = 120, .nx = 16, .ny = 16, .nz = 16, .sources = 5, .snr_db = 6, .seed = seed};
  const fmri::SyntheticFmri s = fmri::synthetic_fmri(o);
  ASSERT_EQ(s.data.rows(), 120);
  ASSERT_EQ(s.data.cols(), 4096);
  ASSERT_EQ(s.maps.rows(), 5);
  index nonzero = 0;
  for (index e = 0; e < s.maps.size(); ++e) nonzero += s.maps.data()[e] != 0 ? 1 : 0;
  EXPECT_LT(nonzero, s.maps.size() / 2) << "maps must be sparse";
  EXPECT_GT(nonzero, 0);
  for (index k = 0; k < 5; ++k) {  // centred, unit-norm time courses
    double sum = 0, norm = 0;
    for (index t = 0; t < 120; ++t) sum += s.timecourses(t, k), norm += s.timecourses(t, k) * s.timecourses(t, k);
    EXPECT_NEAR(sum, 0.0, 1e-12);
    EXPECT_NEAR(norm, 1.0, 1e-12);
  }
  // the noise is at the requested SNR (6 dB: noise power a quarter of the signal's), within sampling error
  const Matrix<double> clean = matmul<double>(s.timecourses.view(), s.maps.view());
  double signal = 0, noise = 0;
  for (index e = 0; e < clean.size(); ++e) {
    signal += clean.data()[e] * clean.data()[e];
    noise += (s.data.data()[e] - clean.data()[e]) * (s.data.data()[e] - clean.data()[e]);
  }
  EXPECT_NEAR(10 * std::log10(signal / noise), 6.0, 0.3);
  // same seed, same data; no noise at infinite SNR
  fmri::SyntheticOptions quiet = o;
  quiet.snr_db = std::numeric_limits<double>::infinity();
  EXPECT_EQ((testing::relative_difference<double, double>(fmri::synthetic_fmri(quiet).data.view(), clean.view())), 0.0);
  EXPECT_EQ((testing::relative_difference<double, double>(fmri::synthetic_fmri(o).data.view(), s.data.view())), 0.0);
  EXPECT_THROW((void)fmri::synthetic_fmri({.time_points = 1, .nx = 3, .sources = 1}), InvalidArgument);
}

// The factorisations at the ends of the range: data scaled by 2^k give the same atoms and factors and codes,
// errors, H and losses scaled by 2^k (or 2^2k), for k from -900 to 900. Before, X at 1e200 or 1e-200 gave
// all-zero codes (OMP, k-SVD), zero factors (PARAFAC2) or an overflow refusal (ADL).
TEST(FmriScale, PowersOfTwoChangeOnlyTheScale) {
  const auto seed = testing::case_seed(880);
  LINV_TRACE_SEED(seed);
  const Matrix<double> X = random_uniform<double>(12, 120, seed, -1.0, 1.0);
  const Matrix<double> D = random_uniform<double>(12, 6, seed + 1, -1.0, 1.0);
  const auto scaled = [](const Matrix<double>& M, int k) {
    Matrix<double> m = Matrix<double>::copy_of(M.view());
    for (index i = 0; i < m.size(); ++i) m.data()[i] = std::ldexp(m.data()[i], k);
    return m;
  };
  const auto close = [](double a, double b) { return std::abs(a - b) <= 1e-10 * std::max(std::abs(a), std::abs(b)); };
  const fmri::SparseCodes<double> omp = fmri::batch_omp<double>(D.view(), X.view(), {.sparsity = 3});
  const fmri::KsvdResult<double> ksvd = fmri::ksvd<double>(X.view(), {.atoms = 6, .sparsity = 2, .iterations = 3});
  const fmri::AdlResult<double> adl = fmri::adl<double>(X.view(), {.atoms = 5, .max_iterations = 4});
  const std::vector<ConstMatrixView<double>> slabs = {X.block(0, 0, 12, 40), X.block(0, 40, 12, 40), X.block(0, 80, 12, 40)};
  const fmri::Parafac2Result<double> p2 = fmri::parafac2<double>(slabs, {.rank = 2, .max_iterations = 20});
  for (int k : {-900, -300, 300, 900}) {
    SCOPED_TRACE(k);
    const Matrix<double> x = scaled(X, k);
    const fmri::SparseCodes<double> o = fmri::batch_omp<double>(scaled(D, k / 2).view(), x.view(), {.sparsity = 3});
    ASSERT_EQ(o.atom, omp.atom);
    for (std::size_t i = 0; i < o.value.size(); ++i) ASSERT_TRUE(close(o.value[i], std::ldexp(omp.value[i], k - k / 2)));
    const fmri::KsvdResult<double> s = fmri::ksvd<double>(x.view(), {.atoms = 6, .sparsity = 2, .iterations = 3});
    EXPECT_LE((testing::relative_difference<double, double>(s.dictionary.view(), ksvd.dictionary.view())), 1e-10);
    for (std::size_t i = 0; i < s.rmse.size(); ++i) EXPECT_TRUE(close(s.rmse[i], std::ldexp(ksvd.rmse[i], k)));
    const fmri::AdlResult<double> a = fmri::adl<double>(x.view(), {.atoms = 5, .max_iterations = 4});
    EXPECT_LE((testing::relative_difference<double, double>(a.dictionary.view(), adl.dictionary.view())), 1e-10);
    EXPECT_TRUE(close(a.lambda, std::ldexp(adl.lambda, k)));
    const std::vector<ConstMatrixView<double>> xs = {x.block(0, 0, 12, 40), x.block(0, 40, 12, 40), x.block(0, 80, 12, 40)};
    const fmri::Parafac2Result<double> q = fmri::parafac2<double>(xs, {.rank = 2, .max_iterations = 20});
    EXPECT_LE((testing::relative_difference<double, double>(q.A.view(), p2.A.view())), 1e-10);
    for (index i = 0; i < q.H.size(); ++i) EXPECT_TRUE(close(q.H.data()[i], std::ldexp(p2.H.data()[i], k)));
    EXPECT_TRUE(close(q.variance_explained, p2.variance_explained));
  }
}

TEST(BatchOmp, BadInputSaysWhy) {
  const Matrix<double> D = testing::random_dictionary(10, 20, 3), X = random_uniform<double>(10, 5, 4);
  EXPECT_THROW((void)fmri::batch_omp<double>(D.view(), X.view(), {.sparsity = 0}), InvalidArgument);
  EXPECT_THROW((void)fmri::batch_omp<double>(D.view(), X.view(), {.sparsity = 21}), InvalidArgument);
  const Matrix<double> wrong = random_uniform<double>(11, 5, 4);
  EXPECT_THROW((void)fmri::batch_omp<double>(D.view(), wrong.view(), {.sparsity = 2}), ShapeMismatch);
  Matrix<double> nan = Matrix<double>::copy_of(X.view());
  nan(3, 2) = std::nan("");
  EXPECT_THROW((void)fmri::batch_omp<double>(D.view(), nan.view(), {.sparsity = 2}), NonFiniteInput);
}

}  // namespace
}  // namespace linv
