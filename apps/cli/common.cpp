#include "common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

namespace linv::cli {

namespace {
bool silenced = false;
}

void silence_errors() { silenced = true; }
bool errors_silenced() { return silenced; }

void add_common_options(CLI::App& cmd, CommonOptions& o) {
  cmd.add_option("--device", o.device,
                 "Where to compute: cpu, cuda, cuda:N, or auto (a GPU when one is usable, the command runs there and "
                 "the problem is large enough to gain from it)")
      ->capture_default_str();
  cmd.add_option("--precision", o.precision,
                 "single, double or mixed (float32 factorization refined to float64 accuracy); "
                 "default: the input's own type")
      ->check(CLI::IsMember({"single", "double", "mixed"}));
  output(cmd.add_option("--report", o.report, "Write a JSON report (method, device, seconds, scaled residual, rcond)"),
         io::OutputKind::text);
  cmd.add_flag("--no-check", o.no_check, "Skip the scaled-residual check (saves one matrix product)");
  cmd.add_flag("-q,--quiet", o.quiet, "Print nothing on success");
}

Signals read_signals(const std::string& path, const std::string& mask) {
  if (!io::is_nifti_path(path)) {
    if (!mask.empty())
      throw InvalidArgument(fmt::format("--mask {}: a mask selects voxels of a NIfTI image (.nii, .nii.gz)", mask));
    return {io::read_matrix(path), std::nullopt};
  }
  io::FmriImage image = io::read_fmri(path, mask);
  Signals s{std::move(image.signals), std::nullopt};
  s.image = std::move(image);
  return s;
}

namespace {

Signals read_signal_part(const std::string& path, const std::string& mask, const dist::Grid& grid,
                         const char* command) {
  Signals s;
  grid.together([&] {
    index total = 0;
    if (io::is_nifti_path(path)) {
      s = read_signals(path, mask);
      total = std::visit([](const auto& m) { return m.cols(); }, s.X);
      const index first = total * grid.rank() / grid.size(), end = total * (grid.rank() + 1) / grid.size();
      s.X = std::visit(
          [&](const auto& m) -> io::AnyMatrix {
            return std::decay_t<decltype(m)>::copy_of(m.view().block(0, first, m.rows(), end - first));
          },
          s.X);
    } else {
      if (!mask.empty())
        throw InvalidArgument(fmt::format("--mask {}: a mask selects voxels of a NIfTI image (.nii, .nii.gz)", mask));
      io::ColumnPart mine = io::read_matrix_columns(path, grid.rank(), grid.size());
      total = mine.total;
      s.X = std::move(mine.matrix);
    }
    if (std::visit([](const auto& m) { return m.cols(); }, s.X) == 0)
      throw InvalidArgument(fmt::format("{}: {} has {} voxels, fewer than the job's {} processes", command, path, total,
                                        grid.size()));
  });
  return s;
}

}  // namespace

FitInput read_fit_input(const std::string& path, const std::string& mask, const std::string& precision,
                        const dist::Grid* grid, const char* command) {
  FitInput in{grid ? read_signal_part(path, mask, *grid, command) : read_signals(path, mask)};
  in.compute = compute_type(precision, {dtype_of(in.signals.X)});
  refuse_mixed(in.compute, command);
  if (grid && grid->max(in.compute == Compute::f64 ? 1.0 : 0.0) > 0) in.compute = Compute::f64;  // one for the job
  return in;
}

void add_nifti_options(CLI::App& cmd, std::string& mask, std::string* maps) {
  input(cmd.add_option("--mask", mask,
                 "With a NIfTI X: a 3-D brain mask on its grid (voxels where it is nonzero; default every voxel)"));
  if (maps)
    output(cmd.add_option("--maps", *maps,
                          "With a NIfTI X: write the codes as K spatial maps in its space (.nii, .nii.gz)"),
           io::OutputKind::nifti);
}

namespace {
// The options of this command line that name files, outputs first flagged; filled as the commands are
// defined, one command line at a time (run() defines the commands afresh for each).
struct FileOption {
  CLI::Option* option;
  bool written;
};
std::vector<FileOption>& file_options() {
  static std::vector<FileOption> options;
  return options;
}
}  // namespace

CLI::Option* output(CLI::Option* option, io::OutputKind kind) {
  if (kind != io::OutputKind::directory) file_options().push_back({option, true});
  return option->each([kind](const std::string& spec) {
    io::check_output(spec, kind);
    if (spec == "-") io::claim_standard_output();  // the command's messages go to stderr from here on
  });
}

CLI::Option* input(CLI::Option* option) {
  file_options().push_back({option, false});
  return option;
}

void forget_file_options() { file_options().clear(); }

namespace {
// "--output" for -o,--output, "A" for a positional
std::string option_name(const CLI::Option& o) {
  if (!o.get_lnames().empty()) return "--" + o.get_lnames().front();
  if (!o.get_snames().empty()) return "-" + o.get_snames().front();
  return o.get_name(/*positional=*/true);
}
}  // namespace

void check_distinct_files() {
  struct Named {
    std::string option, path;
    bool written;
  };
  std::vector<Named> named;
  for (const FileOption& f : file_options())
    if (f.option->count() > 0)
      for (const std::string& path : f.option->results())
        named.push_back({option_name(*f.option), path, f.written});
  for (std::size_t i = 0; i < named.size(); ++i)
    for (std::size_t j = 0; j < named.size(); ++j) {
      const Named &a = named[i], &b = named[j];
      if (!a.written || (b.written && j <= i) || !io::same_file(a.path, b.path)) continue;
      if (b.written)
        throw InvalidArgument(fmt::format("{} {} and {} {} name the same file: each output needs a file of its own "
                                          "(the second would replace the first)",
                                          b.option, b.path, a.option, a.path));
      throw InvalidArgument(fmt::format("{} {} names the input {} ({}): linv does not write over what it reads; write "
                                        "elsewhere, then rename",
                                        a.option, a.path, b.option, b.path));
    }
}

io::DType dtype_of(const io::AnyMatrix& m) {
  return std::holds_alternative<Matrix<float>>(m) ? io::DType::Float32 : io::DType::Float64;
}
io::DType dtype_of(const io::AnyStack& s) {
  return std::holds_alternative<io::MatrixStack<float>>(s) ? io::DType::Float32 : io::DType::Float64;
}
io::DType dtype_of(const io::AnySparse& s) {
  return std::holds_alternative<SparseMatrix<float>>(s) ? io::DType::Float32 : io::DType::Float64;
}

std::optional<dist::Grid> optional_job(const JobOptions& o, const char* command) {
  if (!o.mpi && o.devices.empty()) return std::nullopt;
  std::optional<dist::Grid> grid = job_grid(o, command);
  if (!grid->is_root()) silence_errors();  // one message for the job, from process 0
  return grid;
}

void require_nifti_for_maps(const std::string& maps, const std::string& input) {
  if (!maps.empty() && !io::is_nifti_path(input))
    throw InvalidArgument(fmt::format("--maps needs a NIfTI input to take its space from; {} is not one", input));
}

Compute compute_type(const std::string& precision, const std::vector<io::DType>& inputs) {
  if (precision == "single") return Compute::f32;
  if (precision == "double") return Compute::f64;
  if (precision == "mixed") return Compute::mixed;
  for (io::DType t : inputs)
    if (t == io::DType::Float64) return Compute::f64;
  return Compute::f32;
}

void refuse_mixed(Compute c, const char* command) {
  if (c == Compute::mixed)
    throw InvalidArgument(fmt::format("{} has no mixed-precision variant: use --precision single or double", command));
}

dist::Grid job_grid(const JobOptions& o, const char* command) {
  if (!o.grid.empty() && o.grid.find('x') == std::string::npos)
    throw InvalidArgument(fmt::format("--grid {}: expected RxC, e.g. 2x4", o.grid));
  if (o.mpi && !o.devices.empty())
    throw InvalidArgument("--distributed (an MPI job) and --devices (a job linv starts) are two ways to launch: give one");
  if (!o.devices.empty() && o.device != "auto")
    throw InvalidArgument(fmt::format("{}: --devices names the devices; drop --device", command));
  if (o.mpi && o.device != "auto" && o.device != "cpu" && o.device != "cuda")
    throw InvalidArgument(fmt::format("{} --distributed: --device cpu (tiles in host memory, ScaLAPACK) or cuda (each "
                                      "process on a GPU of its host, cuSOLVERMp), not {}",
                                      command, o.device));
  int rows = 0, cols = 0;
  if (!o.grid.empty()) {
    const std::vector<index> dims = parse_dims(o.grid, "RxC");
    rows = static_cast<int>(dims[0]), cols = static_cast<int>(dims[1]);
  }
  if (o.mpi) return dist::Grid::world(rows, cols, o.device == "cuda" ? Device::Kind::cuda : Device::Kind::cpu);
  std::vector<Device> devices;
  for (const std::string& name : split(o.devices)) devices.push_back(Device::parse(name));
  return dist::Grid::local(devices, rows, cols);
}

Device device_for(const CommonOptions& o, Operation op, index size, Method method) {
  return choose_device(o.device, op, size, method);
}

// What reading the inputs changed (io::take_input_notes: integers read as float64, ...), gathered for the
// summary and the report alike.
const std::vector<std::string>& input_notes() {
  static std::vector<std::string> notes;
  for (std::string& note : io::take_input_notes()) notes.push_back(std::move(note));
  return notes;
}

nlohmann::json report_json(const std::string& command, const Report& r,
                           const std::vector<std::pair<std::string, std::string>>& inputs,
                           const std::string& output, index rows, index cols) {
  nlohmann::json j = nlohmann::json::parse(r.to_json());
  for (const std::string& note : input_notes()) j["notes"].push_back(note);
  j["command"] = command;
  j["inputs"] = nlohmann::json::object();
  for (const auto& [name, path] : inputs) j["inputs"][name] = path;
  j["outputs"] = {{"output", output}};  // commands with several outputs name each (one schema: docs/cli.md)
  j["shape"] = {rows, cols};
  j["linv_version"] = build_info().version;
  return j;
}

void write_report(const CommonOptions& o, const nlohmann::json& j) {
  if (!o.report.empty()) io::write_text(o.report, j.dump(2) + "\n");
}

void print_summary(const CommonOptions& o, const std::string& command, const Report& r, index rows, index cols,
                   const std::string& output) {
  if (o.quiet) return;
  std::string line = fmt::format("{}: {} {} on {} | {}", command, shape_string(rows, cols), r.precision,
                                 r.device.name(), to_string(r.method));
  if (!r.method_reason.empty()) line += fmt::format(" ({})", r.method_reason);
  line += fmt::format(" | {:.4f} s", r.seconds);
  if (r.iterations > 0) line += fmt::format(" | {} iterations", r.iterations);
  if (r.stop != StopReason::None) line += fmt::format(" ({})", to_string(r.stop));
  if (std::isfinite(r.scaled_residual)) line += fmt::format(" | scaled residual {:.3g}", r.scaled_residual);
  if (std::isfinite(r.rcond)) line += fmt::format(" | rcond {:.3g}", r.rcond);
  if (std::isfinite(r.backward_error)) line += fmt::format(" | backward error {:.3g}", r.backward_error);
  if (r.rank >= 0) line += fmt::format(" | rank {}", r.rank);
  line += " -> " + output;
  std::printf("%s\n", line.c_str());
  for (const std::string& note : input_notes()) std::printf("  note: %s\n", note.c_str());
  for (const std::string& note : r.notes) std::printf("  note: %s\n", note.c_str());
}

std::function<void(int, double)> progress_line(const CommonOptions& o, const char* command, const char* quantity,
                                               int iterations) {
  if (o.quiet) return {};
  const auto start = std::chrono::steady_clock::now();
  return [=, shown = 2.0](int iteration, double value) mutable {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed < shown) return;
    shown = elapsed + 1;
    std::fprintf(stderr, "%s: iteration %d/%d, %s %.6g, %.1f s\n", command, iteration, iterations, quantity, value,
                 elapsed);
  };
}

