// The blur under a boundary condition (include/linv/imaging.hpp): the convolution and its adjoint on host
// images, directly and by FFTs, the dense system matrix H and regulariser L, and H^T H + lambda L^T L on any
// device (the backends form it).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/stencil.hpp"
#include "core/policy.hpp"
#include "kernels/backend.hpp"
#include "linv/errors.hpp"
#include "linv/imaging.hpp"
#ifdef LINV_HAVE_FFTW
#include <fftw3.h>

#include "common/fftw_planner.hpp"
#endif

namespace linv::imaging {
namespace {

int code(Boundary b) { return static_cast<int>(b); }

void require_fits(index height, index width, ConstMatrixView<double> kernel, const char* what) {
  require_host(kernel.device(), what);
  if (kernel.empty()) throw InvalidArgument(fmt::format("{}: the PSF is empty", what));
  if (height < 1 || width < 1) throw InvalidArgument(fmt::format("{}: the image is empty", what));
}

}  // namespace

Matrix<double> convolve(ConstMatrixView<double> f, ConstMatrixView<double> kernel, Boundary boundary) {
  require_fits(f.rows(), f.cols(), kernel, "convolve");
  require_finite_image(f, 1, "the image");
  const std::vector<kernels::Tap> taps = kernels::blur_taps(kernel);
  Matrix<double> g = Matrix<double>::uninitialized(f.rows(), f.cols());
  kernels::apply_stencil(taps.data(), static_cast<int>(taps.size()), f, code(boundary), g.view());
  policy::require_finite_result<double>(g.view(), "the blurred image");
  return g;
}

Matrix<double> convolve_adjoint(ConstMatrixView<double> g, ConstMatrixView<double> kernel, Boundary boundary) {
  require_fits(g.rows(), g.cols(), kernel, "convolve_adjoint");
  const std::vector<kernels::Tap> taps = kernels::blur_taps(kernel);
  Matrix<double> f(g.rows(), g.cols());
  kernels::add_stencil_adjoint(taps.data(), static_cast<int>(taps.size()), g, code(boundary), f.view());
  return f;
}

// ---- Convolution: FFTs of the padded image ---------------------------------------------------------
//
// H = S C E: E pads f (height x width) to P x Q = (height + kr - 1) x (width + kc - 1) as the boundary
// says, C is the circular convolution there with the kernel at the origin (linear on the padded image),
// and S keeps rows [kr / 2, kr / 2 + height) and columns [kc / 2, kc / 2 + width). Padded row t < height
// holds image row t; rows height .. height + kr / 2 - 1 hold the rows past the bottom edge, and the last
// kr - 1 - kr / 2 rows those above the top (negative rows, which C's wrap-around reaches); the boundary
// condition says which image row each reads, or zero. So H^T = E^T C^T S^T: place g at (kr / 2, kc / 2),
// multiply by the conjugate spectrum, and fold each padded pixel back onto the image pixel it was read
// from (E^T). Images are column-major, which FFTW's row-major plans see as the transpose: the same
// 2-D transform.
struct Convolution::Plan {
  index height = 0, width = 0, kr = 0, kc = 0;
  Boundary boundary = Boundary::Zero;
  Matrix<double> kernel;
#ifdef LINV_HAVE_FFTW
  index P = 0, Q = 0, spectrum = 0;  // padded size; complex entries of a real transform (Q (P / 2 + 1))
  std::vector<index> row_of, col_of;  // the image row (column) each padded row (column) reads; -1: zero
  double* real = nullptr;
  fftw_complex* freq = nullptr;
  fftw_complex* kernel_freq = nullptr;
  fftw_plan forward = nullptr, backward = nullptr;

  static std::vector<index> sources(index n, index padded, index centre, Boundary b) {
    std::vector<index> out(static_cast<std::size_t>(padded));
    for (index t = 0; t < padded; ++t) {
      const index logical = t < n + centre ? t : t - padded;  // past the far edge, or before the near one
      out[static_cast<std::size_t>(t)] = kernels::boundary_index(logical, n, code(b));
    }
    return out;
  }

