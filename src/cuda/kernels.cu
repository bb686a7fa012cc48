#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>

#include "common/counter_random.hpp"
#include "cuda/context.hpp"
#include "cuda/reduce.cuh"
#include "cuda/kernels.hpp"

namespace linv::cuda::launch {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t work, int threads = kThreads) {
  const std::int64_t b = (work + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535LL * 32 ? 65535LL * 32 : b));
}

// 2-D launch over a rows x cols matrix: x over rows (coalesced), y over columns.
struct Grid2 {
  dim3 grid, block;
  Grid2(std::int64_t rows, std::int64_t cols) : block(32, 8) {
    const std::int64_t gx = (rows + 31) / 32, gy = (cols + 7) / 8;
    grid = dim3(static_cast<unsigned>(gx < 1 ? 1 : gx), static_cast<unsigned>(gy < 1 ? 1 : (gy > 65535 ? 65535 : gy)));
  }
};

template <class T>
__global__ void fill_identity_kernel(T* A, std::int64_t n, std::int64_t ld, std::int64_t columns) {
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < columns; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
      A[i + j * ld] = i == j % n ? T(1) : T(0);
}

template <class T>
__global__ void set_diagonal_kernel(T* A, std::int64_t n, std::int64_t ld, T value) {
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) A[i + i * ld] = value;
}

template <class T>
__device__ __forceinline__ void butterfly_pair(T& x, T& y, T rx, T ry, bool mix_first) {
  const T half = static_cast<T>(0.70710678118654752440);
  if (mix_first) {
    const T s = x + y, d = x - y;
    x = rx * s * half;
    y = ry * d * half;
  } else {
    const T a = rx * x, c = ry * y;
    x = (a + c) * half;
    y = (a - c) * half;
  }
}

// One thread per entry; the bottom entry of each pair is its top's thread's work. Rows run fastest in the
// thread index either way, so a warp reads consecutive entries.
template <class T>
__global__ void butterfly_level_kernel(const T* r, int blocks, std::int64_t n, std::int64_t other, T* X,
                                       std::int64_t ld, bool left, bool mix_first) {
  const std::int64_t total = n * other;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t p = left ? idx % n : idx / other, e = left ? idx / n : idx % other;
    std::int64_t start = 0, end = n;
    for (int b = 0; b < blocks; ++b) {
      const std::int64_t s = b * n / blocks, t = (b + 1) * n / blocks;
      if (p >= s && p < t) start = s, end = t;
    }
    const std::int64_t m = end - start, h = m / 2;
    T* x = left ? X + p + e * ld : X + e + p * ld;
    if (p - start < h) {
      T* y = left ? x + h : x + h * ld;
      butterfly_pair(*x, *y, r[p], r[p + h], mix_first);
    } else if (m % 2 != 0 && p == end - 1) {
      *x *= r[p];
    }
  }
}

// One thread per quadruple: four loads, both levels in registers, four stores (half the memory traffic
// of a pass per level).
template <class T>
__global__ void butterfly_two_levels_kernel(const T* r, std::int64_t ld_r, std::int64_t n, std::int64_t other, T* X,
                                            std::int64_t ld, bool left, bool ascending) {
  const std::int64_t q = n / 4, total = q * other;
  const T* r0 = r;
  const T* r1 = r + ld_r;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = left ? idx % q : idx / other, e = left ? idx / q : idx % other;
    const std::int64_t step = left ? q : q * ld;
    T* x = left ? X + i + e * ld : X + e + i * ld;
    T v0 = x[0], v1 = x[step], v2 = x[2 * step], v3 = x[3 * step];
    const std::int64_t i1 = i + q, i2 = i + 2 * q, i3 = i + 3 * q;
    auto level0 = [&] {
      butterfly_pair(v0, v2, r0[i], r0[i2], ascending);
      butterfly_pair(v1, v3, r0[i1], r0[i3], ascending);
    };
    auto level1 = [&] {
      butterfly_pair(v0, v1, r1[i], r1[i1], ascending);
      butterfly_pair(v2, v3, r1[i2], r1[i3], ascending);
    };
    if (ascending) {
      level0();
      level1();
    } else {
      level1();
      level0();
    }
    x[0] = v0;
    x[step] = v1;
    x[2 * step] = v2;
    x[3 * step] = v3;
  }
}

template <class T>
__global__ void zero_triangle_kernel(T* A, std::int64_t n, std::int64_t ld, bool upper) {
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < n; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
      if (upper ? i < j : i > j) A[i + j * ld] = T(0);
}

