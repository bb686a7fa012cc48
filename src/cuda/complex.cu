// The complex element-wise kernels (complex_kernels.hpp). An entry is read as its two parts, a pair of R:
// std::complex<R> is laid out so in memory (the C++ standard guarantees it), and the pair keeps these
// kernels free of any complex class in device code. They are O(n^2) steps beside cuSOLVER's O(n^3) ones,
// written for clarity over the tiled layouts of the real kernels.
#include <cmath>

#include "common/counter_random.hpp"
#include "cuda/complex_kernels.hpp"
#include "cuda/context.hpp"
#include "cuda/reduce.cuh"

namespace linv::cuda::complex_launch {
namespace {

constexpr int kThreads = 256;

template <class R>
struct alignas(2 * sizeof(R)) Parts {
  R re, im;
};

template <class R>
Parts<R>* parts(std::complex<R>* p) {
  return reinterpret_cast<Parts<R>*>(p);
}
template <class R>
const Parts<R>* parts(const std::complex<R>* p) {
  return reinterpret_cast<const Parts<R>*>(p);
}

// 2-D grid-stride launch over a rows x cols matrix: x over rows (coalesced), y over columns.
struct Grid2 {
  dim3 grid, block;
  Grid2(std::int64_t rows, std::int64_t cols) : block(32, 8) {
    const std::int64_t gx = (rows + 31) / 32, gy = (cols + 7) / 8;
    grid = dim3(static_cast<unsigned>(gx < 1 ? 1 : (gx > 65535 ? 65535 : gx)),
                static_cast<unsigned>(gy < 1 ? 1 : (gy > 65535 ? 65535 : gy)));
  }
};

#define LINV_FOR_EACH_ENTRY(rows, cols)                                                                    \
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < (cols); j += gridDim.y * blockDim.y) \
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (rows); i += gridDim.x * blockDim.x)

template <class R>
__device__ double modulus(Parts<R> a) {
  return hypot(static_cast<double>(a.re), static_cast<double>(a.im));
}

// One block per column (grid-stride), the column's sum in double, then the maximum by atomicMax on the bit
// pattern (non-negative doubles order as their bits do; a NaN's bits are above every finite one's).
template <class R>
__global__ void norm1_kernel(const Parts<R>* A, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                             double* result, launch::Part part) {
  __shared__ double partial[kThreads];
  for (std::int64_t j = blockIdx.x; j < cols; j += gridDim.x) {
    // rows [lo, hi) of column j belong to the part; a unit diagonal counts 1 instead of what is stored
    std::int64_t lo = 0, hi = rows;
    if (part.shape == launch::Part::Lower) lo = j + (part.unit_diagonal ? 1 : 0);
    if (part.shape == launch::Part::Upper) hi = min(rows, j + (part.unit_diagonal ? 0 : 1));
    double s = (part.shape != launch::Part::Full && part.unit_diagonal && threadIdx.x == 0 && j < rows) ? 1.0 : 0.0;
    for (std::int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) s += modulus(A[i + j * ld]);
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
      if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0)
      atomicMax(reinterpret_cast<unsigned long long*>(result),
                static_cast<unsigned long long>(__double_as_longlong(fabs(partial[0]))));
    __syncthreads();
  }
}

template <class R>
__global__ void max_modulus_kernel(const Parts<R>* A, std::int64_t n, std::int64_t ld, bool upper, double* result) {
  double largest = 0;
  LINV_FOR_EACH_ENTRY(n, n) {
    if (!upper || i <= j) largest = fmax(largest, modulus(A[i + j * ld]));
  }
  largest = warp_max(largest);
  if (first_lane())
    atomicMax(reinterpret_cast<unsigned long long*>(result), static_cast<unsigned long long>(__double_as_longlong(largest)));
}

template <class R>
__global__ void magnitude_kernel(const Parts<R>* A, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                 unsigned long long* out) {
  double largest = 0;
  LINV_FOR_EACH_ENTRY(rows, cols) {
    const Parts<R> a = A[i + j * ld];
    const double re = fabs(static_cast<double>(a.re)), im = fabs(static_cast<double>(a.im));
    if (isfinite(re) && isfinite(im))
      largest = fmax(largest, fmax(re, im));
    else
      atomicMin(out, static_cast<unsigned long long>(j * rows + i));
  }
  largest = warp_max(largest);
  if (first_lane()) atomicMax(out + 1, static_cast<unsigned long long>(__double_as_longlong(largest)));
}

