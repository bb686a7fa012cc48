// linv's own CUDA kernels: the element-wise and permutation work the libraries do not provide. Each
// launches on `stream` and returns at once; launch errors raise DeviceError. Matrices are column-major
// with leading dimension ld; pivot arrays hold 0-based row indices.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace linv::cuda::launch {

// A := [I I ... I], `count` identities of order n side by side (n x count n).
template <class T>
void fill_identity(T* A, std::int64_t n, std::int64_t ld, cudaStream_t stream, std::int64_t count = 1);
// A(i, i) := value.
template <class T>
void set_diagonal(T* A, std::int64_t n, std::int64_t ld, T value, cudaStream_t stream);
// One level of a random butterfly (kernels::Dense::butterflies): level `level`'s blocks of 0..n-1, the pairs
// of X's rows (left) or columns (right), r the level's n factors; mix_first: (x + y) r / sqrt2 rather than
// (r x + r y) / sqrt2. `other`: X's columns (left) or rows (right).
template <class T>
void butterfly_level(const T* r, int level, std::int64_t n, std::int64_t other, T* X, std::int64_t ld, bool left,
                     bool mix_first, cudaStream_t stream);
// Both levels of a depth-2 butterfly in one pass, for n divisible by 4 (the levels' pairs then close over
// quadruples i, i + n/4, i + n/2, i + 3n/4): levels 0 then 1 with mix_first when `ascending`, else 1 then 0
// scaling first. r: the two levels' factors, column l at r + l * ld_r.
template <class T>
void butterfly_two_levels(const T* r, std::int64_t ld_r, std::int64_t n, std::int64_t other, T* X, std::int64_t ld,
                          bool left, bool ascending, cudaStream_t stream);
// Zeroes the strict upper (upper = true) or strict lower triangle.
template <class T>
void zero_triangle(T* A, std::int64_t n, std::int64_t ld, bool upper, cudaStream_t stream);
// dst := src on the strict upper (upper = true) or strict lower triangle, and on the diagonal when
// with_diagonal; dst's other entries are left as they are.
template <class T>
void copy_triangle(const T* src, std::int64_t ld_src, T* dst, std::int64_t ld_dst, std::int64_t n, bool upper,
                   bool with_diagonal, cudaStream_t stream);
// A(i, j) := A(j, i) for i < j: the upper triangle becomes the mirror of the lower one.
template <class T>
void mirror_lower(T* A, std::int64_t n, std::int64_t ld, cudaStream_t stream);

// dst(j, i) := src(i, j) over src's upper (src_upper) or lower triangle, diagonal included (n x n).
template <class T>
void transpose_triangle(const T* src, std::int64_t ld_src, T* dst, std::int64_t ld_dst, std::int64_t n, bool src_upper,
                        cudaStream_t stream);
// The interchanges j <-> pivots[j], j = j0 .. j1 - 1 (in order, with j1 - j0 <= 1024), as one gather:
// afterwards row touched[t] holds what row source[t] held before, for t < *count (at most 2 (j1 - j0)
// entries). Computed by one block in shared memory, so applying it needs no sequential steps.
void interchange_plan(const std::int64_t* pivots, std::int64_t j0, std::int64_t j1, std::int64_t* touched,
                      std::int64_t* source, int* count, cudaStream_t stream);
// Applies an interchange plan to columns [c0, c1); max_count bounds *count (2 (j1 - j0)).
template <class T>
void apply_interchange_plan(T* A, std::int64_t ld, std::int64_t c0, std::int64_t c1, const std::int64_t* touched,
                            const std::int64_t* source, const int* count, int max_count, cudaStream_t stream);
// Interchanges columns j and pivots[j] for j = n-1 down to 0 (undoing row pivoting on an inverse), as
// a gather of columns chunk_rows rows at a time: sources is device scratch of n entries, work of
// chunk_rows x n (replaying the interchanges row by row in one kernel took 3 ms at n = 4096).
template <class T>
void unpermute_columns(T* A, std::int64_t rows, std::int64_t n, std::int64_t ld, const std::int64_t* pivots,
                       std::int64_t* sources, T* work, std::int64_t chunk_rows, cudaStream_t stream);
