// linv degrade / deblur: the deblurring problem g = H f + n, forward (on an image or the Shepp-Logan
// phantom made by code) and back (regularised inversion).
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <memory>

#include "common.hpp"

namespace linv::cli {
namespace {

struct DegradeArgs {
  std::string input, output, psf = "gaussian:size=5,sigma=1", noise, truth, boundary = "reflexive";
  index crop = 0;
  std::uint64_t seed = 1;
  int bits = 16;
  bool quiet = false;
};

// An image file (every channel), or "phantom:N" for the N x N modified Shepp-Logan phantom.
io::Image load_image(const std::string& spec) {
  constexpr std::string_view prefix = "phantom:";
  if (spec.rfind(prefix, 0) == 0) {
    const std::string_view size = std::string_view(spec).substr(prefix.size());
    long long n = 0;
    const auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), n);
    if (ec != std::errc() || end != size.data() + size.size() || n < 1 || n > 65536)
      throw InvalidArgument(fmt::format("'{}': expected phantom:N with N from 1 to 65536", spec));
    return {imaging::shepp_logan(n), 1};
  }
  return io::read_image_channels(spec);
}

// Where a PSF is centred and how a file's was scaled, in the report and for a file on stderr (unless -q):
// a measured kernel's centre is a convention (the middle pixel; for an even size the one after the middle)
// that a user must match.
void psf_report(const imaging::Psf& psf, bool from_file, nlohmann::json& report) {
  const index rows = psf.kernel.rows(), cols = psf.kernel.cols();
  report["psf_size"] = {rows, cols};
  report["psf_centre"] = {rows / 2 + 1, cols / 2 + 1};  // 1-based row and column
  if (from_file) report["psf_scaled_by"] = psf.scaled_by;
}
void say_psf(const imaging::Psf& psf, bool from_file, bool quiet) {
  const index rows = psf.kernel.rows(), cols = psf.kernel.cols();
  if (from_file && !quiet)
    std::fprintf(stderr, "linv: PSF %s: %lldx%lld, centred at row %lld, column %lld%s; scaled to sum 1 (it summed to "
                         "%.6g)\n",
                 psf.spec.c_str(), static_cast<long long>(rows), static_cast<long long>(cols),
                 static_cast<long long>(rows / 2 + 1), static_cast<long long>(cols / 2 + 1),
                 rows % 2 == 0 || cols % 2 == 0 ? " (an even size: the pixel after the middle)" : "", psf.scaled_by);
}

// Whether a --psf names a matrix file (.npy, .mtx, .mat[:name]); a picture of a point is the other kind of file.
bool is_psf_matrix(const std::string& spec) {
  return spec.ends_with(".npy") || spec.ends_with(".mtx") || spec.ends_with(".mat") ||
         spec.find(".mat:") != std::string::npos;
}

// Whether a --psf names a file rather than a built-in kind.
bool is_psf_file(const std::string& spec) {
  for (std::string_view ext : {".png", ".pgm", ".tif", ".tiff", ".jpg", ".jpeg"})
    if (spec.ends_with(ext)) return true;
  return is_psf_matrix(spec);
}

// A PSF spec (gaussian:..., disk:...) or a file holding the kernel: a matrix, or a picture of a point.
imaging::Psf load_psf(const std::string& spec) {
  if (!is_psf_file(spec)) return imaging::parse_psf(spec);
  const Matrix<double> k = is_psf_matrix(spec) ? io::convert<double>(io::read_matrix(spec), false) : io::read_image(spec);
  return imaging::psf_from(k.view(), spec);
}

