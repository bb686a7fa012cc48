// The imaging forward model (include/linv/imaging.hpp): PSFs as MATLAB's fspecial builds them,
// convolution with zero boundaries, the dense system matrix, imnoise's noises, the Shepp-Logan phantom.
#include "linv/imaging.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <complex>
#include <cstring>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <random>
#include <vector>

#include "core/krylov.hpp"
#include "core/stopwatch.hpp"
#include "kernels/backend.hpp"
#include "linv/dense.hpp"
#ifdef LINV_HAVE_FFTW
#include <fftw3.h>
#endif
#include "linv/errors.hpp"

namespace linv::imaging {
namespace {

constexpr double kMatlabEps = std::numeric_limits<double>::epsilon();

// "name:key=value,key=value" into name and a map, each value a number.
struct Spec {
  std::string name;
  std::map<std::string, double> values;
};

Spec parse_spec(std::string_view text, std::string_view what, std::string_view forms) {
  Spec s;
  const auto colon = text.find(':');
  s.name = std::string(text.substr(0, colon));
  if (colon == std::string_view::npos) return s;
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InvalidArgument(fmt::format("{} '{}': '{}' is not key=value; expected {}", what, text, item, forms));
    const std::string key(item.substr(0, eq));
    const std::string_view number = item.substr(eq + 1);
    double v = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(v))
      throw InvalidArgument(fmt::format("{} '{}': '{}' is not a number; expected {}", what, text, number, forms));
    s.values[key] = v;
  }
  return s;
}

// The value of `key` (or `fallback`), refusing keys the form does not take.
double take(Spec& s, const std::string& key, double fallback) {
  const auto it = s.values.find(key);
  if (it == s.values.end()) return fallback;
  const double v = it->second;
  s.values.erase(it);
  return v;
}

void require_used(const Spec& s, std::string_view text, std::string_view what, std::string_view forms) {
  if (!s.values.empty())
    throw InvalidArgument(
        fmt::format("{} '{}': '{}' is not a parameter of {}; expected {}", what, text, s.values.begin()->first, s.name,
                    forms));
}

index whole(double v, std::string_view name, std::string_view text, double least) {
  if (v != std::floor(v) || v < least)
    throw InvalidArgument(fmt::format("PSF '{}': {} must be a whole number of at least {:g}, got {:g}", text, name,
                                      least, v));
  return static_cast<index>(v);
}

constexpr std::string_view kPsfForms =
    "gaussian:size=S,sigma=X | box:size=S | motion:len=L,angle=DEG | sharpen:alpha=A";

Matrix<double> gaussian(index size, double sigma) {
  Matrix<double> h(size, size);
  const double half = (static_cast<double>(size) - 1) / 2;
  double peak = 0;
  for (index q = 0; q < size; ++q)
    for (index p = 0; p < size; ++p) {
      const double x = static_cast<double>(q) - half, y = static_cast<double>(p) - half;
      h(p, q) = std::exp(-(x * x + y * y) / (2 * sigma * sigma));
      peak = std::max(peak, h(p, q));
    }
  double sum = 0;
  for (index k = 0; k < h.size(); ++k) {
    if (h.data()[k] < kMatlabEps * peak) h.data()[k] = 0;
    sum += h.data()[k];
  }
  for (index k = 0; k < h.size(); ++k) h.data()[k] /= sum;
  return h;
}

