#include "linv/matrix.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "linv/errors.hpp"
#ifdef LINV_HAVE_CUDA
#include "cuda/runtime.hpp"
#endif

namespace linv {

std::string shape_string(index rows, index cols) { return fmt::format("{}x{}", rows, cols); }

void require_host(Device device, const char* what) {
  if (!device.is_cpu())
    throw InvalidArgument(fmt::format("{} needs a matrix in host memory, got one on {}; copy it with .to(Device::cpu())",
                                      what, device.name()));
}

namespace detail {

namespace {
constexpr std::size_t kHostAlignment = 64;  // a cache line: what BLAS kernels like

#ifndef LINV_HAVE_CUDA
[[noreturn]] void no_cuda() { throw DeviceError("this linv was built without the CUDA backend"); }
#endif
}  // namespace

void* allocate_bytes(std::size_t bytes, Device device) {
  if (device.is_cpu()) {
    const std::size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    void* p = std::aligned_alloc(kHostAlignment, rounded);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
#ifdef LINV_HAVE_CUDA
  return cuda::allocate(bytes, device.index());
#else
  no_cuda();
#endif
}

void free_bytes(void* p, Device device) noexcept {
  if (device.is_cpu()) {
    std::free(p);
    return;
  }
#ifdef LINV_HAVE_CUDA
  cuda::free(p, device.index());
#endif
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) {
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return;
  }
#ifdef LINV_HAVE_CUDA
  if (dst_device.is_cuda() && src_device.is_cuda() && dst_device != src_device)
    throw InvalidArgument(fmt::format("copies between {} and {} go through the host", src_device.name(), dst_device.name()));
  cuda::copy(dst, src, bytes, dst_device.is_cuda() ? dst_device.index() : src_device.index());
#else
  no_cuda();
#endif
}

void copy_2d(void* dst, std::size_t dst_pitch, Device dst_device, const void* src, std::size_t src_pitch,
             Device src_device, std::size_t width, std::size_t height) {
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    for (std::size_t r = 0; r < height; ++r)
      std::memcpy(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch, width);
    return;
  }
#ifdef LINV_HAVE_CUDA
  if (dst_device.is_cuda() && src_device.is_cuda() && dst_device != src_device)
    throw InvalidArgument(fmt::format("copies between {} and {} go through the host", src_device.name(), dst_device.name()));
  cuda::copy_2d(dst, dst_pitch, src, src_pitch, width, height, dst_device.is_cuda() ? dst_device.index() : src_device.index());
#else
  no_cuda();
#endif
}

void fill_zero_bytes(void* p, Device device, std::size_t bytes) {
  if (device.is_cpu()) {
    std::memset(p, 0, bytes);
    return;
  }
#ifdef LINV_HAVE_CUDA
  cuda::fill_zero(p, bytes, device.index());
#else
  no_cuda();
#endif
}

}  // namespace detail
}  // namespace linv
