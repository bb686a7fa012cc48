// Batch-OMP and k-SVD kernels (declared in src/cuda/fmri.hpp). OMP works in float64 whatever T is, as
// the CPU code does, so both pick the same atoms on the same data.
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>

#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdint>

#include "common/fmri_rules.hpp"
#include "cuda/context.hpp"
#include "cuda/fmri.hpp"
#include "cuda/reduce.cuh"

namespace linv::cuda::fmri_kernels {
namespace {

constexpr int kThreads = 256;

int blocks_for(std::int64_t work, int per_block = kThreads, std::int64_t cap = 1 << 16) {
  const std::int64_t b = (work + per_block - 1) / per_block;
  return static_cast<int>(b < 1 ? 1 : (b > cap ? cap : b));
}

// ---- Batch-OMP, one thread per signal --------------------------------------------------------------
// The CPU's omp_one (src/fmri/fmri.cpp) with its state in fixed-size arrays; G in shared memory.
template <class T, int KMAX, int TMAX>
__global__ void omp_thread_kernel(const T* G, int K, const T* DtX, const double* norms, double tolerance, int T0,
                                  std::int64_t N, std::int64_t* count, std::int64_t* atoms, T* values, double* err) {
  extern __shared__ double shared_G[];
  for (int e = threadIdx.x; e < K * K; e += blockDim.x) shared_G[e] = static_cast<double>(G[e]);
  __syncthreads();
  auto g = [&](int r, int c) { return shared_G[r + c * K]; };
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < N;
       j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const T* alpha0 = DtX + j * K;
    double alpha[KMAX], L[TMAX * TMAX], gamma[TMAX], w[TMAX];
    int chosen[TMAX];
    for (int a = 0; a < K; ++a) alpha[a] = static_cast<double>(alpha0[a]);
    const double norm = norms ? norms[j] : 0.0;
    double residual = norm, delta = 0, first = 0;
    int m = 0;
    for (int n = 0; n < T0; ++n) {
      if (tolerance > 0 && residual <= tolerance) break;
      int best = 0;
      for (int a = 1; a < K; ++a)
        if (fabs(alpha[a]) > fabs(alpha[best])) best = a;
      const double top = alpha[best];
      bool again = false;
      for (int p = 0; p < n; ++p) again |= chosen[p] == best;
      if (n == 0) first = top;
      if (::linv::fmri::rules::omp_correlations_exhausted<T>(top, first) || again) break;
      if (n > 0) {
        for (int p = 0; p < n; ++p) {
          double t = g(chosen[p], best);
          for (int q = 0; q < p; ++q) t -= L[p + q * TMAX] * w[q];
          w[p] = t / L[p + p * TMAX];
        }
        double d = g(best, best);
        for (int p = 0; p < n; ++p) d -= w[p] * w[p];
        if (::linv::fmri::rules::omp_atom_dependent<T>(d, g(best, best))) break;
        for (int p = 0; p < n; ++p) L[n + p * TMAX] = w[p];
        L[n + n * TMAX] = sqrt(d);
      } else {
        L[0] = sqrt(g(best, best));
      }
      chosen[n] = best;
      m = n + 1;
      for (int p = 0; p < m; ++p) {
        double t = static_cast<double>(alpha0[chosen[p]]);
        for (int q = 0; q < p; ++q) t -= L[p + q * TMAX] * gamma[q];
        gamma[p] = t / L[p + p * TMAX];
      }
      for (int p = m - 1; p >= 0; --p) {
        double t = gamma[p];
        for (int q = p + 1; q < m; ++q) t -= L[q + p * TMAX] * gamma[q];
        gamma[p] = t / L[p + p * TMAX];
      }
      double inner = 0;
      for (int a = 0; a < K; ++a) {
        double beta = 0;
        for (int p = 0; p < m; ++p) beta += g(a, chosen[p]) * gamma[p];
        alpha[a] = static_cast<double>(alpha0[a]) - beta;
        for (int p = 0; p < m; ++p)
          if (chosen[p] == a) inner += gamma[p] * beta;
      }
      residual += delta - inner;
      delta = inner;
    }
    double fit = 0;
    for (int p = 0; p < T0; ++p) {  // slots past the count hold zeros, as on the CPU
      atoms[p + j * T0] = p < m ? chosen[p] : 0;
      values[p + j * T0] = p < m ? static_cast<T>(gamma[p]) : T(0);
      if (p < m) fit += gamma[p] * static_cast<double>(alpha0[chosen[p]]);
    }
    count[j] = m;
    if (err) err[j] = fmax(norm - fit, 0.0);
  }
}

// ---- Batch-OMP, one warp per signal ----------------------------------------------------------------
// The same steps with the K correlations spread over the lanes and each inner product of the Cholesky
// updates reduced across the warp; the state lives in per-warp global scratch, so K and T0 are unbounded.

template <class T>
__global__ void omp_warp_kernel(const T* G, int K, const T* DtX, const double* norms, double tolerance, int T0,
                                std::int64_t N, std::int64_t* count, std::int64_t* atoms, T* values, double* err,
                                double* scratch, int* chosen_scratch) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warp = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32,
                     warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  double* alpha = scratch + warp * (K + T0 * T0 + 2 * T0);
  double* L = alpha + K;
  double* gamma = L + T0 * T0;
  double* w = gamma + T0;
  int* chosen = chosen_scratch + warp * T0;
  auto g = [&](int r, int c) { return static_cast<double>(G[r + c * static_cast<std::int64_t>(K)]); };
  for (std::int64_t j = warp; j < N; j += warps) {
    const T* alpha0 = DtX + j * K;
    for (int a = lane; a < K; a += 32) alpha[a] = static_cast<double>(alpha0[a]);
    __syncwarp();
    const double norm = norms ? norms[j] : 0.0;
    double residual = norm, delta = 0, first = 0;
    int m = 0;
    for (int n = 0; n < T0; ++n) {
      if (tolerance > 0 && residual <= tolerance) break;
      // the first atom of largest |alpha|: each lane's first best, then the warp's (ties to the lower index)
      double bv = -1;
      int bi = K;
      for (int a = lane; a < K; a += 32)
        if (fabs(alpha[a]) > bv) bv = fabs(alpha[a]), bi = a;
      for (int o = 16; o > 0; o /= 2) {
        const double ov = __shfl_xor_sync(0xffffffffu, bv, o);
        const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (ov > bv || (ov == bv && oi < bi)) bv = ov, bi = oi;
      }
      const int best = bi;
      bool hit = false;
      for (int p = lane; p < n; p += 32) hit |= chosen[p] == best;
      const bool again = __any_sync(0xffffffffu, hit);
      const double top = alpha[best];
      if (n == 0) first = top;
      if (::linv::fmri::rules::omp_correlations_exhausted<T>(top, first) || again) break;
      if (n > 0) {
        for (int p = 0; p < n; ++p) {
          double part = 0;
          for (int q = lane; q < p; q += 32) part += L[p + q * T0] * w[q];
          const double t = warp_sum(part);
          if (lane == 0) w[p] = (g(chosen[p], best) - t) / L[p + p * T0];
          __syncwarp();
        }
        double part = 0;
        for (int p = lane; p < n; p += 32) part += w[p] * w[p];
        const double d = g(best, best) - warp_sum(part);
        if (::linv::fmri::rules::omp_atom_dependent<T>(d, g(best, best))) break;
        for (int p = lane; p < n; p += 32) L[n + p * T0] = w[p];
        if (lane == 0) L[n + n * T0] = sqrt(d);
      } else if (lane == 0) {
        L[0] = sqrt(g(best, best));
      }
      if (lane == 0) chosen[n] = best;
      __syncwarp();
      m = n + 1;
      for (int p = 0; p < m; ++p) {
        double part = 0;
        for (int q = lane; q < p; q += 32) part += L[p + q * T0] * gamma[q];
        const double t = warp_sum(part);
        if (lane == 0) gamma[p] = (static_cast<double>(alpha0[chosen[p]]) - t) / L[p + p * T0];
        __syncwarp();
      }
      for (int p = m - 1; p >= 0; --p) {
        double part = 0;
        for (int q = p + 1 + lane; q < m; q += 32) part += L[q + p * T0] * gamma[q];
        const double t = warp_sum(part);
        if (lane == 0) gamma[p] = (gamma[p] - t) / L[p + p * T0];
        __syncwarp();
      }
      double part = 0;
      for (int a = lane; a < K; a += 32) {
        double beta = 0;
        for (int p = 0; p < m; ++p) beta += g(a, chosen[p]) * gamma[p];
        alpha[a] = static_cast<double>(alpha0[a]) - beta;
        for (int p = 0; p < m; ++p)
          if (chosen[p] == a) part += gamma[p] * beta;
      }
      const double inner = warp_sum(part);
      __syncwarp();
      residual += delta - inner;
      delta = inner;
    }
    double part = 0;
    for (int p = lane; p < T0; p += 32) {
      atoms[p + j * T0] = p < m ? chosen[p] : 0;
      values[p + j * T0] = p < m ? static_cast<T>(gamma[p]) : T(0);
      if (p < m) part += gamma[p] * static_cast<double>(alpha0[chosen[p]]);
    }
    const double fit = warp_sum(part);
    if (lane == 0) {
      count[j] = m;
      if (err) err[j] = fmax(norm - fit, 0.0);
    }
    __syncwarp();
  }
}

