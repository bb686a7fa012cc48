// The runtime family on CUDA (src/kernels/runtime.hpp): device discovery and memory, for Matrix and Device
// in linv_core and for the backend's own buffers. nvcc cannot evaluate fmt's compile-time format strings,
// so messages here are built with std::string.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <memory>
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
  // The free memory needs a context on the GPU, which a GPU that other processes have filled cannot give
  // (cudaSetDevice fails with out of memory): the GPU is still listed, with no memory free, so that listing
  // the GPUs (and importing the Python package, which does) never fails on a busy machine.
  std::size_t free_bytes = 0, total_bytes = prop.totalGlobalMem;
  if (cudaSetDevice(index) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: the next call reports its own
    free_bytes = 0;
    total_bytes = prop.totalGlobalMem;
  }
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

// Large copies between pageable host memory and a GPU go through two pinned buffers: the host copies one
// chunk into (or out of) one buffer while the GPU's copy engine moves the other. cudaMemcpy from pageable
// memory ran at 1.8 GB/s on the two-H200 machine (3.5 GB of PARAFAC2 subjects in 1.9 s,
// docs/gpu-performance-notes.md); from pinned memory the copy engine runs at the bus's rate, and the
// host's memcpy into pinned memory is the bound. Copies below kStagedCopyMin, and any copy when pinned
// memory cannot be had, stay plain cudaMemcpy.
constexpr std::size_t kStagedCopyMin = std::size_t{16} << 20;
constexpr std::size_t kStageBytes = std::size_t{32} << 20;

struct Staging {
  std::mutex mutex;  // one staged copy at a time per GPU
  bool usable = false;
  void* buffer[2] = {nullptr, nullptr};
  cudaEvent_t done[2] = {nullptr, nullptr};
  cudaStream_t stream = nullptr;
};

// The GPU's staging buffers, made on first use (and never freed: they live as long as the process).
Staging* staging(int device) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<Staging>> all;
  const std::lock_guard<std::mutex> lock(mutex);
  if (static_cast<std::size_t>(device) >= all.size()) all.resize(static_cast<std::size_t>(device) + 1);
  std::unique_ptr<Staging>& s = all[static_cast<std::size_t>(device)];
  if (!s) {
    s = std::make_unique<Staging>();
    s->usable = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking) == cudaSuccess;
    for (int k = 0; k < 2 && s->usable; ++k)
      s->usable = cudaHostAlloc(&s->buffer[k], kStageBytes, cudaHostAllocPortable) == cudaSuccess &&
                  cudaEventCreateWithFlags(&s->done[k], cudaEventDisableTiming) == cudaSuccess;
    if (!s->usable) (void)cudaGetLastError();  // plain copies then
  }
  return s->usable ? s.get() : nullptr;
}

enum class Place { pageable, device, other };
Place place_of(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return Place::other;
  }
  if (a.type == cudaMemoryTypeUnregistered) return Place::pageable;
  return a.type == cudaMemoryTypeDevice ? Place::device : Place::other;
}

// Which way a copy of `bytes` goes through the staging buffers, if it does: between pageable host memory
// and a GPU, and large enough to gain.
enum class Staged { no, upload, download };
Staged staged_direction(void* dst, const void* src, std::size_t bytes) {
  if (bytes < kStagedCopyMin) return Staged::no;
  const Place from = place_of(src), to = place_of(dst);
  if (from == Place::pageable && to == Place::device) return Staged::upload;
  return from == Place::device && to == Place::pageable ? Staged::download : Staged::no;
}

void staged_upload(char* dst, const char* src, std::size_t bytes, Staging& s, int device) {
  for (std::size_t offset = 0, i = 0; offset < bytes; offset += kStageBytes, ++i) {
    const std::size_t chunk = std::min(kStageBytes, bytes - offset), k = i % 2;
    check(cudaEventSynchronize(s.done[k]), "cudaEventSynchronize", device);  // the buffer's last copy is done
    std::memcpy(s.buffer[k], src + offset, chunk);
    check(cudaMemcpyAsync(dst + offset, s.buffer[k], chunk, cudaMemcpyHostToDevice, s.stream), "cudaMemcpyAsync",
          device);
    check(cudaEventRecord(s.done[k], s.stream), "cudaEventRecord", device);
  }
  check(cudaStreamSynchronize(s.stream), "cudaMemcpy", device);
}

