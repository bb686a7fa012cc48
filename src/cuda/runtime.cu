// The runtime family on CUDA (src/kernels/runtime.hpp): device discovery and memory, for Matrix and Device
// in linv_core and for the backend's own buffers. nvcc cannot evaluate fmt's compile-time format strings,
// so messages here are built with std::string.
#include <cuda_runtime.h>
#include <cstdlib>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/backend.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

void check(cudaError_t status, const char* what, int device) {
  if (status != cudaSuccess)
    throw DeviceError("cuda:" + std::to_string(device) + ": " + what + " failed: " + cudaGetErrorString(status));
}

void select(int device) { check(cudaSetDevice(device), "cudaSetDevice", device); }

// cudaMemcpy and cudaMemset run on the legacy stream and may return before the data has landed (device to
// device copies and memsets always may; pageable host to device copies once staged). linv's own streams
// are non-blocking and would not wait for them: each of these finishes before returning.
void finish_legacy(const char* what, int device) { check(cudaStreamSynchronize(cudaStreamLegacy), what, device); }

class Runtime final : public kernels::Runtime {
 public:
  int device_count(std::string& why) const override;
  GpuInfo device_info(int index) const override;
  std::string version() const override {
    return std::to_string(CUDART_VERSION / 1000) + "." + std::to_string((CUDART_VERSION % 1000) / 10);
  }
  void* allocate(std::size_t bytes, int device) const override;
  void free(void* p, int device) const noexcept override;
  void copy(void* dst, const void* src, std::size_t bytes, int device) const override;
  void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
               std::size_t height, int device) const override;
  void fill_zero(void* p, std::size_t bytes, int device) const override;
  void synchronize(int device) const override;
};

int Runtime::device_count(std::string& why) const {
  int n = 0;
  cudaError_t status = cudaGetDeviceCount(&n);
  if (status != cudaSuccess) {
    why = status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice
              ? std::string("no NVIDIA GPU or driver on this machine (CUDA: ") + cudaGetErrorString(status) + ")"
              : std::string(cudaGetErrorString(status));
    (void)cudaGetLastError();  // clear the sticky error so later calls report their own
    return 0;
  }
  if (n == 0) why = "the CUDA driver reports no GPU";
  return n;
}

GpuInfo Runtime::device_info(int index) const {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties", index);
  GpuInfo info;
  info.index = index;
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  select(index);
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo", index);
  info.free_memory = free_bytes;
  info.total_memory = total_bytes;
  return info;
}

// LINV_POISON_DEVICE_MEMORY=1 fills every new device allocation with NaN bytes (0xFF), so a routine that
// reads memory nothing wrote shows it in its result. The GPU tests run with it on. Reused pool memory
// is poisoned again.
bool poison_allocations() {
  static const bool poison = std::getenv("LINV_POISON_DEVICE_MEMORY") != nullptr;
  return poison;
}

// Device memory comes from each GPU's default stream-ordered pool, which keeps freed memory for reuse
// (as PyTorch's caching allocator does): a one-shot call on large matrices otherwise spends milliseconds
// in cudaMalloc and cudaFree. Allocation and release are ordered on the legacy stream and finished before
// returning, so linv's own streams see the memory ready; linv frees a buffer only after the work using it
// has completed (every call returns complete). When the pool cannot grow, its cached memory is handed
// back to the driver and the allocation tried once more.
void keep_freed_memory(int device) {
  static std::mutex mutex;
  static std::vector<bool> done;
  const std::lock_guard<std::mutex> lock(mutex);
  if (static_cast<std::size_t>(device) >= done.size()) done.resize(static_cast<std::size_t>(device) + 1, false);
  if (done[static_cast<std::size_t>(device)]) return;
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool", device);
  std::uint64_t keep = UINT64_MAX;
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute", device);
  done[static_cast<std::size_t>(device)] = true;
}

// Bytes every device allocation carries past its end and never uses. cuBLASMp 0.7's geadd with a
// transposed operand (through cublasLtMatrixTransform) reads up to 31 elements past the end of a partial
// last tile: compute-sanitizer's memcheck on two H200s saw reads 1 to 248 bytes past a process's
// 53,760-byte local array in the distributed symmetry check (docs/gpu-performance-notes.md). The values
// are discarded, but an array that ends where the pool's mapped memory ends would fault.
constexpr std::size_t kOverreadSlack = 4096;

void* Runtime::allocate(std::size_t bytes, int device) const {
  select(device);
  keep_freed_memory(device);
  void* p = nullptr;
  cudaError_t status = cudaMallocAsync(&p, bytes + kOverreadSlack, cudaStreamLegacy);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    cudaMemPool_t pool = nullptr;
    check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool", device);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device);
    check(cudaMemPoolTrimTo(pool, 0), "cudaMemPoolTrimTo", device);
    status = cudaMallocAsync(&p, bytes + kOverreadSlack, cudaStreamLegacy);
  }
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t free_bytes = 0, total_bytes = 0;
    (void)cudaMemGetInfo(&free_bytes, &total_bytes);
    throw OutOfDeviceMemory("cuda:" + std::to_string(device), bytes, free_bytes);
  }
  check(status, "cudaMallocAsync", device);
  // LINV_POISON_DEVICE_MEMORY: NaN bytes, so that reading what nothing wrote shows in the result
  if (poison_allocations()) check(cudaMemsetAsync(p, 0xFF, bytes, cudaStreamLegacy), "cudaMemset", device);
  finish_legacy("cudaMallocAsync", device);
  return p;
}

void Runtime::free(void* p, int device) const noexcept {
  if (p == nullptr) return;
  (void)cudaSetDevice(device);
  (void)cudaFreeAsync(p, cudaStreamLegacy);
}

void Runtime::copy(void* dst, const void* src, std::size_t bytes, int device) const {
  select(device);
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy", device);
  finish_legacy("cudaMemcpy", device);
}

void Runtime::copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                      std::size_t height, int device) const {
  select(device);
  check(cudaMemcpy2D(dst, dst_pitch, src, src_pitch, width, height, cudaMemcpyDefault), "cudaMemcpy2D", device);
  finish_legacy("cudaMemcpy2D", device);
}

void Runtime::fill_zero(void* p, std::size_t bytes, int device) const {
  select(device);
  check(cudaMemset(p, 0, bytes), "cudaMemset", device);
  finish_legacy("cudaMemset", device);
}

void Runtime::synchronize(int device) const {
  select(device);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device);
}

}  // namespace

const kernels::Runtime& runtime() {
  static const Runtime r;
  return r;
}

}  // namespace linv::cuda
