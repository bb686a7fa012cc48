// linv bench inverse: times linv::inv on matrices generated where they are inverted, for the benchmark
// drivers in bench/ (which run the peers beside it and write bench/results/). The timed call is
// synchronous (it returns when the inverse is complete), so a host clock around it times the GPU work.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>

#include "common.hpp"

namespace linv::cli {
namespace {

struct BenchArgs {
  std::string device = "cuda";
  std::string sizes = "1024,4096,8192,16384";
  std::string dtypes = "f64,f32";
  std::string kinds = "general,spd";
  std::string methods = "auto,lu,gauss-jordan,cholesky,cholesky-gets";
  int repeats = 5;
  std::string json;
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The benchmark's matrices (the peers build the same): general = uniform in [-1, 1];
// spd = G G^T / n + I with G uniform in [-1, 1].
template <Real T>
Matrix<T> bench_matrix(const std::string& kind, index n, Device device) {
  if (kind == "general") return random_uniform<T>(n, n, /*seed=*/1, T(-1), T(1), device);
  if (kind != "spd") throw InvalidArgument(fmt::format("unknown benchmark kind '{}': expected general or spd", kind));
  const Matrix<T> g = random_uniform<T>(n, n, /*seed=*/2, T(-1), T(1), device);
  Matrix<T> a = Matrix<T>::identity(n).to(device);
  syrk<T>(Uplo::Lower, Op::None, T(1) / static_cast<T>(n), g.view(), T(1), a.view());
  symmetrize_from_lower<T>(a.view());
  return a;
}

bool applies(const std::string& kind, const std::string& method) {
  if (method == "auto") return true;
  if (kind == "general") return method == "lu" || method == "gauss-jordan";
  return method == "cholesky" || method == "cholesky-gets";
}

template <Real T>
void bench_case(const BenchArgs& a, const std::string& kind, index n, Device device, nlohmann::json& rows) {
  const Matrix<T> A = bench_matrix<T>(kind, n, device);
  for (const std::string& method : split(a.methods)) {
    if (!applies(kind, method)) continue;
    // Large random float32 matrices are singular to float32's working precision (rcond ~ 1e-8 at
    // n = 8192); their inverses are still backward stable, and the peers return them too.
    const SolveOptions options{.method = parse_method(method), .allow_ill_conditioned = true};
    Solution<T> s = inv<T>(A.view(), options);  // warm-up: handles, workspaces, kernel loading
    std::vector<double> seconds;
    for (int r = 0; r < a.repeats; ++r) {
      s = Solution<T>{};  // free the last inverse before timing the next
      const auto start = std::chrono::steady_clock::now();
      s = inv<T>(A.view(), options);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    const double residual = scaled_residual_inverse<T>(A.view(), s.x.view(), std::numeric_limits<T>::epsilon());
    rows.push_back({{"kind", kind},
                    {"dtype", std::is_same_v<T, float> ? "f32" : "f64"},
                    {"n", n},
                    {"method", method},
                    {"method_used", s.report.method},
                    {"seconds", median},
                    {"seconds_all", seconds},
                    {"scaled_residual", residual},
                    {"rcond", s.report.rcond}});
    std::printf("%-8s %-4s %6lld %-14s %-14s %10.4f s  residual %.3g\n", kind.c_str(),
                std::is_same_v<T, float> ? "f32" : "f64",
                static_cast<long long>(n), method.c_str(), s.report.method.c_str(), median, residual);
    std::fflush(stdout);
  }
}

void run_bench(const BenchArgs& a) {
  const Device device = Device::parse(a.device);
  if (a.repeats < 1) throw InvalidArgument("--repeats must be at least 1");
  for (const std::string& m : split(a.methods)) (void)parse_method(m);
  std::string name = device.name();
  if (device.is_cuda()) name = cuda_devices().gpus.at(static_cast<std::size_t>(device.index())).name;
  nlohmann::json out = {{"device", name}, {"linv_version", build_info().version}, {"rows", nlohmann::json::array()}};
  for (const std::string& kind : split(a.kinds))
    for (const std::string& dtype : split(a.dtypes))
      for (const std::string& size : split(a.sizes)) {
        const index n = std::stoll(size);
        if (dtype == "f32")
          bench_case<float>(a, kind, n, device, out["rows"]);
        else if (dtype == "f64")
          bench_case<double>(a, kind, n, device, out["rows"]);
        else
          throw InvalidArgument(fmt::format("unknown dtype '{}': expected f32 or f64", dtype));
      }
  if (!a.json.empty()) io::write_text(a.json, out.dump(2) + "\n");
}

}  // namespace

void register_bench_commands(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks (the drivers in bench/ compare them with peers)");
  bench->require_subcommand(1);
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = bench->add_subcommand("inverse", "Time linv::inv on generated matrices (median of repeats after a warm-up)");
  cmd->add_option("--device", a->device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--sizes", a->sizes, "Comma-separated matrix sizes")->capture_default_str();
  cmd->add_option("--dtypes", a->dtypes, "f64, f32 or both")->capture_default_str();
  cmd->add_option("--kinds", a->kinds, "general (uniform in [-1, 1]) and/or spd (G G^T / n + I)")->capture_default_str();
  cmd->add_option("--methods", a->methods, "Methods to time (each where it applies)")->capture_default_str();
  cmd->add_option("--repeats", a->repeats, "Timed runs per case")->capture_default_str();
  cmd->add_option("--json", a->json, "Write the rows as JSON here");
  cmd->callback([a] { run_bench(*a); });
}

}  // namespace linv::cli
