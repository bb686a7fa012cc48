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
  std::string input, output, psf = "gaussian:size=5,sigma=1", noise, truth;
  std::uint64_t seed = 1;
  int bits = 16;
  bool quiet = false;
};

// An image file, or "phantom:N" for the N x N modified Shepp-Logan phantom.
Matrix<double> load_image(const std::string& spec) {
  constexpr std::string_view prefix = "phantom:";
  if (spec.rfind(prefix, 0) == 0) {
    const std::string_view size = std::string_view(spec).substr(prefix.size());
    long long n = 0;
    const auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), n);
    if (ec != std::errc() || end != size.data() + size.size() || n < 1 || n > 65536)
      throw InvalidArgument(fmt::format("'{}': expected phantom:N with N from 1 to 65536", spec));
    return imaging::shepp_logan(n);
  }
  return io::read_image(spec);
}

void run_degrade(const DegradeArgs& a) {
  const imaging::Psf psf = imaging::parse_psf(a.psf);  // usage errors before any file is read
  const Matrix<double> f = load_image(a.input);
  Matrix<double> g = imaging::convolve(f.view(), psf.kernel.view());
  if (!a.noise.empty()) g = imaging::add_noise(g.view(), a.noise, a.seed);
  io::write_image(a.output, g.view(), a.bits);
  if (!a.truth.empty()) io::write_image(a.truth, f.view(), a.bits);
  if (!a.quiet)
    std::printf("degrade: %s image | psf %s (%lldx%lld)%s | MSE %.3g, PSNR %.2f dB -> %s\n",
                shape_string(f.rows(), f.cols()).c_str(), a.psf.c_str(), static_cast<long long>(psf.kernel.rows()),
                static_cast<long long>(psf.kernel.cols()), a.noise.empty() ? "" : (" | noise " + a.noise).c_str(),
                imaging::mse(g.view(), f.view()), imaging::psnr(g.view(), f.view()), a.output.c_str());
}

struct DeblurArgs {
  std::string input, output, psf = "gaussian:size=5,sigma=1", lambda = "auto", path = "auto", truth;
  int max_iterations = 1000;
  double tolerance = 1e-10;
  int bits = 16;
  CommonOptions common;
};

