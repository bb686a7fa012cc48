// Host memory as the runtime family (src/kernels/runtime.hpp) sees it; built into linv_core.
#include <cblas.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cpu/backend.hpp"
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
