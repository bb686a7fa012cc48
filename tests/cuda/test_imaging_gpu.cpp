// Imaging on the GPU against the CPU: the normal matrix under each boundary and regulariser, and deblurring
// by each path (spectral by cuFFT, dense by cuSOLVER, matrix-free by cuFFT convolutions and preconditioned
// conjugate gradients), lambda chosen on the device, the robust data term and colour.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <limits>

#include "kernels/backend.hpp"
#include "kernels/imaging.hpp"
#include "linv/generate.hpp"
#include "linv/imaging.hpp"
#include "support/dense_checks.hpp"
#include "support/gpu.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

using imaging::Boundary;
using imaging::Regularizer;

TEST(ImagingGpu, NormalMatrixAgreesWithCpu) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Matrix<double> even(4, 2);  // an even-sized kernel: the centre convention matters
  for (index k = 0; k < even.size(); ++k) even.data()[k] = static_cast<double>(k + 1) / 36;
  const imaging::Psf motion = imaging::parse_psf("motion:len=7,angle=30");
  for (Boundary b : {Boundary::Zero, Boundary::Reflexive, Boundary::Periodic})
    for (Regularizer r : {Regularizer::Identity, Regularizer::Gradient, Regularizer::Laplacian})
      for (const Matrix<double>* kernel : {static_cast<const Matrix<double>*>(&even), &motion.kernel}) {
        const Matrix<double> cpu = imaging::normal_matrix(13, 9, kernel->view(), b, r, 0.5);
        const Matrix<double> on_gpu = imaging::normal_matrix(13, 9, kernel->view(), b, r, 0.5, gpu).to(Device::cpu());
        EXPECT_LE((testing::relative_difference<double, double>(on_gpu.view(), cpu.view())),
                  13 * 9 * testing::eps<double>())
            << to_string(b) << " " << to_string(r);
      }
}

TEST(ImagingGpu, EveryPathAgreesWithCpu) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto seed = testing::case_seed(6);
  LINV_TRACE_SEED(seed);
  const Matrix<double> f = imaging::shepp_logan(testing::sizes<index>(32, 16));
  const imaging::Psf gauss = imaging::parse_psf("gaussian:size=5,sigma=1"), motion = imaging::parse_psf("motion:len=9,angle=30");
  for (Boundary b : {Boundary::Zero, Boundary::Reflexive, Boundary::Periodic})
    for (const imaging::Psf* psf : {&gauss, &motion}) {
      const Matrix<double> g =
          imaging::add_noise(imaging::convolve(f.view(), psf->kernel.view(), b).view(), "gaussian:var=0.0005", seed);
      const Matrix<double> g_gpu = g.to(gpu);
      const bool exact = b == Boundary::Periodic || (b == Boundary::Reflexive && psf->symmetric());
      for (imaging::DeblurPath path :
           {imaging::DeblurPath::Auto, imaging::DeblurPath::Spectral, imaging::DeblurPath::Dense, imaging::DeblurPath::MatrixFree}) {
        if (path == imaging::DeblurPath::Spectral && !exact) continue;
        const std::string what = fmt::format("{} {} path {}", to_string(b), psf->spec, static_cast<int>(path));
        imaging::DeblurOptions o{.boundary = b, .robust = imaging::Robust::Off, .path = path, .tolerance = 1e-13,
                                 .prior = imaging::Prior::Tikhonov};
        const imaging::DeblurResult cpu = imaging::deblur(g.view(), *psf, o);
        // lambda chosen alike (GCV's sums differ in rounding, which moves its minimiser a little) ...
        EXPECT_NEAR(imaging::deblur(g_gpu.view(), *psf, o).lambda, cpu.lambda, 1e-6 * cpu.lambda) << what;
        // ... and, for the same lambda, the same image
        o.lambda = cpu.lambda;
        imaging::DeblurResult on_gpu = imaging::deblur(g_gpu.view(), *psf, o);
        EXPECT_EQ(on_gpu.report.device, gpu);
        EXPECT_EQ(on_gpu.image.device(), gpu);  // the image comes back where g lives
        EXPECT_EQ(on_gpu.report.method, cpu.report.method) << what;
        on_gpu.image = on_gpu.image.to(Device::cpu());
        EXPECT_LE((testing::relative_difference<double, double>(on_gpu.image.view(), cpu.image.view())), 1e-9) << what;
      }
    }
}

