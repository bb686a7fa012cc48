// Kernels over this process's tiles of a block-cyclic matrix on its GPU (the cuSOLVERMp engine's local
// steps: inspection, fills), each entry knowing its global place. Launched on `stream`; launch errors
// raise DeviceError.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace linv::cusolvermp::launch {

// This process's part of a rows x cols matrix in nb x nb tiles over nprow x npcol processes.
struct Tiles {
  std::int64_t local_rows = 0, local_cols = 0, ld = 1, nb = 1;
  std::int64_t rows = 0, cols = 0;  // the global shape
  int prow = 0, nprow = 1, pcol = 0, npcol = 1;
};

// A(i, j) := lo + (hi - lo) counter_uniform(seed, j * rows + i) (src/common/counter_random.hpp).
template <class T>
void fill_uniform(T* A, const Tiles& t, std::uint64_t seed, T lo, T hi, cudaStream_t stream);
// A(i, j) := 1 where j = perm[i], else 0: the permutation matrix P with (P B)(i, :) = B(perm[i], :); the
// identity when perm is nullptr. perm: device memory, `rows` entries.
template <class T>
void fill_permutation(T* A, const Tiles& t, const std::int64_t* perm, cudaStream_t stream);
// *out := max(*out, max |a_ij|) over the tiles, or over their entries with i <= j. *out starts >= 0.
template <class T>
void abs_max(const T* A, const Tiles& t, bool upper_only, double* out, cudaStream_t stream);
// *first := min(*first, j * rows + i) over the non-finite entries.
template <class T>
void first_nonfinite(const T* A, const Tiles& t, unsigned long long* first, cudaStream_t stream);
// sums[lj] := sum_i |a(i, lj)| over the local rows of each local column.
template <class T>
void column_abs_sums(const T* A, const Tiles& t, double* sums, cudaStream_t stream);
// diagonal[g] := a(g, g) for the diagonal entries in the tiles (the others left as they are).
template <class T>
void diagonal(const T* A, const Tiles& t, double* diagonal, cudaStream_t stream);
// *differ := 1 where A's local column block `a_col0` (width `width`) and P's local column block `p_col0`
// differ in any entry.
template <class T>
void compare_columns(const T* A, std::int64_t lda, std::int64_t a_col0, const T* P, std::int64_t ldp,
                     std::int64_t p_col0, std::int64_t local_rows, std::int64_t width, int* differ,
                     cudaStream_t stream);

}  // namespace linv::cusolvermp::launch
