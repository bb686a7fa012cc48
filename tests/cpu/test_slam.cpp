// Bordered Jacobians: the structured pseudoinverse against a dense SVD one, the Gauss-Newton step
// without J^+, Levenberg-Marquardt damping, unobservable parameters and malformed segments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "linv/accuracy.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "linv/slam.hpp"
#include "support/dense_checks.hpp"
#include "support/slam_checks.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

slam::BorderedJacobian<double> random_jacobian(index n, index k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<index> length(1, 20);
  std::uniform_real_distribution<double> value(0.5, 2.0);
  std::vector<index> starts, lengths;
  for (index r = 0; r < n;) {
    const index len = std::min(length(rng), n - r);
    starts.push_back(r);
    lengths.push_back(len);
    r += len;
  }
  std::vector<double> values(static_cast<std::size_t>(n));
  for (double& v : values) v = (rng() % 2 ? 1 : -1) * value(rng);
  return {random_uniform<double>(n, k, seed + 1, -1.0, 1.0), starts, lengths, values};
}

double cond1(const Matrix<double>& J, const Matrix<double>& P) { return norm1<double>(J.view()) * norm1<double>(P.view()); }

TEST(Slam, StructuredPseudoinverseMatchesTheSvd) {
  for (index k : {1, 3}) {
    const auto seed = testing::case_seed(static_cast<std::uint64_t>(k));
    LINV_TRACE_SEED(seed);
    const slam::BorderedJacobian<double> J = random_jacobian(300, k, seed);
    const Matrix<double> dense = J.to_dense();
    const Matrix<double> P = slam::pinv(J).x;
    const Matrix<double> reference = linv::pinv<double>(dense.view()).x;
    const double c = cond1(dense, reference);
    const double bound = 30 * static_cast<double>(J.cols()) * testing::eps<double>() * c * c;
    EXPECT_LE((testing::relative_difference<double, double>(P.view(), reference.view())), bound) << "k=" << k;
    // J^+ J = I
    const Matrix<double> PJ = matmul<double>(P.view(), dense.view());
    double worst = 0;
    for (index j = 0; j < PJ.cols(); ++j)
      for (index i = 0; i < PJ.rows(); ++i) worst = std::max(worst, std::abs(PJ(i, j) - (i == j ? 1.0 : 0.0)));
    EXPECT_LE(worst, bound);
    // the Gauss-Newton step without J^+
    const Matrix<double> d = random_uniform<double>(300, 2, seed + 7, -1.0, 1.0);
    const Matrix<double> step = slam::pinv_apply(J, d.view()).x;
    const Matrix<double> via_p = matmul<double>(P.view(), d.view());
    EXPECT_LE((testing::relative_difference<double, double>(step.view(), via_p.view())), bound);
  }
}

TEST(Slam, LevenbergMarquardtDampingMatchesDenseNormalEquations) {
  const auto seed = testing::case_seed(10);
  LINV_TRACE_SEED(seed);
  const slam::BorderedJacobian<double> J = random_jacobian(150, 2, seed);
  const Matrix<double> dense = J.to_dense(), d = random_uniform<double>(150, 1, seed + 1, -1.0, 1.0);
  const double lambda = 0.3;
  Matrix<double> N(J.cols(), J.cols());
  gemm<double>(Op::Transpose, Op::None, 1.0, dense.view(), dense.view(), 0.0, N.view());
  for (index i = 0; i < J.cols(); ++i) N(i, i) *= 1 + lambda;
  Matrix<double> rhs(J.cols(), 1);
  gemm<double>(Op::Transpose, Op::None, 1.0, dense.view(), d.view(), 0.0, rhs.view());
  const Matrix<double> reference = LU<double>(N.view()).solve(rhs.view());
  // the dense inverse from the Schur complement, against LU's
  const Matrix<double> inverse = slam::normal_inverse(J, lambda);
  EXPECT_LE((testing::relative_difference<double, double>(inverse.view(), LU<double>(N.view()).inverse().view())),
            1e-12);
  const Matrix<double> step = slam::pinv_apply(J, d.view(), lambda).x;
  EXPECT_LE((testing::relative_difference<double, double>(step.view(), reference.view())), 1e-12);
}

