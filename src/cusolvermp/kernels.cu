// Kernels over a process's block-cyclic tiles (src/cusolvermp/kernels.hpp).
#include "cusolvermp/kernels.hpp"

#include <cmath>

#include "common/counter_random.hpp"
#include "cuda/context.hpp"

namespace linv::cusolvermp::launch {
namespace {

constexpr int kThreads = 256;

__device__ inline std::int64_t global_row(const Tiles& t, std::int64_t i) {
  return (i / t.nb * t.nprow + t.prow) * t.nb + i % t.nb;
}
__device__ inline std::int64_t global_col(const Tiles& t, std::int64_t j) {
  return (j / t.nb * t.npcol + t.pcol) * t.nb + j % t.nb;
}

dim3 grid_for(const Tiles& t) {
  const std::int64_t gx = (t.local_rows + 31) / 32, gy = (t.local_cols + 7) / 8;
  return dim3(static_cast<unsigned>(gx < 1 ? 1 : (gx > 65535 ? 65535 : gx)),
              static_cast<unsigned>(gy < 1 ? 1 : (gy > 65535 ? 65535 : gy)));
}
const dim3 kBlock2(32, 8);

#define LINV_FOR_EACH_LOCAL(t)                                                                             \
  for (std::int64_t lj = blockIdx.y * blockDim.y + threadIdx.y; lj < (t).local_cols; lj += gridDim.y * blockDim.y) \
    for (std::int64_t li = blockIdx.x * blockDim.x + threadIdx.x; li < (t).local_rows; li += gridDim.x * blockDim.x)

template <class T>
__global__ void fill_uniform_kernel(T* A, Tiles t, std::uint64_t seed, double lo, double hi) {
  LINV_FOR_EACH_LOCAL(t) {
    const auto position = static_cast<std::uint64_t>(global_col(t, lj) * t.rows + global_row(t, li));
    A[li + lj * t.ld] = static_cast<T>(kernels::uniform_between(lo, hi, kernels::counter_uniform(seed, position)));
  }
}

template <class T>
__global__ void fill_permutation_kernel(T* A, Tiles t, const std::int64_t* perm) {
  LINV_FOR_EACH_LOCAL(t) {
    const std::int64_t gi = global_row(t, li), gj = global_col(t, lj);
    A[li + lj * t.ld] = (perm ? perm[gi] : gi) == gj ? T(1) : T(0);
  }
}

// A block's maximum, then one atomic per block (non-negative doubles order as their bit patterns).
template <class T>
__global__ void abs_max_kernel(const T* A, Tiles t, bool upper_only, double* out) {
  __shared__ double best[kThreads];
  double mine = 0;
  LINV_FOR_EACH_LOCAL(t) {
    if (upper_only && global_row(t, li) > global_col(t, lj)) continue;
    mine = fmax(mine, fabs(static_cast<double>(A[li + lj * t.ld])));
  }
  const int me = threadIdx.x + threadIdx.y * blockDim.x;
  best[me] = mine;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (me < half) best[me] = fmax(best[me], best[me + half]);
    __syncthreads();
  }
  if (me == 0)
    atomicMax(reinterpret_cast<unsigned long long*>(out), static_cast<unsigned long long>(__double_as_longlong(best[0])));
}

template <class T>
__global__ void first_nonfinite_kernel(const T* A, Tiles t, unsigned long long* first) {
  LINV_FOR_EACH_LOCAL(t) {
    if (isfinite(static_cast<double>(A[li + lj * t.ld]))) continue;
    atomicMin(first, static_cast<unsigned long long>(global_col(t, lj) * t.rows + global_row(t, li)));
  }
}

template <class T>
__global__ void column_abs_sums_kernel(const T* A, Tiles t, double* sums) {
  for (std::int64_t lj = blockIdx.x; lj < t.local_cols; lj += gridDim.x) {
    __shared__ double part[kThreads];
    double s = 0;
    for (std::int64_t li = threadIdx.x; li < t.local_rows; li += blockDim.x) s += fabs(static_cast<double>(A[li + lj * t.ld]));
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) sums[lj] = part[0];
    __syncthreads();
  }
}

template <class T>
__global__ void diagonal_kernel(const T* A, Tiles t, double* diagonal) {
  LINV_FOR_EACH_LOCAL(t) {
    const std::int64_t g = global_row(t, li);
    if (g == global_col(t, lj)) diagonal[g] = static_cast<double>(A[li + lj * t.ld]);
  }
}

