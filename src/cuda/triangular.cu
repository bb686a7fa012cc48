// Triangular solves with few right-hand sides (k <= kFewRhs) at memory bandwidth. cuBLAS's trsv/trsm
// and cuSOLVER's getrs/potrs with one right-hand side are latency-bound: they step through the triangle
// block by block, each step a launch or a grid-wide wait (about 400 GB/s at n = 16384, far less below).
// Here one launch solves the whole triangle: block t owns the t-th tile of kRows unknowns in solve order
// (taken from a ticket, so every tile it waits for belongs to a block already running), accumulates
// the products of its rows with each earlier tile as soon as that tile is published, and publishes its
// own. The triangle is read once, by many blocks at a time; what is left of the chain from tile to tile
// is one small product (few_rhs_kernel says how) and the hand-over through L2. Complex triangles take
// the same kernel in cuda::std::complex arithmetic, op(A) = A^H reading A's entries conjugated.
#include <cuda/atomic>
#include <cuda/std/complex>

#include <complex>
#include <stdexcept>
#include <type_traits>

#include "cuda/context.hpp"
#include "cuda/kernels.hpp"

namespace linv::cuda::launch {
namespace {

constexpr int kRows = 64;                       // unknowns per tile
constexpr int kThreads = 256;                   // per block
constexpr int kWarps = kThreads / 32;
constexpr int kGroups = kThreads / kRows;       // column groups in a tile's product
constexpr int kSpan = kRows / kGroups;          // columns per group
constexpr int kPad = kRows + 1;                 // shared tile stride (fewer bank conflicts)
constexpr int kLoads = kRows * kRows / kThreads;  // elements of a tile each thread brings in
constexpr unsigned kFull = 0xFFFFFFFFu;

// The kernel's element types: float and double as they are, std::complex as cuda::std::complex (the same
// layout), with what the kernel needs of them spelled once for both.
template <class T>
struct device_of {
  using type = T;
};
template <class R>
struct device_of<std::complex<R>> {
  using type = ::cuda::std::complex<R>;
};
template <class T>
using device_t = typename device_of<T>::type;

template <class T>
inline constexpr bool kIsComplex = false;
template <class R>
inline constexpr bool kIsComplex<::cuda::std::complex<R>> = true;

// a b + c
template <class T>
__device__ T mad(T a, T b, T c) {
  if constexpr (kIsComplex<T>) {
    return T(fma(a.real(), b.real(), fma(-a.imag(), b.imag(), c.real())),
             fma(a.real(), b.imag(), fma(a.imag(), b.real(), c.imag())));
  } else {
    return fma(a, b, c);
  }
}

template <class T>
__device__ T conj_if(T v, bool conjugate) {
  if constexpr (kIsComplex<T>) return conjugate ? ::cuda::std::conj(v) : v;
  else return v;
}

// A load through L2 only (L1 may hold a stale copy of what another block wrote).
template <class T>
__device__ T load_cg(const T* p) {
  if constexpr (std::is_same_v<T, ::cuda::std::complex<double>>) {
    const double2 v = __ldcg(reinterpret_cast<const double2*>(p));
    return T(v.x, v.y);
  } else if constexpr (std::is_same_v<T, ::cuda::std::complex<float>>) {
    const float2 v = __ldcg(reinterpret_cast<const float2*>(p));
    return T(v.x, v.y);
  } else {
    return __ldcg(p);
  }
}

template <class T>
__device__ T shuffle(T v, int lane) {
  if constexpr (kIsComplex<T>) return T(__shfl_sync(kFull, v.real(), lane), __shfl_sync(kFull, v.imag(), lane));
  else return __shfl_sync(kFull, v, lane);
}

// A __shared__ array of n T: raw storage, since a __shared__ variable may not have a constructor (complex
// ones do).
template <class T, int n>
struct SharedArray {
  alignas(T) unsigned char bytes[n * sizeof(T)];
  __device__ T* get() { return reinterpret_cast<T*>(bytes); }
};

// The solve's view of op(A): element (i, j) of the triangle T = op(A) (op(A) = A^H for complex A), and the
// tiles in solve order (rows ascending for a lower T, descending for an upper one).
struct Triangle {
  std::int64_t n, ld;
  bool transpose, forward;
  __device__ std::int64_t at(std::int64_t i, std::int64_t j) const { return transpose ? j + i * ld : i + j * ld; }
  template <class T>
  __device__ T value(const T* A, std::int64_t i, std::int64_t j) const {
    return conj_if(A[at(i, j)], transpose);
  }
  __device__ void tile(std::int64_t t, std::int64_t& lo, int& rows) const {
    const std::int64_t start = t * kRows;
    if (forward) {
      lo = start;
      rows = static_cast<int>(n - start < kRows ? n - start : kRows);
    } else {
      const std::int64_t hi = n - start;
      lo = hi > kRows ? hi - kRows : 0;
      rows = static_cast<int>(hi - lo);
    }
  }
};

// Brings T(lo_i + r, lo_j + q) (r < rows_i, q < rows_j; zero outside) into registers, reading A along
// its columns whichever way T is oriented.
template <class T>
__device__ void load_tile(const T* A, const Triangle& tri, std::int64_t lo_i, int rows_i, std::int64_t lo_j,
                          int rows_j, T (&v)[kLoads]) {
  const int a = threadIdx.x % kRows, b = threadIdx.x / kRows;
#pragma unroll
  for (int m = 0; m < kLoads; ++m) {
    const int r = tri.transpose ? b + kGroups * m : a, q = tri.transpose ? a : b + kGroups * m;
    v[m] = (r < rows_i && q < rows_j) ? tri.value(A, lo_i + r, lo_j + q) : T(0);
  }
}

// Stores what load_tile brought at tile[q kPad + r]. With `scale`, the block is the diagonal one prepared
// for substitution: row r scaled by scale[r] = 1 / T(r, r), and only the entries below the diagonal in
// solve order kept (the rest, diagonal included, zero), so every lane can apply every step unmasked.
template <class T, bool kForward>
__device__ void store_tile(const Triangle& tri, const T (&v)[kLoads], T* tile, const T* scale) {
  const int a = threadIdx.x % kRows, b = threadIdx.x / kRows;
#pragma unroll
  for (int m = 0; m < kLoads; ++m) {
    const int r = tri.transpose ? b + kGroups * m : a, q = tri.transpose ? a : b + kGroups * m;
    if (scale) tile[q * kPad + r] = (kForward ? r > q : r < q) ? v[m] * scale[r] : T(0);
    else tile[q * kPad + r] = v[m];
  }
}

// Shared memory of one block (dynamic: more than the 48 KB a static array may take).
template <class T, int K>
struct Shared {
  static constexpr int kTile = kRows * kPad;
  static constexpr std::size_t bytes = (3 * kTile + kRows * K + (kGroups - 1) * kRows * K) * sizeof(T);
};

// X := T^-1 P B for K >= k right-hand sides; sync[0] hands out tiles, sync[1] counts the tiles already
// in X (they finish in solve order, each needing the one before).
//
// Block t, with D its diagonal block and E = T(tile t, tile t-1), solves
//     x_t = D^-1 (P b_t - sum_{s < t-1} T(t, s) x_s) - (D^-1 E) x_{t-1} =: z - W x_{t-1},
// computing D^-1 (by substitution, eight columns per warp), W and z before tile t-1 is published, so
// the chain from tile to tile is a single 64 x 64 product. Multiplying by the inverted diagonal block
// is what cuBLAS's trsm and MAGMA's trsv do; its error grows with the condition of a 64 x 64 diagonal
// block rather than of the whole triangle (linv's callers check the residual; the tests include
// matrices near the end of the working precision).
template <class T, int K, bool kForward>
__global__ void __launch_bounds__(kThreads) few_rhs_kernel(const T* A, Triangle tri, bool unit, const T* B,
                                                           std::int64_t ldb, const std::int64_t* rows_of_b, T* X,
                                                           std::int64_t ldx, int k, int* sync) {
  extern __shared__ unsigned char shared_bytes[];
  T* inverse = reinterpret_cast<T*>(shared_bytes);  // D^-1, inverse[q kPad + r] = D^-1(r, q)
  T* w = inverse + Shared<T, K>::kTile;             // W, the same layout
  T* tile = w + Shared<T, K>::kTile;                // D prepared for substitution, E, then earlier blocks
  T* xs = tile + Shared<T, K>::kTile;               // earlier tiles of X in turn; at the end the right sides
  T* partial = xs + kRows * K;                      // the column groups' sums
  __shared__ SharedArray<T, kRows> inverse_diagonal_storage;
  T* inverse_diagonal = inverse_diagonal_storage.get();
  __shared__ std::int64_t ticket;
  __shared__ int published_seen;
  ::cuda::atomic_ref<int, ::cuda::thread_scope_device> published(sync[1]);
  const int tid = threadIdx.x, r = tid % kRows, g = tid / kRows, warp = tid / 32, lane = tid % 32;
  if (tid == 0) ticket = atomicAdd(sync, 1);
  __syncthreads();
  const std::int64_t t = ticket;
  std::int64_t lo;
  int rows;
  tri.tile(t, lo, rows);

  // What needs no other tile: the right-hand sides, D^-1 and W.
  T b[K];
#pragma unroll
  for (int c = 0; c < K; ++c) {
    b[c] = T(0);
    if (g == 0 && c < k && r < rows) {
      const std::int64_t i = rows_of_b ? rows_of_b[lo + r] : lo + r;
      b[c] = load_cg(B + i + c * ldb);  // B may be X (in place): read before this tile is written
    }
  }
  if (tid < kRows) inverse_diagonal[tid] = (unit || tid >= rows) ? T(1) : T(1) / tri.value(A, lo + tid, lo + tid);
  T v[kLoads];
  load_tile(A, tri, lo, rows, lo, rows, v);
  __syncthreads();
  store_tile<T, kForward>(tri, v, tile, inverse_diagonal);
  std::int64_t lo_s = 0;
  int rows_s = 0;
  if (t > 0) {
    tri.tile(t - 1, lo_s, rows_s);
    load_tile(A, tri, lo, rows, lo_s, rows_s, v);  // E, in flight during the inversion
  }
  __syncthreads();
  {  // D^-1 e_j for j = 8 warp .. 8 warp + 7: substitution, lane l holding rows l and l + 32; each step's
     // x_i passes through shared memory (one vector load instead of sixteen shuffles)
    constexpr int kColumns = kRows / kWarps;
    __shared__ SharedArray<T, 2 * kWarps * kColumns> step_storage;  // by step parity: one warp barrier a step
    T y0[kColumns], y1[kColumns];
#pragma unroll
    for (int m = 0; m < kColumns; ++m) {
      const int j = warp * kColumns + m;
      y0[m] = lane == j ? inverse_diagonal[j] : T(0);
      y1[m] = lane + 32 == j ? inverse_diagonal[j] : T(0);
    }
#pragma unroll
    for (int step = 0; step < kRows; ++step) {
      const int i = kForward ? step : kRows - 1 - step;
      T* x = step_storage.get() + ((step & 1) * kWarps + warp) * kColumns;
      if (lane == (i & 31)) {
#pragma unroll
        for (int m = 0; m < kColumns; ++m) x[m] = i < 32 ? y0[m] : y1[m];
      }
      __syncwarp();
      const T a0 = tile[i * kPad + lane], a1 = tile[i * kPad + lane + 32];
#pragma unroll
      for (int m = 0; m < kColumns; ++m) {
        y0[m] = mad(-a0, x[m], y0[m]);
        y1[m] = mad(-a1, x[m], y1[m]);
      }
    }
#pragma unroll
    for (int m = 0; m < kColumns; ++m) {
      const int j = warp * kColumns + m;
      inverse[j * kPad + lane] = y0[m];
      inverse[j * kPad + lane + 32] = y1[m];
    }
  }
  __syncthreads();
  if (t > 0) {  // W = D^-1 E, each thread a 4 x 4 block (four loads of each factor for 16 products)
    store_tile<T, kForward>(tri, v, tile, nullptr);
    __syncthreads();
    const int r0 = (tid % 16) * 4, q0 = (tid / 16) * 4;
    T sum[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) sum[i][j] = T(0);
    for (int p = 0; p < kRows; ++p) {
      T d[4], e[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) d[i] = inverse[p * kPad + r0 + i], e[i] = tile[(q0 + i) * kPad + p];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) sum[i][j] = mad(d[i], e[j], sum[i][j]);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) w[(q0 + j) * kPad + r0 + i] = sum[i][j];
  }

