// linv::plu, LAPACK's getrf of any m x n matrix: P A = L U rebuilt to n eps ||A|| in every element type, over
// shapes around square (wide, tall, empty, one row or column), at extreme scales; exactly zero pivots named,
// not refused; NaN refused. plu_solve with those factors (support/plu_checks.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "support/plu_checks.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

template <Scalar T>
class Plu : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Plu, Types);

template <Scalar T>
T draw(std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  if constexpr (Complex<T>)
    return T(static_cast<real_t<T>>(u(g)), static_cast<real_t<T>>(u(g)));
  else
    return static_cast<T>(u(g));
}

// max |P A - L U| / (k eps max|A|), k = min(m, n): below a small constant for a backward-stable getrf.
template <Scalar T>
double reconstruction_error(ConstMatrixView<T> A, const PluFactors<T>& f) {
  const index m = A.rows(), n = A.cols(), k = std::min(m, n);
  std::vector<index> row(static_cast<std::size_t>(m));
  for (index i = 0; i < m; ++i) row[static_cast<std::size_t>(i)] = i;
  for (index i = 0; i < k; ++i)  // LAPACK's interchanges, in order: row i of P A is row `row[i]` of A
    std::swap(row[static_cast<std::size_t>(i)], row[static_cast<std::size_t>(f.pivots[static_cast<std::size_t>(i)] - 1)]);
  double worst = 0, largest = 0;
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < m; ++i) {
      std::complex<double> s = 0;
      for (index p = 0; p <= std::min({i, j, k - 1}); ++p) {
        const std::complex<double> l = p == i ? 1.0 : std::complex<double>(f.lu(i, p));
        s += l * std::complex<double>(f.lu(p, j));
      }
      worst = std::max(worst, std::abs(std::complex<double>(A(row[static_cast<std::size_t>(i)], j)) - s));
      largest = std::max(largest, std::abs(std::complex<double>(A(i, j))));
    }
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  return largest > 0 ? worst / (static_cast<double>(std::max<index>(k, 1)) * eps * largest) : worst;
}

TYPED_TEST(Plu, RebuildsPAEqualsLUForEveryShape) {
  using T = TypeParam;
  std::mt19937_64 g(testing::case_seed(1));
  for (index m : std::vector<index>{0, 1, 2, 3, 7, 30, 65})
    for (index n : std::vector<index>{m, m + 1, m + 10, m > 0 ? m - 1 : 0, 1, 0}) {
      SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
      Matrix<T> a(m, n);
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < m; ++i) a(i, j) = draw<T>(g);
      const PluFactors<T> f = plu<T>(a.view());
      ASSERT_EQ(f.lu.rows(), m);
      ASSERT_EQ(f.lu.cols(), n);
      ASSERT_EQ(static_cast<index>(f.pivots.size()), std::min(m, n));
      for (int p : f.pivots) EXPECT_TRUE(p >= 1 && p <= m);
      EXPECT_EQ(f.zero_pivot, 0);
      EXPECT_LE(reconstruction_error<T>(a.view(), f), 30.0);
    }
}

TYPED_TEST(Plu, ExtremeScalesAndZeroPivots) {
  using T = TypeParam;
  using R = real_t<T>;
  std::mt19937_64 g(testing::case_seed(2));
  const int far = std::numeric_limits<R>::max_exponent - 8;
  for (int e : {-far, far}) {
    Matrix<T> a(5, 8);
    for (index j = 0; j < 8; ++j)
      for (index i = 0; i < 5; ++i) a(i, j) = draw<T>(g) * std::ldexp(R(1), e);
    EXPECT_LE(reconstruction_error<T>(a.view(), plu<T>(a.view())), 30.0) << "2^" << e;
  }
  Matrix<T> z(4, 3);  // column 2 is zero: U(2, 2) = 0, named and kept
  for (index i = 0; i < 4; ++i) z(i, 0) = draw<T>(g), z(i, 2) = draw<T>(g);
  const PluFactors<T> f = plu<T>(z.view());
  EXPECT_EQ(f.zero_pivot, 2);
  EXPECT_LE(reconstruction_error<T>(z.view(), f), 30.0);
  z(3, 1) = T(std::numeric_limits<R>::quiet_NaN());
  try {
    (void)plu<T>(z.view());
    FAIL() << "no error";
  } catch (const NonFiniteInput& e) {
    EXPECT_TRUE(testing::contains(e.what(), "row 4, column 2")) << e.what();
  }
}

TYPED_TEST(Plu, SolvesWithItsFactorsBothWays) { testing::expect_plu_solves<TypeParam>(Device::cpu(), 10); }

}  // namespace
}  // namespace linv