TEST(Slam, UnobservableParametersAndBadSegmentsAreNamed) {
  const auto seed = testing::case_seed(11);
  LINV_TRACE_SEED(seed);
  const slam::BorderedJacobian<double> J = random_jacobian(100, 1, seed);
  std::vector<double> values = J.values();
  for (index r = J.starts()[4]; r < J.starts()[4] + J.lengths()[4]; ++r) values[static_cast<std::size_t>(r)] = 0;
  const slam::BorderedJacobian<double> blind(Matrix<double>::copy_of(J.dense().view()), J.starts(), J.lengths(), values);
  try {
    (void)slam::pinv(blind);
    FAIL() << "an unobservable parameter should be refused";
  } catch (const SingularMatrix& e) {
    EXPECT_EQ(e.pivot(), 6);  // 1 dense column, then segment 5
    EXPECT_TRUE(testing::contains(e.what(), "parameter 6"));
  }
  std::vector<index> starts = J.starts();
  starts[3] += 1;  // a gap before segment 4
  try {
    (void)slam::BorderedJacobian<double>(Matrix<double>::copy_of(J.dense().view()), starts, J.lengths(), J.values());
    FAIL() << "a gap between segments should be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(testing::contains(e.what(), "segment 4"));
  }
}

// A zero column of J, dense or segment, or a segment column of explicit zeros, is a rank-deficient
// Jacobian: every solver refuses it naming the column (SingularMatrix, the CLI's exit 4), and building it
// from any storage succeeds, since it is not malformed.
TEST(Slam, ZeroColumnsAreSingularAndNamed) {
  const auto seed = testing::case_seed(14);
  LINV_TRACE_SEED(seed);
  const slam::BorderedJacobian<double> J = random_jacobian(200, 2, seed);
  const Matrix<double> dense = J.to_dense();
  const index k = J.dense_cols(), last = J.cols() - 1;
  for (index column : {index{1}, k, k + 3, last}) {  // 0-based: a dense one, the first, a middle, the last segment
    Matrix<double> zeroed = Matrix<double>::copy_of(dense.view());
    for (index r = 0; r < zeroed.rows(); ++r) zeroed(r, column) = 0;
    const std::string what = "column " + std::to_string(column + 1);
    testing::expect_refused(slam::BorderedJacobian<double>::from_dense(zeroed.view(), k), {column + 1},
                            what + " from dense");
    // the same column as explicit zeros in compressed rows
    slam::SparseJacobian<double> sparse = slam::SparseJacobian<double>::from_dense(zeroed.view());
    sparse.row_start.assign(1, 0);
    sparse.column.clear();
    sparse.value.clear();
    for (index r = 0; r < zeroed.rows(); ++r) {
      for (index c = 0; c < zeroed.cols(); ++c)
        if (zeroed(r, c) != 0 || c == column) {
          sparse.column.push_back(c);
          sparse.value.push_back(zeroed(r, c));
        }
      sparse.row_start.push_back(static_cast<index>(sparse.column.size()));
    }
    testing::expect_refused(slam::BorderedJacobian<double>::from_sparse(sparse, k), {column + 1},
                            what + " from sparse");
  }
  // a segment given with no rows is the same zero column
  std::vector<index> starts = J.starts(), lengths = J.lengths();
  starts.insert(starts.begin() + 2, starts[2]);
  lengths.insert(lengths.begin() + 2, 0);
  const slam::BorderedJacobian<double> empty(Matrix<double>::copy_of(J.dense().view()), starts, lengths, J.values());
  testing::expect_refused(empty, {k + 3}, "an empty segment");
}

template <Real T>
class SlamConditioning : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SlamConditioning, Types);

