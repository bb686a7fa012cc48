// The imaging family on the GPU (src/kernels/imaging.hpp): H^T H + lambda L^T L formed from the PSF, H
// applied by cuFFT on the image padded as the boundary says (the scheme of imaging::Convolution on the
// CPU), and the spectral system on cuFFT's 2-D transforms, with the reductions lambda's choice needs.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/stencil.hpp"
#include "cuda/backend.hpp"
#include "cuda/context.hpp"
#include "cuda/reduce.cuh"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

using kernels::boundary_index;
using kernels::Tap;

constexpr int kThreads = 256;
constexpr unsigned kTermBlocks = 264;  // GCV's sums: two waves of an H100's 132 multiprocessors

unsigned grid_for(std::int64_t count) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>((count + kThreads - 1) / kThreads, 65535)));
}

#define LINV_GRID_STRIDE(k, count)                                                                   \
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < (count); \
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

void check_fft(cufftResult status, const char* what) {
  if (status != CUFFT_SUCCESS)
    throw DeviceError(std::string("cuFFT: ") + what + " failed with status " + std::to_string(static_cast<int>(status)));
}

// ---- H^T H + lambda L^T L ----------------------------------------------------------------------------

// One thread per output pixel: its row of H adds the products of its weights to C (atomically: pixels
// share columns), then each row of L its products times lambda.
__global__ void normal_matrix_kernel(double* C, std::int64_t ld, std::int64_t m, std::int64_t n, const Tap* taps,
                                     int count, int boundary, int regularizer, double lambda) {
  const std::int64_t pixel = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (pixel >= m * n) return;
  const std::int64_t i = pixel % m, j = pixel / m;
  auto column = [&](const Tap& t) {
    const std::int64_t a = boundary_index(i + t.di, m, boundary), b = boundary_index(j + t.dj, n, boundary);
    return a >= 0 && b >= 0 ? a + b * m : std::int64_t{-1};
  };
  for (int s = 0; s < count; ++s) {
    const std::int64_t x = column(taps[s]);
    if (x < 0) continue;
    for (int t = 0; t < count; ++t) {
      const std::int64_t y = column(taps[t]);
      if (y >= 0) atomicAdd(C + x + y * ld, taps[s].w * taps[t].w);
    }
  }
  const kernels::RegularizerStencils L = kernels::regularizer_stencils(regularizer);
  for (int r = 0; r < L.count; ++r)
    for (int s = 0; s < L.taps[r]; ++s) {
      const std::int64_t x = column(L.tap[r][s]);
      if (x < 0) continue;
      for (int t = 0; t < L.taps[r]; ++t) {
        const std::int64_t y = column(L.tap[r][t]);
        if (y >= 0) atomicAdd(C + x + y * ld, lambda * L.tap[r][s].w * L.tap[r][t].w);
      }
    }
}

// ---- H = S C E on a P x Q padded buffer (see src/imaging/blur.cpp's Convolution) ----

// The image row (column) that padded row s of P reads: rows past the far edge, then those before the near one.
__device__ std::int64_t padded_source(std::int64_t s, std::int64_t n, std::int64_t P, std::int64_t centre, int boundary) {
  return boundary_index(s < n + centre ? s : s - P, n, boundary);
}

// real := E x, the image padded as the boundary says.
__global__ void pad_kernel(const double* x, std::int64_t m, std::int64_t n, std::int64_t ld, double* real, std::int64_t P,
                           std::int64_t Q, std::int64_t cr, std::int64_t cc, int boundary) {
  LINV_GRID_STRIDE(k, P * Q) {
    const std::int64_t a = padded_source(k % P, m, P, cr, boundary), b = padded_source(k / P, n, Q, cc, boundary);
    real[k] = a >= 0 && b >= 0 ? x[a + b * ld] : 0.0;
  }
}

// out += E^T real: each padded pixel back onto the image pixel it reads (several may: atomically).
__global__ void fold_kernel(const double* real, std::int64_t P, std::int64_t Q, std::int64_t m, std::int64_t n,
                            std::int64_t cr, std::int64_t cc, int boundary, double* out) {
  LINV_GRID_STRIDE(k, P * Q) {
    const std::int64_t a = padded_source(k % P, m, P, cr, boundary), b = padded_source(k / P, n, Q, cc, boundary);
    if (a >= 0 && b >= 0) atomicAdd(out + a + b * m, real[k]);
  }
}