template <class T>
__global__ void copy_triangle_kernel(const T* src, std::int64_t ld_src, T* dst, std::int64_t ld_dst, std::int64_t n,
                                     bool upper, bool with_diagonal) {
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < n; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
      if ((upper ? i < j : i > j) || (with_diagonal && i == j)) dst[i + j * ld_dst] = src[i + j * ld_src];
}

// 32x32 tiles through shared memory so both the read of the lower tile and the write of the upper one
// are coalesced.
template <class T>
__global__ void mirror_lower_kernel(T* A, std::int64_t n, std::int64_t ld) {
  __shared__ T tile[32][33];
  const std::int64_t bi = blockIdx.x, bj = blockIdx.y;  // destination tile (bi, bj) above the diagonal
  if (bi > bj) return;
  // source tile: rows bj*32.., columns bi*32.. (the mirror position, in the lower triangle)
  for (int r = threadIdx.y; r < 32; r += blockDim.y) {
    const std::int64_t col = bi * 32 + r, row = bj * 32 + threadIdx.x;
    if (row < n && col < n) tile[r][threadIdx.x] = A[row + col * ld];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < 32; r += blockDim.y) {
    const std::int64_t col = bj * 32 + r, row = bi * 32 + threadIdx.x;
    // destination (row, col) = mirror of source (col, row) = tile[row - bi*32][col - bj*32]
    if (row < n && col < n && row < col) A[row + col * ld] = tile[threadIdx.x][r];
  }
}

// dst(j, i) := src(i, j) over src's upper (src_upper) or lower triangle, diagonal included, in 32 x 32
// tiles through shared memory so that reads and writes are both coalesced.
template <class T>
__global__ void transpose_triangle_kernel(const T* src, std::int64_t ld_src, T* dst, std::int64_t ld_dst,
                                          std::int64_t n, bool src_upper) {
  __shared__ T tile[32][33];
  const std::int64_t bi = blockIdx.x, bj = blockIdx.y;  // source tile: rows bi*32.., columns bj*32..
  if (src_upper ? bi > bj : bi < bj) return;            // wholly outside the triangle
  for (int r = threadIdx.y; r < 32; r += blockDim.y) {
    const std::int64_t row = bi * 32 + threadIdx.x, col = bj * 32 + r;
    if (row < n && col < n) tile[r][threadIdx.x] = src[row + col * ld_src];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < 32; r += blockDim.y) {
    // destination (row, col) holds source (col, row) = tile[threadIdx.x][r]
    const std::int64_t row = bj * 32 + threadIdx.x, col = bi * 32 + r;
    const bool inside = src_upper ? col <= row : col >= row;
    if (row < n && col < n && inside) dst[row + col * ld_dst] = tile[threadIdx.x][r];
  }
}

// sources[c] = the column that ends in column c after the interchanges j <-> pivots[j], j = n-1 down to 0:
// one thread replays them on an index array, in shared memory up to kSharedColumns (a few hundred
// microseconds at n = 16384), in global memory beyond.
constexpr std::int64_t kSharedColumns = 24576;  // two int arrays in 192 KB

__global__ void column_sources_kernel(const std::int64_t* pivots, std::int64_t n, std::int64_t* sources) {
  extern __shared__ int shared_columns[];
  const bool in_shared = n <= kSharedColumns;
  int* cols = shared_columns;
  int* piv = shared_columns + (in_shared ? n : 0);
  if (in_shared) {
    for (std::int64_t c = threadIdx.x; c < n; c += blockDim.x) {
      cols[c] = static_cast<int>(c);
      piv[c] = static_cast<int>(pivots[c]);
    }
    __syncthreads();
    if (threadIdx.x == 0)
      for (std::int64_t j = n - 1; j >= 0; --j) {
        const int p = piv[j], t = cols[j];
        cols[j] = cols[p];
        cols[p] = t;
      }
    __syncthreads();
    for (std::int64_t c = threadIdx.x; c < n; c += blockDim.x) sources[c] = cols[c];
    return;
  }
  for (std::int64_t c = threadIdx.x; c < n; c += blockDim.x) sources[c] = c;
  __syncthreads();
  if (threadIdx.x == 0)
    for (std::int64_t j = n - 1; j >= 0; --j) {
      const std::int64_t p = pivots[j], t = sources[j];
      sources[j] = sources[p];
      sources[p] = t;
    }
}

