// The imaging forward model: PSFs as MATLAB builds them, the system matrix against an explicit
// convolution, noise, the phantom, and bad specs.
#include <gtest/gtest.h>

#include <cmath>

#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "linv/imaging.hpp"
#include "support/dense_checks.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

double sum(const Matrix<double>& m) {
  double s = 0;
  for (index k = 0; k < m.size(); ++k) s += m.data()[k];
  return s;
}

TEST(Imaging, PsfsFollowFspecial) {
  const imaging::Psf g = imaging::parse_psf("gaussian:size=5,sigma=1");
  ASSERT_EQ(g.kernel.rows(), 5);
  EXPECT_NEAR(sum(g.kernel), 1.0, 1e-15);
  EXPECT_NEAR(g.kernel(2, 2) / g.kernel(2, 3), std::exp(0.5), 1e-12);  // exp(-(x^2+y^2)/(2 sigma^2))
  const imaging::Psf box = imaging::parse_psf("box:size=3");
  EXPECT_DOUBLE_EQ(box.kernel(1, 2), 1.0 / 9);
  // fspecial('motion', 9, 0) is a row of 1/9, fspecial('motion', 5, 90) a column of 1/5
  const imaging::Psf row = imaging::parse_psf("motion:len=9,angle=0");
  ASSERT_EQ(row.kernel.rows(), 1);
  ASSERT_EQ(row.kernel.cols(), 9);
  for (index q = 0; q < 9; ++q) EXPECT_NEAR(row.kernel(0, q), 1.0 / 9, 1e-12);
  const imaging::Psf column = imaging::parse_psf("motion:len=5,angle=90");
  ASSERT_EQ(column.kernel.rows(), 5);
  ASSERT_EQ(column.kernel.cols(), 1);
  for (index p = 0; p < 5; ++p) EXPECT_NEAR(column.kernel(p, 0), 1.0 / 5, 1e-12);
  const imaging::Psf diagonal = imaging::parse_psf("motion:len=9,angle=30");
  EXPECT_EQ(diagonal.kernel.rows(), 5);
  EXPECT_EQ(diagonal.kernel.cols(), 9);
  EXPECT_NEAR(sum(diagonal.kernel), 1.0, 1e-12);
  // fspecial('unsharp', 0.2): centre (alpha + 5) / (alpha + 1), entries summing to 1
  const imaging::Psf sharpen = imaging::parse_psf("sharpen:alpha=0.2");
  EXPECT_NEAR(sharpen.kernel(1, 1), 5.2 / 1.2, 1e-15);
  EXPECT_NEAR(sum(sharpen.kernel), 1.0, 1e-15);
}

TEST(Imaging, BadSpecsSayWhatIsAccepted) {
  for (const char* bad : {"blur:size=3", "gaussian:size=two", "gaussian:size=2.5", "box:width=3", "gaussian:sigma",
                          "sharpen:alpha=2", "motion:len=0"}) {
    try {
      (void)imaging::parse_psf(bad);
      ADD_FAILURE() << bad << " should be refused";
    } catch (const InvalidArgument& e) {
      EXPECT_TRUE(testing::contains(e.what(), bad));
    }
  }
  const Matrix<double> f = imaging::shepp_logan(8);
  EXPECT_THROW((void)imaging::add_noise(f.view(), "poisson", 1), InvalidArgument);
  EXPECT_THROW((void)imaging::add_noise(f.view(), "gaussian:var=-1", 1), InvalidArgument);
}

