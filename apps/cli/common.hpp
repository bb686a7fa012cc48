// Plumbing shared by the linv commands: the command tables, common flags, loading inputs in the requested
// precision, where to run, writing outputs and reports, the one-line summary, and the bench options.
#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "linv/linv.hpp"

namespace linv::cli {

// One command: where it hangs ("" for the top level, or "bench" or "gen"), its name and help, and the
// function that adds its options and callback. main.cpp adds every table's top-level commands first, then
// the subcommands, so no table depends on another's order.
struct Command {
  const char* parent;
  const char* name;
  const char* description;
  void (*define)(CLI::App& cmd);
};
std::span<const Command> dense_commands();     // inv, solve, lstsq, pinv, chol
std::span<const Command> misc_commands();      // gen, gen jacobian, info, demo
std::span<const Command> bench_commands();     // bench, bench inverse | solve | slam | batched
std::span<const Command> wls_commands();       // wls, bench wls
std::span<const Command> imaging_commands();   // degrade, deblur, bench deblur
std::span<const Command> fmri_commands();      // omp, ksvd, gen fmri, bench omp | ksvd
std::span<const Command> adl_commands();       // adl, bench adl
std::span<const Command> parafac2_commands();  // parafac2, bench parafac2

// Ctrl-C, SIGTERM and SIGHUP remove the temporary files of outputs being written before linv dies by the
// signal (apps/cli/signals.cpp); SIGXFSZ is ignored, so a write past ulimit -f fails and is reported.
void remove_temporary_files_on_stop_signals();

// A process of a distributed job other than the root: its errors are the root's too (Grid::together makes
// every process raise the same one), so only the root prints them. run() asks errors_silenced().
void silence_errors();
bool errors_silenced();

// A distributed command's processes: every process of the MPI job (mpi, tiles on `device`: cpu or cuda), or
// one process per device of `devices` ("cuda:0,cuda:1"), started here; `grid` "RxC" or empty.
struct JobOptions {
  bool mpi = false;
  std::string devices, grid, device = "auto";
};
dist::Grid job_grid(const JobOptions& o, const char* command);
// The job when one is asked for (--distributed or --devices), nothing otherwise; a process other than the
// root leaves its errors to the root's message (silence_errors).
std::optional<dist::Grid> optional_job(const JobOptions& o, const char* command);
// --maps takes its space from a NIfTI input: refused, before any work, for another input.
void require_nifti_for_maps(const std::string& maps, const std::string& input);

// Flags every numerical command takes.
struct CommonOptions {
  std::string device = "auto";
  std::string precision;  // "", "single", "double", "mixed"
  std::string report;     // path of the JSON report, empty: none
  bool quiet = false;
  bool no_check = false;  // skip the scaled-residual check (one extra matrix product)
};

// The signals X of an fMRI command (omp, ksvd, adl): a T x N matrix file, or a NIfTI image (its voxels in
// `mask`, every voxel without one), whose grid and voxels are kept so that maps can be written back in its
// space.
struct Signals {
  io::AnyMatrix X;
  std::optional<io::FmriImage> image;  // without its signals (moved to X)
};
Signals read_signals(const std::string& path, const std::string& mask);
// --mask (and with `maps`, --maps): the options of a command that reads NIfTI images (omp, ksvd, adl).
void add_nifti_options(CLI::App& cmd, std::string& mask, std::string* maps = nullptr);

void add_common_options(CLI::App& cmd, CommonOptions& o);
// An option naming something the command writes, checked as the command line is read (io::check_output),
// so that a format linv cannot write there or a missing directory is refused before any work.
CLI::Option* output(CLI::Option* option, io::OutputKind kind);
// An option naming files the command reads.
CLI::Option* input(CLI::Option* option);
// Once the command line is read and before the command runs (run.cpp): two outputs naming one file, or an
// output naming an input, are refused with InvalidArgument (exit 2) naming both, after resolving
// directories, ".." and symbolic links (io::same_file). Either would destroy data: the later output, or
// the input the user kept. forget_file_options() starts a command line with no options registered.
void check_distinct_files();
void forget_file_options();

// The element type a command computes in, from --precision and the input files' types: the inputs'
// own type when no precision is asked for (float64 if they differ), never narrowing silently.
enum class Compute { f32, f64, mixed };
Compute compute_type(const std::string& precision, const std::vector<io::DType>& inputs);
io::DType dtype_of(const io::AnyMatrix& m);
io::DType dtype_of(const io::AnyStack& s);
io::DType dtype_of(const io::AnySparse& s);
// InvalidArgument for --precision mixed, for the commands without a mixed-precision variant.
void refuse_mixed(Compute c, const char* command);
// The signals a fitting command (ksvd, adl) works on, and the type it computes in (mixed refused): all of
// them, or with a grid this process's share (consecutive columns in rank order: a .npy read from its part's
// bytes, anything else read whole and cut; a share that would be empty raised on every process), in one
// element type for the whole job (float64 where any process's is).
struct FitInput {
  Signals signals;
  Compute compute = Compute::f64;
};
FitInput read_fit_input(const std::string& path, const std::string& mask, const std::string& precision,
                        const dist::Grid* grid, const char* command);

// Calls f.template operator()<T>() with T the type the command computes in: float for f32, double for f64
// and mixed (float64 data). The one place commands choose their element type.
template <class F>
void with_type(Compute c, F&& f) {
  if (c == Compute::f32)
    f.template operator()<float>();
  else
    f.template operator()<double>();
}

template <Real T>
Matrix<T> as(io::AnyMatrix&& m, Compute c) {
  return io::convert<T>(std::move(m), /*allow_narrowing=*/c == Compute::f32);
}
// A stack in that type (compute_type never makes it narrower than the file's unless asked).
template <Real T>
io::MatrixStack<T> as(io::AnyStack&& s, Compute) {
  if (auto* same = std::get_if<io::MatrixStack<T>>(&s)) return std::move(*same);
  return std::visit(
      [](const auto& other) {
        return io::MatrixStack<T>{other.count, other.rows, other.cols, std::vector<T>(other.data.begin(), other.data.end())};
      },
      s);
}
// A sparse matrix in that type.
template <Real T>
SparseMatrix<T> as(io::AnySparse&& s) {
  if (auto* same = std::get_if<SparseMatrix<T>>(&s)) return std::move(*same);
  return std::visit([](const auto& other) { return other.template cast<T>(); }, s);
}

// The device a command runs on: --device as given, or with auto the library's choice for the operation
// and its size (linv::auto_device).
Device device_for(const CommonOptions& o, Operation op, index size, Method method = Method::Auto);

// Runs `f` on a copy of A placed on `device` and returns the solution with its result back in host memory.
template <Scalar T, class F>
Solution<T> run_on(Device device, const Matrix<T>& A, F&& f) {
  if (device.is_cpu()) return f(A.view());
  const Matrix<T> a = A.to(device);
  Solution<T> s = f(a.view());
  s.x = s.x.to(Device::cpu());
  return s;
}

// The JSON report of a command: the library's report, and what the command read and wrote.
nlohmann::json report_json(const std::string& command, const Report& r,
                           const std::vector<std::pair<std::string, std::string>>& inputs,
                           const std::string& output, index rows, index cols);
void write_report(const CommonOptions& o, const nlohmann::json& j);

// "inv: 1024x1024 float64 | lu (general matrix) | 0.052 s | scaled residual 1.9 | rcond 3.1e-04 -> X.npy"
void print_summary(const CommonOptions& o, const std::string& command, const Report& r, index rows, index cols,
                   const std::string& output);

// Writes x to `output` with its report, and prints the summary.
template <Scalar T>
void finish(const CommonOptions& o, const char* command, const Solution<T>& s,
            const std::vector<std::pair<std::string, std::string>>& inputs, const std::string& output,
            bool vector = false) {
  if (vector && s.x.cols() == 1)  // a 1-D right-hand side gives a 1-D solution, as NumPy's solvers do
    io::write_vector<T>(output, s.x.view());
  else
    io::write_matrix<T>(output, s.x.view());
  write_report(o, report_json(command, s.report, inputs, output, s.x.rows(), s.x.cols()));
  print_summary(o, command, s.report, s.x.rows(), s.x.cols(), output);
}

// Progress of long runs on stderr, when not quiet, once a run has taken 2 s and at most once a second:
// "ksvd: iteration 7/30, RMSE 0.41, 3.2 s".
std::function<void(int, double)> progress_line(const CommonOptions& o, const char* command, const char* quantity,
                                               int iterations);

// ---- bench commands ----
// The options every bench command takes: --device, --repeats and --json.
struct BenchOptions {
  std::string device;
  int repeats;
  std::string json;
};
void add_bench_options(CLI::App& cmd, BenchOptions& o);
// The JSON a bench command writes: the device by name, linv's version, and its rows; written by write_bench.
nlohmann::json bench_output(Device device);
void write_bench(const BenchOptions& o, const nlohmann::json& out);
// Calls f.template operator()<T>() for a type named "single" or "f32" (float), "double" or "f64" (double).
template <class F>
void with_type_named(const std::string& name, F&& f) {
  if (name == "single" || name == "f32")
    f.template operator()<float>();
  else if (name == "double" || name == "f64")
    f.template operator()<double>();
  else
    throw InvalidArgument("unknown precision '" + name + "': expected single (f32) or double (f64)");
}

// "a,b,,c" -> {"a", "b", "c"}
std::vector<std::string> split(const std::string& list);
// A count written in an option ("512" of --sizes 512,1024, "8" of --cases 8:1048576): decimal digits only
// (no sign, no exponent: "1e3" is not read as 1), at least `least`, and small enough for linv's index type;
// otherwise InvalidArgument naming the option (`what`), the text and what was expected.
index parse_count(std::string_view text, std::string_view what, index least = 1);
// Every count of a comma-separated list ("--sizes 512,1024"); an empty list is refused.
std::vector<index> parse_counts(const std::string& list, std::string_view what, index least = 1);
// A benchmark size such as "274x902629" against its form ("TxN"): as many positive integers as the form
// has parts, or InvalidArgument naming both.
std::vector<index> parse_dims(const std::string& size, const std::string& form);

// What a numeric option accepts, checked as the command line is read (exit 2), with a message that says it
// in words: NaN is never a value, and infinity only where the range is open on that side (`at_least(-inf)`
// takes every number but NaN). CLI11's own PositiveNumber and Range let NaN through and print their limits
// with 310 digits.
CLI::Validator at_least(double least);
CLI::Validator above(double least);
// A whole-number option: digits (and a sign) only, within [least, most]; '1e3' and 20-digit values, which
// CLI11 would refuse or silently clamp, are named as not whole numbers in that range.
CLI::Validator whole(long long least, long long most = std::numeric_limits<int>::max());

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

}  // namespace linv::cli
