// Imaging on the GPU: H^T H + lambda I formed entry by entry from the PSF (see imaging::normal_matrix),
// and the matrix-free reconstruction: conjugate gradients on (H^T H + lambda I) f = H^T g with H applied
// by cuFFT on the zero-padded image, the same scheme as imaging::Convolution on the CPU.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "cuda/context.hpp"
#include "cuda/dense.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

// One thread per pixel a (a column of C): the entries of the pixels b within a kernel's extent of a.
__global__ void normal_matrix_kernel(double* C, std::int64_t ld, std::int64_t height, std::int64_t width,
                                     const double* K, std::int64_t kr, std::int64_t kc, double lambda) {
  const std::int64_t a = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (a >= height * width) return;
  const std::int64_t ia = a % height, ja = a / height, cr = kr / 2, cc = kc / 2;
  for (std::int64_t dj = 1 - kc; dj < kc; ++dj)
    for (std::int64_t di = 1 - kr; di < kr; ++di) {
      const std::int64_t ib = ia + di, jb = ja + dj;
      if (ib < 0 || ib >= height || jb < 0 || jb >= width) continue;
      const std::int64_t i0 = max(max(std::int64_t{0}, ia - cr), ib - cr), i1 = min(min(height - 1, ia - cr + kr - 1), ib - cr + kr - 1);
      const std::int64_t j0 = max(max(std::int64_t{0}, ja - cc), jb - cc), j1 = min(min(width - 1, ja - cc + kc - 1), jb - cc + kc - 1);
      double sum = 0;
      for (std::int64_t j = j0; j <= j1; ++j)
        for (std::int64_t i = i0; i <= i1; ++i)
          sum += K[(i - ia + cr) + (j - ja + cc) * kr] * K[(i - ib + cr) + (j - jb + cc) * kr];
      const std::int64_t b = ib + jb * height;
      C[b + a * ld] = sum + (b == a ? lambda : 0.0);
    }
}

// ---- matrix-free: H = S C E on a P x Q padded buffer (see src/core/imaging.cpp's Convolution) ----

void check_fft(cufftResult status, const char* what) {
  if (status != CUFFT_SUCCESS)
    throw DeviceError(std::string("cuFFT: ") + what + " failed with status " + std::to_string(static_cast<int>(status)));
}

// real := 0, then image (rows x cols, leading dimension ld) at (r0, c0) of the P-row buffer.
__global__ void place_kernel(const double* image, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* real,
                             std::int64_t P, std::int64_t Q, std::int64_t r0, std::int64_t c0) {
  const std::int64_t count = P * Q;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = k % P - r0, j = k / P - c0;
    real[k] = i >= 0 && i < rows && j >= 0 && j < cols ? image[i + j * ld] : 0.0;
  }
}

// freq *= scale * spectrum (or its conjugate), entry by entry.
__global__ void multiply_kernel(cufftDoubleComplex* freq, const cufftDoubleComplex* spectrum, std::int64_t count,
                                bool conjugate, double scale) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double a = freq[k].x, b = freq[k].y, c = spectrum[k].x, d = conjugate ? -spectrum[k].y : spectrum[k].y;
    freq[k].x = scale * (a * c - b * d);
    freq[k].y = scale * (a * d + b * c);
  }
}

// Zero the buffer outside the window [r0, r0 + rows) x [c0, c0 + cols): S^T S between H and H^T.
__global__ void window_kernel(double* real, std::int64_t P, std::int64_t Q, std::int64_t r0, std::int64_t c0,
                              std::int64_t rows, std::int64_t cols) {
  const std::int64_t count = P * Q;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = k % P - r0, j = k / P - c0;
    if (!(i >= 0 && i < rows && j >= 0 && j < cols)) real[k] = 0.0;
  }
}

