// Kernels of LU with tournament pivoting (CALU; the driver is Dense::lu_factor in src/cuda/dense.cpp, the
// host reference src/cpu/calu.cpp, which these follow game for game: same shape, same arithmetic).
//
// A panel takes two launches. calu_tournament plays every round of the panel's tournament in one grid:
// each block plays its leaf; the last block of each set of kSets to finish plays their next-round game
// (a counter per game, no grid-wide barrier), and the block that plays the final game also writes the
// interchanges, their plan and the L \ U of the pivot rows it has just eliminated. calu_finish then moves
// the rows of every other column and writes the panel: L \ U on top, L21 = A21 U11^-1 below.
#include <algorithm>
#include <type_traits>

#include "cuda/context.hpp"
#include "cuda/kernels.hpp"
#include "kernels/dense.hpp"

namespace linv::cuda::launch {
namespace {

using Shape = linv::kernels::Tournament;
constexpr int kPanel = Shape::kPanel;
constexpr int kTile = Shape::kTile;
constexpr int kWarps = kTile / 32;
constexpr int kSets = kTile / kPanel;  // candidate sets per later game
constexpr unsigned kFull = 0xFFFFFFFFu;
static_assert(kPanel == 32, "the final block's bookkeeping gives one lane to each of the panel's columns");

// A 32-bit key that orders |x| for the warp's one-instruction maximum (__reduce_max_sync): float32 rounds
// toward zero, which never reverses an order, so the largest key's lanes hold the largest |x|; in double
// they can tie where the values do not, and ties are settled exactly. 0 means "no candidate".
__device__ unsigned order_key(double a) { return __float_as_uint(__double2float_rz(a)) + 1u; }
__device__ unsigned order_key(float a) { return __float_as_uint(a) + 1u; }

template <class T>
struct GameShared {
  // Each warp's best candidate of a column: its |pivot| (-1: none), its thread, the pivot's reciprocal and
  // its whole row, posted before the column's one barrier and double-buffered by column parity, so that
  // no second barrier is needed: a warp writes buffer b again only after every thread has passed the next
  // column's barrier.
  alignas(16) T row[2][kWarps][kPanel];
  T key[2][kWarps];
  T reciprocal[2][kWarps];
  int who[2][kWarps];
  int picks[kPanel];
  bool proceed;
};

__device__ double reciprocal(double x) { return __drcp_rn(x); }
__device__ float reciprocal(float x) { return __frcp_rn(x); }

// A panel row between registers and shared memory, 16 bytes an access.
template <class T>
__device__ void store_row(T* to, const T (&v)[kPanel]) {
#pragma unroll
  for (int q = 0; q < kPanel; q += 16 / static_cast<int>(sizeof(T))) {
    if constexpr (sizeof(T) == 8)
      reinterpret_cast<double2*>(to)[q / 2] = make_double2(v[q], v[q + 1]);
    else
      reinterpret_cast<float4*>(to)[q / 4] = make_float4(v[q], v[q + 1], v[q + 2], v[q + 3]);
  }
}
template <class T>
__device__ void load_row(const T* from, T (&v)[kPanel]) {
#pragma unroll
  for (int q = 0; q < kPanel; q += 16 / static_cast<int>(sizeof(T))) {
    if constexpr (sizeof(T) == 8) {
      const double2 d = reinterpret_cast<const double2*>(from)[q / 2];
      v[q] = d.x, v[q + 1] = d.y;
    } else {
      const float4 f = reinterpret_cast<const float4*>(from)[q / 4];
      v[q] = f.x, v[q + 1] = f.y, v[q + 2] = f.z, v[q + 3] = f.w;
    }
  }
}

// One game: partial pivoting on up to kTile panel rows (one per thread, `row` < 0 for none), held in
// registers, one column at a time; the largest |entry| wins, ties to the lower entry, and NaN counts as
// 0. Writes the kPanel rows put forward (-1 padded) to out. In the final game (top != nullptr) the
// winner of column c is row c of L \ U of the pivot rows, which goes to top (kPanel x kPanel, column-
// major), and a zero pivot's column col0 + c + 1 to *zero_pivot; the multipliers go to `multipliers`
// (kTile a column) on the way.
//
// A column is a chain of latencies with two warps to a scheduler, so what counts is the number of
// instructions on it (docs/gpu-performance-notes.md): a one-instruction warp maximum on 32-bit keys, one
// barrier, the pivot's reciprocal computed by its owner before the barrier, an update that loads the
// pivot row 16 bytes at a time and neither branches nor selects. The loop over columns is unrolled only
// kStep times (32 copies of the body overflow the instruction cache); after each step the row is shifted
// left by kStep, which keeps register indices fixed: v[i] is column c0 + i, and the columns shifted in from
// the right are zeros, which the updates leave zero.
template <class T>
__device__ void play(GameShared<T>& sh, const T* P, std::int64_t ld, int w, int row, int* out, T* top,
                     T* multipliers, int* zero_pivot, std::int64_t col0) {
  constexpr int kStep = 4;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  bool alive = row >= 0;
  T v[kPanel];
  const int from_row = alive ? row : 0;  // loads from valid addresses without a branch, then selects
#pragma unroll
  for (int c = 0; c < kPanel; ++c) {
    const T x = P[from_row + (c < w ? c : w - 1) * ld];
    v[c] = alive && c < w ? x : T(0);
  }
#pragma unroll 1
  for (int c0 = 0; c0 < w; c0 += kStep) {
#pragma unroll
    for (int i = 0; i < kStep; ++i) {
      const int c = c0 + i;
      if (c >= w) break;  // the same for every thread
      const int b = c & 1;
      T a = alive ? fabs(v[i]) : T(-1);
      if (a != a) a = T(0);
      const unsigned key = alive ? order_key(a) : 0u;
      const unsigned top_key = __reduce_max_sync(kFull, key);
      const unsigned tied = __ballot_sync(kFull, key == top_key);
      int win = __ffs(tied) - 1;
      if constexpr (std::is_same_v<T, double>) {
        if (tied & (tied - 1)) {  // several lanes at the top key: the exact maximum, the lower lane on ties
          T k = key == top_key ? a : T(-1);
          int who = lane;
#pragma unroll
          for (int off = 16; off > 0; off >>= 1) {
            const T k2 = __shfl_xor_sync(kFull, k, off);
            const int w2 = __shfl_xor_sync(kFull, who, off);
            if (k2 > k || (k2 == k && w2 < who)) k = k2, who = w2;
          }
          win = who;
        }
      }
      if (top_key == 0) win = -1;
      if (lane == win) {
        sh.key[b][warp] = a;
        sh.who[b][warp] = t;
        sh.reciprocal[b][warp] = v[i] != T(0) ? reciprocal(v[i]) : T(0);
        store_row(sh.row[b][warp], v);
      } else if (win < 0 && lane == 0) {
        sh.key[b][warp] = T(-1);
      }
      __syncthreads();
      // the best of the warps' candidates by a tree that keeps the first of equals (warps hold consecutive
      // entries, so the first holds the lower entry)
      T keys[kWarps];
      int from[kWarps];
#pragma unroll
      for (int k = 0; k < kWarps; ++k) keys[k] = sh.key[b][k], from[k] = k;
#pragma unroll
      for (int span = 1; span < kWarps; span *= 2)
#pragma unroll
        for (int k = 0; k + span < kWarps; k += 2 * span)
          if (keys[k + span] > keys[k]) keys[k] = keys[k + span], from[k] = from[k + span];
      if (keys[0] < T(0)) {  // no row left (never in a final game: it has at least w live entries)
        if (t == 0) sh.picks[c] = -1;
        continue;
      }
      const T* pivot = sh.row[b][from[0]];
      const int winner = sh.who[b][from[0]];
      if (t == winner) {
        alive = false;
        sh.picks[c] = row;
      }
      if (top != nullptr) {  // row c of L \ U: the winner's multipliers, then its row from column c on
        if (t < kPanel) top[c + t * kPanel] = t >= w ? T(0) : t < c ? multipliers[t * kTile + winner] : pivot[t - c0];
        if (t == 0 && pivot[i] == T(0)) atomicMin(zero_pivot, static_cast<int>(col0 + c + 1));
      }
      if (alive) {
        T p[kPanel];
        load_row(pivot, p);
        const T l = v[i] * sh.reciprocal[b][from[0]];
        if (top != nullptr) multipliers[c * kTile + t] = l;
#pragma unroll
        for (int m = i + 1; m < kPanel; ++m) v[m] = fma(-l, p[m], v[m]);
      }
    }
#pragma unroll
    for (int m = 0; m < kPanel; ++m) v[m] = m + kStep < kPanel ? v[m + kStep] : T(0);
  }
  __syncthreads();
  if (t < kPanel) out[t] = t < w ? sh.picks[t] : -1;
}

// The panel's tournament, one block per leaf (see the top of this file). Round r's candidates go to
// work.lists (round after round), its per-game arrival counters to work.counters, which the last
// arriver puts back to 0 for the next panel.
template <class T>
__global__ void __launch_bounds__(kTile) tournament_kernel(const T* P, std::int64_t ld, int w, int rows,
                                                           std::int64_t row0, std::int64_t* pivots, int* zero_pivot,
                                                           CaluWork<T> work) {
  __shared__ GameShared<T> sh;
  const int t = threadIdx.x, lane = t & 31;
  int games = (rows + kTile - 1) / kTile, game = blockIdx.x;
  int* level = work.lists;  // this round's candidates, kPanel per game
  int* counters = work.counters;
  const int leaf_row = game * kTile + t;
  play(sh, P, ld, w, leaf_row < rows ? leaf_row : -1, level + game * kPanel, games == 1 ? work.top : nullptr,
       work.multipliers, zero_pivot, row0);
  while (games > 1) {
    // publish this game's candidates; the last of its set to arrive plays the set's next game
    const int set = game / kSets, members = min(kSets, games - set * kSets);
    __threadfence();
    __syncthreads();
    if (t == 0) {
      sh.proceed = atomicAdd(counters + set, 1) == members - 1;
      if (sh.proceed) counters[set] = 0;
    }
    __syncthreads();
    if (!sh.proceed) return;
    __threadfence();
    const int next_games = (games + kSets - 1) / kSets;
    const int entries = games * kPanel, first = set * kTile;
    const int row = first + t < entries ? __ldcg(level + first + t) : -1;
    int* next = level + games * kPanel;
    play(sh, P, ld, w, row, next + set * kPanel, next_games == 1 ? work.top : nullptr, work.multipliers, zero_pivot,
         row0);
    counters += next_games;
    level = next;
    games = next_games;
    game = set;
  }
  if (t >= 32) return;
  // The final game's picks (panel offsets) as LAPACK's interchanges, row0 + i <-> pivots[i], replayed on a
  // table of the rows they touch: lane i holds position i (the top) and the position of the row picked
  // for column i if that lies below the top; each holds the original row that ends there.
  int current = lane < w ? sh.picks[lane] : -1;  // where the row picked for column `lane` sits now
  int top_holds = lane;
  const int below = current >= w ? current : -1;
  int below_holds = below;
  int pivot = lane;
  for (int i = 0; i < w; ++i) {
    const int s = __shfl_sync(kFull, current, i);
    if (lane == i) pivot = s;
    if (s == i) continue;  // the same for every lane
    if (lane > i && current == i) current = s;  // the row that sat at i is now at s
    const int at_i = __shfl_sync(kFull, top_holds, i);
    int at_s;
    if (s < w) {
      at_s = __shfl_sync(kFull, top_holds, s);
      if (lane == s) top_holds = at_i;
    } else {
      const int holder = __ffs(__ballot_sync(kFull, below == s)) - 1;
      at_s = __shfl_sync(kFull, below_holds, holder);
      if (lane == holder) below_holds = at_i;
    }
    if (lane == i) top_holds = at_s;
  }
  // the plan: the top's w rows, then the rows below it that changed hands, with the original panel row
  // each now holds; calu_finish needs the values of the latter (original top rows it overwrites first)
  const unsigned lower = __ballot_sync(kFull, below >= 0);
  if (lane < w) {
    pivots[lane] = row0 + pivot;
    work.touched[lane] = row0 + lane;
    work.source[lane] = row0 + top_holds;
  }
  if (below >= 0) {
    const int k = __popc(lower & ((1u << lane) - 1));
    work.touched[w + k] = row0 + below;
    work.source[w + k] = row0 + below_holds;
#pragma unroll 8
    for (int c = 0; c < kPanel; ++c)
      if (c < w) work.saved[k + c * kPanel] = P[below_holds + c * ld];
  }
  if (lane == 0) *work.count = w + __popc(lower);
}

// After the tournament: the interchanges on every column outside the panel (one warp a column, grid-
// stride), and the panel itself (one thread a row): L \ U of the pivot rows on top, then each row below
// as x U11 = a, a the row that now sits there (the same operations, in the same order, as trsm's
// substitution with a reciprocal diagonal).
template <class T>
__global__ void __launch_bounds__(kTile) finish_kernel(T* A, std::int64_t ld, std::int64_t n, std::int64_t j, int w,
                                                       int row_blocks, CaluWork<T> work) {
  __shared__ T U[kPanel][kPanel + 1];
  __shared__ T inverse_diagonal[kPanel];
  __shared__ int below_rows[kPanel];
  const int t = threadIdx.x, count = *work.count;
  if (static_cast<int>(blockIdx.x) >= row_blocks) {
    const int lane = t & 31;
    const std::int64_t warps = static_cast<std::int64_t>(gridDim.x - row_blocks) * kWarps;
    for (std::int64_t u = static_cast<std::int64_t>(blockIdx.x - row_blocks) * kWarps + (t >> 5); u < n - w;
         u += warps) {
      T* col = A + (u < j ? u : u + w) * ld;
      const T first = lane < count ? col[work.source[lane]] : T(0);
      const T second = lane + 32 < count ? col[work.source[lane + 32]] : T(0);
      __syncwarp();
      if (lane < count) col[work.touched[lane]] = first;
      if (lane + 32 < count) col[work.touched[lane + 32]] = second;
      __syncwarp();
    }
    return;
  }
  for (int e = t; e < kPanel * kPanel; e += kTile) {
    const int r = e % kPanel, c = e / kPanel;
    U[r][c] = work.top[e];
  }
  if (t < kPanel) {
    inverse_diagonal[t] = t < w ? T(1) / work.top[t + t * kPanel] : T(0);
    below_rows[t] = w + t < count ? static_cast<int>(work.touched[w + t] - j) : -1;
  }
  __syncthreads();
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kTile + t;
  if (i >= n - j) return;
  T* row = A + (j + i) + j * ld;
  if (i < w) {
#pragma unroll
    for (int c = 0; c < kPanel; ++c)
      if (c < w) row[c * ld] = U[i][c];
    return;
  }
  int saved = -1;
  for (int k = 0; k < count - w; ++k)
    if (below_rows[k] == i) saved = k;
  T x[kPanel];
#pragma unroll
  for (int c = 0; c < kPanel; ++c) x[c] = c >= w ? T(0) : saved >= 0 ? work.saved[saved + c * kPanel] : row[c * ld];
  // x U11 = a column by column, rotating x as play() does (x[0] is x_k at step k; kPanel rotations
  // restore the order), which keeps the loop small enough for the instruction cache
#pragma unroll 1
  for (int k = 0; k < kPanel; ++k) {
    if (k < w) {
      const T xk = x[0] * inverse_diagonal[k];
      x[0] = xk;
#pragma unroll
      for (int m = 1; m < kPanel; ++m)
        if (k + m < w) x[m] = fma(-xk, U[k][k + m], x[m]);
    }
    const T first = x[0];
#pragma unroll
    for (int m = 0; m + 1 < kPanel; ++m) x[m] = x[m + 1];
    x[kPanel - 1] = first;
  }
#pragma unroll
  for (int c = 0; c < kPanel; ++c)
    if (c < w) row[c * ld] = x[c];
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

std::size_t calu_work_bytes(std::int64_t rows, std::size_t entry_bytes) {
  const std::int64_t leaves = (rows + kTile - 1) / kTile;
  // every round keeps kPanel per game; the rounds after the leaves add less than a seventh of theirs
  const std::size_t lists = static_cast<std::size_t>(2 * leaves + 8) * kPanel;
  const std::size_t counters = static_cast<std::size_t>(leaves + 8);
  return (2 * kPanel + kTile) * kPanel * entry_bytes + 4 * kPanel * sizeof(std::int64_t) +
         (lists + counters + 1) * sizeof(int) + 64;
}

template <class T>
CaluWork<T> calu_work(void* memory, std::int64_t rows) {
  const std::int64_t leaves = (rows + kTile - 1) / kTile;
  CaluWork<T> w;
  auto* p = static_cast<char*>(memory);
  w.top = reinterpret_cast<T*>(p);
  w.saved = w.top + kPanel * kPanel;
  w.multipliers = w.saved + kPanel * kPanel;
  w.touched = reinterpret_cast<std::int64_t*>(w.multipliers + kTile * kPanel);
  w.source = w.touched + 2 * kPanel;
  w.count = reinterpret_cast<int*>(w.source + 2 * kPanel);
  w.counters = w.count + 1;
  w.counter_count = static_cast<std::size_t>(leaves + 8);
  w.lists = w.counters + w.counter_count;
  return w;
}

template <class T>
void calu_tournament(const T* panel, std::int64_t ld, int w, std::int64_t rows, std::int64_t row0,
                     std::int64_t* pivots, int* zero_pivot, const CaluWork<T>& work, cudaStream_t stream) {
  const std::int64_t games = (rows + kTile - 1) / kTile;
  tournament_kernel<T><<<static_cast<unsigned>(games), kTile, 0, stream>>>(panel, ld, w, static_cast<int>(rows), row0,
                                                                            pivots, zero_pivot, work);
  check_launch("calu_tournament");
}

template <class T>
void calu_finish(T* A, std::int64_t ld, std::int64_t n, std::int64_t j, int w, const CaluWork<T>& work,
                 cudaStream_t stream) {
  const std::int64_t row_blocks = (n - j + kTile - 1) / kTile;
  // enough warps for one pass over the other columns on a large GPU, no more
  const std::int64_t column_blocks = std::min<std::int64_t>((n - w + kWarps - 1) / kWarps, 1056);
  finish_kernel<T><<<static_cast<unsigned>(row_blocks + column_blocks), kTile, 0, stream>>>(
      A, ld, n, j, w, static_cast<int>(row_blocks), work);
  check_launch("calu_finish");
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
  template CaluWork<T> calu_work<T>(void*, std::int64_t);                                                      \
  template void calu_tournament<T>(const T*, std::int64_t, int, std::int64_t, std::int64_t, std::int64_t*, int*, \
                                   const CaluWork<T>&, cudaStream_t);                                          \
  template void calu_finish<T>(T*, std::int64_t, std::int64_t, std::int64_t, int, const CaluWork<T>&,           \
                               cudaStream_t);                                                                  \
  template void max_abs<T>(const T*, std::int64_t, std::int64_t, std::int64_t, bool, double*, cudaStream_t);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
#undef LINV_INSTANTIATE

}  // namespace linv::cuda::launch
