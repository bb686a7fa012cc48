// ADL's kernels (declared in src/cuda/adl.hpp). The coefficient steps are the time-critical part: each
// column of S evolves on its own given G and D^T X, so one thread carries a column through all its steps
// in registers and S is read and written once per outer iteration instead of once per step (with the
// step's G S product, twice). Every sum is accumulated in float64 and added in a fixed order.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/adl.hpp"
#include "cuda/context.hpp"
#include "cuda/reduce.cuh"

namespace linv::cuda::adl_kernels {
namespace {

constexpr int kThreads = 256;  // coefficient kernels
constexpr int kWarps = kThreads / 32;
constexpr int kDictionaryThreads = 1024;
constexpr std::int64_t kMaxBlocks = 4096;  // grid-stride beyond this many blocks

// s := soft(s + (x - w) * inv_c, tau), the sums of the step added to (xs, sgs, l1, l1_new).
template <class T>
__device__ T soft_step(T s, T x, T w, T inv_c, T tau, double& xs, double& sgs, double& l1, double& l1_new) {
  xs += static_cast<double>(x) * static_cast<double>(s);
  sgs += static_cast<double>(s) * static_cast<double>(w);
  l1 += fabs(static_cast<double>(s));
  const T a = s + (x - w) * inv_c, excess = fabs(a) - tau;
  const T updated = excess > T(0) ? copysign(excess, a) : T(0);
  l1_new += fabs(static_cast<double>(updated));
  return updated;
}

// Adds the warp's four sums into the warp's slot `sums` (lane 0 writes).
__device__ void add_warp_sums(double* sums, double xs, double sgs, double l1, double l1_new) {
  xs = warp_sum(xs), sgs = warp_sum(sgs), l1 = warp_sum(l1), l1_new = warp_sum(l1_new);
  if (threadIdx.x % 32 == 0) sums[0] += xs, sums[1] += sgs, sums[2] += l1, sums[3] += l1_new;
}

// partial[blockIdx.x * count + q] := sum over the block's warps of sums[w * count + q].
__device__ void write_block_sums(const double* sums, int count, double* partial) {
  __syncthreads();
  for (int q = threadIdx.x; q < count; q += blockDim.x) {
    double total = 0;
    for (int w = 0; w < kWarps; ++w) total += sums[w * count + q];
    partial[static_cast<std::int64_t>(blockIdx.x) * count + q] = total;
  }
}

template <class T, int KMAX>
__global__ void __launch_bounds__(kThreads) fused_coefficients_kernel(const T* G, int K, const T* DtX, T* S,
                                                                      std::int64_t N, int steps, T inv_c, T tau,
                                                                      double* partial) {
  __shared__ T g[KMAX * KMAX];  // G zero-padded to KMAX x KMAX, so padded entries of s stay 0
  __shared__ double sums[kWarps * kFusedMaxSteps * kCoefficientSums];
  const int count = steps * kCoefficientSums, warp = threadIdx.x / 32;
  for (int e = threadIdx.x; e < KMAX * KMAX; e += blockDim.x) {
    const int r = e % KMAX, c = e / KMAX;
    g[e] = r < K && c < K ? G[r + c * K] : T(0);
  }
  for (int e = threadIdx.x; e < kWarps * count; e += blockDim.x) sums[e] = 0;
  __syncthreads();
  // whole blocks step together, so every lane of a warp takes part in each warp sum
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; base < N;
       base += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t j = base + threadIdx.x;
    const bool active = j < N;
    T s[KMAX], x[KMAX];
#pragma unroll
    for (int r = 0; r < KMAX; ++r) {
      s[r] = active && r < K ? S[r + j * K] : T(0);
      x[r] = active && r < K ? DtX[r + j * K] : T(0);
    }
    for (int step = 0; step < steps; ++step) {
      T w[KMAX];
#pragma unroll
      for (int r = 0; r < KMAX; ++r) {
        T t = 0;
#pragma unroll
        for (int c = 0; c < KMAX; ++c) t += g[c + r * KMAX] * s[c];  // G(c, r) = G(r, c)
        w[r] = t;
      }
      double xs = 0, sgs = 0, l1 = 0, l1_new = 0;
#pragma unroll
      for (int r = 0; r < KMAX; ++r) s[r] = soft_step(s[r], x[r], w[r], inv_c, tau, xs, sgs, l1, l1_new);
      add_warp_sums(sums + warp * count + step * kCoefficientSums, xs, sgs, l1, l1_new);
    }
    if (active)
#pragma unroll
      for (int r = 0; r < KMAX; ++r)
        if (r < K) S[r + j * K] = s[r];
  }
  write_block_sums(sums, count, partial);
}

template <class T>
__global__ void __launch_bounds__(kThreads) coefficient_pass_kernel(const T* DtX, const T* W, T* S, std::int64_t K,
                                                                    std::int64_t N, T inv_c, T tau, double* partial) {
  __shared__ double sums[kWarps * kCoefficientSums];
  for (int e = threadIdx.x; e < kWarps * kCoefficientSums; e += blockDim.x) sums[e] = 0;
  __syncthreads();
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; base < N;
       base += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t j = base + threadIdx.x;
    double xs = 0, sgs = 0, l1 = 0, l1_new = 0;
    if (j < N)
      for (std::int64_t r = 0; r < K; ++r) {
        const std::int64_t e = r + j * K;
        S[e] = soft_step(S[e], DtX[e], W[e], inv_c, tau, xs, sgs, l1, l1_new);
      }
    add_warp_sums(sums + (threadIdx.x / 32) * kCoefficientSums, xs, sgs, l1, l1_new);
  }
  write_block_sums(sums, kCoefficientSums, partial);
}

