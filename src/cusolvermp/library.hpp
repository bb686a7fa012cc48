// cuSOLVERMp, cuBLASMp and NCCL, opened at run time (dlopen) the first time a grid of GPUs needs them. linv
// links none of them: their libraries need the CUDA driver (libcuda.so.1), and linv must start on machines
// without one, where the CPU backend and ScaLAPACK still work. The headers give the functions' types; the
// libraries are looked for by their sonames (LD_LIBRARY_PATH, the system's cache), then in the directories
// where the build found them, then in the Python environments' NVIDIA wheels. The versions: cuSOLVERMp
// 0.8 and cuBLASMp 0.7, the newest whose libraries need no more than NCCL 2.28 (what PyTorch 2.11 ships;
// cuBLASMp 0.8 and later call NCCL 2.29's ncclCommQueryProperties).
#pragma once

#include <cublasmp.h>
#include <cusolverMp.h>
#include <nccl.h>

namespace linv::cusolvermp {

#define LINV_NCCL_FUNCTIONS(X) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclGetErrorString) X(ncclAllReduce) X(ncclGetVersion)

#define LINV_MP_FUNCTIONS(X)                                                                                       \
  X(cusolverMpCreate) X(cusolverMpCreateDeviceGrid)                                                                  \
  X(cusolverMpCreateMatrixDesc) X(cusolverMpDestroyMatrixDesc) X(cusolverMpGetrf_bufferSize) X(cusolverMpGetrf)     \
  X(cusolverMpPotrf_bufferSize) X(cusolverMpPotrf) X(cusolverMpGeqrf_bufferSize) X(cusolverMpGeqrf)                 \
  X(cusolverMpOrmqr_bufferSize) X(cusolverMpOrmqr) X(cublasMpCreate) X(cublasMpGridCreate)                          \
  X(cublasMpMatrixDescriptorCreate) X(cublasMpMatrixDescriptorDestroy) X(cublasMpGemm_bufferSize) X(cublasMpGemm)   \
  X(cublasMpTrsm_bufferSize) X(cublasMpTrsm) X(cublasMpGeadd_bufferSize) X(cublasMpGeadd)

#define LINV_MP_POINTER(name) decltype(&::name) name = nullptr;
struct Nccl {
  LINV_NCCL_FUNCTIONS(LINV_MP_POINTER)
};
struct Library {
  LINV_MP_FUNCTIONS(LINV_MP_POINTER)
};
#undef LINV_MP_POINTER

// The functions, loaded once; DeviceError saying which library could not be opened, and where it was
// looked for, otherwise. NCCL alone is what a job's sums need (kernels::grid_sum); the solvers need all
// three (library() opens NCCL first).
const Nccl& nccl();
const Library& library();

}  // namespace linv::cusolvermp
