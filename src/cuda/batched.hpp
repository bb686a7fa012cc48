// Batched small-matrix kernels of the CUDA backend (src/cuda/batched.cu). Plain C++ declarations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "linv/matrix.hpp"

namespace linv::cuda {

// X(k) := A(k)^-1 for count matrices of order n <= 64, each n * n elements after the previous one, on
// GPU `device`. When some matrix is singular, pivot gets one entry per matrix (0, or the 1-based column
// of its first exactly zero pivot, in which case X(k) is NaN); otherwise it is left empty. Returns a
// description of the kernel used, once the work is done.
template <Real T>
std::string batched_inverse(const T* A, T* X, std::int64_t count, int n, int device, std::vector<index>& pivot);

}  // namespace linv::cuda
