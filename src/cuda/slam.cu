// Bordered SLAM Jacobians on the GPU (see include/linv/slam.hpp and src/slam/slam.cpp for the algebra).
// J is n x (k + s): k dense columns, then s segment columns, segment j owning rows [start_j, start_j+1).
// N = J^T J (+ damping on its diagonal) = [A B; B^T D] is factored through S = A - B D^-1 B^T:
//   per segment (one block each): D_j, B(:, j) and, for a step, y_j = (J^T d)_{k+j};
//   one block: S, its Cholesky factor (k <= kMaxDense, in shared memory), x0 = S^-1 (r0 - B D^-1 y);
//   x1 = D^-1 (y - B^T x0).
// J^+ column r is N^-1 times row r of J; its segment part is -D^-1 B^T x0 plus v_r / D_s(r) in row s(r),
// written by one kernel in memory order, at the write bandwidth.
// The conditioning (src/kernels/slam.hpp: variance inflation factors) comes from S^-1, formed in the Schur
// kernel (k solves with its factor), and one more kernel over the segments; the host reads it back with
// the flags.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/backend.hpp"
#include "cuda/context.hpp"
#include "cuda/reduce.cuh"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

constexpr int kThreads = 128;
constexpr std::int64_t kMaxDense = 32;  // dense columns the kernels handle (the Schur complement's order)

// J's arrays on the device: n x k dense columns, one segment value per row, segment j owning rows
// [starts[j], starts[j + 1]), and each row's segment.
template <class T>
struct BorderedView {
  const T* dense;
  std::int64_t ld;
  const T* values;
  const std::int64_t* starts;
  const std::int64_t* segment_of;
  std::int64_t n, k, segments;
};

// A = J_d^T J_d (lower triangle) and z = J_d^T d, by blocks of rows added atomically into zeroed A and z:
// blockIdx.y picks the entry (a pair p >= q of dense columns, or p and d for z). cuBLAS's syrk and gemm
// took milliseconds on these k x k results of n-long inner products.
template <class T>
__global__ void gram_kernel(BorderedView<T> J, const T* d, T* A, T* z) {
  __shared__ T shared[32];
  const std::int64_t pairs = J.k * (J.k + 1) / 2, e = blockIdx.y;
  std::int64_t p = 0, q = 0;
  const T* right = d;
  if (e < pairs) {  // e -> (p, q), q <= p, column by column of the lower triangle
    std::int64_t rest = e;
    while (rest >= J.k - q) rest -= J.k - q++;
    p = q + rest;
    right = J.dense + q * J.ld;
  } else {
    p = e - pairs;
  }
  const T* left = J.dense + p * J.ld;
  T sum = 0;
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < J.n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    sum += left[r] * right[r];
  sum = block_sum(sum, shared);
  if (threadIdx.x == 0) atomicAdd(e < pairs ? &A[p + q * J.k] : &z[p], sum);
}

// x := (L L^T)^-1 x for the k x k lower factor L (column-major), in one thread.
template <class T>
__device__ void cholesky_solve_small(const T* L, std::int64_t k, T* x) {
  for (std::int64_t p = 0; p < k; ++p) {
    T t = x[p];
    for (std::int64_t q = 0; q < p; ++q) t -= L[p + q * k] * x[q];
    x[p] = t / L[p + p * k];
  }
  for (std::int64_t p = k - 1; p >= 0; --p) {
    T t = x[p];
    for (std::int64_t q = p + 1; q < k; ++q) t -= L[q + p * k] * x[q];
    x[p] = t / L[p + p * k];
  }
}

