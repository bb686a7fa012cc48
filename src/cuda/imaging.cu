// The imaging family on the GPU (src/kernels/imaging.hpp): H^T H + lambda I formed entry by entry from the
// PSF (see imaging::normal_matrix), and H applied by cuFFT on the zero-padded image, the same scheme as
// imaging::Convolution on the CPU, for the conjugate gradients of src/core/imaging.cpp.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "cuda/backend.hpp"
#include "cuda/context.hpp"
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

class FftOperator final : public kernels::Convolution {
 public:
  FftOperator(Context& ctx, std::int64_t rows, std::int64_t cols, ConstMatrixView<double> kernel)
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
    const Matrix<double> k = Matrix<double>::copy_of(kernel).to(Device::cuda(ctx.device()));
    place_kernel<<<grid_for(P_ * Q_), 256, 0, stream>>>(k.data(), kr_, kc_, ld_of(k.ld()), real_.data(), P_, Q_, 0, 0);
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

  index rows() const override { return rows_ * cols_; }
  index cols() const override { return rows_ * cols_; }

  // y := H x = S C E x
  void apply(ConstMatrixView<double> x, MatrixView<double> y) override {
    place(x.data(), ld_of(x.ld()), 0, 0);
    round_trip(/*conjugate=*/false);
    crop(kr_ / 2, kc_ / 2, nullptr, 0.0, y.data());
  }

  // x := H^T y = E^T C^T S^T y
  void apply_transpose(ConstMatrixView<double> y, MatrixView<double> x) override {
    place(y.data(), ld_of(y.ld()), kr_ / 2, kc_ / 2);
    round_trip(/*conjugate=*/true);
    crop(0, 0, nullptr, 0.0, x.data());
  }

  // y := (H^T H + lambda I) x, the window S^T S applied in place between the two round trips.
  void normal(ConstMatrixView<double> x, double lambda, MatrixView<double> y) override {
    place(x.data(), ld_of(x.ld()), 0, 0);
    round_trip(/*conjugate=*/false);
    const cudaStream_t stream = ctx_.main().stream;
    window_kernel<<<grid_for(P_ * Q_), 256, 0, stream>>>(real_.data(), P_, Q_, kr_ / 2, kc_ / 2, rows_, cols_);
    check_launch("window");
    round_trip(/*conjugate=*/true);
    crop(0, 0, x.data(), lambda, y.data());
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

class Imaging final : public kernels::Imaging {
 public:
  Matrix<double> normal_matrix(index height, index width, ConstMatrixView<double> kernel, double lambda,
                               Device device) const override;
  std::unique_ptr<kernels::Convolution> convolution(index height, index width, ConstMatrixView<double> kernel,
                                                    Device device) const override {
    return std::make_unique<FftOperator>(context_of(device), height, width, kernel);
  }
};

Matrix<double> Imaging::normal_matrix(index height, index width, ConstMatrixView<double> kernel, double lambda,
                                      Device device) const {
  const index size = height * width;
  Matrix<double> C(size, size, device);  // zeros: most pixel pairs do not interact
  if (size == 0) return C;
  const Matrix<double> K = Matrix<double>::copy_of(kernel).to(device);
  Context& ctx = context_of(device);
  constexpr int threads = 128;
  normal_matrix_kernel<<<static_cast<unsigned>((size + threads - 1) / threads), threads, 0, ctx.main().stream>>>(
      C.data(), ld_of(C.ld()), height, width, K.data(), K.rows(), K.cols(), lambda);
  check_launch("normal_matrix");
  ctx.synchronize();
  return C;
}

}  // namespace

const kernels::Imaging& imaging() { return kernels::instance<Imaging>(); }

}  // namespace linv::cuda
