// The imaging forward model (include/linv/imaging.hpp): PSFs as MATLAB's fspecial builds them, imnoise's
// noises, the Shepp-Logan phantom, and the measures of a result. The blur itself is src/imaging/blur.cpp's,
// deblurring src/imaging/deblur.cpp's.
#include "linv/imaging.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <random>
#include <string>

#include "common/names.hpp"
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
    "gaussian:size=S,sigma=X | box:size=S | disk:radius=R | motion:len=L,angle=DEG | sharpen:alpha=A";

Matrix<double> gaussian(index size, double sigma) {
  Matrix<double> h(size, size);
  const double half = (static_cast<double>(size) - 1) / 2;
  double peak = 0;
  for (index q = 0; q < size; ++q)
    for (index p = 0; p < size; ++p) {
      const double x = static_cast<double>(q) - half, y = static_cast<double>(p) - half;
      // a sigma whose square underflows makes 0 / 0 of the centre: the limit there is 1 (a point)
      const double r2 = x * x + y * y;
      h(p, q) = r2 == 0 ? 1.0 : std::exp(-r2 / (2 * sigma * sigma));
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


// fspecial('disk', radius), as MATLAB computes it: each pixel of the (2 ceil(r - 0.5) + 1)^2 grid weighted
// by the area of the pixel inside the circle (the arc through a boundary pixel integrated exactly), then
// normalised to sum 1.
Matrix<double> disk(double rad) {
  const index crad = static_cast<index>(std::ceil(rad - 0.5)), size = 2 * crad + 1;
  const double r2 = rad * rad;
  Matrix<double> s(size, size);
  for (index c = 0; c < size; ++c)
    for (index r = 0; r < size; ++r) {
      const double x = std::abs(static_cast<double>(c - crad)), y = std::abs(static_cast<double>(r - crad));
      const double maxxy = std::max(x, y), minxy = std::min(x, y);
      const double m1 = r2 < (maxxy + 0.5) * (maxxy + 0.5) + (minxy - 0.5) * (minxy - 0.5)
                            ? minxy - 0.5
                            : std::sqrt(std::max(0.0, r2 - (maxxy + 0.5) * (maxxy + 0.5)));
      const double m2 = r2 > (maxxy - 0.5) * (maxxy - 0.5) + (minxy + 0.5) * (minxy + 0.5)
                            ? minxy + 0.5
                            : std::sqrt(std::max(0.0, r2 - (maxxy - 0.5) * (maxxy - 0.5)));
      const bool crossed = (r2 < (maxxy + 0.5) * (maxxy + 0.5) + (minxy + 0.5) * (minxy + 0.5) &&
                            r2 > (maxxy - 0.5) * (maxxy - 0.5) + (minxy - 0.5) * (minxy - 0.5)) ||
                           (minxy == 0 && maxxy - 0.5 < rad && maxxy + 0.5 >= rad);
      double v = 0;
      if (crossed) {
        const double a2 = std::asin(std::clamp(m2 / rad, -1.0, 1.0)), a1 = std::asin(std::clamp(m1 / rad, -1.0, 1.0));
        v = r2 * (0.5 * (a2 - a1) + 0.25 * (std::sin(2 * a2) - std::sin(2 * a1))) - (maxxy - 0.5) * (m2 - m1) +
            (m1 - minxy + 0.5);
      }
      if ((maxxy + 0.5) * (maxxy + 0.5) + (minxy + 0.5) * (minxy + 0.5) < r2) v += 1;
      s(r, c) = v;
    }
  s(crad, crad) = std::min(std::numbers::pi * r2, std::numbers::pi / 2);
  if (crad > 0 && rad > static_cast<double>(crad) - 0.5 && r2 < (crad - 0.5) * (crad - 0.5) + 0.25) {
    const double m1 = std::sqrt(r2 - (crad - 0.5) * (crad - 0.5)), m1n = m1 / rad;
    const double sg0 = 2 * (r2 * (0.5 * std::asin(m1n) + 0.25 * std::sin(2 * std::asin(m1n))) - m1 * (crad - 0.5));
    s(2 * crad, crad) = s(crad, 2 * crad) = s(crad, 0) = s(0, crad) = sg0;
    s(crad - 1, crad) -= sg0;
    s(crad, crad - 1) -= sg0;
    s(crad, crad + 1) -= sg0;
    s(crad + 1, crad) -= sg0;
  }
  s(crad, crad) = std::min(s(crad, crad), 1.0);
  double sum = 0;
  for (index k = 0; k < s.size(); ++k) sum += s.data()[k];
  for (index k = 0; k < s.size(); ++k) s.data()[k] /= sum;
  return s;
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
  } else if (s.name == "disk") {
    const double radius = take(s, "radius", 5);
    if (!(radius > 0)) throw InvalidArgument(fmt::format("PSF '{}': radius must be positive", text));
    psf.kernel = disk(radius);
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

bool Psf::symmetric() const {
  const index kr = kernel.rows(), kc = kernel.cols(), cr = kr / 2, cc = kc / 2;
  auto at = [&](index p, index q) { return p >= 0 && p < kr && q >= 0 && q < kc ? kernel(p, q) : 0.0; };
  double largest = 0;
  for (index k = 0; k < kernel.size(); ++k) largest = std::max(largest, std::abs(kernel.data()[k]));
  const double tolerance = 64 * std::numeric_limits<double>::epsilon() * largest;  // fspecial's rounding
  for (index q = -cc - 1; q <= kc; ++q)
    for (index p = -cr - 1; p <= kr; ++p)
      if (std::abs(at(p, q) - at(2 * cr - p, q)) > tolerance || std::abs(at(p, q) - at(p, 2 * cc - q)) > tolerance)
        return false;
  return true;
}

Psf psf_from(ConstMatrixView<double> kernel, std::string name) {
  require_host(kernel.device(), "psf_from's kernel");
  if (kernel.empty()) throw InvalidArgument(fmt::format("PSF '{}' is empty", name));
  double sum = 0, magnitudes = 0, largest = 0;
  for (index q = 0; q < kernel.cols(); ++q)
    for (index p = 0; p < kernel.rows(); ++p) {
      if (!std::isfinite(kernel(p, q))) throw NonFiniteInput(fmt::format("PSF {}", name), p, q, kernel(p, q));
      largest = std::max(largest, std::abs(kernel(p, q)));
    }
  // summed at the largest entry's scale, so that a kernel of huge or tiny entries neither over- nor underflows
  const double unit = largest > 0 ? largest : 1;
  for (index q = 0; q < kernel.cols(); ++q)
    for (index p = 0; p < kernel.rows(); ++p) {
      sum += kernel(p, q) / unit;
      magnitudes += std::abs(kernel(p, q)) / unit;
    }
  if (!(sum > kPsfLeastSum * magnitudes))
    throw InvalidArgument(fmt::format(
        "PSF '{}' sums to {:.3g} while its entries' magnitudes sum to {:.3g}: a blur keeps the image's brightness, "
        "so its entries are mostly positive; this is a difference filter (its sum at most {:g} of the magnitudes' "
        "sum), which scaling to sum 1 would amplify {:.3g}-fold",
        name, sum * unit, magnitudes * unit, kPsfLeastSum, magnitudes / std::max(std::abs(sum), 1e-300)));
  sum *= unit;
  Psf psf{Matrix<double>::copy_of(kernel), std::move(name), sum};
  if (sum != 1)
    for (index k = 0; k < psf.kernel.size(); ++k) psf.kernel.data()[k] /= sum;
  return psf;
}

std::string_view to_string(Boundary b) {
  switch (b) {
    case Boundary::Zero: return "zero";
    case Boundary::Reflexive: return "reflexive";
    case Boundary::Periodic: return "periodic";
  }
  return "?";
}

Boundary parse_boundary(std::string_view name) {
  return parse_name(name, "boundary", {Boundary::Zero, Boundary::Reflexive, Boundary::Periodic});
}

std::string_view to_string(Regularizer r) {
  switch (r) {
    case Regularizer::Identity: return "identity";
    case Regularizer::Gradient: return "gradient";
    case Regularizer::Laplacian: return "laplacian";
  }
  return "?";
}

Regularizer parse_regularizer(std::string_view name) {
  return parse_name(name, "regularizer", {Regularizer::Identity, Regularizer::Gradient, Regularizer::Laplacian});
}

std::string_view to_string(LambdaRule r) {
  switch (r) {
    case LambdaRule::Auto: return "auto";
    case LambdaRule::GCV: return "gcv";
    case LambdaRule::Discrepancy: return "discrepancy";
  }
  return "?";
}

LambdaRule parse_lambda_rule(std::string_view name) {
  return parse_name(name, "lambda rule", {LambdaRule::Auto, LambdaRule::GCV, LambdaRule::Discrepancy});
}

std::string_view to_string(Robust r) {
  switch (r) {
    case Robust::Auto: return "auto";
    case Robust::On: return "on";
    case Robust::Off: return "off";
  }
  return "?";
}

Robust parse_robust(std::string_view name) {
  return parse_name(name, "robust setting", {Robust::Auto, Robust::On, Robust::Off});
}

std::string_view to_string(Prior p) {
  switch (p) {
    case Prior::Auto: return "auto";
    case Prior::Tikhonov: return "tikhonov";
    case Prior::TotalVariation: return "tv";
    case Prior::Nonlocal: return "nonlocal";
  }
  return "?";
}

Prior parse_prior(std::string_view name) {
  return parse_name(name, "prior", {Prior::Auto, Prior::Tikhonov, Prior::TotalVariation, Prior::Nonlocal});
}

std::string_view to_string(NoiseModel m) {
  switch (m) {
    case NoiseModel::Auto: return "auto";
    case NoiseModel::Gaussian: return "gaussian";
    case NoiseModel::Poisson: return "poisson";
  }
  return "?";
}

NoiseModel parse_noise_model(std::string_view name) {
  return parse_name(name, "noise model", {NoiseModel::Auto, NoiseModel::Gaussian, NoiseModel::Poisson});
}

std::string_view to_string(DeblurPath p) {
  switch (p) {
    case DeblurPath::Auto: return "auto";
    case DeblurPath::Spectral: return "spectral";
    case DeblurPath::Dense: return "dense";
    case DeblurPath::MatrixFree: return "matrix-free";
  }
  return "?";
}

DeblurPath parse_deblur_path(std::string_view name) {
  return parse_name(name, "deblurring path",
                    {DeblurPath::Auto, DeblurPath::Spectral, DeblurPath::Dense, DeblurPath::MatrixFree});
}

void require_finite_image(ConstMatrixView<double> image, int channels, const std::string& name) {
  const index width = channels > 0 ? image.cols() / channels : image.cols();
  for (index j = 0; j < image.cols(); ++j)
    for (index i = 0; i < image.rows(); ++i)
      if (!std::isfinite(image(i, j)))
        throw NonFiniteInput(name,
                             channels > 1 ? fmt::format("pixel (row {}, column {}) of channel {}", i + 1,
                                                        j % width + 1, j / width + 1)
                                          : fmt::format("pixel (row {}, column {})", i + 1, j + 1),
                             image(i, j));
}

Matrix<double> add_noise(ConstMatrixView<double> image, std::string_view text, std::uint64_t seed) {
  constexpr std::string_view forms = "gaussian:var=V[,mean=M] | saltpepper:density=D | poisson[:peak=P]";
  Spec s = parse_spec(text, "noise", forms);
  require_finite_image(image, 1, "the image");
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
  } else if (s.name == "poisson") {
    const double peak = take(s, "peak", 255);
    if (!(peak > 0)) throw InvalidArgument(fmt::format("noise '{}': peak must be positive", text));
    require_used(s, text, "noise", forms);
    // Past 2^50 counts a Poisson variate is its normal approximation to double precision (skewness
    // 1 / sqrt(mean) < 3e-8), and the exact sampler needs counts a long long can hold: above 9.2e18 it
    // never returned.
    constexpr double kNormalFrom = 0x1p50;
    std::normal_distribution<double> standard(0.0, 1.0);
    for (index j = 0; j < g.cols(); ++j)
      for (index i = 0; i < g.rows(); ++i) {
        const double mean = std::max(0.0, g(i, j)) * peak;
        double count = 0;
        if (mean < kNormalFrom) {
          std::poisson_distribution<long long> counts(mean);
          count = static_cast<double>(counts(rng));
        } else {
          count = mean + std::sqrt(mean) * standard(rng);
        }
        g(i, j) = std::clamp(count / peak, 0.0, 1.0);
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
