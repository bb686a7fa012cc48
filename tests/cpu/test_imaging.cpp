// The imaging forward model and deblurring on the CPU: PSFs as MATLAB builds them, the convolution and its
// system matrix under each boundary condition, the regularisers, the normal matrix, the spectral system and
// its choice of lambda against dense formulas, the paths against each other, the robust data term, colour,
// and bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "kernels/backend.hpp"
#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "linv/imaging.hpp"
#include "support/dense_checks.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

using imaging::Boundary;
using imaging::Regularizer;

constexpr Boundary kBoundaries[] = {Boundary::Zero, Boundary::Reflexive, Boundary::Periodic};
constexpr Regularizer kRegularizers[] = {Regularizer::Identity, Regularizer::Gradient, Regularizer::Laplacian};

double sum(const Matrix<double>& m) {
  double s = 0;
  for (index k = 0; k < m.size(); ++k) s += m.data()[k];
  return s;
}

// y = A x for a dense A and an image x (vectorised column by column).
Matrix<double> times(const Matrix<double>& A, ConstMatrixView<double> x) {
  return matmul<double>(A.view(), ConstMatrixView<double>(x.data(), x.rows() * x.cols(), 1, x.rows() * x.cols()));
}

// A^T A + lambda B^T B, densely.
Matrix<double> gram(const Matrix<double>& A, const Matrix<double>& B, double lambda) {
  Matrix<double> C(A.cols(), A.cols());
  gemm<double>(Op::Transpose, Op::None, 1.0, A.view(), A.view(), 0.0, C.view());
  gemm<double>(Op::Transpose, Op::None, lambda, B.view(), B.view(), 1.0, C.view());
  return C;
}

TEST(Imaging, PsfsFollowFspecial) {
  const imaging::Psf g = imaging::parse_psf("gaussian:size=5,sigma=1");
  ASSERT_EQ(g.kernel.rows(), 5);
  EXPECT_NEAR(sum(g.kernel), 1.0, 1e-15);
  EXPECT_NEAR(g.kernel(2, 2) / g.kernel(2, 3), std::exp(0.5), 1e-12);  // exp(-(x^2+y^2)/(2 sigma^2))
  EXPECT_TRUE(g.symmetric());
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
  EXPECT_FALSE(diagonal.symmetric());  // symmetric through its centre only, not about each axis
  // fspecial('unsharp', 0.2): centre (alpha + 5) / (alpha + 1), entries summing to 1
  const imaging::Psf sharpen = imaging::parse_psf("sharpen:alpha=0.2");
  EXPECT_NEAR(sharpen.kernel(1, 1), 5.2 / 1.2, 1e-15);
  EXPECT_NEAR(sum(sharpen.kernel), 1.0, 1e-15);
  EXPECT_TRUE(sharpen.symmetric());
  Matrix<double> even(2, 2);
  even(0, 0) = even(0, 1) = even(1, 0) = even(1, 1) = 0.25;
  EXPECT_FALSE(imaging::psf_from(even.view(), "even").symmetric());  // its centre is a corner pixel
}

// fspecial('disk', r): each pixel weighted by its area inside the circle of radius r, against the area
// measured by counting a fine grid of points inside each pixel.
TEST(Imaging, DiskWeighsPixelsByTheirAreaInTheCircle) {
  for (double radius : {1.0, 1.5, 2.3, 3.0, 4.7}) {
    const imaging::Psf d = imaging::parse_psf(fmt::format("disk:radius={}", radius));
    const index size = d.kernel.rows(), centre = size / 2;
    EXPECT_EQ(size, 2 * static_cast<index>(std::ceil(radius - 0.5)) + 1);
    EXPECT_TRUE(d.symmetric());
    EXPECT_NEAR(sum(d.kernel), 1.0, 1e-14);
    constexpr int kFine = 400;
    Matrix<double> area(size, size);
    for (index q = 0; q < size; ++q)
      for (index p = 0; p < size; ++p) {
        int inside = 0;
        for (int u = 0; u < kFine; ++u)
          for (int v = 0; v < kFine; ++v) {
            const double x = static_cast<double>(q - centre) - 0.5 + (u + 0.5) / kFine;
            const double y = static_cast<double>(p - centre) - 0.5 + (v + 0.5) / kFine;
            inside += x * x + y * y <= radius * radius;
          }
        area(p, q) = static_cast<double>(inside) / (kFine * kFine);
      }
    const double total = sum(area);
    for (index k = 0; k < area.size(); ++k)
      EXPECT_NEAR(d.kernel.data()[k], area.data()[k] / total, 2e-3) << "radius " << radius << " entry " << k;
  }
}

