#include "common.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace linv::cli {

void add_common_options(CLI::App& cmd, CommonOptions& o) {
  cmd.add_option("--device", o.device,
                 "Where to compute: cpu, cuda, cuda:N, or auto (a GPU when one is usable and n >= 512)")
      ->capture_default_str();
  cmd.add_option("--precision", o.precision,
                 "single, double or mixed (float32 factorization refined to float64 accuracy); "
                 "default: the input's own type")
      ->check(CLI::IsMember({"single", "double", "mixed"}));
  cmd.add_option("--report", o.report, "Write a JSON report (method, device, seconds, scaled residual, rcond)");
  cmd.add_flag("--no-check", o.no_check, "Skip the scaled-residual check (saves one matrix product)");
  cmd.add_flag("-q,--quiet", o.quiet, "Print nothing on success");
}

io::DType dtype_of(const io::AnyMatrix& m) {
  return std::holds_alternative<Matrix<float>>(m) ? io::DType::Float32 : io::DType::Float64;
}

Compute compute_type(const std::string& precision, const std::vector<io::DType>& inputs) {
  if (precision == "single") return Compute::f32;
  if (precision == "double") return Compute::f64;
  if (precision == "mixed") return Compute::mixed;
  for (io::DType t : inputs)
    if (t == io::DType::Float64) return Compute::f64;
  return Compute::f32;
}

Device resolve_device(const CommonOptions& o, index n, bool runs_on_gpu) {
  if (o.device != "auto") return Device::parse(o.device);  // a missing GPU or CUDA build is reported here
  // Below this size a one-shot command spends longer starting the GPU than computing.
  constexpr index kGpuWorthwhile = 512;
  return runs_on_gpu && n >= kGpuWorthwhile ? Device::best() : Device::cpu();
}

nlohmann::json report_json(const std::string& command, const SolveReport& r,
                           const std::vector<std::pair<std::string, std::string>>& inputs,
                           const std::string& output, index rows, index cols) {
  nlohmann::json j = nlohmann::json::parse(r.to_json());
  j["command"] = command;
  j["inputs"] = nlohmann::json::object();
  for (const auto& [name, path] : inputs) j["inputs"][name] = path;
  j["output"] = output;
  j["shape"] = {rows, cols};
  j["linv_version"] = build_info().version;
  return j;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
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
  std::vector<index> dims;
  for (const std::string& f : fields) {
    std::size_t used = 0;
    index v = 0;
    try {
      v = std::stoll(f, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != f.size() || v < 1) break;
    dims.push_back(v);
  }
  if (dims.size() != parts(form).size() || dims.size() != fields.size())
    throw InvalidArgument(fmt::format("bad size '{}': expected {} (positive integers)", size, form));
  return dims;
}

nlohmann::json bench_output(Device device) {
  std::string name = device.name();
  if (device.is_cuda()) name = cuda_devices().gpus.at(static_cast<std::size_t>(device.index())).name;
  return {{"device", name}, {"linv_version", build_info().version}, {"rows", nlohmann::json::array()}};
}

void write_report(const CommonOptions& o, const nlohmann::json& j) {
  if (!o.report.empty()) io::write_text(o.report, j.dump(2) + "\n");
}

void print_summary(const CommonOptions& o, const std::string& command, const SolveReport& r, index rows, index cols,
                   const std::string& output) {
  if (o.quiet) return;
  std::string line = fmt::format("{}: {} {} | {}", command, shape_string(rows, cols), r.precision, r.method);
  if (!r.method_reason.empty()) line += fmt::format(" ({})", r.method_reason);
  line += fmt::format(" | {:.4f} s", r.seconds);
  if (r.iterations > 0) line += fmt::format(" | {} iterations", r.iterations);
  if (std::isfinite(r.scaled_residual)) line += fmt::format(" | scaled residual {:.3g}", r.scaled_residual);
  if (std::isfinite(r.rcond)) line += fmt::format(" | rcond {:.3g}", r.rcond);
  if (std::isfinite(r.backward_error)) line += fmt::format(" | backward error {:.3g}", r.backward_error);
  if (r.rank >= 0) line += fmt::format(" | rank {}", r.rank);
  line += " -> " + output;
  std::printf("%s\n", line.c_str());
  for (const std::string& note : r.notes) std::printf("  note: %s\n", note.c_str());
}

}  // namespace linv::cli
