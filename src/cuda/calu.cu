// Kernels of LU with tournament pivoting (CALU; the driver is Dense::lu_factor in src/cuda/dense.cpp, the
// host reference src/cpu/calu.cpp, which these follow game for game: same shape, same arithmetic).
#include "cuda/context.hpp"
#include "cuda/kernels.hpp"
#include "kernels/dense.hpp"

namespace linv::cuda::launch {
namespace {

using Shape = linv::kernels::Tournament;
constexpr int kPanel = Shape::kPanel;
constexpr int kTile = Shape::kTile;
constexpr int kWarps = kTile / 32;
constexpr unsigned kFull = 0xFFFFFFFFu;

// One game per block, one candidate row per thread held in registers (kPanel entries): partial pivoting
// on the block's rows, one column at a time, with the pivot found by a block-wide argmax (ties to the
// lower entry) and passed to the other rows through shared memory.
template <class T>
__global__ void __launch_bounds__(kTile) tournament_kernel(const T* P, std::int64_t ld, int w, const int* entries,
                                                           int count, int* out, std::int64_t* pivots,
                                                           std::int64_t row0) {
  // double-buffered by column parity, so that each column needs two barriers: one after the warps'
  // candidates are posted (every thread then finds the winner itself), one after the pivot row is
  __shared__ T pivot_row[2][kPanel];
  __shared__ T warp_key[2][kWarps];
  __shared__ int warp_entry[2][kWarps];
  __shared__ int picks[kPanel];
  const int t = threadIdx.x, e = blockIdx.x * kTile + t;
  const int row = e < count ? (entries ? entries[e] : e) : -1;
  bool alive = row >= 0;
  T v[kPanel];
#pragma unroll
  for (int c = 0; c < kPanel; ++c) v[c] = (alive && c < w) ? P[row + c * ld] : T(0);

#pragma unroll
  for (int c = 0; c < kPanel; ++c) {
    if (c < w) {  // the same for every thread
      const int b = c & 1;
      T key = alive ? fabs(v[c]) : T(-1);
      int who = t;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        const T k2 = __shfl_down_sync(kFull, key, off);
        const int w2 = __shfl_down_sync(kFull, who, off);
        if (k2 > key || (k2 == key && w2 < who)) key = k2, who = w2;
      }
      if ((t & 31) == 0) warp_key[b][t >> 5] = key, warp_entry[b][t >> 5] = who;
      __syncthreads();
      key = warp_key[b][0];
      who = warp_entry[b][0];
#pragma unroll
      for (int k = 1; k < kWarps; ++k) {
        const T k2 = warp_key[b][k];
        const int w2 = warp_entry[b][k];
        if (k2 > key || (k2 == key && w2 < who)) key = k2, who = w2;
      }
      const int winner = key >= T(0) ? who : -1;
      if (t == winner) {
#pragma unroll
        for (int k = 0; k < kPanel; ++k) pivot_row[b][k] = v[k];
        picks[c] = row;
        alive = false;
      } else if (winner < 0 && t == 0) {
        picks[c] = -1;
      }
      __syncthreads();
      if (alive) {
        const T p = pivot_row[b][c];
        const T l = p != T(0) ? v[c] / p : T(0);
#pragma unroll
        for (int k = c + 1; k < kPanel; ++k) v[k] = fma(-l, pivot_row[b][k], v[k]);
      }
    }
  }
  __syncthreads();
  if (t < kPanel) out[blockIdx.x * kPanel + t] = t < w ? picks[t] : -1;
  if (pivots != nullptr && t == 0) {
    // the final game: its picks, in order, as LAPACK's interchanges row0 + i <-> pivots[i]
    for (int i = 0; i < w; ++i) {
      const int s = picks[i];
      pivots[i] = row0 + s;
      for (int l = i + 1; l < w; ++l)
        if (picks[l] == i) picks[l] = s;  // the row that sat at i is now at s
    }
  }
}

// The w x w block on top of a panel whose pivot rows are in place: L \ U without pivoting, one row per
// thread; a zero pivot records its 1-based column col0 + c + 1 in *zero_pivot (smallest wins).
template <class T>
__global__ void lu_no_pivoting_kernel(T* A, std::int64_t ld, int w, std::int64_t col0, int* zero_pivot) {
  __shared__ T pivot_row[kPanel];
  const int r = threadIdx.x;
  T v[kPanel];
#pragma unroll
  for (int q = 0; q < kPanel; ++q) v[q] = (r < w && q < w) ? A[r + q * ld] : T(0);
#pragma unroll
  for (int c = 0; c < kPanel; ++c) {
    if (c < w) {
      if (r == c) {
#pragma unroll
        for (int q = 0; q < kPanel; ++q) pivot_row[q] = v[q];
        if (v[c] == T(0)) atomicMin(zero_pivot, static_cast<int>(col0 + c + 1));
      }
      __syncthreads();
      if (r > c && r < w) {
        const T l = v[c] / pivot_row[c];
        v[c] = l;
#pragma unroll
        for (int q = c + 1; q < kPanel; ++q) v[q] = fma(-l, pivot_row[q], v[q]);
      }
      __syncthreads();
    }
  }
  if (r < w)
#pragma unroll
    for (int q = 0; q < kPanel; ++q)
      if (q < w) A[r + q * ld] = v[q];
}

// *result := max(*result, max |a(i, j)|) over A or its upper triangle, by atomicMax on the bit patterns
// (non-negative doubles order like them).
template <class T>
__global__ void max_abs_kernel(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, bool upper,
                               double* result) {
  __shared__ double partial[kTile / 32];
  double m = 0;
  for (std::int64_t j = blockIdx.y; j < cols; j += gridDim.y) {
    const std::int64_t end = upper ? (j + 1 < rows ? j + 1 : rows) : rows;
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < end; i += gridDim.x * blockDim.x)
      m = fmax(m, fabs(static_cast<double>(A[i + j * ld])));
  }
  for (int off = 16; off > 0; off >>= 1) m = fmax(m, __shfl_down_sync(kFull, m, off));
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int k = 1; k < kTile / 32; ++k) m = fmax(m, partial[k]);
    atomicMax(reinterpret_cast<unsigned long long*>(result), static_cast<unsigned long long>(__double_as_longlong(m)));
  }
}

}  // namespace

