// Batched inversion of small matrices: Gauss-Jordan elimination with partial pivoting, in registers.
//
// The library batched routines (getrfBatched + getriBatched, what PyTorch calls) reach a few per cent
// of the memory bandwidth on small matrices; inverting a 16 x 16 matrix is a few thousand flops, so the
// whole batch should cost about one read and one write of it. Here each row of a matrix lives in one
// lane's registers:
//   * n <= 32: a group of S lanes (S = n rounded up to a power of two) per matrix, 32 / S matrices per
//     warp; the pivot search is a shuffle butterfly within the group (warp reductions when the group is
//     the whole warp), the pivot row goes through shared memory from 8 lanes up;
//   * 32 < n <= 64: a block of 64 threads per matrix, the pivot row passed through shared memory.
// Rows are never moved ("virtual" pivoting): the row chosen at step k is marked, and Gauss-Jordan's
// in-place update leaves row r_k holding row k of the inverse with its columns in pivot order, so each
// lane writes its row to row k and column r_j of the result. The pivots are partial pivoting's
// (largest magnitude in the column among unused rows, ties to the lower row), as LAPACK's getrf picks.
//
// Each matrix's rcond is exact, 1 / (||A||_1 ||A^-1||_1), from the registers: the column sums of |A| as it
// is loaded and of |A^-1| after the elimination (the lanes hold rows of A^-1 with their columns in one
// common order, which the largest column sum does not depend on), each by a reduce-scatter across the
// lanes (S - 1 shuffles for S columns) and a maximum. That is O(n) instructions per lane against the
// elimination's O(n^2). Singular matrices are appended to a list (matrix, pivot, rcond) through an atomic
// counter, so the batch is still read and written once and nothing else is (the per-matrix pivot array
// this replaced was written for every matrix), and the host reads back the count, then the list only when
// it is not empty. A solve goes through the same inverse, so it gets the same rcond.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cuda/backend.hpp"
#include "cuda/context.hpp"