// real := S^T y: zero, with y (m x n) in the window at (cr, cc).
__global__ void place_kernel(const double* y, std::int64_t m, std::int64_t n, std::int64_t ld, double* real,
                             std::int64_t P, std::int64_t Q, std::int64_t cr, std::int64_t cc) {
  LINV_GRID_STRIDE(k, P * Q) {
    const std::int64_t i = k % P - cr, j = k / P - cc;
    real[k] = i >= 0 && i < m && j >= 0 && j < n ? y[i + j * ld] : 0.0;
  }
}

// out := S real, times the weights where given.
__global__ void crop_kernel(const double* real, std::int64_t P, std::int64_t cr, std::int64_t cc, std::int64_t m,
                            std::int64_t n, const double* weights, double* out) {
  LINV_GRID_STRIDE(k, m * n) {
    const double v = real[(k % m + cr) + (k / m + cc) * P];
    out[k] = weights ? weights[k] * v : v;
  }
}

// freq *= scale * spectrum (or its conjugate), entry by entry.
__global__ void multiply_kernel(cufftDoubleComplex* freq, const cufftDoubleComplex* spectrum, std::int64_t count,
                                bool conjugate, double scale) {
  LINV_GRID_STRIDE(k, count) {
    const double a = freq[k].x, b = freq[k].y, c = spectrum[k].x, d = conjugate ? -spectrum[k].y : spectrum[k].y;
    freq[k].x = scale * (a * c - b * d);
    freq[k].y = scale * (a * d + b * c);
  }
}

// u := S_r x, stencil r of the regulariser.
__global__ void stencil_kernel(const double* x, std::int64_t m, std::int64_t n, int boundary, int regularizer, int r,
                               double* u) {
  const kernels::RegularizerStencils L = kernels::regularizer_stencils(regularizer);
  LINV_GRID_STRIDE(k, m * n) {
    const std::int64_t i = k % m, j = k / m;
    double s = 0;
    for (int t = 0; t < L.taps[r]; ++t) {
      const std::int64_t a = boundary_index(i + L.tap[r][t].di, m, boundary), b = boundary_index(j + L.tap[r][t].dj, n, boundary);
      if (a >= 0 && b >= 0) s += L.tap[r][t].w * x[a + b * m];
    }
    u[k] = s;
  }
}

// y += lambda S_r^T u: each tap scatters back to the pixel it read.
__global__ void stencil_adjoint_kernel(const double* u, std::int64_t m, std::int64_t n, int boundary, int regularizer,
                                       int r, double lambda, double* y) {
  const kernels::RegularizerStencils L = kernels::regularizer_stencils(regularizer);
  LINV_GRID_STRIDE(k, m * n) {
    const std::int64_t i = k % m, j = k / m;
    for (int t = 0; t < L.taps[r]; ++t) {
      const std::int64_t a = boundary_index(i + L.tap[r][t].di, m, boundary), b = boundary_index(j + L.tap[r][t].dj, n, boundary);
      if (a >= 0 && b >= 0) atomicAdd(y + a + b * m, lambda * L.tap[r][t].w * u[k]);
    }
  }
}