void run_deblur(const DeblurArgs& a) {
  const imaging::Psf psf = imaging::parse_psf(a.psf);  // usage errors before any file is read
  imaging::DeblurOptions options{.max_iterations = a.max_iterations, .tolerance = a.tolerance};
  if (a.lambda != "auto") {
    double v = -1;
    const auto [end, ec] = std::from_chars(a.lambda.data(), a.lambda.data() + a.lambda.size(), v);
    if (ec != std::errc() || end != a.lambda.data() + a.lambda.size() || !(v >= 0))
      throw InvalidArgument(fmt::format("--lambda {}: expected a non-negative number or auto", a.lambda));
    options.lambda = v;
  }
  if (a.path == "dense")
    options.path = imaging::DeblurPath::Dense;
  else if (a.path == "matrix-free")
    options.path = imaging::DeblurPath::MatrixFree;
  else if (a.path != "auto")
    throw InvalidArgument(fmt::format("--path {}: expected auto, dense or matrix-free", a.path));
  const Matrix<double> g = io::read_image(a.input);
  const Device device = device_for(a.common, Operation::Deblur, g.rows() * g.cols());
  const Matrix<double> truth = a.truth.empty() ? Matrix<double>() : load_image(a.truth);
  imaging::DeblurResult r = imaging::deblur(g.to(device).view(), psf, options);
  r.image = r.image.to(Device::cpu());
  io::write_image(a.output, r.image.view(), a.bits);
  nlohmann::json j = report_json("deblur", r.report, {{"image", a.input}}, a.output, g.rows(), g.cols());
  j.update({{"psf", a.psf}, {"lambda", r.lambda}, {"lambda_from", r.lambda_from}});
  std::string quality;
  if (!a.truth.empty()) {
    const double before = imaging::mse(g.view(), truth.view()), after = imaging::mse(r.image.view(), truth.view());
    j["mse_degraded"] = before;
    j["mse_recovered"] = after;
    j["psnr_recovered"] = imaging::psnr(r.image.view(), truth.view());
    quality = fmt::format(" | MSE {:.3g} -> {:.3g}, PSNR {:.2f} dB", before, after, j["psnr_recovered"].get<double>());
  }
  write_report(a.common, j);
  if (!a.common.quiet) {
    const Report& rr = r.report;
    std::printf("deblur: %s image | %s on %s, lambda %.3g (%s)%s | %.3f s%s -> %s\n",
                shape_string(g.rows(), g.cols()).c_str(), std::string(to_string(rr.method)).c_str(),
                rr.device.name().c_str(), r.lambda, r.lambda_from.c_str(),
                rr.iterations > 0
                    ? fmt::format(", {} CG iterations ({})", rr.iterations, to_string(rr.stop)).c_str()
                    : "",
                rr.seconds, quality.c_str(), a.output.c_str());
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
    for (const std::string& size : split(sizes)) {
      const index n = std::stoll(size);
      const Matrix<double> f = imaging::shepp_logan(n);
      const Matrix<double> g = imaging::add_noise(imaging::convolve(f.view(), psf.kernel.view()).view(),
                                                  "gaussian:var=0.001", a.seed);
      imaging::DeblurResult r;
      const Timing t = time_repeats(a.bench.repeats, r, [&] {
        imaging::DeblurResult on = imaging::deblur(g.to(device).view(), psf, {.lambda = a.lambda, .path = path});
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
  write_bench(a.bench, out);
}

// The thesis's experiment on the phantom: each PSF, without noise and with each noise, recovered with
// lambda by GCV (and, without noise, with lambda 0 too, since GCV assumes noise).
void run_quality(const QualityArgs& a) {
  const Matrix<double> f = imaging::shepp_logan(a.size);
  nlohmann::json rows = nlohmann::json::array();
  std::string md = "| PSF | noise | lambda | degraded MSE | recovered MSE | better |\n|---|---|---|---|---|---|\n";
  for (const char* spec : {"gaussian:size=5,sigma=1", "motion:len=9,angle=30", "box:size=3", "sharpen:alpha=0.2"}) {
    const imaging::Psf psf = imaging::parse_psf(spec);
    const Matrix<double> g = imaging::convolve(f.view(), psf.kernel.view());
    for (const char* noise : {"", "gaussian:var=0.001", "saltpepper:density=0.05"}) {
      const Matrix<double> gn =
          *noise == '\0' ? Matrix<double>::copy_of(g.view()) : imaging::add_noise(g.view(), noise, a.seed);
      const double before = imaging::mse(gn.view(), f.view());
      for (double lambda : {-1.0, 0.0}) {
        if (lambda == 0 && *noise != '\0') continue;
        imaging::DeblurResult r;
        std::string outcome;
        try {
          r = imaging::deblur(gn.view(), psf, {.lambda = lambda, .path = imaging::DeblurPath::Dense});
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
                                    {"path", "dense: H^T H + lambda I, Cholesky"},
                                    {"noise_seed", a.seed}}},
                        {"rows", rows}};
  write_bench(a.bench, out);
  if (!a.markdown.empty()) io::write_text(a.markdown, md);
}

const Command kCommands[] = {
    {"", "degrade", "Blur (and optionally add noise to) an image: g = H f + n, zero boundaries",
     [](CLI::App& cmd) {
       auto a = std::make_shared<DegradeArgs>();
       cmd.add_option("IN", a->input,
                      "Image (.png or .pgm, grey, 8 or 16 bits), or phantom:N for the N x N Shepp-Logan phantom")
           ->required();
       cmd.add_option("-o,--output", a->output, "Where to write the degraded image (.png or .pgm)")->required();
       cmd.add_option("--psf", a->psf,
                      "gaussian:size=S,sigma=X | box:size=S | motion:len=L,angle=DEG | sharpen:alpha=A (MATLAB's "
                      "fspecial conventions)")
           ->capture_default_str();
       cmd.add_option("--noise", a->noise,
                      "gaussian:var=V[,mean=M] | saltpepper:density=D (MATLAB's imnoise conventions)");
       cmd.add_option("--seed", a->seed, "Seed of the noise")->capture_default_str();
       cmd.add_option("--truth", a->truth, "Also write the undegraded image here (useful with phantom:N)");
       cmd.add_option("--bits", a->bits, "Bits per pixel of the outputs (8 or 16)")
           ->capture_default_str()
           ->check(CLI::IsMember({8, 16}));
       cmd.add_flag("-q,--quiet", a->quiet, "Print nothing on success");
       cmd.callback([a] { run_degrade(*a); });
     }},
    {"", "deblur", "Recover an image: f = (H^T H + lambda I)^-1 H^T g for the PSF's system matrix H",
     [](CLI::App& cmd) {
       auto d = std::make_shared<DeblurArgs>();
       cmd.add_option("IN", d->input, "The degraded image (.png or .pgm)")->required();
       cmd.add_option("-o,--output", d->output, "Where to write the recovered image")->required();
       cmd.add_option("--psf", d->psf, "The PSF that degraded it (as for degrade)")->capture_default_str();
       cmd.add_option("--lambda", d->lambda,
                      "Regularisation weight, or auto (generalised cross-validation; dense path). Noise-free images "
                      "want a small value: GCV assumes noise")
           ->capture_default_str();
       cmd.add_option("--path", d->path,
                      "auto (dense up to 64x64 pixels), dense (form H^T H + lambda I, Cholesky) or matrix-free "
                      "(conjugate gradients)")
           ->capture_default_str();
       cmd.add_option("--truth", d->truth, "The true image (a file or phantom:N): print MSE and PSNR before and after");
       cmd.add_option("--max-iter", d->max_iterations, "matrix-free: conjugate-gradient iterations at most")
           ->capture_default_str();
       cmd.add_option("--tol", d->tolerance, "matrix-free: relative residual to stop at")->capture_default_str();
       cmd.add_option("--bits", d->bits, "Bits per pixel of the output (8 or 16)")
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
           ->check(CLI::Range(4, 64));
       cmd.add_option("--seed", q->seed, "Noise seed")->capture_default_str();
       cmd.add_option("--markdown", q->markdown, "Quality: write a markdown table here");
       cmd.add_flag("--time", q->time, "Time deblurring end to end (Gaussian blur and noise, lambda given) instead");
       cmd.add_option("--dense-sizes", q->dense_sizes, "--time: image sizes for the dense path")->capture_default_str();
       cmd.add_option("--matrix-free-sizes", q->matrix_free_sizes, "--time: image sizes for the matrix-free path")
           ->capture_default_str();
       cmd.add_option("--lambda", q->lambda, "--time: the regularisation weight")->capture_default_str();
       cmd.callback([q] {
         if (q->time) return run_timing(*q);
         run_quality(*q);
       });
     }},
};

}  // namespace

std::span<const Command> imaging_commands() { return kCommands; }

}  // namespace linv::cli
