// linv degrade: the forward model of the deblurring problem, g = H f + n, on an image or on the
// Shepp-Logan phantom made by code.
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

}  // namespace

void register_imaging_commands(CLI::App& app) {
  auto a = std::make_shared<DegradeArgs>();
  CLI::App* cmd = app.add_subcommand("degrade", "Blur (and optionally add noise to) an image: g = H f + n, zero boundaries");
  cmd->add_option("IN", a->input, "Image (.png or .pgm, grey, 8 or 16 bits), or phantom:N for the N x N Shepp-Logan phantom")
      ->required();
  cmd->add_option("-o,--output", a->output, "Where to write the degraded image (.png or .pgm)")->required();
  cmd->add_option("--psf", a->psf,
                  "gaussian:size=S,sigma=X | box:size=S | motion:len=L,angle=DEG | sharpen:alpha=A (MATLAB's "
                  "fspecial conventions)")
      ->capture_default_str();
  cmd->add_option("--noise", a->noise, "gaussian:var=V[,mean=M] | saltpepper:density=D (MATLAB's imnoise conventions)");
  cmd->add_option("--seed", a->seed, "Seed of the noise")->capture_default_str();
  cmd->add_option("--truth", a->truth, "Also write the undegraded image here (useful with phantom:N)");
  cmd->add_option("--bits", a->bits, "Bits per pixel of the outputs (8 or 16)")->capture_default_str()->check(CLI::IsMember({8, 16}));
  cmd->add_flag("-q,--quiet", a->quiet, "Print nothing on success");
  cmd->callback([a] { run_degrade(*a); });
}

}  // namespace linv::cli