  // acc = T(rows of t, tiles 0 .. t-2) X(those tiles): the whole block, tile by tile as they are published,
  // the next tile's loads in flight while one is used.
  T acc[K];
#pragma unroll
  for (int c = 0; c < K; ++c) acc[c] = T(0);
  constexpr int kXLoads = (kRows * K + kThreads - 1) / kThreads;
  T xv[kXLoads];
  bool x_loaded = false;
  int known = 0;  // tiles known to be published
  if (t > 1) {
    tri.tile(0, lo_s, rows_s);
    load_tile(A, tri, lo, rows, lo_s, rows_s, v);
  }
  auto load_x = [&](std::int64_t lo_x, int rows_x) {
#pragma unroll
    for (int m = 0; m < kXLoads; ++m) {
      const int e = tid + m * kThreads, q = e / K, c = e % K;
      xv[m] = (e < kRows * K && q < rows_x && c < k) ? load_cg(X + lo_x + q + c * ldx) : T(0);  // L2: L1 is stale
    }
  };
  for (std::int64_t s = 0; s < t - 1; ++s) {
    if (s >= known) {
      if (tid == 0) {
        int p;
        while ((p = published.load(::cuda::memory_order_acquire)) <= s) {
        }
        published_seen = p;
      }
      __syncthreads();
      known = published_seen;
    }
    __syncthreads();  // the previous tile is used up
    store_tile<T, kForward>(tri, v, tile, nullptr);
    if (!x_loaded) load_x(lo_s, rows_s);
#pragma unroll
    for (int m = 0; m < kXLoads; ++m) {
      const int e = tid + m * kThreads;
      if (e < kRows * K) xs[e] = xv[m];
    }
    x_loaded = false;
    if (s + 1 < t - 1) {  // the next tile's loads fly while this one is used
      tri.tile(s + 1, lo_s, rows_s);
      load_tile(A, tri, lo, rows, lo_s, rows_s, v);
      x_loaded = s + 1 < known;
      if (x_loaded) load_x(lo_s, rows_s);
    }
    __syncthreads();
#pragma unroll
    for (int qq = 0; qq < kSpan; ++qq) {
      const int q = g * kSpan + qq;
      const T a = tile[q * kPad + r];
#pragma unroll
      for (int c = 0; c < K; ++c) acc[c] = mad(a, xs[q * K + c], acc[c]);
    }
  }

