#include <gtest/gtest.h>

#include "linv/device.hpp"
#include "linv/errors.hpp"
#include "linv/matrix.hpp"

namespace linv {
namespace {

TEST(Matrix, ZeroFilledColumnMajorWithViews) {
  Matrix<double> m(3, 4);
  EXPECT_EQ(m.rows(), 3);
  EXPECT_EQ(m.cols(), 4);
  EXPECT_EQ(m.ld(), 3);
  for (index k = 0; k < m.size(); ++k) EXPECT_EQ(m.data()[k], 0.0);
  m(2, 1) = 5;
  EXPECT_EQ(m.data()[2 + 1 * 3], 5.0);  // column-major
  MatrixView<double> b = m.block(1, 1, 2, 2);
  EXPECT_EQ(b(1, 0), 5.0);
  EXPECT_EQ(b.ld(), 3);
  b(0, 1) = 7;
  EXPECT_EQ(m(1, 2), 7.0);
  ConstMatrixView<double> c = b;
  EXPECT_EQ(c(0, 1), 7.0);
}

TEST(Matrix, FromRowsIdentityCloneCast) {
  auto m = Matrix<double>::from_rows({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(m.rows(), 2);
  EXPECT_EQ(m(1, 2), 6.0);
  auto c = m.clone();
  c(0, 0) = 9;
  EXPECT_EQ(m(0, 0), 1.0);  // a deep copy
  auto f = m.cast<float>();
  EXPECT_EQ(f(1, 0), 4.0f);
  auto i = Matrix<float>::identity(3);
  EXPECT_EQ(i(1, 1), 1.0f);
  EXPECT_EQ(i(0, 1), 0.0f);
  auto empty = Matrix<double>(0, 5);
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.ld(), 1);
  auto moved = std::move(m);
  EXPECT_EQ(moved(1, 1), 5.0);
}

TEST(Matrix, CopyOfAViewAndHostChecks) {
  auto m = Matrix<double>::from_rows({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  auto sub = Matrix<double>::copy_of(m.block(1, 1, 2, 2));
  EXPECT_EQ(sub.ld(), 2);
  EXPECT_EQ(sub(1, 1), 9.0);
  EXPECT_NO_THROW(require_host(Device::cpu(), "test"));
}

TEST(Device, CpuAndParsing) {
  EXPECT_EQ(Device::cpu().name(), "cpu");
  EXPECT_TRUE(Device::parse("cpu").is_cpu());
  EXPECT_THROW(Device::parse("gpu"), InvalidArgument);
  EXPECT_THROW(Device::parse("cuda:x"), Error);
  // auto is the GPU when one is usable, the CPU otherwise; never an error
  EXPECT_NO_THROW(Device::parse("auto"));
}

TEST(Device, CudaErrorsAreClearWithoutAGpu) {
  const GpuList gpus = cuda_devices();
  if (!gpus.gpus.empty()) GTEST_SKIP() << "a GPU is present; tests/cuda covers it";
  EXPECT_FALSE(gpus.why_none.empty());
  try {
    (void)Device::cuda(0);
    FAIL() << "no error";
  } catch (const DeviceError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::device);
    EXPECT_FALSE(std::string(e.what()).empty());
  }
  EXPECT_TRUE(Device::best().is_cpu());
}

TEST(Device, BuildInfoNamesTheBlas) {
  const BuildInfo info = build_info();
  EXPECT_FALSE(info.version.empty());
  EXPECT_NE(info.blas.find("OpenBLAS"), std::string::npos) << info.blas;
}

}  // namespace
}  // namespace linv