TEST(ImagingGpu, RobustTermAndColourAgreeWithCpu) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto seed = testing::case_seed(7);
  LINV_TRACE_SEED(seed);
  const index m = 40, n = 36;
  const imaging::Psf blur = imaging::parse_psf("disk:radius=2");
  Matrix<double> rgb(m, 3 * n);
  for (int c = 0; c < 3; ++c) {
    const Matrix<double> channel = random_uniform<double>(m, n, seed + static_cast<std::uint64_t>(c), 0.0, 1.0);
    copy<double>(imaging::add_noise(imaging::convolve(channel.view(), blur.kernel.view(), Boundary::Reflexive).view(),
                                    "saltpepper:density=0.03", seed + 10 + static_cast<std::uint64_t>(c))
                     .view(),
                 rgb.block(0, c * n, m, n));
  }
  imaging::DeblurOptions o{.channels = 3, .tolerance = 1e-12, .prior = imaging::Prior::Tikhonov};
  const imaging::DeblurResult cpu = imaging::deblur(rgb.view(), blur, o);
  EXPECT_TRUE(cpu.robust);
  EXPECT_NEAR(imaging::deblur(rgb.to(gpu).view(), blur, o).lambda, cpu.lambda, 1e-6 * cpu.lambda);
  o.lambda = cpu.lambda;
  imaging::DeblurResult on_gpu = imaging::deblur(rgb.to(gpu).view(), blur, o);
  EXPECT_TRUE(on_gpu.robust);
  on_gpu.image = on_gpu.image.to(Device::cpu());
  EXPECT_LE((testing::relative_difference<double, double>(on_gpu.image.view(), cpu.image.view())), 1e-9);
}

// Total variation by ADMM on the GPU follows the CPU's iterations: the same weight, iterations and image,
// up to the rounding of atomics and transforms amplified over the iterations (grey and colour; a symmetric
// PSF, whose linear step is spectral, and a motion PSF, whose step is conjugate gradients).
TEST(ImagingGpu, TotalVariationAgreesWithCpu) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto seed = testing::case_seed(8);
  LINV_TRACE_SEED(seed);
  const index m = 48, n = 40;
  for (const char* spec : {"gaussian:size=5,sigma=1.2", "motion:len=5,angle=30"})
    for (int channels : {1, 3}) {
      const imaging::Psf blur = imaging::parse_psf(spec);
      Matrix<double> g(m, channels * n);
      for (int c = 0; c < channels; ++c) {
        const Matrix<double> f = random_uniform<double>(m, n, seed + static_cast<std::uint64_t>(c), 0.0, 1.0);
        copy<double>(imaging::add_noise(imaging::convolve(f.view(), blur.kernel.view(), Boundary::Reflexive).view(),
                                        "gaussian:var=1e-4", seed + 20 + static_cast<std::uint64_t>(c))
                         .view(),
                     g.block(0, c * n, m, n));
      }
      const std::string what = fmt::format("{}, {} channels", spec, channels);
      imaging::DeblurOptions o{.channels = channels, .tolerance = 1e-12, .prior = imaging::Prior::TotalVariation,
                               .admm_iterations = 60, .admm_tolerance = 1e-12};
      const imaging::DeblurResult cpu = imaging::deblur(g.view(), blur, o);
      EXPECT_EQ(cpu.report.method, Method::ADMM) << what;
      o.lambda = cpu.lambda;  // the start's lambda fixed: the rules' searches differ at rounding level
      o.tv_weight = cpu.tv_weight;
      const imaging::DeblurResult cpu_fixed = imaging::deblur(g.view(), blur, o);
      imaging::DeblurResult on_gpu = imaging::deblur(g.to(gpu).view(), blur, o);
      EXPECT_EQ(on_gpu.report.method, Method::ADMM) << what;
      EXPECT_EQ(on_gpu.report.iterations, cpu_fixed.report.iterations) << what;
      on_gpu.image = on_gpu.image.to(Device::cpu());
      EXPECT_LE((testing::relative_difference<double, double>(on_gpu.image.view(), cpu_fixed.image.view())), 1e-6)
          << what;
    }
}