TEST(Imaging, BadSpecsSayWhatIsAccepted) {
  for (const char* bad : {"blur:size=3", "gaussian:size=two", "gaussian:size=2.5", "box:width=3", "gaussian:sigma",
                          "sharpen:alpha=2", "motion:len=0", "disk:radius=0"}) {
    try {
      (void)imaging::parse_psf(bad);
      ADD_FAILURE() << bad << " should be refused";
    } catch (const InvalidArgument& e) {
      EXPECT_TRUE(testing::contains(e.what(), bad));
    }
  }
  const Matrix<double> f = imaging::shepp_logan(8);
  EXPECT_THROW((void)imaging::add_noise(f.view(), "speckle", 1), InvalidArgument);
  EXPECT_THROW((void)imaging::add_noise(f.view(), "gaussian:var=-1", 1), InvalidArgument);
  EXPECT_THROW((void)imaging::add_noise(f.view(), "poisson:peak=0", 1), InvalidArgument);
  Matrix<double> zero_sum(1, 2);
  zero_sum(0, 0) = 1, zero_sum(0, 1) = -1;
  EXPECT_THROW((void)imaging::psf_from(zero_sum.view(), "edge"), InvalidArgument);
  // a measured kernel (a picture of a point: any sum) is scaled to sum 1, and says by what
  const imaging::Psf measured = imaging::psf_from(Matrix<double>::from_rows({{1, 2, 1}, {2, 4, 2}, {1, 2, 1}}).view(),
                                                  "measured");
  EXPECT_EQ(measured.scaled_by, 16.0);
  EXPECT_EQ(measured.kernel(1, 1), 0.25);
  EXPECT_EQ(measured.kernel(0, 0), 1.0 / 16);
  Matrix<double> nan(1, 1);
  nan(0, 0) = std::nan("");
  EXPECT_THROW((void)imaging::psf_from(nan.view(), "nan"), NonFiniteInput);  // data, not usage: exit 3
  // a difference filter summing to rounding (a Laplacian: 8.9e-16) is no blur, whatever scaling would make of it
  Matrix<double> laplacian = Matrix<double>::from_rows({{0, 0.1, 0}, {0.1, -0.4, 0.1}, {0, 0.1, 0}});
  laplacian(1, 1) += 8.9e-16;
  EXPECT_THROW((void)imaging::psf_from(laplacian.view(), "laplacian"), InvalidArgument);
  // a blur of tiny or huge entries is a blur: its sum is taken at its own scale
  for (double scale : {1e-300, 1e-200, 1e200, 1e300}) {
    Matrix<double> k = Matrix<double>::from_rows({{1, 2, 1}, {2, 4, 2}, {1, 2, 1}});
    for (index i = 0; i < k.size(); ++i) k.data()[i] *= scale;
    const imaging::Psf p = imaging::psf_from(k.view(), "scaled");
    EXPECT_DOUBLE_EQ(p.kernel(1, 1), 0.25) << scale;
  }
  EXPECT_THROW((void)imaging::parse_boundary("mirror"), InvalidArgument);
  EXPECT_THROW((void)imaging::parse_regularizer("tv"), InvalidArgument);
}