  // y = P b - acc (column groups summed in a fixed order).
  __syncthreads();
  if (g > 0) {
#pragma unroll
    for (int c = 0; c < K; ++c) partial[((g - 1) * kRows + r) * K + c] = acc[c];
  }
  __syncthreads();
  if (g == 0) {
#pragma unroll
    for (int c = 0; c < K; ++c) {
      T sum = acc[c];
#pragma unroll
      for (int h = 0; h < kGroups - 1; ++h) sum += partial[(h * kRows + r) * K + c];
      xs[r * K + c] = b[c] - sum;
    }
  }
  __syncthreads();

  // One warp per right-hand side (warp v takes v, v + kWarps, ...), lane l rows l and l + 32: z = D^-1 y,
  // then, once tile t-1 is published, x_t = z - W x_{t-1}.
  constexpr int kPerWarp = (K + kWarps - 1) / kWarps;
  if (warp < k) {
    T z0[kPerWarp], z1[kPerWarp];
#pragma unroll
    for (int m = 0; m < kPerWarp; ++m) {
      const int c = warp + m * kWarps;
      T s0 = T(0), s1 = T(0), u0 = T(0), u1 = T(0);  // two chains per row
      if (c < K) {
#pragma unroll
        for (int p = 0; p < 32; ++p) {
          const T yp = xs[p * K + c], yq = xs[(p + 32) * K + c];
          s0 = mad(inverse[p * kPad + lane], yp, s0);
          s1 = mad(inverse[p * kPad + lane + 32], yp, s1);
          u0 = mad(inverse[(p + 32) * kPad + lane], yq, u0);
          u1 = mad(inverse[(p + 32) * kPad + lane + 32], yq, u1);
        }
      }
      z0[m] = s0 + u0;
      z1[m] = s1 + u1;
    }
    if (t > 0) {
      if (lane == 0)
        while (published.load(::cuda::memory_order_acquire) < t) {
        }
      __syncwarp();
      std::int64_t lo_p;
      int rows_p;
      tri.tile(t - 1, lo_p, rows_p);
#pragma unroll
      for (int m = 0; m < kPerWarp; ++m) {
        const int c = warp + m * kWarps;
        const T xa = (c < k && lane < rows_p) ? load_cg(X + lo_p + lane + c * ldx) : T(0);
        const T xb = (c < k && lane + 32 < rows_p) ? load_cg(X + lo_p + lane + 32 + c * ldx) : T(0);
        T s0 = T(0), s1 = T(0), u0 = T(0), u1 = T(0);
#pragma unroll
        for (int q = 0; q < 32; ++q) {
          const T xq = shuffle(xa, q), xr = shuffle(xb, q);
          s0 = mad(w[q * kPad + lane], xq, s0);
          s1 = mad(w[q * kPad + lane + 32], xq, s1);
          u0 = mad(w[(q + 32) * kPad + lane], xr, u0);
          u1 = mad(w[(q + 32) * kPad + lane + 32], xr, u1);
        }
        z0[m] -= s0 + u0;
        z1[m] -= s1 + u1;
      }
    }
#pragma unroll
    for (int m = 0; m < kPerWarp; ++m) {
      const int c = warp + m * kWarps;
      if (c < k) {
        if (lane < rows) X[lo + lane + c * ldx] = z0[m];
        if (lane + 32 < rows) X[lo + lane + 32 + c * ldx] = z1[m];
      }
    }
    // Published once every solving warp has written (the other warps are not waited for): the barrier
    // orders their stores before thread 0's release, which makes them visible with it.
    const int solvers = 32 * (k < kWarps ? k : kWarps);
    asm volatile("bar.sync 1, %0;" ::"r"(solvers) : "memory");
    if (tid == 0) published.store(static_cast<int>(t + 1), ::cuda::memory_order_release);
  }
}

template <class T>
__global__ void permute_rows_kernel(const T* src, std::int64_t ld_src, T* dst, std::int64_t ld_dst, std::int64_t n,
                                    int k, const std::int64_t* perm, bool scatter) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  for (int c = 0; c < k; ++c) {
    if (scatter) dst[perm[i] + c * ld_dst] = src[i + c * ld_src];
    else dst[i + c * ld_dst] = src[perm[i] + c * ld_src];
  }
}

