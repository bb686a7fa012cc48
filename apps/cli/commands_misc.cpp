// linv gen | info | demo
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>

#include "common.hpp"

namespace linv::cli {
namespace {

struct GenArgs {
  std::string kind = "random", dtype = "f64", output;
  index n = -1;
  double cond = 0;
  std::uint64_t seed = 0;
};

void run_gen(const GenArgs& a) {
  if (a.n < 0 || a.output.empty())
    throw InvalidArgument("gen needs -n SIZE and -o FILE (or a generator: linv gen jacobian --help)");
  const MatrixKind kind = parse_matrix_kind(a.kind);
  const GenerateOptions options{.cond = a.cond, .seed = a.seed};
  with_type_named(a.dtype, [&]<Real T>() { io::write_matrix<T>(a.output, generate<T>(kind, a.n, options).view()); });
}

struct JacobianArgs {
  index rows = 0, cols = 0;
  std::uint64_t seed = 1;
  std::string output;
};

void run_gen_jacobian(const JacobianArgs& a) {
  io::write_matrix<double>(a.output, slam::random_bordered_jacobian<double>(a.rows, a.cols, a.seed).to_dense().view());
}

void run_info() {
  const BuildInfo b = build_info();
  std::printf("linv %s\n", b.version.c_str());
  std::printf("  BLAS/LAPACK: %s\n", b.blas.c_str());
  std::printf("  CUDA backend: %s\n", b.cuda ? fmt::format("built (CUDA runtime {})", b.cuda_runtime).c_str() : "not built");
  std::printf("  MATLAB .mat files: %s\n", b.matio ? "yes (matio)" : "no (built without matio)");
  std::printf("  PNG images: %s\n", io::have_png_support() ? "yes (libpng)" : "no (built without libpng; PGM only)");
  std::printf("  .npz output: %s\n", io::have_npz_support() ? "yes (zlib)" : "no (built without zlib)");
  std::printf("  NIfTI images: %s\n", io::have_nifti_support() ? "yes (libnifti2)" : "no (built without libnifti2)");
  std::printf("  FFT convolution: %s\n",
              imaging::Convolution::have_fft() ? "yes (FFTW)" : "no (built without FFTW; direct convolution)");
  const GpuList list = cuda_devices();
  if (list.gpus.empty()) std::printf("  GPUs: none (%s)\n", list.why_none.c_str());
  for (const GpuInfo& g : list.gpus)
    std::printf("  cuda:%d  %s, compute capability %d.%d, %d SMs, %.1f GiB (%.1f GiB free)\n", g.index, g.name.c_str(),
                g.compute_major, g.compute_minor, g.multiprocessors, static_cast<double>(g.total_memory) / (1 << 30),
                static_cast<double>(g.free_memory) / (1 << 30));
}

struct DemoArgs {
  index size = 64;
  std::string out = "linv-demo";
  std::uint64_t seed = 5;
  std::string device = "auto";
};

// The main job: the thesis's deblurring experiment on the phantom made by code. Blur or sharpen, each
// without noise, with salt and pepper and with Gaussian noise; each recovered (lambda 0 without noise,
// by generalised cross-validation with it), with the images and one montage written to a folder.
void run_demo(const DemoArgs& a) {
  struct Case {
    const char* name;
    const char* psf;
    const char* noise;
    const char* thesis;  // the thesis's MSE, degraded -> recovered (../shared/BENCHMARKS.md), where it gives one
  };
  static constexpr Case kCases[] = {
      {"blur", "gaussian:size=5,sigma=1", "", "0.0032 -> 6.6e-5"},
      {"blur+saltpepper", "gaussian:size=5,sigma=1", "saltpepper:density=0.05", "0.0087 -> 0.0112"},
      {"blur+gaussian", "gaussian:size=5,sigma=1", "gaussian:var=0.001", "0.0047 -> 0.0044"},
      {"sharpen", "sharpen:alpha=0.2", "", "0.2469 -> 1.0e-11"},
      {"sharpen+saltpepper", "sharpen:alpha=0.2", "saltpepper:density=0.05", "-"},
      {"sharpen+gaussian", "sharpen:alpha=0.2", "gaussian:var=0.001", "-"},
  };
  std::filesystem::create_directories(a.out);
  const std::string ext = io::have_png_support() ? ".png" : ".pgm";
  const Matrix<double> f = imaging::shepp_logan(a.size);
  io::write_image((std::filesystem::path(a.out) / ("truth" + ext)).string(), f.view());
  const Device device =
      a.device == "auto" ? auto_device(Operation::Deblur, a.size * a.size) : Device::parse(a.device);
  std::printf("linv demo: deblurring the %lldx%lld Shepp-Logan phantom (a %lldx%lld system) on %s, six ways\n\n",
              static_cast<long long>(a.size), static_cast<long long>(a.size), static_cast<long long>(a.size * a.size),
              static_cast<long long>(a.size * a.size), device.is_cpu() ? "the CPU" : device.name().c_str());
  std::printf("%-20s %12s %13s %10s %8s %-6s %s\n", "case", "MSE degraded", "MSE recovered", "lambda", "seconds",
              "device", "thesis (MSE degraded -> recovered)");
  // montage: one row per case, degraded | recovered, with a white gap
  const index gap = 2, tile = a.size;
  Matrix<double> montage(static_cast<index>(std::size(kCases)) * (tile + gap) - gap, 3 * tile + 2 * gap);
  for (index k = 0; k < montage.size(); ++k) montage.data()[k] = 1;
  auto place = [&](const Matrix<double>& image, index row, index column) {
    for (index c = 0; c < tile; ++c)
      for (index r = 0; r < tile; ++r) montage(row * (tile + gap) + r, column * (tile + gap) + c) = image(r, c);
  };
  index row = 0;
  for (const Case& c : kCases) {
    const imaging::Psf psf = imaging::parse_psf(c.psf);
    Matrix<double> g = imaging::convolve(f.view(), psf.kernel.view());
    if (*c.noise) g = imaging::add_noise(g.view(), c.noise, a.seed);
    imaging::DeblurResult r = imaging::deblur(g.to(device).view(), psf,
                                              {.lambda = *c.noise ? -1.0 : 0.0, .path = imaging::DeblurPath::Dense});
    r.image = r.image.to(Device::cpu());
    const double before = imaging::mse(g.view(), f.view()), after = imaging::mse(r.image.view(), f.view());
    std::printf("%-20s %12.3g %13.3g %10.3g %8.3f %-6s %s\n", c.name, before, after, r.lambda, r.report.seconds,
                r.report.device.name().c_str(), c.thesis);
    io::write_image((std::filesystem::path(a.out) / (std::string(c.name) + "-degraded" + ext)).string(), g.view());
    io::write_image((std::filesystem::path(a.out) / (std::string(c.name) + "-recovered" + ext)).string(), r.image.view());
    place(f, row, 0);
    place(g, row, 1);
    place(r.image, row, 2);
    ++row;
  }
  const std::string montage_path = (std::filesystem::path(a.out) / ("montage" + ext)).string();
  io::write_image(montage_path, montage.view(), 8);
  std::printf("\nlambda: 0 without noise, else by generalised cross-validation. Images in %s/; %s shows each case as\n"
              "truth | degraded | recovered. Try: linv degrade phantom:128 -o g.png --psf motion:len=9,angle=30 and\n"
              "linv deblur g.png -o f.png --psf motion:len=9,angle=30 --truth phantom:128\n",
              a.out.c_str(), montage_path.c_str());
}

const Command kCommands[] = {
    {"", "gen", "Generate a test matrix of a given kind",
     [](CLI::App& cmd) {
       auto a = std::make_shared<GenArgs>();
       cmd.add_option("--kind", a->kind, "random, spd, band, hollow, sparse, identity, illcond or singular")
           ->capture_default_str();
       cmd.add_option("-n", a->n, "Size (n x n)")->check(CLI::NonNegativeNumber);
       cmd.add_option("--cond", a->cond, "Condition number for spd (default 1e3) and illcond (default 1e12)");
       cmd.add_option("--seed", a->seed, "Random seed (the same seed gives the same matrix)")->capture_default_str();
       cmd.add_option("--dtype", a->dtype, "f32 or f64")->capture_default_str()->check(CLI::IsMember({"f32", "f64"}));
       cmd.add_option("-o,--output", a->output, "Where to write the matrix (.npy, .mtx, .mat[:variable])");
       cmd.require_subcommand(0, 1);
       cmd.callback([a, &cmd] {
         if (cmd.get_subcommands().empty()) run_gen(*a);
       });
     }},
    {"gen", "jacobian",
     "A bordered SLAM Jacobian: one dense column, then segment columns each nonzero on one contiguous run of rows",
     [](CLI::App& cmd) {
       auto j = std::make_shared<JacobianArgs>();
       cmd.add_option("--rows", j->rows, "Residual rows n")->required()->check(CLI::PositiveNumber);
       cmd.add_option("--cols", j->cols, "Parameters m (1 dense + m - 1 segments), m <= rows + 1")
           ->required()
           ->check(CLI::Range(2, 1 << 30));
       cmd.add_option("--seed", j->seed, "Random seed")->capture_default_str();
       cmd.add_option("-o,--output", j->output, "Where to write J (.npy, .mtx; dense storage)")->required();
       cmd.callback([j] { run_gen_jacobian(*j); });
     }},
    {"", "info", "Show the build (BLAS, CUDA, formats) and the GPUs linv can use",
     [](CLI::App& cmd) { cmd.callback([] { run_info(); }); }},
    {"", "demo", "linv's main job on a built-in image: deblur the Shepp-Logan phantom six ways, with MSE and images",
     [](CLI::App& cmd) {
       auto a = std::make_shared<DemoArgs>();
       cmd.add_option("--size", a->size, "Phantom size (n x n pixels, an n^2 x n^2 system)")
           ->capture_default_str()
           ->check(CLI::Range(4, 96));
       cmd.add_option("--out", a->out, "Folder for the images and the montage")->capture_default_str();
       cmd.add_option("--seed", a->seed, "Noise seed")->capture_default_str();
       cmd.add_option("--device", a->device, "auto (a GPU when one is usable, else the CPU), cpu, cuda or cuda:N")
           ->capture_default_str();
       cmd.callback([a] { run_demo(*a); });
     }},
};

}  // namespace

std::span<const Command> misc_commands() { return kCommands; }

}  // namespace linv::cli