// fspecial('motion', len, theta), step by step as MATLAB builds it: the distance of each pixel of one
// half plane to the rotated line, unfolded to the full kernel.
Matrix<double> motion(double len, double theta) {
  len = std::max(1.0, len);
  const double half = (len - 1) / 2;
  const double phi = std::fmod(std::fmod(theta, 180.0) + 180.0, 180.0) / 180.0 * std::numbers::pi;
  const double cosphi = std::cos(phi), sinphi = std::sin(phi);
  const double xsign = cosphi > 0 ? 1.0 : (cosphi < 0 ? -1.0 : 0.0);
  const double linewdt = 1;
  const double sx = std::trunc(half * cosphi + linewdt * xsign - len * kMatlabEps);
  const double sy = std::trunc(half * sinphi + linewdt - len * kMatlabEps);
  const index cols = xsign == 0 ? 1 : static_cast<index>(std::abs(sx) / std::abs(xsign)) + 1;
  const index rows = static_cast<index>(sy) + 1;
  Matrix<double> d(rows, cols);
  for (index c = 0; c < cols; ++c)
    for (index r = 0; r < rows; ++r) {
      const double x = static_cast<double>(c) * xsign, y = static_cast<double>(r);
      double dist = y * cosphi - x * sinphi;
      const double rad = std::sqrt(x * x + y * y);
      if (rad >= half && std::abs(dist) <= linewdt) {
        const double x2last = half - std::abs((x + dist * sinphi) / cosphi);
        dist = std::sqrt(dist * dist + x2last * x2last);
      }
      d(r, c) = std::max(0.0, linewdt + kMatlabEps - std::abs(dist));
    }
  // h = rot90(d, 2), then d again in the bottom-right corner from (rows - 1, cols - 1)
  Matrix<double> h(2 * rows - 1, 2 * cols - 1);
  for (index c = 0; c < cols; ++c)
    for (index r = 0; r < rows; ++r) h(r, c) = d(rows - 1 - r, cols - 1 - c);
  for (index c = 0; c < cols; ++c)
    for (index r = 0; r < rows; ++r) h(rows - 1 + r, cols - 1 + c) = d(r, c);
  double sum = 0;
  for (index k = 0; k < h.size(); ++k) sum += h.data()[k];
  for (index k = 0; k < h.size(); ++k) h.data()[k] /= sum + kMatlabEps * len * len;
  if (cosphi > 0) {  // flipud
    Matrix<double> flipped(h.rows(), h.cols());
    for (index c = 0; c < h.cols(); ++c)
      for (index r = 0; r < h.rows(); ++r) flipped(r, c) = h(h.rows() - 1 - r, c);
    return flipped;
  }
  return h;
}

}  // namespace

Psf parse_psf(std::string_view text) {
  Spec s = parse_spec(text, "PSF", kPsfForms);
  Psf psf{Matrix<double>(), std::string(text)};
  if (s.name == "gaussian") {
    const index size = whole(take(s, "size", 3), "size", text, 1);
    const double sigma = take(s, "sigma", 0.5);
    if (!(sigma > 0)) throw InvalidArgument(fmt::format("PSF '{}': sigma must be positive", text));
    psf.kernel = gaussian(size, sigma);
  } else if (s.name == "box") {
    const index size = whole(take(s, "size", 3), "size", text, 1);
    psf.kernel = Matrix<double>(size, size);
    for (index k = 0; k < psf.kernel.size(); ++k) psf.kernel.data()[k] = 1.0 / static_cast<double>(size * size);
  } else if (s.name == "motion") {
    const double len = take(s, "len", 9), angle = take(s, "angle", 0);
    if (!(len >= 1)) throw InvalidArgument(fmt::format("PSF '{}': len must be at least 1", text));
    psf.kernel = motion(len, angle);
  } else if (s.name == "sharpen") {
    const double a = take(s, "alpha", 0.2);
    if (!(a >= 0 && a <= 1)) throw InvalidArgument(fmt::format("PSF '{}': alpha must be in [0, 1]", text));
    psf.kernel = Matrix<double>::from_rows({{-a, a - 1, -a}, {a - 1, a + 5, a - 1}, {-a, a - 1, -a}});
    for (index k = 0; k < 9; ++k) psf.kernel.data()[k] /= a + 1;
  } else {
    throw InvalidArgument(fmt::format("PSF '{}': unknown kind '{}'; expected {}", text, s.name, kPsfForms));
  }
  require_used(s, text, "PSF", kPsfForms);
  return psf;
}

