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
  std::string x, task, initial, dictionary, codes;
  index atoms = 10;
  double lambda = std::numeric_limits<double>::quiet_NaN();
  double c = std::numeric_limits<double>::quiet_NaN(), c_d = 1, tolerance = 0;
  int iterations = 200, coefficient_steps = 20, dictionary_steps = 20;
  std::uint64_t seed = 0;
  CommonOptions common;
};

template <Real T>
std::optional<Matrix<T>> read_optional(const std::string& path, Compute c) {
  if (path.empty()) return std::nullopt;
  return as<T>(io::read_matrix(path), c);
}

template <Real T>
void adl_typed(const AdlArgs& a, const Matrix<T>& host_X, Compute c) {
  const std::optional<Matrix<T>> task = read_optional<T>(a.task, c), initial = read_optional<T>(a.initial, c);
  const Device device = device_for(a.common, Operation::Adl, host_X.cols());
  Matrix<T> X_copy;  // on a GPU only
  const ConstMatrixView<T> X = placed(host_X, device, X_copy);
  const fmri::AdlResult<T> r = fmri::adl<T>(X,
                                            {.atoms = a.atoms,
                                             .lambda = a.lambda,
                                             .max_iterations = a.iterations,
                                             .coefficient_steps = a.coefficient_steps,
                                             .dictionary_steps = a.dictionary_steps,
                                             .c = a.c,
                                             .c_d = a.c_d,
                                             .tolerance = a.tolerance,
                                             .seed = a.seed,
                                             .progress = progress_line(a.common, "adl", "objective", a.iterations)},
                                            task ? task->view() : ConstMatrixView<T>{}, initial ? &*initial : nullptr);
  const Matrix<T> dictionary = r.dictionary.to(Device::cpu()), codes = r.codes.to(Device::cpu());
  io::write_matrix<T>(a.dictionary, dictionary.view());
  io::write_matrix<T>(a.codes, codes.view());
  const index M = task ? task->cols() : 0;
  index nonzeros = 0;
  for (index e = 0; e < codes.size(); ++e) nonzeros += codes.data()[e] != T(0) ? 1 : 0;
  std::vector<std::pair<std::string, std::string>> inputs = {{"X", a.x}};
  if (task) inputs.emplace_back("task", a.task);
  if (initial) inputs.emplace_back("initial", a.initial);
  nlohmann::json j = report_json("adl", r.report, inputs, a.dictionary, X.rows(), X.cols());
  j.update({{"outputs", {{"dictionary", a.dictionary}, {"codes", a.codes}}}, {"atoms", a.atoms}, {"assisted_atoms", M},
            {"lambda", r.lambda}, {"lambda_default", std::isnan(a.lambda)},
            {"c", M > 0 ? nlohmann::json(a.c) : nlohmann::json(nullptr)}, {"c_d", a.c_d},
            {"coefficient_steps", a.coefficient_steps}, {"dictionary_steps", a.dictionary_steps}, {"seed", a.seed},
            {"objective", r.objective},
            {"codes_nonzero_fraction", static_cast<double>(nonzeros) / static_cast<double>(codes.size())}});
  write_report(a.common, j);
  if (!a.common.quiet)
    std::printf("adl: %lld voxels of %lld time points, %s on %s | %lld atoms (%lld assisted), lambda %.4g | objective "
                "%.6g -> %.6g in %d iterations (%s), %.1f %% of the codes nonzero | %.3f s -> %s, %s\n",
                static_cast<long long>(X.cols()), static_cast<long long>(X.rows()), type_name<T>(), device.name().c_str(),
                static_cast<long long>(a.atoms), static_cast<long long>(M), r.lambda, r.objective.front(),
                r.objective.back(), r.report.iterations, std::string(to_string(r.report.stop)).c_str(),
                100.0 * static_cast<double>(nonzeros) / static_cast<double>(codes.size()), r.report.seconds,
                a.dictionary.c_str(), a.codes.c_str());
}

void run_adl(const AdlArgs& a) {
  if (!a.task.empty() && std::isnan(a.c))
    throw InvalidArgument("--task needs --c, the squared distance each assisted atom may keep from its time course");
  if (a.task.empty() && !std::isnan(a.c)) throw InvalidArgument("--c applies to assisted atoms: give their --task too");
  io::AnyMatrix X = io::read_matrix(a.x);
  const Compute c = compute_type(a.common.precision, {dtype_of(X)});
  refuse_mixed(c, "adl");
  with_type(c, [&]<Real T>() { adl_typed<T>(a, as<T>(std::move(X), c), c); });
}

struct AdlBenchArgs {
  BenchOptions bench{"cpu", 3, ""};
  std::string sizes = "274x20000,274x200000";  // time points x voxels
  index atoms = 10;
  int iterations = 10, coefficient_steps = 20, dictionary_steps = 20;
  std::string precision = "double";
};

