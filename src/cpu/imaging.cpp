// The CPU backend's imaging family (src/kernels/imaging.hpp): H^T H + lambda L^T L formed from the PSF, H as
// imaging::Convolution (FFTs of the padded image when linv has FFTW), and the spectral system on FFTW's 2-D
// transforms (a separable DFT without FFTW).
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "common/parallel.hpp"
#include "common/stencil.hpp"
#include "cpu/backend.hpp"
#include "kernels/imaging.hpp"
#include "linv/errors.hpp"
#include "linv/imaging.hpp"
#ifdef LINV_HAVE_FFTW
#include <fftw3.h>

#include "common/fftw_planner.hpp"
#endif

namespace linv::cpu {
namespace {

using complex = std::complex<double>;

int code(imaging::Boundary b) { return static_cast<int>(b); }
int code(imaging::Regularizer r) { return static_cast<int>(r); }

class Convolution final : public kernels::Convolution {
 public:
  explicit Convolution(const kernels::BlurModel& m)
      : h_(m.height, m.width, m.kernel, m.boundary), boundary_(code(m.boundary)),
        regularizer_(kernels::regularizer_stencils(code(m.regularizer))) {}
  index rows() const override { return h_.height() * h_.width(); }
  index cols() const override { return rows(); }
  void apply(ConstMatrixView<double> x, MatrixView<double> y) override {
    copy<double>(h_.apply(image(x)).view(), image(y));
  }
  void apply_transpose(ConstMatrixView<double> y, MatrixView<double> x) override {
    copy<double>(h_.apply_adjoint(image(y)).view(), image(x));
  }
  void normal(ConstMatrixView<double> x, double lambda, MatrixView<double> y) override {
    Matrix<double> t = h_.apply(image(x));
    if (!weights_.empty())
      for (index k = 0; k < t.size(); ++k) t.data()[k] *= weights_.data()[k];
    copy<double>(h_.apply_adjoint(t.view()).view(), image(y));
    Matrix<double> u = Matrix<double>::uninitialized(h_.height(), h_.width());
    for (int s = 0; s < regularizer_.count; ++s) {  // y += lambda S_s^T S_s x
      kernels::apply_stencil(regularizer_.tap[s], regularizer_.taps[s], image(x), boundary_, u.view());
      for (index k = 0; k < u.size(); ++k) u.data()[k] *= lambda;
      kernels::add_stencil_adjoint(regularizer_.tap[s], regularizer_.taps[s], u.view(), boundary_, image(y));
    }
  }
  void set_weights(ConstMatrixView<double> weights) override { weights_ = weights; }

 private:
  // The operator's vectors as images (contiguous, height x width).
  ConstMatrixView<double> image(ConstMatrixView<double> v) const {
    return {v.data(), h_.height(), h_.width(), h_.height()};
  }
  MatrixView<double> image(MatrixView<double> v) const { return {v.data(), h_.height(), h_.width(), h_.height()}; }

  imaging::Convolution h_;
  int boundary_;
  kernels::RegularizerStencils regularizer_;
  ConstMatrixView<double> weights_;
};

// A 2-D complex DFT of M x N column-major data, in place: FFTW's, or separable O(M N (M + N)) sums.
class Dft {
 public:
  Dft(index M, index N) : M_(M), N_(N), data_(static_cast<std::size_t>(M * N)) {
#ifdef LINV_HAVE_FFTW
    auto* p = reinterpret_cast<fftw_complex*>(data_.data());
    const std::lock_guard<std::mutex> planning(detail::fftw_planner_mutex());
    forward_ = fftw_plan_dft_2d(static_cast<int>(N), static_cast<int>(M), p, p, FFTW_FORWARD, FFTW_ESTIMATE);
    backward_ = fftw_plan_dft_2d(static_cast<int>(N), static_cast<int>(M), p, p, FFTW_BACKWARD, FFTW_ESTIMATE);
#endif
  }
  ~Dft() {
#ifdef LINV_HAVE_FFTW
    const std::lock_guard<std::mutex> planning(detail::fftw_planner_mutex());
    fftw_destroy_plan(forward_);
    fftw_destroy_plan(backward_);
#endif
  }
  Dft(const Dft&) = delete;
  Dft& operator=(const Dft&) = delete;
  complex& operator()(index i, index j) { return data_[static_cast<std::size_t>(i + j * M_)]; }
  complex* data() { return data_.data(); }
  // Unnormalised: backward(forward(x)) = M N x.
  void transform(bool forward) {
#ifdef LINV_HAVE_FFTW
    fftw_execute(forward ? forward_ : backward_);
#else
    const double sign = forward ? -1.0 : 1.0;
    std::vector<complex> line(static_cast<std::size_t>(std::max(M_, N_)));
    auto dft = [&](index length, index stride, complex* base) {
      for (index k = 0; k < length; ++k) {
        complex s = 0;
        for (index t = 0; t < length; ++t)
          s += base[t * stride] * std::polar(1.0, sign * 2 * std::numbers::pi * static_cast<double>((k * t) % length) /
                                                       static_cast<double>(length));
        line[static_cast<std::size_t>(k)] = s;
      }
      for (index k = 0; k < length; ++k) base[k * stride] = line[static_cast<std::size_t>(k)];
    };
    for (index j = 0; j < N_; ++j) dft(M_, 1, data_.data() + j * M_);
    for (index i = 0; i < M_; ++i) dft(N_, M_, data_.data() + i);
#endif
  }

