// The CUDA runtime inside the CUDA backend: device discovery and raw memory (linv_core reaches them through
// the runtime family, cuda::runtime() in backend.hpp). Plain C++ declarations, implemented in runtime.cu.
#pragma once

#include <cstddef>
#include <string>

#include "linv/device.hpp"

namespace linv::cuda {

// Number of usable GPUs; on 0, `why` says why (no driver, no device ...).
int device_count(std::string& why);
GpuInfo device_info(int index);
std::string runtime_version();

// Throw OutOfDeviceMemory / DeviceError with the CUDA error text.
void* allocate(std::size_t bytes, int device);
void free(void* p, int device) noexcept;
// Any direction between host and device memory.
void copy(void* dst, const void* src, std::size_t bytes, int device);
void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
             std::size_t height, int device);
void fill_zero(void* p, std::size_t bytes, int device);

}  // namespace linv::cuda
