// Deblurring (include/linv/imaging.hpp): f = argmin rho(H f - g) + lambda ||L f||^2, written once over the
// imaging family (src/kernels/imaging.hpp) of the device g lives on: the method, lambda (generalised
// cross-validation or the discrepancy principle, in the spectral system), the noise estimate, and the
// robust data term by iteratively reweighted least squares.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <vector>

#include "common/parallel.hpp"
#include "common/stopwatch.hpp"
#include "core/krylov.hpp"
#include "core/policy.hpp"
#include "kernels/backend.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/imaging.hpp"

namespace linv::imaging {
namespace {

// Channel c of an image holding `channels` of width `width` side by side (contiguous when the image is).
template <class View>
View channel(View g, index width, int c) {
  return g.block(0, c * width, g.rows(), width);
}

double median(std::vector<double>& v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// Exactly 0 or 1: where salt and pepper, clipping and saturation put pixels.
bool at_bound(double v) { return v == 0.0 || v == 1.0; }

// Salt-and-pepper pixels: at an intensity bound, far (more than 0.1) from the median of their 3 x 3
// neighbourhood, and isolated (at most one neighbour at the same bound), as median-type detectors find them
// (Chan, Ho and Nikolova 2005); clipped pixels (saturated, or noise cut off at 0 and 1) come in runs and
// stay. `cleaned` has the impulses replaced by that median, for choosing lambda and starting the iteration,
// and for the priors without a robust term, which deblur the cleaned image, except where two neighbours or
// more lie within 0.1 of the pixel: the corner of a bright object that sharpening and noise clipped at 1
// looks like salt, and the median there is the background (replaced, five such corners of a piecewise scene
// cost total variation 6 dB; left out of the robust term's data, they cost nothing, and counting them no
// longer took up to 1.2 dB from sharpened photographs with salt and pepper).
struct Impulses {
  Matrix<double> cleaned;
  std::vector<unsigned char> is_impulse;  // per pixel of the h x (w * channels) image
  index count = 0;
};

Impulses find_impulses(ConstMatrixView<double> g, index width, int channels) {
  const index m = g.rows();
  Impulses out{Matrix<double>::copy_of(g), std::vector<unsigned char>(static_cast<std::size_t>(g.rows() * g.cols()), 0)};
  std::vector<double> window;
  for (int c = 0; c < channels; ++c)
    for (index j = 0; j < width; ++j)
      for (index i = 0; i < m; ++i) {
        const index col = c * width + j;
        const double v = g(i, col);
        if (!at_bound(v)) continue;
        window.clear();
        int bound_neighbours = 0, close_neighbours = 0;
        for (index dj = -1; dj <= 1; ++dj)
          for (index di = -1; di <= 1; ++di) {
            const index a = std::clamp<index>(i + di, 0, m - 1), b = std::clamp<index>(j + dj, 0, width - 1);
            const double u = g(a, c * width + b);
            window.push_back(u);
            bound_neighbours += (di != 0 || dj != 0) && u == v;
            close_neighbours += (di != 0 || dj != 0) && std::abs(u - v) <= 0.1;
          }
        const double med = median(window);
        if (std::abs(v - med) > 0.1 && bound_neighbours <= 1) {
          out.is_impulse[static_cast<std::size_t>(i + col * m)] = 1;
          if (close_neighbours <= 1) out.cleaned(i, col) = med;
          ++out.count;
        }
      }
  return out;
}

// The spectral system's residual and trace as functions of lambda, and the two rules over them.
class LambdaSearch {
 public:
  // The search spans lambda around the ratio of H^T H's largest eigenvalue to L^T L's, bounded from the
  // kernel and the regulariser alone so that every backend searches the same range.
  LambdaSearch(const kernels::Spectral& s, ConstMatrixView<double> kernel, Regularizer regularizer, index pixels,
               int channels)
      : s_(s), pixels_(static_cast<double>(pixels)), channels_(channels) {
    double l1 = 0;  // |DFT of the kernel| <= its 1-norm
    for (index q = 0; q < kernel.cols(); ++q)
      for (index p = 0; p < kernel.rows(); ++p) l1 += std::abs(kernel(p, q));
    const double regularizer_top = regularizer == Regularizer::Identity ? 1.0 : regularizer == Regularizer::Gradient ? 8.0 : 64.0;
    scale_ = l1 * l1 / regularizer_top;
    const double scale = scale_;
    lo_ = std::log10(scale) - 10;  // below: the system is singular to working precision where H is
    hi_ = std::log10(scale) + 2;   // above: the regulariser alone decides
  }
  double lower() const { return std::pow(10.0, lo_); }
  double upper() const { return std::pow(10.0, hi_); }
  // lambda's scale: where lambda L^T L's largest eigenvalue reaches H^T H's bound.
  double scale() const { return scale_; }

  // Generalised cross-validation over the channels together (one lambda for all):
  // GCV = (N ||r||^2) / (trace of I - A over all channels)^2, N the pixels of all channels.
  double gcv(double lambda) const {
    const kernels::Spectral::Terms t = s_.residual_and_trace(lambda);
    const double trace = channels_ * t.trace;
    return trace > 0 ? pixels_ * t.residual / (trace * trace) : std::numeric_limits<double>::infinity();
  }
  double residual(double lambda) const { return s_.residual_and_trace(lambda).residual; }

  // Minimises GCV over log lambda: a scan, then golden-section search around the best point.
  double minimise_gcv() const {
    constexpr int kScan = 48;
    double best = lo_, best_value = gcv(std::pow(10.0, lo_));
    for (int k = 1; k <= kScan; ++k) {
      const double x = lo_ + (hi_ - lo_) * k / kScan, v = gcv(std::pow(10.0, x));
      if (v < best_value) best = x, best_value = v;
    }
    double a = std::max(lo_, best - (hi_ - lo_) / kScan), b = std::min(hi_, best + (hi_ - lo_) / kScan);
    const double phi = (std::sqrt(5.0) - 1) / 2;
    for (int k = 0; k < 40; ++k) {
      const double c = b - phi * (b - a), d = a + phi * (b - a);
      if (gcv(std::pow(10.0, c)) < gcv(std::pow(10.0, d)))
        b = d;
      else
        a = c;
    }
    return std::pow(10.0, (a + b) / 2);
  }

  // The lambda whose residual is the noise's, ||r||^2 = N sigma^2 (the residual grows with lambda), or
  // nothing when even the smallest lambda leaves more (the model does not explain the image that well).
  std::optional<double> discrepancy(double sigma) const {
    const double target = pixels_ * sigma * sigma;
    if (residual(std::pow(10.0, lo_)) > target) return std::nullopt;
    if (residual(std::pow(10.0, hi_)) < target) return std::pow(10.0, hi_);
    double a = lo_, b = hi_;
    for (int k = 0; k < 60; ++k) {
      const double c = (a + b) / 2;
      (residual(std::pow(10.0, c)) < target ? a : b) = c;
    }
    return std::pow(10.0, (a + b) / 2);
  }

 private:
  const kernels::Spectral& s_;
  double pixels_;
  int channels_;
  double lo_ = 0, hi_ = 0;
  double scale_ = 1;
};

// (H^T W H + lambda L^T L) for conjugate gradients, and the spectral system as its preconditioner
// (scaled by the mean weight, the spectral system's nearest match to H^T W H).
class NormalOperator final : public kernels::LinearOperator<double> {
 public:
  NormalOperator(kernels::Convolution& H, double lambda) : H_(H), lambda_(lambda) {}
  index rows() const override { return H_.cols(); }
  index cols() const override { return H_.cols(); }
  void apply(ConstMatrixView<double> x, MatrixView<double> y) override { H_.normal(x, lambda_, y); }
  void apply_transpose(ConstMatrixView<double> x, MatrixView<double> y) override { H_.normal(x, lambda_, y); }

 private:
  kernels::Convolution& H_;
  double lambda_;
};

class SpectralPreconditioner final : public kernels::LinearOperator<double> {
 public:
  SpectralPreconditioner(kernels::Spectral& S, index size, double lambda, double weight)
      : S_(S), size_(size), lambda_(lambda / weight), scale_(1 / weight) {}
  index rows() const override { return size_; }
  index cols() const override { return size_; }
  void apply(ConstMatrixView<double> r, MatrixView<double> z) override {
    S_.precondition(r, lambda_, z);
    if (scale_ != 1) kernels::vectors<double>(r.device()).scal(scale_, z);
  }
  void apply_transpose(ConstMatrixView<double> r, MatrixView<double> z) override { apply(r, z); }

 private:
  kernels::Spectral& S_;
  index size_;
  double lambda_, scale_;
};

// The PSF's frequency response, sampled on a 64 x 64 grid: enough to tell a blur, whose response falls to
// near zero, from a sharpening filter, whose response stays within a few times its DC gain and rises above it.
struct Response {
  double smallest = 0, largest = 0, dc = 0;  // magnitudes
};
Response response(ConstMatrixView<double> kernel) {
  constexpr int kGrid = 64;
  std::array<double, kGrid> cosine{}, sine{};  // of -2 pi k / kGrid: the phases repeat with period kGrid
  for (int k = 0; k < kGrid; ++k) {
    cosine[static_cast<std::size_t>(k)] = std::cos(-2 * std::numbers::pi * k / kGrid);
    sine[static_cast<std::size_t>(k)] = std::sin(-2 * std::numbers::pi * k / kGrid);
  }
  Response r{std::numeric_limits<double>::infinity(), 0, 0};
  for (int v = 0; v < kGrid; ++v)
    for (int u = 0; u < kGrid; ++u) {
      double re = 0, im = 0;
      for (index q = 0; q < kernel.cols(); ++q)
        for (index p = 0; p < kernel.rows(); ++p) {
          const auto k = static_cast<std::size_t>((u * p + v * q) % kGrid);
          re += kernel(p, q) * cosine[k];
          im += kernel(p, q) * sine[k];
        }
      const double gain = std::hypot(re, im);
      r.smallest = std::min(r.smallest, gain);
      r.largest = std::max(r.largest, gain);
      if (u == 0 && v == 0) r.dc = gain;
    }
  return r;
}
// How far the PSF smooths: its smallest gain over its largest (1 for a delta).
double smallest_gain(const Response& r) { return r.largest > 0 ? r.smallest / r.largest : 1; }
// How far it sharpens: its largest gain over its DC gain (1 for every nonnegative PSF; fspecial's unsharp
// filters 5 to 9; infinite where the DC gain is 0).
double amplification(const Response& r) {
  return r.dc > 0 ? r.largest / r.dc : std::numeric_limits<double>::infinity();
}

// A weight in [0, 1] rising linearly in log x from 0 at x = `from` to 1 at x = `to` (either order; x may be 0
// or infinite). The automatic choice blends two lambdas by such weights, log lambda moving from one to the
// other, instead of switching at a threshold: lambda is then continuous in the noise estimate, the residual
// and the PSF. (A switch at an estimated noise of 0.01 once sent lambda from GCV's 0.04 to 1e-12 for noise
// of 0.0098: an inverse filter, 5 dB.)
double ramp(double x, double from, double to) {
  if (std::isnan(x)) return 0;
  const double t = (std::log(x) - std::log(from)) / (std::log(to) - std::log(from));
  return std::clamp(t, 0.0, 1.0);
}
double blend(double a, double b, double weight) {
  return std::exp((1 - weight) * std::log(a) + weight * std::log(b));
}

// What makes a recovered image implausible, judged against the data g (every channel) and the PSF. Empty
// when plausible.
// - More than one pixel in a thousand out of range. For data within [0, 1] (an image in the unit range,
//   whose scene lies there too) the range is [-0.5, 1.5]: ringing and sharpened edges overshoot by a tenth
//   or two, an inverse filter amplifying noise by 10^3 by far more. For data in other units, g's range
//   widened on each side by its span times the PSF's largest dilution (1 over its peak weight: a bright pixel
//   blurred by a 3 x 3 box keeps a ninth of its height, and comes back whole).
// - Fine detail (the noise estimate) more than ten times g's plus a tenth of g's span.
std::optional<std::string> implausible(ConstMatrixView<double> f, ConstMatrixView<double> g, int channels,
                                       double g_noise, ConstMatrixView<double> kernel) {
  const auto [lo, hi] = std::minmax_element(g.data(), g.data() + g.rows() * g.cols());
  const double span = *hi > *lo ? *hi - *lo : std::max(1.0, std::abs(*hi));
  double below = -0.5, above = 1.5;
  if (!(*lo >= 0 && *hi <= 1)) {
    double peak = 0;
    for (index q = 0; q < kernel.cols(); ++q)
      for (index p = 0; p < kernel.rows(); ++p) peak = std::max(peak, kernel(p, q));
    const double widen = span * std::max(1.0, 1 / peak);
    below = *lo - widen;
    above = *hi + widen;
  }
  index outside = 0;
  double least = f(0, 0), most = f(0, 0);
  for (index j = 0; j < f.cols(); ++j)
    for (index i = 0; i < f.rows(); ++i) {
      const double v = f(i, j);
      outside += v < below || v > above;
      least = std::min(least, v);
      most = std::max(most, v);
    }
  if (static_cast<double>(outside) > std::max(1.0, 1e-3 * static_cast<double>(f.rows() * f.cols())))
    return fmt::format("{} pixels lie outside [{:.3g}, {:.3g}], the range the data's ([{:.3g}, {:.3g}]) allows (the "
                       "result spans [{:.3g}, {:.3g}])",
                       outside, below, above, *lo, *hi, least, most);
  const double f_noise = estimate_noise(f, channels);
  if (f_noise > 10 * g_noise + 0.1 * span)
    return fmt::format("its fine detail (noise estimated {:.3g}) is more than ten times the data's ({:.3g})", f_noise,
                       g_noise);
  return std::nullopt;
}

// Total variation's automatic weight per unit of noise: measured on three photographs (camera, rocket, brick)
// under Gaussian and disk blurs at noise 0.01 and 0.03, the best of 0.02, 0.05, 0.1 and 0.2 was 0.1 or 0.2
// everywhere, 0.02 and 0.05 losing up to 12 dB at 0.03 (docs/deblurring-quality.md).
constexpr double kTvWeightPerNoise = 0.12;
// The nonlocal prior (Prior::Nonlocal): the inverse it averages has this share of the Tikhonov lambda, and the
// pilot's patches are (2 kNonlocalPatch + 1)^2 pixels compared within kNonlocalSearch pixels along each axis.
// Measured on camera and brick under Gaussian and motion blurs at noise 0.01 and 0.03 (a NumPy prototype,
// docs/deblurring-quality.md), mean PSNR over both noise levels: shares 0.1, 0.03 and 0.01 29.90, 29.73 and
// 29.03 dB with the similarity scale the inverse's own noise (0.75 and 1.5 times it: within 0.1 dB, and 0.2
// below, on the tuned images); 7x7 patches within 10 pixels 0.07 to 0.18 dB below 5x5 within 7, at four times the
// work. The result is the mean of the averaged inverse and the pilot:
// +0.38 dB at noise 0.01 and +0.02 at 0.03 over the averaged inverse alone on the tuned images (camera, rocket,
// brick; Gaussian, disk and motion blurs), where a second pass with the first's result as pilot lost 0.1 dB.
constexpr double kNonlocalInverseShare = 0.1;
constexpr int kNonlocalPatch = 2, kNonlocalSearch = 7;
constexpr double kNonlocalTolerance = 1e-6;
// For Poisson data, in the objective peak sum (H f - g log H f) + weight TV(f): weight = kPoissonTvWeight
// sqrt(sigma) sqrt(peak / mean), sigma = sqrt(mean / peak) the photon noise at the mean level (the Gaussian
// rule's weight over the variance, with a factor growing as sqrt(sigma) where the Gaussian rule's is fixed):
// measured on two photographs (camera, astronaut) under Gaussian and disk blurs at peaks 10 to 1000, the best
// factor fell from 0.3 at peak 10 to 0.1 at 1000 (docs/deblurring-quality.md).
constexpr double kPoissonTvWeight = 0.65;
// The noise model auto takes Poisson from this share of the noise variance growing with the intensity
// (estimate_poisson): measured 0.65 and above on counts at peaks 5 to 5000 on photographs, the phantom and
// smooth scenes (the lowest at peaks 8 to 10, where the floor's estimate is noisiest), 0.48 and below on
// Gaussian noise of 0.003 to 0.05 clipped to [0, 1] (the phantom, with its dark surround and sharp edges, the
// highest; photographs 0.1 and below). Between the two the Poisson and the Gaussian results are blended, the
// Poisson one's weight rising linearly with the share: a switch at 0.6 sent a photograph (rocket, 128 px,
// white noise of 0.0024, an 8-bit scene, share 0.68) to Poisson total variation, 1.2 dB under the Gaussian
// model's result at noise 0.0026 (share 0.58).
constexpr double kGaussianShare = 0.5, kPoissonShare = 0.65;
// ... and where the counts at g's mean level (peak times mean) are under kPoissonCounts, falling to the Gaussian
// model at kGaussianCounts: at tens of thousands of counts photon noise is white noise whose variance varies
// a little with the intensity, and the Gaussian model's priors (nonlocal) do better. Measured: the Poisson
// benchmark's peaks of 10 to 1000 (counts at the mean 4 to 500) gain 0.3 to 2.5 dB from the Poisson term;
// photographs with white noise of 0.001 to 0.0025 (8-bit scenes: camera, rocket) fitted shares of 0.6 to
// 0.8 with peaks of 5e4 to 7e4 (2e4 to 3e4 counts at the mean), where Poisson total variation came out 1 to
// 2 dB under the Gaussian model's result.
constexpr double kPoissonCounts = 2e3, kGaussianCounts = 2e4;
// ... and over at least this many blocks (about 88 x 88 pixels): fewer blocks of a small image are as much
// its edges as its noise (noise-free phantoms of 32 and 64 pixels, blurred and rounded to 8 bits, fitted
// shares of 0.7 to 1 over 9 and 41 blocks, with a predicted noise that agreed with their edges').
constexpr std::size_t kPoissonBlocks = 100;
// ... and with the photon noise the line predicts within 4 times of the white noise seen where there is
// light (lit_noise), and at least twice the data's rounding step: measured 0.9 to 2.9 times on counts, where an
// image without noise but 8-bit rounding fits a line through its edges and its rounding.
// Where g lies on a lattice whose peak (1 / step) is within kLatticeAgreement times of the line's, the line
// fitted counts, not rounding (a rounding line's peak is above 255^2 / 4 times the mean level for 8 bits),
// and neither the step nor 100 blocks is asked, only kPoissonBlocksOnLattice: at 10 counts per unit the
// photon noise is under twice the step wherever the mean is under 4 counts, and a dark photograph (rocket)
// keeps 57 to 67 blocks clear of 0; both had sent five of the benchmark's 21 cases at 10 counts to the
// Gaussian model, 1 to 2.5 dB below the Poisson result.
constexpr double kLatticeAgreement = 2;
constexpr std::size_t kPoissonBlocksOnLattice = 36;

// The smallest gap between g's distinct values: 1/255 for an 8-bit file, 1/peak for counts; 0 for one value.
double rounding_step(ConstMatrixView<double> host) {
  // The values split by value into buckets, each sorted on a thread of its own: the smallest gap lies within a
  // bucket or between one bucket's largest value and the next's smallest. (One sort of every pixel took 60 to
  // 70 ms of a 512 x 512 colour image's automatic deblurring, twice: more than the nonlocal prior on a GPU.)
  const std::size_t count = static_cast<std::size_t>(host.rows() * host.cols());
  if (count < 2) return 0;
  double lo = host(0, 0), hi = host(0, 0);
  for (index j = 0; j < host.cols(); ++j)
    for (index i = 0; i < host.rows(); ++i) lo = std::min(lo, host(i, j)), hi = std::max(hi, host(i, j));
  if (!(hi > lo)) return 0;
  const std::size_t buckets = std::clamp<std::size_t>(count / 4096, 1, 4 * static_cast<std::size_t>(cpu_threads()));
  const auto bucket = [&](double v) {
    return std::min(buckets - 1, static_cast<std::size_t>((v - lo) / (hi - lo) * static_cast<double>(buckets)));
  };
  std::vector<std::size_t> start(buckets + 1, 0);
  for (index j = 0; j < host.cols(); ++j)
    for (index i = 0; i < host.rows(); ++i) ++start[bucket(host(i, j)) + 1];
  for (std::size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
  std::vector<double> values(count);
  std::vector<std::size_t> next(start.begin(), start.end() - 1);
  for (index j = 0; j < host.cols(); ++j)
    for (index i = 0; i < host.rows(); ++i) values[next[bucket(host(i, j))]++] = host(i, j);
  std::vector<double> gaps(buckets, std::numeric_limits<double>::infinity());
  detail::in_parallel(static_cast<index>(buckets), 1, [&](index first, index last) {
    for (auto b = static_cast<std::size_t>(first); b < static_cast<std::size_t>(last); ++b) {
      std::sort(values.begin() + static_cast<std::ptrdiff_t>(start[b]), values.begin() + static_cast<std::ptrdiff_t>(start[b + 1]));
      for (std::size_t k = start[b] + 1; k < start[b + 1]; ++k)
        if (values[k] > values[k - 1]) gaps[b] = std::min(gaps[b], values[k] - values[k - 1]);
    }
  });
  double step = *std::min_element(gaps.begin(), gaps.end());
  std::optional<double> previous;  // the largest value of the buckets so far
  for (std::size_t b = 0; b < buckets; ++b) {
    if (start[b] == start[b + 1]) continue;
    if (previous && values[start[b]] > *previous) step = std::min(step, values[start[b]] - *previous);
    previous = values[start[b + 1] - 1];
  }
  return std::isfinite(step) ? step : 0.0;
}

// 1 / step where every value of g is a whole multiple of `step`, its rounding step (rounding_step), as counts /
// peak are (and an 8-bit file, 1/255, is), at most 2^20 steps from 0; else 0.
double lattice_peak(ConstMatrixView<double> host, double step) {
  if (!(step > 0)) return 0;
  for (index j = 0; j < host.cols(); ++j)
    for (index i = 0; i < host.rows(); ++i) {
      const double units = host(i, j) / step;
      if (!(std::abs(units) <= 0x1p20) || std::abs(units - std::round(units)) > 1e-6) return 0;
    }
  return 1 / step;
}

// Over the 2 x 2 cells of g with light in them (a positive sum: dark counts are exact zeros, which would make
// any noise estimate 0 on a mostly dark image), the median of their means and the white-noise estimate of
// their diagonal detail (as estimate_noise's).
struct LitNoise {
  double level = 0, sigma = 0;
  double step = 0;  // the smallest gap between g's distinct values: 1/255 for an 8-bit file, 1/peak for counts
};
LitNoise lit_noise(ConstMatrixView<double> host, int channels, double step) {
  const index m = host.rows(), width = host.cols() / channels;
  std::vector<double> levels, detail;
  for (int c = 0; c < channels; ++c)
    for (index j = 0; j + 1 < width; j += 2)
      for (index i = 0; i + 1 < m; i += 2) {
        const index col = c * width + j;
        const double a = host(i, col), b = host(i + 1, col), d = host(i, col + 1), e = host(i + 1, col + 1);
        if (!(a + b + d + e > 0)) continue;
        levels.push_back((a + b + d + e) / 4);
        detail.push_back(std::abs(a - b - d + e) / 2);
      }
  return {median(levels), median(detail) / 0.6745, step};
}

// Total variation by ADMM (the splitting z = D f of Wang, Yang, Yin and Zhang 2008, in the scaled form of Boyd
// et al. 2011, sec. 3.1), from the f given (the Tikhonov solution), on every channel at once:
//   f := (H^T H + rho D^T D)^-1 (H^T g + rho D^T (z - u)),  z := shrink(D f + u, weight / rho),  u := D f + u - z.
// f's step is the spectral solve where that is exact, else four iterations of conjugate gradients
// preconditioned by it from the last f (inexact ADMM: on motion-blurred photographs the same PSNR as solving
// to 1e-6 at a third to a fifth of the time; a fixed count does the same work on every device). Every tenth iteration measures f's change, stops below the tolerance, and lets rho follow the
// residuals (sec. 3.4.1: primal ||D f - z|| against dual rho ||D^T (z - z_old)||, ten times apart).
//
// With a Poisson data term (PIDAL-TV: Figueiredo and Bioucas-Dias 2010), min sum (H f - g log H f) +
// (weight / peak) TV(f), the counts' negative log-likelihood over the peak, split as v = H f (penalty sigma)
// and z = D f (penalty sigma rho): g in H^T g becomes v - a, a the scaled dual of v = H f, and v's step is
// the data term's proximal map, pixel by pixel (kernels::TotalVariation::poisson_data); z's threshold is
// weight / (peak sigma rho). sigma = 1 / mean(g) puts v's penalty on the scale of the data term's curvature
// (g / v^2 at v = g), and rho stays 1: measured on photographs at peaks 10 to 1000, within 0.1 dB of the
// best fixed penalties after 100 iterations (docs/deblurring-quality.md).
struct PoissonTerm {
  double peak = 0;   // counts per unit of g
  double sigma = 1;  // v's penalty
};
struct AdmmOutcome {
  double weight = 0;    // the weight used
  double noise = 0;     // automatic weight: the noise level it was set from
  int iterations = 0;
  bool converged = false;
  double change = 0;  // f's relative change over the last iteration measured
  double rho = 0;     // the penalty at the end
};
// A negative weight asks for the automatic one: kTvWeightPerNoise times the larger of the noise estimated
// in g and the Tikhonov solution's residual per pixel (which, on noise-free data, is the model's error: the
// scene past the frame), so that noise-free data are not inverted without a prior.
AdmmOutcome admm_total_variation(const kernels::Imaging& family, const kernels::BlurModel& model, int channels,
                                 Device device, ConstMatrixView<double> g, double weight, double noise,
                                 const DeblurOptions& options, MatrixView<double> f,
                                 const std::optional<PoissonTerm>& poisson = std::nullopt) {
  const index m = model.height, n = model.width, size = m * n;
  kernels::BlurModel tv_model = model;
  tv_model.regularizer = Regularizer::Gradient;
  const std::unique_ptr<kernels::Spectral> spectral = family.spectral(tv_model, device);
  const std::unique_ptr<kernels::Convolution> H = family.convolution(tv_model, device);
  const std::unique_ptr<kernels::TotalVariation> tv = family.total_variation(tv_model, channels, device);
  const kernels::Vectors<double>& v = kernels::vectors<double>(device);
  Matrix<double> htg = Matrix<double>::uninitialized(m, n * channels, device);
  Matrix<double> rhs = Matrix<double>::uninitialized(m, n * channels, device);
  Matrix<double> f_old = Matrix<double>::uninitialized(m, n * channels, device);
  const Matrix<double> none(m, n * channels, device);  // zeros: the dual residual's right-hand side
  Matrix<double> z = Matrix<double>::uninitialized(m, 2 * n * channels, device), u(m, 2 * n * channels, device);
  Matrix<double> z_old = Matrix<double>::uninitialized(m, 2 * n * channels, device);
  Matrix<double> u_old = Matrix<double>::uninitialized(m, 2 * n * channels, device);
  // Poisson: H f, v's dual a and the target v - a whose H^T is the right-hand side's data part
  Matrix<double> hf, v_dual, target;
  const auto data_step = [&] {  // htg := H^T (v - a) after v's and a's steps at the current f
    for (int c = 0; c < channels; ++c) H->apply(channel(ConstMatrixView<double>(f), n, c), channel(hf.view(), n, c));
    tv->poisson_data(hf.view(), g, poisson->sigma, v_dual.view(), target.view());
    for (int c = 0; c < channels; ++c) H->apply_transpose(channel(target.view(), n, c), channel(htg.view(), n, c));
  };
  if (poisson) {
    hf = Matrix<double>::uninitialized(m, n * channels, device);
    v_dual = Matrix<double>(m, n * channels, device);
    target = Matrix<double>::uninitialized(m, n * channels, device);
    data_step();
  } else {
    for (int c = 0; c < channels; ++c) H->apply_transpose(channel(g, n, c), channel(htg.view(), n, c));
  }
  // z's threshold is weight / rho times this
  const double threshold = poisson ? 1 / (poisson->peak * poisson->sigma) : 1.0;
  AdmmOutcome out;
  if (weight < 0) {
    for (int c = 0; c < channels; ++c) H->apply(channel(ConstMatrixView<double>(f), n, c), channel(rhs.view(), n, c));
    v.axpy(-1.0, g, rhs.view());  // H f - g
    const double residual = v.norm2(rhs.view()) / std::sqrt(static_cast<double>(size * channels));
    out.noise = std::max(noise, residual);
    weight = kTvWeightPerNoise * out.noise;
  }
  out.weight = weight;
  tv->shrink(f, 0, z.view(), u.view());  // z := D f, u := 0
  // rho: the penalty at which the shrinkage threshold weight / rho is a tenth of the data's span (edges
  // of that height or more keep most of their step from the first iteration)
  // (Poisson: fixed penalties, see above; g's range, copied from the device, is not needed)
  double lo = 0, hi = 0;
  if (!poisson) {
    const Matrix<double> copied = device.is_cpu() ? Matrix<double>() : Matrix<double>::copy_of(g).to(Device::cpu());
    const ConstMatrixView<double> host = device.is_cpu() ? g : copied.view();
    const auto [a, b] = std::minmax_element(host.data(), host.data() + host.rows() * host.cols());
    lo = *a, hi = *b;
  }
  double rho = poisson ? 1.0 : weight / (0.1 * (hi > lo ? hi - lo : 1.0));
  if (!(rho > 0)) rho = 1;  // weight 0: no prior, ADMM is the penalty method on z = D f
  for (int k = 1; k <= options.admm_iterations; ++k) {
    const bool measure = k % 10 == 0 || k == options.admm_iterations;
    if (measure) {
      v.copy(f, f_old.view());
      v.copy(z.view(), z_old.view());
      v.copy(u.view(), u_old.view());
    }
    tv->right_hand_side(htg.view(), rho, z.view(), u.view(), rhs.view());
    for (int c = 0; c < channels; ++c) {
      if (spectral->exact()) {
        spectral->precondition(channel(rhs.view(), n, c), rho, channel(f, n, c));
      } else {
        NormalOperator A(*H, rho);
        SpectralPreconditioner M(*spectral, size, rho, 1.0);
        (void)krylov::cg<double>(A, channel(rhs.view(), n, c), channel(f, n, c), 0.0, 4, &M, {});
      }
    }
    if (poisson) data_step();
    tv->shrink(f, threshold * weight / rho, z.view(), u.view());
    out.iterations = k;
    if (!measure) continue;
    v.axpy(-1.0, f, f_old.view());
    out.change = v.norm2(f_old.view()) / std::max(v.norm2(f), std::numeric_limits<double>::min());
    if (out.change <= options.admm_tolerance) {
      out.converged = true;
      break;
    }
    if (poisson) continue;  // fixed penalties (see above)
    v.axpy(-1.0, u.view(), u_old.view());  // u - u_old = D f - z: the primal residual
    const double primal = v.norm2(u_old.view());
    tv->right_hand_side(none.view(), rho, z.view(), z_old.view(), rhs.view());  // rho D^T (z - z_old)
    const double dual = v.norm2(rhs.view());
    if (primal > 10 * dual) {
      rho *= 2;
      v.scal(0.5, u.view());  // u is the dual variable over rho
    } else if (dual > 10 * primal) {
      rho /= 2;
      v.scal(2.0, u.view());
    }
  }
  v.synchronize(device);
  out.rho = rho;
  return out;
}

// The standard deviation that white noise of unit deviation keeps through the spectral system's regularised
// inverse for `lambda` (exact where the system is; elsewhere the nearest such system's, which differs only
// near the frame): measured on one image of it, drawn with a fixed seed so that deblur stays deterministic.
double noise_gain(kernels::Spectral& spectral, index m, index n, double lambda, Device device) {
  std::mt19937_64 generator(0x6e6f697365ULL);  // "noise"
  std::normal_distribution<double> normal;
  Matrix<double> noise = Matrix<double>::uninitialized(m, n);
  for (index k = 0; k < m * n; ++k) noise.data()[k] = normal(generator);
  const Matrix<double> on_device = noise.to(device);
  Matrix<double> out = Matrix<double>::uninitialized(m, n, device);
  spectral.solve(on_device.view(), lambda, out.view());
  kernels::vectors<double>(device).synchronize(device);
  const Matrix<double> host = device.is_cpu() ? std::move(out) : out.to(Device::cpu());
  double sum = 0, squares = 0;
  for (index k = 0; k < m * n; ++k) sum += host.data()[k], squares += host.data()[k] * host.data()[k];
  const double count = static_cast<double>(m * n), mean = sum / count;
  return std::sqrt(std::max(0.0, squares / count - mean * mean));
}

}  // namespace

double estimate_noise(ConstMatrixView<double> g, int channels) {
  if (channels < 1 || g.cols() % channels != 0)
    throw InvalidArgument(fmt::format("estimate_noise: {} columns do not hold {} channels", g.cols(), channels));
  const Matrix<double> copied = g.device().is_cpu() ? Matrix<double>() : Matrix<double>::copy_of(g).to(Device::cpu());
  const ConstMatrixView<double> host = copied.empty() ? g : copied.view();
  const index m = host.rows(), width = host.cols() / channels;
  std::vector<double> detail;
  for (int c = 0; c < channels; ++c)
    for (index j = 0; j + 1 < width; j += 2)
      for (index i = 0; i + 1 < m; i += 2) {
        const index col = c * width + j;
        detail.push_back(
            std::abs(host(i, col) - host(i + 1, col) - host(i, col + 1) + host(i + 1, col + 1)) / 2);
      }
  return median(detail) / 0.6745;
}

namespace {

// estimate_poisson on g on the host, whose rounding step (rounding_step: a sort of every value, the costliest
// part) deblur has already found.
PoissonFit fit_poisson(ConstMatrixView<double> host, int channels, double step) {
  const index m = host.rows(), width = host.cols() / channels;
  PoissonFit fit;
  fit.peak = std::numeric_limits<double>::infinity();
  double total = 0;
  for (index j = 0; j < host.cols(); ++j)
    for (index i = 0; i < m; ++i) total += host(i, j);
  fit.mean = total / static_cast<double>(std::max<index>(1, m * host.cols()));
  // per block of 16 x 16 pixels (overlapping by half): the mean, and the noise variance as the mean square of
  // the diagonal detail of its 2 x 2 cells (each of variance sigma^2 for white noise of variance sigma^2; the
  // mean square, not the median absolute value, because photon counts are integers, whose few values bias a
  // median)
  constexpr index kBlock = 16;
  std::vector<double> means, variances;
  for (int c = 0; c < channels; ++c)
    for (index j0 = 0; j0 + kBlock <= width; j0 += kBlock / 2)
      for (index i0 = 0; i0 + kBlock <= m; i0 += kBlock / 2) {
        double sum = 0, squares = 0;
        for (index j = j0; j < j0 + kBlock; j += 2)
          for (index i = i0; i < i0 + kBlock; i += 2) {
            const index col = c * width + j;
            const double a = host(i, col), b = host(i + 1, col), d = host(i, col + 1), e = host(i + 1, col + 1);
            squares += (a - b - d + e) * (a - b - d + e) / 4;
            sum += a + b + d + e;
          }
        means.push_back(sum / static_cast<double>(kBlock * kBlock));
        variances.push_back(squares / static_cast<double>(kBlock * kBlock / 4));
      }
  const std::size_t blocks = means.size();
  if (blocks < 3) return fit;
  std::vector<double> sorted = variances;
  const double typical = median(sorted);
  // variance = slope mean + floor by weighted least squares over the blocks in `usable`, each weighted by
  // 1 / its predicted variance squared (a variance estimated from 64 cells errs in proportion to itself);
  // blocks more than three robust deviations off the line, relatively (texture, edges), left out and the line
  // refitted, six times
  struct Line {
    double slope = 0, floor = 0;
    double slope_error = 0;  // the slope's standard error, from the weighted residuals
    double centre = 0;       // the weighted mean of the blocks' means, where the line is best determined
    bool valid = false;
    std::size_t blocks = 0;  // the blocks it was fitted to
    double at(double x) const { return slope * x + floor; }
  };
  const auto fit_line = [&](const std::vector<bool>& usable) {
    Line line;
    std::vector<bool> kept = usable;
    std::vector<double> weight(blocks, 1.0);
    for (int pass = 0; pass < 6; ++pass) {
      double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
      for (std::size_t b = 0; b < blocks; ++b)
        if (kept[b]) {
          const double w = weight[b];
          n += w, sx += w * means[b], sy += w * variances[b], sxx += w * means[b] * means[b];
          sxy += w * means[b] * variances[b];
        }
      const double det = n * sxx - sx * sx;
      if (std::count(kept.begin(), kept.end(), true) < 3 || !(det > 0)) break;
      const auto count = static_cast<std::size_t>(std::count(kept.begin(), kept.end(), true));
      line = {(n * sxy - sx * sy) / det, (sy * sxx - sx * sxy) / det, 0, sx / n, true, count};
      double squares = 0;
      for (std::size_t b = 0; b < blocks; ++b)
        if (kept[b]) squares += weight[b] * (variances[b] - line.at(means[b])) * (variances[b] - line.at(means[b]));
      line.slope_error = std::sqrt(squares / static_cast<double>(count - 2) * n / det);
      std::vector<double> relative(blocks), residuals;
      for (std::size_t b = 0; b < blocks; ++b) {
        const double predicted = std::max(line.at(means[b]), 1e-3 * typical + std::numeric_limits<double>::min());
        weight[b] = 1 / (predicted * predicted);
        relative[b] = std::abs(variances[b] - predicted) / predicted;
        if (kept[b]) residuals.push_back(relative[b]);
      }
      const double spread = 3 * median(residuals) / 0.6745;
      for (std::size_t b = 0; b < blocks; ++b) kept[b] = usable[b] && relative[b] <= spread;
    }
    return line;
  };
  // First over every block; then without those within two predicted deviations of 0, or of 1 where g stops
  // there (as clipped data do and counts do not): clipping shrinks their variance whatever the noise. The
  // prediction, not each block's own variance, decides, which would keep the blocks whose variance fell low
  // by chance and tilt the line. Counts (g on a lattice whose peak, 1 / step, is within kLatticeAgreement times
  // of the first line's) keep every block: their variance is their mean down to 0. Measured on scenes of one to
  // three objects on a dim background (0.1 to 0.3) at 10 to 1000 counts per unit: 15 of 160 had too few blocks
  // left to be told from Gaussian noise, 2 to 5 dB below the Poisson result; none now. Dim scenes with Gaussian
  // noise of 0.005 to 0.06 in 8-bit files: 6 of 150 taken for counts at 255 per unit, before and after.
  const double top = *std::max_element(host.data(), host.data() + host.rows() * host.cols());
  Line line = fit_line(std::vector<bool>(blocks, true));
  const double lattice = lattice_peak(host, step);
  const bool counts = lattice > 0 && line.valid && line.slope > 0 &&
                      std::abs(std::log(line.slope * lattice)) < std::log(kLatticeAgreement);
  for (int pass = 0; pass < 2 && line.valid && !counts; ++pass) {
    std::vector<bool> usable(blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
      const double sigma = std::sqrt(std::max(0.0, line.at(means[b])));
      usable[b] = means[b] >= 2 * sigma && !(top <= 1 && means[b] > 1 - 2 * sigma);
    }
    const Line refined = fit_line(usable);
    if (!refined.valid) break;
    line = refined;
  }
  if (!line.valid) return fit;
  fit.blocks = line.blocks;
  fit.floor = std::max(0.0, line.floor);
  // A slope within three standard errors of 0 is no growth: a flat image's blocks share one mean, and the line
  // through them tilts either way by chance (positive half the time, it gave a peak of any size). The blocks
  // overlap by half each way, every pixel in four of them, so their residuals are not independent and the
  // fitted error is about half the true one: doubled. Measured on 3000 flat 64 x 64 images with white noise:
  // 0 peaks at three doubled errors, 5 at two and a half, 1505 at none.
  // Counts / peak lie on a lattice of step 1 / peak, and for them the variance at the blocks' centre is
  // centre / peak, within three doubled standard errors of a variance estimated from 64 cells per block
  // (relative sqrt(2 / 64)). Where g is on such a lattice and its variance agrees, the lattice's peak is taken
  // over the line's slope when the slope is unseen (below), or seen and within kLatticeAgreement times of 1 /
  // peak: blocks that share nearly one mean (a flat scene, or a few objects on a wide background) leave the
  // slope unseen or too low, its floor taking the rest, Poisson or not. Measured over 300 piecewise scenes of
  // 96 x 96 at 30 counts per unit: 41 with the slope unseen, and 1 (seed 34 of tests/python's sweep) with a
  // slope of 1 / 54 and 41 % of the variance in the floor, which had sent it to the Gaussian model 2.4 dB
  // below the Poisson one; flat 8-bit images with Gaussian noise: 0 of 1000 at sigma 0.01 and 0.03, and peak
  // 255 at sigma 0.044, whose variance is what 255 counts per unit would give.
  double slope = 0;
  const bool seen_slope = line.slope > 3 * 2 * line.slope_error;
  if (const double peak = lattice; peak > 0 && line.centre > 0) {
    const double expected = line.centre / peak, seen = line.at(line.centre);
    const double tolerance = 4 * 2 * std::sqrt(2.0 / 64) / std::sqrt(static_cast<double>(line.blocks));
    // an unseen slope above 0 or within three doubled errors of 1 / peak (the slope's error, fitted from
    // residuals of blocks on few levels, can be too small: 5 of 600 scenes had slopes 3.5 to 7 errors under
    // 1 / peak); a seen one within kLatticeAgreement times
    const bool grows = seen_slope ? std::abs(std::log(line.slope * peak)) < std::log(kLatticeAgreement)
                                  : line.slope > 0 || std::abs(line.slope - 1 / peak) <= 3 * 2 * line.slope_error;
    if (std::abs(seen / expected - 1) <= tolerance && grows) {
      slope = 1 / peak;
      fit.floor = std::max(0.0, seen - expected);
      // The blocks are those whose variance the counts predict within four deviations of a variance from 64
      // cells, not the line's: blocks sharing nearly one mean leave a line fitted to a few of them (3 of 121 on
      // a dim background at 10 counts per unit, which the block count then refused). Taking the lattice's
      // peak wherever most blocks agree, whatever the line, sent 28 of 150 dim scenes with Gaussian noise in
      // 8-bit files to the Poisson model (6 without): their variance is mean / 255 as often as not.
      std::size_t agreeing = 0;
      for (std::size_t b = 0; b < blocks; ++b) {
        const double predicted = means[b] * slope + fit.floor;
        agreeing += predicted > 0 && std::abs(variances[b] - predicted) <= 4 * std::sqrt(2.0 / 64) * predicted;
      }
      fit.blocks = std::max(fit.blocks, agreeing);
    }
  }
  if (slope == 0 && seen_slope) slope = line.slope;
  if (slope > 0) {
    fit.peak = 1 / slope;
    const double signal = std::max(0.0, fit.mean) * slope;
    fit.signal_share = signal + fit.floor > 0 ? signal / (signal + fit.floor) : 0.0;
  }
  return fit;
}

}  // namespace

PoissonFit estimate_poisson(ConstMatrixView<double> g, int channels) {
  if (channels < 1 || g.cols() % channels != 0)
    throw InvalidArgument(fmt::format("estimate_poisson: {} columns do not hold {} channels", g.cols(), channels));
  const Matrix<double> copied = g.device().is_cpu() ? Matrix<double>() : Matrix<double>::copy_of(g).to(Device::cpu());
  const ConstMatrixView<double> host = copied.empty() ? g : copied.view();
  return fit_poisson(host, channels, rounding_step(host));
}

namespace {

// Prior auto for Gaussian noise: the nonlocal prior where the PSF blurs and the image shows no salt and pepper
// to speak of; Tikhonov where the PSF sharpens or impulses call for its robust data term. Measured on the
// quality benchmark's photographs, crops, colour and phantom (docs/deblurring-quality.md): under blur the
// nonlocal prior is 0.9 to 1.5 dB above Tikhonov on the mean at every Gaussian noise level, noise-free
// included; under sharpening, whose inverse is stable, its averaging took 10 dB from noise-free images (their
// sharp detail read as noise of 0.03): a filter that sharpens is told by its response rising above its DC gain
// (a blur's, nonnegative, never does; however mild the blur, the nonlocal prior is ahead: a 3 x 3 Gaussian of
// sigma 0.6 on the phantom at noise 0.01, 38.7 dB against 32.0). With 2 % salt and pepper the nonlocal prior (on data whose impulses
// were replaced by medians) is ahead of the robust Tikhonov by 0.6 dB on the mean, with 5 % 1.4 dB behind it
// (up to 3.2). Between these ends the two results are blended by weights continuous in the PSF's smallest
// gain and the impulses' share: no switch (a blend at 0.8 % impulses measured above both).
constexpr double kBlurAmplification = 1.1, kSharpenAmplification = 1.5;  // largest |H| over |H(0)|
constexpr double kImpulsesNonlocal = 0.01, kImpulsesRobust = 0.04;  // the nonlocal prior alone, the robust Tikhonov alone

// The nonlocal result's share under prior auto, in [0, 1].
double nonlocal_share(double amplification, double impulse_share) {
  const double blurs = ramp(amplification, kSharpenAmplification, kBlurAmplification);  // 1 for a blur
  const double clean = impulse_share <= 0 ? 1.0 : 1 - ramp(impulse_share, kImpulsesNonlocal, kImpulsesRobust);
  return blurs * clean;
}

// (1 - weight) a + weight b, on b's device, into b.
void mix(const DeblurResult& a, DeblurResult& b, double weight) {
  const kernels::Vectors<double>& v = kernels::vectors<double>(b.image.device());
  v.scal(weight, b.image.view());
  v.axpy(1 - weight, a.image.view(), b.image.view());
  v.synchronize(b.image.device());
}

// Prior auto between its two ends: the Tikhonov and the nonlocal results, weighted (1 - share, share). The
// report is the nonlocal run's (the noise model as auto chose it), with the Tikhonov lambda in its notes.
DeblurResult blend_priors(ConstMatrixView<double> g, const Psf& psf, const DeblurOptions& options,
                          const std::string& noise_model_from, double share, const std::string& prior_from) {
  const Stopwatch clock;
  DeblurOptions each = options;
  each.noise_model = NoiseModel::Gaussian;
  each.prior = Prior::Tikhonov;
  const DeblurResult tikhonov = deblur(g, psf, each);
  each.prior = Prior::Nonlocal;
  DeblurResult r = deblur(g, psf, each);
  mix(tikhonov, r, share);
  r.prior = share >= 0.5 ? Prior::Nonlocal : Prior::Tikhonov;
  r.nonlocal_share = share;
  r.prior_from = prior_from;
  r.noise_model_from = noise_model_from;
  r.robust = tikhonov.robust;
  r.report.notes.push_back(fmt::format("prior auto: {:.0f} % the nonlocal result, {:.0f} % the Tikhonov one (lambda "
                                       "{:.4g} by {}{}), from {}",
                                       100 * share, 100 * (1 - share), tikhonov.lambda, tikhonov.lambda_from,
                                       tikhonov.robust ? ", robust" : "", prior_from));
  r.report.seconds = clock.seconds();
  return r;
}

// The noise model auto between its two ends: the Gaussian result (the prior asked for, or auto's) and the
// Poisson one (total variation, the peak estimated), weighted (1 - weight, weight). The report is the larger
// weight's, the other run's prior and lambda in its notes.
DeblurResult blend_noise_models(ConstMatrixView<double> g, const Psf& psf, const DeblurOptions& options, double peak,
                                double weight, const std::string& noise_model_from) {
  const Stopwatch clock;
  DeblurOptions each = options;
  each.noise_model = NoiseModel::Gaussian;
  DeblurResult gaussian = deblur(g, psf, each);
  each.noise_model = NoiseModel::Poisson;
  each.prior = Prior::TotalVariation;
  if (!(options.photon_peak > 0)) each.photon_peak = peak;
  DeblurResult poisson = deblur(g, psf, each);
  const bool mostly_poisson = weight >= 0.5;
  DeblurResult& r = mostly_poisson ? poisson : gaussian;
  const DeblurResult& other = mostly_poisson ? gaussian : poisson;
  mix(gaussian, poisson, weight);
  if (!mostly_poisson) r.image = std::move(poisson.image);
  r.noise_model_from = noise_model_from;
  r.report.notes.push_back(fmt::format("noise model auto: {:.0f} % the Poisson result (total variation, {:.4g} counts "
                                       "per unit of g, estimated), {:.0f} % the Gaussian one ({} prior); the other "
                                       "run's lambda {:.4g}",
                                       100 * weight, peak, 100 * (1 - weight), to_string(gaussian.prior), other.lambda));
  r.report.seconds = clock.seconds();
  return std::move(r);
}

}  // namespace

DeblurResult deblur(ConstMatrixView<double> g_in, const Psf& psf, const DeblurOptions& options) {
  const Stopwatch clock;
  const int channels = options.channels;
  if (channels < 1) throw InvalidArgument(fmt::format("deblur: channels must be at least 1, got {}", channels));
  if (g_in.cols() % channels != 0)
    throw ShapeMismatch(fmt::format("deblur: an image of {} channels side by side and g", channels), g_in.rows(),
                        channels * (g_in.cols() / channels + 1), g_in.rows(), g_in.cols());
  const index m = g_in.rows(), n = g_in.cols() / channels, size = m * n;
  const ConstMatrixView<double> h = psf.kernel.view();
  if (m < 1 || n < 1) throw InvalidArgument("deblur: the image is empty");
  if (h.rows() > m || h.cols() > n)
    throw InvalidArgument(fmt::format("deblur: the PSF ({}x{}) is larger than the image ({}x{})", h.rows(), h.cols(), m, n));
  require_host(h.device(), "deblur's PSF");
  // lambda < 0 asks for the rule; NaN and infinity are no weight (inf gave an all-zero image)
  if (std::isnan(options.lambda) || std::isinf(options.lambda))
    throw InvalidArgument(fmt::format("deblur: lambda {} is not a finite weight", options.lambda));
  if (!(options.tolerance > 0) || !std::isfinite(options.tolerance))
    throw InvalidArgument(fmt::format("deblur: the tolerance must be a finite positive number, got {}", options.tolerance));
  if (options.max_iterations < 1)
    throw InvalidArgument(fmt::format("deblur: max_iterations must be at least 1, got {}", options.max_iterations));
  const Device device = g_in.device();
  Matrix<double> g = Matrix<double>::copy_of(g_in);  // contiguous, where g lives
  Matrix<double> copied = device.is_cpu() ? Matrix<double>() : g.to(Device::cpu());
  const ConstMatrixView<double> host = device.is_cpu() ? g.view() : copied.view();  // g read on the host
  require_finite_image(host, channels, "the image g");

  DeblurResult r;
  Report& report = r.report;
  report.operation = Operation::Deblur;
  report.device = device;
  report.precision = "float64";
  report.notes.push_back(fmt::format("{} boundary, {} regulariser, PSF {}", to_string(options.boundary),
                                     to_string(options.regularizer), psf.spec));

  // The noise and, for the robust data term, impulses and clipping, all read from g itself.
  r.noise_sigma = estimate_noise(host, channels);
  const Impulses impulses = find_impulses(host, n, channels);
  const double pixels = static_cast<double>(host.rows() * host.cols());
  const bool impulses_seen = static_cast<double>(impulses.count) >= 0.005 * pixels;
  const bool robust_possible = options.path == DeblurPath::Auto || options.path == DeblurPath::MatrixFree;
  if (options.robust == Robust::On && !robust_possible)
    throw InvalidArgument("deblur: the robust data term reweights pixels, which only the matrix-free path can do: "
                          "choose the matrix-free path or robust off");
  // The noise model, then the prior (auto: total variation for Poisson data, which runs with no other)
  if (options.photon_peak == 0 || std::isnan(options.photon_peak) || std::isinf(options.photon_peak))
    throw InvalidArgument(fmt::format("deblur: the photon peak {} is not a positive finite number of counts per unit "
                                      "of g (leave it out to estimate it)",
                                      options.photon_peak));
  const auto first_negative = [&]() -> std::optional<std::pair<index, index>> {
    for (index j = 0; j < host.cols(); ++j)
      for (index i = 0; i < host.rows(); ++i)
        if (host(i, j) < 0) return std::pair{i, j};
    return std::nullopt;
  };
  r.noise_model = options.noise_model;
  r.noise_model_from = "given";
  std::optional<PoissonFit> photons;
  if (options.noise_model != NoiseModel::Gaussian) {
    const double step = rounding_step(host);
    photons = fit_poisson(host, channels, step);
    if (options.noise_model == NoiseModel::Auto) {
      // the photon noise the line predicts against the white noise seen, both where there is light
      const LitNoise lit = lit_noise(host, channels, step);
      const double predicted = std::sqrt(lit.level / photons->peak + photons->floor);
      const double agreement = lit.sigma > 0 ? predicted / lit.sigma : std::numeric_limits<double>::infinity();
      // and at least the data's rounding step: below it, rounding (an 8-bit file of a noise-free image) is
      // what the line fitted
      // the share of the variance that grows, at g's mean or, where g is mostly dark, at the level where there
      // is light, whichever is larger (a phantom at 30 counts per unit, 80 % exact zeros, has its mean where
      // the floor's error weighs most: its share there fell under 0.6 for one noise draw in twelve)
      const double lit_signal = lit.level / photons->peak;
      const double share = std::max(photons->signal_share,
                                    lit_signal + photons->floor > 0 ? lit_signal / (lit_signal + photons->floor) : 0.0);
      // counts whose lattice step is the line's 1 / peak: the line fitted the counts, not their rounding
      const double lattice = lattice_peak(host, lit.step);
      const bool on_lattice = lattice > 0 && std::abs(std::log(photons->peak / lattice)) < std::log(kLatticeAgreement);
      const bool counts = std::isfinite(photons->peak) &&
                          photons->blocks >= (on_lattice ? kPoissonBlocksOnLattice : kPoissonBlocks) &&
                          agreement >= 0.25 && agreement <= 4 && (on_lattice || predicted >= 2 * lit.step);
      const double at_mean = photons->peak * photons->mean;  // counts
      const double poisson_weight =
          counts ? ramp(share, kGaussianShare, kPoissonShare) * ramp(at_mean, kGaussianCounts, kPoissonCounts) : 0.0;
      const bool grows = poisson_weight > 0;
      const std::optional<std::pair<index, index>> negative = grows ? first_negative() : std::nullopt;
      const bool gaussian_prior = options.prior == Prior::Tikhonov || options.prior == Prior::Nonlocal;
      r.noise_model_from = fmt::format("the noise variance {} with the intensity ({:.0f} % of it at the mean or lit level "
                                       "over {} blocks of 16 x 16 pixels, predicting {:.2g} times the noise seen "
                                       "where there is light, {:.3g} counts at the mean; Poisson from {:.0f} % over {} "
                                       "blocks, within 4 times, up to {:.3g} counts; Gaussian up to {:.0f} % or from "
                                       "{:.3g} counts; the two results blended between)",
                                       poisson_weight == 1 ? "grows" : grows ? "grows in part" : "does not grow",
                                       100 * share, photons->blocks, agreement, at_mean, 100 * kPoissonShare,
                                       kPoissonBlocks, kPoissonCounts, 100 * kGaussianShare, kGaussianCounts);
      if (grows && !negative && !gaussian_prior && poisson_weight < 1)
        return blend_noise_models(g_in, psf, options, photons->peak, poisson_weight, r.noise_model_from);
      r.noise_model = grows && !negative && !gaussian_prior ? NoiseModel::Poisson : NoiseModel::Gaussian;
      if (negative)
        r.noise_model_from += fmt::format(", but pixel ({}, {}) is negative: not photon counts", negative->first,
                                          negative->second);
      else if (grows && gaussian_prior)
        r.noise_model_from += fmt::format(", but the {} prior has the Gaussian data term only",
                                          options.prior == Prior::Tikhonov ? "Tikhonov" : "nonlocal");
    }
  }
  if (r.noise_model == NoiseModel::Poisson) {
    if (const std::optional<std::pair<index, index>> negative = first_negative())
      throw InvalidArgument(fmt::format("deblur: the Poisson noise model needs photon counts, and pixel ({}, {}) of g "
                                        "is {:.6g}: choose the Gaussian noise model",
                                        negative->first, negative->second, host(negative->first, negative->second)));
    if (options.prior == Prior::Tikhonov || options.prior == Prior::Nonlocal)
      throw InvalidArgument(fmt::format("deblur: the Poisson data term runs with the total-variation prior, not the {} "
                                        "one: prior tv or auto, or the Gaussian noise model",
                                        to_string(options.prior)));
    if (options.robust == Robust::On)
      throw InvalidArgument("deblur: the Poisson data term has no robust form: robust off (or auto)");
    if (options.photon_peak > 0) {
      r.photon_peak = options.photon_peak;
    } else {
      if (!std::isfinite(photons->peak))
        throw InvalidArgument("deblur: the photon peak cannot be estimated from g (its noise does not grow with the "
                              "intensity): give the counts per unit of g, or choose the Gaussian noise model");
      r.photon_peak = photons->peak;
    }
  }
  const bool poisson = r.noise_model == NoiseModel::Poisson;
  r.prior = options.prior;
  r.prior_from = "given";
  if (options.prior == Prior::Auto && poisson) {
    r.prior = Prior::TotalVariation;
    r.prior_from = "Poisson data (their data term runs with total variation only)";
  } else if (options.prior == Prior::Auto && options.robust == Robust::On) {
    r.prior = Prior::Tikhonov;
    r.prior_from = "the robust data term asked for (the Tikhonov prior is the one that has it)";
  } else if (options.prior == Prior::Auto) {
    const double impulse_share = static_cast<double>(impulses.count) / pixels;
    const double gain = amplification(response(h));
    r.nonlocal_share = nonlocal_share(gain, impulse_share);
    r.prior_from = fmt::format("the PSF's largest gain {:.3g} times its DC gain (nonlocal for a blur, up to {:.2g}; "
                               "Tikhonov for a filter that sharpens, from {:.2g}) and {:.2g} % impulses (nonlocal up "
                               "to {:.2g} %, the robust Tikhonov from {:.2g} %)",
                               gain, kBlurAmplification, kSharpenAmplification, 100 * impulse_share,
                               100 * kImpulsesNonlocal, 100 * kImpulsesRobust);
    if (r.nonlocal_share > 0 && r.nonlocal_share < 1)
      return blend_priors(g_in, psf, options, r.noise_model_from, r.nonlocal_share, r.prior_from);
    r.prior = r.nonlocal_share == 1 ? Prior::Nonlocal : Prior::Tikhonov;
  }
  if (r.prior == Prior::Nonlocal) r.nonlocal_share = 1;
  const bool nonlocal = r.prior == Prior::Nonlocal;
  const bool total_variation = r.prior == Prior::TotalVariation || nonlocal;  // nonlocal: its pilot
  const char* const prior_name = nonlocal ? "nonlocal" : "total-variation";
  if (total_variation && options.robust == Robust::On)
    throw InvalidArgument(fmt::format("deblur: the {} prior has no robust data term yet: robust off (or auto), or the "
                                      "Tikhonov prior",
                                      prior_name));
  if (total_variation && (std::isnan(options.tv_weight) || std::isinf(options.tv_weight)))
    throw InvalidArgument(fmt::format("deblur: the total-variation weight {} is not a finite number", options.tv_weight));
  if (total_variation && (options.admm_iterations < 1 || !(options.admm_tolerance > 0) ||
                          !std::isfinite(options.admm_tolerance)))
    throw InvalidArgument(fmt::format("deblur: ADMM needs at least one iteration and a finite positive tolerance, got {} "
                                      "and {}",
                                      options.admm_iterations, options.admm_tolerance));
  r.robust = options.robust == Robust::On ||
             (options.robust == Robust::Auto && impulses_seen && robust_possible && !total_variation);
  // The priors without a robust term take the impulses out of g before anything else reads it: each replaced by
  // the median of its neighbours (kept, they came out below the degraded image: the demo's phantom with 5 %
  // salt and pepper at 13.2 dB with total variation and 9.1 dB nonlocal, from 14.2 dB degraded). Any count:
  // an isolated pixel at 0 or 1 far from its neighbours' median is no blurred scene, and the 0.5 % that turns
  // the Tikhonov prior's robust path on would leave a cliff just under it (0.4 % of impulses: 2 dB below the
  // degraded image).
  const bool median_cleaned = total_variation && !poisson && options.robust == Robust::Auto && impulses.count > 0;
  if (median_cleaned) {
    copy<double>(impulses.cleaned.to(device).view(), g.view());
    if (!device.is_cpu()) copy<double>(impulses.cleaned.view(), copied.view());
    r.noise_sigma = estimate_noise(host, channels);
  }
  if ((impulses_seen || median_cleaned) && !poisson)  // dark photon counts are 0 by nature
    report.notes.push_back(fmt::format("{:.2g} % of the pixels are impulses (salt and pepper){}",
                                       100 * static_cast<double>(impulses.count) / pixels,
                                       r.robust         ? ": left out of the data term"
                                       : median_cleaned ? fmt::format(", replaced by the median of their neighbours "
                                                                      "(the {} prior has no robust term)",
                                                                      prior_name)
                                       : total_variation ? fmt::format(", kept (the {} prior has no robust term)",
                                                                         prior_name)
                                                         : ", kept (robust term off)"));
  const kernels::BlurModel model{m, n, h, options.boundary, options.regularizer};
  const kernels::Imaging& family = kernels::imaging(device);
  const std::unique_ptr<kernels::Spectral> spectral = family.spectral(model, device);
  // lambda is chosen, and the robust iteration starts, on g with its impulses replaced by their medians
  const Matrix<double> analysed = r.robust && impulses.count > 0 ? impulses.cleaned.to(device) : Matrix<double>();
  const ConstMatrixView<double> data = analysed.empty() ? g.view() : analysed.view();

  // lambda: given, or chosen by the rule
  const kernels::Vectors<double>& v = kernels::vectors<double>(device);
  if (options.lambda >= 0) {
    r.lambda = options.lambda;
    r.lambda_from = "given";
  } else {
    spectral->analyse(data, channels);
    const LambdaSearch search(*spectral, h, options.regularizer, size * channels, channels);
    const double noise = r.noise_sigma;
    // the discrepancy principle's lambda; none where even the smallest leaves a residual above the noise
    const std::optional<double> discrepancy = search.discrepancy(noise);
    if (options.rule == LambdaRule::Discrepancy) {
      if (!discrepancy)
        throw NumericalError(fmt::format("deblur: no lambda fits the noise estimated ({:.3g}): the PSF or the boundary "
                                         "does not explain the image; give lambda or use GCV",
                                         noise));
      r.lambda = *discrepancy;
      r.lambda_from = "discrepancy principle";
    } else if (options.rule == LambdaRule::GCV) {
      r.lambda = search.minimise_gcv();
      r.lambda_from = "generalised cross-validation";
    } else {
      // GCV, drawn towards the discrepancy principle (or, for noise-free data, towards the smallest lambda)
      // where its residual says it went wrong, by weights continuous in that residual, the noise and the PSF:
      const double gcv = search.minimise_gcv();
      const double fitted = std::sqrt(search.residual(gcv) / static_cast<double>(size * channels));
      const double fit = noise > 0 ? fitted / noise : fitted > 0 ? std::numeric_limits<double>::infinity() : 1.0;
      const double target = discrepancy.value_or(search.lower());
      // - over: GCV smoothing past every mode of the blur (with impulses left out, whose medians err, far
      //   past: motion blur with 5 % salt and pepper has GCV at 1 to 3 times the scale, and is right) and
      //   leaving a residual above twice the noise treats the image as noise. Noise-free data for a
      //   well-posed PSF (sharpening) leave GCV no minimum to find; the least regularisation is the answer.
      const double past = gcv / search.scale();
      const double over = ramp(past, r.robust ? 10.0 : 1.0, r.robust ? 40.0 : 4.0) * ramp(fit, 2, 4);
      // - under: GCV leaving a residual under half the noise seen in g is fitting it. For a blur that smooths,
      //   errors that are not white noise (the scene past the frame, resampling) look like signal to GCV,
      //   which then regularises photographs too little (measured: 4 to 11 dB lost on noise-free ones); the
      //   discrepancy principle keeps the residual at the noise's level. A PSF that does not smooth
      //   (sharpening) has a stable inverse whose residual is small for good reason: there GCV was measured
      //   right every time, hence the weight of the PSF's smallest gain.
      const double smooths = ramp(smallest_gain(response(h)), 0.2, 0.05);  // 1 for a blur, 0 for a sharpening filter
      const double under = smooths * ramp(fit, 0.7, 0.35);
      const double weight = std::max(over, under);  // never both: they need fit above 2 and below 0.7
      const std::string towards = discrepancy ? "the discrepancy principle" : "the smallest lambda";
      r.lambda = blend(gcv, target, weight);
      r.lambda_from = "generalised cross-validation";
      if (weight == 1)
        r.lambda_from = fmt::format("{} (GCV's {:.3g} left a residual of {:.3g} against noise estimated {:.3g})",
                                  discrepancy ? "discrepancy principle" : "the smallest lambda", gcv, fitted, noise);
      else if (weight > 0)
        r.lambda_from = fmt::format("generalised cross-validation, {:.0f} % of the way to {} (GCV's {:.3g} left a "
                                  "residual of {:.3g} against noise estimated {:.3g})",
                                  100 * weight, towards, gcv, fitted, noise);
      if (r.robust) {
        // GCV sees the image with its impulses replaced by their medians, nearly noise-free, and asks for
        // little smoothing; but the solve leaves those pixels out, and filling holes under a blur needs
        // more. Measured on 2 and 5 % salt and pepper under Gaussian, disk and motion blur: photographs
        // (texture and the unknown scene past the frame: noise estimated 1e-3 and above) gain most at the
        // scale itself (crops +5 to +9 dB over the degraded image, against +3.5 to +5.5 at a tenth of it);
        // a piecewise-constant image without other noise (the phantom: noise estimated 0) is best near GCV's
        // choice and loses up to 0.8 dB at the scale, so there the floor is a tenth of it.
        const double floor = blend(0.1 * search.scale(), search.scale(), ramp(noise, 1e-5, 1e-3));
        if (r.lambda < floor && smooths > 0) {
          const double raised = blend(r.lambda, floor, smooths);
          r.lambda_from += fmt::format(", raised from {:.3g} to {:.3g}: impulses leave holes", r.lambda, raised);
          r.lambda = raised;
        }
      }
      // The choice is checked on the spectral system's solution (cheap on every path). An implausible result
      // moves lambda up by half decades, then by bisection in log lambda, to about the smallest lambda whose
      // result is plausible: a continuous function of the data again, where a fixed next rule would not be.
      Matrix<double> trial = Matrix<double>::uninitialized(m, n * channels, device);
      const auto judge = [&](double lambda) {
        for (int c = 0; c < channels; ++c) spectral->solve(channel(data, n, c), lambda, channel(trial.view(), n, c));
        v.synchronize(device);
        const Matrix<double> on_host = device.is_cpu() ? Matrix<double>() : trial.to(Device::cpu());
        return implausible(device.is_cpu() ? trial.view() : on_host.view(), host, channels, noise, h);
      };
      if (const std::optional<std::string> why = judge(r.lambda)) {
        const double step = std::sqrt(10.0);
        double rejected = r.lambda, accepted = search.upper();
        for (double next = r.lambda * step; next < search.upper(); next *= step) {
          if (!judge(next)) {
            accepted = next;
            break;
          }
          rejected = next;
        }
        for (int k = 0; k < 4 && accepted < search.upper(); ++k) {
          const double middle = std::sqrt(rejected * accepted);
          (judge(middle) ? rejected : accepted) = middle;
        }
        report.notes.push_back(fmt::format("lambda {:.4g} by {} rejected: {}", r.lambda, r.lambda_from, *why));
        r.lambda_from += fmt::format(", raised from {:.3g} to about the smallest lambda whose result is plausible",
                                     r.lambda);
        r.lambda = accepted;
      }
    }
  }

  // the method
  DeblurPath path = options.path;
  if (path == DeblurPath::Spectral && !spectral->exact())
    throw InvalidArgument(fmt::format(
        "deblur: the spectral path is exact only under a periodic boundary, or a reflexive one with a PSF symmetric "
        "about its centre; here the boundary is {} and the PSF {}symmetric: choose the dense or matrix-free path",
        to_string(options.boundary), psf.symmetric() ? "" : "not "));
  if (path == DeblurPath::Auto)
    path = r.robust ? DeblurPath::MatrixFree
           : spectral->exact() ? DeblurPath::Spectral
           : size <= kDenseAutoLimit ? DeblurPath::Dense
                                     : DeblurPath::MatrixFree;
  report.method = path == DeblurPath::Spectral ? Method::Spectral
                  : path == DeblurPath::Dense  ? Method::Cholesky
                                               : Method::ConjugateGradients;
  r.image = Matrix<double>::uninitialized(m, n * channels, device);
  // out := the solution for `lambda` by `path`; false where conjugate gradients stopped at their limit
  const auto solve = [&](double lambda, double tolerance, MatrixView<double> out) {
    bool converged = true;
    if (path == DeblurPath::Spectral) {
      for (int c = 0; c < channels; ++c) spectral->solve(channel(g.view(), n, c), lambda, channel(out, n, c));
      v.synchronize(device);
    } else if (path == DeblurPath::Dense) {
      // The thesis's path: C = H^T H + lambda L^T L, then Cholesky, one factorisation for every channel. Its
      // images are small (C has size^2 entries), so H^T g is formed on the host by the direct stencil:
      // planning an FFT on the GPU costs more than the whole solve there.
      Matrix<double> rhs = Matrix<double>::uninitialized(size, channels);
      for (int c = 0; c < channels; ++c) {
        const Matrix<double> hg = convolve_adjoint(channel(host, n, c), h, options.boundary);
        std::copy(hg.data(), hg.data() + size, rhs.data() + c * size);
      }
      const Matrix<double> C = family.normal_matrix(model, lambda, device);
      std::optional<Cholesky<double>> chol;
      try {
        chol.emplace(C.view());
      } catch (const NotPositiveDefinite& e) {
        throw NotPositiveDefinite(e.minor(), fmt::format("H^T H + lambda L^T L with lambda = {:g} is singular to working "
                                                         "precision: give a positive lambda, or auto",
                                                         lambda));
      }
      const Matrix<double> x = chol->solve(rhs.to(device).view());  // size x channels: each column one channel
      copy<double>(ConstMatrixView<double>(x.data(), m, n * channels, m, device), out);
    } else {
      // Preconditioned conjugate gradients on (H^T W H + lambda L^T L) f = H^T W g from the spectral solution,
      // W the identity or, robust, 0 at the impulses and 1 elsewhere.
      const std::unique_ptr<kernels::Convolution> H = family.convolution(model, device);
      Matrix<double> b = Matrix<double>::uninitialized(m, n, device), weights, weighted;
      for (int c = 0; c < channels; ++c) {
        const ConstMatrixView<double> gc = channel(g.view(), n, c);
        const MatrixView<double> f = channel(out, n, c);
        spectral->solve(analysed.empty() ? gc : channel(analysed.view(), n, c), lambda, f);
        double mean_weight = 1;
        if (r.robust) {
          Matrix<double> w(m, n), wg(m, n);
          index kept = 0;
          for (index j = 0; j < n; ++j)
            for (index i = 0; i < m; ++i) {
              const bool impulse = impulses.is_impulse[static_cast<std::size_t>(i + (c * n + j) * m)];
              w(i, j) = impulse ? 0.0 : 1.0;
              wg(i, j) = impulse ? 0.0 : host(i, c * n + j);
              kept += !impulse;
            }
          mean_weight = std::max(static_cast<double>(kept) / static_cast<double>(size), 1e-3);
          v.synchronize(device);  // the previous channel's solve may still read the weights
          weights = w.to(device);
          weighted = wg.to(device);
          H->set_weights(weights.view());
          H->apply_transpose(weighted.view(), b.view());
        } else {
          H->apply_transpose(gc, b.view());
        }
        NormalOperator A(*H, lambda);
        SpectralPreconditioner M(*spectral, size, lambda, mean_weight);
        const krylov::Outcome o =
            krylov::cg<double>(A, b.view(), f, tolerance, options.max_iterations, &M, options.progress);
        report.iterations = std::max(report.iterations, o.iterations);
        r.residual = std::max(r.residual, o.residual);
        converged = converged && o.converged;
        if (!o.converged)
          report.notes.push_back(fmt::format("channel {}: conjugate gradients for lambda {:.4g} stopped at their "
                                             "limit, relative residual {:.3g} (tolerance {:.3g})",
                                             c + 1, lambda, o.residual, tolerance));
      }
      H->set_weights({});
    }
    return converged;
  };
  const bool solved = solve(r.lambda, options.tolerance, r.image.view());
  if (path == DeblurPath::MatrixFree) report.stop = solved ? StopReason::Converged : StopReason::IterationLimit;
  {
    const Matrix<double> on_host = device.is_cpu() ? Matrix<double>() : r.image.to(Device::cpu());
    if (const std::optional<std::string> why =
            implausible(device.is_cpu() ? r.image.view() : on_host.view(), host, channels, r.noise_sigma, h))
      report.notes.push_back(fmt::format("the result is implausible: {}{}", *why,
                                         options.lambda >= 0 || options.rule != LambdaRule::Auto
                                             ? "; lambda auto raises lambda until it is not"
                                             : ""));
  }
  report.notes.push_back(fmt::format("lambda {:.4g} by {}; noise estimated {:.3g}", r.lambda, r.lambda_from, r.noise_sigma));
  if (poisson)
    report.notes.push_back(fmt::format("Poisson data ({}), {:.4g} counts per unit of g ({})", r.noise_model_from,
                                       r.photon_peak, options.photon_peak > 0 ? "given" : "estimated"));
  if (total_variation) {
    // from the Tikhonov solution; the weight in the data's units, proportional to the noise seen in g
    report.notes.push_back(fmt::format("total variation from the Tikhonov solution (lambda {:.4g})", r.lambda));
    std::optional<PoissonTerm> term;
    double weight = options.tv_weight;
    double photon_noise = 0;
    if (poisson) {
      const double mean = std::max(photons->mean, std::numeric_limits<double>::min());
      term = PoissonTerm{r.photon_peak, 1 / mean};
      // the photon noise at the mean level, sqrt(mean / peak), and a weight growing as its square root
      // (measured best at peaks 10 to 1000: docs/deblurring-quality.md)
      photon_noise = std::sqrt(mean / r.photon_peak);
      if (weight < 0) weight = kPoissonTvWeight * std::sqrt(photon_noise) * std::sqrt(r.photon_peak / mean);
    }
    const AdmmOutcome o = admm_total_variation(family, model, channels, device, g.view(), weight, r.noise_sigma,
                                               options, r.image.view(), term);
    r.tv_weight = o.weight;
    r.admm_change = o.change;
    r.tv_weight_from = options.tv_weight >= 0 ? "given"
                       : poisson ? fmt::format("{} sqrt(sigma peak / mean) with the photon noise sigma = "
                                               "sqrt(mean / peak) = {:.3g} at the mean level",
                                               kPoissonTvWeight, photon_noise)
                                 : fmt::format("{} times the noise level {:.3g} (the larger of the noise "
                                               "estimated and the Tikhonov residual per pixel)",
                                               kTvWeightPerNoise, o.noise);
    report.method = Method::ADMM;
    report.iterations = o.iterations;
    report.stop = o.converged ? StopReason::Converged : StopReason::IterationLimit;
    report.notes.push_back(fmt::format("total variation weight {:.4g} ({}); ADMM {} iterations, last change {:.3g}, "
                                       "rho {:.3g}",
                                       r.tv_weight, r.tv_weight_from, o.iterations, o.change, o.rho));
  }
  if (nonlocal) {
    // the total-variation result is the pilot; the regularised inverse, sharper and noisier, is what is averaged
    r.nonlocal_lambda = kNonlocalInverseShare * r.lambda;
    r.nonlocal_h = r.noise_sigma > 0 ? r.noise_sigma * noise_gain(*spectral, m, n, r.nonlocal_lambda, device) : 0.0;
    if (r.nonlocal_h > 0) {
      Matrix<double> inverse = Matrix<double>::uninitialized(m, n * channels, device);
      // to a relative residual of 1e-6 at most: the averaging that follows does not see below it (measured the
      // same PSNR to 0.01 dB as 1e-10 on motion blur, where conjugate gradients ran out of iterations for that)
      if (!solve(r.nonlocal_lambda, std::max(options.tolerance, kNonlocalTolerance), inverse.view()))
        report.stop = StopReason::IterationLimit;
      const Matrix<double> pilot = std::move(r.image);
      r.image = Matrix<double>::uninitialized(m, n * channels, device);
      family.nonlocal_means(inverse.view(), pilot.view(), channels,
                            {.patch = kNonlocalPatch, .search = kNonlocalSearch, .h = r.nonlocal_h}, r.image.view());
      // the average of the two estimates, whose errors differ (the averaged inverse's at texture the pilot
      // flattened, the pilot's in flat areas it leaves blocky)
      v.axpy(1.0, pilot.view(), r.image.view());
      v.scal(0.5, r.image.view());
      v.synchronize(device);
      report.notes.push_back(fmt::format("the mean of the total-variation result and the nonlocal means of the inverse "
                                         "with lambda {:.4g} ({} times the Tikhonov one), weighted by the "
                                         "total-variation result's {}x{} patches within {} pixels, similarity scale "
                                         "{:.3g} (the noise in that inverse)",
                                         r.nonlocal_lambda, kNonlocalInverseShare, 2 * kNonlocalPatch + 1,
                                         2 * kNonlocalPatch + 1, kNonlocalSearch, r.nonlocal_h));
    } else {
      report.notes.push_back("no noise seen in g: the total-variation result, with no nonlocal averaging");
    }
  }
  policy::require_finite_result<double>(r.image.view(), "deblur: the recovered image");
  report.seconds = clock.seconds();
  return r;
}

}  // namespace linv::imaging
