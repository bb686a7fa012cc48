#include "linv/device.hpp"
#include "linv/version.hpp"

#include <fmt/format.h>

#include <charconv>

#include "kernels/runtime.hpp"
#include "linv/errors.hpp"

namespace linv {

std::string Device::name() const { return is_cpu() ? "cpu" : fmt::format("cuda:{}", index_); }

Device Device::cuda(int index) {
  std::string why;
  const int n = kernels::runtime(Kind::cuda).device_count(why);  // DeviceError when built without CUDA
  if (n == 0) throw DeviceError(fmt::format("no CUDA GPU is usable: {}", why));
  if (index < 0 || index >= n)
    throw DeviceError(fmt::format("cuda:{} does not exist: {} GPU{} visible (cuda:0..cuda:{})", index, n,
                                  n == 1 ? "" : "s", n - 1));
  return Device(Kind::cuda, index);
}

Device Device::best() {
  std::string why;
  if (kernels::built_with(Kind::cuda) && kernels::runtime(Kind::cuda).device_count(why) > 0)
    return Device(Kind::cuda, 0);
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
    if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty() && index >= 0) return cuda(index);
  }
  throw InvalidArgument(fmt::format("unknown device '{}': expected cpu, cuda, cuda:N or auto", text));
}

GpuList cuda_devices() {
  GpuList list;
  if (!kernels::built_with(Device::Kind::cuda)) {
    list.why_none = "built without the CUDA backend";
    return list;
  }
  const kernels::Runtime& cuda = kernels::runtime(Device::Kind::cuda);
  const int n = cuda.device_count(list.why_none);
  for (int i = 0; i < n; ++i) list.gpus.push_back(cuda.device_info(i));
  return list;
}

void synchronize(Device device) { kernels::runtime(device.kind()).synchronize(device.index()); }

BuildInfo build_info() {
  BuildInfo info;
  info.version = LINV_VERSION_STRING;
  info.blas = kernels::runtime(Device::Kind::cpu).version();
  info.cuda = kernels::built_with(Device::Kind::cuda);
  if (info.cuda) info.cuda_runtime = kernels::runtime(Device::Kind::cuda).version();
#ifdef LINV_HAVE_MATIO
  info.matio = true;
#endif
  return info;
}

}  // namespace linv