// One block per segment j: D_j = sum v^2, B(p, j) = sum J_d(r, p) v, y_j = sum v d (when d is given).
template <class T>
__global__ void segment_kernel(BorderedView<T> J, const T* d, T* D, T* B, T* y, double damping, int* unobservable) {
  __shared__ T shared[32];
  const std::int64_t j = blockIdx.x, r0 = J.starts[j], r1 = J.starts[j + 1];
  T dd = 0, yy = 0;
  for (std::int64_t r = r0 + threadIdx.x; r < r1; r += blockDim.x) {
    const T v = J.values[r];
    dd += v * v;
    if (d) yy += v * d[r];
  }
  dd = block_sum(dd, shared);
  if (threadIdx.x == 0) {
    D[j] = dd * static_cast<T>(1 + damping);
    if (!(dd > 0)) atomicMin(unobservable, static_cast<int>(j));
  }
  if (d) {
    yy = block_sum(yy, shared);
    if (threadIdx.x == 0) y[j] = yy;
  }
  for (std::int64_t p = 0; p < J.k; ++p) {
    T b = 0;
    for (std::int64_t r = r0 + threadIdx.x; r < r1; r += blockDim.x) b += J.dense[r + p * J.ld] * J.values[r];
    b = block_sum(b, shared);
    if (threadIdx.x == 0) B[p + j * J.k] = b;
  }
}

// One block: S = A (1 + damping on its diagonal) - B D^-1 B^T, its Cholesky factor L (into L, k x k), and,
// when y is given, x0 = S^-1 (z - B D^-1 y) into x. *info: the failing dense parameter (1-based), or 0.
// When Sinv is given and S is positive definite: S^-1 into Sinv (k x k) and the dense parameters' variance
// inflation factors (S^-1)_pp A_pp (1 + damping) into inflation (k).
template <class T>
__global__ void schur_kernel(std::int64_t k, std::int64_t s, const T* A, const T* B, const T* D, const T* z,
                             const T* y, double damping, T* L, T* x, int* info, T* Sinv, double* inflation) {
  __shared__ T S[kMaxDense * kMaxDense];
  __shared__ T rhs[kMaxDense];
  __shared__ int failed;
  __shared__ T partial[32];
  // the sums over segments by the whole block, one entry at a time (k <= 32: at most 1056 entries)
  for (std::int64_t e = 0; e < k * k + (y ? k : 0); ++e) {
    const bool schur = e < k * k;
    const std::int64_t p = schur ? e % k : e - k * k, q = schur ? e / k : 0;
    if (schur && q > p) continue;  // the lower triangle is enough
    T sum = 0;
    for (std::int64_t j = threadIdx.x; j < s; j += blockDim.x)
      sum += B[p + j * k] * (schur ? B[q + j * k] : y[j]) / D[j];
    sum = block_sum(sum, partial);
    if (threadIdx.x == 0) {
      if (schur)
        S[e] = A[p + q * k] * (p == q ? static_cast<T>(1 + damping) : T(1)) - sum;  // A's lower triangle
      else
        rhs[p] = z[p] - sum;
    }
  }
  if (threadIdx.x == 0) failed = 0;
  __syncthreads();
  // right-looking Cholesky on the lower triangle
  for (std::int64_t c = 0; c < k; ++c) {
    if (threadIdx.x == 0) {
      const T pivot = S[c + c * k];
      if (!(pivot > 0)) {
        if (!failed) failed = static_cast<int>(c) + 1;
        S[c + c * k] = T(1);  // keep going harmlessly; the result is refused
      } else {
        S[c + c * k] = sqrt(pivot);
      }
    }
    __syncthreads();
    for (std::int64_t r = c + 1 + threadIdx.x; r < k; r += blockDim.x) S[r + c * k] /= S[c + c * k];
    __syncthreads();
    for (std::int64_t e = threadIdx.x; e < (k - c - 1) * (k - c - 1); e += blockDim.x) {
      const std::int64_t r = c + 1 + e % (k - c - 1), q = c + 1 + e / (k - c - 1);
      if (r >= q) S[r + q * k] -= S[r + c * k] * S[q + c * k];
    }
    __syncthreads();
  }
  for (std::int64_t e = threadIdx.x; e < k * k; e += blockDim.x) L[e] = S[e];
  if (threadIdx.x == 0) {
    *info = failed;
    if (y) {  // L L^T x0 = rhs
      cholesky_solve_small(S, k, rhs);
      for (std::int64_t p = 0; p < k; ++p) x[p] = rhs[p];
    }
  }
  if (Sinv && !failed && threadIdx.x < k) {  // column c of S^-1: L L^T x = e_c
    const std::int64_t c = threadIdx.x;
    T column[kMaxDense];
    for (std::int64_t p = 0; p < k; ++p) column[p] = p == c ? T(1) : T(0);
    cholesky_solve_small(S, k, column);
    for (std::int64_t p = 0; p < k; ++p) Sinv[p + c * k] = column[p];
    inflation[c] = static_cast<double>(column[c]) * static_cast<double>(A[c + c * k]) * (1 + damping);
  }
}