// work(r, c) = A(r0 + r, sources[c]) for r < chunk rows.
template <class T>
__global__ void gather_columns_kernel(const T* A, std::int64_t ld, std::int64_t r0, std::int64_t chunk, std::int64_t n,
                                      const std::int64_t* sources, T* work) {
  for (std::int64_t c = blockIdx.y; c < n; c += gridDim.y) {
    const T* src = A + r0 + sources[c] * ld;
    for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < chunk;
         r += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
      work[r + c * chunk] = src[r];
  }
}

constexpr int kPlanMax = 2048;  // touched rows of one plan: two per interchange, 1024 interchanges
constexpr int kPlanSlots = 4096;  // open-addressing table, a power of two above kPlanMax

// One thread replays the interchanges on a table of (row -> the original row it now holds), in shared
// memory; only rows an interchange touches are in it. Then the block writes the table out.
__global__ void interchange_plan_kernel(const std::int64_t* pivots, std::int64_t j0, std::int64_t j1,
                                        std::int64_t* touched, std::int64_t* source, int* count) {
  // Rows as offsets from j0 (pivots[j] >= j >= j0), so the table fits in 32-bit entries.
  __shared__ int key[kPlanSlots], value[kPlanSlots];
  __shared__ short slots_used[kPlanMax];
  __shared__ int used;
  for (int t = threadIdx.x; t < kPlanSlots; t += blockDim.x) key[t] = -1;
  __syncthreads();
  if (threadIdx.x == 0) {
    used = 0;
    auto slot = [&](int row) {  // the table slot of `row`, inserted holding itself if new
      unsigned h = (static_cast<unsigned>(row) * 2654435761u) >> (32 - 12);  // kPlanSlots = 2^12
      while (key[h] != -1 && key[h] != row) h = (h + 1) & (kPlanSlots - 1);
      if (key[h] == -1) {
        key[h] = row;
        value[h] = row;
        slots_used[used++] = static_cast<short>(h);
      }
      return h;
    };
    for (std::int64_t j = j0; j < j1; ++j) {
      const std::int64_t p = pivots[j];
      if (p == j) continue;
      const unsigned a = slot(static_cast<int>(j - j0)), b = slot(static_cast<int>(p - j0));
      const int t = value[a];
      value[a] = value[b];
      value[b] = t;
    }
    *count = used;
  }
  __syncthreads();
  for (int t = threadIdx.x; t < used; t += blockDim.x) {
    touched[t] = j0 + key[slots_used[t]];
    source[t] = j0 + value[slots_used[t]];
  }
}

// One column per block (grid-stride over columns): gather the touched rows' old values into shared
// memory, then write them to their new rows.
template <class T>
__global__ void apply_interchange_plan_kernel(T* A, std::int64_t ld, std::int64_t c0, std::int64_t c1,
                                              const std::int64_t* touched, const std::int64_t* source,
                                              const int* count) {
  __shared__ T buffer[kPlanMax];
  const int n = *count;
  for (std::int64_t c = c0 + blockIdx.x; c < c1; c += gridDim.x) {
    T* col = A + c * ld;
    for (int t = threadIdx.x; t < n; t += blockDim.x) buffer[t] = col[source[t]];
    __syncthreads();
    for (int t = threadIdx.x; t < n; t += blockDim.x) col[touched[t]] = buffer[t];
    __syncthreads();
  }
}

__global__ void panel_pivots_kernel(const std::int64_t* local, std::int64_t* global, std::int64_t k, std::int64_t b) {
  for (std::int64_t j = blockIdx.x * blockDim.x + threadIdx.x; j < b; j += gridDim.x * blockDim.x)
    global[k + j] = k + local[j] - 1;
}

template <class T>
__global__ void take_lower_block_kernel(T* A, std::int64_t n, std::int64_t ld, std::int64_t j, std::int64_t jb, T* work,
                                        std::int64_t ld_work) {
  for (std::int64_t c = blockIdx.y * blockDim.y + threadIdx.y; c < jb; c += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
      const std::int64_t col = j + c;
      if (i > col) {
        work[i + c * ld_work] = A[i + col * ld];
        A[i + col * ld] = T(0);
      }
    }
}