namespace linv::cuda {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kThreads = 256;

template <class T>
__device__ inline T quiet_nan() {
  if constexpr (sizeof(T) == 4)
    return __int_as_float(0x7fffffff);
  else
    return __longlong_as_double(0x7ff8000000000000ll);
}

template <class T>
__device__ inline double magnitude(T x) {
  const double v = fabs(static_cast<double>(x));
  return isnan(v) ? INFINITY : v;  // NaN is chosen as pivot and propagates
}

// The larger of a and b, NaN if either is (fmax would drop it, and a NaN norm must reach the rcond).
template <class T>
__device__ inline T nan_max(T a, T b) {
  return (b > a || isnan(b)) ? b : a;
}

// One round of column_sums below after the first: lanes H apart exchange, each keeping the half of its
// V H / W live partial sums that its side of bit H owns; then the rounds below it. Template recursion keeps
// every index a compile-time constant, so v stays in registers.
template <class T, int V, int W, int H>
__device__ inline void fold_column_sums(T (&v)[V / 2], int lane) {
  if constexpr (H >= 1) {
    constexpr int kHalf = V * H / W;
    const bool upper = (lane & H) != 0;
#pragma unroll
    for (int i = 0; i < kHalf; ++i) {
      const T low = v[i], high = v[i + kHalf];
      v[i] = (upper ? high : low) + __shfl_xor_sync(kFull, upper ? low : high, H, W);
    }
    fold_column_sums<T, V, W, H / 2>(v, lane);
  }
}

// Column sums over W lanes (W a power of two up to 32, the lanes holding rows of one matrix) of V columns,
// lane by lane entry(j) for column j (a compile-time constant after unrolling), by a reduce-scatter
// butterfly: each round a lane sends the half of its partial sums its partner keeps and adds the half it
// keeps, so after log2 W rounds lane r holds the sums of columns [r V / W, (r + 1) V / W) in out[] —
// V - V / W shuffles, where a reduction per column would take V log2 W.
template <class T, int V, int W, class Entry>
__device__ inline void column_sums(const Entry& entry, int lane, T (&out)[V / W]) {
  static_assert(W >= 2 && V >= W && V % W == 0);
  constexpr int kHalf = V / 2;
  T v[kHalf];
  const bool upper = (lane & (W / 2)) != 0;
#pragma unroll
  for (int i = 0; i < kHalf; ++i) {  // the first round reads the entries themselves: only half is copied
    const T low = entry(i), high = entry(i + kHalf);
    v[i] = (upper ? high : low) + __shfl_xor_sync(kFull, upper ? low : high, W / 2, W);
  }
  fold_column_sums<T, V, W, W / 4>(v, lane);
#pragma unroll
  for (int i = 0; i < V / W; ++i) out[i] = v[i];
}

// Lane `row` holding column `row`'s sum of a matrix of S columns, the matrix's 1-norm (the largest sum;
// NaN or Inf where an entry is, or a sum overflows) over the S lanes `width` wide (the group, or a warp of a
// block), in every lane. Which entry is not finite the host finds, in the rare matrix that has one
// (src/core/batched.cpp).
template <class T, int S>
__device__ inline void norm_across(T& norm, int width) {
#pragma unroll
  for (int offset = (S < 32 ? S : 32) / 2; offset > 0; offset /= 2)
    norm = nan_max(norm, __shfl_xor_sync(kFull, norm, offset, width));
}

// The 1-norm of the matrix whose rows the group's S lanes hold, in every lane.
template <class T, int S>
__device__ inline T group_norm1(const T (&a)[S], bool use, int row) {
  const auto entry = [&](int j) { return use ? fabs(a[j]) : T(0); };
  T column;  // lane `row` ends with column `row`'s sum
  if constexpr (S == 1) {
    column = entry(0);
  } else {
    T sum[1];
    column_sums<T, S, S>(entry, row, sum);
    column = sum[0];
  }
  T norm = column;
  norm_across<T, S>(norm, S);
  return norm;
}

// The in-place Gauss-Jordan step on row `a` (S entries, n used) with pivot p at column k, whose row
// entries are pj(j): the pivot row becomes [a_j / p, 1 / p at k]; another row with f = a_k becomes
// [a_j - f a_pj / p, -f / p at k].
template <class T, int S, class PivotEntry>
__device__ inline void eliminate(T (&a)[S], int n, int k, bool is_pivot_row, T p, PivotEntry pj) {
  const T inverse = p != T(0) ? T(1) / p : T(0);
  const T f = a[k];
#pragma unroll
  for (int j = 0; j < S; ++j) {
    if (j >= n) break;
    const T scaled = pj(j) * inverse;
    if (is_pivot_row)
      a[j] = j == k ? inverse : scaled;
    else
      a[j] = j == k ? -f * inverse : a[j] - f * scaled;
  }
}

// Pivot search keys: 0 for "not a candidate", else 1 + the bit pattern of |x| (non-negative floats order
// like their bit patterns; NaN counts as infinity, so it is chosen and propagates). A key of 1 is an
// exactly zero candidate.
__device__ inline unsigned long long pivot_key(float x) {
  const float v = fabsf(x);
  return 1ull + (isnan(v) ? 0x7f800000u : __float_as_uint(v));
}
__device__ inline unsigned long long pivot_key(double x) {
  const double v = fabs(x);
  return 1ull + static_cast<unsigned long long>(isnan(v) ? 0x7ff0000000000000ll : __double_as_longlong(v));
}

// The largest key over the warp, and the lowest lane holding it: partial pivoting's choice, ties to
// the lower row as LAPACK's i?amax. Two reductions and a ballot instead of five rounds of shuffles.
__device__ inline int warp_argmax(unsigned long long key, unsigned long long& top) {
  const unsigned hi = static_cast<unsigned>(key >> 32), lo = static_cast<unsigned>(key);
  const unsigned top_hi = __reduce_max_sync(kFull, hi);
  const unsigned top_lo = __reduce_max_sync(kFull, hi == top_hi ? lo : 0u);
  top = (static_cast<unsigned long long>(top_hi) << 32) | top_lo;
  return __ffs(__ballot_sync(kFull, hi == top_hi && lo == top_lo)) - 1;
}

// The same within each group of S < 32 lanes, by a butterfly of shuffles (reductions over a part of
// the warp would run once per group). A float key fits in 59 bits, so the row rides in its low 5 bits
// (inverted: on equal magnitudes the lower row has the larger key) and each round is one 64-bit shuffle;
// a double key needs all 64 bits and the row travels beside it.
template <class T, int S>
__device__ inline int group_argmax(unsigned long long key, int row, unsigned long long& top) {
  if constexpr (sizeof(T) == 4) {
    unsigned long long packed = key == 0 ? 0 : (key << 5) | static_cast<unsigned>(31 - row);
#pragma unroll
    for (int offset = S / 2; offset > 0; offset /= 2) {
      const unsigned long long other = __shfl_xor_sync(kFull, packed, offset, S);
      packed = other > packed ? other : packed;
    }
    top = packed >> 5;
    return 31 - static_cast<int>(packed & 31);
  } else {
    int at = row;
#pragma unroll
    for (int offset = S / 2; offset > 0; offset /= 2) {
      const unsigned long long k = __shfl_xor_sync(kFull, key, offset, S);
      const int r = __shfl_xor_sync(kFull, at, offset, S);
      if (k > key || (k == key && r < at)) {
        key = k;
        at = r;
      }
    }
    top = key;
    return at;
  }
}

// A singular matrix as the kernels list it.
struct Flagged {
  std::int64_t matrix;  // in the whole batch
  double rcond;
  int pivot;  // 1-based
};

// What a launch works on: count matrices A(k) of order n, and either X(k) := A(k)^-1 (B null) or
// X(k) := A(k)^-1 B(k) for B(k) of n x nrhs, each block contiguous after the previous one; and the
// conditioning policy (kernels::BatchedPolicy).
template <class T>
struct Batch {
  const T* A;
  const T* B;
  int nrhs;
  T* X;
  std::int64_t first;              // the batch index of A(0), for the list
  Flagged* flagged;                // the singular matrices, in the order they were found
  unsigned long long* singular;    // how many there are: the list's length
  std::int64_t count;
  int n;
  double threshold;           // an rcond below it makes a matrix singular
  bool keep_ill_conditioned;  // a singular matrix with rcond > 0 keeps its result
  bool transposed;            // eliminate A(k)^T: a solve with Op::Transpose (a row-major stack's own systems)

