#include "cuda/context.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>

#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "invalid value";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case CUBLAS_STATUS_MAPPING_ERROR: return "mapping error";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "execution failed";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "internal error";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "not supported";
    default: return "unknown status";
  }
}

const char* cusolver_status_name(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "not initialized";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "allocation failed";
    case CUSOLVER_STATUS_INVALID_VALUE: return "invalid value";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "execution failed";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "internal error";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "not supported";
    default: return "unknown status";
  }
}

constexpr int kMaxGpus = 64;

// Contexts are never destroyed: tearing down handles during static destruction races the CUDA runtime's
// own teardown, and the process is ending anyway. Those no thread holds wait here for the next thread.
struct IdleContexts {
  std::mutex mutex;
  std::vector<Context*> of[kMaxGpus];  // per GPU
  std::size_t made[kMaxGpus] = {};     // per GPU, so that `of` can reserve room for all of them
};
IdleContexts& idle_contexts() {
  static IdleContexts* idle = new IdleContexts;  // never destroyed, so threads ending at exit can still use it
  return *idle;
}

// The contexts one thread holds, one per GPU it has used, handed back when the thread ends (with no CUDA
// call: the main thread ends during exit, alongside the CUDA runtime's teardown).
struct Leases {
  Context* held[kMaxGpus] = {};
  ~Leases() {
    IdleContexts& idle = idle_contexts();
    const std::lock_guard<std::mutex> lock(idle.mutex);
    for (int d = 0; d < kMaxGpus; ++d)
      if (held[d] != nullptr) idle.of[d].push_back(held[d]);  // within the capacity reserved: cannot throw
  }
};

}  // namespace

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();
  throw DeviceError(std::string("CUDA: ") + what + " failed: " + cudaGetErrorString(status));
}

void check(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw DeviceError(std::string("cuBLAS: ") + what + ": out of device memory");
  throw DeviceError(std::string("cuBLAS: ") + what + " failed: " + cublas_status_name(status));
}

void check(cusolverStatus_t status, const char* what) {
  if (status == CUSOLVER_STATUS_SUCCESS) return;
  if (status == CUSOLVER_STATUS_ALLOC_FAILED)
    throw DeviceError(std::string("cuSOLVER: ") + what + ": out of device memory");
  throw DeviceError(std::string("cuSOLVER: ") + what + " failed: " + cusolver_status_name(status));
}

void check(cusparseStatus_t status, const char* what) {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  if (status == CUSPARSE_STATUS_ALLOC_FAILED)
    throw DeviceError(std::string("cuSPARSE: ") + what + ": out of device memory");
  throw DeviceError(std::string("cuSPARSE: ") + what + " failed: " + cusparseGetErrorString(status));
}

void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

PhaseProfile::PhaseProfile(const char* what) : what_(what), enabled_(std::getenv("LINV_PROFILE") != nullptr) {}

PhaseProfile::~PhaseProfile() {
  for (const Interval& i : intervals_) {
    (void)cudaEventDestroy(i.start);
    (void)cudaEventDestroy(i.stop);
  }
}

void PhaseProfile::begin(const char* phase, cudaStream_t stream) {
  if (!enabled_) return;
  Interval i{phase, nullptr, nullptr, false};
  check(cudaEventCreate(&i.start), "cudaEventCreate");
  check(cudaEventCreate(&i.stop), "cudaEventCreate");
  check(cudaEventRecord(i.start, stream), "cudaEventRecord");
  intervals_.push_back(i);
}

void PhaseProfile::end(const char* phase, cudaStream_t stream) {
  if (!enabled_) return;
  for (auto it = intervals_.rbegin(); it != intervals_.rend(); ++it)
    if (std::string(it->phase) == phase) {
      check(cudaEventRecord(it->stop, stream), "cudaEventRecord");
      it->ended = true;
      return;
    }
}

void PhaseProfile::report() {
  if (!enabled_) return;
  std::vector<std::pair<std::string, double>> totals;
  for (const Interval& i : intervals_) {
    if (!i.ended) continue;
    // a caller that synchronised before end() recorded the stop has not waited for it: "device not ready"
    check(cudaEventSynchronize(i.stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, i.start, i.stop), "cudaEventElapsedTime");
    auto it = std::find_if(totals.begin(), totals.end(), [&](const auto& t) { return t.first == i.phase; });
    if (it == totals.end())
      totals.emplace_back(i.phase, ms);
    else
      it->second += ms;
  }
  std::string line = std::string("linv profile: ") + what_;
  for (const auto& [phase, ms] : totals) line += "  " + phase + " " + std::to_string(ms / 1e3) + " s";
  std::fprintf(stderr, "%s\n", line.c_str());
}