namespace {

// out(i, j) = sum over (p, q) of kernel(p, q) in(i + sign (p - kr / 2), j + sign (q - kc / 2)), inside
// the image: sign -1 is the convolution H, +1 its adjoint H^T (a correlation).
Matrix<double> stencil(ConstMatrixView<double> in, ConstMatrixView<double> kernel, index sign) {
  const index m = in.rows(), n = in.cols(), kr = kernel.rows(), kc = kernel.cols(), cr = kr / 2, cc = kc / 2;
  Matrix<double> out(m, n);
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < m; ++i) {
      double s = 0;
      for (index q = 0; q < kc; ++q) {
        const index jj = j + sign * (q - cc);
        if (jj < 0 || jj >= n) continue;
        for (index p = 0; p < kr; ++p) {
          const index ii = i + sign * (p - cr);
          if (ii >= 0 && ii < m) s += kernel(p, q) * in(ii, jj);
        }
      }
      out(i, j) = s;
    }
  return out;
}

}  // namespace

Matrix<double> convolve(ConstMatrixView<double> f, ConstMatrixView<double> kernel) { return stencil(f, kernel, -1); }

Matrix<double> convolve_adjoint(ConstMatrixView<double> g, ConstMatrixView<double> kernel) {
  return stencil(g, kernel, +1);
}

// ---- Convolution: FFTs of the zero-padded image ----------------------------------------------------
//
// H = S C E: E pads f (height x width) with zeros to P x Q = (height + kr - 1) x (width + kc - 1), C is
// the circular convolution there with the kernel at the origin (linear, thanks to the padding), S keeps
// rows [kr / 2, kr / 2 + height) and columns [kc / 2, kc / 2 + width). So H^T = E^T C^T S^T: place g at
// that offset, multiply by the conjugate spectrum, keep the top-left height x width block. Images are
// column-major, which FFTW's row-major plans see as the transpose: the same 2-D transform.
struct Convolution::Plan {
  index height, width, kr, kc;
  Matrix<double> kernel;
#ifdef LINV_HAVE_FFTW
  index P = 0, Q = 0, spectrum = 0;  // padded size; complex entries of a real transform (Q (P / 2 + 1))
  double* real = nullptr;
  fftw_complex* freq = nullptr;
  fftw_complex* kernel_freq = nullptr;
  fftw_plan forward = nullptr, backward = nullptr;

  // The circular step on the padded buffer: image placed at (offset_r, offset_c) in `real` (zeros
  // elsewhere), transformed, times the kernel's spectrum (its conjugate for the adjoint), transformed
  // back and scaled; the result read from `real` at (read_r, read_c).
  Matrix<double> circular(ConstMatrixView<double> image, index offset_r, index offset_c, bool conjugate, index read_r,
                          index read_c) const {
    std::fill(real, real + P * Q, 0.0);
    for (index j = 0; j < width; ++j)
      for (index i = 0; i < height; ++i) real[(i + offset_r) + (j + offset_c) * P] = image(i, j);
    fftw_execute(forward);
    const double sign = conjugate ? -1.0 : 1.0;
    for (index k = 0; k < spectrum; ++k) {
      const double a = freq[k][0], b = freq[k][1], c = kernel_freq[k][0], d = sign * kernel_freq[k][1];
      freq[k][0] = a * c - b * d;
      freq[k][1] = a * d + b * c;
    }
    fftw_execute(backward);
    const double scale = 1.0 / static_cast<double>(P * Q);
    Matrix<double> out(height, width);
    for (index j = 0; j < width; ++j)
      for (index i = 0; i < height; ++i) out(i, j) = real[(i + read_r) + (j + read_c) * P] * scale;
    return out;
  }
#endif
};