// ---- k-SVD's steps ---------------------------------------------------------------------------------

template <class T>
__global__ void column_norms_kernel(const T* X, std::int64_t rows, std::int64_t N, std::int64_t ldx, double* norms) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warp = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32,
                     warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  for (std::int64_t j = warp; j < N; j += warps) {
    double s = 0;
    for (std::int64_t i = lane; i < rows; i += 32) {
      const double v = static_cast<double>(X[i + j * ldx]);
      s += v * v;
    }
    s = warp_sum(s);
    if (lane == 0) norms[j] = s;
  }
}

template <class T>
__global__ void scatter_codes_kernel(const std::int64_t* count, const std::int64_t* atoms, const T* values, int T0, std::int64_t K,
                                     std::int64_t N, const double* err_prev, double* err, T* Gamma) {
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < N;
       j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (err_prev && err_prev[j] < err[j]) {
      err[j] = err_prev[j];
      continue;
    }
    T* column = Gamma + j * K;
    for (std::int64_t a = 0; a < K; ++a) column[a] = T(0);
    for (std::int64_t p = 0; p < count[j]; ++p) column[atoms[p + j * T0]] = values[p + j * T0];
  }
}

template <class T>
__global__ void count_users_kernel(const T* Gamma, std::int64_t K, std::int64_t N, T threshold, int* users) {
  extern __shared__ int block_users[];
  for (std::int64_t a = threadIdx.x; a < K; a += blockDim.x) block_users[a] = 0;
  __syncthreads();
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < K * N;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    if (fabs(static_cast<double>(Gamma[e])) > static_cast<double>(threshold)) atomicAdd(&block_users[e % K], 1);
  __syncthreads();
  for (std::int64_t a = threadIdx.x; a < K; a += blockDim.x)
    if (block_users[a] > 0) atomicAdd(&users[a], block_users[a]);
}