// One block per column (grid-stride): column sums in double, then the maximum by atomicMax on the bit
// pattern (non-negative doubles order like their bit patterns).
template <class T>
__global__ void norm1_kernel(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* result,
                             Part part) {
  __shared__ double partial[kThreads];
  for (std::int64_t j = blockIdx.x; j < cols; j += gridDim.x) {
    // rows [lo, hi) of column j belong to the part; a unit diagonal counts 1 instead of what is stored
    std::int64_t lo = 0, hi = rows;
    if (part.shape == Part::Lower) lo = j + (part.unit_diagonal ? 1 : 0);
    if (part.shape == Part::Upper) hi = min(rows, j + (part.unit_diagonal ? 0 : 1));
    double s = (part.shape != Part::Full && part.unit_diagonal && threadIdx.x == 0 && j < rows) ? 1.0 : 0.0;
    for (std::int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) s += fabs(static_cast<double>(A[i + j * ld]));
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
      if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0)
      atomicMax(reinterpret_cast<unsigned long long*>(result), static_cast<unsigned long long>(__double_as_longlong(partial[0])));
    __syncthreads();
  }
}

template <class T>
__global__ void first_non_finite_kernel(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                        unsigned long long* first) {
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < cols; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x)
      if (!isfinite(static_cast<double>(A[i + j * ld])))
        atomicMin(first, static_cast<unsigned long long>(j * rows + i));
}

// Non-negative doubles order as their bits do, so the largest magnitude is an integer atomicMax; each warp
// reduces its threads' largest first, so a block makes one atomic operation per warp.
template <class T>
__global__ void magnitude_kernel(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                 unsigned long long* out) {
  double largest = 0;
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < cols; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x) {
      const double a = fabs(static_cast<double>(A[i + j * ld]));
      if (isfinite(a))
        largest = fmax(largest, a);
      else
        atomicMin(out, static_cast<unsigned long long>(j * rows + i));
    }
  for (int offset = 16; offset > 0; offset /= 2) largest = fmax(largest, __shfl_down_sync(0xffffffffu, largest, offset));
  if ((threadIdx.x + threadIdx.y * blockDim.x) % 32 == 0)
    atomicMax(out + 1, static_cast<unsigned long long>(__double_as_longlong(largest)));
}

// The same over a view without gaps between its columns (ld == rows, or one column), as one run of rows x
// cols entries: entry k is (k % rows, k / rows), so k is the index the host decodes. A view of few rows (a
// batch's right-hand sides, 8 x 2^20) left most of Grid2's lanes idle and made an atomic per warp of a
// million warps: 0.5 ms where the read takes 0.03 ms. The grid is bounded (kFlatBlocks), each thread
// striding, so the atomics are a few per block.
template <class T>
__global__ void magnitude_flat_kernel(const T* A, std::int64_t size, unsigned long long* out) {
  double largest = 0;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < size;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double a = fabs(static_cast<double>(A[k]));
    if (isfinite(a))
      largest = fmax(largest, a);
    else
      atomicMin(out, static_cast<unsigned long long>(k));
  }
  largest = warp_max(largest);
  if (threadIdx.x % 32 == 0) atomicMax(out + 1, static_cast<unsigned long long>(__double_as_longlong(largest)));
}
constexpr std::int64_t kFlatBlocks = 1024;

template <class T>
__global__ void structure_flags_kernel(const T* A, std::int64_t n, std::int64_t ld, int* flags) {
  bool lower = true, upper = true, symmetric = true;
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < n; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < j; i += gridDim.x * blockDim.x) {
      const T above = A[i + j * ld], below = A[j + i * ld];
      lower = lower && above == T(0);
      upper = upper && below == T(0);
      symmetric = symmetric && above == below;
    }
  // one store per warp and flag, not one per entry
  lower = __all_sync(0xffffffffu, lower), upper = __all_sync(0xffffffffu, upper);
  symmetric = __all_sync(0xffffffffu, symmetric);
  if (first_lane()) {
    if (!lower) flags[0] = 0;
    if (!upper) flags[1] = 0;
    if (!symmetric) flags[2] = 0;
  }
}

// *out := min(*out, j n + i) over i > j with |a(i, j) - a(j, i)| > tol.
template <class T>
__global__ void first_asymmetric_kernel(const T* A, std::int64_t n, std::int64_t ld, double tol, unsigned long long* out) {
  unsigned long long first = ~0ull;
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < n; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
      if (i > j && fabs(static_cast<double>(A[i + j * ld]) - static_cast<double>(A[j + i * ld])) > tol)
        first = min(first, static_cast<unsigned long long>(j * n + i));
  first = warp_min(first);
  if (first_lane() && first != ~0ull) atomicMin(out, first);
}

template <class T>
__global__ void to_double_kernel(const T* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* dst,
                                 std::int64_t ld_dst) {
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < cols; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x)
      dst[i + j * ld_dst] = static_cast<double>(src[i + j * ld]);
}

__global__ void to_float_kernel(const double* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, float* dst,
                                std::int64_t ld_dst) {
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < cols; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x)
      dst[i + j * ld_dst] = static_cast<float>(src[i + j * ld]);
}

