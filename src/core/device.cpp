#include "linv/device.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <charconv>

#include "linv/errors.hpp"
#ifdef LINV_HAVE_CUDA
#include "cuda/runtime.hpp"
#endif

namespace linv {

std::string Device::name() const { return is_cpu() ? "cpu" : fmt::format("cuda:{}", index_); }

Device Device::cuda(int index) {
#ifdef LINV_HAVE_CUDA
  std::string why;
  const int n = cuda::device_count(why);
  if (n == 0) throw DeviceError(fmt::format("no CUDA GPU is usable: {}", why));
  if (index < 0 || index >= n)
    throw DeviceError(fmt::format("cuda:{} does not exist: {} GPU{} visible (cuda:0..cuda:{})", index, n,
                                  n == 1 ? "" : "s", n - 1));
  return Device(Kind::cuda, index);
#else
  (void)index;
  throw DeviceError("this linv was built without the CUDA backend (configure with nvcc on PATH, or -DLINV_CUDA=ON)");
#endif
}

Device Device::best() {
#ifdef LINV_HAVE_CUDA
  std::string why;
  if (cuda::device_count(why) > 0) return Device(Kind::cuda, 0);
#endif
  return cpu();
}

Device Device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text == "auto") return best();
  if (text == "cuda") return cuda(0);
  if (text.starts_with("cuda:")) {
    std::string_view digits = text.substr(5);
    int index = -1;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty()) return cuda(index);
  }
  throw InvalidArgument(fmt::format("unknown device '{}': expected cpu, cuda, cuda:N or auto", text));
}

GpuList cuda_devices() {
  GpuList list;
#ifdef LINV_HAVE_CUDA
  const int n = cuda::device_count(list.why_none);
  for (int i = 0; i < n; ++i) list.gpus.push_back(cuda::device_info(i));
#else
  list.why_none = "built without the CUDA backend";
#endif
  return list;
}

BuildInfo build_info() {
  BuildInfo info;
  info.version = LINV_VERSION;
  const char* config = openblas_get_config();
  info.blas = fmt::format("{} ({} threads)", config ? config : "OpenBLAS", openblas_get_num_threads());
#ifdef LINV_HAVE_CUDA
  info.cuda = true;
  info.cuda_runtime = cuda::runtime_version();
#endif
#ifdef LINV_HAVE_MATIO
  info.matio = true;
#endif
  return info;
}

}  // namespace linv