class FftOperator final : public kernels::Convolution {
 public:
  FftOperator(Context& ctx, const kernels::BlurModel& model)
      : ctx_(ctx), m_(model.height), n_(model.width), kr_(model.kernel.rows()), kc_(model.kernel.cols()),
        P_(m_ + kr_ - 1), Q_(n_ + kc_ - 1), spectrum_count_(Q_ * (P_ / 2 + 1)), boundary_(static_cast<int>(model.boundary)),
        regularizer_(static_cast<int>(model.regularizer)), device_(Device::cuda(ctx.device())),
        real_(Matrix<double>::uninitialized(P_ * Q_, 1, device_)),
        freq_(Matrix<double>::uninitialized(2 * spectrum_count_, 1, device_)),
        spectrum_(Matrix<double>::uninitialized(2 * spectrum_count_, 1, device_)),
        scratch_(Matrix<double>::uninitialized(m_, n_, device_)) {
    const cudaStream_t stream = ctx.main().stream;
    // column-major P x Q is row-major Q x P: the same 2-D transform
    check_fft(cufftPlan2d(&forward_, static_cast<int>(Q_), static_cast<int>(P_), CUFFT_D2Z), "plan");
    check_fft(cufftPlan2d(&backward_, static_cast<int>(Q_), static_cast<int>(P_), CUFFT_Z2D), "plan");
    check_fft(cufftSetStream(forward_, stream), "stream");
    check_fft(cufftSetStream(backward_, stream), "stream");
    const Matrix<double> k = Matrix<double>::copy_of(model.kernel).to(device_);
    place_kernel<<<grid_for(P_ * Q_), kThreads, 0, stream>>>(k.data(), kr_, kc_, ld_of(k.ld()), real_.data(), P_, Q_, 0, 0);
    check_launch("place");
    check_fft(cufftExecD2Z(forward_, real_.data(), spectrum()), "forward transform");
    ctx.synchronize();
  }
  ~FftOperator() override {
    cufftDestroy(forward_);
    cufftDestroy(backward_);
  }
  FftOperator(const FftOperator&) = delete;
  FftOperator& operator=(const FftOperator&) = delete;

  index rows() const override { return m_ * n_; }
  index cols() const override { return m_ * n_; }

  // y := H x = S C E x
  void apply(ConstMatrixView<double> x, MatrixView<double> y) override {
    forward_half(x.data(), ld_of(x.ld()), nullptr, y.data());
  }
  // x := H^T y = E^T C^T S^T y
  void apply_transpose(ConstMatrixView<double> y, MatrixView<double> x) override {
    check(cudaMemsetAsync(x.data(), 0, bytes_of(m_ * n_, sizeof(double)), stream()), "cudaMemset");
    adjoint_half(y.data(), ld_of(y.ld()), x.data());
  }
  // y := H^T W H x + lambda L^T L x
  void normal(ConstMatrixView<double> x, double lambda, MatrixView<double> y) override {
    forward_half(x.data(), ld_of(x.ld()), weights_.empty() ? nullptr : weights_.data(), scratch_.data());
    check(cudaMemsetAsync(y.data(), 0, bytes_of(m_ * n_, sizeof(double)), stream()), "cudaMemset");
    adjoint_half(scratch_.data(), m_, y.data());
    const kernels::RegularizerStencils L = kernels::regularizer_stencils(regularizer_);
    for (int r = 0; r < L.count; ++r) {
      stencil_kernel<<<grid_for(m_ * n_), kThreads, 0, stream()>>>(x.data(), m_, n_, boundary_, regularizer_, r,
                                                                    scratch_.data());
      check_launch("stencil");
      stencil_adjoint_kernel<<<grid_for(m_ * n_), kThreads, 0, stream()>>>(scratch_.data(), m_, n_, boundary_,
                                                                            regularizer_, r, lambda, y.data());
      check_launch("stencil adjoint");
    }
  }
  void set_weights(ConstMatrixView<double> weights) override { weights_ = weights; }

 private:
  cudaStream_t stream() const { return ctx_.main().stream; }
  cufftDoubleComplex* spectrum() { return reinterpret_cast<cufftDoubleComplex*>(spectrum_.data()); }
  cufftDoubleComplex* freq() { return reinterpret_cast<cufftDoubleComplex*>(freq_.data()); }