template <class R>
__global__ void structure_flags_kernel(const Parts<R>* A, std::int64_t n, std::int64_t ld, int* flags) {
  bool lower = true, upper = true, hermitian = true;
  LINV_FOR_EACH_ENTRY(n, n) {
    if (i > j) continue;
    const Parts<R> above = A[i + j * ld], below = A[j + i * ld];
    if (i == j) {
      hermitian = hermitian && above.im == 0;  // a Hermitian matrix's diagonal is real
      continue;
    }
    lower = lower && above.re == 0 && above.im == 0;
    upper = upper && below.re == 0 && below.im == 0;
    hermitian = hermitian && above.re == below.re && above.im == -below.im;
  }
  // one store per warp and flag, not one per entry
  lower = __all_sync(0xffffffffu, lower), upper = __all_sync(0xffffffffu, upper);
  hermitian = __all_sync(0xffffffffu, hermitian);
  if (first_lane()) {
    if (!lower) flags[0] = 0;
    if (!upper) flags[1] = 0;
    if (!hermitian) flags[2] = 0;
  }
}

// out := min(out, j n + i) over i >= j with |a(i, j) - conj(a(j, i))| > tol (the diagonal: 2 |Im a(i, i)|).
template <class R>
__global__ void first_asymmetric_kernel(const Parts<R>* A, std::int64_t n, std::int64_t ld, double tol,
                                        unsigned long long* out) {
  unsigned long long first = ~0ull;
  LINV_FOR_EACH_ENTRY(n, n) {
    if (i < j) continue;
    const Parts<R> below = A[i + j * ld], above = A[j + i * ld];
    const double re = static_cast<double>(below.re) - static_cast<double>(above.re);
    const double im = static_cast<double>(below.im) + static_cast<double>(above.im);
    if (hypot(re, im) > tol) first = min(first, static_cast<unsigned long long>(j * n + i));
  }
  first = warp_min(first);
  if (first_lane() && first != ~0ull) atomicMin(out, first);
}

template <class R>
__global__ void zero_triangle_kernel(Parts<R>* A, std::int64_t n, std::int64_t ld, bool upper) {
  LINV_FOR_EACH_ENTRY(n, n) {
    if (upper ? i < j : i > j) A[i + j * ld] = Parts<R>{0, 0};
  }
}

template <class R>
__global__ void set_diagonal_kernel(Parts<R>* A, std::int64_t n, std::int64_t ld, Parts<R> value) {
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    A[i + i * ld] = value;
}

template <class R>
__global__ void fill_identity_kernel(Parts<R>* A, std::int64_t n, std::int64_t ld) {
  LINV_FOR_EACH_ENTRY(n, n) { A[i + j * ld] = Parts<R>{i == j ? R(1) : R(0), 0}; }
}

template <class R>
__global__ void mirror_lower_kernel(Parts<R>* A, std::int64_t n, std::int64_t ld) {
  LINV_FOR_EACH_ENTRY(n, n) {
    if (i < j) {
      const Parts<R> below = A[j + i * ld];
      A[i + j * ld] = Parts<R>{below.re, -below.im};
    } else if (i == j) {
      A[i + i * ld].im = 0;
    }
  }
}

template <class R>
__global__ void scale_rows_kernel(Parts<R>* X, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                  const double* d) {
  LINV_FOR_EACH_ENTRY(rows, cols) {
    Parts<R>& x = X[i + j * ld];
    x.re = static_cast<R>(x.re * d[i]);
    x.im = static_cast<R>(x.im * d[i]);
  }
}

template <class R>
__global__ void widen_kernel(const Parts<R>* src, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                             Parts<double>* dst, std::int64_t ld_dst) {
  LINV_FOR_EACH_ENTRY(rows, cols) {
    const Parts<R> a = src[i + j * ld];
    dst[i + j * ld_dst] = Parts<double>{static_cast<double>(a.re), static_cast<double>(a.im)};
  }
}

template <class R>
__global__ void column_norms_squared_kernel(const Parts<R>* X, std::int64_t rows, std::int64_t cols,
                                            std::int64_t ld, double* out) {
  __shared__ double partial[kThreads];
  for (std::int64_t j = blockIdx.x; j < cols; j += gridDim.x) {
    double s = 0;
    for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) {
      const Parts<R> a = X[i + j * ld];
      s += static_cast<double>(a.re) * a.re + static_cast<double>(a.im) * a.im;
    }
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
      if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[j] = partial[0];
    __syncthreads();
  }
}

