// Opening cuSOLVERMp, cuBLASMp and NCCL at run time (src/cusolvermp/library.hpp).
#include "cusolvermp/library.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "linv/errors.hpp"

namespace linv::cusolvermp {
namespace {

// Where the Python environments keep NVIDIA's wheels, for a program started outside them.
std::vector<std::string> wheel_directories() {
  std::vector<std::string> dirs;
  if (std::FILE* p = ::popen("python3 -c \"import site; print('\\n'.join(site.getsitepackages() + "
                             "[site.getusersitepackages()]))\" 2>/dev/null",
                             "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, p) != nullptr) {
      std::string dir(line);
      while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
      for (const char* sub : {"/nvidia/nccl/lib", "/nvidia/cu13/lib", "/nvidia/cublasmp/cu13/lib", "/nvidia/cublas/lib",
                              "/nvidia/cusolver/lib", "/nvidia/cuda_runtime/lib"})
        dirs.push_back(dir + sub);
    }
    ::pclose(p);
  }
  return dirs;
}

// Opens `soname` globally (so the next library's dependencies resolve to it): by name, else in the
// build's directories (LINV_MP_LIBRARY_DIRS), else in the wheels.
void* open(const char* soname, std::string& tried) {
  if (void* h = ::dlopen(soname, RTLD_NOW | RTLD_GLOBAL)) return h;
  tried += fmt::format("\n  {}: {}", soname, ::dlerror());
  std::vector<std::string> dirs;
  for (std::string list = LINV_MP_LIBRARY_DIRS; !list.empty();) {
    const std::size_t colon = list.find(':');
    dirs.push_back(list.substr(0, colon));
    list = colon == std::string::npos ? "" : list.substr(colon + 1);
  }
  for (std::string& d : wheel_directories()) dirs.push_back(std::move(d));
  for (const std::string& dir : dirs) {
    const std::string path = dir + "/" + soname;
    if (void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) return h;
    tried += fmt::format("\n  {}: {}", path, ::dlerror());
  }
  return nullptr;
}

}  // namespace

// The function `name` from the first of `handles` that has it.
void* find(void* const* handles, std::size_t count, const char* name) {
  for (std::size_t h = 0; h < count; ++h)
    if (void* f = ::dlsym(handles[h], name)) return f;
  throw DeviceError(fmt::format("the distributed GPU engine's libraries lack {}: too old a version", name));
}

const Nccl& nccl() {
  static std::mutex mutex;
  static Nccl lib;
  static bool loaded = false;
  const std::lock_guard<std::mutex> lock(mutex);
  if (loaded) return lib;
  std::string tried;
  void* const handle = open("libnccl.so.2", tried);
  if (handle == nullptr)
    throw DeviceError("summing over the GPUs of a job needs NCCL, which could not be opened (pip install "
                      "nvidia-nccl-cu13, or set LD_LIBRARY_PATH); tried:" +
                      tried);
#define LINV_MP_LOAD(name) lib.name = reinterpret_cast<decltype(lib.name)>(find(&handle, 1, #name));
  LINV_NCCL_FUNCTIONS(LINV_MP_LOAD)
#undef LINV_MP_LOAD
  loaded = true;
  return lib;
}

const Library& library() {
  (void)nccl();  // cuSOLVERMp and cuBLASMp resolve their NCCL symbols to it
  static std::mutex mutex;
  static Library lib;
  static bool loaded = false;
  const std::lock_guard<std::mutex> lock(mutex);
  if (loaded) return lib;
  std::string tried;
  // Dependencies first: cuSOLVERMp needs cuBLASMp (and CUDA's cuBLAS and cuSOLVER, which its own run path
  // or the system finds).
  void* const handles[2] = {open("libcublasmp.so.0", tried), open("libcusolverMp.so.0", tried)};
  for (void* h : handles)
    if (h == nullptr)
      throw DeviceError("the distributed GPU engine could not open its libraries (pip install nvidia-cusolvermp-cu13 "
                        "nvidia-cublasmp-cu13 nvidia-nccl-cu13, or set LD_LIBRARY_PATH); tried:" +
                        tried);
#define LINV_MP_LOAD(name) lib.name = reinterpret_cast<decltype(lib.name)>(find(handles, 2, #name));
  LINV_MP_FUNCTIONS(LINV_MP_LOAD)
#undef LINV_MP_LOAD
  loaded = true;
  return lib;
}

}  // namespace linv::cusolvermp