  // real := C real (conjugate: C^T real), the circular convolution with the kernel, scaled.
  void round_trip(bool conjugate) {
    check_fft(cufftExecD2Z(forward_, real_.data(), freq()), "forward transform");
    multiply_kernel<<<grid_for(spectrum_count_), kThreads, 0, stream()>>>(freq(), spectrum(), spectrum_count_, conjugate,
                                                                         1.0 / static_cast<double>(P_ * Q_));
    check_launch("multiply");
    check_fft(cufftExecZ2D(backward_, freq(), real_.data()), "inverse transform");
  }
  // out := W S C E x (W: the weights, or none)
  void forward_half(const double* x, std::int64_t ld, const double* weights, double* out) {
    pad_kernel<<<grid_for(P_ * Q_), kThreads, 0, stream()>>>(x, m_, n_, ld, real_.data(), P_, Q_, kr_ / 2, kc_ / 2,
                                                              boundary_);
    check_launch("pad");
    round_trip(/*conjugate=*/false);
    crop_kernel<<<grid_for(m_ * n_), kThreads, 0, stream()>>>(real_.data(), P_, kr_ / 2, kc_ / 2, m_, n_, weights, out);
    check_launch("crop");
  }
  // out += E^T C^T S^T y
  void adjoint_half(const double* y, std::int64_t ld, double* out) {
    place_kernel<<<grid_for(P_ * Q_), kThreads, 0, stream()>>>(y, m_, n_, ld, real_.data(), P_, Q_, kr_ / 2, kc_ / 2);
    check_launch("place");
    round_trip(/*conjugate=*/true);
    fold_kernel<<<grid_for(P_ * Q_), kThreads, 0, stream()>>>(real_.data(), P_, Q_, m_, n_, kr_ / 2, kc_ / 2, boundary_,
                                                               out);
    check_launch("fold");
  }

  Context& ctx_;
  std::int64_t m_, n_, kr_, kc_, P_, Q_, spectrum_count_;
  int boundary_, regularizer_;
  Device device_;
  Matrix<double> real_, freq_, spectrum_, scratch_;
  ConstMatrixView<double> weights_;
  cufftHandle forward_ = 0, backward_ = 0;
};

// ---- the spectral system (see kernels::Spectral and src/cpu/imaging.cpp) ----

// buf := the kernel centred on the origin of the M x N grid, wrapped (one thread per kernel entry).
__global__ void centre_kernel(const double* kernel, std::int64_t kr, std::int64_t kc, cufftDoubleComplex* buf,
                              std::int64_t M, std::int64_t N) {
  LINV_GRID_STRIDE(k, kr * kc) {
    const std::int64_t p = k % kr, q = k / kr;
    const std::int64_t u = ((p - kr / 2) % M + M) % M, v = ((q - kc / 2) % N + N) % N;
    atomicAdd(&buf[u + v * M].x, kernel[k]);
  }
}

// h2 := |h|^2, l2 := the regulariser's eigenvalues (the 5-point Laplacian's, squared for the Laplacian).
__global__ void eigen_kernel(const cufftDoubleComplex* h, std::int64_t M, std::int64_t N, int regularizer, double* h2,
                             double* l2) {
  LINV_GRID_STRIDE(k, M * N) {
    const double u = static_cast<double>(k % M), v = static_cast<double>(k / M);
    const double d = 4 - 2 * cospi(2 * u / static_cast<double>(M)) - 2 * cospi(2 * v / static_cast<double>(N));
    h2[k] = h[k].x * h[k].x + h[k].y * h[k].y;
    l2[k] = regularizer == kernels::kIdentityRegularizer ? 1.0 : regularizer == kernels::kGradientRegularizer ? d : d * d;
  }
}

// buf := E x (mirrored to M x N = 2m x 2n, or x itself), real.
__global__ void extend_kernel(const double* x, std::int64_t m, std::int64_t n, std::int64_t ld, cufftDoubleComplex* buf,
                              std::int64_t M, std::int64_t N) {
  LINV_GRID_STRIDE(k, M * N) {
    const std::int64_t i = k % M, j = k / M;
    buf[k].x = x[(i < m ? i : M - 1 - i) + (j < n ? j : N - 1 - j) * ld];
    buf[k].y = 0;
  }
}

// buf *= conj(h) / (h2 + lambda l2) (adjoint) or 1 / (h2 + lambda l2); zero where that is 0 / 0.
__global__ void divide_kernel(cufftDoubleComplex* buf, const cufftDoubleComplex* h, const double* h2, const double* l2,
                              double lambda, bool adjoint, std::int64_t count) {
  LINV_GRID_STRIDE(k, count) {
    const double den = h2[k] + lambda * l2[k];
    double a = buf[k].x, b = buf[k].y;
    if (!(den > 0)) {
      buf[k].x = buf[k].y = 0;
      continue;
    }
    if (adjoint) {
      const double c = h[k].x, d = -h[k].y;
      const double re = a * c - b * d, im = a * d + b * c;
      a = re, b = im;
    }
    buf[k].x = a / den;
    buf[k].y = b / den;
  }
}