  // Entry (row, j) of the matrix eliminated, A(m) or A(m)^T: a lane holds a row of it.
  __device__ T entry(std::int64_t m, int row, int j) const {
    return A[m * n * n + (transposed ? static_cast<std::int64_t>(row) * n + j : row + static_cast<std::int64_t>(j) * n)];
  }
};

// A matrix's fate under the policy: regular (pivot 0), or singular by its first zero pivot or else its
// smallest, with its result NaN unless kept.
struct Verdict {
  double rcond;
  int pivot;
  bool refused;
};

// A matrix whose 1-norm is not finite (a NaN or Inf entry, or sums that overflow) gets no condition number
// here: rcond NaN, refused; the host names the entry or computes it again alone, scaled.
template <class T>
__device__ inline Verdict judge(const Batch<T>& batch, int zero, int smallest, T norm_a, T norm_x) {
  if (!isfinite(norm_a)) return {quiet_nan<double>(), 1, true};
  const double rcond =
      zero != 0 ? 0.0 : 1.0 / (static_cast<double>(norm_a) * static_cast<double>(norm_x));
  if (zero == 0 && rcond >= batch.threshold) return {rcond, 0, false};
  return {rcond, zero != 0 ? zero : smallest, !(batch.keep_ill_conditioned && rcond > 0)};
}

// Called by one thread per matrix: a singular one goes on the list.
template <class T>
__device__ inline void record(const Batch<T>& batch, std::int64_t m, const Verdict& v) {
  if (v.pivot == 0) return;
  const unsigned long long slot = atomicAdd(batch.singular, 1ull);
  batch.flagged[slot] = {batch.first + m, v.rcond, v.pivot};
}

// After the elimination the lane holding row r_k (the row chosen at `step` = k) holds row k of the
// inverse with its columns in pivot order: X(k, r_j) = a[j]. So it writes X's row k, or for a solve
// x_k = sum_j a[j] b(r_j). A refused matrix's result is NaN.
template <class T, int S, class Order>
__device__ inline void write_result(const Batch<T>& batch, std::int64_t m, int step, const T (&a)[S], Order order,
                                    bool refused) {
  const int n = batch.n;
  if (batch.B == nullptr) {
    T* x = batch.X + m * n * n;
#pragma unroll
    for (int j = 0; j < S; ++j)
      if (j < n) x[step + order(j) * n] = refused ? quiet_nan<T>() : a[j];
    return;
  }
  const T* b = batch.B + m * n * batch.nrhs;
  T* x = batch.X + m * n * batch.nrhs;
  for (int c = 0; c < batch.nrhs; ++c) {
    T sum = T(0);
#pragma unroll
    for (int j = 0; j < S; ++j)
      if (j < n) sum += a[j] * b[order(j) + c * n];
    x[step + c * n] = refused ? quiet_nan<T>() : sum;
  }
}

// One matrix per group of S lanes (S a power of two, n <= S <= 32). From 8 lanes up the pivot row goes
// through shared memory (stored once by its lane, read with wide broadcast loads: a quarter of the
// instructions of n shuffles); smaller groups shuffle it.
template <class T, int S>
__global__ void __launch_bounds__(kThreads) inverse_groups_kernel(Batch<T> batch) {
  constexpr bool kSharedRow = S >= 8;
  __shared__ __align__(16) T pivot_rows[kSharedRow ? kThreads / S : 1][S];
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int row = lane % S;
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t m = warp * (32 / S) + lane / S;
  const int n = batch.n;
  const bool active = m < batch.count && row < n;
  T a[S];
#pragma unroll
  for (int j = 0; j < S; ++j) a[j] = (active && j < n) ? batch.entry(m, row, j) : T(0);
  const T norm_a = group_norm1<T, S>(a, active, row);

  int order[S];  // order[k]: the row chosen as pivot at step k
  int step = -1;  // the step at which this lane's row was chosen
  int zero = 0;   // the first zero pivot (1-based), if any
  unsigned long long smallest_key = ~0ull;  // the smallest pivot's key, and its step (1-based)
  int smallest = 0;
#pragma unroll
  for (int k = 0; k < S; ++k) {
    if (k >= n) break;
    const unsigned long long key = (active && step < 0) ? pivot_key(a[k]) : 0ull;
    unsigned long long top = 0;
    int at;
    if constexpr (S == 32)
      at = warp_argmax(key, top);
    else
      at = group_argmax<T, S>(key, row, top);
    order[k] = at;
    if (top == 1 && zero == 0) zero = k + 1;
    if (top < smallest_key) {
      smallest_key = top;
      smallest = k + 1;
    }
    if (row == at) step = k;
    if constexpr (kSharedRow) {
      T* pivot_row = pivot_rows[threadIdx.x / S];
      if (row == at) {
#pragma unroll
        for (int j = 0; j < S; ++j) pivot_row[j] = a[j];
      }
      __syncwarp();
      eliminate<T, S>(a, n, k, row == at, pivot_row[k], [&](int j) { return pivot_row[j]; });
      __syncwarp();  // read before the next pivot row is stored
    } else {
      const T p = __shfl_sync(kFull, a[k], at, S);
      eliminate<T, S>(a, n, k, row == at, p, [&](int j) { return __shfl_sync(kFull, a[j], at, S); });
    }
  }
  const T norm_x = group_norm1<T, S>(a, active, row);  // every lane takes part in the shuffles
  if (!active) return;
  const Verdict verdict = judge(batch, zero, smallest, norm_a, norm_x);
  if (row == 0) record(batch, m, verdict);
  write_result<T, S>(batch, m, step, a, [&](int j) { return order[j]; }, verdict.refused);
}

// The 1-norm of the matrix whose rows the block's 64 threads hold (row i in thread i), in every thread:
// each warp's column sums by column_sums, 32 columns at a time (lane l: column l of each half; half the
// registers of all 64 at once, next to a[]), added across the two warps in `part` (thread i: column i),
// then combined within each warp and across the two through `top`.
template <class T>
__device__ inline T block_norm1(const T (&a)[64], bool use, T (*part)[64], T* top) {
  const int row = static_cast<int>(threadIdx.x), lane = row % 32, warp = row / 32;
  T sum[1];
  column_sums<T, 32, 32>([&](int j) { return use ? fabs(a[j]) : T(0); }, lane, sum);
  part[warp][lane] = sum[0];
  column_sums<T, 32, 32>([&](int j) { return use ? fabs(a[32 + j]) : T(0); }, lane, sum);
  part[warp][32 + lane] = sum[0];
  __syncthreads();
  T norm = part[0][row] + part[1][row];
  norm_across<T, 64>(norm, 32);
  if (lane == 0) top[warp] = norm;
  __syncthreads();
  norm = nan_max(top[0], top[1]);
  __syncthreads();  // part and top are read before the next call writes them
  return norm;
}

// One matrix per block of 64 threads (32 < n <= 64): thread i holds row i.
template <class T>
__global__ void __launch_bounds__(64) inverse_block_kernel(Batch<T> batch) {
  constexpr int S = 64;
  __shared__ T pivot_row[S];
  __shared__ double warp_best[2];
  __shared__ int warp_at[2];
  __shared__ int order[S];  // order[k]: the row chosen as pivot at step k
  __shared__ T norm_part[2][S];
  __shared__ T norm_top[2];
  const int row = static_cast<int>(threadIdx.x), lane = row % 32, warp = row / 32;
  const int n = batch.n;
  for (std::int64_t m = blockIdx.x; m < batch.count; m += gridDim.x) {
    const bool active = row < n;
    T a[S];
#pragma unroll
    for (int j = 0; j < S; ++j) a[j] = (active && j < n) ? batch.entry(m, row, j) : T(0);
    const T norm_a = block_norm1<T>(a, active, norm_part, norm_top);
    int step = -1, zero = 0;
    double smallest_magnitude = INFINITY;  // the smallest pivot's magnitude, and its step (1-based)
    int smallest = 0;
#pragma unroll
    for (int k = 0; k < S; ++k) {
      if (k >= n) break;
      double best = (active && step < 0) ? magnitude(a[k]) : -1.0;
      int at = row;
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) {
        const double v = __shfl_xor_sync(kFull, best, offset);
        const int r = __shfl_xor_sync(kFull, at, offset);
        if (v > best || (v == best && r < at)) {
          best = v;
          at = r;
        }
      }
      if (lane == 0) {
        warp_best[warp] = best;
        warp_at[warp] = at;
      }
      __syncthreads();
      if (warp_best[1] > warp_best[0]) {  // ties stay with warp 0's lower rows
        best = warp_best[1];
        at = warp_at[1];
      } else {
        best = warp_best[0];
        at = warp_at[0];
      }
      if (row == at) {
        order[k] = at;
        step = k;
#pragma unroll
        for (int j = 0; j < S; ++j)
          if (j < n) pivot_row[j] = a[j];
      }
      if (best == 0.0 && zero == 0) zero = k + 1;
      if (best < smallest_magnitude || smallest == 0) {
        smallest_magnitude = best;
        smallest = k + 1;
      }
      __syncthreads();
      eliminate<T, S>(a, n, k, row == at, pivot_row[k], [&](int j) { return pivot_row[j]; });
      // No barrier needed here: the next step rewrites warp_best and pivot_row only after its first
      // barrier, which every thread reaches after this update.
    }
    __syncthreads();  // order[] complete
    const T norm_x = block_norm1<T>(a, active, norm_part, norm_top);
    if (active) {
      const Verdict verdict = judge(batch, zero, smallest, norm_a, norm_x);
      if (row == 0) record(batch, m, verdict);
      write_result<T, S>(batch, m, step, a, [&](int j) { return order[j]; }, verdict.refused);
    }
  }
}