Convolution::Convolution(index height, index width, ConstMatrixView<double> kernel)
    : plan_(std::make_unique<Plan>(Plan{height, width, kernel.rows(), kernel.cols(), Matrix<double>::copy_of(kernel)})) {
#ifdef LINV_HAVE_FFTW
  Plan& p = *plan_;
  p.P = height + p.kr - 1;
  p.Q = width + p.kc - 1;
  p.spectrum = p.Q * (p.P / 2 + 1);
  p.real = fftw_alloc_real(static_cast<std::size_t>(p.P * p.Q));
  p.freq = fftw_alloc_complex(static_cast<std::size_t>(p.spectrum));
  p.kernel_freq = fftw_alloc_complex(static_cast<std::size_t>(p.spectrum));
  if (!p.real || !p.freq || !p.kernel_freq) throw std::bad_alloc();
  p.forward = fftw_plan_dft_r2c_2d(static_cast<int>(p.Q), static_cast<int>(p.P), p.real, p.freq, FFTW_ESTIMATE);
  p.backward = fftw_plan_dft_c2r_2d(static_cast<int>(p.Q), static_cast<int>(p.P), p.freq, p.real, FFTW_ESTIMATE);
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
    fftw_destroy_plan(plan_->forward);
    fftw_destroy_plan(plan_->backward);
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

Matrix<double> Convolution::apply(ConstMatrixView<double> f) const {
  const Plan& p = *plan_;
#ifdef LINV_HAVE_FFTW
  return p.circular(f, 0, 0, /*conjugate=*/false, p.kr / 2, p.kc / 2);  // S C E f
#else
  return convolve(f, p.kernel.view());
#endif
}

index Convolution::height() const noexcept { return plan_->height; }
index Convolution::width() const noexcept { return plan_->width; }

Matrix<double> Convolution::apply_adjoint(ConstMatrixView<double> g) const {
  const Plan& p = *plan_;
#ifdef LINV_HAVE_FFTW
  return p.circular(g, p.kr / 2, p.kc / 2, /*conjugate=*/true, 0, 0);  // E^T C^T S^T g
#else
  return convolve_adjoint(g, p.kernel.view());
#endif
}

Matrix<double> system_matrix(index height, index width, ConstMatrixView<double> kernel) {
  const index size = height * width, kr = kernel.rows(), kc = kernel.cols(), cr = kr / 2, cc = kc / 2;
  Matrix<double> H(size, size);
  for (index j = 0; j < width; ++j)
    for (index i = 0; i < height; ++i)
      for (index q = 0; q < kc; ++q) {
        const index jj = j - q + cc;
        if (jj < 0 || jj >= width) continue;
        for (index p = 0; p < kr; ++p) {
          const index ii = i - p + cr;
          if (ii >= 0 && ii < height) H(i + j * height, ii + jj * height) += kernel(p, q);
        }
      }
  return H;
}

Matrix<double> normal_matrix(index height, index width, ConstMatrixView<double> kernel, double lambda,
                             Device device) {
  require_host(kernel.device(), "normal_matrix's kernel");
  return kernels::imaging(device).normal_matrix(height, width, kernel, lambda, device);
}

Matrix<double> add_noise(ConstMatrixView<double> image, std::string_view text, std::uint64_t seed) {
  constexpr std::string_view forms = "gaussian:var=V[,mean=M] | saltpepper:density=D";
  Spec s = parse_spec(text, "noise", forms);
  Matrix<double> g = Matrix<double>::copy_of(image);
  std::mt19937_64 rng(seed);
  if (s.name == "gaussian") {
    const double var = take(s, "var", 0.01), mean = take(s, "mean", 0);
    if (!(var >= 0)) throw InvalidArgument(fmt::format("noise '{}': var must be non-negative", text));
    require_used(s, text, "noise", forms);
    std::normal_distribution<double> normal(mean, std::sqrt(var));
    for (index j = 0; j < g.cols(); ++j)
      for (index i = 0; i < g.rows(); ++i) g(i, j) = std::clamp(g(i, j) + normal(rng), 0.0, 1.0);
  } else if (s.name == "saltpepper") {
    const double density = take(s, "density", 0.05);
    if (!(density >= 0 && density <= 1)) throw InvalidArgument(fmt::format("noise '{}': density must be in [0, 1]", text));
    require_used(s, text, "noise", forms);
    std::uniform_real_distribution<double> uniform(0, 1);
    for (index j = 0; j < g.cols(); ++j)
      for (index i = 0; i < g.rows(); ++i) {
        const double u = uniform(rng);
        if (u < density / 2)
          g(i, j) = 0;
        else if (u < density)
          g(i, j) = 1;
      }
  } else {
    throw InvalidArgument(fmt::format("noise '{}': unknown kind '{}'; expected {}", text, s.name, forms));
  }
  return g;
}

Matrix<double> shepp_logan(index n) {
  struct Ellipse {
    double intensity, a, b, x0, y0, phi_degrees;
  };
  // MATLAB's 'Modified Shepp-Logan' (Toft's contrast-improved version)
  static constexpr Ellipse kEllipses[] = {
      {1.0, .69, .92, 0, 0, 0},          {-.8, .6624, .8740, 0, -.0184, 0}, {-.2, .1100, .3100, .22, 0, -18},
      {-.2, .1600, .4100, -.22, 0, 18},  {.1, .2100, .2500, 0, .35, 0},     {.1, .0460, .0460, 0, .1, 0},
      {.1, .0460, .0460, 0, -.1, 0},     {.1, .0460, .0230, -.08, -.605, 0}, {.1, .0230, .0230, 0, -.606, 0},
      {.1, .0230, .0460, .06, -.605, 0}};
  Matrix<double> p(n, n);
  const double half = (static_cast<double>(n) - 1) / 2;
  for (index c = 0; c < n; ++c)
    for (index r = 0; r < n; ++r) {
      const double x = n > 1 ? (static_cast<double>(c) - half) / half : 0;
      const double y = n > 1 ? (half - static_cast<double>(r)) / half : 0;  // y up, row 0 at the top
      double v = 0;
      for (const Ellipse& e : kEllipses) {
        const double phi = e.phi_degrees * std::numbers::pi / 180, cp = std::cos(phi), sp = std::sin(phi);
        const double dx = x - e.x0, dy = y - e.y0;
        const double u = dx * cp + dy * sp, w = dy * cp - dx * sp;
        if (u * u / (e.a * e.a) + w * w / (e.b * e.b) <= 1) v += e.intensity;
      }
      p(r, c) = std::clamp(v, 0.0, 1.0);
    }
  return p;
}

namespace {

// lambda minimising Golub, Heath and Wahba's GCV(lambda) = n ||g - H f(lambda)||^2 / trace(I - A(lambda))^2,
// with H approximated by its periodic (block circulant) counterpart, which the 2-D DFT diagonalises:
// both terms become sums over frequencies of |kernel eigenvalue|^2 and |DFT of g|^2. The boundaries
// differ from H's zero boundaries, which matters little to the choice of lambda and makes it cheap at
// any size. A log-spaced scan, then golden-section refinement around the best point.
double gcv_lambda(ConstMatrixView<double> g, ConstMatrixView<double> kernel) {
  const index m = g.rows(), n = g.cols(), kr = kernel.rows(), kc = kernel.cols(), cr = kr / 2, cc = kc / 2;
  std::vector<double> power(static_cast<std::size_t>(m * n)), eigen(static_cast<std::size_t>(m * n));
#ifdef LINV_HAVE_FFTW
  {
    // |DFT of g|^2 and |DFT of the kernel placed circularly around the origin|^2, by FFTW
    fftw_complex* buffer = fftw_alloc_complex(static_cast<std::size_t>(m * n));
    if (!buffer) throw std::bad_alloc();
    fftw_plan plan = fftw_plan_dft_2d(static_cast<int>(n), static_cast<int>(m), buffer, buffer, FFTW_FORWARD,
                                      FFTW_ESTIMATE);
    for (index k = 0; k < m * n; ++k) buffer[k][0] = g.data()[k % m + (k / m) * g.ld()], buffer[k][1] = 0;
    fftw_execute(plan);
    for (index k = 0; k < m * n; ++k) power[static_cast<std::size_t>(k)] = buffer[k][0] * buffer[k][0] + buffer[k][1] * buffer[k][1];
    for (index k = 0; k < m * n; ++k) buffer[k][0] = buffer[k][1] = 0;
    for (index q = 0; q < kc; ++q)
      for (index p = 0; p < kr; ++p) {
        const index a = ((p - cr) % m + m) % m, b = ((q - cc) % n + n) % n;
        buffer[a + b * m][0] += kernel(p, q);
      }
    fftw_execute(plan);
    for (index k = 0; k < m * n; ++k) eigen[static_cast<std::size_t>(k)] = buffer[k][0] * buffer[k][0] + buffer[k][1] * buffer[k][1];
    fftw_destroy_plan(plan);
    fftw_free(buffer);
  }
#else
  // |DFT of g|^2, by a DFT down the columns then along the rows (O(m n (m + n)) without FFTW)
  using complex = std::complex<double>;
  auto twiddles = [](index size) {
    std::vector<complex> w(static_cast<std::size_t>(size));
    for (index k = 0; k < size; ++k) w[static_cast<std::size_t>(k)] = std::polar(1.0, -2 * std::numbers::pi * k / size);
    return w;
  };
  const std::vector<complex> wm = twiddles(m), wn = twiddles(n);
  std::vector<complex> cols(static_cast<std::size_t>(m * n));
  for (index j = 0; j < n; ++j)
    for (index u = 0; u < m; ++u) {
      complex t = 0;
      for (index i = 0; i < m; ++i) t += g(i, j) * wm[static_cast<std::size_t>((u * i) % m)];
      cols[static_cast<std::size_t>(u + j * m)] = t;
    }
  for (index v = 0; v < n; ++v)
    for (index u = 0; u < m; ++u) {
      complex t = 0;
      for (index j = 0; j < n; ++j) t += cols[static_cast<std::size_t>(u + j * m)] * wn[static_cast<std::size_t>((v * j) % n)];
      power[static_cast<std::size_t>(u + v * m)] = std::norm(t);
      complex lambda = 0;  // the periodic operator's eigenvalue at (u, v)
      for (index q = 0; q < kc; ++q)
        for (index p = 0; p < kr; ++p) {
          const index a = ((u * (p - cr)) % m + m) % m, b = ((v * (q - cc)) % n + n) % n;
          lambda += kernel(p, q) * wm[static_cast<std::size_t>(a)] * wn[static_cast<std::size_t>(b)];
        }
      eigen[static_cast<std::size_t>(u + v * m)] = std::norm(lambda);
    }
#endif
  const double size = static_cast<double>(m * n);
  auto gcv = [&](double lambda) {
    double residual = 0, trace = 0;
    for (std::size_t k = 0; k < power.size(); ++k) {
      const double filter = lambda / (eigen[k] + lambda);  // 1 - the Tikhonov filter factor
      residual += filter * filter * power[k];
      trace += filter;
    }
    return size * (residual / size) / (trace * trace);
  };
  const double top = *std::max_element(eigen.begin(), eigen.end());
  const double lo = std::log10(top) - 16, hi = std::log10(top) + 1;
  double best = lo, best_value = gcv(std::pow(10.0, lo));
  constexpr int kScan = 200;
  for (int k = 1; k <= kScan; ++k) {
    const double x = lo + (hi - lo) * k / kScan, v = gcv(std::pow(10.0, x));
    if (v < best_value) best = x, best_value = v;
  }
  double a = best - (hi - lo) / kScan, b = best + (hi - lo) / kScan;
  const double phi = (std::sqrt(5.0) - 1) / 2;
  for (int k = 0; k < 60; ++k) {
    const double c = b - phi * (b - a), d = a + phi * (b - a);
    if (gcv(std::pow(10.0, c)) < gcv(std::pow(10.0, d)))
      b = d;
    else
      a = c;
  }
  return std::pow(10.0, (a + b) / 2);
}

}  // namespace

DeblurResult deblur(ConstMatrixView<double> g, const Psf& psf, const DeblurOptions& options) {
  const Stopwatch clock;
  const index m = g.rows(), n = g.cols(), size = m * n;
  const Device device = g.device();
  DeblurResult r;
  const bool dense = options.path == DeblurPath::Dense || (options.path == DeblurPath::Auto && size <= kDenseAutoLimit);
  Report& report = r.report;
  report.operation = Operation::Deblur;
  report.method = dense ? Method::Cholesky : Method::ConjugateGradients;
  report.device = device;
  report.precision = "float64";
  const ConstMatrixView<double> h = psf.kernel.view();
  r.lambda = options.lambda >= 0 ? options.lambda : gcv_lambda(Matrix<double>::copy_of(g).to(Device::cpu()).view(), h);
  r.lambda_from = options.lambda >= 0 ? "given" : "generalised cross-validation";
  const kernels::Imaging& kernels = kernels::imaging(device);
  if (dense) {
    // The thesis's path: C = H^T H + lambda I, then Cholesky. Its images are small (C has size^2 entries), so
    // H^T g is formed on the host by the direct stencil: planning an FFT on the GPU costs more than the
    // whole solve there (3.5 ms against 3.4 ms at 64 x 64 on an H100).
    const Matrix<double> hg = convolve_adjoint(Matrix<double>::copy_of(g).to(Device::cpu()).view(), h).to(device);
    const Matrix<double> C = kernels.normal_matrix(m, n, h, r.lambda, device);
    std::optional<Cholesky<double>> chol;
    try {
      chol.emplace(C.view());
    } catch (const NotPositiveDefinite& e) {
      throw NotPositiveDefinite(e.minor(), fmt::format("H^T H + lambda I with lambda = {:g} is singular to working "
                                                       "precision: give a positive --lambda, or auto",
                                                       r.lambda));
    }
    const Matrix<double> x = chol->solve(ConstMatrixView<double>(hg.data(), size, 1, size, device));
    r.image = Matrix<double>::uninitialized(m, n, device);
    copy<double>(ConstMatrixView<double>(x.data(), m, n, m, device), r.image.view());
  } else {
    // Conjugate gradients on (H^T H + lambda I) f = H^T g, from f = 0, H applied by the backend's convolution.
    const std::unique_ptr<kernels::Convolution> H = kernels.convolution(m, n, h, device);
    Matrix<double> hg = Matrix<double>::uninitialized(m, n, device);  // H^T g
    H->apply_transpose(g, hg.view());
    kernels::vectors<double>(device).synchronize(device);
    class Normal final : public kernels::LinearOperator<double> {
     public:
      Normal(kernels::Convolution& H, double lambda) : H_(H), lambda_(lambda) {}
      index rows() const override { return H_.cols(); }
      index cols() const override { return H_.cols(); }
      void apply(ConstMatrixView<double> x, MatrixView<double> y) override { H_.normal(x, lambda_, y); }
      void apply_transpose(ConstMatrixView<double> x, MatrixView<double> y) override { H_.normal(x, lambda_, y); }

     private:
      kernels::Convolution& H_;
      double lambda_;
    } normal(*H, r.lambda);
    r.image = Matrix<double>(m, n, device);
    const krylov::Outcome cg = krylov::cg<double>(normal, hg.view(), r.image.view(), options.tolerance,
                                                  options.max_iterations);
    report.iterations = cg.iterations;
    report.stop = cg.converged ? StopReason::Converged : StopReason::IterationLimit;
    report.notes.push_back(fmt::format("relative residual of the normal equations {:.3g} (tolerance {:.3g})",
                                       cg.residual, options.tolerance));
  }
  report.seconds = clock.seconds();
  return r;
}

double mse(ConstMatrixView<double> image, ConstMatrixView<double> truth) {
  if (image.rows() != truth.rows() || image.cols() != truth.cols())
    throw ShapeMismatch("mse: the image and the truth", image.rows(), image.cols(), truth.rows(), truth.cols());
  double s = 0;
  for (index j = 0; j < image.cols(); ++j)
    for (index i = 0; i < image.rows(); ++i) s += (image(i, j) - truth(i, j)) * (image(i, j) - truth(i, j));
  return image.empty() ? 0.0 : s / static_cast<double>(image.rows() * image.cols());
}

double psnr(ConstMatrixView<double> image, ConstMatrixView<double> truth) {
  const double e = mse(image, truth);
  return e > 0 ? 10 * std::log10(1.0 / e) : std::numeric_limits<double>::infinity();
}

}  // namespace linv::imaging