// The larger of a and b, NaN if either is (a NaN must reach the rcond).
__device__ inline double nan_max(double a, double b) { return (b > a || isnan(b)) ? b : a; }

// One thread per segment j: its variance inflation factor 1 + D_j E_j S^-1 E_j^T (E_j = B(:, j)^T / D_j)
// into inflation[j], and the largest into *largest, atomically on the bits (the factors are positive, and
// a NaN's bits are larger still, so it wins).
template <class T>
__global__ void segment_inflation_kernel(std::int64_t k, std::int64_t s, const T* B, const T* D, const T* Sinv,
                                         double* inflation, unsigned long long* largest) {
  __shared__ double warp_largest[32];
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  double factor = 0;
  if (j < s) {
    const double d = D[j];
    double e[kMaxDense];
    for (std::int64_t p = 0; p < k; ++p) e[p] = static_cast<double>(B[p + j * k]) / d;
    double quadratic = 0;
    for (std::int64_t p = 0; p < k; ++p) {
      double w = 0;
      for (std::int64_t q = 0; q < k; ++q) w += static_cast<double>(Sinv[q + p * k]) * e[q];
      quadratic += e[p] * w;
    }
    factor = 1 + d * quadratic;
    inflation[j] = factor;
  }
  for (int offset = 16; offset > 0; offset /= 2) factor = nan_max(factor, __shfl_xor_sync(0xffffffffu, factor, offset));
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  if (lane == 0) warp_largest[warp] = factor;
  __syncthreads();
  if (threadIdx.x == 0) {
    double block = 0;
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) block = nan_max(block, warp_largest[w]);
    atomicMax(largest, static_cast<unsigned long long>(__double_as_longlong(block)));
  }
}

// x1 = D^-1 (y - B^T x0), one thread per segment.
template <class T>
__global__ void segment_solution_kernel(std::int64_t k, std::int64_t s, const T* B, const T* D, const T* y, T* x) {
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j >= s) return;
  T v = y[j];
  for (std::int64_t p = 0; p < k; ++p) v -= B[p + j * k] * x[p];
  x[k + j] = v / D[j];
}

// J^+ column r is N^-1 times row r of J: first x0_r = S^-1 (a_r - B(:, s) v_r / D_s) for every r (one
// thread each, into X0, k x n) ...
template <class T>
__global__ void pinv_dense_part_kernel(BorderedView<T> J, const T* L, const T* B, const T* D, T* X0) {
  const std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (r >= J.n) return;
  const std::int64_t k = J.k, s = J.segment_of[r];
  const T v = J.values[r], scale = v / D[s];
  T x[kMaxDense];
  for (std::int64_t p = 0; p < k; ++p) x[p] = J.dense[r + p * J.ld] - B[p + s * k] * scale;
  cholesky_solve_small(L, k, x);
  for (std::int64_t p = 0; p < k; ++p) X0[p + r * k] = x[p];
}