// Returns the group size, for the report.
template <class T, int S>
int launch_groups(const Batch<T>& batch, cudaStream_t stream) {
  constexpr std::int64_t per_block = kThreads / S;
  const std::int64_t blocks = (batch.count + per_block - 1) / per_block;
  inverse_groups_kernel<T, S><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(batch);
  check_launch("batched Gauss-Jordan");
  return S;
}

template <Real T>
kernels::BatchedMethod batched_gauss_jordan(const T* A, bool transposed, const T* B, int nrhs, T* X,
                                            std::int64_t count, int n, int device, const kernels::BatchedPolicy& policy,
                                            std::vector<batched::Singular>& singular_matrices) {
  singular_matrices.clear();
  if (count == 0 || n == 0) return {Method::BatchedGaussJordan, ""};
  Context& ctx = Context::get(device);
  ctx.activate();
  const cudaStream_t stream = ctx.main().stream;
  // room for every matrix on the list (never written unless singular)
  Flagged* flagged = ctx.scratch_as<Flagged>(Slot::a, static_cast<std::size_t>(count));
  auto* singular = ctx.scratch_as<unsigned long long>(Slot::small, 1);
  check(cudaMemsetAsync(singular, 0, sizeof(unsigned long long), stream), "cudaMemset");
  // Grids of more than 2^31 - 1 blocks cannot be launched: split the batch.
  constexpr std::int64_t kMaxPerLaunch = std::int64_t{1} << 30;
  const std::int64_t x_size = static_cast<std::int64_t>(n) * (B == nullptr ? n : nrhs);
  int lanes = 64;
  for (std::int64_t first = 0; first < count; first += kMaxPerLaunch) {
    const Batch<T> part{A + first * n * n,
                        B == nullptr ? nullptr : B + first * n * nrhs,
                        nrhs,
                        X + first * x_size,
                        first,
                        flagged,
                        singular,
                        std::min(kMaxPerLaunch, count - first),
                        n,
                        policy.threshold,
                        policy.keep_ill_conditioned,
                        transposed};
    if (n == 1)
      lanes = launch_groups<T, 1>(part, stream);
    else if (n == 2)
      lanes = launch_groups<T, 2>(part, stream);
    else if (n <= 4)
      lanes = launch_groups<T, 4>(part, stream);
    else if (n <= 8)
      lanes = launch_groups<T, 8>(part, stream);
    else if (n <= 16)
      lanes = launch_groups<T, 16>(part, stream);
    else if (n <= 32)
      lanes = launch_groups<T, 32>(part, stream);
    else {
      const std::int64_t blocks = std::min<std::int64_t>(part.count, 1 << 20);
      inverse_block_kernel<T><<<static_cast<unsigned>(blocks), 64, 0, stream>>>(part);
      check_launch("batched Gauss-Jordan");
    }
  }
  // One small read-back in the common case; the list only when it is not empty, put in batch order.
  unsigned long long how_many = 0;
  check(cudaMemcpyAsync(&how_many, singular, sizeof(how_many), cudaMemcpyDeviceToHost, stream), "cudaMemcpy");
  ctx.synchronize();
  if (how_many > 0) {
    std::vector<Flagged> list(static_cast<std::size_t>(how_many));
    check(cudaMemcpyAsync(list.data(), flagged, list.size() * sizeof(Flagged), cudaMemcpyDeviceToHost, stream),
          "cudaMemcpy");
    ctx.synchronize();
    std::sort(list.begin(), list.end(), [](const Flagged& a, const Flagged& b) { return a.matrix < b.matrix; });
    singular_matrices.reserve(list.size());
    for (const Flagged& f : list) singular_matrices.push_back({f.matrix, f.pivot, f.rcond, policy.keeps(f.rcond)});
  }
  return {Method::BatchedGaussJordan,
          "in registers, " + std::to_string(lanes) + (lanes == 1 ? " lane" : " lanes") + " per matrix"};
}

