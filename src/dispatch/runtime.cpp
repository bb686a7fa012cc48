// The one place that picks a runtime (memory and discovery) by the kind of device, built into linv_core;
// src/dispatch/registry.cpp does the same for the kernel families. Only these two files know which
// backends this build has.
#include "kernels/runtime.hpp"

#include "cpu/backend.hpp"
#include "linv/errors.hpp"
#ifdef LINV_HAVE_CUDA
#include "cuda/backend.hpp"
#endif

namespace linv::kernels {

bool built_with(Device::Kind kind) {
  switch (kind) {
    case Device::Kind::cpu: return true;
    case Device::Kind::cuda:
#ifdef LINV_HAVE_CUDA
      return true;
#else
      return false;
#endif
  }
  return false;
}

const Runtime& runtime(Device::Kind kind) {
  switch (kind) {
    case Device::Kind::cpu: return cpu::runtime();
    case Device::Kind::cuda:
#ifdef LINV_HAVE_CUDA
      return cuda::runtime();
#else
      break;
#endif
  }
  throw DeviceError("this linv was built without the CUDA backend (configure with nvcc on PATH, or -DLINV_CUDA=ON)");
}

}  // namespace linv::kernels