// out := scale * E^T Re(buf) (the four mirror images of each pixel summed), or scale * Re(buf) periodic.
__global__ void restrict_kernel(const cufftDoubleComplex* buf, std::int64_t m, std::int64_t n, std::int64_t M,
                                std::int64_t N, bool mirror, double scale, double* out, std::int64_t ld) {
  LINV_GRID_STRIDE(k, m * n) {
    const std::int64_t i = k % m, j = k / m;
    double s = buf[i + j * M].x;
    if (mirror) s += buf[(M - 1 - i) + j * M].x + buf[i + (N - 1 - j) * M].x + buf[(M - 1 - i) + (N - 1 - j) * M].x;
    out[i + j * ld] = scale * s;
  }
}

__global__ void power_kernel(const cufftDoubleComplex* buf, std::int64_t count, double* power) {
  LINV_GRID_STRIDE(k, count) { power[k] += buf[k].x * buf[k].x + buf[k].y * buf[k].y; }
}

// Parseval's weights (see src/cpu/imaging.cpp's Spectral::analyse): 1 / (M N) periodic; mirrored, the DCT
// modes' (u < m, v < n; the others are not summed).
__global__ void weigh_kernel(double* power, std::int64_t m, std::int64_t n, std::int64_t M, std::int64_t N, bool mirror) {
  LINV_GRID_STRIDE(k, M * N) {
    const std::int64_t u = k % M, v = k / M;
    if (!mirror) {
      power[k] /= static_cast<double>(M * N);
    } else if (u < m && v < n) {
      const double su = (u == 0 ? 1.0 : 2.0) / static_cast<double>(m), sv = (v == 0 ? 1.0 : 2.0) / static_cast<double>(n);
      power[k] *= su * sv / 16;
    }
  }
}

// Per block, the sums of (1 - filter)^2 power and of (1 - filter) over the image's own modes (all, periodic;
// the DCT's u < m, v < n, mirrored), in a fixed order.
__global__ void terms_kernel(const double* power, const double* h2, const double* l2, double lambda, std::int64_t m,
                             std::int64_t n, std::int64_t M, double* partial) {
  __shared__ double shared[kThreads / 32];
  double residual = 0, trace = 0;
  LINV_GRID_STRIDE(k, m * n) {
    const std::int64_t mode = k % m + (k / m) * M;
    const double den = h2[mode] + lambda * l2[mode];
    const double rest = den > 0 ? lambda * l2[mode] / den : 1.0;
    residual += rest * rest * power[mode];
    trace += rest;
  }
  residual = block_sum(residual, shared);
  trace = block_sum(trace, shared);
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = residual;
    partial[2 * blockIdx.x + 1] = trace;
  }
}

class Spectral final : public kernels::Spectral {
 public:
  Spectral(Context& ctx, const kernels::BlurModel& model)
      : ctx_(ctx), m_(model.height), n_(model.width), mirror_(model.boundary != imaging::Boundary::Periodic),
        M_(mirror_ ? 2 * m_ : m_), N_(mirror_ ? 2 * n_ : n_),
        exact_(!mirror_ || (model.boundary == imaging::Boundary::Reflexive &&
                            imaging::psf_from(model.kernel, "model").symmetric())),
        device_(Device::cuda(ctx.device())), h_(buffer(2)), buf_(buffer(2)), h2_(buffer(1)), l2_(buffer(1)),
        partial_(Matrix<double>::uninitialized(2 * kTermBlocks, 1, device_)) {
    check_fft(cufftPlan2d(&plan_, static_cast<int>(N_), static_cast<int>(M_), CUFFT_Z2Z), "plan");
    check_fft(cufftSetStream(plan_, stream()), "stream");
    const Matrix<double> k = Matrix<double>::copy_of(model.kernel).to(device_);
    check(cudaMemsetAsync(buf(), 0, bytes_of(M_ * N_, sizeof(cufftDoubleComplex)), stream()), "cudaMemset");
    centre_kernel<<<grid_for(k.size()), kThreads, 0, stream()>>>(k.data(), k.rows(), k.cols(), buf(), M_, N_);
    check_launch("centre");
    check_fft(cufftExecZ2Z(plan_, buf(), h(), CUFFT_FORWARD), "forward transform");
    eigen_kernel<<<grid_for(M_ * N_), kThreads, 0, stream()>>>(h(), M_, N_, static_cast<int>(model.regularizer),
                                                              h2_.data(), l2_.data());
    check_launch("eigenvalues");
  }
  ~Spectral() override { cufftDestroy(plan_); }
  Spectral(const Spectral&) = delete;
  Spectral& operator=(const Spectral&) = delete;

