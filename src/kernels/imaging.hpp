// The imaging family (include/linv/imaging.hpp): for one blur model (image size, PSF, boundary condition,
// regulariser) on one device, the normal equations' matrix formed from the PSF, the blur as an operator
// for conjugate gradients, and the spectral system (the DFT's diagonalisation) for direct solves,
// preconditioning and the choice of lambda. Declared once here, implemented by each backend; deblurring
// itself is src/imaging/imaging.cpp's.
#pragma once

#include <cmath>
#include <memory>

#include "common/host_device.hpp"
#include "common/stencil.hpp"
#include "kernels/vectors.hpp"
#include "linv/imaging.hpp"
#include "linv/matrix.hpp"

namespace linv::kernels {

struct BlurModel {
  index height = 0, width = 0;
  ConstMatrixView<double> kernel;  // host memory
  imaging::Boundary boundary = imaging::Boundary::Reflexive;
  imaging::Regularizer regularizer = imaging::Regularizer::Laplacian;
};

// H (apply) and H^T (apply_transpose) on height x width images (contiguous views), queued in order like
// the vector family's steps.
class Convolution : public LinearOperator<double> {
 public:
  // y := H^T W H x + lambda L^T L x, W the weights set last (the identity until then).
  virtual void normal(ConstMatrixView<double> x, double lambda, MatrixView<double> y) = 0;
  // The data term's per-pixel weights (height x width on the operator's device, kept by reference until
  // the next call); an empty view: none.
  virtual void set_weights(ConstMatrixView<double> weights) = 0;
};

// H^T H + lambda L^T L made diagonal by a 2-D DFT: of the image itself under a periodic boundary, or of the
// image mirrored to 2 height x 2 width otherwise, which is the 2-D DCT's diagonalisation of the reflexive
// system when the PSF is symmetric (Hansen, Nagy and O'Leary, Deblurring Images, ch. 4). Exact for those
// two; for the others (zero boundary, asymmetric PSF) the nearest such system, a preconditioner.
class Spectral {
 public:
  virtual ~Spectral() = default;
  virtual bool exact() const = 0;
  // f := (H^T H + lambda L^T L)^-1 H^T g for one height x width image (exact when exact()).
  virtual void solve(ConstMatrixView<double> g, double lambda, MatrixView<double> f) = 0;
  // z := M^-1 r, M the spectral system (symmetric positive definite for lambda > 0).
  virtual void precondition(ConstMatrixView<double> r, double lambda, MatrixView<double> z) = 0;
  // Takes the images whose lambda is to be chosen (each height x width, side by side in g): keeps their
  // spectra, summed, for residual_and_trace.
  virtual void analyse(ConstMatrixView<double> g, int channels) = 0;
  // For the images analysed, in the spectral system: ||g - H f_lambda||^2 summed over them, and the trace
  // of I - H (H^T H + lambda L^T L)^-1 H^T of one image (generalised cross-validation's denominator).
  struct Terms {
    double residual = 0, trace = 0;
  };
  virtual Terms residual_and_trace(double lambda) const = 0;
};

// Isotropic total variation's steps for ADMM (src/imaging/deblur.cpp), on `channels` images of the model's size
// side by side (contiguous), D the gradient regulariser's two stencils under the model's boundary. The split
// variables z and u hold D f: height x (width * channels * 2), direction d of channel c in block 2 c + d.
// Queued in order like the vector family's steps.
class TotalVariation {
 public:
  virtual ~TotalVariation() = default;
  // At each pixel, v := D f + u; z := v max(0, 1 - tau / ||v||), the norm over both directions and every
  // channel (vectorial TV: the channels share their edges); u := v - z.
  virtual void shrink(ConstMatrixView<double> f, double tau, MatrixView<double> z, MatrixView<double> u) = 0;
  // r := b + rho D^T (z - u), channel by channel (b: height x (width * channels)).
  virtual void right_hand_side(ConstMatrixView<double> b, double rho, ConstMatrixView<double> z,
                               ConstMatrixView<double> u, MatrixView<double> r) = 0;
  // The Poisson data term's step (the splitting v = H f), pixel by pixel on height x (width * channels):
  // t := hf + a; v := argmin_v v - g log v + rho/2 (v - t)^2 (the positive root of rho v^2 + (1 - rho t) v - g);
  // a := t - v; target := v - a, the right-hand side f's step applies H^T to.
  virtual void poisson_data(ConstMatrixView<double> hf, ConstMatrixView<double> g, double rho, MatrixView<double> a,
                            MatrixView<double> target) = 0;
};

// That root without cancellation (q = rho t - 1 of either sign; g >= 0), on the host and the device.
LINV_HOST_DEVICE inline double poisson_proximal(double t, double g, double rho) {
  const double q = rho * t - 1, root = sqrt(q * q + 4 * rho * g);
  return q >= 0 ? (q + root) / (2 * rho) : 2 * g / (root - q);
}

// Nonlocal means (Buades, Coll and Morel, 2005) weighted by a pilot image: pixel p of every channel of out
// := sum_q w(p, q) y(q) / sum_q w(p, q) over the q within `search` pixels of p along each axis, with
// w(p, q) = exp(-d(p, q) / h^2), d the mean squared difference of the pilot's (2 patch + 1)^2 patches about p
// and q over every channel (the channels share their weights, as colour shares its edges). p itself is
// weighted as its most similar neighbour (its own weight, 1, would outweigh them). Reflexive at the frame.
struct NonlocalMeans {
  int patch = 2, search = 7;
  double h = 0;  // > 0
};

// One pixel (i, j) of that, on the host and the device; images of m x n, channel c at c m n, column-major.
LINV_HOST_DEVICE inline void nonlocal_means_pixel(const double* y, const double* pilot, index m, index n, int channels,
                                                  const NonlocalMeans& p, index i, index j, double* out) {
  const index plane = m * n, at = i + j * m;
  const double scale = 1 / (p.h * p.h * static_cast<double>((2 * p.patch + 1) * (2 * p.patch + 1) * channels));
  double total = 0, largest = 0;
  for (int c = 0; c < channels; ++c) out[at + c * plane] = 0;
  for (int dj = -p.search; dj <= p.search; ++dj)
    for (int di = -p.search; di <= p.search; ++di) {
      if (di == 0 && dj == 0) continue;
      double d = 0;
      for (int b = -p.patch; b <= p.patch; ++b) {
        const index pj = boundary_index(j + b, n, kReflexiveBoundary) * m;
        const index qj = boundary_index(j + dj + b, n, kReflexiveBoundary) * m;
        for (int a = -p.patch; a <= p.patch; ++a) {
          const index pi = boundary_index(i + a, m, kReflexiveBoundary);
          const index qi = boundary_index(i + di + a, m, kReflexiveBoundary);
          for (int c = 0; c < channels; ++c) {
            const double e = pilot[pi + pj + c * plane] - pilot[qi + qj + c * plane];
            d += e * e;
          }
        }
      }
      const double w = exp(-d * scale);
      const index q = boundary_index(i + di, m, kReflexiveBoundary) + boundary_index(j + dj, n, kReflexiveBoundary) * m;
      for (int c = 0; c < channels; ++c) out[at + c * plane] += w * y[q + c * plane];
      total += w;
      largest = w > largest ? w : largest;
    }
  if (largest == 0) largest = 1;  // no neighbour alike: p alone
  total += largest;
  for (int c = 0; c < channels; ++c) out[at + c * plane] = (out[at + c * plane] + largest * y[at + c * plane]) / total;
}

class Imaging {
 public:
  virtual ~Imaging() = default;
  // H^T H + lambda L^T L, formed on `device`.
  virtual Matrix<double> normal_matrix(const BlurModel& model, double lambda, Device device) const = 0;
  virtual std::unique_ptr<Convolution> convolution(const BlurModel& model, Device device) const = 0;
  virtual std::unique_ptr<Spectral> spectral(const BlurModel& model, Device device) const = 0;
  virtual std::unique_ptr<TotalVariation> total_variation(const BlurModel& model, int channels, Device device) const = 0;
  // out := nonlocal_means_pixel at every pixel, for `channels` images of m x n side by side (contiguous, on
  // one device, out apart from y and pilot).
  virtual void nonlocal_means(ConstMatrixView<double> y, ConstMatrixView<double> pilot, int channels,
                              const NonlocalMeans& params, MatrixView<double> out) const = 0;
};

}  // namespace linv::kernels