// The colour channels of an image (alpha, which no camera blurs, is left aside) as one h x (w * channels)
// matrix, and the image put back together around a processed one.
int colour_channels(const io::Image& image) { return image.has_alpha() ? image.channels - 1 : image.channels; }
Matrix<double> colour_of(const io::Image& image) {
  return Matrix<double>::copy_of(image.pixels.block(0, 0, image.height(), image.width() * colour_channels(image)));
}
io::Image with_colour(const io::Image& original, ConstMatrixView<double> colour) {
  io::Image out{Matrix<double>::copy_of(original.pixels.view()), original.channels};
  copy<double>(colour, out.pixels.block(0, 0, colour.rows(), colour.cols()));
  return out;
}
// The block of an image `crop` pixels in from every edge, every channel.
io::Image cropped(const io::Image& image, index crop) {
  const index h = image.height() - 2 * crop, w = image.width() - 2 * crop;
  io::Image out{Matrix<double>(h, w * image.channels), image.channels};
  for (int c = 0; c < image.channels; ++c)
    copy<double>(image.channel(c).block(crop, crop, h, w), out.channel(c));
  return out;
}

double psnr_of(const io::Image& image, const io::Image& truth) {
  if (image.channels != truth.channels || image.height() != truth.height() || image.width() != truth.width())
    throw ShapeMismatch(fmt::format("--truth: the image ({} channels) and the truth ({} channels)", image.channels,
                                    truth.channels),
                        image.height(), image.width(), truth.height(), truth.width());
  return imaging::psnr(image.pixels.view(), truth.pixels.view());
}

void run_degrade(const DegradeArgs& a) {
  const imaging::Psf psf = load_psf(a.psf);  // usage errors before any image is read
  say_psf(psf, is_psf_file(a.psf), a.quiet);
  const imaging::Boundary boundary = imaging::parse_boundary(a.boundary);
  const io::Image f = load_image(a.input);
  if (a.crop < 0 || 2 * a.crop >= std::min(f.height(), f.width()))
    throw InvalidArgument(fmt::format("--crop {}: the image is {}", a.crop, shape_string(f.height(), f.width())));
  io::Image g{Matrix<double>(f.height(), f.width() * f.channels), f.channels};
  for (int c = 0; c < f.channels; ++c) {
    const bool alpha = f.has_alpha() && c == f.channels - 1;
    Matrix<double> channel = alpha ? Matrix<double>::copy_of(f.channel(c)) : imaging::convolve(f.channel(c), psf.kernel.view(), boundary);
    if (!a.noise.empty() && !alpha) channel = imaging::add_noise(channel.view(), a.noise, a.seed + static_cast<std::uint64_t>(c));
    copy<double>(channel.view(), g.channel(c));
  }
  // with --crop, the blur near the output's edges saw real scene beyond them, as a camera's does
  const io::Image out = cropped(g, a.crop), truth = cropped(f, a.crop);
  io::write_image_channels(a.output, out, a.bits);
  if (!a.truth.empty()) io::write_image_channels(a.truth, truth, a.bits);
  if (!a.quiet)
    std::printf("degrade: %s image, %d channel%s | psf %s (%lldx%lld), %s boundary%s%s | PSNR %.2f dB -> %s\n",
                shape_string(out.height(), out.width()).c_str(), out.channels, out.channels > 1 ? "s" : "",
                psf.spec.c_str(), static_cast<long long>(psf.kernel.rows()), static_cast<long long>(psf.kernel.cols()),
                a.boundary.c_str(), a.crop > 0 ? fmt::format(", {} pixels cropped", a.crop).c_str() : "",
                a.noise.empty() ? "" : (" | noise " + a.noise).c_str(), psnr_of(out, truth), a.output.c_str());
}

struct DeblurArgs {
  std::string input, output, psf = "gaussian:size=5,sigma=1", lambda = "auto", path = "auto", truth;
  std::string boundary = "reflexive", regularizer = "laplacian", robust = "auto", prior = "auto", noise_model = "auto";
  double tv_weight = -1;    // negative: automatic
  double photon_peak = -1;  // negative: estimated
  int max_iterations = 1000;
  double tolerance = 1e-10;
  int admm_iterations = imaging::DeblurOptions{}.admm_iterations;
  int bits = 16;
  CommonOptions common;
};

