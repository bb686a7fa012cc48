// Plumbing shared by the linv commands: common flags, loading inputs in the requested precision,
// writing outputs and reports, and the one-line summary.
#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "linv/linv.hpp"

namespace linv::cli {

// Flags every numerical command takes.
struct CommonOptions {
  std::string device = "cpu";
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

// Throws DeviceError unless the device is the CPU: the dense routines have no CUDA implementation yet.
void require_cpu_backend(const CommonOptions& o, const char* command);

// The JSON report of a command: what ran, on what, and how well.
nlohmann::json report_json(const std::string& command, const SolveReport& r,
                           const std::vector<std::pair<std::string, std::string>>& inputs,
                           const std::string& output, index rows, index cols);
void write_report(const CommonOptions& o, const nlohmann::json& j);

// "inv: 1024x1024 float64 | lu (general matrix) | 0.052 s | scaled residual 1.9 | rcond 3.1e-04 -> X.npy"
void print_summary(const CommonOptions& o, const std::string& command, const SolveReport& r, index rows, index cols,
                   const std::string& output);

void register_dense_commands(CLI::App& app);  // inv, solve, lstsq, pinv, chol
void register_misc_commands(CLI::App& app);   // gen, info, demo

}  // namespace linv::cli