// Times linv::fmri::adl on random data (X uniform in [-1, 1], generated where it is used with the size as
// the seed; the default lambda; a seeded random start). The time covers the whole call, which returns
// when the result is complete: the one pass for ||X||_F and the start, then the outer iterations.
template <Real T>
void bench_adl_typed(const AdlBenchArgs& a, Device device) {
  nlohmann::json out = bench_output(device);
  for (const std::string& size : split(a.sizes)) {
    const std::vector<index> dims = parse_dims(size, "TxN");
    const index rows = dims[0], N = dims[1];
    const Matrix<T> X = random_uniform<T>(rows, N, static_cast<std::uint64_t>(N), T(-1), T(1), device);
    fmri::AdlResult<T> r;
    const Timing t = time_repeats(a.bench.repeats, r, [&] {
      return fmri::adl<T>(X.view(), {.atoms = a.atoms,
                                     .max_iterations = a.iterations,
                                     .coefficient_steps = a.coefficient_steps,
                                     .dictionary_steps = a.dictionary_steps,
                                     .seed = 1});
    });
    const double per_iteration = t.median / std::max(1, a.iterations);
    out["rows"].push_back({{"time_points", rows}, {"voxels", N}, {"atoms", a.atoms}, {"precision", type_name<T>()},
                           {"iterations", a.iterations}, {"coefficient_steps", a.coefficient_steps},
                           {"dictionary_steps", a.dictionary_steps}, {"seconds", t.median}, {"seconds_all", t.all},
                           {"seconds_per_iteration", per_iteration}, {"initial_objective", r.objective.front()},
                           {"final_objective", r.objective.back()}});
    std::printf("adl %s T=%-5lld N=%-8lld K=%lld %s %d iterations (Ts=%d, Td=%d) %9.4f s, %.4f s per iteration\n",
                device.name().c_str(), static_cast<long long>(rows), static_cast<long long>(N),
                static_cast<long long>(a.atoms), type_name<T>(),
                a.iterations, a.coefficient_steps, a.dictionary_steps, t.median, per_iteration);
  }
  write_bench(a.bench, out);
}

const Command kCommands[] = {
    {"bench", "adl", "Time ADL dictionary learning on random data (median of repeats after a warm-up)",
     [](CLI::App& cmd) {
       auto b = std::make_shared<AdlBenchArgs>();
       add_bench_options(cmd, b->bench);
       cmd.add_option("--sizes", b->sizes, "Comma-separated TxN (time points x voxels)")->capture_default_str();
       cmd.add_option("-k,--atoms", b->atoms, "K")->capture_default_str()->check(CLI::PositiveNumber);
       cmd.add_option("--iters", b->iterations, "Outer iterations per run")
           ->capture_default_str()
           ->check(CLI::PositiveNumber);
       cmd.add_option("--inner-s", b->coefficient_steps, "Coefficient steps per iteration (Ts)")
           ->capture_default_str()
           ->check(CLI::PositiveNumber);
       cmd.add_option("--inner-d", b->dictionary_steps, "Dictionary steps per iteration (Td)")
           ->capture_default_str()
           ->check(CLI::PositiveNumber);
       cmd.add_option("--precision", b->precision, "single or double")
           ->capture_default_str()
           ->check(CLI::IsMember({"single", "double"}));
       cmd.callback([b] {
         const Device device = Device::parse(b->bench.device);
         with_type_named(b->precision, [&]<Real T>() { bench_adl_typed<T>(*b, device); });
       });
     }},
    {"", "adl",
     "Atom-assisted dictionary learning: X ~ D S minimising ||X - D S||_F^2 + lambda ||S||_1, with the first M atoms "
     "within sqrt(c) of given time courses and the others of norm at most sqrt(c_d)",
     [](CLI::App& cmd) {
       auto a = std::make_shared<AdlArgs>();
       cmd.add_option("X", a->x, "Data, one voxel per column (T x N: time points x voxels)")->required();
       cmd.add_option("-k,--atoms", a->atoms, "K, the number of atoms")->capture_default_str()->check(CLI::PositiveNumber);
       cmd.add_option("--lambda", a->lambda,
                      "Sparsity weight (default: 0.5 * ||X||_F / sqrt(T N), half the root mean square of X)")
           ->check(CLI::NonNegativeNumber);
       cmd.add_option("--task", a->task,
                      "T x M time courses (e.g. designs convolved with the HRF) that the first M atoms stay near");
       cmd.add_option("--c", a->c, "Squared distance each assisted atom may keep from its time course (with --task)")
           ->check(CLI::PositiveNumber);
       cmd.add_option("--cd", a->c_d, "Squared norm of the free atoms at most")
           ->capture_default_str()
           ->check(CLI::PositiveNumber);
       cmd.add_option("--iters", a->iterations, "Outer iterations (coefficient steps, then dictionary steps)")
           ->capture_default_str()
           ->check(CLI::NonNegativeNumber);
       cmd.add_option("--inner-s", a->coefficient_steps, "Coefficient steps per iteration (Ts)")
           ->capture_default_str()
           ->check(CLI::PositiveNumber);
       cmd.add_option("--inner-d", a->dictionary_steps, "Dictionary steps per iteration (Td)")
           ->capture_default_str()
           ->check(CLI::PositiveNumber);
       cmd.add_option("--tol", a->tolerance,
                      "Stop once an iteration lowers the objective by at most this fraction of it (0: run all iterations)")
           ->capture_default_str()
           ->check(CLI::NonNegativeNumber);
       cmd.add_option("--seed", a->seed, "Seed of the random normal initial dictionary")->capture_default_str();
       cmd.add_option("--initial", a->initial, "A T x K dictionary to start from instead (projected onto the constraints)");
       cmd.add_option("--dictionary", a->dictionary, "Where to write D (T x K, the assisted atoms first)")->required();
       cmd.add_option("--codes", a->codes, "Where to write S (K x N): dense .npy, or sparse Matrix Market (.mtx)")
           ->required();
       add_common_options(cmd, a->common);
       cmd.footer("The codes start at zero; the initial dictionary (random normal, or --initial) is first projected onto "
                  "the constraints. The report (--report) holds the objective at the start and after each iteration.");
       cmd.callback([a] { run_adl(*a); });
     }},
};

}  // namespace

std::span<const Command> adl_commands() { return kCommands; }

}  // namespace linv::cli