__global__ void add_correction_kernel(const float* d, std::int64_t rows, std::int64_t cols, double* x,
                                      std::int64_t ld_x) {
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < cols; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x)
      x[i + j * ld_x] += static_cast<double>(d[i + j * rows]);
}

template <class T>
__global__ void scale_columns_kernel(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                     const double* w, T* out, std::int64_t ld_out) {
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < cols; j += gridDim.y * blockDim.y) {
    const double s = w[j];
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x)
      out[i + j * ld_out] = static_cast<T>(static_cast<double>(A[i + j * ld]) * s);
  }
}

template <class T>
__global__ void scale_rows_kernel(T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, const double* d) {
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < cols; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x)
      A[i + j * ld] = static_cast<T>(static_cast<double>(A[i + j * ld]) * d[i]);
}

// One block per column: max |a_ij| into result[j].
// The larger of a and b, NaN if either is (fmax would drop a NaN, and a NaN residual would pass every test).
__device__ double max_or_nan(double a, double b) { return isnan(a) ? a : (isnan(b) ? b : fmax(a, b)); }

__global__ void column_max_abs_kernel(const double* A, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                      double* result) {
  __shared__ double partial[kThreads];
  for (std::int64_t j = blockIdx.x; j < cols; j += gridDim.x) {
    double m = 0;
    for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) m = max_or_nan(m, fabs(A[i + j * ld]));
    partial[threadIdx.x] = m;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
      if (threadIdx.x < w) partial[threadIdx.x] = max_or_nan(partial[threadIdx.x], partial[threadIdx.x + w]);
      __syncthreads();
    }
    if (threadIdx.x == 0) result[j] = partial[0];
    __syncthreads();
  }
}

// One thread per row: its sum of |a_ij| (reading a column at a time, coalesced), then the maximum by
// atomicMax on the bit pattern.
__global__ void norm_inf_kernel(const double* A, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                double* result) {
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x) {
    double s = 0;
    for (std::int64_t j = 0; j < cols; ++j) s += fabs(A[i + j * ld]);
    atomicMax(reinterpret_cast<unsigned long long*>(result), static_cast<unsigned long long>(__double_as_longlong(s)));
  }
}

template <class T>
__global__ void fill_uniform_kernel(T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed,
                                    T lo, T hi) {
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < cols; j += gridDim.y * blockDim.y)
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x) {
      const double u = kernels::counter_uniform(seed, static_cast<std::uint64_t>(j * rows + i));
      A[i + j * ld] = static_cast<T>(kernels::uniform_between(lo, hi, u));
    }
}

}  // namespace

template <class T>
void fill_identity(T* A, std::int64_t n, std::int64_t ld, cudaStream_t stream, std::int64_t count) {
  if (n == 0 || count == 0) return;
  Grid2 g(n, n * count);
  fill_identity_kernel<<<g.grid, g.block, 0, stream>>>(A, n, ld, n * count);
  check_launch("fill_identity");
}

template <class T>
void set_diagonal(T* A, std::int64_t n, std::int64_t ld, T value, cudaStream_t stream) {
  if (n == 0) return;
  set_diagonal_kernel<<<blocks_for(n), kThreads, 0, stream>>>(A, n, ld, value);
  check_launch("set_diagonal");
}

template <class T>
void butterfly_level(const T* r, int level, std::int64_t n, std::int64_t other, T* X, std::int64_t ld, bool left,
                     bool mix_first, cudaStream_t stream) {
  if (n == 0 || other == 0) return;
  butterfly_level_kernel<<<blocks_for(n * other), kThreads, 0, stream>>>(r, 1 << level, n, other, X, ld, left,
                                                                         mix_first);
  check_launch("butterfly_level");
}

template <class T>
void butterfly_two_levels(const T* r, std::int64_t ld_r, std::int64_t n, std::int64_t other, T* X, std::int64_t ld,
                          bool left, bool ascending, cudaStream_t stream) {
  if (n == 0 || other == 0) return;
  butterfly_two_levels_kernel<<<blocks_for(n / 4 * other), kThreads, 0, stream>>>(r, ld_r, n, other, X, ld, left,
                                                                                  ascending);
  check_launch("butterfly_two_levels");
}

template <class T>
void copy_triangle(const T* src, std::int64_t ld_src, T* dst, std::int64_t ld_dst, std::int64_t n, bool upper,
                   bool with_diagonal, cudaStream_t stream) {
  if (n == 0) return;
  Grid2 g(n, n);
  copy_triangle_kernel<<<g.grid, g.block, 0, stream>>>(src, ld_src, dst, ld_dst, n, upper, with_diagonal);
  check_launch("copy_triangle");
}

