// Plumbing shared by the linv commands: common flags, loading inputs in the requested precision,
// writing outputs and reports, and the one-line summary.
#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "linv/linv.hpp"

namespace linv::cli {

// Flags every numerical command takes.
struct CommonOptions {
  std::string device = "auto";
  std::string precision;  // "", "single", "double", "mixed"
  std::string report;     // path of the JSON report, empty: none
  bool quiet = false;
  bool no_check = false;  // skip the scaled-residual check (one extra matrix product)
};

void add_common_options(CLI::App& cmd, CommonOptions& o);

// The element type a command computes in, from --precision and the input files' types: the inputs'
// own type when no precision is asked for (float64 if they differ), never narrowing silently.
enum class Compute { f32, f64, mixed };
Compute compute_type(const std::string& precision, const std::vector<io::DType>& inputs);
io::DType dtype_of(const io::AnyMatrix& m);

template <Real T>
Matrix<T> as(io::AnyMatrix&& m, Compute c) {
  return io::convert<T>(std::move(m), /*allow_narrowing=*/c == Compute::f32);
}

// The device a command runs on: --device as given, where "auto" is the first GPU when one is usable,
// the command runs there and the problem is large enough to gain from it, and the CPU otherwise.
Device resolve_device(const CommonOptions& o, index n, bool runs_on_gpu);

// The device an fMRI command runs on: --device, or with auto the GPU once there are enough signals
// (voxels) to repay starting it (about 16000: resolve_device's threshold counts matrix orders).
inline Device fmri_device(const CommonOptions& o, index signals) {
  return resolve_device(o, signals / 32, /*runs_on_gpu=*/true);
}

// M's view on `device`: M itself on the CPU, otherwise a copy made there and kept in `copy`.
template <Real T>
ConstMatrixView<T> placed(const Matrix<T>& M, Device device, Matrix<T>& copy) {
  if (device.is_cpu()) return M.view();
  copy = M.to(device);
  return copy.view();
}

// Runs `f` on a copy of A placed on `device` and returns the solution with its result back in host memory.
template <Real T, class F>
Solution<T> run_on(Device device, const Matrix<T>& A, F&& f) {
  if (device.is_cpu()) return f(A.view());
  const Matrix<T> a = A.to(device);
  Solution<T> s = f(a.view());
  s.x = s.x.to(Device::cpu());
  return s;
}

// The JSON report of a command: what ran, on what, and how well.
nlohmann::json report_json(const std::string& command, const SolveReport& r,
                           const std::vector<std::pair<std::string, std::string>>& inputs,
                           const std::string& output, index rows, index cols);
void write_report(const CommonOptions& o, const nlohmann::json& j);

// "inv: 1024x1024 float64 | lu (general matrix) | 0.052 s | scaled residual 1.9 | rcond 3.1e-04 -> X.npy"
void print_summary(const CommonOptions& o, const std::string& command, const SolveReport& r, index rows, index cols,
                   const std::string& output);

// ---- bench commands ----
// "a,b,,c" -> {"a", "b", "c"}
std::vector<std::string> split(const std::string& list);
// A benchmark size such as "274x902629" against its form ("TxN"): as many positive integers as the form
// has parts, or InvalidArgument naming both.
std::vector<index> parse_dims(const std::string& size, const std::string& form);

// Calls `call` once to warm up (handles, workspaces, kernel loading), then `repeats` times on a host
// clock; `result` keeps the last call's value, released before each timed call so that one result's
// memory is never freed inside the next one's timing. The timed calls are synchronous, so the clock
// covers GPU work too.
struct Timing {
  double median = 0;
  std::vector<double> all;
};
template <class R, class Call>
Timing time_repeats(int repeats, R& result, Call&& call) {
  result = call();
  Timing t;
  for (int r = 0; r < repeats; ++r) {
    result = R{};
    const auto start = std::chrono::steady_clock::now();
    result = call();
    t.all.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::vector<double> sorted = t.all;
  std::sort(sorted.begin(), sorted.end());
  t.median = sorted[sorted.size() / 2];
  return t;
}

// The JSON a bench command writes: the device by name, linv's version, and its rows.
nlohmann::json bench_output(Device device);

void register_dense_commands(CLI::App& app);  // inv, solve, lstsq, pinv, chol
void register_misc_commands(CLI::App& app);   // gen, info, demo
void register_bench_commands(CLI::App& app);  // bench
void register_wls_commands(CLI::App& app, CLI::App& bench);  // wls, bench wls
void register_imaging_commands(CLI::App& app, CLI::App& bench);  // degrade, deblur, bench deblur
void register_fmri_commands(CLI::App& app, CLI::App& bench);     // omp, ksvd, gen fmri, bench omp
void register_adl_commands(CLI::App& app, CLI::App& bench);      // adl
void register_parafac2_commands(CLI::App& app, CLI::App& bench); // parafac2

}  // namespace linv::cli