void staged_download(char* dst, const char* src, std::size_t bytes, Staging& s, int device) {
  // chunk i lands in buffer i % 2 while the host copies chunk i - 1 out of the other
  const auto unpack = [&](std::size_t k, std::size_t offset, std::size_t chunk) {
    check(cudaEventSynchronize(s.done[k]), "cudaEventSynchronize", device);
    std::memcpy(dst + offset, s.buffer[k], chunk);
  };
  std::size_t previous = 0, previous_chunk = 0, previous_k = 0;
  for (std::size_t offset = 0, i = 0; offset < bytes; offset += kStageBytes, ++i) {
    const std::size_t chunk = std::min(kStageBytes, bytes - offset), k = i % 2;
    check(cudaMemcpyAsync(s.buffer[k], src + offset, chunk, cudaMemcpyDeviceToHost, s.stream), "cudaMemcpyAsync",
          device);
    check(cudaEventRecord(s.done[k], s.stream), "cudaEventRecord", device);
    if (i > 0) unpack(previous_k, previous, previous_chunk);
    previous = offset, previous_chunk = chunk, previous_k = k;
  }
  unpack(previous_k, previous, previous_chunk);
}

void Runtime::copy(void* dst, const void* src, std::size_t bytes, int device) const {
  select(device);
  if (const Staged way = staged_direction(dst, src, bytes); way != Staged::no)
    if (Staging* s = staging(device)) {
      const std::lock_guard<std::mutex> lock(s->mutex);
      if (way == Staged::upload)
        staged_upload(static_cast<char*>(dst), static_cast<const char*>(src), bytes, *s, device);
      else
        staged_download(static_cast<char*>(dst), static_cast<const char*>(src), bytes, *s, device);
      return;
    }
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy", device);
  finish_legacy("cudaMemcpy", device);
}

// The same for `height` columns of `width` bytes, `pitch` bytes apart: whole columns a chunk, packed in the
// pinned buffers, the host copying one column at a time.
void staged_upload_2d(char* dst, std::size_t dst_pitch, const char* src, std::size_t src_pitch, std::size_t width,
                      std::size_t height, Staging& s, int device) {
  const std::size_t per = kStageBytes / width;
  for (std::size_t first = 0, i = 0; first < height; first += per, ++i) {
    const std::size_t columns = std::min(per, height - first), k = i % 2;
    check(cudaEventSynchronize(s.done[k]), "cudaEventSynchronize", device);
    char* packed = static_cast<char*>(s.buffer[k]);
    for (std::size_t c = 0; c < columns; ++c) std::memcpy(packed + c * width, src + (first + c) * src_pitch, width);
    check(cudaMemcpy2DAsync(dst + first * dst_pitch, dst_pitch, packed, width, width, columns, cudaMemcpyHostToDevice,
                            s.stream),
          "cudaMemcpy2DAsync", device);
    check(cudaEventRecord(s.done[k], s.stream), "cudaEventRecord", device);
  }
  check(cudaStreamSynchronize(s.stream), "cudaMemcpy2D", device);
}

void staged_download_2d(char* dst, std::size_t dst_pitch, const char* src, std::size_t src_pitch, std::size_t width,
                        std::size_t height, Staging& s, int device) {
  const std::size_t per = kStageBytes / width;
  const auto unpack = [&](std::size_t k, std::size_t first, std::size_t columns) {
    check(cudaEventSynchronize(s.done[k]), "cudaEventSynchronize", device);
    const char* packed = static_cast<const char*>(s.buffer[k]);
    for (std::size_t c = 0; c < columns; ++c) std::memcpy(dst + (first + c) * dst_pitch, packed + c * width, width);
  };
  std::size_t previous = 0, previous_columns = 0, previous_k = 0;
  for (std::size_t first = 0, i = 0; first < height; first += per, ++i) {
    const std::size_t columns = std::min(per, height - first), k = i % 2;
    check(cudaMemcpy2DAsync(s.buffer[k], width, src + first * src_pitch, src_pitch, width, columns,
                            cudaMemcpyDeviceToHost, s.stream),
          "cudaMemcpy2DAsync", device);
    check(cudaEventRecord(s.done[k], s.stream), "cudaEventRecord", device);
    if (i > 0) unpack(previous_k, previous, previous_columns);
    previous = first, previous_columns = columns, previous_k = k;
  }
  unpack(previous_k, previous, previous_columns);
}

void Runtime::copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                      std::size_t height, int device) const {
  if (height == 1 || (dst_pitch == width && src_pitch == width)) return copy(dst, src, width * height, device);
  select(device);
  const Staged way = width <= kStageBytes ? staged_direction(dst, src, width * height) : Staged::no;
  if (way != Staged::no)
    if (Staging* s = staging(device)) {
      const std::lock_guard<std::mutex> lock(s->mutex);
      if (way == Staged::upload)
        staged_upload_2d(static_cast<char*>(dst), dst_pitch, static_cast<const char*>(src), src_pitch, width, height,
                         *s, device);
      else
        staged_download_2d(static_cast<char*>(dst), dst_pitch, static_cast<const char*>(src), src_pitch, width, height,
                           *s, device);
      return;
    }
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
