// linv omp, linv ksvd and linv gen fmri: sparse coding, dictionary learning and synthetic data for fMRI.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>

#include "common.hpp"

namespace linv::cli {
namespace {

struct OmpArgs {
  std::string x, d, codes;
  index sparsity = 0;
  double tolerance = 0;
  CommonOptions common;
};

template <Real T>
void omp_typed(const OmpArgs& a, const Matrix<T>& X, const Matrix<T>& D) {
  const auto start = std::chrono::steady_clock::now();
  const fmri::SparseCodes<T> codes = fmri::batch_omp<T>(D.view(), X.view(), {.sparsity = a.sparsity, .tolerance = a.tolerance});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  io::write_matrix<T>(a.codes, codes.to_dense().view());  // .mtx: coordinate form, the codes being sparse
  double used = 0;
  for (index c : codes.count) used += static_cast<double>(c);
  const double mean = codes.signals > 0 ? used / static_cast<double>(codes.signals) : 0.0;
  write_report(a.common, {{"command", "omp"},
                          {"inputs", {{"X", a.x}, {"D", a.d}}},
                          {"output", a.codes},
                          {"precision", type_name<T>()},
                          {"sparsity", a.sparsity},
                          {"tolerance", a.tolerance},
                          {"mean_atoms_per_signal", mean},
                          {"seconds", seconds},
                          {"linv_version", build_info().version}});
  if (!a.common.quiet)
    std::printf("omp: %lld signals over %lld atoms, %s | at most %lld atoms each, %.2f on average | %.4f s -> %s\n",
                static_cast<long long>(codes.signals), static_cast<long long>(codes.atoms), type_name<T>(),
                static_cast<long long>(a.sparsity), mean, seconds, a.codes.c_str());
}

void run_omp(const OmpArgs& a) {
  if (a.common.device != "auto" && a.common.device != "cpu")
    throw InvalidArgument("omp runs on the CPU only in this version: use --device cpu (or auto)");
  io::AnyMatrix X = io::read_matrix(a.x), D = io::read_matrix(a.d);
  const Compute c = compute_type(a.common.precision, {dtype_of(X), dtype_of(D)});
  if (c == Compute::mixed) throw InvalidArgument("omp has no mixed-precision variant: use --precision single or double");
  if (c == Compute::f32)
    omp_typed<float>(a, as<float>(std::move(X), c), as<float>(std::move(D), c));
  else
    omp_typed<double>(a, as<double>(std::move(X), c), as<double>(std::move(D), c));
}

struct KsvdArgs {
  std::string x, dictionary, codes, initial;
  index atoms = 0, sparsity = 0;
  int iterations = 10;
  bool approximate = false, no_clear = false;
  std::uint64_t seed = 0;
  CommonOptions common;
};

template <Real T>
void ksvd_typed(const KsvdArgs& a, const Matrix<T>& X) {
  std::optional<Matrix<T>> initial;
  if (!a.initial.empty()) initial = io::convert<T>(io::read_matrix(a.initial), /*allow_narrowing=*/std::is_same_v<T, float>);
  const auto start = std::chrono::steady_clock::now();
  // progress on stderr, one line per iteration, when not quiet and the run is long enough to want it
  std::function<void(int, double)> progress;
  if (!a.common.quiet)
    progress = [&](int iteration, double rmse) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (elapsed > 2) std::fprintf(stderr, "ksvd: iteration %d/%d, RMSE %.4g, %.1f s\n", iteration, a.iterations, rmse, elapsed);
    };
  const fmri::KsvdResult<T> r = fmri::ksvd<T>(X.view(),
                                              {.atoms = a.atoms,
                                               .sparsity = a.sparsity,
                                               .iterations = a.iterations,
                                               .exact = !a.approximate,
                                               .seed = a.seed,
                                               .clear = !a.no_clear,
                                               .progress = progress},
                                              initial ? &*initial : nullptr);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  io::write_matrix<T>(a.dictionary, r.dictionary.view());
  io::write_matrix<T>(a.codes, r.codes.to_dense().view());
  write_report(a.common, {{"command", "ksvd"},
                          {"inputs", {{"X", a.x}}},
                          {"outputs", {{"dictionary", a.dictionary}, {"codes", a.codes}}},
                          {"precision", type_name<T>()},
                          {"atoms", a.atoms},
                          {"sparsity", a.sparsity},
                          {"iterations", a.iterations},
                          {"variant", a.approximate ? "approximate" : "exact"},
                          {"seed", a.seed},
                          {"rmse", r.rmse},
                          {"replaced_atoms", r.replaced},
                          {"seconds", seconds},
                          {"linv_version", build_info().version}});
  if (!a.common.quiet)
    std::printf("ksvd: %lld signals of %lld time points, %lld atoms, sparsity %lld | RMSE %.4g -> %.4g in %d "
                "iterations, %lld atoms replaced | %.3f s -> %s, %s\n",
                static_cast<long long>(X.cols()), static_cast<long long>(X.rows()), static_cast<long long>(a.atoms),
                static_cast<long long>(a.sparsity), r.rmse.front(), r.rmse.back(), a.iterations,
                static_cast<long long>(r.replaced), seconds, a.dictionary.c_str(), a.codes.c_str());
}

void run_ksvd(const KsvdArgs& a) {
  if (a.common.device != "auto" && a.common.device != "cpu")
    throw InvalidArgument("ksvd runs on the CPU only in this version: use --device cpu (or auto)");
  io::AnyMatrix X = io::read_matrix(a.x);
  const Compute c = compute_type(a.common.precision, {dtype_of(X)});
  if (c == Compute::mixed) throw InvalidArgument("ksvd has no mixed-precision variant: use --precision single or double");
  if (c == Compute::f32)
    ksvd_typed<float>(a, as<float>(std::move(X), c));
  else
    ksvd_typed<double>(a, as<double>(std::move(X), c));
}

struct OmpBenchArgs {
  std::string sizes = "300x3600,600x7200,1500x18000,900x125000";  // time points x signals
  index atoms = 9, sparsity = 6;  // the thesis's
  int repeats = 3;
  std::string json;
};

// Times linv::fmri::batch_omp (G and D^T X included) on random data: D and X uniform in [-1, 1] (D's
// atoms normalised), generated here with the size as the seed.
void run_bench_omp(const OmpBenchArgs& a) {
  if (a.repeats < 1) throw InvalidArgument("--repeats must be at least 1");
  nlohmann::json out = bench_output(Device::cpu());
  for (const std::string& size : split(a.sizes)) {
    const auto x = size.find('x');
    if (x == std::string::npos) throw InvalidArgument(fmt::format("bad size '{}': expected TxN", size));
    const index T = std::stoll(size.substr(0, x)), N = std::stoll(size.substr(x + 1));
    Matrix<double> D = random_uniform<double>(T, a.atoms, static_cast<std::uint64_t>(T), -1.0, 1.0);
    for (index j = 0; j < a.atoms; ++j) {
      double norm = 0;
      for (index i = 0; i < T; ++i) norm += D(i, j) * D(i, j);
      for (index i = 0; i < T; ++i) D(i, j) /= std::sqrt(norm);
    }
    const Matrix<double> X = random_uniform<double>(T, N, static_cast<std::uint64_t>(N), -1.0, 1.0);
    fmri::SparseCodes<double> codes;
    const Timing t = time_repeats(a.repeats, codes, [&] {
      return fmri::batch_omp<double>(D.view(), X.view(), {.sparsity = a.sparsity});
    });
    out["rows"].push_back({{"time_points", T}, {"signals", N}, {"atoms", a.atoms}, {"sparsity", a.sparsity},
                           {"seconds", t.median}, {"seconds_all", t.all}});
    std::printf("omp T=%-5lld N=%-8lld K=%lld T0=%lld %9.4f s\n", static_cast<long long>(T), static_cast<long long>(N),
                static_cast<long long>(a.atoms), static_cast<long long>(a.sparsity), t.median);
    std::fflush(stdout);
  }
  if (!a.json.empty()) io::write_text(a.json, out.dump(2) + "\n");
}

struct GenFmriArgs {
  index time_points = 0, voxels = 0, sources = 0;
  std::string shape, output, truth;
  double snr_db = 10, tr = 2.0;
  std::uint64_t seed = 0;
};

void run_gen_fmri(const GenFmriArgs& a) {
  fmri::SyntheticOptions o{.time_points = a.time_points, .sources = a.sources, .snr_db = a.snr_db, .tr = a.tr,
                           .seed = a.seed};
  if (!a.shape.empty() == (a.voxels > 0))
    throw InvalidArgument("give the volume as --shape X,Y,Z or a line of --voxels N (one of them)");
  if (a.voxels > 0) {
    o.nx = a.voxels;
  } else {
    const std::vector<std::string> sides = split(a.shape);
    if (sides.size() != 3) throw InvalidArgument(fmt::format("--shape {}: expected X,Y,Z", a.shape));
    o.nx = std::stoll(sides[0]), o.ny = std::stoll(sides[1]), o.nz = std::stoll(sides[2]);
  }
  for (const std::string& path : {a.output, a.truth})
    if (path.ends_with(".nii") || path.ends_with(".nii.gz"))
      throw InvalidArgument(fmt::format("{}: NIfTI output is not in this version of linv; write .npy (or .mat)", path));
  if (!a.truth.empty() && !a.truth.ends_with(".npz"))
    throw InvalidArgument(fmt::format("--truth {}: the ground truth is written as a .npz (timecourses, maps)", a.truth));
  if (!a.truth.empty() && !io::have_npz_support())  // before anything is written
    throw InvalidArgument(fmt::format("--truth {}: linv was built without zlib, so it cannot write .npz files", a.truth));
  const fmri::SyntheticFmri s = fmri::synthetic_fmri(o);
  io::write_matrix<double>(a.output, s.data.view());
  if (!a.truth.empty())
    io::write_npz<double>(a.truth, {{"timecourses", s.timecourses.view()}, {"maps", s.maps.view()}});
  std::printf("gen fmri: %lld time points x %lld voxels (%lldx%lldx%lld), %lld sources, SNR %g dB -> %s%s\n",
              static_cast<long long>(o.time_points), static_cast<long long>(o.nx * o.ny * o.nz),
              static_cast<long long>(o.nx), static_cast<long long>(o.ny), static_cast<long long>(o.nz),
              static_cast<long long>(o.sources), o.snr_db, a.output.c_str(),
              a.truth.empty() ? "" : (", truth -> " + a.truth).c_str());
}

}  // namespace

