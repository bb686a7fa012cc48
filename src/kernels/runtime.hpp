// The runtime family: memory and device discovery for one kind of device (src/cpu/runtime.cpp for host
// memory, src/cuda/runtime.cu for CUDA GPUs). Matrix storage and Device go through it, so linv_core too
// knows no backend; src/dispatch/runtime.cpp, built into linv_core, is the one place that picks it.
#pragma once

#include <cstddef>
#include <string>

#include "linv/device.hpp"

namespace linv::kernels {

class Runtime {
 public:
  virtual ~Runtime() = default;
  // Number of usable devices of this kind; on 0, `why` says why (no driver, no device ...).
  virtual int device_count(std::string& why) const = 0;
  virtual GpuInfo device_info(int index) const = 0;
  virtual std::string version() const = 0;  // of the runtime the backend was built against
  // Throws OutOfDeviceMemory naming what was needed and what was free (host memory too: "the host").
  virtual void* allocate(std::size_t bytes, int device) const = 0;
  virtual void free(void* p, int device) const noexcept = 0;
  // Between this kind's memory on `device` and host memory, either way, or within it.
  virtual void copy(void* dst, const void* src, std::size_t bytes, int device) const = 0;
  // `height` rows of `width` bytes, `*_pitch` bytes apart.
  virtual void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                       std::size_t height, int device) const = 0;
  virtual void fill_zero(void* p, std::size_t bytes, int device) const = 0;
  // Waits for all work queued on `device` by anyone in this process (other libraries' streams too).
  virtual void synchronize(int device) const = 0;
};

// The runtime of a kind of device. Throws DeviceError when this linv was built without it.
const Runtime& runtime(Device::Kind kind);
// Whether this linv was built with that kind's backend.
bool built_with(Device::Kind kind);

}  // namespace linv::kernels
