// linv gen | info | demo
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>

#include "common.hpp"
#include "linv/montage.hpp"

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
  // .mtx in coordinate form, never made dense on the way
  io::write_sparse<double>(a.output, slam::random_bordered_jacobian<double>(a.rows, a.cols, a.seed).to_sparse());
}

void run_info() {
  const BuildInfo b = build_info();
  std::printf("linv %s\n", b.version.c_str());
  std::printf("  BLAS/LAPACK: %s\n", b.blas.c_str());
  std::printf("  CPU threads: %d (--threads, OMP_NUM_THREADS, or the CPUs this process may use)\n", cpu_threads());
  std::printf("  CUDA backend: %s\n", b.cuda ? fmt::format("built (CUDA runtime {})", b.cuda_runtime).c_str() : "not built");
  std::printf("  MATLAB .mat files: %s\n", b.matio ? "yes (matio)" : "no (built without matio)");
  std::printf("  PNG images: %s\n", io::have_png_support() ? "yes (libpng)" : "no (built without libpng; PGM only)");
  std::printf("  JPEG images (read): %s\n", io::have_jpeg_support() ? "yes (libjpeg)" : "no (built without libjpeg)");
  std::printf("  TIFF images (read): %s\n", io::have_tiff_support() ? "yes (libtiff)" : "no (built without libtiff)");
  std::printf("  .npz archives (read and written): %s\n", io::have_npz_support() ? "yes (zlib)" : "no (built without zlib)");
  std::printf("  NIfTI images: %s\n", io::have_nifti_support() ? "yes (libnifti2)" : "no (built without libnifti2)");
  std::printf("  FFT convolution: %s\n",
              imaging::Convolution::have_fft() ? "yes (FFTW)" : "no (built without FFTW; direct convolution)");
  std::printf("  Distributed matrices: %s\n", dist::engines().c_str());
  const GpuList list = cuda_devices();
  if (list.gpus.empty()) std::printf("  GPUs: none (%s)\n", list.why_none.c_str());
  for (const GpuInfo& g : list.gpus)
    std::printf("  cuda:%d  %s, compute capability %d.%d, %d SMs, %.1f GiB (%.1f GiB free)\n", g.index, g.name.c_str(),
                g.compute_major, g.compute_minor, g.multiprocessors, static_cast<double>(g.total_memory) / (1 << 30),
                static_cast<double>(g.free_memory) / (1 << 30));
  if (!list.gpus.empty())
    std::printf("  On the CPU only (refused on a GPU, kept on the CPU by --device auto): %s\n",
                fmt::format("{}", fmt::join(cpu_only_on(Device::cuda(list.gpus.front().index)), ", ")).c_str());
}

struct DemoArgs {
  index size = 64;
  std::string out = "linv-demo";
  std::uint64_t seed = 5;
  std::string device = "auto";
  bool quiet = false;
};

}  // namespace
}  // namespace linv::cli

extern const unsigned char kDemoPhoto[];  // data/astronaut-192x192.rgb, compiled in by CMakeLists.txt