void register_fmri_commands(CLI::App& app, CLI::App& bench) {
  {
    auto g = std::make_shared<GenFmriArgs>();
    CLI::App* cmd = app.get_subcommand("gen")->add_subcommand(
        "fmri", "Synthetic fMRI with ground truth: block and event designs through a canonical haemodynamic "
                "response, sparse smooth maps, Gaussian noise");
    cmd->add_option("--time", g->time_points, "Time points T")->required()->check(CLI::Range(2, 1 << 30));
    cmd->add_option("--voxels", g->voxels, "N voxels on a line (or --shape)")->check(CLI::PositiveNumber);
    cmd->add_option("--shape", g->shape, "The volume X,Y,Z (voxels in column-major order)");
    cmd->add_option("--sources", g->sources, "K sources (time course + map)")->required()->check(CLI::PositiveNumber);
    cmd->add_option("--snr", g->snr_db, "Signal-to-noise ratio in dB (inf: no noise)")->capture_default_str();
    cmd->add_option("--tr", g->tr, "Repetition time in seconds")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--seed", g->seed, "Random seed (the same seed gives the same data)")->capture_default_str();
    cmd->add_option("-o,--output", g->output, "Where to write X (T x N: .npy, .mtx, .mat)")->required();
    cmd->add_option("--truth", g->truth, "Where to write the truth: a .npz with 'timecourses' (T x K) and 'maps' (K x N)");
    cmd->callback([g] { run_gen_fmri(*g); });
  }
  {
    auto b = std::make_shared<OmpBenchArgs>();
    CLI::App* cmd = bench.add_subcommand("omp", "Time Batch-OMP on random data (median of repeats after a warm-up)");
    cmd->add_option("--sizes", b->sizes, "Comma-separated TxN (time points x signals)")->capture_default_str();
    cmd->add_option("--atoms", b->atoms, "K")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--sparsity", b->sparsity, "T0")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--repeats", b->repeats, "Timed runs per case")->capture_default_str();
    cmd->add_option("--json", b->json, "Write the rows as JSON here");
    cmd->callback([b] { run_bench_omp(*b); });
  }
  {
    auto a = std::make_shared<KsvdArgs>();
    CLI::App* cmd = app.add_subcommand("ksvd", "k-SVD dictionary learning: X ~ D G with D T x K (unit-norm atoms) and "
                                               "at most T0 nonzeros per column of G");
    cmd->add_option("X", a->x, "Signals, one per column (T x N: time points x voxels)")->required();
    cmd->add_option("-k,--atoms", a->atoms, "K, the number of atoms")->required()->check(CLI::PositiveNumber);
    cmd->add_option("--sparsity", a->sparsity, "T0: atoms per signal at most")->required()->check(CLI::PositiveNumber);
    cmd->add_option("--iters", a->iterations, "Iterations (sparse coding + dictionary update)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--dictionary", a->dictionary, "Where to write D (T x K)")->required();
    cmd->add_option("--codes", a->codes, "Where to write G (K x N): dense .npy, or sparse Matrix Market (.mtx)")
        ->required();
    cmd->add_option("--initial", a->initial, "A T x K dictionary to start from (default: K random signals)");
    cmd->add_flag("--approximate", a->approximate, "One power step per atom instead of its exact rank-1 SVD");
    cmd->add_flag("--no-clear", a->no_clear, "Do not replace coherent or rarely used atoms between iterations");
    cmd->add_option("--seed", a->seed, "Seed of the initial dictionary and of the atom orders")->capture_default_str();
    add_common_options(*cmd, a->common);
    cmd->callback([a] { run_ksvd(*a); });
  }
  {
    auto a = std::make_shared<OmpArgs>();
    CLI::App* cmd = app.add_subcommand("omp", "Batch-OMP: sparse codes G (K x N, at most T0 nonzeros per column) with X ~ D G");
    cmd->add_option("X", a->x, "Signals, one per column (T x N: time points x voxels)")->required();
    cmd->add_option("D", a->d, "Dictionary, one atom per column (T x K)")->required();
    cmd->add_option("--sparsity", a->sparsity, "T0: atoms per signal at most")->required()->check(CLI::PositiveNumber);
    cmd->add_option("--tol", a->tolerance, "Also stop a signal once its squared residual norm is at most this (0: never)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--codes", a->codes, "Where to write G: dense .npy, or sparse Matrix Market when it ends in .mtx")
        ->required();
    add_common_options(*cmd, a->common);
    cmd->callback([a] { run_omp(*a); });
  }
}

}  // namespace linv::cli