// The Poisson data term's ADMM on the GPU follows the CPU's: photon counts at a peak of 50 per unit, the peak
// given (the estimate is the host's either way), grey and colour, spectral and conjugate-gradient steps.
TEST(ImagingGpu, PoissonTotalVariationAgreesWithCpu) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto seed = testing::case_seed(9);
  LINV_TRACE_SEED(seed);
  const index m = 48, n = 40;
  constexpr double kPeak = 50;
  for (const char* spec : {"gaussian:size=5,sigma=1.2", "motion:len=5,angle=30"})
    for (int channels : {1, 3}) {
      const imaging::Psf blur = imaging::parse_psf(spec);
      Matrix<double> g(m, channels * n);
      for (int c = 0; c < channels; ++c) {
        const Matrix<double> f = random_uniform<double>(m, n, seed + static_cast<std::uint64_t>(c), 0.1, 1.0);
        copy<double>(imaging::add_noise(imaging::convolve(f.view(), blur.kernel.view(), Boundary::Reflexive).view(),
                                        fmt::format("poisson:peak={}", kPeak), seed + 20 + static_cast<std::uint64_t>(c))
                         .view(),
                     g.block(0, c * n, m, n));
      }
      const std::string what = fmt::format("{}, {} channels", spec, channels);
      imaging::DeblurOptions o{.channels = channels, .tolerance = 1e-12, .noise_model = imaging::NoiseModel::Poisson,
                               .photon_peak = kPeak, .admm_iterations = 60, .admm_tolerance = 1e-12};
      const imaging::DeblurResult cpu = imaging::deblur(g.view(), blur, o);
      EXPECT_EQ(cpu.report.method, Method::ADMM) << what;
      EXPECT_EQ(cpu.noise_model, imaging::NoiseModel::Poisson) << what;
      o.lambda = cpu.lambda;
      o.tv_weight = cpu.tv_weight;
      const imaging::DeblurResult cpu_fixed = imaging::deblur(g.view(), blur, o);
      imaging::DeblurResult on_gpu = imaging::deblur(g.to(gpu).view(), blur, o);
      EXPECT_EQ(on_gpu.noise_model, imaging::NoiseModel::Poisson) << what;
      EXPECT_EQ(on_gpu.report.iterations, cpu_fixed.report.iterations) << what;
      on_gpu.image = on_gpu.image.to(Device::cpu());
      EXPECT_LE((testing::relative_difference<double, double>(on_gpu.image.view(), cpu_fixed.image.view())), 1e-6)
          << what;
    }
}

// The nonlocal prior's averaging on the GPU is the CPU's, pixel for pixel: grey and colour, an image smaller
// than the search window (the frame's reflection repeats), the output poisoned with NaN first.
TEST(ImagingGpu, NonlocalMeansAgreesWithCpu) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const auto seed = testing::case_seed(10);
  LINV_TRACE_SEED(seed);
  for (const auto& [m, n] : {std::pair<index, index>{37, 29}, {6, 9}})
    for (int channels : {1, 3}) {
      const Matrix<double> y = random_uniform<double>(m, n * channels, seed, 0.0, 1.0);
      const Matrix<double> pilot = random_uniform<double>(m, n * channels, seed + 1, 0.0, 1.0);
      const kernels::NonlocalMeans params{.patch = 2, .search = 7, .h = 0.3};
      Matrix<double> cpu = Matrix<double>::uninitialized(m, n * channels);
      kernels::imaging(Device::cpu()).nonlocal_means(y.view(), pilot.view(), channels, params, cpu.view());
      Matrix<double> out(m, n * channels);
      for (index k = 0; k < out.size(); ++k) out.data()[k] = std::numeric_limits<double>::quiet_NaN();
      Matrix<double> on_gpu = out.to(gpu);
      const Matrix<double> y_gpu = y.to(gpu), pilot_gpu = pilot.to(gpu);
      kernels::imaging(gpu).nonlocal_means(y_gpu.view(), pilot_gpu.view(), channels, params, on_gpu.view());
      kernels::vectors<double>(gpu).synchronize(gpu);
      const Matrix<double> back = on_gpu.to(Device::cpu());
      const std::string what = fmt::format("{}x{}, {} channels", m, n, channels);
      for (index k = 0; k < back.size(); ++k) ASSERT_TRUE(std::isfinite(back.data()[k])) << what << ", entry " << k;
      // the same sums in the same order; exp may differ by an ulp between the host's and the device's libraries
      EXPECT_LE((testing::relative_difference<double, double>(back.view(), cpu.view())), 1e-13) << what;
    }
}

}  // namespace
}  // namespace linv