TEST(Imaging, EachBoundaryReadsPastTheFrameAsItSays) {
  // a row of five pixels blurred by [1 2 3] / 6 (centre 2): pixel 0 reads x(-1), pixel 4 reads x(5)
  Matrix<double> x(1, 5), k(1, 3);
  for (index j = 0; j < 5; ++j) x(0, j) = static_cast<double>(j + 1);
  k(0, 0) = 1.0 / 6, k(0, 1) = 2.0 / 6, k(0, 2) = 3.0 / 6;
  // g(j) = k(0) x(j + 1) + k(1) x(j) + k(2) x(j - 1)
  const double past_left[] = {0, 1, 5}, past_right[] = {0, 5, 1};  // x(-1), x(5) under zero, reflexive, periodic
  for (int b = 0; b < 3; ++b) {
    const Matrix<double> g = imaging::convolve(x.view(), k.view(), kBoundaries[b]);
    EXPECT_NEAR(g(0, 0), (2 + 2 * 1 + 3 * past_left[b]) / 6.0, 1e-15) << to_string(kBoundaries[b]);
    EXPECT_NEAR(g(0, 2), (4 + 2 * 3 + 3 * 2) / 6.0, 1e-15);
    EXPECT_NEAR(g(0, 4), (past_right[b] + 2 * 5 + 3 * 4) / 6.0, 1e-15) << to_string(kBoundaries[b]);
  }
}

TEST(Imaging, SystemMatrixIsTheConvolutionUnderEachBoundary) {
  const auto seed = testing::case_seed(1);
  LINV_TRACE_SEED(seed);
  const Matrix<double> f = random_uniform<double>(13, 9, seed, 0.0, 1.0);
  const Matrix<double> y = random_uniform<double>(13, 9, seed + 1, 0.0, 1.0);
  Matrix<double> even(4, 2);  // an even-sized kernel: the centre convention matters
  for (index k = 0; k < even.size(); ++k) even.data()[k] = static_cast<double>(k + 1);
  const imaging::Psf gauss = imaging::parse_psf("gaussian:size=5,sigma=1"), motion = imaging::parse_psf("motion:len=7,angle=30");
  for (Boundary b : kBoundaries)
    for (const Matrix<double>* kernel : {static_cast<const Matrix<double>*>(&even), &gauss.kernel, &motion.kernel}) {
      const Matrix<double> H = imaging::system_matrix(13, 9, kernel->view(), b);
      const Matrix<double> g = imaging::convolve(f.view(), kernel->view(), b);
      EXPECT_LE((testing::relative_difference<double, double>(times(H, f.view()).view(),
                                                              ConstMatrixView<double>(g.data(), 13 * 9, 1, 13 * 9))),
                1e-14)
          << to_string(b);
      // the adjoint is H^T
      Matrix<double> hty(13 * 9, 1);
      gemm<double>(Op::Transpose, Op::None, 1.0, H.view(), ConstMatrixView<double>(y.data(), 13 * 9, 1, 13 * 9), 0.0,
                   hty.view());
      const Matrix<double> adjoint = imaging::convolve_adjoint(y.view(), kernel->view(), b);
      EXPECT_LE((testing::relative_difference<double, double>(
                    ConstMatrixView<double>(adjoint.data(), 13 * 9, 1, 13 * 9), hty.view())),
                1e-14)
          << to_string(b);
    }
  // a single bright pixel spreads into the kernel itself, placed by the centre convention
  Matrix<double> delta(7, 7);
  delta(3, 3) = 1;
  const Matrix<double> spread = imaging::convolve(delta.view(), even.view(), Boundary::Zero);
  for (index q = 0; q < 2; ++q)
    for (index p = 0; p < 4; ++p) EXPECT_EQ(spread(3 + p - 2, 3 + q - 1), even(p, q));
}