template <class T, int K, bool kForward>
void launch_few_rhs(unsigned tiles, const T* A, const Triangle& tri, bool unit, const T* B, std::int64_t ldb,
                    const std::int64_t* rows_of_b, T* X, std::int64_t ldx, int k, int* sync, cudaStream_t stream) {
  static std::atomic<std::uint64_t> sized{0};  // the GPUs where it may use more than the default 48 KB
  allow_shared_memory(reinterpret_cast<const void*>(few_rhs_kernel<T, K, kForward>),
                      static_cast<int>(Shared<T, K>::bytes), sized);
  few_rhs_kernel<T, K, kForward><<<tiles, kThreads, Shared<T, K>::bytes, stream>>>(A, tri, unit, B, ldb, rows_of_b, X,
                                                                                   ldx, k, sync);
}

template <class T, int K>
void launch_few_rhs(unsigned tiles, const T* A, const Triangle& tri, bool unit, const T* B, std::int64_t ldb,
                    const std::int64_t* rows_of_b, T* X, std::int64_t ldx, int k, int* sync, cudaStream_t stream) {
  if (tri.forward) launch_few_rhs<T, K, true>(tiles, A, tri, unit, B, ldb, rows_of_b, X, ldx, k, sync, stream);
  else launch_few_rhs<T, K, false>(tiles, A, tri, unit, B, ldb, rows_of_b, X, ldx, k, sync, stream);
}

}  // namespace