template <class R>
__global__ void fill_uniform_kernel(Parts<R>* A, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                    std::uint64_t seed, Parts<R> lo, Parts<R> hi) {
  LINV_FOR_EACH_ENTRY(rows, cols) {
    const auto k = static_cast<std::uint64_t>(j * rows + i);
    A[i + j * ld] = Parts<R>{
        static_cast<R>(kernels::uniform_between(lo.re, hi.re, kernels::counter_uniform(seed, 2 * k))),
        static_cast<R>(kernels::uniform_between(lo.im, hi.im, kernels::counter_uniform(seed, 2 * k + 1)))};
  }
}

unsigned column_blocks(std::int64_t cols) { return static_cast<unsigned>(cols < 65535 ? cols : 65535); }

// One warp per matrix of a batch of n x n matrices (n <= 64, contiguous, one after another): lane l sums
// columns l and l + 32 in double; the warp's maximum, NaN kept (a NaN column sum compares false).
template <class R>
__global__ void batched_norm1_kernel(const Parts<R>* A, std::int64_t n, std::int64_t count, double* out) {
  const std::int64_t m = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (m >= count) return;
  const Parts<R>* a = A + m * n * n;
  double best = 0;
  for (std::int64_t j = lane; j < n; j += 32) {
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += modulus(a[i + j * n]);
    best = (s > best || isnan(s)) ? s : best;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    const double other = __shfl_down_sync(0xFFFFFFFFu, best, offset);
    best = (other > best || isnan(other)) ? other : best;
  }
  if (lane == 0) out[m] = best;
}

template <class R>
Parts<R> parts_of(std::complex<R> z) {
  return Parts<R>{z.real(), z.imag()};
}

}  // namespace

template <class R>
void norm1(const std::complex<R>* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* result,
           cudaStream_t stream, launch::Part part) {
  if (rows == 0 || cols == 0) return;
  norm1_kernel<<<column_blocks(cols), kThreads, 0, stream>>>(parts(A), rows, cols, ld, result, part);
  check_launch("complex norm1");
}

template <class R>
void max_modulus(const std::complex<R>* A, std::int64_t n, std::int64_t ld, bool upper, double* result,
                 cudaStream_t stream) {
  if (n == 0) return;
  const Grid2 g(n, n);
  max_modulus_kernel<<<g.grid, g.block, 0, stream>>>(parts(A), n, ld, upper, result);
  check_launch("complex max_modulus");
}

template <class R>
void magnitude(const std::complex<R>* A, std::int64_t rows, std::int64_t cols, std::int64_t ld,
               unsigned long long* out, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const Grid2 g(rows, cols);
  magnitude_kernel<<<g.grid, g.block, 0, stream>>>(parts(A), rows, cols, ld, out);
  check_launch("complex magnitude");
}

template <class R>
void structure_flags(const std::complex<R>* A, std::int64_t n, std::int64_t ld, int* flags, cudaStream_t stream) {
  if (n == 0) return;
  const Grid2 g(n, n);
  structure_flags_kernel<<<g.grid, g.block, 0, stream>>>(parts(A), n, ld, flags);
  check_launch("complex structure_flags");
}

template <class R>
void first_asymmetric(const std::complex<R>* A, std::int64_t n, std::int64_t ld, double tol, unsigned long long* out,
                      cudaStream_t stream) {
  if (n == 0) return;
  const Grid2 g(n, n);
  first_asymmetric_kernel<<<g.grid, g.block, 0, stream>>>(parts(A), n, ld, tol, out);
  check_launch("complex first_asymmetric");
}

template <class R>
void zero_triangle(std::complex<R>* A, std::int64_t n, std::int64_t ld, bool upper, cudaStream_t stream) {
  if (n == 0) return;
  const Grid2 g(n, n);
  zero_triangle_kernel<<<g.grid, g.block, 0, stream>>>(parts(A), n, ld, upper);
  check_launch("complex zero_triangle");
}

template <class R>
void set_diagonal(std::complex<R>* A, std::int64_t n, std::int64_t ld, std::complex<R> value, cudaStream_t stream) {
  if (n == 0) return;
  set_diagonal_kernel<<<static_cast<unsigned>((n + kThreads - 1) / kThreads < 65535 ? (n + kThreads - 1) / kThreads
                                                                                    : 65535),
                        kThreads, 0, stream>>>(parts(A), n, ld, parts_of(value));
  check_launch("complex set_diagonal");
}

template <class R>
void fill_identity(std::complex<R>* A, std::int64_t n, std::int64_t ld, cudaStream_t stream) {
  if (n == 0) return;
  const Grid2 g(n, n);
  fill_identity_kernel<<<g.grid, g.block, 0, stream>>>(parts(A), n, ld);
  check_launch("complex fill_identity");
}