 private:
  index M_;
  [[maybe_unused]] index N_;  // read by the transform without FFTW only
  std::vector<complex> data_;
#ifdef LINV_HAVE_FFTW
  fftw_plan forward_ = nullptr, backward_ = nullptr;
#endif
};

// The spectral system (see kernels::Spectral): the DFT of the image (periodic) or of the image mirrored to
// 2 height x 2 width. Mirrored, image pixel (a, b) appears four times, at a or 2 height - 1 - a and b or
// 2 width - 1 - b: E extends, E^T / 4 averages back, which is the restriction for the symmetric results
// of a symmetric PSF and keeps the preconditioner symmetric for the others.
class Spectral final : public kernels::Spectral {
 public:
  explicit Spectral(const kernels::BlurModel& m)
      : m_(m.height), n_(m.width), mirror_(m.boundary != imaging::Boundary::Periodic),
        M_(mirror_ ? 2 * m_ : m_), N_(mirror_ ? 2 * n_ : n_), dft_(M_, N_),
        exact_(!mirror_ || (m.boundary == imaging::Boundary::Reflexive &&
                            imaging::psf_from(m.kernel, "model").symmetric())),
        h_(static_cast<std::size_t>(M_ * N_)), h2_(h_.size()), l2_(h_.size()) {
    const index kr = m.kernel.rows(), kc = m.kernel.cols(), cr = kr / 2, cc = kc / 2;
    std::fill(dft_.data(), dft_.data() + M_ * N_, complex(0));
    for (index q = 0; q < kc; ++q)  // the kernel centred on the origin, wrapped
      for (index p = 0; p < kr; ++p) dft_(((p - cr) % M_ + M_) % M_, ((q - cc) % N_ + N_) % N_) += m.kernel(p, q);
    dft_.transform(true);
    std::copy(dft_.data(), dft_.data() + M_ * N_, h_.begin());
    const int regularizer = code(m.regularizer);
    for (index v = 0; v < N_; ++v)
      for (index u = 0; u < M_; ++u) {
        const std::size_t k = static_cast<std::size_t>(u + v * M_);
        h2_[k] = std::norm(h_[k]);
        // the 5-point Laplacian's eigenvalue; the gradient's L^T L is that Laplacian, the Laplacian's its square
        const double d = 4 - 2 * std::cos(2 * std::numbers::pi * static_cast<double>(u) / static_cast<double>(M_)) -
                         2 * std::cos(2 * std::numbers::pi * static_cast<double>(v) / static_cast<double>(N_));
        l2_[k] = regularizer == kernels::kIdentityRegularizer ? 1.0
                 : regularizer == kernels::kGradientRegularizer ? d
                                                               : d * d;
      }
  }

  bool exact() const override { return exact_; }
  void solve(ConstMatrixView<double> g, double lambda, MatrixView<double> f) override {
    divide(g, lambda, /*with_adjoint=*/true, f);
  }
  void precondition(ConstMatrixView<double> r, double lambda, MatrixView<double> z) override {
    divide(r, lambda, /*with_adjoint=*/false, z);
  }

