// A CUDA device as linv uses it: two streams (the second runs look-ahead work beside the main one),
// cuBLAS and cuSOLVER handles bound to each (and cuSPARSE on the main one), and scratch memory that grows
// and is reused across calls, so no operation calls cudaMalloc in a hot loop. None of that may be used by
// two threads at once, so each thread that uses a GPU holds a Context of its own for it: leased from a pool
// on the thread's first call there and handed back when the thread ends, for the next thread to reuse
// (many short-lived threads make no more contexts than ran at once). Included only by the CUDA backend's
// files.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/backend.hpp"
#include "linv/device.hpp"

namespace linv::cuda {

// Throw DeviceError naming `what` and the library's status (OutOfDeviceMemory for allocation failures).
void check(cudaError_t status, const char* what);
void check(cublasStatus_t status, const char* what);
void check(cusolverStatus_t status, const char* what);
void check(cusparseStatus_t status, const char* what);
// After a kernel launch: a launch error (bad configuration, no kernel image for this GPU) as DeviceError.
void check_launch(const char* kernel);

// Lets `kernel` use `bytes` of dynamic shared memory (past the default 48 KB) on the current GPU. The
// setting belongs to one GPU, so it is made once per GPU, recorded in `done` (a bit per GPU, owned by the
// kernel's caller); two threads making it at once is harmless.
void allow_shared_memory(const void* kernel, int bytes, std::atomic<std::uint64_t>& done);

// Scratch buffers: each slot is one reusable allocation, so buffers used at the same time take
// different slots.
enum class Slot : int {
  solver,       // cuSOLVER device workspace (main stream)
  side_solver,  // cuSOLVER device workspace (side stream)
  a, b, c, d,   // algorithm buffers (row blocks, copies, double-precision residuals ...)
  pivots,       // pivot indices
  small,        // a few values for reductions and flags
  few_rhs,      // the few-right-hand-side solves: a work block and their counters
  count
};

struct Lane {  // a stream and the library handles bound to it
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
};

// Per-phase GPU timing for the closing question "where does the time go": with LINV_PROFILE set,
// phases bracketed by begin()/end() on a stream are timed with CUDA events and, when report() runs
// (after the work has finished), their totals go to stderr. Without it every call is a no-op.
class PhaseProfile {
 public:
  explicit PhaseProfile(const char* what);
  ~PhaseProfile();
  PhaseProfile(const PhaseProfile&) = delete;
  PhaseProfile& operator=(const PhaseProfile&) = delete;
  void begin(const char* phase, cudaStream_t stream);
  void end(const char* phase, cudaStream_t stream);
  // Waits for each phase's end and prints the totals; a phase that was begun but never ended (an early
  // return on a fallback path) is left out.
  void report();

 private:
  struct Interval {
    const char* phase;
    cudaEvent_t start, stop;
    bool ended;
  };
  const char* what_;
  bool enabled_;
  std::vector<Interval> intervals_;
};

class Context {
 public:
  // The calling thread's context of GPU `device`: leased on its first use there (an idle one, or a new
  // one), held until the thread ends. Contexts live until the process ends.
  static Context& get(int device);

  int device() const noexcept { return device_; }
  const Lane& main() const noexcept { return main_; }
  const Lane& side() const noexcept { return side_; }
  cusolverDnParams_t params() const noexcept { return params_; }
  // cuSPARSE on the main stream, made on first use (few calls need it).
  cusparseHandle_t sparse();

  // Device scratch of at least `bytes` in `slot`; valid until the next call for the same slot.
  void* scratch(Slot slot, std::size_t bytes);
  template <class T>
  T* scratch_as(Slot slot, std::size_t count) {
    return static_cast<T*>(scratch(slot, count * sizeof(T)));
  }
  // Host scratch for cuSOLVER's host workspaces.
  void* host_scratch(std::size_t bytes);
  // A few device ints for cuSOLVER's info outputs (index < 64).
  int* info(int index = 0) noexcept { return infos_ + index; }

  // Makes this GPU current for the calling thread.
  void activate() const;
  // Waits for both streams; turns an asynchronous failure into DeviceError.
  void synchronize() const;

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

 private:
  explicit Context(int device);
  int device_;
  Lane main_, side_;
  cusolverDnParams_t params_ = nullptr;
  cusparseHandle_t sparse_ = nullptr;
  void* buffers_[static_cast<int>(Slot::count)] = {};
  std::size_t sizes_[static_cast<int>(Slot::count)] = {};
  void* host_ = nullptr;
  std::size_t host_size_ = 0;
  int* infos_ = nullptr;
};

// Device memory for the duration of a call (from the stream-ordered pool: no cudaMalloc in a loop).
struct DeviceBuffer {
  DeviceBuffer(std::size_t bytes, int gpu) : p(runtime().allocate(bytes > 0 ? bytes : 1, gpu)), device(gpu) {}
  ~DeviceBuffer() { runtime().free(p, device); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class V>
  V* as() const noexcept {
    return static_cast<V*>(p);
  }
  void* p;
  int device;
};

// Page-locked host memory, so that copies into it from the device run asynchronously on a stream (and a
// host thread can wait for just them, with an event).
struct PinnedBuffer {
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  template <class V>
  V* as() const noexcept {
    return static_cast<V*>(p);
  }
  void* p = nullptr;
  std::size_t bytes = 0;
};

// The context of the GPU `d`, made current for the calling thread.
inline Context& context_of(Device d) {
  Context& ctx = Context::get(d.index());
  ctx.activate();
  return ctx;
}

// A leading dimension the libraries accept for an empty matrix too.
inline std::int64_t ld_of(std::int64_t ld) { return ld > 1 ? ld : 1; }

// Bytes of `count` elements of `size` bytes.
inline std::size_t bytes_of(std::int64_t count, std::size_t size) { return static_cast<std::size_t>(count) * size; }

// Copies queued on `stream` (asynchronous when the host side is pinned), and waiting for the stream.
inline void to_host(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpy");
}
inline void to_device(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpy");
}
inline void wait(cudaStream_t stream) { check(cudaStreamSynchronize(stream), "stream synchronization"); }

// One value copied back from the device after the work queued on `stream`.
template <class V>
V read_back(const V* device_value, cudaStream_t stream) {
  V v{};
  check(cudaMemcpyAsync(&v, device_value, sizeof(V), cudaMemcpyDeviceToHost, stream), "cudaMemcpy");
  check(cudaStreamSynchronize(stream), "stream synchronization");
  return v;
}

}  // namespace linv::cuda