namespace linv::cli {
namespace {

constexpr index kDemoPhotoSide = 192;

// The demo's photograph as an RGB image (three channels side by side), values in [0, 1].
io::Image demo_photo() {
  io::Image image{Matrix<double>(kDemoPhotoSide, 3 * kDemoPhotoSide), 3};
  for (index i = 0; i < kDemoPhotoSide; ++i)
    for (index j = 0; j < kDemoPhotoSide; ++j)
      for (int c = 0; c < 3; ++c)
        image.channel(c)(i, j) = kDemoPhoto[(i * kDemoPhotoSide + j) * 3 + c] / 255.0;
  return image;
}

// The main job: the thesis's deblurring experiment on the phantom made by code (blur or sharpen, each
// without noise, with salt and pepper and with Gaussian noise), and a photograph blurred the way a camera
// blurs (the scene beyond the frame included, then cropped) with a little noise, each recovered by
// linv::imaging::deblur with everything chosen automatically. Images and a labelled montage go to a folder.
void run_demo(const DemoArgs& a) {
  struct Case {
    const char* name;
    const char* psf;
    const char* noise;
    const char* thesis;  // the thesis's MSE, degraded -> recovered (../shared/BENCHMARKS.md), where it gives one
    bool photo;
  };
  static constexpr Case kCases[] = {
      {"blur", "gaussian:size=5,sigma=1", "", "0.0032 -> 6.6e-5", false},
      {"blur + salt & pepper", "gaussian:size=5,sigma=1", "saltpepper:density=0.05", "0.0087 -> 0.0112", false},
      {"blur + gaussian noise", "gaussian:size=5,sigma=1", "gaussian:var=0.001", "0.0047 -> 0.0044", false},
      {"sharpen", "sharpen:alpha=0.2", "", "0.2469 -> 1.0e-11", false},
      {"sharpen + salt & pepper", "sharpen:alpha=0.2", "saltpepper:density=0.05", "-", false},
      {"sharpen + gaussian noise", "sharpen:alpha=0.2", "gaussian:var=0.001", "-", false},
      {"photograph: blur + noise", "gaussian:size=7,sigma=1.5", "gaussian:var=0.0001", "-", true},
  };
  io::make_directory(a.out);
  const std::string ext = io::have_png_support() ? ".png" : ".pgm";
  const io::Image phantom{imaging::shepp_logan(a.size), 1};
  const Device device = choose_device(a.device, Operation::Deblur, a.size * a.size);
  if (!a.quiet)
    std::printf("linv demo: deblurring the %lldx%lld Shepp-Logan phantom six ways (the thesis's cases) and a photograph, "
                "on %s,\nlambda, boundary and robustness chosen by linv\n\n",
                static_cast<long long>(a.size), static_cast<long long>(a.size),
                device.is_cpu() ? "the CPU" : device.name().c_str());
  if (!a.quiet)
    std::printf("%-26s %9s %9s %10s %-8s %-36s %8s %9s %9s  %s\n", "case", "PSNR in", "PSNR out", "lambda", "method",
                "chosen by", "seconds", "TV out", "nonlocal", "thesis (MSE in -> out)");
  std::vector<io::MontageRow> rows;
  for (const Case& c : kCases) {
    const imaging::Psf psf = imaging::parse_psf(c.psf);
    io::Image truth, g;
    if (c.photo) {  // blur the whole scene, then keep the middle: the blur near the edges saw real scene
      const io::Image scene = demo_photo();
      constexpr index margin = 16, side = kDemoPhotoSide - 2 * margin;
      truth = {Matrix<double>(side, 3 * side), 3};
      g = {Matrix<double>(side, 3 * side), 3};
      for (int ch = 0; ch < 3; ++ch) {
        const Matrix<double> blurred = imaging::add_noise(
            imaging::convolve(scene.channel(ch), psf.kernel.view(), imaging::Boundary::Reflexive).view(), c.noise,
            a.seed + static_cast<std::uint64_t>(ch));
        copy<double>(blurred.block(margin, margin, side, side), g.channel(ch));
        copy<double>(scene.channel(ch).block(margin, margin, side, side), truth.channel(ch));
      }
    } else {  // the phantom is the whole scene, dark around: its zero boundary is the truth
      truth = {Matrix<double>::copy_of(phantom.pixels.view()), 1};
      Matrix<double> blurred = imaging::convolve(phantom.pixels.view(), psf.kernel.view(), imaging::Boundary::Zero);
      if (*c.noise) blurred = imaging::add_noise(blurred.view(), c.noise, a.seed);
      g = {std::move(blurred), 1};
    }
    imaging::DeblurResult r = imaging::deblur(g.pixels.to(device).view(), psf,
                                              {.channels = g.channels, .prior = imaging::Prior::Tikhonov});
    const io::Image recovered{r.image.to(Device::cpu()), g.channels};
    const double before = imaging::psnr(g.pixels.view(), truth.pixels.view());
    const double after = imaging::psnr(recovered.pixels.view(), truth.pixels.view());
    // the same with the total-variation prior, beside it (no robust term: salt and pepper stays in its data)
    const imaging::DeblurResult tv = imaging::deblur(
        g.pixels.to(device).view(), psf, {.channels = g.channels, .prior = imaging::Prior::TotalVariation});
    const io::Image with_tv{tv.image.to(Device::cpu()), g.channels};
    const double after_tv = imaging::psnr(with_tv.pixels.view(), truth.pixels.view());
    // and the nonlocal prior (total variation's result as the pilot of a nonlocal average; on noise-free
    // data it is total variation's result)
    const imaging::DeblurResult nl = imaging::deblur(
        g.pixels.to(device).view(), psf, {.channels = g.channels, .prior = imaging::Prior::Nonlocal});
    const io::Image with_nl{nl.image.to(Device::cpu()), g.channels};
    const double after_nl = imaging::psnr(with_nl.pixels.view(), truth.pixels.view());
    // the rule's name without its reasons: "generalised cross-validation, raised" rather than the whole story
    std::string rule = r.lambda_from.substr(0, r.lambda_from.find(" ("));
    if (const auto raised = rule.find(", raised from"); raised != std::string::npos) rule = rule.substr(0, raised) + ", raised";
    for (const auto& [longer, shorter] : {std::pair<std::string, std::string>{"generalised cross-validation", "GCV"},
                                          {"discrepancy principle", "discrepancy"},
                                          {" of the way to the ", " towards the "}})
      if (const auto at = rule.find(longer); at != std::string::npos) rule.replace(at, longer.size(), shorter);
    if (!a.quiet)
      std::printf("%-26s %6.2f dB %6.2f dB %10.3g %-8s %-36s %8.3f %6.2f dB %6.2f dB  %s\n", c.name, before, after,
                  r.lambda, std::string(to_string(r.report.method)).c_str(),
                  (rule + (r.robust ? ", robust" : "")).c_str(), r.report.seconds, after_tv, after_nl, c.thesis);
    std::string file = c.name;
    for (char& ch : file)
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '-';
    io::write_image_channels((std::filesystem::path(a.out) / (file + "-degraded" + ext)).string(), g, 8);
    io::write_image_channels((std::filesystem::path(a.out) / (file + "-recovered" + ext)).string(), recovered, 8);
    io::write_image_channels((std::filesystem::path(a.out) / (file + "-total-variation" + ext)).string(), with_tv, 8);
    io::write_image_channels((std::filesystem::path(a.out) / (file + "-nonlocal" + ext)).string(), with_nl, 8);
    io::MontageRow row{fmt::format("{}: PSNR {:.1f} -> {:.1f} dB, lambda {:.2g} ({}{}); total variation {:.1f} dB; "
                                   "nonlocal {:.1f} dB",
                                   c.name, before, after, r.lambda, rule, r.robust ? ", robust" : "", after_tv, after_nl),
                       {}};
    row.tiles.push_back(std::move(truth));
    row.tiles.push_back(std::move(g));
    row.tiles.push_back(io::Image{Matrix<double>::copy_of(recovered.pixels.view()), recovered.channels});
    row.tiles.push_back(io::Image{Matrix<double>::copy_of(with_tv.pixels.view()), with_tv.channels});
    row.tiles.push_back(io::Image{Matrix<double>::copy_of(with_nl.pixels.view()), with_nl.channels});
    rows.push_back(std::move(row));
  }
  // a PGM holds grey only: without libpng the colour montage is written as .npy
  const std::string montage_path =
      (std::filesystem::path(a.out) / (io::have_png_support() ? "montage.png" : "montage.npy")).string();
  io::write_image_channels(montage_path, io::montage(rows, {.column_titles = {"truth", "degraded", "recovered by linv (Tikhonov)", "total variation", "nonlocal"}}), 8);
  if (!a.quiet)
    std::printf("\nImages in %s/; %s shows each case as truth | degraded | recovered | total variation | nonlocal. "
                "Try:\n"
                "  linv degrade photo.png -o g.png --psf disk:radius=3 --noise gaussian:var=0.0001 --crop 16 --truth f.png\n"
                "  linv deblur g.png -o r.png --psf disk:radius=3 --truth f.png [--prior tikhonov|tv|nonlocal]\n",
                a.out.c_str(), montage_path.c_str());
}

const Command kCommands[] = {
    {"", "gen", "Generate a test matrix of a given kind",
     [](CLI::App& cmd) {
       auto a = std::make_shared<GenArgs>();
       cmd.add_option("--kind", a->kind, "random, spd, band, hollow, sparse, identity, illcond or singular")
           ->capture_default_str();
       cmd.add_option("-n", a->n, "Size (n x n)")->check(whole(0));
       cmd.add_option("--cond", a->cond, "Condition number for spd (default 1e3) and illcond (default 1e12)")
           ->check(at_least(1));
       cmd.add_option("--seed", a->seed, "Random seed (the same seed gives the same matrix)")->capture_default_str();
       cmd.add_option("--dtype", a->dtype, "f32 or f64")->capture_default_str()->check(CLI::IsMember({"f32", "f64"}));
       output(cmd.add_option("-o,--output", a->output,
                             "Where to write the matrix (.npy, .npz[:name], .mtx, .mat[:variable])"),
              io::OutputKind::matrix);
       cmd.add_flag("-q,--quiet")->description("Print nothing on success (gen prints nothing in any case)");
       cmd.require_subcommand(0, 1);
       cmd.callback([a, &cmd] {
         if (cmd.get_subcommands().empty()) run_gen(*a);
       });
     }},
    {"gen", "jacobian",
     "A bordered SLAM Jacobian: one dense column, then segment columns each nonzero on one contiguous run of rows",
     [](CLI::App& cmd) {
       auto j = std::make_shared<JacobianArgs>();
       cmd.add_option("--rows", j->rows, "Residual rows n")->required()->check(whole(1));
       cmd.add_option("--cols", j->cols, "Parameters m (1 dense + m - 1 segments), m <= rows + 1")
           ->required()
           ->check(whole(2, 1 << 30));
       cmd.add_option("--seed", j->seed, "Random seed")->capture_default_str();
       output(cmd.add_option("-o,--output", j->output, "Where to write J (.npy, .mtx; dense storage)"),
              io::OutputKind::matrix)->required();
       cmd.add_flag("-q,--quiet")->description("Print nothing on success (gen prints nothing in any case)");
       cmd.callback([j] { run_gen_jacobian(*j); });
     }},
    {"", "info", "Show the build (BLAS, CUDA, formats) and the GPUs linv can use",
     [](CLI::App& cmd) { cmd.callback([] { run_info(); }); }},
    {"", "demo",
     "linv's main job on built-in images: deblur the Shepp-Logan phantom six ways and a photograph, with PSNR and a "
     "labelled montage",
     [](CLI::App& cmd) {
       auto a = std::make_shared<DemoArgs>();
       cmd.add_option("--size", a->size, "Phantom size (n x n pixels, an n^2 x n^2 system)")
           ->capture_default_str()
           ->check(whole(4, 96));
       output(cmd.add_option("-o,--output,--out", a->out, "Folder for the images and the montage"),
              io::OutputKind::directory)->capture_default_str();
       cmd.add_option("--seed", a->seed, "Noise seed")->capture_default_str();
       cmd.add_option("--device", a->device, "auto (a GPU when one is usable, else the CPU), cpu, cuda or cuda:N")
           ->capture_default_str();
       cmd.add_flag("-q,--quiet", a->quiet, "Print nothing on success (the images are written all the same)");
       cmd.callback([a] { run_demo(*a); });
     }},
};

}  // namespace

std::span<const Command> misc_commands() { return kCommands; }

}  // namespace linv::cli