template <class T>
__global__ void code_errors_kernel(const T* G, const T* DtX, const T* Gamma, const double* norms, std::int64_t K,
                                   std::int64_t N, double* err) {
  extern __shared__ double shared_G[];
  for (std::int64_t e = threadIdx.x; e < K * K; e += blockDim.x) shared_G[e] = static_cast<double>(G[e]);
  __syncthreads();
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < N;
       j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const T* gamma = Gamma + j * K;
    const T* alpha = DtX + j * K;
    double e = norms[j];
    for (std::int64_t a = 0; a < K; ++a) {
      const double ga = static_cast<double>(gamma[a]);
      if (ga == 0) continue;
      double Gg = 0;
      for (std::int64_t b = 0; b < K; ++b) Gg += shared_G[a + b * K] * static_cast<double>(gamma[b]);
      e += ga * (Gg - 2 * static_cast<double>(alpha[a]));
    }
    err[j] = fmax(e, 0.0);
  }
}

template <class T>
__global__ void approximate_atom_kernel(const T* t, const T* c, T* D, std::int64_t rows, std::int64_t K, std::int64_t ldd,
                                        std::int64_t j, T* b, int* skip, double* atom) {
  __shared__ double partial[32];
  double s = 0;
  for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) {
    double v = static_cast<double>(t[i]);
    for (std::int64_t a = 0; a < K; ++a)
      if (a != j) v -= static_cast<double>(D[i + a * ldd]) * static_cast<double>(c[a]);
    atom[i] = v;
    s += v * v;
  }
  const double norm = sqrt(block_sum(s, partial));
  if (!(norm > 0)) {
    if (threadIdx.x == 0) *skip = 1;
    return;
  }
  for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) atom[i] /= norm;
  __syncthreads();  // each thread reads every entry below (global memory, visible within the block)
  for (std::int64_t a = 0; a < K; ++a) {  // b_a = d_a^T atom before d_j changes
    double p = 0;
    if (a != j)
      for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) p += static_cast<double>(D[i + a * ldd]) * atom[i];
    const double total = block_sum(p, partial);
    if (threadIdx.x == 0) b[a] = static_cast<T>(a == j ? 0.0 : total);
  }
  for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) D[i + j * ldd] = static_cast<T>(atom[i]);
  if (threadIdx.x == 0) *skip = 0;
}

