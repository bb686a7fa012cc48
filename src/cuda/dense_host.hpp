// The host side the dense families share (dense.cpp for real matrices, complex_dense.cpp for complex ones):
// the one-pass checks of a matrix (the device values each pass starts from, the pass itself being the
// family's own kernel, and what comes back, decoded), the pivots' upload, and the condition estimate.
#pragma once

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "common/norm_estimate.hpp"
#include "cuda/context.hpp"
#include "kernels/dense.hpp"

namespace linv::cuda {

// Dense::magnitude of a rows x cols matrix: launch(out, stream) updates out[0], the first non-finite entry's
// position j rows + i (from ~0), and out[1], the bits of the largest magnitude (from those of +0.0).
template <class Launch>
kernels::Magnitude read_magnitude(Context& ctx, index rows, Launch&& launch) {
  auto* d = ctx.scratch_as<unsigned long long>(Slot::small, 2);
  const cudaStream_t s = ctx.main().stream;
  unsigned long long found[2] = {~0ull, 0};
  to_device(d, found, sizeof(found), s);
  launch(d, s);
  to_host(found, d, sizeof(found), s);
  wait(s);
  kernels::Magnitude m;
  if (found[0] != ~0ull)
    m.first_non_finite = std::pair{static_cast<index>(found[0] % static_cast<unsigned long long>(rows)),
                                   static_cast<index>(found[0] / static_cast<unsigned long long>(rows))};
  std::memcpy(&m.max_abs, &found[1], sizeof(double));
  return m;
}

// Dense::detect_structure: launch(flags, stream) clears flags[0] where the matrix is not lower triangular,
// flags[1] where it is not upper triangular and flags[2] where it is not symmetric (Hermitian).
template <class Launch>
Structure read_structure(Context& ctx, Launch&& launch) {
  auto* d = ctx.scratch_as<int>(Slot::small, 3);
  const cudaStream_t s = ctx.main().stream;
  int flags[3] = {1, 1, 1};
  to_device(d, flags, sizeof(flags), s);
  launch(d, s);
  to_host(flags, d, sizeof(flags), s);
  wait(s);
  const bool lower = flags[0] != 0, upper = flags[1] != 0;
  if (lower && upper) return Structure::Diagonal;
  if (lower) return Structure::Lower;
  if (upper) return Structure::Upper;
  return flags[2] != 0 ? Structure::Symmetric : Structure::General;
}

// Dense::first_asymmetric of an n x n matrix: launch(out, stream) lowers out, from ~0, to j n + i of the
// first entry (i, j) on or below the diagonal that differs from its mirror by more than the tolerance.
template <class Launch>
std::optional<std::pair<index, index>> read_first_asymmetric(Context& ctx, index n, Launch&& launch) {
  auto* d = ctx.scratch_as<unsigned long long>(Slot::small, 1);
  const cudaStream_t s = ctx.main().stream;
  unsigned long long first = ~0ull;
  to_device(d, &first, sizeof(first), s);
  launch(d, s);
  to_host(&first, d, sizeof(first), s);
  wait(s);
  if (first == ~0ull) return std::nullopt;
  const auto rows = static_cast<unsigned long long>(n);
  return std::pair{static_cast<index>(first % rows), static_cast<index>(first / rows)};
}

// Dense::diagonal: A's diagonal (A on a GPU) in host memory.
template <Scalar T>
std::vector<T> diagonal_to_host(ConstMatrixView<T> A) {
  const index n = std::min(A.rows(), A.cols());
  std::vector<T> d(static_cast<std::size_t>(n));
  if (n == 0) return d;
  context_of(A.device());
  check(cudaMemcpy2D(d.data(), sizeof(T), A.data(), (A.ld() + 1) * sizeof(T), sizeof(T), n, cudaMemcpyDeviceToHost),
        "cudaMemcpy2D");
  return d;
}

// LAPACK's pivots (1-based), or 0-based ones, as int64 in Slot::pivots (cuSOLVER's getrs and linv's kernels).
inline std::int64_t* upload_pivots(Context& ctx, const std::vector<int>& pivots, bool zero_based) {
  std::vector<std::int64_t> p(pivots.size());
  for (std::size_t i = 0; i < pivots.size(); ++i) p[i] = pivots[i] - (zero_based ? 1 : 0);
  auto* d = ctx.scratch_as<std::int64_t>(Slot::pivots, std::max<std::size_t>(p.size(), 1));
  to_device(d, p.data(), p.size() * sizeof(std::int64_t), ctx.main().stream);
  wait(ctx.main().stream);  // p dies here
  return d;
}

// rcond from Higham and Tisseur's block estimator of ||A^-1||_1 (src/common/norm_estimate.hpp; complex signs
// for complex T) driving solve_in_place(x, t, op), solves with A and A^T (A^H) of n x t blocks on the GPU,
// kEstimateColumns at a time: the real family's few-right-hand-side solves read the factors once per pass
// whatever the columns, so two columns cost what one does.
constexpr int kEstimateColumns = 2;

template <Scalar T, class Solve>
double estimate_rcond(Context& ctx, std::int64_t n, double anorm, Solve&& solve_in_place) {
  if (n == 0) return 1.0;
  if (anorm == 0) return 0.0;
  T* d_x = ctx.scratch_as<T>(Slot::small, static_cast<std::size_t>(n) * kEstimateColumns);
  const cudaStream_t s = ctx.main().stream;
  const double est = cpu::block_norm1_estimate<T>(n, kEstimateColumns, [&](std::vector<T>& X, bool transpose) {
    const int t = static_cast<int>(X.size() / static_cast<std::size_t>(n));
    to_device(d_x, X.data(), X.size() * sizeof(T), s);
    solve_in_place(d_x, t, transpose ? Op::Transpose : Op::None);
    to_host(X.data(), d_x, X.size() * sizeof(T), s);
    wait(s);
  });
  return est > 0 ? 1.0 / (anorm * est) : 0.0;
}

}  // namespace linv::cuda