TEST(Imaging, RegularizersAndTheNormalMatrix) {
  // the gradient under a reflexive boundary: L^T L is the Neumann Laplacian (zero row sums, 2 or 3 or 4 on
  // the diagonal by the number of neighbours)
  const Matrix<double> D = imaging::regularizer_matrix(5, 4, Regularizer::Gradient, Boundary::Reflexive);
  ASSERT_EQ(D.rows(), 40);
  const Matrix<double> DtD = gram(D, Matrix<double>(1, 20), 0.0);
  for (index a = 0; a < 20; ++a) {
    double row = 0;
    for (index b = 0; b < 20; ++b) row += DtD(a, b);
    EXPECT_NEAR(row, 0.0, 1e-15);
    const index i = a % 5, j = a / 5;
    EXPECT_EQ(DtD(a, a), (i > 0) + (i < 4) + (j > 0) + (j < 3));
  }
  // H^T H + lambda L^T L formed from the kernel equals the product of the dense H and L with themselves
  Matrix<double> even(4, 2);
  for (index k = 0; k < even.size(); ++k) even.data()[k] = static_cast<double>(k + 1) / 36;
  const imaging::Psf motion = imaging::parse_psf("motion:len=7,angle=30");
  for (Boundary b : kBoundaries)
    for (Regularizer r : kRegularizers)
      for (const Matrix<double>* kernel : {static_cast<const Matrix<double>*>(&even), &motion.kernel}) {
        const Matrix<double> H = imaging::system_matrix(13, 9, kernel->view(), b);
        const Matrix<double> L = imaging::regularizer_matrix(13, 9, r, b);
        const Matrix<double> want = gram(H, L, 0.25);
        const Matrix<double> C = imaging::normal_matrix(13, 9, kernel->view(), b, r, 0.25);
        double worst = 0, scale = 0;
        for (index k = 0; k < C.size(); ++k)
          worst = std::max(worst, std::abs(C.data()[k] - want.data()[k])), scale = std::max(scale, std::abs(want.data()[k]));
        EXPECT_LE(worst, 13 * 9 * testing::eps<double>() * scale) << to_string(b) << " " << to_string(r);
      }
}

