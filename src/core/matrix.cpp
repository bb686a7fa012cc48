#include "linv/matrix.hpp"

#include <fmt/format.h>

#include "kernels/runtime.hpp"
#include "linv/errors.hpp"

namespace linv {

std::string shape_string(index rows, index cols) { return fmt::format("{}x{}", rows, cols); }

void require_host(Device device, const char* what) {
  if (!device.is_cpu())
    throw InvalidArgument(fmt::format("{} needs a matrix in host memory, got one on {}; copy it with .to(Device::cpu())",
                                      what, device.name()));
}

template <Real T>
void copy(ConstMatrixView<T> src, MatrixView<T> dst) {
  if (src.rows() != dst.rows() || src.cols() != dst.cols())
    throw ShapeMismatch("copy: source and destination", src.rows(), src.cols(), dst.rows(), dst.cols());
  if (src.empty()) return;
  detail::copy_2d(dst.data(), static_cast<std::size_t>(dst.ld()) * sizeof(T), dst.device(), src.data(),
                  static_cast<std::size_t>(src.ld()) * sizeof(T), src.device(),
                  static_cast<std::size_t>(src.rows()) * sizeof(T), static_cast<std::size_t>(src.cols()));
}
template void copy<float>(ConstMatrixView<float>, MatrixView<float>);
template void copy<double>(ConstMatrixView<double>, MatrixView<double>);

namespace detail {

namespace {
// The device whose runtime moves bytes between `dst` and `src`: the host's when both live there, otherwise
// the one that is not the host (copies between two GPUs go through the host).
Device mover(Device dst, Device src) {
  if (!dst.is_cpu() && !src.is_cpu() && dst != src)
    throw InvalidArgument(fmt::format("copies between {} and {} go through the host", src.name(), dst.name()));
  return dst.is_cpu() ? src : dst;
}
}  // namespace

void* allocate_bytes(std::size_t bytes, Device device) {
  return kernels::runtime(device.kind()).allocate(bytes, device.index());
}

void free_bytes(void* p, Device device) noexcept {
  // Memory exists only on devices whose runtime was built, so the look-up cannot fail here.
  if (p != nullptr && kernels::built_with(device.kind())) kernels::runtime(device.kind()).free(p, device.index());
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) {
  const Device d = mover(dst_device, src_device);
  kernels::runtime(d.kind()).copy(dst, src, bytes, d.index());
}

void copy_2d(void* dst, std::size_t dst_pitch, Device dst_device, const void* src, std::size_t src_pitch,
             Device src_device, std::size_t width, std::size_t height) {
  const Device d = mover(dst_device, src_device);
  kernels::runtime(d.kind()).copy_2d(dst, dst_pitch, src, src_pitch, width, height, d.index());
}

void fill_zero_bytes(void* p, Device device, std::size_t bytes) {
  kernels::runtime(device.kind()).fill_zero(p, bytes, device.index());
}

}  // namespace detail
}  // namespace linv