  void analyse(ConstMatrixView<double> g, int channels) override {
    power_.assign(h_.size(), 0.0);
    for (int c = 0; c < channels; ++c) {
      extend(g.block(0, c * n_, m_, n_));
      dft_.transform(true);
      for (std::size_t k = 0; k < power_.size(); ++k) power_[k] += std::norm(dft_.data()[k]);
    }
    // Parseval's weights: all M N modes with 1 / (M N) periodic; mirrored, the DCT's modes (u < height,
    // v < width), a mode's |DFT|^2 being 16 times the square of its unnormalised DCT coefficient
    counted_.assign(h_.size(), 0.0);
    for (index v = 0; v < N_; ++v)
      for (index u = 0; u < M_; ++u) {
        const std::size_t k = static_cast<std::size_t>(u + v * M_);
        if (!mirror_) {
          power_[k] /= static_cast<double>(M_ * N_);
          counted_[k] = 1;
        } else if (u < m_ && v < n_) {
          const double su = (u == 0 ? 1.0 : 2.0) / static_cast<double>(m_), sv = (v == 0 ? 1.0 : 2.0) / static_cast<double>(n_);
          power_[k] *= su * sv / 16;
          counted_[k] = 1;
        } else {
          power_[k] = 0;
        }
      }
  }

  Terms residual_and_trace(double lambda) const override {
    Terms t;
    for (std::size_t k = 0; k < h2_.size(); ++k) {
      if (counted_[k] == 0) continue;
      const double den = h2_[k] + lambda * l2_[k];
      const double rest = den > 0 ? lambda * l2_[k] / den : 1.0;  // 1 - the filter factor
      t.residual += rest * rest * power_[k];
      t.trace += rest;
    }
    return t;
  }

 private:
  void extend(ConstMatrixView<double> x) {
    for (index j = 0; j < N_; ++j)
      for (index i = 0; i < M_; ++i) dft_(i, j) = x(i < m_ ? i : M_ - 1 - i, j < n_ ? j : N_ - 1 - j);
  }
  // out := E^T (transform^-1 of (transform(E x) times multiplier)) / 4 (mirrored), or without E periodic;
  // multiplier conj(h) / (|h|^2 + lambda l2) (a solve) or 1 / (|h|^2 + lambda l2) (preconditioning).
  void divide(ConstMatrixView<double> x, double lambda, bool with_adjoint, MatrixView<double> out) {
    extend(x);
    dft_.transform(true);
    for (std::size_t k = 0; k < h_.size(); ++k) {
      const double den = h2_[k] + lambda * l2_[k];
      dft_.data()[k] = den > 0 ? dft_.data()[k] * (with_adjoint ? std::conj(h_[k]) : complex(1)) / den : complex(0);
    }
    dft_.transform(false);
    const double scale = 1.0 / static_cast<double>(M_ * N_) / (mirror_ ? 4.0 : 1.0);
    for (index j = 0; j < n_; ++j)
      for (index i = 0; i < m_; ++i) {
        double s = dft_(i, j).real();
        if (mirror_) s += dft_(M_ - 1 - i, j).real() + dft_(i, N_ - 1 - j).real() + dft_(M_ - 1 - i, N_ - 1 - j).real();
        out(i, j) = s * scale;
      }
  }

  index m_, n_;
  bool mirror_;
  index M_, N_;
  Dft dft_;
  bool exact_;
  std::vector<complex> h_;
  std::vector<double> h2_, l2_, power_, counted_;
};

class TotalVariation final : public kernels::TotalVariation {
 public:
  TotalVariation(const kernels::BlurModel& m, int channels)
      : m_(m.height), n_(m.width), channels_(channels), boundary_(code(m.boundary)),
        D_(kernels::regularizer_stencils(kernels::kGradientRegularizer)) {}
  void shrink(ConstMatrixView<double> f, double tau, MatrixView<double> z, MatrixView<double> u) override {
    for (int c = 0; c < channels_; ++c)
      for (int d = 0; d < 2; ++d)  // v := D_d f_c + u, in z
        kernels::apply_stencil(D_.tap[d], D_.taps[d], block(f, c), boundary_, block(z, 2 * c + d));
    const index pixels = m_ * n_, blocks = 2 * channels_;
    for (index p = 0; p < pixels; ++p) {
      double norm2 = 0;
      for (index b = 0; b < blocks; ++b) {
        double& v = z.data()[p + b * pixels];
        v += u.data()[p + b * pixels];
        norm2 += v * v;
      }
      const double norm = std::sqrt(norm2), keep = norm > tau ? 1 - tau / norm : 0.0;
      for (index b = 0; b < blocks; ++b) {
        const double v = z.data()[p + b * pixels];
        z.data()[p + b * pixels] = keep * v;
        u.data()[p + b * pixels] = v - keep * v;
      }
    }
  }
  void right_hand_side(ConstMatrixView<double> b, double rho, ConstMatrixView<double> z, ConstMatrixView<double> u,
                       MatrixView<double> r) override {
    Matrix<double> w = Matrix<double>::uninitialized(m_, n_);
    for (int c = 0; c < channels_; ++c) {
      copy<double>(block(b, c), block(r, c));
      for (int d = 0; d < 2; ++d) {
        const ConstMatrixView<double> zd = block(z, 2 * c + d), ud = block(u, 2 * c + d);
        for (index k = 0; k < m_ * n_; ++k) w.data()[k] = rho * (zd.data()[k] - ud.data()[k]);
        kernels::add_stencil_adjoint(D_.tap[d], D_.taps[d], w.view(), boundary_, block(r, c));
      }
    }
  }
  void poisson_data(ConstMatrixView<double> hf, ConstMatrixView<double> g, double rho, MatrixView<double> a,
                    MatrixView<double> target) override {
    for (index k = 0; k < m_ * n_ * channels_; ++k) {
      const double t = hf.data()[k] + a.data()[k], v = kernels::poisson_proximal(t, g.data()[k], rho);
      a.data()[k] = t - v;
      target.data()[k] = 2 * v - t;
    }
  }