imaging::DeblurOptions deblur_options(const DeblurArgs& a) {
  imaging::DeblurOptions o{.boundary = imaging::parse_boundary(a.boundary),
                           .regularizer = imaging::parse_regularizer(a.regularizer),
                           .robust = imaging::parse_robust(a.robust),
                           .path = imaging::parse_deblur_path(a.path),
                           .max_iterations = a.max_iterations,
                           .tolerance = a.tolerance,
                           .prior = imaging::parse_prior(a.prior),
                           .noise_model = imaging::parse_noise_model(a.noise_model),
                           .photon_peak = a.photon_peak,
                           .tv_weight = a.tv_weight,
                           .admm_iterations = a.admm_iterations};
  double v = -1;
  const auto [end, ec] = std::from_chars(a.lambda.data(), a.lambda.data() + a.lambda.size(), v);
  if (ec == std::errc() && end == a.lambda.data() + a.lambda.size()) {
    if (!(v >= 0 && std::isfinite(v)))
      throw InvalidArgument(fmt::format("--lambda {}: expected a finite non-negative number", a.lambda));
    o.lambda = v;
  } else {
    try {
      o.rule = imaging::parse_lambda_rule(a.lambda);
    } catch (const InvalidArgument&) {
      throw InvalidArgument(
          fmt::format("--lambda {}: expected a non-negative number, auto, gcv or discrepancy", a.lambda));
    }
  }
  return o;
}

