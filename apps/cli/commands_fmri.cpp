// linv omp, linv ksvd and linv gen fmri: sparse coding, dictionary learning and synthetic data for fMRI.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "common.hpp"

namespace linv::cli {
namespace {

struct OmpArgs {
  std::string x, d, codes, mask;
  index sparsity = 0;
  double tolerance = 0;
  CommonOptions common;
};

template <Real T>
void omp_typed(const OmpArgs& a, const Matrix<T>& X, const Matrix<T>& D) {
  const Device device = device_for(a.common, Operation::SparseCoding, X.cols());
  const auto start = std::chrono::steady_clock::now();
  Matrix<T> X_copy, D_copy;  // on a GPU only (timed: part of the run)
  const fmri::SparseCodes<T> codes = fmri::batch_omp<T>(placed(D.view(), device, D_copy), placed(X.view(), device, X_copy),
                                                        {.sparsity = a.sparsity, .tolerance = a.tolerance});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  io::write_sparse<T>(a.codes, SparseMatrix<T>::from_dense(codes.to_dense().view()));  // .mtx: coordinate form
  double used = 0;
  for (index c : codes.count) used += static_cast<double>(c);
  const double mean = codes.signals > 0 ? used / static_cast<double>(codes.signals) : 0.0;
  write_report(a.common, {{"command", "omp"},
                          {"inputs", {{"X", a.x}, {"D", a.d}}},
                          {"outputs", {{"codes", a.codes}}},
                          {"device", device.name()},
                          {"precision", type_name<T>()},
                          {"sparsity", a.sparsity},
                          {"tolerance", a.tolerance},
                          {"mean_atoms_per_signal", mean},
                          {"seconds", seconds},
                          {"linv_version", build_info().version}});
  if (!a.common.quiet)
    std::printf("omp: %lld signals over %lld atoms, %s on %s | at most %lld atoms each, %.2f on average | %.4f s -> %s\n",
                static_cast<long long>(codes.signals), static_cast<long long>(codes.atoms), type_name<T>(),
                device.name().c_str(), static_cast<long long>(a.sparsity), mean, seconds, a.codes.c_str());
}

void run_omp(const OmpArgs& a) {
  io::AnyMatrix X = read_signals(a.x, a.mask).X, D = io::read_matrix(a.d);
  const Compute c = compute_type(a.common.precision, {dtype_of(X), dtype_of(D)});
  refuse_mixed(c, "omp");
  with_type(c, [&]<Real T>() { omp_typed<T>(a, as<T>(std::move(X), c), as<T>(std::move(D), c)); });
}

struct KsvdArgs {
  std::string x, dictionary, codes, initial, mask, maps;
  index atoms = 0, sparsity = 0;
  int iterations = 10;
  bool approximate = false, no_clear = false;
  std::uint64_t seed = 0;
  bool distributed = false;  // one process of an MPI job, holding some of the signals
  std::string devices;       // "cuda:0,cuda:1": a job of one process per device, started by linv
  CommonOptions common;
};

// One process's run: all of X, or with a grid this process's signals (host_X), the root writing the results.
template <Real T>
void ksvd_typed(const KsvdArgs& a, const Matrix<T>& host_X, const std::optional<io::FmriImage>& image, Compute c,
                const dist::Grid* grid) {
  std::optional<Matrix<T>> initial;
  Matrix<T> X_copy;  // on a GPU only; the dictionary comes back on X's device
  ConstMatrixView<T> X;
  const Device device = grid ? grid->device() : device_for(a.common, Operation::Ksvd, host_X.cols());
  const auto prepare = [&] {
    if (!a.initial.empty()) initial = as<T>(io::read_matrix(a.initial), c);
    X = placed(host_X.view(), device, X_copy);
  };
  grid ? grid->together(prepare) : prepare();
  const bool root = !grid || grid->is_root();
  const fmri::KsvdOptions options{.atoms = a.atoms,
                                  .sparsity = a.sparsity,
                                  .iterations = a.iterations,
                                  .exact = !a.approximate,
                                  .seed = a.seed,
                                  .clear = !a.no_clear,
                                  .progress = root ? progress_line(a.common, "ksvd", "RMSE", a.iterations) : nullptr};
  const fmri::KsvdResult<T> r = grid ? dist::ksvd<T>(*grid, X, options, initial ? &*initial : nullptr)
                                     : fmri::ksvd<T>(X, options, initial ? &*initial : nullptr);
  const Matrix<T> dictionary = r.dictionary.to(Device::cpu());
  const Matrix<T> codes = grid ? dist::gather_columns<T>(*grid, r.codes.to_dense().view()) : r.codes.to_dense();
  if (!root) return;
  io::write_matrix<T>(a.dictionary, dictionary.view());
  io::write_sparse<T>(a.codes, SparseMatrix<T>::from_dense(codes.view()));  // .mtx: coordinate form
  if (!a.maps.empty()) io::write_volumes<T>(a.maps, image->space, image->voxels, codes.view());  // one map per atom
  nlohmann::json j = report_json("ksvd", r.report, {{"X", a.x}, {"mask", a.mask}}, a.dictionary, X.rows(), a.atoms);
  if (grid) j["distributed"] = {{"processes", grid->size()}, {"job", grid->describe()}};
  j.update({{"outputs", {{"dictionary", a.dictionary}, {"codes", a.codes}, {"maps", a.maps}}},
            {"atoms", a.atoms}, {"sparsity", a.sparsity}, {"variant", a.approximate ? "approximate" : "exact"},
            {"seed", a.seed}, {"rmse", r.rmse}, {"replaced_atoms", r.replaced}});
  write_report(a.common, j);
  if (!a.common.quiet)
    std::printf("ksvd: %lld signals of %lld time points, %lld atoms, sparsity %lld, %s on %s | RMSE %.4g -> %.4g in "
                "%d iterations, %lld atoms replaced | %.3f s -> %s, %s\n",
                static_cast<long long>(codes.cols()), static_cast<long long>(X.rows()), static_cast<long long>(a.atoms),
                static_cast<long long>(a.sparsity), type_name<T>(),
                grid ? fmt::format("{} processes on {}", grid->size(), device.is_cuda() ? "GPUs" : "CPUs").c_str()
                     : device.name().c_str(),
                r.rmse.front(),
                r.rmse.back(), a.iterations, static_cast<long long>(r.replaced), r.report.seconds,
                a.dictionary.c_str(), a.codes.c_str());
}

void run_ksvd(const KsvdArgs& a) {
  require_nifti_for_maps(a.maps, a.x);  // --maps's own format: output()
  // with a job, each process reads its own signals (its columns of X) and the job fits them together
  const std::optional<dist::Grid> grid = optional_job({a.distributed, a.devices, "", a.common.device}, "ksvd");
  FitInput in = read_fit_input(a.x, a.mask, a.common.precision, grid ? &*grid : nullptr, "ksvd");
  with_type(in.compute, [&]<Real T>() {
    ksvd_typed<T>(a, as<T>(std::move(in.signals.X), in.compute), in.signals.image, in.compute,
                  grid ? &*grid : nullptr);
  });
}

struct OmpBenchArgs {
  BenchOptions bench{"cpu", 3, ""};
  std::string sizes = "300x3600,600x7200,1500x18000,900x125000";  // time points x signals
  index atoms = 9, sparsity = 6;  // the thesis's
  std::string precision = "double", kernel = "auto";
};

// A T x K dictionary of unit-norm atoms, uniform in [-1, 1] before normalising, on the host.
template <Real T>
Matrix<T> random_atoms(index rows, index atoms, std::uint64_t seed) {
  Matrix<T> D = random_uniform<T>(rows, atoms, seed, T(-1), T(1));
  for (index j = 0; j < atoms; ++j) {
    double norm = 0;
    for (index i = 0; i < rows; ++i) norm += static_cast<double>(D(i, j)) * D(i, j);
    for (index i = 0; i < rows; ++i) D(i, j) = static_cast<T>(D(i, j) / std::sqrt(norm));
  }
  return D;
}

fmri::OmpGpuKernel parse_kernel(const std::string& name) {
  if (name == "auto") return fmri::OmpGpuKernel::Auto;
  if (name == "thread") return fmri::OmpGpuKernel::Thread;
  if (name == "warp") return fmri::OmpGpuKernel::Warp;
  throw InvalidArgument(fmt::format("unknown OMP kernel '{}': expected auto, thread or warp", name));
}

// Times Batch-OMP (G and D^T X included, the codes delivered to host memory) on random data: D and X
// uniform in [-1, 1] (D's atoms normalised), generated on the device with the size as the seed.
template <Real T>
void bench_omp_typed(const OmpBenchArgs& a, Device device) {
  nlohmann::json out = bench_output(device);
  const fmri::OmpGpuKernel kernel = parse_kernel(a.kernel);
  if (device.is_cpu() && kernel != fmri::OmpGpuKernel::Auto) throw InvalidArgument("--kernel picks a GPU kernel: add --device cuda");
  for (const std::string& size : split(a.sizes)) {
    const std::vector<index> dims = parse_dims(size, "TxN");
    const index rows = dims[0], N = dims[1];
    const Matrix<T> D = random_atoms<T>(rows, a.atoms, static_cast<std::uint64_t>(rows)).to(device);
    const Matrix<T> X = random_uniform<T>(rows, N, static_cast<std::uint64_t>(N), T(-1), T(1), device);
    fmri::SparseCodes<T> codes;
    const Timing t = time_repeats(a.bench.repeats, codes, [&] {
      return fmri::batch_omp<T>(D.view(), X.view(), {.sparsity = a.sparsity, .gpu_kernel = kernel});
    });
    out["rows"].push_back({{"time_points", rows}, {"signals", N}, {"atoms", a.atoms}, {"sparsity", a.sparsity},
                           {"precision", type_name<T>()}, {"kernel", a.kernel}, {"seconds", t.median},
                           {"seconds_all", t.all}});
    std::printf("omp %s T=%-5lld N=%-8lld K=%lld T0=%lld %s %9.5f s\n", type_name<T>(), static_cast<long long>(rows),
                static_cast<long long>(N), static_cast<long long>(a.atoms), static_cast<long long>(a.sparsity),
                device.is_cpu() ? "cpu" : a.kernel.c_str(), t.median);
  }
  write_bench(a.bench, out);
}

struct KsvdBenchArgs {
  BenchOptions bench{"cuda", 3, ""};
  std::string sizes = "300x3600,450x5400,600x7200,1500x18000,900x125000,274x902629";  // the thesis's
  index atoms = 9, sparsity = 6;
  int iterations = 30;
  std::string precision = "single", variant = "approximate";
  bool distributed = false;
  std::string devices;
};

// Times k-SVD end to end (initial dictionary, every iteration's coding and update, the final coding) on
// X uniform in [-1, 1] generated on the device, seeded by its size. With a grid each process makes the
// whole X on its device and fits its share of the signals (dist::ksvd), so the job fits the same X as one
// process; process 0 reports.
template <Real T>
void bench_ksvd_typed(const KsvdBenchArgs& a, Device device, const dist::Grid* grid) {
  nlohmann::json out = bench_output(device);
  const bool root = !grid || grid->is_root();
  const int part = grid ? grid->rank() : 0, parts = grid ? grid->size() : 1;
  for (const std::string& size : split(a.sizes)) {
    const std::vector<index> dims = parse_dims(size, "TxN");
    const index rows = dims[0], N = dims[1];
    Matrix<T> X;
    const auto make = [&] { X = random_uniform<T>(rows, N, static_cast<std::uint64_t>(N), T(-1), T(1), device); };
    grid ? grid->together(make) : make();
    const index first = N * part / parts, end = N * (part + 1) / parts;
    const ConstMatrixView<T> mine = X.view().block(0, first, rows, end - first);
    for (const std::string& variant : split(a.variant == "both" ? "approximate,exact" : a.variant)) {
      if (variant != "approximate" && variant != "exact")
        throw InvalidArgument(fmt::format("--variant {}: expected approximate, exact or both", variant));
      const fmri::KsvdOptions options{.atoms = a.atoms, .sparsity = a.sparsity, .iterations = a.iterations,
                                      .exact = variant == "exact", .seed = 1};
      fmri::KsvdResult<T> r;
      const Timing t = time_repeats(a.bench.repeats, r, [&] {
        return grid ? dist::ksvd<T>(*grid, mine, options) : fmri::ksvd<T>(X.view(), options);
      });
      out["rows"].push_back({{"time_points", rows}, {"signals", N}, {"atoms", a.atoms}, {"sparsity", a.sparsity},
                             {"iterations", a.iterations}, {"variant", variant}, {"precision", type_name<T>()},
                             {"rmse_first", r.rmse.front()}, {"rmse_last", r.rmse.back()}, {"seconds", t.median},
                             {"seconds_all", t.all}, {"processes", parts}});
      if (root)
        std::printf("ksvd %s%s %s %-11s T=%-5lld N=%-8lld K=%lld T0=%lld %d iterations %9.4f s (RMSE %.4g -> %.4g)\n",
                    device.name().c_str(), grid ? fmt::format(" x {} processes", parts).c_str() : "", type_name<T>(),
                    variant.c_str(), static_cast<long long>(rows), static_cast<long long>(N),
                    static_cast<long long>(a.atoms), static_cast<long long>(a.sparsity), a.iterations, t.median,
                    r.rmse.front(), r.rmse.back());
    }
  }
  if (root) write_bench(a.bench, out);
}

struct GenFmriArgs {
  index time_points = 0, voxels = 0, sources = 0;
  std::string shape, output, truth, truth_maps;
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
    o.nx = parse_count(sides[0], "--shape"), o.ny = parse_count(sides[1], "--shape"), o.nz = parse_count(sides[2], "--shape");
  }
  // Every refusal comes before anything is written.
  const bool nifti_data = io::is_nifti_path(a.output);
  if (io::is_nifti_path(a.truth))
    throw InvalidArgument(fmt::format("--truth {}: the ground truth is a .npz; write the maps as an image with "
                                      "--truth-maps maps.nii.gz",
                                      a.truth));
  if (!a.truth.empty() && !a.truth.ends_with(".npz"))
    throw InvalidArgument(fmt::format("--truth {}: the ground truth is written as a .npz (timecourses, maps)", a.truth));
  if (!a.truth.empty() && !io::have_npz_support())
    throw InvalidArgument(fmt::format("--truth {}: linv was built without zlib, so it cannot write .npz files", a.truth));
  if (!a.truth_maps.empty() && !io::is_nifti_path(a.truth_maps))
    throw InvalidArgument(fmt::format("--truth-maps {}: the maps are written as a NIfTI image (.nii or .nii.gz)",
                                      a.truth_maps));
  for (const std::string& path : {nifti_data ? a.output : std::string(), a.truth_maps}) {
    if (path.empty()) continue;
    if (a.voxels > 0)
      throw InvalidArgument(fmt::format("{}: a NIfTI image needs the volume's shape: give --shape X,Y,Z instead of "
                                        "--voxels",
                                        path));
    if (!io::have_nifti_support())
      throw InvalidArgument(fmt::format("{}: linv was built without NIfTI support (libnifti2); write .npy (or .mat)",
                                        path));
  }
  const fmri::SyntheticFmri s = fmri::synthetic_fmri(o);
  // The volumes on a 2 mm grid centred at the origin; the data one volume per time point, TR apart.
  io::NiftiSpace space;
  std::vector<index> voxels;
  if (nifti_data || !a.truth_maps.empty()) {
    space = io::NiftiSpace::grid(o.nx, o.ny, o.nz, 2.0, o.tr);
    space.descrip = fmt::format("linv gen fmri: synthetic, {} sources, SNR {} dB, seed {}", o.sources, o.snr_db, o.seed);
    voxels.resize(static_cast<std::size_t>(o.nx * o.ny * o.nz));
    for (std::size_t v = 0; v < voxels.size(); ++v) voxels[v] = static_cast<index>(v);
  }
  if (nifti_data)
    io::write_volumes<double>(a.output, space, voxels, s.data.view());
  else
    io::write_matrix<double>(a.output, s.data.view());
  if (!a.truth.empty())
    io::write_npz<double>(a.truth, {{"timecourses", s.timecourses.view()}, {"maps", s.maps.view()}});
  if (!a.truth_maps.empty()) {
    space.tr = 0;  // one map per source, not a time series
    io::write_volumes<double>(a.truth_maps, space, voxels, s.maps.view());
  }
  std::printf("gen fmri: %lld time points x %lld voxels (%lldx%lldx%lld), %lld sources, SNR %g dB -> %s%s%s\n",
              static_cast<long long>(o.time_points), static_cast<long long>(o.nx * o.ny * o.nz),
              static_cast<long long>(o.nx), static_cast<long long>(o.ny), static_cast<long long>(o.nz),
              static_cast<long long>(o.sources), o.snr_db, a.output.c_str(),
              a.truth.empty() ? "" : (", truth -> " + a.truth).c_str(),
              a.truth_maps.empty() ? "" : (", maps -> " + a.truth_maps).c_str());
}

const Command kCommands[] = {
    {"gen", "fmri",
     "Synthetic fMRI with ground truth: block and event designs through a canonical haemodynamic response, sparse "
     "smooth maps, Gaussian noise",
     [](CLI::App& cmd) {
       auto g = std::make_shared<GenFmriArgs>();
       cmd.add_option("--time", g->time_points, "Time points T")->required()->check(whole(2, 1 << 30));
       cmd.add_option("--voxels", g->voxels, "N voxels on a line (or --shape)")->check(whole(1));
       cmd.add_option("--shape", g->shape, "The volume X,Y,Z (voxels in column-major order)");
       cmd.add_option("--sources", g->sources, "K sources (time course + map)")->required()->check(whole(1));
       cmd.add_option("--snr", g->snr_db, "Signal-to-noise ratio in dB (inf: no noise)")
           ->capture_default_str()
           ->check(at_least(-HUGE_VAL));
       cmd.add_option("--tr", g->tr, "Repetition time in seconds")->capture_default_str()->check(above(0));
       cmd.add_option("--seed", g->seed, "Random seed (the same seed gives the same data)")->capture_default_str();
       cmd.add_option("-o,--output", g->output,
                      "Where to write X (T x N: .npy, .mtx, .mat; or .nii/.nii.gz, a 4-D image of T volumes on a 2 mm "
                      "grid with --shape)")
           ->each([](const std::string& spec) {
             io::check_output(spec, io::is_nifti_path(spec) ? io::OutputKind::nifti : io::OutputKind::matrix);
           })
           ->required();
       output(cmd.add_option("--truth", g->truth,
                             "Where to write the truth: a .npz with 'timecourses' (T x K) and 'maps' (K x N)"),
              io::OutputKind::text);  // its own checks say what it takes (a .npz; maps to --truth-maps)
       output(cmd.add_option("--truth-maps", g->truth_maps,
                             "Also write the K true maps as a NIfTI image (.nii/.nii.gz, one volume per source; needs --shape)"),
              io::OutputKind::nifti);
       cmd.callback([g] { run_gen_fmri(*g); });
     }},
    {"bench", "omp", "Time Batch-OMP on random data (median of repeats after a warm-up)",
     [](CLI::App& cmd) {
       auto b = std::make_shared<OmpBenchArgs>();
       add_bench_options(cmd, b->bench);
       cmd.add_option("--sizes", b->sizes, "Comma-separated TxN (time points x signals)")->capture_default_str();
       cmd.add_option("--atoms", b->atoms, "K")->capture_default_str()->check(whole(1));
       cmd.add_option("--sparsity", b->sparsity, "T0")->capture_default_str()->check(whole(1));
       cmd.add_option("--precision", b->precision, "single or double")->capture_default_str();
       cmd.add_option("--kernel", b->kernel, "GPU kernel: auto, thread (a thread per signal) or warp (a warp per signal)")
           ->capture_default_str();
       cmd.callback([b] {
         const Device device = Device::parse(b->bench.device);
         with_type_named(b->precision, [&]<Real T>() { bench_omp_typed<T>(*b, device); });
       });
     }},
    {"bench", "ksvd", "Time k-SVD end to end on random data (median of repeats after a warm-up)",
     [](CLI::App& cmd) {
       auto b = std::make_shared<KsvdBenchArgs>();
       add_bench_options(cmd, b->bench);
       cmd.add_option("--sizes", b->sizes, "Comma-separated TxN (time points x signals)")->capture_default_str();
       cmd.add_option("--atoms", b->atoms, "K")->capture_default_str()->check(whole(1));
       cmd.add_option("--sparsity", b->sparsity, "T0")->capture_default_str()->check(whole(1));
       cmd.add_option("--iters", b->iterations, "Iterations")->capture_default_str()->check(whole(0));
       cmd.add_option("--variant", b->variant, "approximate, exact or both")->capture_default_str();
       cmd.add_option("--precision", b->precision, "single or double")->capture_default_str();
       cmd.add_flag("--distributed", b->distributed,
                    "Run as one process of an MPI job (mpirun -np N linv bench ksvd --distributed): the signals dealt "
                    "out over the processes, each on --device (cpu or cuda)");
       cmd.add_option("--devices", b->devices,
                      "Deal the signals out over these devices of this machine, one process each, started by linv: "
                      "e.g. cuda:0,cuda:1");
       cmd.callback([b] {
         const std::optional<dist::Grid> grid =
             optional_job({b->distributed, b->devices, "", b->distributed ? b->bench.device : "auto"}, "bench ksvd");
         const Device device = grid ? grid->device() : Device::parse(b->bench.device);
         with_type_named(b->precision, [&]<Real T>() { bench_ksvd_typed<T>(*b, device, grid ? &*grid : nullptr); });
       });
     }},
    {"", "ksvd",
     "k-SVD dictionary learning: X ~ D G with D T x K (unit-norm atoms) and at most T0 nonzeros per column of G",
     [](CLI::App& cmd) {
       auto a = std::make_shared<KsvdArgs>();
       input(cmd.add_option("X", a->x,
                      "Signals, one per column (T x N: time points x voxels): .npy, .mtx, .mat, or a 4-D NIfTI image "
                      "(.nii, .nii.gz)"))
           ->required();
       add_nifti_options(cmd, a->mask, &a->maps);
       cmd.add_option("-k,--atoms", a->atoms, "K, the number of atoms")->required()->check(whole(1));
       cmd.add_option("--sparsity", a->sparsity, "T0: atoms per signal at most")->required()->check(whole(1));
       cmd.add_option("--max-iter,--iters", a->iterations, "Iterations (sparse coding + dictionary update)")
           ->capture_default_str()
           ->check(whole(0));
       output(cmd.add_option("--dictionary", a->dictionary,
                             "Where to write D (T x K)"), io::OutputKind::matrix)->required();
       output(cmd.add_option("--codes", a->codes,
                             "Where to write G (K x N): dense .npy, or sparse Matrix Market (.mtx)"),
              io::OutputKind::matrix)
           ->required();
       input(cmd.add_option("--initial", a->initial, "A T x K dictionary to start from (default: K random signals)"));
       cmd.add_flag("--approximate", a->approximate, "One power step per atom instead of its exact rank-1 SVD");
       cmd.add_flag("--no-clear", a->no_clear, "Do not replace coherent or rarely used atoms between iterations");
       cmd.add_option("--seed", a->seed, "Seed of the initial dictionary and of the atom orders")->capture_default_str();
       cmd.add_flag("--distributed", a->distributed,
                    "Run as one process of an MPI job (mpirun -np N linv ksvd ... --distributed [--device cuda]): the "
                    "signals are dealt out in consecutive parts, each process reads only its columns of X (from a "
                    ".npy; other files are read whole) and each atom update's sums over its users are added over the "
                    "processes (NCCL between GPUs); process 0 writes D, the codes, the maps and the report");
       cmd.add_option("--devices", a->devices,
                      "Deal the signals out over these devices of this machine, one process each, started by linv (no "
                      "MPI needed): e.g. cuda:0,cuda:1");
       add_common_options(cmd, a->common);
       cmd.callback([a] { run_ksvd(*a); });
     }},
    {"", "omp", "Batch-OMP: sparse codes G (K x N, at most T0 nonzeros per column) with X ~ D G",
     [](CLI::App& cmd) {
       auto a = std::make_shared<OmpArgs>();
       input(cmd.add_option("X", a->x,
                      "Signals, one per column (T x N: time points x voxels): .npy, .mtx, .mat, or a 4-D NIfTI image "
                      "(.nii, .nii.gz)"))
           ->required();
       input(cmd.add_option("D", a->d, "Dictionary, one atom per column (T x K)"))->required();
       add_nifti_options(cmd, a->mask);
       cmd.add_option("--sparsity", a->sparsity, "T0: atoms per signal at most")->required()->check(whole(1));
       cmd.add_option("--tol", a->tolerance, "Also stop a signal once its squared residual norm is at most this (0: never)")
           ->capture_default_str()
           ->check(at_least(0));
       output(cmd.add_option("-o,--output,--codes", a->codes,
                             "Where to write G: dense .npy, or sparse Matrix Market when it ends in .mtx"),
              io::OutputKind::matrix)
           ->required();
       add_common_options(cmd, a->common);
       cmd.callback([a] { run_omp(*a); });
     }},
};

}  // namespace

std::span<const Command> fmri_commands() { return kCommands; }

}  // namespace linv::cli
