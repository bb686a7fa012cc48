// Where data lives and work runs. A Device is a small value ("cpu", "cuda:0"); a CUDA device's stream,
// library handles and workspace pool are owned by the backend and looked up by index, so copying a
// Device is free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace linv {

class Device {
 public:
  enum class Kind { cpu, cuda };

  static Device cpu() noexcept { return Device(Kind::cpu, 0); }
  // The CUDA GPU with this index. Throws DeviceError when linv was built without CUDA, when no GPU is
  // visible, or when the index is out of range; the message says which.
  static Device cuda(int index = 0);
  // The first GPU when one is usable, otherwise the CPU.
  static Device best();
  // "cpu", "cuda", "cuda:N" or "auto" (= best()). Throws InvalidArgument on anything else.
  static Device parse(std::string_view text);

  Kind kind() const noexcept { return kind_; }
  int index() const noexcept { return index_; }
  bool is_cpu() const noexcept { return kind_ == Kind::cpu; }
  bool is_cuda() const noexcept { return kind_ == Kind::cuda; }
  std::string name() const;  // "cpu" or "cuda:N"

  friend bool operator==(const Device&, const Device&) = default;

 private:
  Device(Kind kind, int index) noexcept : kind_(kind), index_(index) {}
  Kind kind_;
  int index_;
};

struct GpuInfo {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  std::uint64_t total_memory = 0;
  std::uint64_t free_memory = 0;
};

// The GPUs this process can use. `why_none` is filled when the list is empty (built without CUDA, no
// driver, no device ...).
struct GpuList {
  std::vector<GpuInfo> gpus;
  std::string why_none;
};
GpuList cuda_devices();

// Waits until every piece of work queued on `device` in this process has finished, whoever queued it
// (nothing to wait for on the CPU). linv's own calls return when their results are complete; this is for
// data another library (PyTorch, CuPy) is still producing on a stream linv does not know.
void synchronize(Device device);

// The CPU threads linv's host work runs on, OpenBLAS's and linv's own. By default: OMP_NUM_THREADS when set,
// otherwise the CPUs this process may use (its CPU affinity, and in a container its cgroup's CPU quota, which
// the hardware count ignores); OpenBLAS is told too unless OPENBLAS_NUM_THREADS is set.
int cpu_threads();
// Sets them for everything that follows (OpenBLAS included); InvalidArgument unless threads >= 1.
void set_cpu_threads(int threads);

// What this build of linv contains.
struct BuildInfo {
  std::string version;
  std::string blas;           // e.g. "OpenBLAS 0.3.21 (pthread, 2 threads)"
  bool cuda = false;          // CUDA backend compiled in
  std::string cuda_runtime;   // CUDA runtime version the backend was built against
  bool matio = false;         // MATLAB .mat support
};
BuildInfo build_info();

}  // namespace linv