TEST(Imaging, FftConvolutionIsTheConvolutionAndItsAdjoint) {
  const auto seed = testing::case_seed(2);
  LINV_TRACE_SEED(seed);
  const Matrix<double> f = random_uniform<double>(37, 29, seed, 0.0, 1.0);
  const Matrix<double> y = random_uniform<double>(37, 29, seed + 1, 0.0, 1.0);
  Matrix<double> even(4, 6);
  for (index k = 0; k < even.size(); ++k) even.data()[k] = std::sin(static_cast<double>(k + 1));
  const imaging::Psf motion = imaging::parse_psf("motion:len=9,angle=30");
  for (Boundary b : kBoundaries)
    for (const Matrix<double>* kernel : {static_cast<const Matrix<double>*>(&even), &motion.kernel}) {
      const imaging::Convolution H(37, 29, kernel->view(), b);
      EXPECT_LE((testing::relative_difference<double, double>(H.apply(f.view()).view(),
                                                              imaging::convolve(f.view(), kernel->view(), b).view())),
                1e-13)
          << to_string(b);
      EXPECT_LE((testing::relative_difference<double, double>(
                    H.apply_adjoint(y.view()).view(), imaging::convolve_adjoint(y.view(), kernel->view(), b).view())),
                1e-13)
          << to_string(b);
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
  // Poisson counts of mean peak * 0.5: variance 0.5 / peak
  const Matrix<double> poisson = imaging::add_noise(grey.view(), "poisson:peak=100", 5);
  EXPECT_NEAR(imaging::mse(poisson.view(), grey.view()), 0.005, 0.0006);
  // the noise estimate finds white noise's standard deviation on a smooth image
  Matrix<double> smooth(128, 96);
  for (index j = 0; j < 96; ++j)
    for (index i = 0; i < 128; ++i) smooth(i, j) = 0.5 + 0.3 * std::sin(i / 20.0) * std::cos(j / 15.0);
  const Matrix<double> noisy = imaging::add_noise(smooth.view(), "gaussian:var=0.0025", 9);
  EXPECT_NEAR(imaging::estimate_noise(noisy.view()), 0.05, 0.005);
}

// The neighbourhood of every parameter and pixel: NaN or Inf pixels are refused naming the pixel (and the
// channel), a PSF's sigma from 1e-300 to 1e300 gives a finite kernel of sum 1 (a point, a box), Poisson noise
// of any peak returns (the exact sampler never did past 9.2e18 counts), and lambda must be a finite weight.
TEST(Imaging, ExtremeInputsGiveAnAnswerOrTheDocumentedError) {
  const Matrix<double> f = imaging::shepp_logan(16);
  const imaging::Psf psf = imaging::parse_psf("gaussian:size=5,sigma=1");
  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    Matrix<double> g = imaging::convolve(f.view(), psf.kernel.view(), Boundary::Reflexive);
    g(5, 7) = bad;
    EXPECT_THROW((void)imaging::convolve(g.view(), psf.kernel.view(), Boundary::Reflexive), NonFiniteInput);
    EXPECT_THROW((void)imaging::add_noise(g.view(), "gaussian:var=0.001", 1), NonFiniteInput);
    try {
      (void)imaging::deblur(g.view(), psf);
      ADD_FAILURE() << "deblur took a non-finite pixel";
    } catch (const NonFiniteInput& e) {
      EXPECT_TRUE(testing::contains(e.what(), "pixel (row 6, column 8)")) << e.what();
    }
    Matrix<double> colour(16, 32);  // two channels side by side: the pixel is in the second
    copy<double>(g.view(), colour.block(0, 16, 16, 16));
    try {
      (void)imaging::deblur(colour.view(), psf, {.channels = 2});
      ADD_FAILURE() << "deblur took a non-finite pixel";
    } catch (const NonFiniteInput& e) {
      EXPECT_TRUE(testing::contains(e.what(), "pixel (row 6, column 8) of channel 2")) << e.what();
    }
  }
  for (double sigma : {1e-300, 1e-160, 1e-20, 1e-3, 1.0, 1e3, 1e20, 1e160, 1e300}) {
    const imaging::Psf p = imaging::parse_psf(fmt::format("gaussian:size=5,sigma={:g}", sigma));
    double sum = 0;
    for (index k = 0; k < p.kernel.size(); ++k) {
      ASSERT_TRUE(std::isfinite(p.kernel.data()[k])) << sigma;
      sum += p.kernel.data()[k];
    }
    EXPECT_NEAR(sum, 1.0, 1e-14) << sigma;
    const Matrix<double> g = imaging::convolve(f.view(), p.kernel.view(), Boundary::Reflexive);
    for (index k = 0; k < g.size(); ++k) ASSERT_TRUE(std::isfinite(g.data()[k])) << sigma;
  }
  Matrix<double> grey(16, 16);
  for (index k = 0; k < grey.size(); ++k) grey.data()[k] = 0.5;
  for (double peak : {1e-3, 1.0, 1e12, 1e15, 1e19, 1e20, 1e100, 1e300}) {
    const Matrix<double> noisy = imaging::add_noise(grey.view(), fmt::format("poisson:peak={:g}", peak), 3);
    for (index k = 0; k < noisy.size(); ++k) ASSERT_TRUE(noisy.data()[k] >= 0 && noisy.data()[k] <= 1) << peak;
    if (peak >= 1e12) {
      EXPECT_LT(imaging::mse(noisy.view(), grey.view()), 1.0 / peak) << peak;  // variance 0.5 / peak
    }
  }
  for (double lambda : {std::nan(""), HUGE_VAL})
    EXPECT_THROW((void)imaging::deblur(f.view(), psf, {.lambda = lambda}), InvalidArgument) << lambda;
}