template <class T>
void zero_triangle(T* A, std::int64_t n, std::int64_t ld, bool upper, cudaStream_t stream) {
  if (n == 0) return;
  Grid2 g(n, n);
  zero_triangle_kernel<<<g.grid, g.block, 0, stream>>>(A, n, ld, upper);
  check_launch("zero_triangle");
}

template <class T>
void mirror_lower(T* A, std::int64_t n, std::int64_t ld, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned tiles = static_cast<unsigned>((n + 31) / 32);
  mirror_lower_kernel<<<dim3(tiles, tiles), dim3(32, 8), 0, stream>>>(A, n, ld);
  check_launch("mirror_lower");
}

template <class T>
void transpose_triangle(const T* src, std::int64_t ld_src, T* dst, std::int64_t ld_dst, std::int64_t n, bool src_upper,
                        cudaStream_t stream) {
  if (n == 0) return;
  const unsigned tiles = static_cast<unsigned>((n + 31) / 32);
  transpose_triangle_kernel<<<dim3(tiles, tiles), dim3(32, 8), 0, stream>>>(src, ld_src, dst, ld_dst, n, src_upper);
  check_launch("transpose_triangle");
}

template <class T>
void unpermute_columns(T* A, std::int64_t rows, std::int64_t n, std::int64_t ld, const std::int64_t* pivots,
                       std::int64_t* sources, T* work, std::int64_t chunk_rows, cudaStream_t stream) {
  if (rows == 0 || n == 0) return;
  const std::size_t shared = n <= kSharedColumns ? static_cast<std::size_t>(2 * n) * sizeof(int) : 0;
  static std::atomic<std::uint64_t> sized{0};  // the GPUs where it may use more than the default 48 KB
  allow_shared_memory(reinterpret_cast<const void*>(column_sources_kernel),
                      static_cast<int>(2 * kSharedColumns * sizeof(int)), sized);
  column_sources_kernel<<<1, 1024, shared, stream>>>(pivots, n, sources);
  check_launch("unpermute_columns (sources)");
  for (std::int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
    const std::int64_t chunk = std::min(chunk_rows, rows - r0);
    const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>((chunk + 255) / 256, 8)),
                    static_cast<unsigned>(std::min<std::int64_t>(n, 65535)));
    gather_columns_kernel<T><<<grid, 256, 0, stream>>>(A, ld, r0, chunk, n, sources, work);
    check_launch("unpermute_columns (gather)");
    check(cudaMemcpy2DAsync(A + r0, ld * sizeof(T), work, chunk * sizeof(T), chunk * sizeof(T), n,
                            cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpy2D");
  }
}

void interchange_plan(const std::int64_t* pivots, std::int64_t j0, std::int64_t j1, std::int64_t* touched,
                      std::int64_t* source, int* count, cudaStream_t stream) {
  if (j1 - j0 > kPlanMax / 2) check(cudaErrorInvalidValue, "interchange_plan: more than 1024 interchanges");
  interchange_plan_kernel<<<1, 256, 0, stream>>>(pivots, j0, j1, touched, source, count);
  check_launch("interchange_plan");
}

template <class T>
void apply_interchange_plan(T* A, std::int64_t ld, std::int64_t c0, std::int64_t c1, const std::int64_t* touched,
                            const std::int64_t* source, const int* count, int max_count, cudaStream_t stream) {
  if (c1 <= c0 || max_count == 0) return;
  const std::int64_t blocks = std::min<std::int64_t>(c1 - c0, 65535);
  apply_interchange_plan_kernel<T><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(A, ld, c0, c1, touched, source,
                                                                                       count);
  check_launch("apply_interchange_plan");
}

void panel_pivots(const std::int64_t* local, std::int64_t* global, std::int64_t k, std::int64_t b, cudaStream_t stream) {
  if (b == 0) return;
  panel_pivots_kernel<<<blocks_for(b), kThreads, 0, stream>>>(local, global, k, b);
  check_launch("panel_pivots");
}

template <class T>
void take_lower_block(T* A, std::int64_t n, std::int64_t ld, std::int64_t j, std::int64_t jb, T* work,
                      std::int64_t ld_work, cudaStream_t stream) {
  if (n == 0 || jb == 0) return;
  Grid2 g(n, jb);
  take_lower_block_kernel<<<g.grid, g.block, 0, stream>>>(A, n, ld, j, jb, work, ld_work);
  check_launch("take_lower_block");
}