__global__ void sum_partials_kernel(const double* partial, int blocks, int count, double* out) {
  __shared__ double shared[32];
  double t = 0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) t += partial[static_cast<std::int64_t>(b) * count + blockIdx.x];
  t = block_sum(t, shared);
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}

template <class T>
__global__ void __launch_bounds__(kDictionaryThreads) dictionary_kernel(T* D, const T* P, const T* H,
                                                                        std::int64_t rows, int K, const T* task, int M,
                                                                        double c, double c_d, int steps, T inv_c, T* V,
                                                                        double* sums, T* G) {
  extern __shared__ double scale[];  // per column: the projection's factor, or -1 when inside its ball
  __shared__ double shared[32];
  const std::int64_t size = rows * K;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int step = 0; step <= steps; ++step) {
    // V = D H, and the sums of the D this step reads
    double dp = 0, dv = 0;
    for (std::int64_t e = threadIdx.x; e < size; e += blockDim.x) {
      const std::int64_t i = e % rows, j = e / rows;
      T v = 0;
      for (int a = 0; a < K; ++a) v += D[i + a * rows] * H[a + j * K];
      V[e] = v;
      dp += static_cast<double>(D[e]) * static_cast<double>(P[e]);
      dv += static_cast<double>(D[e]) * static_cast<double>(v);
    }
    dp = block_sum(dp, shared);
    dv = block_sum(dv, shared);
    if (threadIdx.x == 0) sums[2 * step] = dp, sums[2 * step + 1] = dv;
    if (step == steps) break;
    __syncthreads();  // every entry of V written
    for (std::int64_t e = threadIdx.x; e < size; e += blockDim.x) D[e] = D[e] + (P[e] - V[e]) * inv_c;
    __syncthreads();
    for (int j = warp; j < K; j += warps) {  // each column's distance from its centre, a warp per column
      const T* centre = j < M ? task + j * rows : nullptr;
      double d2 = 0;
      for (std::int64_t i = lane; i < rows; i += 32) {
        const double e = static_cast<double>(D[i + j * rows]) - (centre ? static_cast<double>(centre[i]) : 0.0);
        d2 += e * e;
      }
      d2 = warp_sum(d2);
      const double r2 = j < M ? c : c_d;
      if (lane == 0) scale[j] = d2 <= r2 ? -1.0 : sqrt(r2 / d2);
    }
    __syncthreads();
    for (std::int64_t e = threadIdx.x; e < size; e += blockDim.x) {
      const std::int64_t i = e % rows, j = e / rows;
      if (scale[j] < 0) continue;
      const double centre = j < M ? static_cast<double>(task[i + j * rows]) : 0.0;
      D[e] = static_cast<T>(centre + (static_cast<double>(D[e]) - centre) * scale[j]);
    }
    __syncthreads();
  }
  __syncthreads();
  for (int e = threadIdx.x; e < K * K; e += blockDim.x) {  // G = D^T D of the final D
    const int a = e % K, b = e / K;
    double t = 0;
    for (std::int64_t i = 0; i < rows; ++i) t += static_cast<double>(D[i + a * rows]) * static_cast<double>(D[i + b * rows]);
    G[e] = static_cast<T>(t);
  }
}