// The spectral system is exact under a periodic boundary (any PSF) and a reflexive one (a symmetric PSF):
// its solution, residual and trace (what GCV is made of) against dense formulas on a small image.
TEST(Imaging, SpectralSystemMatchesTheDenseOne) {
  const auto seed = testing::case_seed(3);
  LINV_TRACE_SEED(seed);
  const index m = 12, n = 10;
  const Matrix<double> g = random_uniform<double>(m, n, seed, 0.0, 1.0);
  const imaging::Psf gauss = imaging::parse_psf("gaussian:size=5,sigma=1.2"), motion = imaging::parse_psf("motion:len=5,angle=30");
  struct Case {
    Boundary boundary;
    const imaging::Psf* psf;
  };
  for (const Case& c : {Case{Boundary::Periodic, &motion}, Case{Boundary::Periodic, &gauss}, Case{Boundary::Reflexive, &gauss}})
    for (Regularizer r : kRegularizers) {
      const std::string what = fmt::format("{} {} {}", to_string(c.boundary), to_string(r), c.psf->spec);
      const kernels::BlurModel model{m, n, c.psf->kernel.view(), c.boundary, r};
      const std::unique_ptr<kernels::Spectral> S = kernels::imaging(Device::cpu()).spectral(model, Device::cpu());
      ASSERT_TRUE(S->exact()) << what;
      const Matrix<double> H = imaging::system_matrix(m, n, c.psf->kernel.view(), c.boundary);
      const Matrix<double> L = imaging::regularizer_matrix(m, n, r, c.boundary);
      const double lambda = 0.03;
      const Matrix<double> C = gram(H, L, lambda);
      const Cholesky<double> chol(C.view());
      Matrix<double> hg(m * n, 1);
      gemm<double>(Op::Transpose, Op::None, 1.0, H.view(), ConstMatrixView<double>(g.data(), m * n, 1, m * n), 0.0, hg.view());
      const Matrix<double> want = chol.solve(hg.view());
      Matrix<double> f(m, n);
      S->solve(g.view(), lambda, f.view());
      const double bound = testing::kForwardThreshold * static_cast<double>(m * n) * testing::eps<double>() / chol.rcond();
      EXPECT_LE((testing::relative_difference<double, double>(ConstMatrixView<double>(f.data(), m * n, 1, m * n),
                                                              want.view())),
                bound)
          << what;
      // residual ||g - H f||^2 and trace(I - H C^-1 H^T)
      const Matrix<double> hf = times(H, f.view());
      double residual = 0;
      for (index k = 0; k < m * n; ++k) residual += (g.data()[k] - hf.data()[k]) * (g.data()[k] - hf.data()[k]);
      Matrix<double> Ht(m * n, m * n);
      for (index b = 0; b < m * n; ++b)
        for (index a = 0; a < m * n; ++a) Ht(a, b) = H(b, a);
      const Matrix<double> X = chol.solve(Ht.view());  // C^-1 H^T
      double trace = static_cast<double>(m * n);
      for (index a = 0; a < m * n; ++a)
        for (index k = 0; k < m * n; ++k) trace -= H(a, k) * X(k, a);
      S->analyse(g.view(), 1);
      const kernels::Spectral::Terms t = S->residual_and_trace(lambda);
      EXPECT_NEAR(t.residual, residual, 1e-10 * residual + 1e-14) << what;
      EXPECT_NEAR(t.trace, trace, 1e-9 * trace) << what;
    }
}

TEST(Imaging, ThePathsSolveTheSameEquations) {
  const auto seed = testing::case_seed(4);
  LINV_TRACE_SEED(seed);
  const Matrix<double> f = imaging::shepp_logan(24);
  const imaging::Psf gauss = imaging::parse_psf("gaussian:size=5,sigma=1"), motion = imaging::parse_psf("motion:len=7,angle=30");
  for (Boundary b : kBoundaries)
    for (const imaging::Psf* psf : {&gauss, &motion}) {
      const Matrix<double> g =
          imaging::add_noise(imaging::convolve(f.view(), psf->kernel.view(), b).view(), "gaussian:var=0.0001", seed);
      const std::string what = fmt::format("{} {}", to_string(b), psf->spec);
      const imaging::DeblurOptions base{.lambda = 0.01, .boundary = b, .robust = imaging::Robust::Off, .tolerance = 1e-13,
                                         .prior = imaging::Prior::Tikhonov};
      imaging::DeblurOptions dense = base, free = base, spectral = base;
      dense.path = imaging::DeblurPath::Dense;
      free.path = imaging::DeblurPath::MatrixFree;
      spectral.path = imaging::DeblurPath::Spectral;
      const imaging::DeblurResult d = imaging::deblur(g.view(), *psf, dense), mf = imaging::deblur(g.view(), *psf, free);
      EXPECT_EQ(d.report.method, Method::Cholesky);
      EXPECT_EQ(mf.report.method, Method::ConjugateGradients);
      EXPECT_EQ(mf.report.stop, StopReason::Converged) << what;
      EXPECT_LE((testing::relative_difference<double, double>(mf.image.view(), d.image.view())), 1e-9) << what;
      const bool exact = b == Boundary::Periodic || (b == Boundary::Reflexive && psf->symmetric());
      if (exact) {
        const imaging::DeblurResult s = imaging::deblur(g.view(), *psf, spectral);
        EXPECT_EQ(s.report.method, Method::Spectral);
        EXPECT_LE((testing::relative_difference<double, double>(s.image.view(), d.image.view())), 1e-10) << what;
        EXPECT_LE(mf.report.iterations, 3) << what << ": the exact spectral system preconditions in a step or two";
      } else {
        EXPECT_THROW((void)imaging::deblur(g.view(), *psf, spectral), InvalidArgument) << what;
      }
    }
}

