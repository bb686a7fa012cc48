// Images as linear inverse problems: a degraded image is g = H f + n, H the system matrix of a
// point-spread function (PSF) with zero boundary conditions. This header holds the forward model: PSFs
// following MATLAB's fspecial conventions (which the source thesis used), the convolution, the dense
// system matrix for small images (the thesis's filter2matrix), noise following imnoise, and a test image
// made by code (the modified Shepp-Logan phantom). Images are matrices of height x width, values in [0, 1].
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "linv/matrix.hpp"
#include "linv/report.hpp"

namespace linv::imaging {

// A PSF: its kernel (kernel(p, q), rows x cols) and the spec it came from.
struct Psf {
  Matrix<double> kernel;
  std::string spec;
};

// "gaussian:size=5,sigma=1" (fspecial('gaussian', 5, 1); defaults size=3, sigma=0.5)
// "box:size=3"              (fspecial('average', 3); default size=3)
// "motion:len=9,angle=30"   (fspecial('motion', 9, 30); defaults len=9, angle=0)
// "sharpen:alpha=0.2"       (fspecial('unsharp', 0.2); default alpha=0.2)
// A bad spec throws InvalidArgument naming the part at fault and the accepted forms.
Psf parse_psf(std::string_view spec);

// g = h * f, the convolution with zero boundary conditions, cropped to f's size ("same", as conv2 and
// imfilter(f, h, 0, 'conv') do: kernel entry (p, q) moves f(i - p + floor(kr / 2), j - q + floor(kc / 2))
// to g(i, j)).
Matrix<double> convolve(ConstMatrixView<double> f, ConstMatrixView<double> kernel);

// Its adjoint: H^T g (a correlation with the kernel, with the same zero boundaries).
Matrix<double> convolve_adjoint(ConstMatrixView<double> g, ConstMatrixView<double> kernel);

// H and H^T for one image size and kernel, applied many times: by FFTs of the zero-padded image
// ((height + kr - 1) x (width + kc - 1), so the result is exactly the zero-boundary convolution) when
// linv was built with FFTW, else directly as convolve / convolve_adjoint.
class Convolution {
 public:
  Convolution(index height, index width, ConstMatrixView<double> kernel);
  ~Convolution();
  Convolution(const Convolution&) = delete;
  Convolution& operator=(const Convolution&) = delete;
  Matrix<double> apply(ConstMatrixView<double> f) const;          // H f
  Matrix<double> apply_adjoint(ConstMatrixView<double> g) const;  // H^T g
  index height() const noexcept;
  index width() const noexcept;
  bool uses_fft() const noexcept { return have_fft(); }
  // Whether this build has FFTW (FFT convolution) at all.
  static bool have_fft() noexcept;

 private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

// The dense system matrix H of that convolution for height x width images vectorised column by column
// (pixel (i, j) is entry i + j * height): H vec(f) = vec(convolve(f, kernel)). (height * width)^2 entries.
Matrix<double> system_matrix(index height, index width, ConstMatrixView<double> kernel);

// H^T H + lambda I for that H, formed entry by entry from the kernel (no H, no matrix product): entry
// (a, b) sums kernel products over the output pixels both pixels a and b reach, so only pixels less than
// a kernel's extent apart interact. On `device` (CPU or GPU), (height * width)^2 entries.
Matrix<double> normal_matrix(index height, index width, ConstMatrixView<double> kernel, double lambda,
                             Device device = Device::cpu());

// imnoise: "gaussian:var=0.001[,mean=0]" adds N(mean, var) and clips to [0, 1]; "saltpepper:density=0.05"
// sets a fraction `density` of the pixels to 0 or 1 (half each). Reproducible for a given seed.
Matrix<double> add_noise(ConstMatrixView<double> image, std::string_view spec, std::uint64_t seed);

// The modified Shepp-Logan phantom (MATLAB's phantom('Modified Shepp-Logan', n)), n x n, values in [0, 1].
Matrix<double> shepp_logan(index n);

// Regularised reconstruction f = (H^T H + lambda I)^-1 H^T g.
constexpr index kDenseAutoLimit = 64 * 64;  // unknowns the dense path takes under DeblurPath::Auto
enum class DeblurPath {
  Auto,        // dense up to 64 x 64 pixels (kDenseAutoLimit unknowns), matrix-free above
  Dense,       // the thesis's path: form H^T H + lambda I, factor it (Cholesky), apply
  MatrixFree,  // conjugate gradients on the regularised normal equations, H applied by convolution
};
struct DeblurOptions {
  double lambda = -1;  // the regularisation weight; negative: chosen by generalised cross-validation
  DeblurPath path = DeblurPath::Auto;
  int max_iterations = 1000;  // matrix-free
  double tolerance = 1e-10;   // matrix-free: relative residual of the normal equations
};
struct DeblurResult {
  Matrix<double> image;     // on g's device
  double lambda = 0;
  std::string lambda_from;  // "given" or "generalised cross-validation"
  Report report;            // method (cholesky: the dense path; cg: matrix-free), device, iterations, stop, seconds
};
// Runs where g lives (CPU or GPU); the image comes back there. lambda "auto" minimises generalised
// cross-validation for the periodic approximation of H (which the 2-D DFT diagonalises); GCV assumes
// noise, so noise-free images want a small given lambda instead.
DeblurResult deblur(ConstMatrixView<double> g, const Psf& psf, const DeblurOptions& options = {});

// Mean squared error and peak signal-to-noise ratio (peak 1) of `image` against `truth`.
double mse(ConstMatrixView<double> image, ConstMatrixView<double> truth);
double psnr(ConstMatrixView<double> image, ConstMatrixView<double> truth);

}  // namespace linv::imaging