  bool exact() const override { return exact_; }
  void solve(ConstMatrixView<double> g, double lambda, MatrixView<double> f) override { divide(g, lambda, true, f); }
  void precondition(ConstMatrixView<double> r, double lambda, MatrixView<double> z) override {
    divide(r, lambda, false, z);
  }

  void analyse(ConstMatrixView<double> g, int channels) override {
    if (power_.empty()) power_ = buffer(1);  // only when lambda is chosen here
    check(cudaMemsetAsync(power_.data(), 0, bytes_of(M_ * N_, sizeof(double)), stream()), "cudaMemset");
    for (int c = 0; c < channels; ++c) {
      extend(g.block(0, c * n_, m_, n_));
      check_fft(cufftExecZ2Z(plan_, buf(), buf(), CUFFT_FORWARD), "forward transform");
      power_kernel<<<grid_for(M_ * N_), kThreads, 0, stream()>>>(buf(), M_ * N_, power_.data());
      check_launch("power");
    }
    weigh_kernel<<<grid_for(M_ * N_), kThreads, 0, stream()>>>(power_.data(), m_, n_, M_, N_, mirror_);
    check_launch("weigh");
  }

  Terms residual_and_trace(double lambda) const override {
    const std::int64_t m = mirror_ ? m_ : M_, n = mirror_ ? n_ : N_;  // the modes summed
    terms_kernel<<<kTermBlocks, kThreads, 0, stream()>>>(power_.data(), h2_.data(), l2_.data(), lambda, m, n, M_,
                                                         partial_.data());
    check_launch("terms");
    std::vector<double> partial(2 * kTermBlocks);
    to_host(partial.data(), partial_.data(), bytes_of(2 * kTermBlocks, sizeof(double)), stream());
    wait(stream());
    Terms t;
    for (unsigned b = 0; b < kTermBlocks; ++b) t.residual += partial[2 * b], t.trace += partial[2 * b + 1];
    return t;
  }

 private:
  cudaStream_t stream() const { return ctx_.main().stream; }
  Matrix<double> buffer(int doubles_per_mode) const {
    return Matrix<double>::uninitialized(doubles_per_mode * M_ * N_, 1, device_);
  }
  cufftDoubleComplex* h() { return reinterpret_cast<cufftDoubleComplex*>(h_.data()); }
  cufftDoubleComplex* buf() { return reinterpret_cast<cufftDoubleComplex*>(buf_.data()); }

  void extend(ConstMatrixView<double> x) {
    extend_kernel<<<grid_for(M_ * N_), kThreads, 0, stream()>>>(x.data(), m_, n_, ld_of(x.ld()), buf(), M_, N_);
    check_launch("extend");
  }
  void divide(ConstMatrixView<double> x, double lambda, bool adjoint, MatrixView<double> out) {
    extend(x);
    check_fft(cufftExecZ2Z(plan_, buf(), buf(), CUFFT_FORWARD), "forward transform");
    divide_kernel<<<grid_for(M_ * N_), kThreads, 0, stream()>>>(buf(), h(), h2_.data(), l2_.data(), lambda, adjoint,
                                                               M_ * N_);
    check_launch("divide");
    check_fft(cufftExecZ2Z(plan_, buf(), buf(), CUFFT_INVERSE), "inverse transform");
    const double scale = 1.0 / static_cast<double>(M_ * N_) / (mirror_ ? 4.0 : 1.0);
    restrict_kernel<<<grid_for(m_ * n_), kThreads, 0, stream()>>>(buf(), m_, n_, M_, N_, mirror_, scale, out.data(),
                                                                 ld_of(out.ld()));
    check_launch("restrict");
  }