template <class T>
__global__ void update_coefficients_kernel(const T* h, const T* b, T* Gamma, std::int64_t K, std::int64_t N,
                                           std::int64_t j, const int* skip) {
  if (*skip) return;
  for (std::int64_t s = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; s < N;
       s += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    T* gamma = Gamma + s * K;
    if (gamma[j] == T(0)) continue;
    double v = static_cast<double>(h[s]);
    for (std::int64_t a = 0; a < K; ++a) v -= static_cast<double>(gamma[a]) * static_cast<double>(b[a]);
    gamma[j] = static_cast<T>(v);
  }
}

template <class T>
struct UsesAtom {
  const T* Gamma;
  std::int64_t K, j;
  __device__ bool operator()(std::int64_t s) const { return Gamma[j + s * K] != T(0); }
};

template <class T>
__global__ void error_columns_kernel(const T* X, std::int64_t ldx, const T* D, std::int64_t ldd, const T* Gamma,
                                     std::int64_t rows, std::int64_t K, std::int64_t j, const std::int64_t* users,
                                     std::int64_t m, double* E) {
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < rows * m;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = e % rows, u = e / rows, s = users[u];
    double v = static_cast<double>(X[i + s * ldx]);
    for (std::int64_t a = 0; a < K; ++a)
      if (a != j) v -= static_cast<double>(D[i + a * ldd]) * static_cast<double>(Gamma[a + s * K]);
    E[e] = v;
  }
}

template <class T>
__global__ void set_coefficients_kernel(const double* gamma, double scale, const std::int64_t* users, std::int64_t m,
                                        T* Gamma, std::int64_t K, std::int64_t j) {
  for (std::int64_t u = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; u < m;
       u += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    Gamma[j + users[u] * K] = gamma ? static_cast<T>(scale * gamma[u]) : T(0);
}

template <class T>
__global__ void store_column_kernel(const double* src, T* dst, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    dst[i] = static_cast<T>(src[i]);
}

}  // namespace

bool thread_kernel_fits(std::int64_t K, int T0) { return K <= kThreadMaxAtoms && T0 <= kThreadMaxSparsity; }

namespace {
constexpr int kWarpBlocks = 4096;  // the warp kernel's grid: 4096 blocks of 8 warps, each warp looping over signals
OmpGpuKernel resolve(OmpGpuKernel kernel, std::int64_t K, int T0) {
  // Auto: the thread kernel where it fits (measured faster at the fMRI sizes, see docs/gpu-performance-notes.md)
  if (kernel == OmpGpuKernel::Auto) return thread_kernel_fits(K, T0) ? OmpGpuKernel::Thread : OmpGpuKernel::Warp;
  return kernel;
}
}  // namespace

// The warp kernel's grid: whole blocks of kThreads / 32 warps, one warp per signal up to kWarpBlocks blocks.
int warp_blocks(std::int64_t N) {
  constexpr std::int64_t per_block = kThreads / 32;
  return static_cast<int>(std::min<std::int64_t>(kWarpBlocks, (std::max<std::int64_t>(N, 1) + per_block - 1) / per_block));
}

std::size_t omp_scratch_bytes(OmpGpuKernel kernel, std::int64_t K, int T0, std::int64_t N) {
  if (resolve(kernel, K, T0) == OmpGpuKernel::Thread) return 0;
  const std::int64_t warps = static_cast<std::int64_t>(warp_blocks(N)) * (kThreads / 32);
  return static_cast<std::size_t>(warps) * (static_cast<std::size_t>(K + T0 * T0 + 2 * T0) * sizeof(double) +
                                            static_cast<std::size_t>(T0) * sizeof(int));
}