void add_bench_options(CLI::App& cmd, BenchOptions& o) {
  cmd.add_option("--device", o.device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd.add_option("--repeats", o.repeats, "Timed runs per case")->capture_default_str()->check(whole(1, 1 << 20));
  output(cmd.add_option("--json", o.json, "Write the rows as JSON here"), io::OutputKind::text);
}

nlohmann::json bench_output(Device device) {
  std::string name = device.name();
  if (device.is_cuda()) name = cuda_devices().gpus.at(static_cast<std::size_t>(device.index())).name;
  return {{"device", name}, {"linv_version", build_info().version}, {"rows", nlohmann::json::array()}};
}

void write_bench(const BenchOptions& o, const nlohmann::json& out) {
  if (!o.json.empty()) io::write_text(o.json, out.dump(2) + "\n");
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

index parse_count(std::string_view text, std::string_view what, index least) {
  index v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || ec != std::errc() || end != text.data() + text.size() || v < least)
    throw InvalidArgument(fmt::format("{} '{}': expected a whole number of at least {}{}", what, text, least,
                                      digits && ec == std::errc::result_out_of_range ? " that fits in 64 bits" : ""));
  return v;
}

std::vector<index> parse_counts(const std::string& list, std::string_view what, index least) {
  std::vector<index> out;
  for (const std::string& item : split(list)) out.push_back(parse_count(item, what, least));
  if (out.empty()) throw InvalidArgument(fmt::format("{} '{}': expected comma-separated whole numbers", what, list));
  return out;
}

std::vector<index> parse_dims(const std::string& size, const std::string& form) {
  const auto parts = [](const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, 'x');) out.push_back(item);
    return out;
  };
  const std::vector<std::string> fields = parts(size);
  if (fields.size() != parts(form).size() || size.ends_with('x'))
    throw InvalidArgument(fmt::format("bad size '{}': expected {} (positive integers)", size, form));
  std::vector<index> dims;
  for (const std::string& f : fields) dims.push_back(parse_count(f, fmt::format("size {}", size)));
  return dims;
}