// out = real's window at (r0, c0) + shift * v (rows x cols, contiguous).
__global__ void crop_kernel(const double* real, std::int64_t P, std::int64_t r0, std::int64_t c0, std::int64_t rows,
                            std::int64_t cols, const double* v, double shift, double* out) {
  const std::int64_t count = rows * cols;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = k % rows, j = k / rows;
    out[k] = real[(i + r0) + (j + c0) * P] + (v ? shift * v[k] : 0.0);
  }
}

unsigned grid_for(std::int64_t count) {
  return static_cast<unsigned>(std::min<std::int64_t>((count + 255) / 256, 65535));
}

class FftOperator {
 public:
  FftOperator(Context& ctx, std::int64_t rows, std::int64_t cols, const Matrix<double>& kernel)
      : ctx_(ctx), rows_(rows), cols_(cols), kr_(kernel.rows()), kc_(kernel.cols()), P_(rows + kr_ - 1),
        Q_(cols + kc_ - 1), spectrum_count_(Q_ * (P_ / 2 + 1)),
        real_(P_ * Q_, 1, Device::cuda(ctx.device())), freq_(2 * spectrum_count_, 1, Device::cuda(ctx.device())),
        spectrum_(2 * spectrum_count_, 1, Device::cuda(ctx.device())) {
    const cudaStream_t stream = ctx.main().stream;
    // column-major P x Q is row-major Q x P: the same 2-D transform
    check_fft(cufftPlan2d(&forward_, static_cast<int>(Q_), static_cast<int>(P_), CUFFT_D2Z), "plan");
    check_fft(cufftPlan2d(&backward_, static_cast<int>(Q_), static_cast<int>(P_), CUFFT_Z2D), "plan");
    check_fft(cufftSetStream(forward_, stream), "stream");
    check_fft(cufftSetStream(backward_, stream), "stream");
    const Matrix<double> k = Matrix<double>::copy_of(kernel.view()).to(Device::cuda(ctx.device()));
    place_kernel<<<grid_for(P_ * Q_), 256, 0, stream>>>(k.data(), kr_, kc_, ld_of(k.ld()), real_.data(), P_, Q_, 0, 0);
    check_launch("place");
    check_fft(cufftExecD2Z(forward_, real_.data(), spectrum()), "forward transform");
    ctx.synchronize();
  }
  ~FftOperator() {
    cufftDestroy(forward_);
    cufftDestroy(backward_);
  }
  FftOperator(const FftOperator&) = delete;
  FftOperator& operator=(const FftOperator&) = delete;

  // out := H^T g (g rows x cols, leading dimension ld).
  void adjoint(const double* g, std::int64_t ld, double* out) {
    place(g, ld, kr_ / 2, kc_ / 2);
    round_trip(/*conjugate=*/true);
    crop(0, 0, nullptr, 0.0, out);
  }

  // out := (H^T H + lambda I) v (contiguous rows x cols).
  void normal(const double* v, double lambda, double* out) {
    place(v, rows_, 0, 0);
    round_trip(/*conjugate=*/false);
    const cudaStream_t stream = ctx_.main().stream;
    window_kernel<<<grid_for(P_ * Q_), 256, 0, stream>>>(real_.data(), P_, Q_, kr_ / 2, kc_ / 2, rows_, cols_);
    check_launch("window");
    round_trip(/*conjugate=*/true);
    crop(0, 0, v, lambda, out);
  }

 private:
  cufftDoubleComplex* spectrum() { return reinterpret_cast<cufftDoubleComplex*>(spectrum_.data()); }
  cufftDoubleComplex* freq() { return reinterpret_cast<cufftDoubleComplex*>(freq_.data()); }

