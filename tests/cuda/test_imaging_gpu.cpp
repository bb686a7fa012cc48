// Deblurring on the GPU against the CPU backend: H^T H + lambda I formed on the device, and the dense
// reconstruction.
#include <gtest/gtest.h>

#include "linv/generate.hpp"
#include "linv/imaging.hpp"
#include "support/dense_checks.hpp"
#include "support/gpu.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

TEST(ImagingGpu, NormalMatrixAndDenseDeblurAgreeWithCpu) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Matrix<double> even(4, 2);  // an even-sized kernel: the centre convention matters
  for (index k = 0; k < even.size(); ++k) even.data()[k] = static_cast<double>(k + 1) / 36;
  const imaging::Psf motion = imaging::parse_psf("motion:len=7,angle=30");
  for (const Matrix<double>* kernel : {static_cast<const Matrix<double>*>(&even), &motion.kernel}) {
    const Matrix<double> cpu = imaging::normal_matrix(13, 9, kernel->view(), 0.5);
    const Matrix<double> on_gpu = imaging::normal_matrix(13, 9, kernel->view(), 0.5, gpu).to(Device::cpu());
    EXPECT_LE((testing::relative_difference<double, double>(on_gpu.view(), cpu.view())), 10 * testing::eps<double>());
  }
  const Matrix<double> f = imaging::shepp_logan(32);
  const imaging::Psf blur = imaging::parse_psf("gaussian:size=5,sigma=1");
  const Matrix<double> g = imaging::add_noise(imaging::convolve(f.view(), blur.kernel.view()).view(), "gaussian:var=0.001", 3);
  const imaging::DeblurResult cpu = imaging::deblur(g.view(), blur, {.path = imaging::DeblurPath::Dense});
  const Matrix<double> g_gpu = g.to(gpu);
  imaging::DeblurResult on_gpu = imaging::deblur(g_gpu.view(), blur, {.path = imaging::DeblurPath::Dense});
  EXPECT_EQ(on_gpu.report.device, gpu);
  EXPECT_EQ(on_gpu.image.device(), gpu);  // the image comes back where g lives
  on_gpu.image = on_gpu.image.to(Device::cpu());
  EXPECT_EQ(on_gpu.lambda, cpu.lambda);  // chosen on the host either way
  EXPECT_LE((testing::relative_difference<double, double>(on_gpu.image.view(), cpu.image.view())), 1e-10);
  EXPECT_LT(imaging::mse(on_gpu.image.view(), f.view()), imaging::mse(g.view(), f.view()));
  // the matrix-free path (cuFFT, conjugate gradients) solves the same equations, on a non-square image
  // and an even-sized kernel too
  const imaging::DeblurOptions cg{.lambda = cpu.lambda, .path = imaging::DeblurPath::MatrixFree, .tolerance = 1e-13};
  imaging::DeblurResult mf = imaging::deblur(g_gpu.view(), blur, cg);
  mf.image = mf.image.to(Device::cpu());
  EXPECT_EQ(mf.report.method, Method::ConjugateGradients);
  EXPECT_GT(mf.report.iterations, 0);
  EXPECT_LE((testing::relative_difference<double, double>(mf.image.view(), cpu.image.view())), 1e-8);
  const Matrix<double> wide = random_uniform<double>(19, 27, testing::case_seed(7), 0.0, 1.0);
  const imaging::Psf box{Matrix<double>::copy_of(even.view()), "even"};
  const Matrix<double> a = imaging::deblur(wide.to(gpu).view(), box, cg).image.to(Device::cpu());
  const imaging::DeblurResult b = imaging::deblur(wide.view(), box, cg);
  EXPECT_LE((testing::relative_difference<double, double>(a.view(), b.image.view())), 1e-8);
}

}  // namespace
}  // namespace linv