  // real := spectrum-multiplied transform of `real`, scaled (conjugate: C^T instead of C).
  void circulate(bool conjugate) const {
    fftw_execute(forward);
    const double sign = conjugate ? -1.0 : 1.0, scale = 1.0 / static_cast<double>(P * Q);
    for (index k = 0; k < spectrum; ++k) {
      const double a = freq[k][0], b = freq[k][1], c = kernel_freq[k][0], d = sign * kernel_freq[k][1];
      freq[k][0] = scale * (a * c - b * d);
      freq[k][1] = scale * (a * d + b * c);
    }
    fftw_execute(backward);
  }
#endif
};

Convolution::Convolution(index height, index width, ConstMatrixView<double> kernel, Boundary boundary)
    : plan_(std::make_unique<Plan>()) {
  require_fits(height, width, kernel, "Convolution");
  plan_->height = height;
  plan_->width = width;
  plan_->kr = kernel.rows();
  plan_->kc = kernel.cols();
  plan_->boundary = boundary;
  plan_->kernel = Matrix<double>::copy_of(kernel);
#ifdef LINV_HAVE_FFTW
  Plan& p = *plan_;
  p.P = height + p.kr - 1;
  p.Q = width + p.kc - 1;
  p.spectrum = p.Q * (p.P / 2 + 1);
  p.row_of = Plan::sources(height, p.P, p.kr / 2, boundary);
  p.col_of = Plan::sources(width, p.Q, p.kc / 2, boundary);
  p.real = fftw_alloc_real(static_cast<std::size_t>(p.P * p.Q));
  p.freq = fftw_alloc_complex(static_cast<std::size_t>(p.spectrum));
  p.kernel_freq = fftw_alloc_complex(static_cast<std::size_t>(p.spectrum));
  if (!p.real || !p.freq || !p.kernel_freq) throw std::bad_alloc();
  {
    const std::lock_guard<std::mutex> planning(detail::fftw_planner_mutex());
    p.forward = fftw_plan_dft_r2c_2d(static_cast<int>(p.Q), static_cast<int>(p.P), p.real, p.freq, FFTW_ESTIMATE);
    p.backward = fftw_plan_dft_c2r_2d(static_cast<int>(p.Q), static_cast<int>(p.P), p.freq, p.real, FFTW_ESTIMATE);
  }
  std::fill(p.real, p.real + p.P * p.Q, 0.0);
  for (index q = 0; q < p.kc; ++q)
    for (index r = 0; r < p.kr; ++r) p.real[r + q * p.P] = kernel(r, q);
  fftw_execute(p.forward);
  std::memcpy(p.kernel_freq, p.freq, sizeof(fftw_complex) * static_cast<std::size_t>(p.spectrum));
#endif
}

Convolution::~Convolution() {
#ifdef LINV_HAVE_FFTW
  if (plan_) {
    {
      const std::lock_guard<std::mutex> planning(detail::fftw_planner_mutex());
      fftw_destroy_plan(plan_->forward);
      fftw_destroy_plan(plan_->backward);
    }
    fftw_free(plan_->real);
    fftw_free(plan_->freq);
    fftw_free(plan_->kernel_freq);
  }
#endif
}

bool Convolution::have_fft() noexcept {
#ifdef LINV_HAVE_FFTW
  return true;
#else
  return false;
#endif
}

index Convolution::height() const noexcept { return plan_->height; }
index Convolution::width() const noexcept { return plan_->width; }

Matrix<double> Convolution::apply(ConstMatrixView<double> f) const {
  const Plan& p = *plan_;
  if (f.rows() != p.height || f.cols() != p.width)
    throw ShapeMismatch("Convolution::apply: the operator's image and f", p.height, p.width, f.rows(), f.cols());
#ifdef LINV_HAVE_FFTW
  for (index t = 0; t < p.Q; ++t) {  // E f
    const index c = p.col_of[static_cast<std::size_t>(t)];
    for (index s = 0; s < p.P; ++s) {
      const index r = p.row_of[static_cast<std::size_t>(s)];
      p.real[s + t * p.P] = r >= 0 && c >= 0 ? f(r, c) : 0.0;
    }
  }
  p.circulate(/*conjugate=*/false);
  Matrix<double> out = Matrix<double>::uninitialized(p.height, p.width);  // S C E f
  for (index j = 0; j < p.width; ++j)
    for (index i = 0; i < p.height; ++i) out(i, j) = p.real[(i + p.kr / 2) + (j + p.kc / 2) * p.P];
  return out;
#else
  return convolve(f, p.kernel.view(), p.boundary);
#endif
}

Matrix<double> Convolution::apply_adjoint(ConstMatrixView<double> g) const {
  const Plan& p = *plan_;
  if (g.rows() != p.height || g.cols() != p.width)
    throw ShapeMismatch("Convolution::apply_adjoint: the operator's image and g", p.height, p.width, g.rows(),
                        g.cols());
#ifdef LINV_HAVE_FFTW
  std::fill(p.real, p.real + p.P * p.Q, 0.0);  // S^T g
  for (index j = 0; j < p.width; ++j)
    for (index i = 0; i < p.height; ++i) p.real[(i + p.kr / 2) + (j + p.kc / 2) * p.P] = g(i, j);
  p.circulate(/*conjugate=*/true);
  Matrix<double> out(p.height, p.width);  // E^T: each padded pixel back where it was read from
  for (index t = 0; t < p.Q; ++t) {
    const index c = p.col_of[static_cast<std::size_t>(t)];
    for (index s = 0; s < p.P; ++s) {
      const index r = p.row_of[static_cast<std::size_t>(s)];
      if (r >= 0 && c >= 0) out(r, c) += p.real[s + t * p.P];
    }
  }
  return out;
#else
  return convolve_adjoint(g, p.kernel.view(), p.boundary);
#endif
}

// ---- dense matrices -------------------------------------------------------------------------------

Matrix<double> system_matrix(index height, index width, ConstMatrixView<double> kernel, Boundary boundary) {
  require_fits(height, width, kernel, "system_matrix");
  const index size = height * width;
  const std::vector<kernels::Tap> taps = kernels::blur_taps(kernel);
  Matrix<double> H(size, size);
  for (index j = 0; j < width; ++j)
    for (index i = 0; i < height; ++i)
      for (const kernels::Tap& t : taps) {
        const index a = kernels::boundary_index(i + t.di, height, code(boundary));
        const index b = kernels::boundary_index(j + t.dj, width, code(boundary));
        if (a >= 0 && b >= 0) H(i + j * height, a + b * height) += t.w;
      }
  return H;
}

Matrix<double> regularizer_matrix(index height, index width, Regularizer regularizer, Boundary boundary) {
  if (height < 1 || width < 1) throw InvalidArgument("regularizer_matrix: the image is empty");
  const index size = height * width;
  const kernels::RegularizerStencils L = kernels::regularizer_stencils(static_cast<int>(regularizer));
  Matrix<double> out(L.count * size, size);
  for (int s = 0; s < L.count; ++s)
    for (index j = 0; j < width; ++j)
      for (index i = 0; i < height; ++i)
        for (int t = 0; t < L.taps[s]; ++t) {
          const kernels::Tap& tap = L.tap[s][t];
          const index a = kernels::boundary_index(i + tap.di, height, code(boundary));
          const index b = kernels::boundary_index(j + tap.dj, width, code(boundary));
          if (a >= 0 && b >= 0) out(s * size + i + j * height, a + b * height) += tap.w;
        }
  return out;
}

Matrix<double> normal_matrix(index height, index width, ConstMatrixView<double> kernel, Boundary boundary,
                             Regularizer regularizer, double lambda, Device device) {
  require_fits(height, width, kernel, "normal_matrix");
  return kernels::imaging(device).normal_matrix({height, width, kernel, boundary, regularizer}, lambda, device);
}

}  // namespace linv::imaging
