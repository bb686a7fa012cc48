// Images under a boundary condition, the one definition the host and the GPU kernels share (nvcc compiles
// the LINV_HOST_DEVICE functions for the device too): where an index outside the frame reads, and the
// stencils the blur and the regularisers are made of, (S x)(i, j) = sum_t w_t x(i + di_t, j + dj_t).
#pragma once

#include <cstdint>

#include <vector>

#include "linv/matrix.hpp"

#include "common/host_device.hpp"

namespace linv::kernels {

// Boundary conditions and regularisers as integers, in imaging::Boundary's and imaging::Regularizer's
// order, for code that nvcc compiles.
enum : int { kZeroBoundary = 0, kReflexiveBoundary = 1, kPeriodicBoundary = 2 };
enum : int { kIdentityRegularizer = 0, kGradientRegularizer = 1, kLaplacianRegularizer = 2 };

// The index in [0, n) that position i (any integer) reads, or -1 where the zero boundary reads a zero.
// Reflexive is half-sample symmetric (imfilter's 'symmetric': -1 reads 0, n reads n - 1), repeated with
// period 2n for kernels wider than the image; periodic wraps with period n.
LINV_HOST_DEVICE inline std::int64_t boundary_index(std::int64_t i, std::int64_t n, int boundary) {
  if (i >= 0 && i < n) return i;
  if (boundary == kZeroBoundary) return -1;
  if (boundary == kPeriodicBoundary) return ((i % n) + n) % n;
  const std::int64_t t = ((i % (2 * n)) + 2 * n) % (2 * n);
  return t < n ? t : 2 * n - 1 - t;
}

struct Tap {
  int di, dj;
  double w;
};
// A regulariser's L as one or two stencils of at most five taps: L x = [S_0 x; S_1 x], so
// L^T L = sum_s S_s^T S_s. Identity: x; gradient: forward differences down the columns and along the rows
// (under a reflexive boundary the last of each line reads x twice and is zero); Laplacian: the 5-point one.
struct RegularizerStencils {
  int count;
  int taps[2];
  Tap tap[2][5];
};
LINV_HOST_DEVICE inline RegularizerStencils regularizer_stencils(int regularizer) {
  if (regularizer == kIdentityRegularizer) return {1, {1, 0}, {{{0, 0, 1.0}}, {}}};
  if (regularizer == kGradientRegularizer)
    return {2, {2, 2}, {{{0, 0, -1.0}, {1, 0, 1.0}}, {{0, 0, -1.0}, {0, 1, 1.0}}}};
  return {1, {5, 0}, {{{0, 0, 4.0}, {-1, 0, -1.0}, {1, 0, -1.0}, {0, -1, -1.0}, {0, 1, -1.0}}, {}}};
}

// The blur's taps: (H x)(i, j) = sum_{p, q} kernel(p, q) x(i - p + kr / 2, j - q + kc / 2).
inline std::vector<Tap> blur_taps(ConstMatrixView<double> kernel) {
  std::vector<Tap> taps;
  const index cr = kernel.rows() / 2, cc = kernel.cols() / 2;
  for (index q = 0; q < kernel.cols(); ++q)
    for (index p = 0; p < kernel.rows(); ++p)
      if (kernel(p, q) != 0) taps.push_back({static_cast<int>(cr - p), static_cast<int>(cc - q), kernel(p, q)});
  return taps;
}

// y := S x (add: y += S x) under `boundary`, on host images of one size.
inline void apply_stencil(const Tap* taps, int count, ConstMatrixView<double> x, int boundary, MatrixView<double> y,
                          bool add = false) {
  const index m = x.rows(), n = x.cols();
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < m; ++i) {
      double s = 0;
      for (int t = 0; t < count; ++t) {
        const index a = boundary_index(i + taps[t].di, m, boundary), b = boundary_index(j + taps[t].dj, n, boundary);
        if (a >= 0 && b >= 0) s += taps[t].w * x(a, b);
      }
      y(i, j) = add ? y(i, j) + s : s;
    }
}

// x += S^T y: each tap scatters back to the pixel it read.
inline void add_stencil_adjoint(const Tap* taps, int count, ConstMatrixView<double> y, int boundary,
                                MatrixView<double> x) {
  const index m = y.rows(), n = y.cols();
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < m; ++i)
      for (int t = 0; t < count; ++t) {
        const index a = boundary_index(i + taps[t].di, m, boundary), b = boundary_index(j + taps[t].dj, n, boundary);
        if (a >= 0 && b >= 0) x(a, b) += taps[t].w * y(i, j);
      }
}

}  // namespace linv::kernels
