// The host side of the dense families' one-pass checks of a matrix (dense.cpp for real matrices,
// complex_dense.cpp for complex ones): the device values each pass starts from, the pass itself (the
// family's own kernel), and what comes back, decoded once for both.
#pragma once

#include <cstring>
#include <utility>
#include <vector>

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

}  // namespace linv::cuda