void run_deblur(const DeblurArgs& a) {
  // --precision is one of the common options, but deblurring computes in float64 whatever the image's
  // type: a request for another precision is refused rather than ignored
  if (!a.common.precision.empty() && a.common.precision != "double")
    throw InvalidArgument(fmt::format("deblur computes in float64 whatever the image's type: --precision {} is "
                                      "not available (leave it out)",
                                      a.common.precision));
  const imaging::Psf psf = load_psf(a.psf);  // usage errors before any image is read
  say_psf(psf, is_psf_file(a.psf), a.common.quiet);
  imaging::DeblurOptions options = deblur_options(a);
  const io::Image g = io::read_image_channels(a.input);
  const io::Image truth = a.truth.empty() ? io::Image() : load_image(a.truth);
  options.channels = colour_channels(g);
  options.progress = progress_line(a.common, "deblur", "relative residual", a.max_iterations);
  const Device device = device_for(a.common, Operation::Deblur, g.height() * g.width() * options.channels);
  const Matrix<double> colour = colour_of(g);
  imaging::DeblurResult r = imaging::deblur(colour.to(device).view(), psf, options);
  const io::Image recovered = with_colour(g, r.image.to(Device::cpu()).view());
  io::write_image_channels(a.output, recovered, a.bits);
  nlohmann::json j = report_json("deblur", r.report, {{"image", a.input}}, a.output, g.height(), g.width());
  psf_report(psf, is_psf_file(a.psf), j);
  j.update({{"psf", psf.spec},
            {"channels", options.channels},
            {"boundary", a.boundary},
            {"regularizer", a.regularizer},
            {"lambda", r.lambda},
            {"lambda_from", r.lambda_from},
            {"noise_sigma", r.noise_sigma},
            {"robust", r.robust},
            {"prior", imaging::to_string(r.prior)},
            {"prior_from", r.prior_from},
            {"nonlocal_share", r.nonlocal_share},
            {"noise_model", imaging::to_string(r.noise_model)},
            {"noise_model_from", r.noise_model_from}});
  if (r.prior == imaging::Prior::TotalVariation || r.nonlocal_share > 0)  // the nonlocal prior's pilot is TV
    j.update({{"tv_weight", r.tv_weight}, {"tv_weight_from", r.tv_weight_from}});
  if (r.nonlocal_share > 0) j.update({{"nonlocal_lambda", r.nonlocal_lambda}, {"nonlocal_h", r.nonlocal_h}});
  if (r.noise_model == imaging::NoiseModel::Poisson) j["photon_peak"] = r.photon_peak;
  std::string quality;
  if (!a.truth.empty()) {
    const double before = psnr_of(g, truth), after = psnr_of(recovered, truth);
    j["psnr_degraded"] = before;
    j["psnr_recovered"] = after;
    j["mse_degraded"] = imaging::mse(g.pixels.view(), truth.pixels.view());
    j["mse_recovered"] = imaging::mse(recovered.pixels.view(), truth.pixels.view());
    quality = fmt::format(" | PSNR {:.2f} -> {:.2f} dB", before, after);
  }
  write_report(a.common, j);
  if (!a.common.quiet) {
    const Report& rr = r.report;
    std::printf("deblur: %s image, %d channel%s | %s on %s, lambda %.3g (%s), noise %.3g%s%s | %.3f s%s -> %s\n",
                shape_string(g.height(), g.width()).c_str(), options.channels, options.channels > 1 ? "s" : "",
                std::string(to_string(rr.method)).c_str(), rr.device.name().c_str(), r.lambda, r.lambda_from.c_str(),
                r.noise_sigma, r.robust ? ", robust" : "",
                rr.iterations > 0 ? fmt::format(", {} {} iterations ({})", rr.iterations,
                                                rr.method == Method::ADMM ? "ADMM" : "CG", to_string(rr.stop)).c_str()
                                  : "",
                rr.seconds, quality.c_str(), a.output.c_str());
  }
  if (r.report.stop == StopReason::IterationLimit && r.report.method == Method::ADMM) {
    // the image and the report stand (the image is the last iterate); the exit code says it did not converge
    io::commit_outputs_so_far();
    std::fprintf(stderr, "linv: deblur: %s holds the last iterate; raise --admm-iter\n", a.output.c_str());
    throw NoConvergence("deblur's ADMM (total variation)", r.report.iterations, r.admm_change, options.admm_tolerance,
                        fmt::format("--admm-iter {} was reached", a.admm_iterations));
  }
  if (r.report.stop == StopReason::IterationLimit) {
    // the image and the report stand (the image is the last iterate); the exit code says it did not converge
    io::commit_outputs_so_far();
    std::fprintf(stderr, "linv: deblur: %s holds the last iterate; raise --max-iter or loosen --tol\n",
                 a.output.c_str());
    throw NoConvergence("deblur's conjugate gradients", r.report.iterations, r.residual, a.tolerance,
                        fmt::format("--max-iter {} was reached", a.max_iterations));
  }
}

struct QualityArgs {
  BenchOptions bench{"cuda", 5, ""};  // --device and --repeats: the timing mode
  index size = 32;
  std::uint64_t seed = 5;
  std::string markdown;
  bool time = false;
  std::string dense_sizes = "64,128";
  std::string matrix_free_sizes = "2048";
  std::string auto_sizes = "256x1,512x3";  // SIDExCHANNELS
  double lambda = 1e-2;  // about what GCV picks for the Gaussian noise below
};