TEST(Imaging, SystemMatrixIsTheConvolution) {
  const auto seed = testing::case_seed(1);
  LINV_TRACE_SEED(seed);
  const Matrix<double> f = random_uniform<double>(13, 9, seed, 0.0, 1.0);
  Matrix<double> even(4, 2);  // an even-sized kernel: the centre convention matters
  for (index k = 0; k < even.size(); ++k) even.data()[k] = static_cast<double>(k + 1);
  const imaging::Psf gauss = imaging::parse_psf("gaussian:size=5,sigma=1"), motion = imaging::parse_psf("motion:len=7,angle=30");
  for (const Matrix<double>* kernel : {static_cast<const Matrix<double>*>(&even), &gauss.kernel, &motion.kernel}) {
    const Matrix<double> g = imaging::convolve(f.view(), kernel->view());
    const Matrix<double> H = imaging::system_matrix(13, 9, kernel->view());
    for (index i = 0; i < 13 * 9; ++i) {
      double s = 0;
      for (index j = 0; j < 13 * 9; ++j) s += H(i, j) * f.data()[j];
      EXPECT_NEAR(s, g.data()[i], 1e-12 * (1 + std::abs(g.data()[i])));
    }
  }
  // H^T H + lambda I formed from the kernel alone equals the product of the dense H with itself
  for (const Matrix<double>* kernel : {static_cast<const Matrix<double>*>(&even), &gauss.kernel, &motion.kernel}) {
    const Matrix<double> H = imaging::system_matrix(13, 9, kernel->view());
    const Matrix<double> C = imaging::normal_matrix(13, 9, kernel->view(), 0.25);
    double worst = 0, scale = 0;
    for (index b = 0; b < 13 * 9; ++b)
      for (index a = 0; a < 13 * 9; ++a) {
        double s = a == b ? 0.25 : 0.0;
        for (index k = 0; k < 13 * 9; ++k) s += H(k, a) * H(k, b);
        worst = std::max(worst, std::abs(C(a, b) - s));
        scale = std::max(scale, std::abs(s));
      }
    EXPECT_LE(worst, 13 * 9 * testing::eps<double>() * scale);
  }
  // an explicit zero-boundary convolution: a single bright pixel spreads into the kernel itself, placed
  // by the centre convention
  Matrix<double> delta(7, 7);
  delta(3, 3) = 1;
  const Matrix<double> spread = imaging::convolve(delta.view(), even.view());
  for (index q = 0; q < 2; ++q)
    for (index p = 0; p < 4; ++p) EXPECT_EQ(spread(3 + p - 2, 3 + q - 1), even(p, q));
}

TEST(Imaging, FftConvolutionIsTheConvolutionAndItsAdjoint) {
  const auto seed = testing::case_seed(2);
  LINV_TRACE_SEED(seed);
  const Matrix<double> f = random_uniform<double>(37, 29, seed, 0.0, 1.0);
  const Matrix<double> y = random_uniform<double>(37, 29, seed + 1, 0.0, 1.0);
  Matrix<double> even(4, 6);
  for (index k = 0; k < even.size(); ++k) even.data()[k] = std::sin(static_cast<double>(k + 1));
  const imaging::Psf motion = imaging::parse_psf("motion:len=9,angle=30");
  for (const Matrix<double>* kernel : {static_cast<const Matrix<double>*>(&even), &motion.kernel}) {
    const imaging::Convolution H(37, 29, kernel->view());
    EXPECT_LE((testing::relative_difference<double, double>(H.apply(f.view()).view(),
                                                            imaging::convolve(f.view(), kernel->view()).view())),
              1e-13);
    EXPECT_LE((testing::relative_difference<double, double>(H.apply_adjoint(y.view()).view(),
                                                            imaging::convolve_adjoint(y.view(), kernel->view()).view())),
              1e-13);
    // <H f, y> = <f, H^T y>
    const Matrix<double> hf = H.apply(f.view()), hty = H.apply_adjoint(y.view());
    double left = 0, right = 0;
    for (index k = 0; k < f.size(); ++k) left += hf.data()[k] * y.data()[k], right += f.data()[k] * hty.data()[k];
    EXPECT_NEAR(left, right, 1e-12 * std::abs(left));
  }
}

