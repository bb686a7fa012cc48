// The CUDA backend on a real GPU: discovery and host <-> device transfers. Skips, saying why, where no
// GPU is usable (CI runs without one; these run on the device machine).
#include <gtest/gtest.h>

#include "linv/device.hpp"
#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "linv/matrix.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

class Cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    const GpuList list = cuda_devices();
    if (list.gpus.empty()) GTEST_SKIP() << "no CUDA GPU usable (" << list.why_none << "): CUDA tests skipped";
  }
};

TEST_F(Cuda, DiscoveryReportsEveryGpu) {
  const GpuList list = cuda_devices();
  for (const GpuInfo& g : list.gpus) {
    EXPECT_FALSE(g.name.empty());
    EXPECT_GT(g.total_memory, 0u);
    EXPECT_GT(g.multiprocessors, 0);
  }
  EXPECT_TRUE(Device::best().is_cuda());
  EXPECT_EQ(Device::parse("cuda").index(), 0);
  EXPECT_THROW(Device::cuda(static_cast<int>(list.gpus.size())), DeviceError);
}

// synchronize waits for other libraries' work (tests/python/test_gpu_arrays.py checks that with PyTorch
// streams); here, that it is there for each kind of device.
TEST_F(Cuda, SynchronizeOnEveryKindOfDevice) {
  EXPECT_NO_THROW(synchronize(Device::cpu()));
  EXPECT_NO_THROW(synchronize(Device::cuda(0)));
}

TEST_F(Cuda, TransfersRoundTripExactly) {
  const auto seed = testing::case_seed(1);
  LINV_TRACE_SEED(seed);
  const Device gpu = Device::cuda(0);
  // 2900 x 2903 doubles (67 MB): staged through pinned buffers in 32 MB chunks, the last one partial
  for (index n : {1, 7, 1000, 2900}) {
    Matrix<double> a = random_uniform<double>(n, n + 3, seed + n);
    Matrix<double> on_gpu = a.to(gpu);
    EXPECT_EQ(on_gpu.device(), gpu);
    Matrix<double> copy = on_gpu.clone();  // device to device
    Matrix<double> back = copy.to(Device::cpu());
    for (index k = 0; k < a.size(); ++k) ASSERT_EQ(back.data()[k], a.data()[k]);
    Matrix<float> zeros(n, 2, gpu);  // zero-filled on the device
    Matrix<float> z = zeros.to(Device::cpu());
    for (index k = 0; k < z.size(); ++k) ASSERT_EQ(z.data()[k], 0.0f);
  }
}

// Strided views both ways: 2990 x 1400 doubles (33 MB) out of a 3000-row host matrix, staged column by column.
TEST_F(Cuda, StridedTransfersRoundTripExactly) {
  const auto seed = testing::case_seed(3);
  LINV_TRACE_SEED(seed);
  const Device gpu = Device::cuda(0);
  const Matrix<double> a = random_uniform<double>(3000, 1500, seed);
  const ConstMatrixView<double> part = a.view().block(1, 2, 2990, 1400);
  Matrix<double> on_gpu = Matrix<double>::uninitialized(2990, 1400, gpu);
  copy<double>(part, on_gpu.view());
  Matrix<double> back(3000, 1500);
  copy<double>(on_gpu.view(), back.view().block(1, 2, 2990, 1400));
  for (index j = 0; j < 1500; ++j)
    for (index i = 0; i < 3000; ++i) {
      const bool inside = i >= 1 && i < 2991 && j >= 2 && j < 1402;
      ASSERT_EQ(back(i, j), inside ? a(i, j) : 0.0) << i << ", " << j;
    }
}

// random_uniform's counter-based generator gives the same matrix on the GPU as on the CPU, bit for bit.
TEST_F(Cuda, RandomUniformIsTheSameOnEveryDevice) {
  const auto seed = testing::case_seed(2);
  LINV_TRACE_SEED(seed);
  const Matrix<double> host = random_uniform<double>(37, 41, seed, -2.0, 3.0);
  const Matrix<double> gpu = random_uniform<double>(37, 41, seed, -2.0, 3.0, Device::cuda(0)).to(Device::cpu());
  for (index k = 0; k < host.size(); ++k) ASSERT_EQ(gpu.data()[k], host.data()[k]);
}

TEST_F(Cuda, OutOfMemorySaysHowMuch) {
  const GpuInfo info = cuda_devices().gpus.at(0);
  const index n = static_cast<index>(info.total_memory / sizeof(double) / 1000 * 2);  // twice the card
  try {
    Matrix<double> too_big(1000, n, Device::cuda(0));
    FAIL() << "allocated more than the GPU has";
  } catch (const OutOfDeviceMemory& e) {
    EXPECT_GT(e.needed(), info.total_memory);
    EXPECT_NE(std::string(e.what()).find("MiB"), std::string::npos);
  }
}

}  // namespace
}  // namespace linv