template <class T>
__global__ void sum_of_squares_kernel(const T* X, std::int64_t rows, std::int64_t N, std::int64_t ldx, double* partial) {
  __shared__ double shared[32];
  double t = 0;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < rows * N;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double v = static_cast<double>(X[e % rows + (e / rows) * ldx]);
    t += v * v;
  }
  t = block_sum(t, shared);
  if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

template <class T, int KMAX>
void launch_fused(const T* G, int K, const T* DtX, T* S, std::int64_t N, int steps, T inv_c, T tau, double* partial,
                  cudaStream_t stream) {
  fused_coefficients_kernel<T, KMAX>
      <<<blocks_for(N), kThreads, 0, stream>>>(G, K, DtX, S, N, steps, inv_c, tau, partial);
}

}  // namespace

int blocks_for(std::int64_t work) {
  return static_cast<int>(std::clamp<std::int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

template <class T>
void fused_coefficients(const T* G, int K, const T* DtX, T* S, std::int64_t N, int steps, T inv_c, T tau,
                        double* partial, cudaStream_t stream) {
  // the register arrays are sized at compile time: the smallest of these at least K
  if (K <= 4)
    launch_fused<T, 4>(G, K, DtX, S, N, steps, inv_c, tau, partial, stream);
  else if (K <= 8)
    launch_fused<T, 8>(G, K, DtX, S, N, steps, inv_c, tau, partial, stream);
  else if (K <= 12)
    launch_fused<T, 12>(G, K, DtX, S, N, steps, inv_c, tau, partial, stream);
  else if (K <= 16)
    launch_fused<T, 16>(G, K, DtX, S, N, steps, inv_c, tau, partial, stream);
  else if (K <= 24)
    launch_fused<T, 24>(G, K, DtX, S, N, steps, inv_c, tau, partial, stream);
  else
    launch_fused<T, kFusedMaxAtoms>(G, K, DtX, S, N, steps, inv_c, tau, partial, stream);
  check_launch("ADL's fused coefficient steps");
}

template <class T>
void coefficient_pass(const T* DtX, const T* W, T* S, std::int64_t K, std::int64_t N, T inv_c, T tau, double* partial,
                      cudaStream_t stream) {
  coefficient_pass_kernel<T><<<blocks_for(N), kThreads, 0, stream>>>(DtX, W, S, K, N, inv_c, tau, partial);
  check_launch("ADL's coefficient step");
}

void sum_partials(const double* partial, int blocks, int count, double* out, cudaStream_t stream) {
  sum_partials_kernel<<<count, kThreads, 0, stream>>>(partial, blocks, count, out);
  check_launch("partial sums");
}

template <class T>
void dictionary_steps(T* D, const T* P, const T* H, std::int64_t rows, int K, const T* task, int M, double c,
                      double c_d, int steps, T inv_c, T* V, double* sums, T* G, cudaStream_t stream) {
  const std::size_t shared = static_cast<std::size_t>(K) * sizeof(double);
  if (shared > 48 * 1024)
    check(cudaFuncSetAttribute(dictionary_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)),
          "ADL's dictionary kernel (shared memory for K atoms)");
  dictionary_kernel<T><<<1, kDictionaryThreads, shared, stream>>>(D, P, H, rows, K, task, M, c, c_d, steps, inv_c, V,
                                                                   sums, G);
  check_launch("ADL's dictionary steps");
}

template <class T>
void sum_of_squares(const T* X, std::int64_t rows, std::int64_t N, std::int64_t ldx, double* partial,
                    cudaStream_t stream) {
  sum_of_squares_kernel<T><<<blocks_for(rows * N), kThreads, 0, stream>>>(X, rows, N, ldx, partial);
  check_launch("sum of squares");
}

#define LINV_ADL_KERNELS(T)                                                                                       \
  template void fused_coefficients<T>(const T*, int, const T*, T*, std::int64_t, int, T, T, double*, cudaStream_t); \
  template void coefficient_pass<T>(const T*, const T*, T*, std::int64_t, std::int64_t, T, T, double*, cudaStream_t); \
  template void dictionary_steps<T>(T*, const T*, const T*, std::int64_t, int, const T*, int, double, double, int, T, \
                                    T*, double*, T*, cudaStream_t);                                                  \
  template void sum_of_squares<T>(const T*, std::int64_t, std::int64_t, std::int64_t, double*, cudaStream_t);
LINV_ADL_KERNELS(float)
LINV_ADL_KERNELS(double)
#undef LINV_ADL_KERNELS

}  // namespace linv::cuda::adl_kernels