TEST(Imaging, DeblurRecoversAndChoosesLambda) {
  const Matrix<double> f = imaging::shepp_logan(64);
  const imaging::Psf blur = imaging::parse_psf("gaussian:size=5,sigma=1");
  const Matrix<double> g = imaging::convolve(f.view(), blur.kernel.view(), Boundary::Reflexive);
  // the defaults of the Tikhonov prior: reflexive, Laplacian, spectral (the PSF is symmetric), lambda by GCV
  const imaging::DeblurOptions tikhonov{.prior = imaging::Prior::Tikhonov};
  const imaging::DeblurResult noise_free = imaging::deblur(g.view(), blur, tikhonov);
  EXPECT_EQ(noise_free.report.method, Method::Spectral);
  EXPECT_EQ(noise_free.lambda_from, "generalised cross-validation");
  EXPECT_GE(imaging::psnr(noise_free.image.view(), f.view()), 40.0);
  // 8-bit rounding is noise GCV sees
  Matrix<double> rounded = Matrix<double>::copy_of(g.view());
  for (index k = 0; k < rounded.size(); ++k) rounded.data()[k] = std::round(rounded.data()[k] * 255) / 255;
  const imaging::DeblurResult eight_bits = imaging::deblur(rounded.view(), blur, tikhonov);
  EXPECT_EQ(eight_bits.lambda_from, "generalised cross-validation");
  EXPECT_GE(imaging::psnr(eight_bits.image.view(), f.view()), imaging::psnr(rounded.view(), f.view()) + 5);
  // noise-free sharpening: exact recovery with lambda 0 (the spectral pseudo-inverse), and with auto, whose
  // GCV has no minimum there to find (prior auto: Tikhonov for a filter that sharpens)
  const imaging::Psf sharpen = imaging::parse_psf("sharpen:alpha=0.2");
  const Matrix<double> s = imaging::convolve(f.view(), sharpen.kernel.view(), Boundary::Reflexive);
  EXPECT_LE(imaging::mse(imaging::deblur(s.view(), sharpen, {.lambda = 0}).image.view(), f.view()), 1e-20);
  const imaging::DeblurResult sharp = imaging::deblur(s.view(), sharpen);
  EXPECT_TRUE(testing::contains(sharp.lambda_from, "the smallest lambda"));
  EXPECT_GE(imaging::psnr(sharp.image.view(), f.view()), 100.0);
  // with noise, every rule does better than the degraded image, and says which it used
  const Matrix<double> noisy = imaging::add_noise(g.view(), "gaussian:var=0.001", 11);
  for (imaging::LambdaRule rule : {imaging::LambdaRule::Auto, imaging::LambdaRule::GCV, imaging::LambdaRule::Discrepancy}) {
    const imaging::DeblurResult r = imaging::deblur(noisy.view(), blur, {.rule = rule, .prior = imaging::Prior::Tikhonov});
    EXPECT_GT(imaging::psnr(r.image.view(), f.view()), imaging::psnr(noisy.view(), f.view()) + 0.5) << to_string(rule);
    EXPECT_NEAR(r.noise_sigma, std::sqrt(0.001), 0.01);
  }
  EXPECT_EQ(imaging::deblur(noisy.view(), blur, {.rule = imaging::LambdaRule::Discrepancy, .prior = imaging::Prior::Tikhonov})
                .lambda_from,
            "discrepancy principle");
}