  void place(const double* image, std::int64_t ld, std::int64_t r0, std::int64_t c0) {
    place_kernel<<<grid_for(P_ * Q_), 256, 0, ctx_.main().stream>>>(image, rows_, cols_, ld, real_.data(), P_, Q_, r0,
                                                                    c0);
    check_launch("place");
  }
  // real := C real (conjugate: C^T real), the circular convolution with the kernel, scaled.
  void round_trip(bool conjugate) {
    check_fft(cufftExecD2Z(forward_, real_.data(), freq()), "forward transform");
    multiply_kernel<<<grid_for(spectrum_count_), 256, 0, ctx_.main().stream>>>(
        freq(), spectrum(), spectrum_count_, conjugate, 1.0 / static_cast<double>(P_ * Q_));
    check_launch("multiply");
    check_fft(cufftExecZ2D(backward_, freq(), real_.data()), "inverse transform");
  }
  void crop(std::int64_t r0, std::int64_t c0, const double* v, double shift, double* out) {
    crop_kernel<<<grid_for(rows_ * cols_), 256, 0, ctx_.main().stream>>>(real_.data(), P_, r0, c0, rows_, cols_, v,
                                                                          shift, out);
    check_launch("crop");
  }

  Context& ctx_;
  std::int64_t rows_, cols_, kr_, kc_, P_, Q_, spectrum_count_;
  Matrix<double> real_, freq_, spectrum_;
  cufftHandle forward_ = 0, backward_ = 0;
};

}  // namespace

Matrix<double> deblur_matrix_free(ConstMatrixView<double> g, const Matrix<double>& kernel, double lambda,
                                  int max_iterations, double tolerance, Device device, int& iterations) {
  const std::int64_t rows = g.rows(), cols = g.cols(), size = rows * cols;
  Context& ctx = context_of(device);
  const cublasHandle_t h = ctx.main().blas;
  FftOperator H(ctx, rows, cols, kernel);
  const Matrix<double> gd = Matrix<double>::copy_of(g).to(device);
  Matrix<double> f(rows, cols, device), r = Matrix<double>::uninitialized(rows, cols, device),
      p = Matrix<double>::uninitialized(rows, cols, device), q = Matrix<double>::uninitialized(rows, cols, device);
  H.adjoint(gd.data(), ld_of(gd.ld()), r.data());  // r = b = H^T g (f = 0)
  check(cudaMemcpyAsync(p.data(), r.data(), size * sizeof(double), cudaMemcpyDeviceToDevice, ctx.main().stream),
        "cudaMemcpy");
  auto dot = [&](const Matrix<double>& x, const Matrix<double>& y) {
    double v = 0;
    check(cublasDdot_64(h, size, x.data(), 1, y.data(), 1, &v), "dot");
    return v;
  };
  double rr = dot(r, r);
  const double bnorm = std::sqrt(rr);
  int k = 0;
  for (; k < max_iterations && std::sqrt(rr) > tolerance * bnorm; ++k) {
    H.normal(p.data(), lambda, q.data());
    const double alpha = rr / dot(p, q), minus_alpha = -alpha;
    check(cublasDaxpy_64(h, size, &alpha, p.data(), 1, f.data(), 1), "axpy");
    check(cublasDaxpy_64(h, size, &minus_alpha, q.data(), 1, r.data(), 1), "axpy");
    const double next = dot(r, r), beta = next / rr, one = 1;
    check(cublasDscal_64(h, size, &beta, p.data(), 1), "scal");
    check(cublasDaxpy_64(h, size, &one, r.data(), 1, p.data(), 1), "axpy");
    rr = next;
  }
  iterations = k;
  ctx.synchronize();
  return f.to(Device::cpu());
}

Matrix<double> normal_matrix(index height, index width, const Matrix<double>& kernel, double lambda, Device device) {
  const index size = height * width;
  Matrix<double> C(size, size, device);  // zeros: most pixel pairs do not interact
  if (size == 0) return C;
  const Matrix<double> K = Matrix<double>::copy_of(kernel.view()).to(device);
  Context& ctx = context_of(device);
  constexpr int threads = 128;
  normal_matrix_kernel<<<static_cast<unsigned>((size + threads - 1) / threads), threads, 0, ctx.main().stream>>>(
      C.data(), ld_of(C.ld()), height, width, K.data(), K.rows(), K.cols(), lambda);
  check_launch("normal_matrix");
  ctx.synchronize();
  return C;
}

}  // namespace linv::cuda