template <class R>
void mirror_lower(std::complex<R>* A, std::int64_t n, std::int64_t ld, cudaStream_t stream) {
  if (n == 0) return;
  const Grid2 g(n, n);
  mirror_lower_kernel<<<g.grid, g.block, 0, stream>>>(parts(A), n, ld);
  check_launch("complex mirror_lower");
}

template <class R>
void scale_rows(std::complex<R>* X, std::int64_t rows, std::int64_t cols, std::int64_t ld, const double* d,
                cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const Grid2 g(rows, cols);
  scale_rows_kernel<<<g.grid, g.block, 0, stream>>>(parts(X), rows, cols, ld, d);
  check_launch("complex scale_rows");
}

template <class R>
void widen(const std::complex<R>* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::complex<double>* dst,
           std::int64_t ld_dst, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const Grid2 g(rows, cols);
  widen_kernel<<<g.grid, g.block, 0, stream>>>(parts(src), rows, cols, ld, parts(dst), ld_dst);
  check_launch("complex widen");
}

template <class R>
void column_norms_squared(const std::complex<R>* X, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* out,
                          cudaStream_t stream) {
  if (cols == 0) return;
  column_norms_squared_kernel<<<column_blocks(cols), kThreads, 0, stream>>>(parts(X), rows, cols, ld, out);
  check_launch("complex column_norms_squared");
}

template <class R>
void fill_uniform(std::complex<R>* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed,
                  std::complex<R> lo, std::complex<R> hi, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const Grid2 g(rows, cols);
  fill_uniform_kernel<<<g.grid, g.block, 0, stream>>>(parts(A), rows, cols, ld, seed, parts_of(lo), parts_of(hi));
  check_launch("complex fill_uniform");
}

template <class R>
void batched_norm1(const std::complex<R>* A, std::int64_t n, std::int64_t count, double* out, cudaStream_t stream) {
  if (n == 0 || count == 0) return;
  const std::int64_t blocks = (count * 32 + kThreads - 1) / kThreads;
  batched_norm1_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(parts(A), n, count, out);
  check_launch("complex batched_norm1");
}

#define LINV_COMPLEX_KERNELS(R)                                                                                      \
  template void norm1<R>(const std::complex<R>*, std::int64_t, std::int64_t, std::int64_t, double*, cudaStream_t,    \
                         launch::Part);                                                                              \
  template void batched_norm1<R>(const std::complex<R>*, std::int64_t, std::int64_t, double*, cudaStream_t);        \
  template void max_modulus<R>(const std::complex<R>*, std::int64_t, std::int64_t, bool, double*, cudaStream_t);    \
  template void magnitude<R>(const std::complex<R>*, std::int64_t, std::int64_t, std::int64_t, unsigned long long*,  \
                             cudaStream_t);                                                                          \
  template void structure_flags<R>(const std::complex<R>*, std::int64_t, std::int64_t, int*, cudaStream_t);         \
  template void first_asymmetric<R>(const std::complex<R>*, std::int64_t, std::int64_t, double, unsigned long long*, \
                                    cudaStream_t);                                                                   \
  template void zero_triangle<R>(std::complex<R>*, std::int64_t, std::int64_t, bool, cudaStream_t);                 \
  template void set_diagonal<R>(std::complex<R>*, std::int64_t, std::int64_t, std::complex<R>, cudaStream_t);       \
  template void fill_identity<R>(std::complex<R>*, std::int64_t, std::int64_t, cudaStream_t);                       \
  template void mirror_lower<R>(std::complex<R>*, std::int64_t, std::int64_t, cudaStream_t);                        \
  template void scale_rows<R>(std::complex<R>*, std::int64_t, std::int64_t, std::int64_t, const double*,            \
                              cudaStream_t);                                                                         \
  template void widen<R>(const std::complex<R>*, std::int64_t, std::int64_t, std::int64_t, std::complex<double>*,    \
                         std::int64_t, cudaStream_t);                                                                \
  template void column_norms_squared<R>(const std::complex<R>*, std::int64_t, std::int64_t, std::int64_t, double*,  \
                                        cudaStream_t);                                                               \
  template void fill_uniform<R>(std::complex<R>*, std::int64_t, std::int64_t, std::int64_t, std::uint64_t,          \
                                std::complex<R>, std::complex<R>, cudaStream_t);
LINV_COMPLEX_KERNELS(float)
LINV_COMPLEX_KERNELS(double)

}  // namespace linv::cuda::complex_launch
