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

LINV_KERNEL_FAMILY_ACCESSORS;  // one per family file: dense.cpp, mixed.cpp, vectors.cpp, batched.cu, ...

// The complex families, as the registry's ComplexBackend holds them: the dense core and the vector steps it
// uses (complex_dense.cpp), and stacks (complex_batched.cpp).
template <Complex T>
const kernels::Dense<T>& complex_dense();
template <Complex T>
const kernels::Vectors<T>& complex_vectors();
template <Complex T>
const kernels::Batched<T>& complex_batched();

// In-place inverse by blocked Gauss-Jordan with partial pivoting and look-ahead, panels `block` wide (0:
// the default for the order, or LINV_GJ_BLOCK). Returns 0, or the 1-based index of the first exactly
// zero pivot (the contents of A are then unspecified). gauss_jordan.cpp.
template <Real T>
index gauss_jordan_inverse(MatrixView<T> A, index block = 0);

}  // namespace linv::cuda
