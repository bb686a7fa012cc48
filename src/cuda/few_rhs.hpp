// The host side of the few-right-hand-side triangular solves (src/cuda/triangular.cu) that both dense
// families use (dense.cpp for real matrices, complex_dense.cpp for complex ones): their scratch, the check
// that falls back to the libraries' substitution, and the LU and Cholesky solves built on them.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "cuda/context.hpp"
#include "cuda/kernels.hpp"
#include "linv/matrix.hpp"

namespace linv::cuda {

// The gather of LAPACK's interchanges (1-based ipiv, applied in order): (P B)(i, :) = B(perm[i], :).
inline const std::int64_t* upload_permutation(Context& ctx, const std::vector<int>& pivots) {
  std::vector<std::int64_t> perm(pivots.size());
  std::iota(perm.begin(), perm.end(), std::int64_t{0});
  for (std::size_t i = 0; i < pivots.size(); ++i) std::swap(perm[i], perm[static_cast<std::size_t>(pivots[i] - 1)]);
  auto* d = ctx.scratch_as<std::int64_t>(Slot::pivots, std::max<std::size_t>(perm.size(), 1));
  to_device(d, perm.data(), perm.size() * sizeof(std::int64_t), ctx.main().stream);
  wait(ctx.main().stream);  // perm dies here
  return d;
}

// Scratch of the few-right-hand-side solves, in one slot at fixed offsets: their counters, an overflow
// flag, a work block and a copy of the right-hand sides (n x few_rhs_limit<T>() each).
template <Scalar T>
struct FewRhsScratch {
  int* sync;
  unsigned long long* first_non_finite;
  T* work;
  T* saved;
};

template <Scalar T>
FewRhsScratch<T> few_rhs_scratch(Context& ctx, std::int64_t n) {
  constexpr std::size_t kHead = 256;
  static_assert(launch::kFewRhsSyncInts * sizeof(int) + sizeof(unsigned long long) <= kHead);
  const std::size_t block = (bytes_of(n * launch::few_rhs_limit<T>(), sizeof(T)) + 255) / 256 * 256;
  auto* p = static_cast<char*>(ctx.scratch(Slot::few_rhs, kHead + 2 * block));
  return {reinterpret_cast<int*>(p), reinterpret_cast<unsigned long long*>(p + 64), reinterpret_cast<T*>(p + kHead),
          reinterpret_cast<T*>(p + kHead + block)};
}

// Runs `fast` (linv's few-right-hand-side solves, in place on the n x k block B) and checks B: the
// inverted diagonal blocks can overflow where substitution does not (triangles whose 64 x 64 blocks are
// extremely ill-conditioned, such as Kahan's matrix in float32), so a result that is not finite is
// computed again by `substitute` (cuSOLVER or cuBLAS) from the saved right-hand sides.
template <Scalar T, class Fast, class Substitute>
void few_rhs_or_substitution(Context& ctx, T* B, std::int64_t n, std::int64_t ldb, int k, Fast&& fast,
                             Substitute&& substitute) {
  const cudaStream_t s = ctx.main().stream;
  const FewRhsScratch<T> scratch = few_rhs_scratch<T>(ctx, n);
  check(cudaMemcpy2DAsync(scratch.saved, n * sizeof(T), B, ldb * sizeof(T), n * sizeof(T), k,
                          cudaMemcpyDeviceToDevice, s),
        "cudaMemcpy2D");
  fast();
  check(cudaMemsetAsync(scratch.first_non_finite, 0xFF, sizeof(unsigned long long), s), "cudaMemset");
  // a complex block read as the real one of its parts (2n x k, ld 2 ldb)
  constexpr std::int64_t parts = Complex<T> ? 2 : 1;
  launch::first_non_finite(reinterpret_cast<const real_t<T>*>(B), parts * n, k, parts * ldb, scratch.first_non_finite,
                           s);
  if (read_back(scratch.first_non_finite, s) == ~0ull) return;
  check(cudaMemcpy2DAsync(B, ldb * sizeof(T), scratch.saved, n * sizeof(T), n * sizeof(T), k,
                          cudaMemcpyDeviceToDevice, s),
        "cudaMemcpy2D");
  substitute();
  ctx.synchronize();
}

// B := op(A)^-1 B for A = P^T L U (LU factors and LAPACK's pivots; perm from upload_permutation; op(A) =
// A^H for complex A), k <= few_rhs_limit<T>() columns; `substitute` is the family's getrs of B in place.
template <Scalar T, class Substitute>
void lu_solve_few(Context& ctx, ConstMatrixView<T> LU, const std::int64_t* perm, T* B, std::int64_t ldb, int k, Op op,
                  Substitute&& substitute) {
  const std::int64_t n = LU.rows(), ld = ld_of(LU.ld());
  const FewRhsScratch<T> scratch = few_rhs_scratch<T>(ctx, n);
  T* w = scratch.work;
  int* sync = scratch.sync;
  const cudaStream_t s = ctx.main().stream;
  few_rhs_or_substitution<T>(
      ctx, B, n, ldb, k,
      [&] {
        if (op == Op::None) {  // L U x = P b
          launch::triangular_solve_few<T>(LU.data(), n, ld, /*lower=*/true, /*transpose=*/false, /*unit=*/true, B,
                                          ldb, perm, w, n, k, sync, s);
          launch::triangular_solve_few<T>(LU.data(), n, ld, false, false, false, w, n, nullptr, B, ldb, k, sync, s);
        } else {  // U^T L^T (P x) = b
          launch::triangular_solve_few<T>(LU.data(), n, ld, /*lower=*/false, /*transpose=*/true, /*unit=*/false, B,
                                          ldb, nullptr, w, n, k, sync, s);
          launch::triangular_solve_few<T>(LU.data(), n, ld, true, true, true, w, n, nullptr, w, n, k, sync, s);
          launch::permute_rows<T>(w, n, B, ldb, n, k, perm, /*scatter=*/true, s);
        }
      },
      substitute);
}

// B := A^-1 B (both triangles in place) for A = L L^T (L L^H), k <= few_rhs_limit<T>() columns; `substitute`
// is the family's potrs of B in place.
template <Scalar T, class Substitute>
void cholesky_solve_few(Context& ctx, ConstMatrixView<T> L, T* B, std::int64_t ldb, int k, Substitute&& substitute) {
  const std::int64_t n = L.rows(), ld = ld_of(L.ld());
  int* sync = few_rhs_scratch<T>(ctx, n).sync;
  const cudaStream_t s = ctx.main().stream;
  few_rhs_or_substitution<T>(
      ctx, B, n, ldb, k,
      [&] {
        launch::triangular_solve_few<T>(L.data(), n, ld, true, false, false, B, ldb, nullptr, B, ldb, k, sync, s);
        launch::triangular_solve_few<T>(L.data(), n, ld, true, true, false, B, ldb, nullptr, B, ldb, k, sync, s);
      },
      substitute);
}

}  // namespace linv::cuda