// ... then P itself, column by column (blocks striding over columns, threads over rows, so writes are
// consecutive): rows below k are -D^-1 B^T x0 (C = -B D^-1) plus v_r / D_s in row k + s. C is staged in
// shared memory when it fits (`staged`), so every global access but the write is once per column.
template <class T>
__global__ void pinv_fill_kernel(BorderedView<T> J, const T* X0, const T* C, const T* D, T* P, std::int64_t ldp,
                                 bool staged) {
  extern __shared__ unsigned char shared_bytes[];
  T* c_shared = reinterpret_cast<T*>(shared_bytes);
  const std::int64_t k = J.k, m = k + J.segments;
  if (staged) {
    for (std::int64_t e = threadIdx.x; e < k * J.segments; e += blockDim.x) c_shared[e] = C[e];
    __syncthreads();
  }
  const T* c = staged ? c_shared : C;
  for (std::int64_t r = blockIdx.x; r < J.n; r += gridDim.x) {
    const T* x0 = X0 + r * k;
    const std::int64_t s = J.segment_of[r];
    const T own = J.values[r] / D[s];
    T* column = P + r * ldp;
    for (std::int64_t i = threadIdx.x; i < m; i += blockDim.x) {
      T t;
      if (i < k) {
        t = x0[i];
      } else {
        const std::int64_t j = i - k;
        t = j == s ? own : T(0);
        for (std::int64_t p = 0; p < k; ++p) t += c[p + j * k] * x0[p];
      }
      column[i] = t;
    }
  }
}

// C = -B D^-1 (k x s).
template <class T>
__global__ void scaled_border_kernel(std::int64_t k, std::int64_t s, const T* B, const T* D, T* C) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (e < k * s) C[e] = -B[e] / D[e / k];
}

unsigned blocks(std::int64_t count, int threads) { return static_cast<unsigned>((count + threads - 1) / threads); }

// The factorization shared by steps and J^+: D, B, A = J_d^T J_d, and (via schur_kernel) L and x0; and the
// conditioning: S^-1, the dense parameters' variance inflation factors, the largest of the segments' (as
// bits, right after them) and each segment's.
template <class T>
struct Work {
  T *D, *B, *A, *z, *y, *L, *Sinv;  // A and z adjacent (zeroed together)
  int* flags;  // [0]: first unobservable segment (0x7f7f7f7f: none), [1]: failing dense parameter (0: none)
  double* inflation;             // k
  unsigned long long* largest;   // inflation + k
  double* segment_inflation;     // segments
};

template <class T>
Work<T> work_for(Context& ctx, std::int64_t n_cols_k, std::int64_t s) {
  const std::int64_t k = n_cols_k;
  T* base = ctx.scratch_as<T>(Slot::c, static_cast<std::size_t>(s + k * s + k * k + k + s + 2 * k * k));
  double* condition = ctx.scratch_as<double>(Slot::b, static_cast<std::size_t>(k + 1 + s));
  T* next = base;
  const auto take = [&](std::int64_t size) {
    T* p = next;
    next += size;
    return p;
  };
  T* D = take(s);
  T* B = take(k * s);
  T* A = take(k * k);
  T* z = take(k);
  T* y = take(s);
  T* L = take(k * k);
  T* Sinv = take(k * k);
  return {D,
          B,
          A,
          z,
          y,
          L,
          Sinv,
          ctx.scratch_as<int>(Slot::small, 2),
          condition,
          reinterpret_cast<unsigned long long*>(condition + k),
          condition + k + 1};
}

// Reads the flags (and with `conditioned`, the inflation factors) back and turns them into the outcome.
template <class T>
kernels::SlamOutcome outcome_of(Context& ctx, const Work<T>& w, std::int64_t k, std::int64_t s, bool conditioned) {
  const cudaStream_t stream = ctx.main().stream;
  int host[2] = {0, 0};
  std::vector<double> inflation(static_cast<std::size_t>(k + 1));  // the dense factors, the segments' largest
  check(cudaMemcpyAsync(host, w.flags, sizeof(host), cudaMemcpyDeviceToHost, stream), "cudaMemcpy");
  if (conditioned)
    check(cudaMemcpyAsync(inflation.data(), w.inflation, inflation.size() * sizeof(double), cudaMemcpyDeviceToHost,
                          stream),
          "cudaMemcpy");
  ctx.synchronize();
  kernels::SlamOutcome o;
  o.unobservable_segment = host[0] == 0x7f7f7f7f ? -1 : host[0];
  o.failing_dense = host[1];
  if (!conditioned || o.unobservable_segment >= 0 || o.failing_dense > 0) return o;
  // the largest factor, the first of equals and a NaN before all, as the CPU picks it
  const auto larger = [](double a, double b) { return a > b || (std::isnan(a) && !std::isnan(b)); };
  double worst = 0;
  for (std::int64_t p = 0; p < k; ++p) {
    const double f = inflation[static_cast<std::size_t>(p)];
    if (larger(f, worst)) worst = f, o.worst = p + 1;
  }
  const double segments = inflation[static_cast<std::size_t>(k)];  // the bits atomicMax left are a double's
  if (s > 0 && larger(segments, worst)) {
    worst = segments;
    std::vector<double> each(static_cast<std::size_t>(s));  // which segment: read back only now
    check(cudaMemcpyAsync(each.data(), w.segment_inflation, each.size() * sizeof(double), cudaMemcpyDeviceToHost,
                          stream),
          "cudaMemcpy");
    ctx.synchronize();
    const auto at = std::find_if(each.begin(), each.end(),
                                 [&](double f) { return std::isnan(segments) ? std::isnan(f) : f == segments; });
    o.worst = k + (at - each.begin()) + 1;
  }
  o.rcond = 1 / worst;
  return o;
}