void allow_shared_memory(const void* kernel, int bytes, std::atomic<std::uint64_t>& done) {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const std::uint64_t bit = device < 64 ? std::uint64_t{1} << device : 0;  // beyond 64 GPUs: every time
  if ((done.load() & bit) != 0) return;
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), "cudaFuncSetAttribute");
  done.fetch_or(bit);
}

PinnedBuffer::PinnedBuffer(std::size_t size) : bytes(size) {
  check(cudaMallocHost(&p, size > 0 ? size : 1), "cudaMallocHost");
}
PinnedBuffer::~PinnedBuffer() { (void)cudaFreeHost(p); }

Context& Context::get(int device) {
  if (device < 0 || device >= kMaxGpus) throw DeviceError("cuda:" + std::to_string(device) + " is out of range");
  thread_local Leases leases;
  Context*& held = leases.held[device];
  if (held != nullptr) return *held;
  IdleContexts& idle = idle_contexts();
  std::unique_lock<std::mutex> lock(idle.mutex);
  std::vector<Context*>& waiting = idle.of[device];
  if (!waiting.empty()) {
    held = waiting.back();
    waiting.pop_back();
    lock.unlock();
    // Its last thread may have ended with work still queued (the vector family's steps return before the
    // GPU is done), and this thread's calls are not ordered after that thread's host code.
    held->synchronize();
    return *held;
  }
  // Room for every context of this GPU in the idle list, so handing one back never allocates.
  waiting.reserve(++idle.made[device]);
  lock.unlock();
  held = new Context(device);  // outside the lock: making streams and handles takes milliseconds
  return *held;
}

Context::Context(int device) : device_(device) {
  activate();
  // The side stream runs look-ahead panels, short kernels on the critical path: at the highest priority
  // they take SMs as soon as the main stream's long matrix products free any.
  int lowest = 0, highest = 0;
  check(cudaDeviceGetStreamPriorityRange(&lowest, &highest), "cudaDeviceGetStreamPriorityRange");
  for (Lane* lane : {&main_, &side_}) {
    check(cudaStreamCreateWithPriority(&lane->stream, cudaStreamNonBlocking, lane == &side_ ? highest : lowest),
          "cudaStreamCreate");
    check(cublasCreate(&lane->blas), "cublasCreate");
    check(cublasSetStream(lane->blas, lane->stream), "cublasSetStream");
    // Real FP32/FP64 arithmetic: no silent TF32 downgrade of float32 products.
    check(cublasSetMathMode(lane->blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    check(cusolverDnCreate(&lane->solver), "cusolverDnCreate");
    check(cusolverDnSetStream(lane->solver, lane->stream), "cusolverDnSetStream");
  }
  check(cusolverDnCreateParams(&params_), "cusolverDnCreateParams");
  infos_ = static_cast<int*>(runtime().allocate(64 * sizeof(int), device_));
}

cusparseHandle_t Context::sparse() {
  if (sparse_ == nullptr) {
    check(cusparseCreate(&sparse_), "cusparseCreate");
    check(cusparseSetStream(sparse_, main_.stream), "cusparseSetStream");
  }
  return sparse_;
}

void Context::activate() const { check(cudaSetDevice(device_), "cudaSetDevice"); }

void* Context::scratch(Slot slot, std::size_t bytes) {
  const int s = static_cast<int>(slot);
  if (bytes <= sizes_[s] && buffers_[s] != nullptr) return buffers_[s];
  // The old buffer may still be read by queued work: wait before freeing it.
  synchronize();
  runtime().free(buffers_[s], device_);
  buffers_[s] = nullptr;
  sizes_[s] = 0;
  const std::size_t rounded = (bytes + (std::size_t{1} << 20) - 1) & ~((std::size_t{1} << 20) - 1);
  buffers_[s] = runtime().allocate(rounded > 0 ? rounded : 256, device_);
  sizes_[s] = rounded;
  return buffers_[s];
}

void* Context::host_scratch(std::size_t bytes) {
  if (bytes <= host_size_ && host_ != nullptr) return host_;
  synchronize();
  std::free(host_);
  host_ = std::malloc(bytes > 0 ? bytes : 1);
  if (host_ == nullptr) throw std::bad_alloc();
  host_size_ = bytes;
  return host_;
}

void Context::synchronize() const {
  check(cudaStreamSynchronize(main_.stream), "stream synchronization");
  check(cudaStreamSynchronize(side_.stream), "stream synchronization");
}

}  // namespace linv::cuda