  Context& ctx_;
  std::int64_t m_, n_;
  bool mirror_;
  std::int64_t M_, N_;
  bool exact_;
  Device device_;
  Matrix<double> h_, buf_, h2_, l2_, power_;
  mutable Matrix<double> partial_;
  cufftHandle plan_ = 0;
};

// ---- total variation's steps (see kernels::TotalVariation and src/cpu/imaging.cpp) ----

// One thread per pixel: v := D f + u over both directions and every channel, z := v max(0, 1 - tau / ||v||),
// u := v - z. Blocks of m x n: f's channel c is block c, z's and u's direction d of channel c block 2 c + d.
__global__ void tv_shrink_kernel(const double* f, std::int64_t m, std::int64_t n, int channels, int boundary,
                                 double tau, double* z, double* u) {
  const kernels::RegularizerStencils D = kernels::regularizer_stencils(kernels::kGradientRegularizer);
  const std::int64_t pixels = m * n;
  LINV_GRID_STRIDE(k, pixels) {
    const std::int64_t i = k % m, j = k / m;
    double norm2 = 0;
    for (int c = 0; c < channels; ++c)
      for (int d = 0; d < 2; ++d) {
        double s = u[k + (2 * c + d) * pixels];
        for (int t = 0; t < D.taps[d]; ++t) {
          const std::int64_t a = boundary_index(i + D.tap[d][t].di, m, boundary),
                             b = boundary_index(j + D.tap[d][t].dj, n, boundary);
          if (a >= 0 && b >= 0) s += D.tap[d][t].w * f[a + b * m + c * pixels];
        }
        z[k + (2 * c + d) * pixels] = s;
        norm2 += s * s;
      }
    const double norm = sqrt(norm2), keep = norm > tau ? 1 - tau / norm : 0.0;
    for (int b = 0; b < 2 * channels; ++b) {
      const double v = z[k + b * pixels];
      z[k + b * pixels] = keep * v;
      u[k + b * pixels] = v - keep * v;
    }
  }
}

// r := b + rho D^T (z - u): r copied from b first; each tap scatters back to the pixel it read.
__global__ void tv_adjoint_kernel(const double* z, const double* u, std::int64_t m, std::int64_t n, int channels,
                                  int boundary, double rho, double* r) {
  const kernels::RegularizerStencils D = kernels::regularizer_stencils(kernels::kGradientRegularizer);
  const std::int64_t pixels = m * n;
  LINV_GRID_STRIDE(k, pixels * channels) {
    const std::int64_t p = k % pixels, c = k / pixels, i = p % m, j = p / m;
    for (int d = 0; d < 2; ++d) {
      const double w = rho * (z[p + (2 * c + d) * pixels] - u[p + (2 * c + d) * pixels]);
      for (int t = 0; t < D.taps[d]; ++t) {
        const std::int64_t a = boundary_index(i + D.tap[d][t].di, m, boundary),
                           b = boundary_index(j + D.tap[d][t].dj, n, boundary);
        if (a >= 0 && b >= 0) atomicAdd(r + a + b * m + c * pixels, D.tap[d][t].w * w);
      }
    }
  }
}

// The Poisson data term's step (kernels::TotalVariation::poisson_data), one thread per pixel.
__global__ void poisson_data_kernel(const double* hf, const double* g, std::int64_t count, double rho, double* a,
                                    double* target) {
  LINV_GRID_STRIDE(k, count) {
    const double t = hf[k] + a[k], v = kernels::poisson_proximal(t, g[k], rho);
    a[k] = t - v;
    target[k] = 2 * v - t;
  }
}