TEST(Imaging, NoiseAndPhantom) {
  const Matrix<double> f = imaging::shepp_logan(64);
  EXPECT_EQ(f.rows(), 64);
  double lo = 1, hi = 0;
  for (index k = 0; k < f.size(); ++k) lo = std::min(lo, f.data()[k]), hi = std::max(hi, f.data()[k]);
  EXPECT_EQ(lo, 0.0);
  EXPECT_EQ(hi, 1.0);
  // noise statistics on mid-grey, where neither salt, pepper nor clipping is invisible
  Matrix<double> grey(64, 64);
  for (index k = 0; k < grey.size(); ++k) grey.data()[k] = 0.5;
  const Matrix<double> sp = imaging::add_noise(grey.view(), "saltpepper:density=0.1", 7);
  index changed = 0;
  for (index k = 0; k < grey.size(); ++k) changed += sp.data()[k] != 0.5;
  EXPECT_NEAR(static_cast<double>(changed) / grey.size(), 0.1, 0.02);
  const Matrix<double> g1 = imaging::add_noise(grey.view(), "gaussian:var=0.001", 3);
  const Matrix<double> g2 = imaging::add_noise(grey.view(), "gaussian:var=0.001", 3);
  EXPECT_EQ(imaging::mse(g1.view(), g2.view()), 0.0) << "the same seed gives the same noise";
  EXPECT_NEAR(imaging::mse(g1.view(), grey.view()), 0.001, 0.0001);
  const Matrix<double> clipped = imaging::add_noise(f.view(), "gaussian:var=0.01", 4);
  for (index k = 0; k < clipped.size(); ++k) ASSERT_TRUE(clipped.data()[k] >= 0 && clipped.data()[k] <= 1);
}

TEST(Imaging, DeblurRecoversAndThePathsAgree) {
  const Matrix<double> f = imaging::shepp_logan(24);
  const imaging::Psf blur = imaging::parse_psf("gaussian:size=5,sigma=1");
  const Matrix<double> g = imaging::convolve(f.view(), blur.kernel.view());
  // noise-free blur, lambda by GCV: recovered to MSE <= 1e-4
  const imaging::DeblurResult auto_result = imaging::deblur(g.view(), blur);
  EXPECT_EQ(auto_result.report.method, Method::Cholesky);  // the dense path
  EXPECT_EQ(auto_result.lambda_from, "generalised cross-validation");
  EXPECT_LE(imaging::mse(auto_result.image.view(), f.view()), 1e-4);
  // noise-free sharpening, no regularisation: recovered to MSE <= 1e-8
  const imaging::Psf sharpen = imaging::parse_psf("sharpen:alpha=0.2");
  const Matrix<double> s = imaging::convolve(f.view(), sharpen.kernel.view());
  EXPECT_LE(imaging::mse(imaging::deblur(s.view(), sharpen, {.lambda = 0}).image.view(), f.view()), 1e-8);
  // with noise, lambda by GCV does better than the degraded image
  for (const char* noise : {"gaussian:var=0.001", "saltpepper:density=0.05"}) {
    const Matrix<double> gn = imaging::add_noise(g.view(), noise, 11);
    const imaging::DeblurResult r = imaging::deblur(gn.view(), blur);
    EXPECT_LT(imaging::mse(r.image.view(), f.view()), imaging::mse(gn.view(), f.view())) << noise;
    // the matrix-free path solves the same equations
    const imaging::DeblurResult mf =
        imaging::deblur(gn.view(), blur, {.lambda = r.lambda, .path = imaging::DeblurPath::MatrixFree, .tolerance = 1e-13});
    EXPECT_EQ(mf.report.method, Method::ConjugateGradients);
    EXPECT_LE((testing::relative_difference<double, double>(mf.image.view(), r.image.view())), 1e-8) << noise;
  }
  EXPECT_EQ(imaging::deblur(g.view(), blur, {.path = imaging::DeblurPath::MatrixFree}).lambda_from,
            "generalised cross-validation");
}

}  // namespace
}  // namespace linv