template <class T>
void batch_omp(OmpGpuKernel kernel, const T* G, std::int64_t K, const T* DtX, const double* norms, double tolerance, int T0,
               std::int64_t N, std::int64_t* count, std::int64_t* atoms, T* values, double* err, void* scratch,
               cudaStream_t stream) {
  if (N == 0) return;
  if (resolve(kernel, K, T0) == OmpGpuKernel::Thread) {
    const std::size_t shared = static_cast<std::size_t>(K * K) * sizeof(double);
    omp_thread_kernel<T, kThreadMaxAtoms, kThreadMaxSparsity><<<blocks_for(N, 128), 128, shared, stream>>>(
        G, static_cast<int>(K), DtX, norms, tolerance, T0, N, count, atoms, values, err);
    check_launch("Batch-OMP (a thread per signal)");
    return;
  }
  const int blocks = warp_blocks(N);
  double* state = static_cast<double*>(scratch);
  int* chosen = reinterpret_cast<int*>(state + static_cast<std::size_t>(blocks) * (kThreads / 32) * (K + T0 * T0 + 2 * T0));
  omp_warp_kernel<T><<<blocks, kThreads, 0, stream>>>(G, static_cast<int>(K), DtX, norms, tolerance, T0, N, count,
                                                       atoms, values, err, state, chosen);
  check_launch("Batch-OMP (a warp per signal)");
}

template <class T>
void column_norms(const T* X, std::int64_t rows, std::int64_t N, std::int64_t ldx, double* norms, cudaStream_t stream) {
  if (N == 0) return;
  column_norms_kernel<T><<<blocks_for(N * 32), kThreads, 0, stream>>>(X, rows, N, ldx, norms);
  check_launch("column norms");
}

template <class T>
void scatter_codes(const std::int64_t* count, const std::int64_t* atoms, const T* values, int T0, std::int64_t K, std::int64_t N,
                   const double* err_prev, double* err, T* Gamma, cudaStream_t stream) {
  if (N == 0) return;
  scatter_codes_kernel<T><<<blocks_for(N), kThreads, 0, stream>>>(count, atoms, values, T0, K, N, err_prev, err, Gamma);
  check_launch("codes scatter");
}

template <class T>
void count_users(const T* Gamma, std::int64_t K, std::int64_t N, T threshold, int* users, cudaStream_t stream) {
  check(cudaMemsetAsync(users, 0, static_cast<std::size_t>(K) * sizeof(int), stream), "cudaMemset");
  if (N == 0) return;
  count_users_kernel<T><<<blocks_for(K * N, kThreads, 1024), kThreads, static_cast<std::size_t>(K) * sizeof(int), stream>>>(
      Gamma, K, N, threshold, users);
  check_launch("atom use counts");
}

template <class T>
void code_errors(const T* G, const T* DtX, const T* Gamma, const double* norms, std::int64_t K, std::int64_t N,
                 double* err, cudaStream_t stream) {
  if (N == 0) return;
  code_errors_kernel<T><<<blocks_for(N), kThreads, static_cast<std::size_t>(K * K) * sizeof(double), stream>>>(
      G, DtX, Gamma, norms, K, N, err);
  check_launch("representation errors");
}

template <class T>
void approximate_atom(const T* t, const T* c, T* D, std::int64_t rows, std::int64_t K, std::int64_t ldd, std::int64_t j,
                      T* b, int* skip, double* work, cudaStream_t stream) {
  approximate_atom_kernel<T><<<1, 1024, 0, stream>>>(t, c, D, rows, K, ldd, j, b, skip, work);
  check_launch("approximate atom update");
}

template <class T>
void update_coefficients(const T* h, const T* b, T* Gamma, std::int64_t K, std::int64_t N, std::int64_t j,
                         const int* skip, cudaStream_t stream) {
  if (N == 0) return;
  update_coefficients_kernel<T><<<blocks_for(N), kThreads, 0, stream>>>(h, b, Gamma, K, N, j, skip);
  check_launch("coefficient update");
}

