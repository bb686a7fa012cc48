#include <gtest/gtest.h>

#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

TEST(Generate, SameSeedSameMatrixOtherSeedOtherMatrix) {
  const auto seed = testing::case_seed(1);
  LINV_TRACE_SEED(seed);
  auto a = generate<double>(MatrixKind::Random, 17, {.seed = seed});
  auto b = generate<double>(MatrixKind::Random, 17, {.seed = seed});
  auto c = generate<double>(MatrixKind::Random, 17, {.seed = seed + 1});
  int same = 0, differ = 0;
  for (index k = 0; k < a.size(); ++k) {
    same += a.data()[k] == b.data()[k];
    differ += a.data()[k] != c.data()[k];
  }
  EXPECT_EQ(same, a.size());
  EXPECT_GT(differ, a.size() / 2);
}

TEST(Generate, KindsHaveTheirStructure) {
  const auto seed = testing::case_seed(2);
  LINV_TRACE_SEED(seed);
  const index n = 40;
  auto spd = generate<double>(MatrixKind::SPD, n, {.seed = seed});
  EXPECT_EQ(detect_structure<double>(spd.view()), Structure::Symmetric);
  EXPECT_NO_THROW(Cholesky<double>{spd.view()});
  // the 1-norm condition number is within a factor n of the 2-norm one, which the generator sets
  const double spd_cond = 1.0 / Cholesky<double>(spd.view()).rcond();
  EXPECT_GT(spd_cond, 1e3 / n);
  EXPECT_LT(spd_cond, 1e3 * n);

  auto hollow = generate<double>(MatrixKind::Hollow, n, {.seed = seed});
  for (index i = 0; i < n; ++i) EXPECT_EQ(hollow(i, i), 0.0);

  auto band = generate<double>(MatrixKind::Band, n, {.seed = seed});
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < n; ++i) {
      if (std::abs(i - j) > 3) {
        EXPECT_EQ(band(i, j), 0.0);
      }
    }
  for (index i = 0; i < n; ++i) {
    double off = 0;
    for (index j = 0; j < n; ++j)
      if (j != i) off += std::abs(band(i, j));
    EXPECT_GT(band(i, i), off);
  }

  auto identity = generate<float>(MatrixKind::Identity, n, {.seed = seed});
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < n; ++i) EXPECT_EQ(identity(i, j), i == j ? 1.0f : 0.0f);

  auto ill = generate<double>(MatrixKind::IllCond, n, {.cond = 1e8, .seed = seed});
  const double rcond = LU<double>(ill.view()).rcond();
  EXPECT_GT(rcond, 1e-8 / n);
  EXPECT_LT(rcond, 1e-8 * n);

  auto singular = generate<double>(MatrixKind::Singular, n, {.seed = seed});
  EXPECT_TRUE(LU<double>(singular.view()).is_singular() || LU<double>(singular.view()).rcond() < 1e-15);
}

TEST(Generate, RejectsBadArguments) {
  EXPECT_THROW(generate<double>(MatrixKind::SPD, -1), InvalidArgument);
  EXPECT_THROW(generate<double>(MatrixKind::SPD, 4, {.cond = 0.5}), InvalidArgument);
  EXPECT_THROW(parse_matrix_kind("dense"), InvalidArgument);
  EXPECT_EQ(parse_matrix_kind("illcond"), MatrixKind::IllCond);
}

}  // namespace
}  // namespace linv