 private:
  // Block k (an image) of a contiguous row of images.
  ConstMatrixView<double> block(ConstMatrixView<double> x, index k) const { return {x.data() + k * m_ * n_, m_, n_, m_}; }
  MatrixView<double> block(MatrixView<double> x, index k) const { return {x.data() + k * m_ * n_, m_, n_, m_}; }
  index m_, n_;
  int channels_, boundary_;
  kernels::RegularizerStencils D_;
};

class Imaging final : public kernels::Imaging {
 public:
  // Each output pixel's row of H adds the products of its weights (pixels read twice under a reflexive or
  // periodic boundary simply add), and each row of L likewise, times lambda.
  Matrix<double> normal_matrix(const kernels::BlurModel& model, double lambda, Device) const override {
    const index m = model.height, n = model.width, size = m * n;
    const int boundary = code(model.boundary);
    Matrix<double> C(size, size);
    std::vector<std::pair<index, double>> row;
    auto add_rows = [&](const kernels::Tap* taps, int count, double scale) {
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < m; ++i) {
          row.clear();
          for (int t = 0; t < count; ++t) {
            const index a = kernels::boundary_index(i + taps[t].di, m, boundary);
            const index b = kernels::boundary_index(j + taps[t].dj, n, boundary);
            if (a >= 0 && b >= 0) row.emplace_back(a + b * m, taps[t].w);
          }
          for (const auto& [x, wx] : row)
            for (const auto& [y, wy] : row) C(x, y) += scale * wx * wy;
        }
    };
    const std::vector<kernels::Tap> taps = kernels::blur_taps(model.kernel);
    add_rows(taps.data(), static_cast<int>(taps.size()), 1.0);
    const kernels::RegularizerStencils L = kernels::regularizer_stencils(code(model.regularizer));
    for (int s = 0; s < L.count; ++s) add_rows(L.tap[s], L.taps[s], lambda);
    return C;
  }

  std::unique_ptr<kernels::Convolution> convolution(const kernels::BlurModel& model, Device) const override {
    return std::make_unique<Convolution>(model);
  }
  std::unique_ptr<kernels::Spectral> spectral(const kernels::BlurModel& model, Device) const override {
    return std::make_unique<Spectral>(model);
  }
  std::unique_ptr<kernels::TotalVariation> total_variation(const kernels::BlurModel& model, int channels,
                                                           Device) const override {
    return std::make_unique<TotalVariation>(model, channels);
  }
  void nonlocal_means(ConstMatrixView<double> y, ConstMatrixView<double> pilot, int channels,
                      const kernels::NonlocalMeans& params, MatrixView<double> out) const override {
    const index m = y.rows(), n = y.cols() / channels;
    // columns split across the threads: each pixel's sum is independent
    detail::in_parallel(n, 8, [&](index first, index last) {
      for (index j = first; j < last; ++j)
        for (index i = 0; i < m; ++i)
          kernels::nonlocal_means_pixel(y.data(), pilot.data(), m, n, channels, params, i, j, out.data());
    });
  }
};

}  // namespace

const kernels::Imaging& imaging() { return kernels::instance<Imaging>(); }

}  // namespace linv::cpu