// A dense column that is an exact multiple of another (by a power of two, so exact in storage), or one in
// the span of segment columns (the Schur complement singular in exact arithmetic): refused, never a
// silent step, naming one of the columns involved, whichever way rounding leaves the Schur complement
// (a pivot that is not positive, or one so small that J^T J is singular to working precision).
TYPED_TEST(SlamConditioning, DependentColumnsAreRefusedByName) {
  using T = TypeParam;
  for (index n : {60, 2000}) {
    const auto seed = testing::case_seed(static_cast<std::uint64_t>(20 + n));
    LINV_TRACE_SEED(seed);
    for (double factor : {2.0, -0.5, 4.0}) {
      const auto J = testing::dyadic_jacobian<T>(n, n / 10 + 1, 3, seed, [&](Matrix<T>& dense, const auto&) {
        for (index r = 0; r < n; ++r) dense(r, 2) = static_cast<T>(factor) * dense(r, 0);
      });
      testing::expect_refused(J, {1, 3}, "column 3 = " + std::to_string(factor) + " column 1, n=" + std::to_string(n));
    }
    // column 1 = 2 v on segment 2's rows and -4 v on segment 5's, zero elsewhere: in their span
    const auto J = testing::dyadic_jacobian<T>(n, n / 10 + 1, 1, seed, [](Matrix<T>& dense, const auto& base) {
      for (index r = 0; r < dense.rows(); ++r) {
        const index j = base.segment_of(r);
        dense(r, 0) = j == 2 ? T(2) * base.values()[static_cast<std::size_t>(r)]
                             : j == 5 ? T(-4) * base.values()[static_cast<std::size_t>(r)] : T(0);
      }
    });
    testing::expect_refused(J, {1, 1 + 3, 1 + 6}, "column 1 in the span of segments 3 and 6, n=" + std::to_string(n));
  }
}

// Either side of the threshold: a dense column a small distance from another. Well above the rounding of
// J^T J's sums (1 / the largest variance inflation factor 100 times sqrt(n) eps) the step is computed and
// the report carries that rcond; far below it, J is refused naming one of the two columns.
TEST(Slam, NearlyDependentColumnsEitherSideOfTheThreshold) {
  const index n = 400;
  const auto seed = testing::case_seed(30);
  LINV_TRACE_SEED(seed);
  const double level = testing::eps<double>() * std::sqrt(static_cast<double>(n));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> noise(static_cast<std::size_t>(n));
  for (double& v : noise) v = normal(rng);
  for (double target : {100 * level, level / 100}) {
    // column 2 = column 1 + delta noise: 1 - R^2 is about delta^2 ||noise||^2 / ||column 1||^2
    const auto J = testing::dyadic_jacobian<double>(n, 40, 2, seed, [&](Matrix<double>& dense, const auto&) {
      double norm = 0;
      for (index r = 0; r < n; ++r) norm += dense(r, 0) * dense(r, 0);
      const double delta = std::sqrt(target * norm / static_cast<double>(n));
      for (index r = 0; r < n; ++r) dense(r, 1) = dense(r, 0) + delta * noise[static_cast<std::size_t>(r)];
    });
    // the two dense columns are the ones the data determine worst
    const Matrix<double> dense = J.to_dense();
    const double exact = std::min(testing::independence(dense, 0), testing::independence(dense, 1));
    SCOPED_TRACE("1 / largest variance inflation " + std::to_string(exact) + ", level " + std::to_string(level));
    if (target > level) {
      ASSERT_GT(exact, 10 * level);  // the construction did what it says
      const Matrix<double> d = random_uniform<double>(n, 1, seed + 2, -1.0, 1.0);
      const Solution<double> step = slam::pinv_apply(J, d.view());
      // the computed factors carry the rounding of J^T J's sums, about `level` against `exact`
      EXPECT_LE(std::abs(step.report.rcond / exact - 1), 30 * level / exact);
    } else {
      ASSERT_LT(exact, level / 10);
      testing::expect_refused(J, {1, 2}, "below the threshold");
    }
  }
}