template <class T>
void norm1(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* result, cudaStream_t stream,
           Part part) {
  if (rows == 0 || cols == 0) return;
  const unsigned blocks = static_cast<unsigned>(cols < 65535 ? cols : 65535);
  norm1_kernel<<<blocks, kThreads, 0, stream>>>(A, rows, cols, ld, result, part);
  check_launch("norm1");
}

template <class T>
void first_non_finite(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, unsigned long long* first,
                      cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  Grid2 g(rows, cols);
  first_non_finite_kernel<<<g.grid, g.block, 0, stream>>>(A, rows, cols, ld, first);
  check_launch("first_non_finite");
}

template <class T>
void magnitude(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, unsigned long long* out,
               cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  if (ld == rows || cols == 1) {
    const std::int64_t size = rows * cols;
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((size + kThreads - 1) / kThreads, kFlatBlocks));
    magnitude_flat_kernel<<<blocks, kThreads, 0, stream>>>(A, size, out);
    check_launch("magnitude");
    return;
  }
  Grid2 g(rows, cols);
  magnitude_kernel<<<g.grid, g.block, 0, stream>>>(A, rows, cols, ld, out);
  check_launch("magnitude");
}

template <class T>
void structure_flags(const T* A, std::int64_t n, std::int64_t ld, int* flags, cudaStream_t stream) {
  if (n < 2) return;
  Grid2 g(n, n);
  structure_flags_kernel<<<g.grid, g.block, 0, stream>>>(A, n, ld, flags);
  check_launch("structure_flags");
}

template <class T>
void first_asymmetric(const T* A, std::int64_t n, std::int64_t ld, double tol, unsigned long long* out,
                      cudaStream_t stream) {
  if (n < 2) return;
  Grid2 g(n, n);
  first_asymmetric_kernel<<<g.grid, g.block, 0, stream>>>(A, n, ld, tol, out);
  check_launch("first_asymmetric");
}

template <class T>
void to_double(const T* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* dst, std::int64_t ld_dst,
               cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  Grid2 g(rows, cols);
  to_double_kernel<<<g.grid, g.block, 0, stream>>>(src, rows, cols, ld, dst, ld_dst);
  check_launch("to_double");
}

namespace {
__global__ void inverse_roots_kernel(const double* V, const double* l, std::int64_t n, double* W) {
  const double* v = V + blockIdx.x * n * n;
  const double* values = l + blockIdx.x * n;
  double largest = 0;
  for (std::int64_t j = 0; j < n; ++j) largest = fmax(largest, fabs(values[j]));
  const double floor = static_cast<double>(n) * DBL_EPSILON * largest;
  for (std::int64_t e = threadIdx.x; e < n * n; e += blockDim.x) {
    const std::int64_t r = e % n, c = e / n;
    double t = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const double s = fabs(values[j]);
      if (s > floor) t += copysign(1.0, values[j]) * v[r + j * n] * v[c + j * n] / sqrt(s);
    }
    W[blockIdx.x * n * n + e] = t;
  }
}
}  // namespace

void inverse_roots(const double* V, const double* l, std::int64_t n, std::int64_t count, double* W, cudaStream_t stream) {
  if (count == 0 || n == 0) return;
  inverse_roots_kernel<<<static_cast<unsigned>(count), 1024, 0, stream>>>(V, l, n, W);
  check_launch("inverse_roots");
}

namespace {
// One thread: the counts are of a few hundred batched solver infos at most.
__global__ void count_nonzero_kernel(const int* values, std::int64_t n, double* count) {
  double c = 0;
  for (std::int64_t k = 0; k < n; ++k) c += values[k] != 0 ? 1 : 0;
  *count = c;
}
}  // namespace

void count_nonzero(const int* values, std::int64_t n, double* count, cudaStream_t stream) {
  count_nonzero_kernel<<<1, 1, 0, stream>>>(values, n, count);
  check_launch("count_nonzero");
}

void to_float(const double* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, float* dst,
              std::int64_t ld_dst, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  Grid2 g(rows, cols);
  to_float_kernel<<<g.grid, g.block, 0, stream>>>(src, rows, cols, ld, dst, ld_dst);
  check_launch("to_float");
}

void add_correction(const float* d, std::int64_t rows, std::int64_t cols, double* x, std::int64_t ld_x,
                    cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  Grid2 g(rows, cols);
  add_correction_kernel<<<g.grid, g.block, 0, stream>>>(d, rows, cols, x, ld_x);
  check_launch("add_correction");
}

