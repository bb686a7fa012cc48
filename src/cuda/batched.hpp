// Batched small-matrix kernels of the CUDA backend (src/cuda/batched.cu). Plain C++ declarations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "linv/matrix.hpp"

namespace linv::cuda {

// For count matrices A(k) of order n <= 64 on GPU `device`, each n * n elements after the previous one:
// X(k) := A(k)^-1 when B is null, else X(k) := A(k)^-1 B(k) for right-hand sides B(k) of n x nrhs (each
// n * nrhs elements after the previous one). When some matrix is singular, pivot gets one entry per
// matrix (0, or the 1-based column of its first exactly zero pivot, in which case X(k) is NaN); otherwise
// it is left empty. Returns a description of the kernel used, once the work is done.
template <Real T>
std::string batched_gauss_jordan(const T* A, const T* B, int nrhs, T* X, std::int64_t count, int n, int device,
                                 std::vector<index>& pivot);

}  // namespace linv::cuda
