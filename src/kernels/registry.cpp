// The one place that picks a backend's kernel families by the device the operands live on (see
// kernels/backend.hpp); src/kernels/runtime.cpp does the same for memory. Only these two files know which
// backends this build has.
#include "kernels/backend.hpp"

#include "cpu/backend.hpp"
#include "kernels/runtime.hpp"
#include "linv/errors.hpp"
#ifdef LINV_HAVE_CUDA
#include "cuda/backend.hpp"
#endif

namespace linv::kernels {

template <Real T>
const Backend<T>& backend(Device device) {
  switch (device.kind()) {
    case Device::Kind::cpu: return cpu::backend<T>();
    case Device::Kind::cuda:
#ifdef LINV_HAVE_CUDA
      return cuda::backend<T>();
#else
      break;
#endif
  }
  (void)runtime(device.kind());  // throws DeviceError saying the backend was not built
  throw DeviceError("no backend for " + device.name());
}
template const Backend<float>& backend<float>(Device);
template const Backend<double>& backend<double>(Device);

}  // namespace linv::kernels
