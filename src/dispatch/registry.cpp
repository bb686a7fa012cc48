// The one place that picks a backend's kernel families by the device the operands live on (see
// kernels/backend.hpp); src/dispatch/runtime.cpp does the same for memory. Only these two files know which
// backends this build has.
#include "kernels/backend.hpp"

#include <fmt/format.h>

#include "cpu/backend.hpp"
#include "dist/communicator.hpp"
#include "kernels/distributed.hpp"
#include "kernels/runtime.hpp"
#include "linv/errors.hpp"
#ifdef LINV_HAVE_CUDA
#include "cuda/backend.hpp"
#endif
#ifdef LINV_HAVE_SCALAPACK
#include "scalapack/scalapack.hpp"
#endif
#ifdef LINV_HAVE_CUSOLVERMP
#include "cusolvermp/cusolvermp.hpp"
#endif

namespace linv::kernels {

template <Real T>
const Backend<T>& backend(Device device) {
  switch (device.kind()) {
    case Device::Kind::cpu: {
      static const Backend<T> b{cpu::dense<T>(), cpu::vectors<T>(), cpu::batched<T>(), cpu::wls<T>(),
                                cpu::slam<T>(),  cpu::fmri<T>(),    cpu::mixed(),      cpu::imaging()};
      return b;
    }
    case Device::Kind::cuda: {
#ifdef LINV_HAVE_CUDA
      static const Backend<T> b{cuda::dense<T>(), cuda::vectors<T>(), cuda::batched<T>(), cuda::wls<T>(),
                                cuda::slam<T>(),  cuda::fmri<T>(),    cuda::mixed(),      cuda::imaging()};
      return b;
#else
      break;
#endif
    }
  }
  (void)runtime(device.kind());  // throws DeviceError saying the backend was not built
  throw DeviceError("no backend for " + device.name());
}
template const Backend<float>& backend<float>(Device);
template const Backend<double>& backend<double>(Device);

template <Complex T>
const ComplexBackend<T>& complex_backend(Device device) {
  switch (device.kind()) {
    case Device::Kind::cpu: {
      static const ComplexBackend<T> b{cpu::dense<T>(), cpu::vectors<T>(), cpu::batched<T>()};
      return b;
    }
    case Device::Kind::cuda: {
#ifdef LINV_HAVE_CUDA
      static const ComplexBackend<T> b{cuda::complex_dense<T>(), cuda::complex_vectors<T>(), cuda::complex_batched<T>()};
      return b;
#else
      break;
#endif
    }
  }
  (void)runtime(device.kind());  // throws DeviceError saying the backend was not built
  throw DeviceError("no backend for " + device.name());
}
template const ComplexBackend<std::complex<float>>& complex_backend<std::complex<float>>(Device);
template const ComplexBackend<std::complex<double>>& complex_backend<std::complex<double>>(Device);

// Grids whose tiles live in host memory: ScaLAPACK; on GPUs: cuSOLVERMp.
template <Real T>
const Distributed<T>& distributed(const dist::Grid& grid) {
  switch (grid.device().kind()) {
    case Device::Kind::cpu:
#ifdef LINV_HAVE_SCALAPACK
      return scalapack::distributed<T>();
#else
      throw DeviceError(
          "this linv was built without ScaLAPACK, so it cannot factor a distributed matrix: install it (Debian: "
          "libscalapack-openmpi-dev) and build again");
#endif
    case Device::Kind::cuda:
#ifdef LINV_HAVE_CUSOLVERMP
      return cusolvermp::distributed<T>();
#else
      throw DeviceError(
          "this linv was built without cuSOLVERMp, so it cannot factor a matrix distributed over GPUs: install it "
          "(pip install nvidia-cusolvermp-cu13 nvidia-cublasmp-cu13, or NVIDIA's HPC SDK) and build again");
#endif
  }
  throw DeviceError(fmt::format("no distributed engine for tiles on {} in this build", grid.device().name()));
}
template const Distributed<float>& distributed<float>(const dist::Grid&);
void start_job(const dist::Grid& grid) {
#ifdef LINV_HAVE_CUSOLVERMP
  if (grid.device().is_cuda()) cusolvermp::start_job(grid);
#else
  (void)grid;
#endif
}

std::unique_ptr<GridSum> grid_sum(const dist::Grid& grid) {
  switch (grid.device().kind()) {
    case Device::Kind::cpu: return dist::detail::host_sum(grid);
    case Device::Kind::cuda:
#ifdef LINV_HAVE_CUSOLVERMP
      return cusolvermp::grid_sum(grid);
#else
      throw DeviceError(
          "this linv was built without NCCL's headers, so it cannot sum over GPUs: install the distributed GPU "
          "engine (pip install nvidia-nccl-cu13 nvidia-cusolvermp-cu13 nvidia-cublasmp-cu13) and build again");
#endif
  }
  throw DeviceError(fmt::format("no way to sum over processes on {} in this build", grid.device().name()));
}

std::string distributed_engines() {
  std::string cpu = "none for CPUs (built without MPI and ScaLAPACK)", gpu = "none for GPUs (built without cuSOLVERMp)";
#ifdef LINV_HAVE_SCALAPACK
  cpu = fmt::format("ScaLAPACK {} over MPI for CPUs (mpirun -np N linv inv|solve ... --distributed)",
                    LINV_SCALAPACK_VERSION);
#endif
#ifdef LINV_HAVE_CUSOLVERMP
  gpu = fmt::format("{} over NCCL for GPUs (linv inv|solve ... --devices with one GPU a process, or under mpirun "
                    "with --distributed --device cuda)",
                    cusolvermp::version());
#endif
  return cpu + "; " + gpu;
}
template const Distributed<double>& distributed<double>(const dist::Grid&);

}  // namespace linv::kernels