// Times imaging::deblur end to end (g in host memory to the image back there, lambda given) on the phantom
// blurred by the thesis's Gaussian PSF: the dense path at each dense size, the matrix-free path at each
// matrix-free size.
void run_timing(const QualityArgs& a) {
  const Device device = Device::parse(a.bench.device);
  const imaging::Psf psf = imaging::parse_psf("gaussian:size=5,sigma=1");
  nlohmann::json out = bench_output(device);
  for (const auto& [sizes, path] : {std::pair{a.dense_sizes, imaging::DeblurPath::Dense},
                                    std::pair{a.matrix_free_sizes, imaging::DeblurPath::MatrixFree}})
    for (const index n : parse_counts(sizes, path == imaging::DeblurPath::Dense ? "--dense-sizes" : "--matrix-free-sizes")) {
      const Matrix<double> f = imaging::shepp_logan(n);
      const Matrix<double> g = imaging::add_noise(
          imaging::convolve(f.view(), psf.kernel.view(), imaging::Boundary::Reflexive).view(), "gaussian:var=0.001", a.seed);
      imaging::DeblurResult r;
      // path is copied into the lambda by name: clang before 16 cannot capture a structured binding
      const Timing t = time_repeats(a.bench.repeats, r, [&, deblur_path = path] {
        imaging::DeblurResult on =
            imaging::deblur(g.to(device).view(), psf, {.lambda = a.lambda, .path = deblur_path});
        on.image = on.image.to(Device::cpu());
        return on;
      });
      const double before = imaging::mse(g.view(), f.view()), after = imaging::mse(r.image.view(), f.view());
      const char* path_name = path == imaging::DeblurPath::Dense ? "dense" : "matrix-free";
      out["rows"].push_back({{"size", n}, {"unknowns", n * n}, {"path", path_name}, {"lambda", a.lambda},
                             {"seconds", t.median}, {"seconds_all", t.all}, {"iterations", r.report.iterations},
                             {"mse_degraded", before}, {"mse_recovered", after}});
      std::printf("deblur %4lldx%-4lld %-11s %9.4f s  iterations %d  MSE %.3g -> %.3g\n", static_cast<long long>(n),
                  static_cast<long long>(n), path_name, t.median, r.report.iterations, before, after);
    }
  // everything automatic (lambda, path, robustness) on a colour phantom blurred as a camera blurs, noise 1e-4
  for (const std::string& size : split(a.auto_sizes)) {
    const std::vector<index> dims = parse_dims(size, "SIDExCHANNELS");
    const index n = dims[0];
    const int channels = static_cast<int>(dims[1]);
    if (channels < 1 || channels > 4) throw InvalidArgument(fmt::format("--auto-sizes {}: 1 to 4 channels", size));
    const Matrix<double> scene = imaging::shepp_logan(n + 32);
    const Matrix<double> blurred = imaging::add_noise(
        imaging::convolve(scene.view(), psf.kernel.view(), imaging::Boundary::Reflexive).view(), "gaussian:var=0.0001", a.seed);
    Matrix<double> g(n, n * channels), f(n, n * channels);
    for (int c = 0; c < channels; ++c) {
      copy<double>(blurred.block(16, 16, n, n), g.block(0, c * n, n, n));
      copy<double>(scene.block(16, 16, n, n), f.block(0, c * n, n, n));
    }
    imaging::DeblurResult r;
    const Timing t = time_repeats(a.bench.repeats, r, [&] {
      imaging::DeblurResult on = imaging::deblur(g.to(device).view(), psf, {.channels = channels});
      on.image = on.image.to(Device::cpu());
      return on;
    });
    const double before = imaging::psnr(g.view(), f.view()), after = imaging::psnr(r.image.view(), f.view());
    out["rows"].push_back({{"size", n}, {"channels", channels}, {"path", "auto"}, {"method", to_string(r.report.method)},
                           {"lambda", r.lambda}, {"lambda_from", r.lambda_from}, {"seconds", t.median},
                           {"seconds_all", t.all}, {"psnr_degraded", before}, {"psnr_recovered", after}});
    std::printf("deblur %4lldx%-4lld x%d auto (%s) %9.4f s  lambda %.3g  PSNR %.2f -> %.2f dB\n",
                static_cast<long long>(n), static_cast<long long>(n), channels,
                std::string(to_string(r.report.method)).c_str(), t.median, r.lambda, before, after);
  }
  write_bench(a.bench, out);
}