// global[k + j] = k + local[j] - 1 for j < b: cuSOLVER's 1-based panel pivots as 0-based matrix rows.
void panel_pivots(const std::int64_t* local, std::int64_t* global, std::int64_t k, std::int64_t b, cudaStream_t stream);

// Triangular solves with few right-hand sides at memory bandwidth (src/cuda/triangular.cu): one launch,
// tiles of the solution handed from block to block. X := op(A)^-1 P B, where op(A) is A or A^T (A^H for
// complex T), A is lower or upper triangular (the other triangle is not read), unit says its diagonal is
// taken as ones, and P B is the gather B(rows_of_b[i], :) (nullptr: B itself). X may be B when rows_of_b is
// nullptr. k <= few_rhs_limit<T>(); sync is device scratch of kFewRhsSyncInts ints (cleared on `stream`).
constexpr int kFewRhs = 16;
constexpr int kFewRhsSyncInts = 2;
// kFewRhs, but 4 for complex128, whose tiles of 16-byte entries leave a block's shared memory room for no more.
template <class T>
constexpr int few_rhs_limit() {
  return sizeof(T) == 16 ? 4 : kFewRhs;
}
template <class T>
void triangular_solve_few(const T* A, std::int64_t n, std::int64_t ld, bool lower, bool transpose, bool unit,
                          const T* B, std::int64_t ldb, const std::int64_t* rows_of_b, T* X, std::int64_t ldx, int k,
                          int* sync, cudaStream_t stream);
// dst(i, :) := src(perm[i], :) for i < n (k columns), or with scatter dst(perm[i], :) := src(i, :).
template <class T>
void permute_rows(const T* src, std::int64_t ld_src, T* dst, std::int64_t ld_dst, std::int64_t n, int k,
                  const std::int64_t* perm, bool scatter, cudaStream_t stream);

// LU with tournament pivoting (src/cuda/calu.cu; the shape is kernels::Tournament, w <= its kPanel): two
// launches a panel. Their device work area (calu_work_bytes for a panel of `rows` rows, entries of
// entry_bytes; carved by calu_work) needs its counters zeroed once before the first panel.
template <class T>
struct CaluWork {
  T* top = nullptr;      // kPanel x kPanel: L \ U of the pivot rows, from the final game
  T* saved = nullptr;    // kPanel x kPanel: the original rows the interchanges move below the top
  T* multipliers = nullptr;  // kTile x kPanel: the final game's, by thread and column
  std::int64_t* touched = nullptr;  // the interchange plan: row touched[k] receives row source[k]
  std::int64_t* source = nullptr;
  int* count = nullptr;
  int* counters = nullptr;  // arrivals per game (zero between panels)
  std::size_t counter_count = 0;
  int* lists = nullptr;     // the rounds' candidates
};
std::size_t calu_work_bytes(std::int64_t rows, std::size_t entry_bytes);
template <class T>
CaluWork<T> calu_work(void* memory, std::int64_t rows);
// Every round of the tournament on the panel P (rows offsets from P, leading dimension ld, w columns) in
// one grid: writes the panel's interchanges, pivots[i] = row0 + the row that row i trades places with (as
// LAPACK's ipiv, 0-based), for i < w, their plan, and the L \ U of the pivot rows; a zero pivot at column
// c puts row0 + c + 1 into *zero_pivot if smaller than what is there.
template <class T>
void calu_tournament(const T* P, std::int64_t ld, int w, std::int64_t rows, std::int64_t row0, std::int64_t* pivots,
                     int* zero_pivot, const CaluWork<T>& work, cudaStream_t stream);
// Then: the interchanges on every column of A (n x n) outside the panel's [j, j + w), and the panel's
// rows j .. n - 1 as L \ U on top and L21 = A21 U11^-1 below.
template <class T>
void calu_finish(T* A, std::int64_t ld, std::int64_t n, std::int64_t j, int w, const CaluWork<T>& work,
                 cudaStream_t stream);