class TotalVariation final : public kernels::TotalVariation {
 public:
  TotalVariation(Context& ctx, const kernels::BlurModel& model, int channels)
      : ctx_(ctx), m_(model.height), n_(model.width), channels_(channels), boundary_(static_cast<int>(model.boundary)) {}
  void shrink(ConstMatrixView<double> f, double tau, MatrixView<double> z, MatrixView<double> u) override {
    tv_shrink_kernel<<<grid_for(m_ * n_), kThreads, 0, stream()>>>(f.data(), m_, n_, channels_, boundary_, tau,
                                                                   z.data(), u.data());
    check_launch("total variation shrink");
  }
  void right_hand_side(ConstMatrixView<double> b, double rho, ConstMatrixView<double> z, ConstMatrixView<double> u,
                       MatrixView<double> r) override {
    check(cudaMemcpyAsync(r.data(), b.data(), bytes_of(m_ * n_ * channels_, sizeof(double)), cudaMemcpyDeviceToDevice,
                          stream()),
          "cudaMemcpy");
    tv_adjoint_kernel<<<grid_for(m_ * n_ * channels_), kThreads, 0, stream()>>>(z.data(), u.data(), m_, n_, channels_,
                                                                               boundary_, rho, r.data());
    check_launch("total variation adjoint");
  }
  void poisson_data(ConstMatrixView<double> hf, ConstMatrixView<double> g, double rho, MatrixView<double> a,
                    MatrixView<double> target) override {
    const std::int64_t count = m_ * n_ * channels_;
    poisson_data_kernel<<<grid_for(count), kThreads, 0, stream()>>>(hf.data(), g.data(), count, rho, a.data(),
                                                                    target.data());
    check_launch("Poisson data step");
  }

 private:
  cudaStream_t stream() const { return ctx_.main().stream; }
  Context& ctx_;
  std::int64_t m_, n_;
  int channels_, boundary_;
};

// ---- nonlocal means (kernels::NonlocalMeans), one thread per pixel ----
__global__ void nonlocal_means_kernel(const double* y, const double* pilot, std::int64_t m, std::int64_t n,
                                      int channels, kernels::NonlocalMeans params, double* out) {
  LINV_GRID_STRIDE(k, m * n) { kernels::nonlocal_means_pixel(y, pilot, m, n, channels, params, k % m, k / m, out); }
}

class Imaging final : public kernels::Imaging {
 public:
  Matrix<double> normal_matrix(const kernels::BlurModel& model, double lambda, Device device) const override {
    const index size = model.height * model.width;
    Matrix<double> C(size, size, device);  // zeros: most pixel pairs do not interact
    if (size == 0) return C;
    Context& ctx = context_of(device);
    const std::vector<Tap> taps = kernels::blur_taps(model.kernel);
    DeviceBuffer device_taps(bytes_of(static_cast<std::int64_t>(taps.size()), sizeof(Tap)), ctx.device());
    to_device(device_taps.p, taps.data(), bytes_of(static_cast<std::int64_t>(taps.size()), sizeof(Tap)), ctx.main().stream);
    constexpr int threads = 128;
    normal_matrix_kernel<<<static_cast<unsigned>((size + threads - 1) / threads), threads, 0, ctx.main().stream>>>(
        C.data(), ld_of(C.ld()), model.height, model.width, device_taps.as<Tap>(), static_cast<int>(taps.size()),
        static_cast<int>(model.boundary), static_cast<int>(model.regularizer), lambda);
    check_launch("normal_matrix");
    ctx.synchronize();
    return C;
  }
  std::unique_ptr<kernels::Convolution> convolution(const kernels::BlurModel& model, Device device) const override {
    return std::make_unique<FftOperator>(context_of(device), model);
  }
  std::unique_ptr<kernels::Spectral> spectral(const kernels::BlurModel& model, Device device) const override {
    return std::make_unique<Spectral>(context_of(device), model);
  }
  std::unique_ptr<kernels::TotalVariation> total_variation(const kernels::BlurModel& model, int channels,
                                                           Device device) const override {
    return std::make_unique<TotalVariation>(context_of(device), model, channels);
  }
  void nonlocal_means(ConstMatrixView<double> y, ConstMatrixView<double> pilot, int channels,
                      const kernels::NonlocalMeans& params, MatrixView<double> out) const override {
    const std::int64_t m = y.rows(), n = y.cols() / channels;
    const cudaStream_t stream = context_of(y.device()).main().stream;
    nonlocal_means_kernel<<<grid_for(m * n), kThreads, 0, stream>>>(y.data(), pilot.data(), m, n, channels, params,
                                                                    out.data());
    check_launch("nonlocal means");
  }
};

#undef LINV_GRID_STRIDE

}  // namespace

const kernels::Imaging& imaging() { return kernels::instance<Imaging>(); }

}  // namespace linv::cuda