TEST(Imaging, RobustDataTermRemovesSaltAndPepper) {
  const Matrix<double> f = imaging::shepp_logan(48);
  const imaging::Psf blur = imaging::parse_psf("gaussian:size=5,sigma=1");
  const Matrix<double> g = imaging::add_noise(imaging::convolve(f.view(), blur.kernel.view(), Boundary::Zero).view(),
                                              "saltpepper:density=0.05", 13);
  const imaging::DeblurResult plain =
      imaging::deblur(g.view(), blur, {.robust = imaging::Robust::Off, .prior = imaging::Prior::Tikhonov});
  // robust auto: impulses seen
  const imaging::DeblurResult robust = imaging::deblur(g.view(), blur, {.prior = imaging::Prior::Tikhonov});
  EXPECT_FALSE(plain.robust);
  EXPECT_TRUE(robust.robust);
  EXPECT_EQ(robust.report.method, Method::ConjugateGradients);
  const double before = imaging::psnr(g.view(), f.view()), after = imaging::psnr(robust.image.view(), f.view());
  // measured: 14.1 dB degraded, 15.9 without the robust term, 18.0 with it (18.8 with lambda at a tenth of its
  // scale, which photographs lose 2 to 5 dB to: camera's photograph goes 20.1 -> 28.1 at 2 % salt and pepper,
  // docs/deblurring-quality.md)
  EXPECT_GE(after, before + 3.5) << "salt and pepper: at least 3.5 dB better than the degraded image";
  EXPECT_GT(after, imaging::psnr(plain.image.view(), f.view()) + 2);
  bool said = false;
  for (const std::string& note : robust.report.notes) said = said || note.find("salt and pepper") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_THROW((void)imaging::deblur(g.view(), blur, {.robust = imaging::Robust::On, .path = imaging::DeblurPath::Dense}),
               InvalidArgument);
}

TEST(Imaging, ChannelsShareLambdaAndFactorisation) {
  const auto seed = testing::case_seed(5);
  LINV_TRACE_SEED(seed);
  const index m = 20, n = 16;
  const imaging::Psf blur = imaging::parse_psf("disk:radius=2");
  Matrix<double> rgb(m, 3 * n);
  for (int c = 0; c < 3; ++c) {
    const Matrix<double> channel = random_uniform<double>(m, n, seed + static_cast<std::uint64_t>(c), 0.0, 1.0);
    copy<double>(imaging::convolve(channel.view(), blur.kernel.view(), Boundary::Reflexive).view(),
                 rgb.block(0, c * n, m, n));
  }
  for (imaging::DeblurPath path : {imaging::DeblurPath::Spectral, imaging::DeblurPath::Dense, imaging::DeblurPath::MatrixFree}) {
    const imaging::DeblurResult all =
        imaging::deblur(rgb.view(), blur, {.lambda = 0.02, .path = path, .channels = 3, .prior = imaging::Prior::Tikhonov});
    ASSERT_EQ(all.image.cols(), 3 * n);
    for (int c = 0; c < 3; ++c) {
      const imaging::DeblurResult one =
          imaging::deblur(rgb.block(0, c * n, m, n), blur,
                          {.lambda = 0.02, .path = path, .tolerance = 1e-13, .prior = imaging::Prior::Tikhonov});
      EXPECT_LE((testing::relative_difference<double, double>(all.image.block(0, c * n, m, n), one.image.view())), 1e-8);
    }
  }
  EXPECT_THROW((void)imaging::deblur(rgb.block(0, 0, m, 3 * n - 1), blur, {.channels = 3}), ShapeMismatch);
  EXPECT_THROW((void)imaging::deblur(rgb.block(0, 0, 3, 3), imaging::parse_psf("gaussian:size=5"), {}), InvalidArgument);
}

}  // namespace
}  // namespace linv