TEST(Slam, BuiltFromDenseSparseAndCompactStorage) {
  const auto seed = testing::case_seed(13);
  LINV_TRACE_SEED(seed);
  const slam::BorderedJacobian<double> J = slam::random_bordered_jacobian<double>(120, 9, seed);
  const Matrix<double> dense = J.to_dense();
  auto same = [&](const slam::BorderedJacobian<double>& B) {
    EXPECT_EQ(B.starts(), J.starts());
    EXPECT_EQ(B.lengths(), J.lengths());
    EXPECT_EQ(B.values(), J.values());
    EXPECT_EQ((testing::relative_difference<double, double>(B.dense().view(), J.dense().view())), 0.0);
  };
  same(slam::BorderedJacobian<double>::from_dense(dense.view(), 1));
  same(slam::BorderedJacobian<double>::from_sparse(slam::SparseJacobian<double>::from_dense(dense.view()), 1));
  Matrix<double> compact(2, 120);
  for (index r = 0; r < 120; ++r) compact(0, r) = J.dense()(r, 0), compact(1, r) = J.values()[static_cast<std::size_t>(r)];
  same(slam::BorderedJacobian<double>::from_compact(compact.view(), J.lengths()));
  // what is not bordered is named
  Matrix<double> two = Matrix<double>::copy_of(dense.view());
  two(7, 8) = 1;  // row 8 gets a second segment nonzero (unless it is already in column 9)
  if (J.segment_of(7) == 7) two(7, 7) = 1;
  try {
    (void)slam::BorderedJacobian<double>::from_dense(two.view(), 1);
    FAIL() << "a row with two segment nonzeros should be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(testing::contains(e.what(), "row 8"));
  }
  std::vector<index> short_lengths = J.lengths();
  short_lengths.back() -= 1;
  EXPECT_THROW((void)slam::BorderedJacobian<double>::from_compact(compact.view(), short_lengths), InvalidArgument);
  EXPECT_THROW((void)slam::BorderedJacobian<double>::from_dense(dense.view(), 0), InvalidArgument);
}

TEST(Slam, SparseFallbackByCglsMatchesDenseLeastSquares) {
  const auto seed = testing::case_seed(12);
  LINV_TRACE_SEED(seed);
  // a general sparse Jacobian: about 5 % nonzeros plus a diagonal band so it has full column rank
  Matrix<double> J = random_uniform<double>(400, 60, seed, -1.0, 1.0);
  for (index c = 0; c < 60; ++c)
    for (index r = 0; r < 400; ++r)
      if (r % 60 != c && (r * 7 + c * 13) % 20 != 0) J(r, c) = 0;
  const Matrix<double> d = random_uniform<double>(400, 2, seed + 1, -1.0, 1.0);
  const Solution<double> x = slam::cgls_apply(slam::SparseJacobian<double>::from_dense(J.view()), d.view(),
                                              {.tolerance = 1e-12, .max_iterations = 1000});
  EXPECT_EQ(x.report.stop, StopReason::Converged);
  EXPECT_EQ(x.report.method, Method::CGLS);
  const Matrix<double> ref = lstsq<double>(J.view(), d.view()).x;
  EXPECT_LE((testing::relative_difference<double, double>(x.x.view(), ref.view())), 1e-9);
  // the bordered Jacobian through the fallback gives the structured answer
  const slam::BorderedJacobian<double> B = random_jacobian(300, 2, seed + 2);
  const Matrix<double> e = random_uniform<double>(300, 1, seed + 3, -1.0, 1.0);
  const Matrix<double> y = slam::cgls_apply(slam::SparseJacobian<double>::from_dense(B.to_dense().view()), e.view(),
                                            {.tolerance = 1e-12, .max_iterations = 2000})
                               .x;
  EXPECT_LE((testing::relative_difference<double, double>(y.view(), slam::pinv_apply(B, e.view()).x.view())), 1e-9);
  // the iteration limit is an error, not a silent unconverged step
  try {
    (void)slam::cgls_apply(slam::SparseJacobian<double>::from_dense(J.view()), d.view(),
                           {.tolerance = 1e-14, .max_iterations = 2});
    FAIL() << "no error";
  } catch (const NoConvergence& err) {
    EXPECT_EQ(err.iterations(), 2);
  }
}

}  // namespace
}  // namespace linv