template <class T>
void tournament_round(const T* P, std::int64_t ld, int w, const int* entries, int count, int* out,
                      std::int64_t* pivots, std::int64_t row0, cudaStream_t stream) {
  const int games = (count + kTile - 1) / kTile;
  tournament_kernel<T><<<games, kTile, 0, stream>>>(P, ld, w, entries, count, out, games == 1 ? pivots : nullptr, row0);
  check_launch("tournament_round");
}

template <class T>
void lu_no_pivoting(T* A, std::int64_t ld, int w, std::int64_t col0, int* zero_pivot, cudaStream_t stream) {
  lu_no_pivoting_kernel<T><<<1, kPanel, 0, stream>>>(A, ld, w, col0, zero_pivot);
  check_launch("lu_no_pivoting");
}

template <class T>
void max_abs(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, bool upper, double* result,
             cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const std::int64_t gx = (rows + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(gx < 8 ? gx : 8), static_cast<unsigned>(cols < 4096 ? cols : 4096));
  max_abs_kernel<T><<<grid, kTile, 0, stream>>>(A, rows, cols, ld, upper, result);
  check_launch("max_abs");
}

#define LINV_INSTANTIATE(T)                                                                                      \
  template void tournament_round<T>(const T*, std::int64_t, int, const int*, int, int*, std::int64_t*, std::int64_t, \
                                    cudaStream_t);                                                               \
  template void lu_no_pivoting<T>(T*, std::int64_t, int, std::int64_t, int*, cudaStream_t);                     \
  template void max_abs<T>(const T*, std::int64_t, std::int64_t, std::int64_t, bool, double*, cudaStream_t);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
#undef LINV_INSTANTIATE

}  // namespace linv::cuda::launch
