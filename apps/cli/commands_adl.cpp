// linv adl and linv bench adl: atom-assisted dictionary learning for fMRI (include/linv/adl.hpp).
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>

#include "common.hpp"

namespace linv::cli {
namespace {

struct AdlArgs {
  std::string x, task, initial, dictionary, codes, mask, maps;
  index atoms = 10;
  double lambda = std::numeric_limits<double>::quiet_NaN();
  double c = std::numeric_limits<double>::quiet_NaN(), c_d = 1, tolerance = 0;
  int iterations = 200, coefficient_steps = 20, dictionary_steps = 20;
  std::uint64_t seed = 0;
  bool distributed = false;  // one process of an MPI job, holding some of the voxels
  std::string devices;       // "cuda:0,cuda:1": a job of one process per device, started by linv
  CommonOptions common;
};

template <Real T>
std::optional<Matrix<T>> read_optional(const std::string& path, Compute c) {
  if (path.empty()) return std::nullopt;
  return as<T>(io::read_matrix(path), c);
}

// One process's run: all of X, or with a grid this process's voxels (host_X), the root writing the results.
template <Real T>
void adl_typed(const AdlArgs& a, const Matrix<T>& host_X, const std::optional<io::FmriImage>& image, Compute c,
               const dist::Grid* grid) {
  std::optional<Matrix<T>> task, initial;
  Matrix<T> X_copy;  // on a GPU only
  ConstMatrixView<T> X;
  const Device device = grid ? grid->device() : device_for(a.common, Operation::Adl, host_X.cols());
  const auto prepare = [&] {
    task = read_optional<T>(a.task, c), initial = read_optional<T>(a.initial, c);
    X = placed(host_X.view(), device, X_copy);
  };
  grid ? grid->together(prepare) : prepare();
  const bool root = !grid || grid->is_root();
  const fmri::AdlOptions options{.atoms = a.atoms,
                                 .lambda = a.lambda,
                                 .max_iterations = a.iterations,
                                 .coefficient_steps = a.coefficient_steps,
                                 .dictionary_steps = a.dictionary_steps,
                                 .c = a.c,
                                 .c_d = a.c_d,
                                 .tolerance = a.tolerance,
                                 .seed = a.seed,
                                 .progress = root ? progress_line(a.common, "adl", "objective", a.iterations) : nullptr};
  const ConstMatrixView<T> task_view = task ? task->view() : ConstMatrixView<T>{};
  const fmri::AdlResult<T> r = grid ? dist::adl<T>(*grid, X, options, task_view, initial ? &*initial : nullptr)
                                    : fmri::adl<T>(X, options, task_view, initial ? &*initial : nullptr);
  const Matrix<T> dictionary = r.dictionary.to(Device::cpu());
  const Matrix<T> codes = grid ? dist::gather_columns<T>(*grid, r.codes.view()) : r.codes.to(Device::cpu());
  if (!root) return;
  io::write_matrix<T>(a.dictionary, dictionary.view());
  io::write_sparse<T>(a.codes, SparseMatrix<T>::from_dense(codes.view()));  // .mtx: coordinate form
  if (!a.maps.empty()) io::write_volumes<T>(a.maps, image->space, image->voxels, codes.view());  // one map per atom
  const index M = task ? task->cols() : 0;
  index nonzeros = 0;
  for (index e = 0; e < codes.size(); ++e) nonzeros += codes.data()[e] != T(0) ? 1 : 0;
  std::vector<std::pair<std::string, std::string>> inputs = {{"X", a.x}};
  if (!a.mask.empty()) inputs.emplace_back("mask", a.mask);
  if (task) inputs.emplace_back("task", a.task);
  if (initial) inputs.emplace_back("initial", a.initial);
  nlohmann::json j = report_json("adl", r.report, inputs, a.dictionary, X.rows(), codes.cols());
  if (grid) j["distributed"] = {{"processes", grid->size()}, {"job", grid->describe()}};
  j.update({{"outputs", {{"dictionary", a.dictionary}, {"codes", a.codes}, {"maps", a.maps}}}, {"atoms", a.atoms},
            {"assisted_atoms", M},
            {"lambda", r.lambda}, {"lambda_default", std::isnan(a.lambda)},
            {"c", M > 0 ? nlohmann::json(a.c) : nlohmann::json(nullptr)}, {"c_d", a.c_d},
            {"coefficient_steps", a.coefficient_steps}, {"dictionary_steps", a.dictionary_steps}, {"seed", a.seed},
            {"objective", r.objective},
            {"codes_nonzero_fraction", static_cast<double>(nonzeros) / static_cast<double>(codes.size())}});
  write_report(a.common, j);
  if (!a.common.quiet)
    std::printf("adl: %lld voxels of %lld time points, %s on %s | %lld atoms (%lld assisted), lambda %.4g | objective "
                "%.6g -> %.6g in %d iterations (%s), %.1f %% of the codes nonzero | %.3f s -> %s, %s\n",
                static_cast<long long>(codes.cols()), static_cast<long long>(X.rows()), type_name<T>(),
                grid ? fmt::format("{} processes on {}", grid->size(), device.is_cuda() ? "GPUs" : "CPUs").c_str()
                     : device.name().c_str(),
                static_cast<long long>(a.atoms), static_cast<long long>(M), r.lambda, r.objective.front(),
                r.objective.back(), r.report.iterations, std::string(to_string(r.report.stop)).c_str(),
                100.0 * static_cast<double>(nonzeros) / static_cast<double>(codes.size()), r.report.seconds,
                a.dictionary.c_str(), a.codes.c_str());
}

void run_adl(const AdlArgs& a) {
  if (!a.task.empty() && std::isnan(a.c))
    throw InvalidArgument("--task needs --c, the squared distance each assisted atom may keep from its time course");
  if (a.task.empty() && !std::isnan(a.c)) throw InvalidArgument("--c applies to assisted atoms: give their --task too");
  require_nifti_for_maps(a.maps, a.x);
  // with a job, each process reads its own voxels (its columns of X) and the job fits them together
  const std::optional<dist::Grid> grid = optional_job({a.distributed, a.devices, "", a.common.device}, "adl");
  FitInput in = read_fit_input(a.x, a.mask, a.common.precision, grid ? &*grid : nullptr, "adl");
  with_type(in.compute, [&]<Real T>() {
    adl_typed<T>(a, as<T>(std::move(in.signals.X), in.compute), in.signals.image, in.compute,
                 grid ? &*grid : nullptr);
  });
}

struct AdlBenchArgs {
  BenchOptions bench{"cpu", 3, ""};
  std::string sizes = "274x20000,274x200000";  // time points x voxels
  index atoms = 10;
  int iterations = 10, coefficient_steps = 20, dictionary_steps = 20;
  std::string precision = "double";
  bool distributed = false;
  std::string devices;
};

// Times linv::fmri::adl on random data (X uniform in [-1, 1], generated where it is used with the size as
// the seed; the default lambda; a seeded random start). The time covers the whole call, which returns
// when the result is complete: the one pass for ||X||_F and the start, then the outer iterations. With a
// grid each process makes the whole X on its device and fits its share of the columns (dist::adl), so the
// job fits the same X as one process; process 0 reports.
template <Real T>
void bench_adl_typed(const AdlBenchArgs& a, Device device, const dist::Grid* grid) {
  nlohmann::json out = bench_output(device);
  const bool root = !grid || grid->is_root();
  for (const std::string& size : split(a.sizes)) {
    const std::vector<index> dims = parse_dims(size, "TxN");
    const index rows = dims[0], N = dims[1];
    Matrix<T> X;
    if (grid)
      grid->together([&] { X = random_uniform<T>(rows, N, static_cast<std::uint64_t>(N), T(-1), T(1), device); });
    else
      X = random_uniform<T>(rows, N, static_cast<std::uint64_t>(N), T(-1), T(1), device);
    const int part = grid ? grid->rank() : 0, parts = grid ? grid->size() : 1;
    const index first = N * part / parts, end = N * (part + 1) / parts;
    const ConstMatrixView<T> mine = X.view().block(0, first, rows, end - first);
    const fmri::AdlOptions options{.atoms = a.atoms,
                                   .max_iterations = a.iterations,
                                   .coefficient_steps = a.coefficient_steps,
                                   .dictionary_steps = a.dictionary_steps,
                                   .seed = 1};
    fmri::AdlResult<T> r;
    const Timing t = time_repeats(a.bench.repeats, r, [&] {
      return grid ? dist::adl<T>(*grid, mine, options) : fmri::adl<T>(X.view(), options);
    });
    const double per_iteration = t.median / std::max(1, a.iterations);
    out["rows"].push_back({{"time_points", rows}, {"voxels", N}, {"atoms", a.atoms}, {"precision", type_name<T>()},
                           {"iterations", a.iterations}, {"coefficient_steps", a.coefficient_steps},
                           {"dictionary_steps", a.dictionary_steps}, {"seconds", t.median}, {"seconds_all", t.all},
                           {"seconds_per_iteration", per_iteration}, {"initial_objective", r.objective.front()},
                           {"final_objective", r.objective.back()}, {"processes", parts}});
    if (root)
      std::printf("adl %s%s T=%-5lld N=%-8lld K=%lld %s %d iterations (Ts=%d, Td=%d) %9.4f s, %.4f s per iteration\n",
                  device.name().c_str(), grid ? fmt::format(" x {} processes", parts).c_str() : "",
                  static_cast<long long>(rows), static_cast<long long>(N), static_cast<long long>(a.atoms),
                  type_name<T>(), a.iterations, a.coefficient_steps, a.dictionary_steps, t.median, per_iteration);
  }
  if (root) write_bench(a.bench, out);
}

const Command kCommands[] = {
    {"bench", "adl", "Time ADL dictionary learning on random data (median of repeats after a warm-up)",
     [](CLI::App& cmd) {
       auto b = std::make_shared<AdlBenchArgs>();
       add_bench_options(cmd, b->bench);
       cmd.add_option("--sizes", b->sizes, "Comma-separated TxN (time points x voxels)")->capture_default_str();
       cmd.add_option("-k,--atoms", b->atoms, "K")->capture_default_str()->check(whole(1));
       cmd.add_option("--iters", b->iterations, "Outer iterations per run")
           ->capture_default_str()
           ->check(whole(1));
       cmd.add_option("--inner-s", b->coefficient_steps, "Coefficient steps per iteration (Ts)")
           ->capture_default_str()
           ->check(whole(1));
       cmd.add_option("--inner-d", b->dictionary_steps, "Dictionary steps per iteration (Td)")
           ->capture_default_str()
           ->check(whole(1));
       cmd.add_option("--precision", b->precision, "single or double")
           ->capture_default_str()
           ->check(CLI::IsMember({"single", "double"}));
       cmd.add_flag("--distributed", b->distributed,
                    "Run as one process of an MPI job (mpirun -np N linv bench adl --distributed): the voxels dealt "
                    "out over the processes, each on --device (cpu or cuda)");
       cmd.add_option("--devices", b->devices,
                      "Deal the voxels out over these devices of this machine, one process each, started by linv: "
                      "e.g. cuda:0,cuda:1");
       cmd.callback([b] {
         const std::optional<dist::Grid> grid =
             optional_job({b->distributed, b->devices, "", b->distributed ? b->bench.device : "auto"}, "bench adl");
         const Device device = grid ? grid->device() : Device::parse(b->bench.device);
         with_type_named(b->precision, [&]<Real T>() { bench_adl_typed<T>(*b, device, grid ? &*grid : nullptr); });
       });
     }},
    {"", "adl",
     "Atom-assisted dictionary learning: X ~ D S minimising ||X - D S||_F^2 + lambda ||S||_1, with the first M atoms "
     "within sqrt(c) of given time courses and the others of norm at most sqrt(c_d)",
     [](CLI::App& cmd) {
       auto a = std::make_shared<AdlArgs>();
       input(cmd.add_option("X", a->x,
                      "Data, one voxel per column (T x N: time points x voxels): .npy, .mtx, .mat, or a 4-D NIfTI "
                      "image (.nii, .nii.gz)"))
           ->required();
       add_nifti_options(cmd, a->mask, &a->maps);
       cmd.add_option("-k,--atoms", a->atoms, "K, the number of atoms")->capture_default_str()->check(whole(1));
       cmd.add_option("--lambda", a->lambda,
                      "Sparsity weight (default: 0.5 * ||X||_F / sqrt(T N), half the root mean square of X)")
           ->check(at_least(0));
       input(cmd.add_option("--task", a->task,
                      "T x M time courses (e.g. designs convolved with the HRF) that the first M atoms stay near"));
       cmd.add_option("--c", a->c, "Squared distance each assisted atom may keep from its time course (with --task)")
           ->check(above(0));
       cmd.add_option("--cd", a->c_d, "Squared norm of the free atoms at most")
           ->capture_default_str()
           ->check(above(0));
       cmd.add_option("--max-iter,--iters", a->iterations,
                      "Outer iterations at most (coefficient steps, then dictionary steps; all of them without --tol)")
           ->capture_default_str()
           ->check(whole(0));
       cmd.add_option("--inner-s", a->coefficient_steps, "Coefficient steps per iteration (Ts)")
           ->capture_default_str()
           ->check(whole(1));
       cmd.add_option("--inner-d", a->dictionary_steps, "Dictionary steps per iteration (Td)")
           ->capture_default_str()
           ->check(whole(1));
       cmd.add_option("--tol", a->tolerance,
                      "Stop once an iteration lowers the objective by at most this fraction of it (0: run all iterations)")
           ->capture_default_str()
           ->check(at_least(0));
       cmd.add_option("--seed", a->seed, "Seed of the random normal initial dictionary")->capture_default_str();
       input(cmd.add_option("--initial", a->initial, "A T x K dictionary to start from instead (projected onto the constraints)"));
       output(cmd.add_option("--dictionary", a->dictionary, "Where to write D (T x K, the assisted atoms first)"),
              io::OutputKind::matrix)->required();
       output(cmd.add_option("--codes", a->codes,
                             "Where to write S (K x N): dense .npy, or sparse Matrix Market (.mtx)"),
              io::OutputKind::matrix)
           ->required();
       cmd.add_flag("--distributed", a->distributed,
                    "Run as one process of an MPI job (mpirun -np N linv adl ... --distributed [--device cuda]): the "
                    "voxels are dealt out in consecutive parts, each process reads only its columns of X (from a "
                    ".npy; other files are read whole) and the sums over voxels are added over the processes (NCCL "
                    "between GPUs); process 0 writes D, the codes and the report");
       cmd.add_option("--devices", a->devices,
                      "Deal the voxels out over these devices of this machine, one process each, started by linv (no "
                      "MPI needed): e.g. cuda:0,cuda:1");
       add_common_options(cmd, a->common);
       cmd.footer("The codes start at zero; the initial dictionary (random normal, or --initial) is first projected onto "
                  "the constraints. The report (--report) holds the objective at the start and after each iteration.");
       cmd.callback([a] { run_adl(*a); });
     }},
};

}  // namespace

std::span<const Command> adl_commands() { return kCommands; }

}  // namespace linv::cli