// Queues the factorization for J (and, with d, the step's x0 into x): A's lower triangle and z = J_d^T d by
// cuBLAS, then the segment and Schur kernels; with `conditioned`, also the inflation factors.
template <class T>
void start_factor(Context& ctx, const BorderedView<T>& J, const T* d, double damping, const Work<T>& w, T* x,
                  bool conditioned) {
  const Lane& lane = ctx.main();
  check(cudaMemsetAsync(w.flags, 0x7f, sizeof(int), lane.stream), "cudaMemset");  // no unobservable segment
  if (conditioned) check(cudaMemsetAsync(w.largest, 0, sizeof(unsigned long long), lane.stream), "cudaMemset");
  check(cudaMemsetAsync(w.A, 0, static_cast<std::size_t>(J.k * J.k + J.k) * sizeof(T), lane.stream), "cudaMemset");
  const std::int64_t entries = J.k * (J.k + 1) / 2 + (d ? J.k : 0);
  const unsigned row_blocks = static_cast<unsigned>(std::min<std::int64_t>((J.n + 1023) / 1024, 1024));
  gram_kernel<T><<<dim3(row_blocks, static_cast<unsigned>(entries)), 256, 0, lane.stream>>>(J, d, w.A, w.z);
  check_launch("gram");
  segment_kernel<T><<<static_cast<unsigned>(J.segments), kThreads, 0, lane.stream>>>(J, d, w.D, w.B, w.y, damping,
                                                                                       w.flags);
  check_launch("segment");
  schur_kernel<T><<<1, 256, 0, lane.stream>>>(J.k, J.segments, w.A, w.B, w.D, w.z, d ? w.y : nullptr, damping, w.L, x,
                                               w.flags + 1, conditioned ? w.Sinv : nullptr, w.inflation);
  check_launch("schur");
  if (conditioned && J.segments > 0) {
    segment_inflation_kernel<T><<<blocks(J.segments, kThreads), kThreads, 0, lane.stream>>>(
        J.k, J.segments, w.B, w.D, w.Sinv, w.segment_inflation, w.largest);
    check_launch("segment inflation");
  }
}

template <Real T>
kernels::SlamOutcome step(const BorderedView<T>& J, ConstMatrixView<T> d, double damping, MatrixView<T> x) {
  Context& ctx = context_of(d.device());
  const Lane& lane = ctx.main();
  const Work<T> w = work_for<T>(ctx, J.k, J.segments);
  kernels::SlamOutcome o;  // the first column's: every column has the same J, so the same conditioning
  for (std::int64_t c = 0; c < d.cols(); ++c) {
    const T* dc = d.data() + c * ld_of(d.ld());
    T* xc = x.data() + c * ld_of(x.ld());
    start_factor<T>(ctx, J, dc, damping, w, xc, c == 0);
    segment_solution_kernel<T><<<blocks(J.segments, 256), 256, 0, lane.stream>>>(J.k, J.segments, w.B, w.D, w.y, xc);
    check_launch("segment solution");
    const kernels::SlamOutcome column = outcome_of(ctx, w, J.k, J.segments, c == 0);
    if (c == 0) o = column;
    if (o.unobservable_segment >= 0 || o.failing_dense > 0) return o;
  }
  return o;
}