std::size_t select_scratch_bytes(std::int64_t N) {  // the same for either T: the predicate holds no state CUB sizes
  std::size_t bytes = 0;
  check(cub::DeviceSelect::If(nullptr, bytes, ::thrust::counting_iterator<std::int64_t>(0),
                              static_cast<std::int64_t*>(nullptr), static_cast<std::int64_t*>(nullptr), N,
                              UsesAtom<float>{nullptr, 1, 0}),
        "sizing the selection of an atom's signals");
  return bytes;
}

template <class T>
void select_users(const T* Gamma, std::int64_t K, std::int64_t N, std::int64_t j, std::int64_t* users, std::int64_t* m,
                  void* scratch, std::size_t scratch_bytes, cudaStream_t stream) {
  // CUB writes the count in its offset type, which may be narrower than *m: zero all of it first
  check(cudaMemsetAsync(m, 0, sizeof(std::int64_t), stream), "cudaMemset");
  check(cub::DeviceSelect::If(scratch, scratch_bytes, ::thrust::counting_iterator<std::int64_t>(0), users, m, N,
                              UsesAtom<T>{Gamma, K, j}, stream),
        "selecting an atom's signals");
}

template <class T>
void error_columns(const T* X, std::int64_t ldx, const T* D, std::int64_t ldd, const T* Gamma, std::int64_t rows,
                   std::int64_t K, std::int64_t j, const std::int64_t* users, std::int64_t m, double* E,
                   cudaStream_t stream) {
  if (m == 0) return;
  error_columns_kernel<T><<<blocks_for(rows * m), kThreads, 0, stream>>>(X, ldx, D, ldd, Gamma, rows, K, j, users, m, E);
  check_launch("error columns");
}

template <class T>
void set_coefficients(const double* gamma, double scale, const std::int64_t* users, std::int64_t m, T* Gamma,
                      std::int64_t K, std::int64_t j, cudaStream_t stream) {
  if (m == 0) return;
  set_coefficients_kernel<T><<<blocks_for(m), kThreads, 0, stream>>>(gamma, scale, users, m, Gamma, K, j);
  check_launch("coefficient scatter");
}

template <class T>
void store_column(const double* src, T* dst, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  store_column_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(src, dst, count);
  check_launch("column store");
}

#define LINV_FMRI_KERNELS(T)                                                                                            \
  template void batch_omp<T>(OmpGpuKernel, const T*, std::int64_t, const T*, const double*, double, int, std::int64_t,     \
                             std::int64_t*, std::int64_t*, T*, double*, void*, cudaStream_t);                                             \
  template void column_norms<T>(const T*, std::int64_t, std::int64_t, std::int64_t, double*, cudaStream_t);             \
  template void scatter_codes<T>(const std::int64_t*, const std::int64_t*, const T*, int, std::int64_t, std::int64_t, const double*,      \
                                 double*, T*, cudaStream_t);                                                            \
  template void count_users<T>(const T*, std::int64_t, std::int64_t, T, int*, cudaStream_t);                            \
  template void code_errors<T>(const T*, const T*, const T*, const double*, std::int64_t, std::int64_t, double*,        \
                               cudaStream_t);                                                                           \
  template void approximate_atom<T>(const T*, const T*, T*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,    \
                                    T*, int*, double*, cudaStream_t);                                                            \
  template void update_coefficients<T>(const T*, const T*, T*, std::int64_t, std::int64_t, std::int64_t, const int*,    \
                                       cudaStream_t);                                                                   \
  template void select_users<T>(const T*, std::int64_t, std::int64_t, std::int64_t, std::int64_t*, std::int64_t*,      \
                                void*, std::size_t, cudaStream_t);                                                      \
  template void error_columns<T>(const T*, std::int64_t, const T*, std::int64_t, const T*, std::int64_t, std::int64_t,  \
                                 std::int64_t, const std::int64_t*, std::int64_t, double*, cudaStream_t);               \
  template void set_coefficients<T>(const double*, double, const std::int64_t*, std::int64_t, T*, std::int64_t,         \
                                    std::int64_t, cudaStream_t);                                                        \
  template void store_column<T>(const double*, T*, std::int64_t, cudaStream_t);
LINV_FMRI_KERNELS(float)
LINV_FMRI_KERNELS(double)
#undef LINV_FMRI_KERNELS

}  // namespace linv::cuda::fmri_kernels
