// The CUDA backend: every kernel family on NVIDIA GPUs (cuBLAS, cuSOLVER, cuSPARSE, cuFFT and linv's own
// kernels). Plain C++ declarations, so the registry includes them without nvcc. src/dispatch/registry.cpp
// and runtime.cpp hand it out; the families are defined one per file, and the registry makes one
// kernels::Backend of them.
#pragma once

#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/runtime.hpp"

namespace linv::cuda {

const kernels::Runtime& runtime();  // runtime.cu, in linv_core

template <Real T>
const kernels::Dense<T>& dense();  // dense.cpp, with gauss_jordan.cpp:
// In-place inverse by blocked Gauss-Jordan with partial pivoting and look-ahead, panels `block` wide (0:
// the default for the order, or LINV_GJ_BLOCK). Returns 0, or the 1-based index of the first exactly
// zero pivot (the contents of A are then unspecified).
template <Real T>
index gauss_jordan_inverse(MatrixView<T> A, index block = 0);
const kernels::Mixed& mixed();  // mixed.cpp
template <Real T>
const kernels::Vectors<T>& vectors();  // vectors.cpp
template <Real T>
const kernels::Batched<T>& batched();  // batched.cu
template <Real T>
const kernels::Wls<T>& wls();  // wls.cpp
template <Real T>
const kernels::Slam<T>& slam();  // slam.cu
template <Real T>
const kernels::Fmri<T>& fmri();  // fmri.cpp, with the passes of adl.cpp and parafac2.cpp:
template <Real T>
std::unique_ptr<kernels::AdlSteps<T>> adl_steps(ConstMatrixView<T> X, Matrix<T> D0, ConstMatrixView<T> task,
                                                kernels::AdlConstraints constraints,
                                                   const kernels::GridSum* sum);
template <Real T>
std::unique_ptr<kernels::Parafac2Steps<T>> parafac2_steps(const std::vector<ConstMatrixView<T>>& slabs,
                                                          const linv::kernels::SlabShare& share);
const kernels::Imaging& imaging();  // imaging.cu

}  // namespace linv::cuda
