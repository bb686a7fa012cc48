// Host memory as the runtime family (src/kernels/runtime.hpp) sees it; built into linv_core.
#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "cpu/backend.hpp"

namespace linv::cpu {
namespace {

constexpr std::size_t kAlignment = 64;  // a cache line: what BLAS kernels like

class Runtime final : public kernels::Runtime {
 public:
  int device_count(std::string&) const override { return 1; }
  GpuInfo device_info(int) const override { return {}; }
  std::string version() const override {  // the BLAS in use, e.g. "OpenBLAS 0.3.21 ... (2 threads)"
    const char* config = openblas_get_config();
    return std::string(config ? config : "OpenBLAS") + " (" + std::to_string(openblas_get_num_threads()) + " threads)";
  }
  void* allocate(std::size_t bytes, int) const override {
    void* p = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void free(void* p, int) const noexcept override { std::free(p); }
  void copy(void* dst, const void* src, std::size_t bytes, int) const override { std::memcpy(dst, src, bytes); }
  void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
               std::size_t height, int) const override {
    for (std::size_t r = 0; r < height; ++r)
      std::memcpy(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch, width);
  }
  void fill_zero(void* p, std::size_t bytes, int) const override { std::memset(p, 0, bytes); }
  void synchronize(int) const override {}  // host work is done when its call returns
};

}  // namespace

const kernels::Runtime& runtime() {
  static const Runtime r;
  return r;
}

}  // namespace linv::cpu