void column_max_abs(const double* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* result,
                    cudaStream_t stream) {
  if (cols == 0) return;
  column_max_abs_kernel<<<static_cast<unsigned>(std::min<std::int64_t>(cols, 65535)), kThreads, 0, stream>>>(
      A, rows, cols, ld, result);
  check_launch("column_max_abs");
}

void norm_inf(const double* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* result,
              cudaStream_t stream) {
  if (rows == 0) return;
  norm_inf_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(A, rows, cols, ld, result);
  check_launch("norm_inf");
}

template <class T>
void fill_uniform(T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed, T lo, T hi,
                  cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  Grid2 g(rows, cols);
  fill_uniform_kernel<<<g.grid, g.block, 0, stream>>>(A, rows, cols, ld, seed, lo, hi);
  check_launch("fill_uniform");
}

template <class T>
void scale_columns(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, const double* w, T* out,
                   std::int64_t ld_out, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  Grid2 g(rows, cols);
  scale_columns_kernel<<<g.grid, g.block, 0, stream>>>(A, rows, cols, ld, w, out, ld_out);
  check_launch("scale_columns");
}

template <class T>
void scale_rows(T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, const double* d, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  Grid2 g(rows, cols);
  scale_rows_kernel<<<g.grid, g.block, 0, stream>>>(A, rows, cols, ld, d);
  check_launch("scale_rows");
}

#define LINV_INSTANTIATE(T)                                                                                      \
  template void scale_columns<T>(const T*, std::int64_t, std::int64_t, std::int64_t, const double*, T*,           \
                                 std::int64_t, cudaStream_t);                                                   \
  template void scale_rows<T>(T*, std::int64_t, std::int64_t, std::int64_t, const double*, cudaStream_t);         \
  template void fill_identity<T>(T*, std::int64_t, std::int64_t, cudaStream_t, std::int64_t);                   \
  template void set_diagonal<T>(T*, std::int64_t, std::int64_t, T, cudaStream_t);                               \
  template void butterfly_level<T>(const T*, int, std::int64_t, std::int64_t, T*, std::int64_t, bool, bool,     \
                                   cudaStream_t);                                                               \
  template void butterfly_two_levels<T>(const T*, std::int64_t, std::int64_t, std::int64_t, T*, std::int64_t,   \
                                        bool, bool, cudaStream_t);                                              \
  template void zero_triangle<T>(T*, std::int64_t, std::int64_t, bool, cudaStream_t);                           \
  template void copy_triangle<T>(const T*, std::int64_t, T*, std::int64_t, std::int64_t, bool, bool,             \
                                 cudaStream_t);                                                                 \
  template void mirror_lower<T>(T*, std::int64_t, std::int64_t, cudaStream_t);                                  \
  template void transpose_triangle<T>(const T*, std::int64_t, T*, std::int64_t, std::int64_t, bool, cudaStream_t);  \
  template void unpermute_columns<T>(T*, std::int64_t, std::int64_t, std::int64_t, const std::int64_t*,          \
                                     std::int64_t*, T*, std::int64_t, cudaStream_t);                             \
  template void take_lower_block<T>(T*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, T*,              \
                                    std::int64_t, cudaStream_t);                                                 \
  template void norm1<T>(const T*, std::int64_t, std::int64_t, std::int64_t, double*, cudaStream_t, Part);      \
  template void first_non_finite<T>(const T*, std::int64_t, std::int64_t, std::int64_t, unsigned long long*,    \
                                    cudaStream_t);                                                               \
  template void magnitude<T>(const T*, std::int64_t, std::int64_t, std::int64_t, unsigned long long*,           \
                             cudaStream_t);                                                                   \
  template void structure_flags<T>(const T*, std::int64_t, std::int64_t, int*, cudaStream_t);                   \
  template void first_asymmetric<T>(const T*, std::int64_t, std::int64_t, double, unsigned long long*,          \
                                    cudaStream_t);                                                               \
  template void to_double<T>(const T*, std::int64_t, std::int64_t, std::int64_t, double*, std::int64_t,         \
                             cudaStream_t);                                                                      \
  template void fill_uniform<T>(T*, std::int64_t, std::int64_t, std::int64_t, std::uint64_t, T, T, cudaStream_t); \
  template void apply_interchange_plan<T>(T*, std::int64_t, std::int64_t, std::int64_t, const std::int64_t*,      \
                                          const std::int64_t*, const int*, int, cudaStream_t);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
#undef LINV_INSTANTIATE

}  // namespace linv::cuda::launch