// The thesis's experiment on the phantom, with the thesis's model (zero boundary, identity regulariser, the
// dense path): each PSF, without noise and with each noise, recovered with lambda by GCV (and, without
// noise, with lambda 0 too, since GCV assumes noise).
void run_quality(const QualityArgs& a) {
  const Matrix<double> f = imaging::shepp_logan(a.size);
  nlohmann::json rows = nlohmann::json::array();
  std::string md = "| PSF | noise | lambda | degraded MSE | recovered MSE | better |\n|---|---|---|---|---|---|\n";
  for (const char* spec : {"gaussian:size=5,sigma=1", "motion:len=9,angle=30", "box:size=3", "sharpen:alpha=0.2"}) {
    const imaging::Psf psf = imaging::parse_psf(spec);
    const Matrix<double> g = imaging::convolve(f.view(), psf.kernel.view(), imaging::Boundary::Zero);
    for (const char* noise : {"", "gaussian:var=0.001", "saltpepper:density=0.05"}) {
      const Matrix<double> gn =
          *noise == '\0' ? Matrix<double>::copy_of(g.view()) : imaging::add_noise(g.view(), noise, a.seed);
      const double before = imaging::mse(gn.view(), f.view());
      for (double lambda : {-1.0, 0.0}) {
        if (lambda == 0 && *noise != '\0') continue;
        imaging::DeblurResult r;
        std::string outcome;
        try {
          r = imaging::deblur(gn.view(), psf,
                              {.lambda = lambda, .rule = imaging::LambdaRule::GCV, .boundary = imaging::Boundary::Zero,
                               .regularizer = imaging::Regularizer::Identity, .robust = imaging::Robust::Off,
                               .path = imaging::DeblurPath::Dense});
        } catch (const NumericalError& e) {
          outcome = e.what();
        }
        const double after = outcome.empty() ? imaging::mse(r.image.view(), f.view()) : -1;
        const std::string lambda_text = lambda < 0 ? fmt::format("auto ({:.3g})", r.lambda) : "0";
        rows.push_back({{"psf", spec}, {"noise", *noise ? noise : "none"}, {"lambda", lambda < 0 ? r.lambda : 0.0},
                        {"lambda_from", lambda < 0 ? "generalised cross-validation" : "given"},
                        {"mse_degraded", before}, {"mse_recovered", after}, {"failure", outcome}});
        md += fmt::format("| {} | {} | {} | {:.3g} | {} | {} |\n", spec, *noise ? noise : "none", lambda_text, before,
                          outcome.empty() ? fmt::format("{:.3g}", after) : "singular",
                          outcome.empty() && after < before ? "yes" : "no");
        std::printf("%-26s %-24s lambda %-18s MSE %.3g -> %s\n", spec, *noise ? noise : "none", lambda_text.c_str(),
                    before, outcome.empty() ? fmt::format("{:.3g}", after).c_str() : "singular");
      }
    }
  }
  nlohmann::json out = {{"benchmark", "deblur-quality"},
                        {"device", "cpu"},
                        {"linv_version", build_info().version},
                        {"method", {{"image", fmt::format("modified Shepp-Logan phantom, {}x{}", a.size, a.size)},
                                    {"path", "the thesis's model: zero boundary, H^T H + lambda I, Cholesky"},
                                    {"noise_seed", a.seed}}},
                        {"rows", rows}};
  write_bench(a.bench, out);
  if (!a.markdown.empty()) io::write_text(a.markdown, md);
}

constexpr const char* kPsfHelp =
    "gaussian:size=S,sigma=X | box:size=S | disk:radius=R | motion:len=L,angle=DEG | sharpen:alpha=A (MATLAB's "
    "fspecial conventions), or a file holding the kernel (.npy, .mtx, .mat:name, .png, .pgm)";
constexpr const char* kImageHelp =
    "(.png grey, grey+alpha, RGB or RGBA at 8 or 16 bits; .pgm; .npy height x width [x channels])";