template <Real T>
kernels::SlamOutcome pinv(const BorderedView<T>& J, double damping, MatrixView<T> P) {
  Context& ctx = context_of(P.device());
  const Lane& lane = ctx.main();
  const Work<T> w = work_for<T>(ctx, J.k, J.segments);
  start_factor<T>(ctx, J, nullptr, damping, w, nullptr, true);
  const kernels::SlamOutcome o = outcome_of(ctx, w, J.k, J.segments, true);
  if (o.unobservable_segment >= 0 || o.failing_dense > 0) return o;
  T* C = ctx.scratch_as<T>(Slot::d, static_cast<std::size_t>(J.k * J.segments + 1));
  scaled_border_kernel<T><<<blocks(J.k * J.segments, 256), 256, 0, lane.stream>>>(J.k, J.segments, w.B, w.D, C);
  check_launch("scaled border");
  T* X0 = ctx.scratch_as<T>(Slot::a, static_cast<std::size_t>(J.k * J.n + 1));
  pinv_dense_part_kernel<T><<<blocks(J.n, 256), 256, 0, lane.stream>>>(J, w.L, w.B, w.D, X0);
  check_launch("pinv dense part");
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device()), "cudaDeviceGetAttribute");
  const std::size_t c_bytes = static_cast<std::size_t>(J.k * J.segments) * sizeof(T);
  const bool staged = c_bytes <= 32 * 1024;  // leaves room for several blocks per multiprocessor
  pinv_fill_kernel<T><<<static_cast<unsigned>(sms * 8), 256, staged ? c_bytes : 0, lane.stream>>>(
      J, X0, C, w.D, P.data(), ld_of(P.ld()), staged);
  check_launch("pinv fill");
  ctx.synchronize();
  return o;
}

// ---- the sparse fallback: J as an operator for CGLS (src/core/krylov.hpp) ----

// A float64 matrix in compressed rows on one GPU, for cuSPARSE.
class DeviceCsr {
 public:
  DeviceCsr(Context& ctx, const SparseMatrix<double>& A)
      : rows_(bytes_of(A.rows + 1, sizeof(std::int64_t)), ctx.device()),
        columns_(bytes_of(A.nonzeros(), sizeof(std::int64_t)), ctx.device()),
        values_(bytes_of(A.nonzeros(), sizeof(double)), ctx.device()) {
    const cudaStream_t stream = ctx.main().stream;
    to_device(rows_.p, A.row_start.data(), bytes_of(A.rows + 1, sizeof(std::int64_t)), stream);
    to_device(columns_.p, A.column.data(), bytes_of(A.nonzeros(), sizeof(std::int64_t)), stream);
    to_device(values_.p, A.value.data(), bytes_of(A.nonzeros(), sizeof(double)), stream);
    wait(stream);  // the host arrays may die after this
    check(cusparseCreateCsr(&descriptor_, A.rows, A.cols, A.nonzeros(), rows_.p, columns_.p, values_.p,
                            CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
          "CSR descriptor");
  }
  ~DeviceCsr() {
    if (descriptor_) cusparseDestroySpMat(descriptor_);
  }
  DeviceCsr(const DeviceCsr&) = delete;
  DeviceCsr& operator=(const DeviceCsr&) = delete;
  cusparseSpMatDescr_t get() const noexcept { return descriptor_; }

 private:
  DeviceBuffer rows_, columns_, values_;
  cusparseSpMatDescr_t descriptor_ = nullptr;
};

// J, and J^T in compressed rows of its own, in float64 on one GPU: both of CGLS's products are then cuSPARSE's
// non-transposed SpMV, instead of a transposed SpMV that scatters into shared entries (which made the
// 200000 x 50000 step 10 % slower on the H100 although it saves forming and uploading J^T:
// docs/gpu-performance-notes.md).
class Sparse final : public kernels::LinearOperator<double> {
 public:
  Sparse(const slam::SparseJacobian<double>& J, Device device) : Sparse(context_of(device), J) {}
  Sparse(const slam::SparseJacobian<float>& J, Device device) : Sparse(context_of(device), J.cast<double>()) {}