namespace {

// A number as CLI11 would read it, or NaN with `ok` false for text that is not one.
double option_number(const std::string& text, bool& ok) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  ok = !text.empty() && end == text.data() + text.size() && (ec == std::errc() || ec == std::errc::result_out_of_range);
  if (ec == std::errc::result_out_of_range) v = text.starts_with('-') ? -HUGE_VAL : HUGE_VAL;  // beyond float64
  return v;
}

// `description` completes "'x' is not ..."; `brief` follows the value's type in --help ("INT:>=1").
CLI::Validator number_validator(std::string description, std::string brief, std::function<bool(double)> accepts) {
  return CLI::Validator(
      [description, accepts](std::string& text) -> std::string {
        bool ok = false;
        const double v = option_number(text, ok);
        if (ok && !std::isnan(v) && accepts(v)) return {};
        return fmt::format("'{}' is not {}", text, description);
      },
      brief, "");
}

std::string bound(double v) { return fmt::format("{:g}", v); }

}  // namespace

CLI::Validator at_least(double least) {
  if (std::isinf(least)) return number_validator("a number", "", [](double) { return true; });
  return number_validator("a finite number >= " + bound(least), ">=" + bound(least),
                          [least](double v) { return std::isfinite(v) && v >= least; });
}

CLI::Validator above(double least) {
  return number_validator("a finite number > " + bound(least), ">" + bound(least),
                          [least](double v) { return std::isfinite(v) && v > least; });
}

CLI::Validator whole(long long least, long long most) {
  const std::string range = most == std::numeric_limits<int>::max() ? fmt::format(">={}", least)
                                                                    : fmt::format("[{}, {}]", least, most);
  return CLI::Validator(
      [least, most, range](std::string& text) -> std::string {
        long long v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (!text.empty() && ec == std::errc() && end == text.data() + text.size() && v >= least && v <= most) return {};
        return fmt::format("'{}' is not a whole number in {}", text,
                           most == std::numeric_limits<int>::max() ? fmt::format("[{}, {}]", least, most) : range);
      },
      range, "");
}


}  // namespace linv::cli