const Command kCommands[] = {
    {"", "degrade", "Blur (and optionally add noise to) an image: g = H f + n, each colour channel alike",
     [](CLI::App& cmd) {
       auto a = std::make_shared<DegradeArgs>();
       input(cmd.add_option("IN", a->input, fmt::format("Image {}, or phantom:N for the N x N Shepp-Logan phantom", kImageHelp)))
           ->required();
       output(cmd.add_option("-o,--output", a->output, "Where to write the degraded image (.png, .pgm or .npy)"),
              io::OutputKind::image)->required();
       input(cmd.add_option("--psf", a->psf, kPsfHelp))->capture_default_str();
       cmd.add_option("--noise", a->noise,
                      "gaussian:var=V[,mean=M] | saltpepper:density=D | poisson[:peak=P] (MATLAB's imnoise "
                      "conventions; Poisson counts of peak P at intensity 1)");
       cmd.add_option("--boundary", a->boundary,
                      "What the blur reads past the frame: reflexive (the scene mirrored), zero or periodic")
           ->capture_default_str();
       cmd.add_option("--crop", a->crop,
                      "Crop this many pixels from every edge after blurring (the truth too), so that the blur near "
                      "the edges saw real scene beyond them, as a camera's does")
           ->capture_default_str()
           ->check(whole(0));
       cmd.add_option("--seed", a->seed, "Seed of the noise")->capture_default_str();
       output(cmd.add_option("--truth", a->truth, "Also write the undegraded image here (cropped alike)"),
              io::OutputKind::image);
       cmd.add_option("--bits", a->bits, "Bits per sample of PNG and PGM outputs (8 or 16)")
           ->capture_default_str()
           ->check(CLI::IsMember({8, 16}));
       cmd.add_flag("-q,--quiet", a->quiet, "Print nothing on success");
       cmd.callback([a] { run_degrade(*a); });
     }},
    {"", "deblur",
     "Recover an image: f = argmin ||H f - g||^2 + lambda ||L f||^2 for the PSF's blur H under a boundary "
     "condition and a regulariser L, each colour channel with one lambda",
     [](CLI::App& cmd) {
       auto d = std::make_shared<DeblurArgs>();
       input(cmd.add_option("IN", d->input, fmt::format("The degraded image {}; alpha is kept as it is", kImageHelp)))
           ->required();
       output(cmd.add_option("-o,--output", d->output, "Where to write the recovered image (.png, .pgm or .npy)"),
              io::OutputKind::image)->required();
       input(cmd.add_option("--psf", d->psf, "The PSF that degraded it (as for degrade)"))->capture_default_str();
       cmd.add_option("--lambda", d->lambda,
                      "Regularisation weight, or how to choose it: auto (generalised cross-validation, or the "
                      "discrepancy principle where GCV fits the noise), gcv or discrepancy")
           ->capture_default_str();
       cmd.add_option("--boundary", d->boundary,
                      "reflexive (the scene mirrored past the frame: photographs), zero (a dark surround: the "
                      "thesis's) or periodic")
           ->capture_default_str();
       cmd.add_option("--regularizer", d->regularizer, "L: laplacian, gradient or identity (the thesis's)")
           ->capture_default_str();
       cmd.add_option("--robust", d->robust,
                      "A robust data term (Huber's, salt and pepper and clipped pixels left out): auto (on when g "
                      "shows impulse noise), on or off")
           ->capture_default_str();
       cmd.add_option("--prior", d->prior,
                      "tikhonov (lambda ||L f||^2: one linear filter), tv (isotropic total variation: edges kept "
                      "sharp, flat areas smoothed; ADMM from the Tikhonov solution, colour channels sharing edges), "
                      "nonlocal (texture kept: a sharper regularised inverse averaged over the pixels whose patches "
                      "look alike in the tv result; Gaussian noise; a few times tv's time) or auto (tv for Poisson "
                      "data; for Gaussian noise nonlocal under a blur, tikhonov under a sharpening filter or with "
                      "4 % salt and pepper and more, the two results blended between; the report's prior_from and "
                      "nonlocal_share say which; with --robust on, tikhonov)")
           ->capture_default_str()
           ->check(CLI::IsMember({"auto", "tikhonov", "tv", "nonlocal"}));
       cmd.add_option("--tv-weight", d->tv_weight,
                      "tv: the weight of total variation, in the image's units (default: 0.12 times the noise level "
                      "seen in the image; for Poisson data, against the counts' log-likelihood, from the photon noise)")
           ->check(at_least(0));
       cmd.add_option("--noise-model", d->noise_model,
                      "gaussian (white noise), poisson (photon counts: microscopy, astronomy, low light; the "
                      "total-variation prior with the counts' likelihood) or auto (poisson where the noise variance "
                      "grows with the intensity, the image has no negative pixel and the prior is not tikhonov)")
           ->capture_default_str()
           ->check(CLI::IsMember({"auto", "gaussian", "poisson"}));
       cmd.add_option("--photon-peak", d->photon_peak,
                      "poisson: photon counts per unit of the image's values (pixels read from 8- or 16-bit files "
                      "are scaled to [0, 1]; default: estimated from the noise's mean-variance relation)")
           ->check(above(0));
       cmd.add_option("--path", d->path,
                      "auto (spectral where exact, dense up to 64x64 pixels, matrix-free above), spectral (DFT or "
                      "DCT: periodic boundary, or reflexive with a symmetric PSF), dense (H^T H + lambda L^T L, "
                      "Cholesky) or matrix-free (preconditioned conjugate gradients)")
           ->capture_default_str();
       input(cmd.add_option("--truth", d->truth, "The true image (a file or phantom:N): print PSNR before and after"));
       cmd.add_option("--max-iter", d->max_iterations, "matrix-free: conjugate-gradient iterations at most")
           ->capture_default_str()
           ->check(whole(1));
       cmd.add_option("--admm-iter", d->admm_iterations,
                      "tv and poisson: ADMM iterations at most (it stops earlier where an iteration changes the image "
                      "by less than 1e-4, relatively)")
           ->capture_default_str()
           ->check(whole(1));
       cmd.add_option("--tol", d->tolerance, "matrix-free: relative residual to stop at")
           ->capture_default_str()
           ->check(above(0));
       cmd.add_option("--bits", d->bits, "Bits per sample of PNG and PGM outputs (8 or 16)")
           ->capture_default_str()
           ->check(CLI::IsMember({8, 16}));
       add_common_options(cmd, d->common);
       cmd.callback([d] { run_deblur(*d); });
     }},
    {"bench", "deblur",
     "Recovery quality on the phantom for each PSF and noise (the thesis's experiment); with --time, the speed of "
     "each path instead",
     [](CLI::App& cmd) {
       auto q = std::make_shared<QualityArgs>();
       add_bench_options(cmd, q->bench);
       cmd.add_option("--size", q->size, "Quality: phantom size (dense path: up to 64)")
           ->capture_default_str()
           ->check(whole(4, 64));
       cmd.add_option("--seed", q->seed, "Noise seed")->capture_default_str();
       output(cmd.add_option("--markdown", q->markdown, "Quality: write a markdown table here"), io::OutputKind::text);
       cmd.add_flag("--time", q->time, "Time deblurring end to end (Gaussian blur and noise, lambda given) instead");
       cmd.add_option("--dense-sizes", q->dense_sizes, "--time: image sizes for the dense path")->capture_default_str();
       cmd.add_option("--matrix-free-sizes", q->matrix_free_sizes, "--time: image sizes for the matrix-free path")
           ->capture_default_str();
       cmd.add_option("--lambda", q->lambda, "--time: the regularisation weight of the dense and matrix-free sizes")
           ->capture_default_str()
           ->check(at_least(0));
       cmd.add_option("--auto-sizes", q->auto_sizes,
                      "--time: SIDExCHANNELS images deblurred with everything automatic (lambda included), e.g. 512x3")
           ->capture_default_str();
       cmd.callback([q] {
         if (q->time) return run_timing(*q);
         run_quality(*q);
       });
     }},
};

}  // namespace

std::span<const Command> imaging_commands() { return kCommands; }

}  // namespace linv::cli
