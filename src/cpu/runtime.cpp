// Host memory as the runtime family (src/kernels/runtime.hpp) sees it; built into linv_core.
#include <cblas.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cpu/backend.hpp"
#include "linv/device.hpp"
#include "linv/errors.hpp"

namespace linv::cpu {
namespace {

constexpr std::size_t kAlignment = 64;  // a cache line: what BLAS kernels like

// The first number after `key` in a small text file of /proc, or -1. Plain read(2) into the stack: this
// runs when an allocation has just failed.
long long proc_number(const char* file, const char* key) {
  const int fd = ::open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[4096];
  const ssize_t got = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (got <= 0) return -1;
  text[got] = '\0';
  const char* at = std::strstr(text, key);
  return at == nullptr ? -1 : std::strtoll(at + std::strlen(key), nullptr, 10);
}

// What a new allocation may still take: the kernel's estimate of available memory, or less under an
// address-space limit (ulimit -v), where the process's present size counts against it.
std::uint64_t available_host_memory() {
  std::uint64_t available = UINT64_MAX;
  if (const long long kib = proc_number("/proc/meminfo", "MemAvailable:"); kib >= 0)
    available = static_cast<std::uint64_t>(kib) * 1024;
  rlimit limit{};
  const long long pages = proc_number("/proc/self/statm", "");
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && pages >= 0) {
    const std::uint64_t used = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    available = std::min<std::uint64_t>(available, limit.rlim_cur > used ? limit.rlim_cur - used : 0);
  }
  return available == UINT64_MAX ? 0 : available;
}

class Runtime final : public kernels::Runtime {
 public:
  int device_count(std::string&) const override { return 1; }
  GpuInfo device_info(int) const override { return {}; }
  std::string version() const override {  // the BLAS in use, e.g. "OpenBLAS 0.3.21 ... (2 threads)"
    const char* config = openblas_get_config();
    return std::string(config ? config : "OpenBLAS") + " (" + std::to_string(openblas_get_num_threads()) + " threads)";
  }
  void* allocate(std::size_t bytes, int) const override {
    void* p = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    if (p == nullptr) throw OutOfDeviceMemory("the host", bytes, available_host_memory());
    return p;
  }
  void free(void* p, int) const noexcept override { std::free(p); }
  void copy(void* dst, const void* src, std::size_t bytes, int) const override { std::memcpy(dst, src, bytes); }
  void copy_2d(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
               std::size_t height, int) const override {
    for (std::size_t r = 0; r < height; ++r)
      std::memcpy(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch, width);
  }
  void fill_zero(void* p, std::size_t bytes, int) const override { std::memset(p, 0, bytes); }
  void synchronize(int) const override {}  // host work is done when its call returns
};

}  // namespace

const kernels::Runtime& runtime() {
  static const Runtime r;
  return r;
}

}  // namespace linv::cpu

namespace linv {
namespace {

// A positive integer from the environment variable, or 0.
int environment_count(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return 0;
  const long n = std::strtol(text, nullptr, 10);  // "4", or "4,2" (nested levels: the first is ours)
  return n > 0 && n < (1 << 20) ? static_cast<int>(n) : 0;
}

// The CPUs this process may use: its affinity, capped by a cgroup CPU quota (v2 cpu.max "quota period",
// v1 cfs_quota_us / cfs_period_us), rounded up.
int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = ::sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
  if (cpus <= 0) cpus = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  long long quota = -1, period = -1;
  if (std::FILE* f = std::fopen("/sys/fs/cgroup/cpu.max", "r")) {
    char text[64] = {};
    if (std::fscanf(f, "%63s %lld", text, &period) == 2 && std::strcmp(text, "max") != 0)
      quota = std::strtoll(text, nullptr, 10);
    std::fclose(f);
  } else {
    quota = cpu::proc_number("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "");
    period = cpu::proc_number("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "");
  }
  if (quota > 0 && period > 0)
    cpus = std::min<int>(cpus, static_cast<int>(std::max(1LL, (quota + period - 1) / period)));
  return cpus;
}

std::atomic<int>& threads_now() {
  static std::atomic<int> threads = [] {
    const int from_environment = environment_count("OMP_NUM_THREADS");
    const int n = from_environment > 0 ? from_environment : usable_cpus();
    if (environment_count("OPENBLAS_NUM_THREADS") == 0 && environment_count("GOTO_NUM_THREADS") == 0)
      openblas_set_num_threads(n);
    return n;
  }();
  return threads;
}

// The default is settled when linv is loaded, before OpenBLAS starts a thread per core of the host.
[[maybe_unused]] const int kDefaultThreads = threads_now().load();

}  // namespace

int cpu_threads() { return threads_now().load(); }

void set_cpu_threads(int threads) {
  if (threads < 1)
    throw InvalidArgument("the number of CPU threads must be at least 1; got " + std::to_string(threads));
  threads_now().store(threads);
  openblas_set_num_threads(threads);
}

}  // namespace linv