template <class H>
void triangular_solve_few(const H* A_, std::int64_t n, std::int64_t ld, bool lower, bool transpose, bool unit,
                          const H* B_, std::int64_t ldb, const std::int64_t* rows_of_b, H* X_, std::int64_t ldx, int k,
                          int* sync, cudaStream_t stream) {
  using T = device_t<H>;
  static_assert(Shared<T, few_rhs_limit<H>()>::bytes + 4 * kRows * sizeof(T) <= 227 * 1024,
                "few_rhs_limit must keep a block's shared memory within a streaming multiprocessor's");
  if (n == 0 || k == 0) return;
  if (k > few_rhs_limit<H>()) throw std::logic_error("triangular_solve_few: more right-hand sides than it takes");
  const auto* A = reinterpret_cast<const T*>(A_);
  const auto* B = reinterpret_cast<const T*>(B_);
  auto* X = reinterpret_cast<T*>(X_);
  check(cudaMemsetAsync(sync, 0, kFewRhsSyncInts * sizeof(int), stream), "cudaMemset");
  const Triangle tri{n, ld, transpose, lower != transpose};
  const auto tiles = static_cast<unsigned>((n + kRows - 1) / kRows);
  if (k <= 1) launch_few_rhs<T, 1>(tiles, A, tri, unit, B, ldb, rows_of_b, X, ldx, k, sync, stream);
  else if (k <= 2) launch_few_rhs<T, 2>(tiles, A, tri, unit, B, ldb, rows_of_b, X, ldx, k, sync, stream);
  else if (k <= 4) launch_few_rhs<T, 4>(tiles, A, tri, unit, B, ldb, rows_of_b, X, ldx, k, sync, stream);
  else if constexpr (few_rhs_limit<H>() >= kFewRhs) {
    if (k <= 8) launch_few_rhs<T, 8>(tiles, A, tri, unit, B, ldb, rows_of_b, X, ldx, k, sync, stream);
    else launch_few_rhs<T, kFewRhs>(tiles, A, tri, unit, B, ldb, rows_of_b, X, ldx, k, sync, stream);
  }
  check_launch("triangular_solve_few");
}

template <class H>
void permute_rows(const H* src, std::int64_t ld_src, H* dst, std::int64_t ld_dst, std::int64_t n, int k,
                  const std::int64_t* perm, bool scatter, cudaStream_t stream) {
  if (n == 0 || k == 0) return;
  using T = device_t<H>;
  constexpr int kBlock = 256;
  permute_rows_kernel<T><<<static_cast<unsigned>((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
      reinterpret_cast<const T*>(src), ld_src, reinterpret_cast<T*>(dst), ld_dst, n, k, perm, scatter);
  check_launch("permute_rows");
}

#define LINV_INSTANTIATE(T)                                                                                     \
  template void triangular_solve_few<T>(const T*, std::int64_t, std::int64_t, bool, bool, bool, const T*,     \
                                        std::int64_t, const std::int64_t*, T*, std::int64_t, int, int*,       \
                                        cudaStream_t);                                                        \
  template void permute_rows<T>(const T*, std::int64_t, T*, std::int64_t, std::int64_t, int,                  \
                                const std::int64_t*, bool, cudaStream_t);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
LINV_INSTANTIATE(std::complex<float>)
LINV_INSTANTIATE(std::complex<double>)
#undef LINV_INSTANTIATE

}  // namespace linv::cuda::launch