  index rows() const override { return n_; }
  index cols() const override { return m_; }
  void apply(ConstMatrixView<double> x, MatrixView<double> y) override { multiply(J_, x, m_, y, n_); }
  void apply_transpose(ConstMatrixView<double> y, MatrixView<double> x) override { multiply(Jt_, y, n_, x, m_); }

 private:
  Sparse(Context& ctx, const SparseMatrix<double>& J)
      : ctx_(ctx), n_(J.rows), m_(J.cols), J_(ctx, J), Jt_(ctx, J.transpose()) {}

  // out := A in by SpMV, with the workspace it asks for kept between calls.
  void multiply(const DeviceCsr& A, ConstMatrixView<double> in, std::int64_t in_size, MatrixView<double> out,
                std::int64_t out_size) {
    constexpr cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseHandle_t h = ctx_.sparse();
    cusparseDnVecDescr_t vin = nullptr, vout = nullptr;
    check(cusparseCreateDnVec(&vin, in_size, const_cast<double*>(in.data()), CUDA_R_64F), "vector");
    check(cusparseCreateDnVec(&vout, out_size, out.data(), CUDA_R_64F), "vector");
    const double one = 1, zero = 0;
    std::size_t bytes = 0;
    check(cusparseSpMV_bufferSize(h, op, &one, A.get(), vin, &zero, vout, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT,
                                  &bytes),
          "SpMV workspace query");
    if (!work_ || bytes > work_bytes_) {
      ctx_.synchronize();  // queued products may still use the old workspace
      work_.emplace(std::max<std::size_t>(bytes, 1), ctx_.device());
      work_bytes_ = bytes;
    }
    check(cusparseSpMV(h, op, &one, A.get(), vin, &zero, vout, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, work_->p),
          "SpMV");
    cusparseDestroyDnVec(vin);
    cusparseDestroyDnVec(vout);
  }

  Context& ctx_;
  std::int64_t n_, m_;
  DeviceCsr J_, Jt_;
  std::optional<DeviceBuffer> work_;
  std::size_t work_bytes_ = 0;
};

template <Real T>
class Slam final : public kernels::Slam<T> {
 public:
  kernels::SlamOutcome step(const slam::BorderedJacobian<T>& J, ConstMatrixView<T> d, double damping,
                            MatrixView<T> x) const override {
    return cuda::step<T>(view_of(J), d, damping, x);
  }
  kernels::SlamOutcome pinv(const slam::BorderedJacobian<T>& J, double damping, MatrixView<T> P) const override {
    return cuda::pinv<T>(view_of(J), damping, P);
  }
  kernels::SlamOutcome normal_inverse(const slam::BorderedJacobian<T>& J, double, MatrixView<T>) const override {
    throw InvalidArgument("slam::normal_inverse runs on the CPU only in this version of linv; J is on " +
                          J.device().name() + ": move it with .to(Device::cpu())");
  }
  std::unique_ptr<kernels::LinearOperator<double>> sparse(const slam::SparseJacobian<T>& J,
                                                          Device device) const override {
    return std::make_unique<Sparse>(J, device);
  }

 private:
  static BorderedView<T> view_of(const slam::BorderedJacobian<T>& J) {
    if (J.dense_cols() > kMaxDense)
      throw InvalidArgument("the GPU handles bordered Jacobians of up to " + std::to_string(kMaxDense) +
                            " dense columns; this one has " + std::to_string(J.dense_cols()) +
                            " (keep J on the CPU)");
    const typename slam::BorderedJacobian<T>::Arrays a = J.arrays();
    return {J.dense().data(), ld_of(J.dense().ld()), a.values, a.bounds, a.segment_of, J.rows(), J.dense_cols(),
            J.segments()};
  }
};

}  // namespace

template <Real T>
const kernels::Slam<T>& slam() { return kernels::instance<Slam<T>>(); }
template const kernels::Slam<float>& slam<float>();
template const kernels::Slam<double>& slam<double>();

}  // namespace linv::cuda