template <class T>
__global__ void compare_columns_kernel(const T* A, std::int64_t lda, std::int64_t a_col0, const T* P, std::int64_t ldp,
                                       std::int64_t p_col0, std::int64_t rows, std::int64_t width, int* differ) {
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < width; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x)
      if (A[i + (a_col0 + j) * lda] != P[i + (p_col0 + j) * ldp]) *differ = 1;
}

bool empty(const Tiles& t) { return t.local_rows == 0 || t.local_cols == 0; }

}  // namespace

template <class T>
void fill_uniform(T* A, const Tiles& t, std::uint64_t seed, T lo, T hi, cudaStream_t stream) {
  if (empty(t)) return;
  fill_uniform_kernel<<<grid_for(t), kBlock2, 0, stream>>>(A, t, seed, static_cast<double>(lo),
                                                          static_cast<double>(hi));
  cuda::check_launch("fill_uniform (distributed)");
}

template <class T>
void fill_permutation(T* A, const Tiles& t, const std::int64_t* perm, cudaStream_t stream) {
  if (empty(t)) return;
  fill_permutation_kernel<<<grid_for(t), kBlock2, 0, stream>>>(A, t, perm);
  cuda::check_launch("fill_permutation");
}

template <class T>
void abs_max(const T* A, const Tiles& t, bool upper_only, double* out, cudaStream_t stream) {
  if (empty(t)) return;
  abs_max_kernel<<<grid_for(t), kBlock2, 0, stream>>>(A, t, upper_only, out);
  cuda::check_launch("abs_max");
}

template <class T>
void first_nonfinite(const T* A, const Tiles& t, unsigned long long* first, cudaStream_t stream) {
  if (empty(t)) return;
  first_nonfinite_kernel<<<grid_for(t), kBlock2, 0, stream>>>(A, t, first);
  cuda::check_launch("first_nonfinite");
}

template <class T>
void column_abs_sums(const T* A, const Tiles& t, double* sums, cudaStream_t stream) {
  if (empty(t)) return;
  const unsigned blocks = static_cast<unsigned>(t.local_cols < 65535 ? t.local_cols : 65535);
  column_abs_sums_kernel<<<blocks, kThreads, 0, stream>>>(A, t, sums);
  cuda::check_launch("column_abs_sums");
}

template <class T>
void diagonal(const T* A, const Tiles& t, double* diagonal, cudaStream_t stream) {
  if (empty(t)) return;
  diagonal_kernel<<<grid_for(t), kBlock2, 0, stream>>>(A, t, diagonal);
  cuda::check_launch("diagonal");
}

template <class T>
void compare_columns(const T* A, std::int64_t lda, std::int64_t a_col0, const T* P, std::int64_t ldp,
                     std::int64_t p_col0, std::int64_t local_rows, std::int64_t width, int* differ,
                     cudaStream_t stream) {
  if (local_rows == 0 || width == 0) return;
  Tiles shape;
  shape.local_rows = local_rows, shape.local_cols = width;
  compare_columns_kernel<<<grid_for(shape), kBlock2, 0, stream>>>(A, lda, a_col0, P, ldp, p_col0, local_rows, width,
                                                                 differ);
  cuda::check_launch("compare_columns");
}

#define LINV_INSTANTIATE(T)                                                                                     \
  template void fill_uniform<T>(T*, const Tiles&, std::uint64_t, T, T, cudaStream_t);                           \
  template void fill_permutation<T>(T*, const Tiles&, const std::int64_t*, cudaStream_t);                       \
  template void abs_max<T>(const T*, const Tiles&, bool, double*, cudaStream_t);                                \
  template void first_nonfinite<T>(const T*, const Tiles&, unsigned long long*, cudaStream_t);                  \
  template void column_abs_sums<T>(const T*, const Tiles&, double*, cudaStream_t);                              \
  template void diagonal<T>(const T*, const Tiles&, double*, cudaStream_t);                                     \
  template void compare_columns<T>(const T*, std::int64_t, std::int64_t, const T*, std::int64_t, std::int64_t,  \
                                   std::int64_t, std::int64_t, int*, cudaStream_t);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
#undef LINV_INSTANTIATE

}  // namespace linv::cusolvermp::launch