// *result := max(*result, max |a(i, j)|) over A, or over its upper triangle (diagonal included).
template <class T>
void max_abs(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, bool upper, double* result,
             cudaStream_t stream);

// Moves the strictly lower part of columns [j, j + jb) into work (same row indices, ld_work) and zeroes
// it in A: the L block column LAPACK's getri consumes.
template <class T>
void take_lower_block(T* A, std::int64_t n, std::int64_t ld, std::int64_t j, std::int64_t jb, T* work,
                      std::int64_t ld_work, cudaStream_t stream);

// Which entries norm1 reads: all, or one triangle (with its diagonal taken as ones when unit).
struct Part {
  enum Shape { Full, Lower, Upper } shape = Full;
  bool unit_diagonal = false;
};
// *result must be 0 beforehand; afterwards it holds max_j sum_i |A(i, j)| over `part` (the 1-norm),
// in double.
template <class T>
void norm1(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* result, cudaStream_t stream,
           Part part = {});
// *first must be ~0ull beforehand; afterwards it is the smallest j * rows + i with A(i, j) not finite.
template <class T>
void first_non_finite(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, unsigned long long* first,
                      cudaStream_t stream);
// out[0] must be ~0ull and out[1] 0 beforehand; afterwards out[0] is as first_non_finite's *first and out[1]
// holds the bits of the largest |A(i, j)| among the finite entries, as a double.
template <class T>
void magnitude(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, unsigned long long* out,
               cudaStream_t stream);
// flags[0..2] must be 1 beforehand; they end 0 when the matrix is not lower triangular, not upper
// triangular, not exactly symmetric.
template <class T>
void structure_flags(const T* A, std::int64_t n, std::int64_t ld, int* flags, cudaStream_t stream);
// *out (~0ull beforehand) := min(*out, j n + i) over i > j with |A(i, j) - A(j, i)| > tol (in double).
template <class T>
void first_asymmetric(const T* A, std::int64_t n, std::int64_t ld, double tol, unsigned long long* out,
                      cudaStream_t stream);
// dst := double(src)
template <class T>
void to_double(const T* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* dst, std::int64_t ld_dst,
               cudaStream_t stream);
// Mixed-precision refinement: dst := float(src); x += double(d) (d rows x cols, contiguous);
// result[j] := max_i |A(i, j)|; *result (0 beforehand) := max_i sum_j |A(i, j)| (the infinity norm).
void to_float(const double* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, float* dst,
              std::int64_t ld_dst, cudaStream_t stream);
void add_correction(const float* d, std::int64_t rows, std::int64_t cols, double* x, std::int64_t ld_x,
                    cudaStream_t stream);
void column_max_abs(const double* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* result,
                    cudaStream_t stream);
void norm_inf(const double* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* result,
              cudaStream_t stream);
// out := A diag(w) (A rows x cols, w of length cols), products in double; A(i, j) *= d[i] in place.
template <class T>
void scale_columns(const T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, const double* w, T* out,
                   std::int64_t ld_out, cudaStream_t stream);
template <class T>
void scale_rows(T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, const double* d, cudaStream_t stream);
// W_k := sum_j sign(l_j) v_j v_j^T / sqrt(|l_j|) over the j with |l_j| > n eps max_j |l_j|, for k < count:
// the pseudo-inverse square root of a symmetric S_k from its eigenpairs, as its SVD gives it (V: n x n per
// k, eigenvectors in columns; l: n per k; W: n x n per k; n <= 32).
void inverse_roots(const double* V, const double* l, std::int64_t n, std::int64_t count, double* W, cudaStream_t stream);
// *count := how many of values[0 .. n - 1] are nonzero (a batched solver's failures), as a float64.
void count_nonzero(const int* values, std::int64_t n, double* count, cudaStream_t stream);
// Entries uniform in [lo, hi) from a counter-based generator (same seed, same matrix).
template <class T>
void fill_uniform(T* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed, T lo, T hi,
                  cudaStream_t stream);

}  // namespace linv::cuda::launch
