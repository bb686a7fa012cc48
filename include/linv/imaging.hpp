// Images as linear inverse problems: a degraded image is g = H f + n, H the system matrix of a
// point-spread function (PSF) under a boundary condition (what the model assumes about the scene outside
// the frame). This header holds the forward model: PSFs following MATLAB's fspecial conventions (which the
// source thesis used), the convolution, the dense system matrix for small images (the thesis's
// filter2matrix), noise following imnoise, a test image made by code (the modified Shepp-Logan phantom),
// and the regularised reconstruction. Images are matrices of height x width, values in [0, 1]; several
// channels of one image (RGB) stand side by side, height x (width * channels).
#pragma once

#include <cstdint>
#include <memory>
#include <functional>
#include <string>
#include <string_view>

#include "linv/matrix.hpp"
#include "linv/report.hpp"

namespace linv::imaging {

// What the model assumes beyond the frame: zero (the thesis's: a dark surround, right for the phantom),
// reflexive (the scene mirrored at the border, as imfilter's 'symmetric': right for photographs, whose
// scene goes on past the frame) or periodic (the image repeats, as the DFT assumes).
enum class Boundary { Zero, Reflexive, Periodic };
std::string_view to_string(Boundary b);  // "zero", "reflexive", "periodic"
Boundary parse_boundary(std::string_view name);

// The regulariser of f = argmin ||H f - g||^2 + lambda ||L f||^2: L = I (the thesis's), the image's first
// differences (gradient), or the 5-point Laplacian, each under the model's boundary condition.
enum class Regularizer { Identity, Gradient, Laplacian };
std::string_view to_string(Regularizer r);  // "identity", "gradient", "laplacian"
Regularizer parse_regularizer(std::string_view name);

// A PSF: its kernel (kernel(p, q), rows x cols; kernel(rows / 2, cols / 2) is its centre) and the spec it
// came from.
struct Psf {
  Matrix<double> kernel;
  std::string spec;
  double scaled_by = 1;  // psf_from: what the kernel as given summed to (it was divided by it)
  // Whether the kernel is symmetric about its centre in both directions (kernel(c + p, q) = kernel(c - p, q)
  // and likewise for columns, entries past the edge counting as zero). Gaussian, box, disk and sharpen
  // PSFs are; then a reflexive boundary makes H^T H + lambda L^T L diagonal in the 2-D DCT.
  bool symmetric() const;
};

// "gaussian:size=5,sigma=1" (fspecial('gaussian', 5, 1); defaults size=3, sigma=0.5)
// "box:size=3"              (fspecial('average', 3); default size=3)
// "disk:radius=3"           (fspecial('disk', 3): each pixel weighted by its area inside the circle)
// "motion:len=9,angle=30"   (fspecial('motion', 9, 30); defaults len=9, angle=0)
// "sharpen:alpha=0.2"       (fspecial('unsharp', 0.2); default alpha=0.2)
// A bad spec throws InvalidArgument naming the part at fault and the accepted forms.
Psf parse_psf(std::string_view spec);
// A measured or computed kernel (host memory), scaled to sum 1 (a blur keeps the image's brightness; a
// PSF measured as a picture of a point sums to whatever its pixels held), its centre kernel(rows / 2,
// cols / 2) as for every PSF. Throws NonFiniteInput (naming the entry) for a NaN or Inf, InvalidArgument
// when it is empty or its sum is not clearly positive: at most kPsfLeastSum of the sum of its entries'
// magnitudes, as for a difference filter (a Laplacian sums to 0, or to rounding), which no scaling makes a
// blur.
inline constexpr double kPsfLeastSum = 1e-3;
Psf psf_from(ConstMatrixView<double> kernel, std::string name);

// Throws NonFiniteInput naming the first NaN or Inf pixel of `image` (`channels` images side by side) by
// row, column and channel; `name` says which image.
void require_finite_image(ConstMatrixView<double> image, int channels, const std::string& name);

// g = h * f under `boundary`, cropped to f's size ("same", as conv2 and imfilter(f, h, 'conv', ...) do:
// kernel entry (p, q) moves f(i - p + floor(kr / 2), j - q + floor(kc / 2)) to g(i, j), a pixel outside
// the frame read as the boundary condition says). NonFiniteInput for a NaN or Inf pixel of f;
// NumericalError where g overflows.
Matrix<double> convolve(ConstMatrixView<double> f, ConstMatrixView<double> kernel, Boundary boundary);
// Its adjoint, H^T g.
Matrix<double> convolve_adjoint(ConstMatrixView<double> g, ConstMatrixView<double> kernel, Boundary boundary);

// H and H^T for one image size, kernel and boundary, applied many times: by FFTs of the image padded as
// the boundary says ((height + kr - 1) x (width + kc - 1)), so the result is exactly convolve's, when
// linv was built with FFTW, else directly as convolve / convolve_adjoint.
class Convolution {
 public:
  Convolution(index height, index width, ConstMatrixView<double> kernel, Boundary boundary);
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
// (pixel (i, j) is entry i + j * height): H vec(f) = vec(convolve(f, kernel, boundary)). (height * width)^2
// entries.
Matrix<double> system_matrix(index height, index width, ConstMatrixView<double> kernel, Boundary boundary);
// The dense L of a regulariser: height * width rows for the identity and the Laplacian, 2 * height * width
// for the gradient (differences down the columns, then along the rows; under a reflexive boundary the
// last difference of each line is zero).
Matrix<double> regularizer_matrix(index height, index width, Regularizer regularizer, Boundary boundary);

// H^T H + lambda L^T L for that H and L, formed from the kernel (no H, no matrix product): each output
// pixel adds the products of its kernel weights, so only pixels within a kernel's extent (or mirrored or
// wrapped into it) interact. On `device` (CPU or GPU), (height * width)^2 entries.
Matrix<double> normal_matrix(index height, index width, ConstMatrixView<double> kernel, Boundary boundary,
                             Regularizer regularizer, double lambda, Device device = Device::cpu());

// imnoise: "gaussian:var=0.001[,mean=0]" adds N(mean, var) and clips to [0, 1]; "saltpepper:density=0.05"
// sets a fraction `density` of the pixels to 0 or 1 (half each); "poisson[:peak=255]" draws each pixel
// from a Poisson distribution of mean peak * value, divided by peak (imnoise's 'poisson' is peak 1e12 for
// doubles; 255 is a photograph's photon count scale). Reproducible for a given seed.
Matrix<double> add_noise(ConstMatrixView<double> image, std::string_view spec, std::uint64_t seed);

// The modified Shepp-Logan phantom (MATLAB's phantom('Modified Shepp-Logan', n)), n x n, values in [0, 1].
Matrix<double> shepp_logan(index n);

// ---- Regularised reconstruction ----------------------------------------------------------------------
// f = argmin ||W (H f - g)||^2 + lambda ||L f||^2 with W the identity (or, robust, 0 at salt-and-pepper
// pixels) and the boundary and regulariser above.
constexpr index kDenseAutoLimit = 64 * 64;  // unknowns the dense path takes under DeblurPath::Auto
enum class DeblurPath {
  Auto,        // spectral where exact; else dense up to 64 x 64 pixels (kDenseAutoLimit), matrix-free above
  Spectral,    // the DFT (periodic) or DCT (reflexive, symmetric PSF) diagonalises the system: a direct solve
  Dense,       // the thesis's path: form H^T H + lambda L^T L, factor it (Cholesky), apply
  MatrixFree,  // conjugate gradients on the normal equations, H applied by convolution, preconditioned by the
               // nearest spectral system
};
// How lambda is chosen when not given.
enum class LambdaRule {
  Auto,         // GCV (measured best on photographs: docs/deblurring-quality.md), drawn towards the
                // discrepancy principle where its residual says it went wrong, by weights continuous in that
                // residual, the noise estimated from g and the PSF (no threshold switches lambda): for a PSF
                // that smooths, a GCV residual under half the noise is fitting errors that are not white
                // noise (the scene past the frame); smoothing past every mode of the blur with a residual
                // above twice the noise treats the image as noise (noise-free data for a well-posed PSF such
                // as sharpening, where the pull is towards the smallest lambda). The choice is then checked
                // on the spectral system's solution: a result out of range (for data in [0, 1], beyond
                // [-0.5, 1.5] at more than one pixel in a thousand) or with fine detail over ten times the
                // data's raises lambda to about the smallest whose result is plausible; the report says so.
  GCV,          // generalised cross-validation in the spectral system (exact where the spectral path is)
  Discrepancy,  // ||H f - g||^2 = (pixels) sigma^2, sigma estimated from the image's finest wavelet detail
};
std::string_view to_string(LambdaRule r);  // "auto", "gcv", "discrepancy"
LambdaRule parse_lambda_rule(std::string_view name);
// Whether the data term is robust to salt and pepper: pixels at an intensity bound (exactly 0 or 1) and far
// from the median of their 3 x 3 neighbourhood are left out (weight 0), lambda is chosen on the image with
// them replaced by that median, and the weighted system is solved by the matrix-free path. (Huber's norm
// by reweighting, and leaving out every clipped pixel, were measured worse and slower on photographs:
// docs/deblurring-quality.md.)
enum class Robust {
  Auto,  // on where at least 0.5 % of the pixels are such impulses (said in the report)
  On,
  Off,
};
std::string_view to_string(Robust r);  // "auto", "on", "off"
Robust parse_robust(std::string_view name);
std::string_view to_string(DeblurPath p);  // "auto", "spectral", "dense", "matrix-free"
DeblurPath parse_deblur_path(std::string_view name);
// The prior on the scene: Tikhonov's ||L f||^2 above (one linear filter), or isotropic total variation,
// f = argmin 1/2 ||H f - g||^2 + weight sum_p ||grad f(p)|| (the norm over both directions and, for colour,
// every channel), which keeps edges sharp while it smooths flat areas. Total variation starts from the
// Tikhonov solution and runs ADMM, whose linear step is the spectral solve where that is exact (periodic,
// or reflexive with a symmetric PSF) and conjugate gradients preconditioned by it elsewhere.
// Nonlocal: the two-stage scheme of BM3D deblurring (Dabov et al. 2008) with nonlocal means as its denoiser.
// The total-variation result is the pilot; a regularised inverse with a tenth of the Tikhonov lambda keeps
// more detail and more (coloured) noise; each pixel of that inverse is averaged with the pixels whose pilot
// patches look alike, the similarity scaled by the noise the inverse carries; the result is the mean of that
// and the pilot. Repeating texture and edges gain; fine irregular texture (grass, fur) at low noise loses to
// Tikhonov (docs/deblurring-quality.md). Gaussian noise only.
// Auto: total variation for Poisson data (the Poisson data term runs with it only). For Gaussian noise, the
// nonlocal prior where the PSF blurs (its response nowhere above 1.1 times its DC gain: every nonnegative
// PSF) and up to 1 % of the pixels are salt and pepper; Tikhonov where the PSF sharpens (its response 1.5
// times its DC gain and more: a stable inverse, which the averaging only smooths) or 4 % of the pixels and
// more are impulses (its robust term); between, the two results blended by weights continuous in the gain
// and the share (report: nonlocal_share).
// docs/deblurring-quality.md has the measurements behind each end.
enum class Prior { Auto, Tikhonov, TotalVariation, Nonlocal };
std::string_view to_string(Prior p);  // "auto", "tikhonov", "tv", "nonlocal"
Prior parse_prior(std::string_view name);
// The noise in g. Gaussian: white, of one standard deviation (estimate_noise). Poisson: photon counts, g =
// counts / peak with `peak` the counts per unit of g (microscopy, astronomy, a camera in low light), whose
// variance grows with the intensity; deblurred by f = argmin sum_p ((H f)_p - g_p log (H f)_p) + weight/peak
// TV(f), the negative log-likelihood of the counts, by ADMM with the splitting v = H f (Figueiredo and
// Bioucas-Dias 2010). Auto: Poisson where the data's mean-variance relation says so (estimate_poisson: the
// intensity-dependent part is at least 60 % of the noise variance at g's mean level, fitted over at least
// 100 blocks (about 88 x 88 pixels), predicting within 4 times the white noise seen where g is not 0, and no pixel is
// negative).
enum class NoiseModel { Auto, Gaussian, Poisson };
std::string_view to_string(NoiseModel m);  // "auto", "gaussian", "poisson"
NoiseModel parse_noise_model(std::string_view name);
// The parse_ functions throw InvalidArgument listing the accepted names.

struct DeblurOptions {
  double lambda = -1;  // the regularisation weight; negative: chosen by `rule`
  LambdaRule rule = LambdaRule::Auto;
  Boundary boundary = Boundary::Reflexive;
  Regularizer regularizer = Regularizer::Laplacian;  // measured best on photographs (docs/deblurring-quality.md)
  Robust robust = Robust::Auto;
  DeblurPath path = DeblurPath::Auto;
  int channels = 1;             // g holds this many images side by side: one lambda, one factorisation for all
  int max_iterations = 1000;    // matrix-free conjugate gradients (per solve)
  double tolerance = 1e-10;     // matrix-free: relative residual of the normal equations
  std::function<void(int, double)> progress = {};  // matrix-free: each CG iteration's number and relative residual
  Prior prior = Prior::Auto;
  NoiseModel noise_model = NoiseModel::Auto;
  double photon_peak = -1;     // Poisson: counts per unit of g; negative: estimated from g (estimate_poisson)
  double tv_weight = -1;       // total variation's weight; negative: from the noise estimated in g
  int admm_iterations = 400;   // total variation: ADMM iterations at most
  double admm_tolerance = 1e-4;  // total variation: stop when ten iterations change f by less than this, relatively
};
struct DeblurResult {
  Matrix<double> image;     // on g's device, g's shape
  double lambda = 0;
  std::string lambda_from;  // "given", "generalised cross-validation" or "discrepancy principle", and why
  double noise_sigma = 0;   // the noise standard deviation estimated from g (median absolute wavelet detail)
  bool robust = false;      // whether the robust data term ran
  Report report;            // method (spectral, cholesky, cg), device, iterations, stop, seconds, notes
  double residual = 0;      // matrix-free path: the largest relative CG residual reached over the channels
  double tv_weight = 0;     // total variation: the weight used (0 for Tikhonov)
  std::string tv_weight_from;  // "given" or how it was chosen
  double admm_change = 0;      // total variation: f's relative change over the last iteration measured
  double nonlocal_lambda = 0;  // nonlocal: the regularised inverse's lambda (0 for the other priors)
  double nonlocal_h = 0;       // nonlocal: the similarity scale, the noise standard deviation in that inverse
  Prior prior = Prior::Tikhonov;             // the prior that ran (auto resolved; a blend: the larger share's)
  std::string prior_from;                    // "given" or the evidence for the automatic choice
  double nonlocal_share = 0;  // the nonlocal result's share in the image: 1 for that prior, 0 for Tikhonov or
                              // TV, between where prior auto blended the nonlocal and the Tikhonov results
  NoiseModel noise_model = NoiseModel::Gaussian;  // the noise model that ran (auto resolved)
  std::string noise_model_from;              // "given" or the evidence for the automatic choice
  double photon_peak = 0;                    // Poisson: counts per unit of g, given or estimated (0 otherwise)
};
// Runs where g lives (CPU or GPU); the image comes back there. Throws InvalidArgument for a PSF larger
// than the image or a bad option, ShapeMismatch when g's width is not a multiple of the channel count.
DeblurResult deblur(ConstMatrixView<double> g, const Psf& psf, const DeblurOptions& options = {});

// The standard deviation of white noise in g (each of `channels` images side by side), from the median
// absolute value of its finest diagonal wavelet detail (Donoho and Johnstone's estimator).
double estimate_noise(ConstMatrixView<double> g, int channels = 1);

// The noise's mean-variance relation in g: over blocks of 16 x 16 pixels, the mean square of the finest
// diagonal wavelet detail (noise, where a blur has smoothed the scene) against the block's mean (blocks within
// two deviations of 0, or of 1 where g stops there, left out: clipping shrinks their variance), fitted by a
// line variance = mean / peak + floor, weighted and robustly (blocks of texture, whose detail is not noise,
// left out by their residuals). For Poisson data g = counts / peak, the slope is 1 / peak (measured on 128 x
// 128 smooth scenes: the median error 20 %, the worst 1.75 times from 14 to 5000 counts per unit; at 8 the
// fit can fail, half the blocks lying within two deviations of 0); for Gaussian noise it is near 0. signal_share: the intensity-dependent
// part's share of the variance at g's mean level, in [0, 1].
struct PoissonFit {
  double peak = 0;          // 1 / slope; infinity where the slope is not clearly above 0 and g is not counts
                            // on a lattice whose step (1 / peak) the variance agrees with
  double floor = 0;         // the variance left at intensity 0 (read noise), clamped at 0
  double signal_share = 0;  // (mean / peak) / (mean / peak + floor)
  double mean = 0;          // g's mean
  std::size_t blocks = 0;   // the blocks the line was fitted to (16 x 16, overlapping by half)
};
PoissonFit estimate_poisson(ConstMatrixView<double> g, int channels = 1);

// Mean squared error and peak signal-to-noise ratio (peak 1) of `image` against `truth`.
double mse(ConstMatrixView<double> image, ConstMatrixView<double> truth);
double psnr(ConstMatrixView<double> image, ConstMatrixView<double> truth);

}  // namespace linv::imaging