template <Real T>
class Batched final : public kernels::Batched<T> {
 public:
  kernels::BatchedMethod invert(ConstMatrixView<T> A, MatrixView<T> X, const kernels::BatchedPolicy& policy,
                                std::vector<batched::Singular>& singular) const override {
    return in_registers(A, Op::None, nullptr, X, policy, singular);
  }
  kernels::BatchedMethod solve(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X, Op op,
                               const kernels::BatchedPolicy& policy,
                               std::vector<batched::Singular>& singular) const override {
    return in_registers(A, op, &B, X, policy, singular);
  }

 private:
  // Both through the register elimination: B's blocks alongside (solves), or the identity (inverses).
  static kernels::BatchedMethod in_registers(ConstMatrixView<T> A, Op op, const ConstMatrixView<T>* B,
                                             MatrixView<T> X, const kernels::BatchedPolicy& policy,
                                             std::vector<batched::Singular>& singular) {
    const index order = A.rows(), count = order == 0 ? 0 : A.cols() / order;
    const int nrhs = B == nullptr || count == 0 ? 0 : static_cast<int>(B->cols() / count);
    return batched_gauss_jordan<T>(A.data(), op == Op::Transpose, B == nullptr ? nullptr : B->data(), nrhs, X.data(),
                                   count, static_cast<int>(order), A.device().index(), policy, singular);
  }
};

}  // namespace

template <Scalar T>  // real T only: complex stacks have complex_batched (complex_batched.cpp)
const kernels::Batched<T>& batched() { return kernels::instance<Batched<T>>(); }
template const kernels::Batched<float>& batched<float>();
template const kernels::Batched<double>& batched<double>();

}  // namespace linv::cuda
