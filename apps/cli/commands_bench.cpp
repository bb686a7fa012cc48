// linv bench inverse | solve | slam | batched: times linv::inv, linv::solve, the bordered SLAM step and
// linv::batched::inv_into on inputs generated where they are used, for the benchmark drivers in bench/
// (which run the peers beside them and write bench/results/). The timed calls are synchronous (they
// return when the result is complete), so a host clock around them times the GPU work, launch and
// read-back included.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "common.hpp"

namespace linv::cli {
namespace {

struct BenchArgs {
  BenchOptions bench{"cuda", 5, ""};
  std::string sizes = "1024,4096,8192,16384";
  std::string dtypes = "f64,f32";
  std::string kinds = "general,spd";
  std::string methods = "auto,lu,calu,gauss-jordan,cholesky,cholesky-gets";
};

// The benchmark's matrices (the peers build the same): general = uniform in [-1, 1];
// spd = G G^T / n + I with G uniform in [-1, 1].
template <Real T>
Matrix<T> bench_matrix(const std::string& kind, index n, Device device) {
  if (kind == "general") return random_uniform<T>(n, n, /*seed=*/1, T(-1), T(1), device);
  if (kind != "spd") throw InvalidArgument(fmt::format("unknown benchmark kind '{}': expected general or spd", kind));
  const Matrix<T> g = random_uniform<T>(n, n, /*seed=*/2, T(-1), T(1), device);
  Matrix<T> a = identity<T>(n, device);
  syrk<T>(Uplo::Lower, Op::None, T(1) / static_cast<T>(n), g.view(), T(1), a.view());
  symmetrize_from_lower<T>(a.view());
  return a;
}

bool applies(const std::string& kind, const std::string& method) {
  if (method == "auto") return true;
  if (kind == "general") return method == "lu" || method == "calu" || method == "rbt" || method == "gauss-jordan";
  return method == "cholesky" || method == "cholesky-gets";
}

const char* dtype_name(const char* type) { return std::string_view(type) == "float32" ? "f32" : "f64"; }

template <Real T>
void bench_case(const BenchArgs& a, const std::string& kind, index n, Device device, nlohmann::json& rows) {
  const Matrix<T> A = bench_matrix<T>(kind, n, device);
  for (const std::string& method : split(a.methods)) {
    if (!applies(kind, method)) continue;
    // Large random float32 matrices are singular to float32's working precision (rcond ~ 1e-8 at
    // n = 8192); their inverses are still backward stable, and the peers return them too.
    const SolveOptions options{.method = parse_method(method), .allow_ill_conditioned = true};
    Solution<T> s;
    const Timing t = time_repeats(a.bench.repeats, s, [&] { return inv<T>(A.view(), options); });
    const double residual = scaled_residual_inverse<T>(A.view(), s.x.view(), std::numeric_limits<T>::epsilon());
    const std::string used(to_string(s.report.method));
    rows.push_back({{"kind", kind},
                    {"dtype", dtype_name(type_name<T>())},
                    {"n", n},
                    {"method", method},
                    {"method_used", used},
                    {"seconds", t.median},
                    {"seconds_all", t.all},
                    {"scaled_residual", residual},
                    {"rcond", s.report.rcond},
                    {"growth", std::isfinite(s.report.growth) ? nlohmann::json(s.report.growth) : nlohmann::json()}});
    std::printf("%-8s %-4s %6lld %-14s %-14s %10.4f s  residual %.3g\n", kind.c_str(), dtype_name(type_name<T>()),
                static_cast<long long>(n), method.c_str(), used.c_str(), t.median, residual);
  }
}

void run_bench(const BenchArgs& a) {
  const Device device = Device::parse(a.bench.device);
  for (const std::string& m : split(a.methods)) (void)parse_method(m);
  nlohmann::json out = bench_output(device);
  for (const std::string& kind : split(a.kinds))
    for (const std::string& dtype : split(a.dtypes))
      for (const std::string& size : split(a.sizes))
        with_type_named(dtype, [&]<Real T>() { bench_case<T>(a, kind, std::stoll(size), device, out["rows"]); });
  write_bench(a.bench, out);
}

struct SolveBenchArgs {
  BenchOptions bench{"cuda", 5, ""};
  std::string sizes = "4096,16384";
  std::string precisions = "double,mixed";
  std::string methods = "lu";
};

// Times linv::solve with one right-hand side on a general matrix (uniform in [-1, 1]), float64 data, in
// each precision: the float64 factorization, or float32 with float64 refinement.
void run_bench_solve(const SolveBenchArgs& a) {
  const Device device = Device::parse(a.bench.device);
  std::vector<std::pair<std::string, Method>> methods;
  for (const std::string& name : split(a.methods)) {
    const Method method = parse_method(name);
    if (method != Method::Auto && method != Method::LU && method != Method::CALU && method != Method::RBT)
      throw InvalidArgument(fmt::format("bench solve times the auto, lu, calu and rbt methods, not {}", name));
    methods.emplace_back(name, method);
  }
  nlohmann::json out = bench_output(device);
  for (const std::string& size : split(a.sizes)) {
    const index n = std::stoll(size);
    const Matrix<double> A = bench_matrix<double>("general", n, device);
    const Matrix<double> b = random_uniform<double>(n, 1, /*seed=*/4, -1.0, 1.0, device);
    for (const auto& [method_name, method] : methods)
    for (const std::string& precision : split(a.precisions)) {
      // "double", "mixed" (the device's choice of factor) or "mixed:<factor precision>"
      const bool mixed = precision.starts_with("mixed");
      // mixed precision factors by LU (LAPACK's, cuSOLVER's IRS, or the randomized LU where float64 is as fast)
      if (mixed && method == Method::CALU) continue;
      if (precision != "double" && precision != "mixed" && !precision.starts_with("mixed:"))
        throw InvalidArgument(fmt::format("unknown precision '{}': expected double, mixed or mixed:float32|tf32|bf16|fp16",
                                          precision));
      const SolveOptions options{
          .method = method,
          .precision = mixed ? Precision::Mixed : Precision::Native,
          .factor_precision = precision.starts_with("mixed:") ? parse_factor_precision(precision.substr(6))
                                                                : FactorPrecision::Auto,
          .allow_ill_conditioned = true};
      Solution<double> s;
      const Timing t = time_repeats(a.bench.repeats, s, [&] { return solve<double>(A.view(), b.view(), options); });
      const double residual = scaled_residual_solve<double>(A.view(), s.x.view(), b.view(), 0x1p-52);
      const std::string stop(to_string(s.report.stop));
      out["rows"].push_back({{"n", n},
                             {"precision", precision},
                             {"method", method_name},
                             {"growth", std::isfinite(s.report.growth) ? nlohmann::json(s.report.growth) : nlohmann::json()},
                             {"seconds", t.median},
                             {"seconds_all", t.all},
                             {"iterations", s.report.iterations},
                             {"stop_reason", stop},
                             {"notes", s.report.notes},
                             {"scaled_residual", residual}});
      std::printf("solve f64 n=%-6lld %-4s %-7s %10.4f s  iterations %d  %s  scaled residual %.3g\n",
                  static_cast<long long>(n), method_name.c_str(), precision.c_str(), t.median, s.report.iterations,
                  stop.c_str(), residual);
    }
  }
  write_bench(a.bench, out);
}

struct SlamBenchArgs {
  BenchOptions bench{"cpu", 5, ""};
  std::string cases = "20000:100,60000:500,120000:1000";  // rows:cols
};

// Times the bordered Jacobian's step J^+ d and its materialised J^+, on the CPU or (J copied to the GPU
// beforehand, as a Gauss-Newton loop keeps it there) on a GPU.
void run_bench_slam(const SlamBenchArgs& a) {
  const Device device = Device::parse(a.bench.device);
  nlohmann::json out = bench_output(device);
  for (const std::string& c : split(a.cases)) {
    const auto colon = c.find(':');
    if (colon == std::string::npos) throw InvalidArgument(fmt::format("bad case '{}': expected rows:cols", c));
    const index n = std::stoll(c.substr(0, colon)), m = std::stoll(c.substr(colon + 1));
    const slam::BorderedJacobian<double> J = slam::random_bordered_jacobian<double>(n, m, /*seed=*/1).to(device);
    const Matrix<double> d = random_uniform<double>(n, 1, /*seed=*/2, -1.0, 1.0, device);
    Solution<double> step, P;
    const Timing ts = time_repeats(a.bench.repeats, step, [&] { return slam::pinv_apply(J, d.view()); });
    const Timing tp = time_repeats(a.bench.repeats, P, [&] { return slam::pinv(J); });
    // check: J^+ d agrees with the materialised J^+ times d
    const Matrix<double> pd = matmul<double>(P.x.view(), d.view()).to(Device::cpu());
    const Matrix<double> sh = step.x.to(Device::cpu());
    double diff = 0, scale = 0;
    for (index i = 0; i < m; ++i) diff = std::max(diff, std::abs(pd(i, 0) - sh(i, 0))), scale = std::max(scale, std::abs(pd(i, 0)));
    out["rows"].push_back({{"n", n},
                           {"m", m},
                           {"step_seconds", ts.median},
                           {"step_seconds_all", ts.all},
                           {"pinv_seconds", tp.median},
                           {"pinv_seconds_all", tp.all},
                           {"pinv_bytes", static_cast<double>(m) * static_cast<double>(n) * sizeof(double)},
                           {"step_vs_pinv_relative_difference", diff / scale}});
    std::printf("slam n=%-7lld m=%-5lld J^+ d %10.6f s   J^+ %9.4f s   |J^+ d - (J^+) d| / |J^+ d| %.2g\n",
                static_cast<long long>(n), static_cast<long long>(m), ts.median, tp.median, diff / scale);
  }
  write_bench(a.bench, out);
}

struct BatchedBenchArgs {
  BenchOptions bench{"cuda", 20, ""};
  std::string cases = "4:1048576,8:1048576,16:262144,32:65536,64:16384";  // order:count
  std::string dtypes = "f32,f64";
};

// The largest scaled residual ||A X - I||_1 / (n eps ||A||_1 ||X||_1) over the first matrices of a batch.
template <Real T>
double batch_residual(const Matrix<T>& A, const Matrix<T>& X, index n, index count) {
  const index checked = std::min<index>(count, 2000);
  const Matrix<T> a = Matrix<T>::copy_of(A.view().block(0, 0, n, n * checked)).to(Device::cpu());
  const Matrix<T> x = Matrix<T>::copy_of(X.view().block(0, 0, n, n * checked)).to(Device::cpu());
  double worst = 0;
  for (index m = 0; m < checked; ++m)
    worst = std::max(worst, scaled_residual_inverse<T>(a.view().block(0, m * n, n, n), x.view().block(0, m * n, n, n),
                                                       std::numeric_limits<T>::epsilon()));
  return worst;
}

template <Real T>
void bench_batched_case(const BatchedBenchArgs& a, index n, index count, Device device, nlohmann::json& rows) {
  const Matrix<T> A = random_uniform<T>(n, n * count, /*seed=*/3, T(-1), T(1), device);
  Matrix<T> X = Matrix<T>::uninitialized(n, n * count, device);
  batched::Status s;
  const Timing t = time_repeats(a.bench.repeats, s, [&] { return batched::inv_into<T>(A.view(), X.view()); });
  const double residual = batch_residual<T>(A, X, n, count);
  const std::string used = fmt::format("{}{}", to_string(s.report.method),
                                       s.report.notes.empty() ? "" : " (" + s.report.notes.front() + ")");
  rows.push_back({{"dtype", dtype_name(type_name<T>())},
                  {"n", n},
                  {"batch", count},
                  {"method_used", used},
                  {"seconds", t.median},
                  {"seconds_all", t.all},
                  {"singular", s.singular.size()},
                  {"max_scaled_residual", residual}});
  std::printf("batched %-4s n=%-3lld batch=%-8lld %-45s %10.6f s  max residual %.3g  singular %lld\n",
              dtype_name(type_name<T>()), static_cast<long long>(n), static_cast<long long>(count), used.c_str(),
              t.median, residual, static_cast<long long>(s.singular.size()));
}

void run_bench_batched(const BatchedBenchArgs& a) {
  const Device device = Device::parse(a.bench.device);
  nlohmann::json out = bench_output(device);
  for (const std::string& dtype : split(a.dtypes))
    for (const std::string& c : split(a.cases)) {
      const auto colon = c.find(':');
      if (colon == std::string::npos)
        throw InvalidArgument(fmt::format("bad case '{}': expected order:count, e.g. 8:1048576", c));
      const index n = std::stoll(c.substr(0, colon)), count = std::stoll(c.substr(colon + 1));
      with_type_named(dtype, [&]<Real T>() { bench_batched_case<T>(a, n, count, device, out["rows"]); });
    }
  write_bench(a.bench, out);
}

const Command kCommands[] = {
    {"", "bench", "Benchmarks (the drivers in bench/ compare them with peers)",
     [](CLI::App& cmd) { cmd.require_subcommand(1); }},
    {"bench", "inverse", "Time linv::inv on generated matrices (median of repeats after a warm-up)",
     [](CLI::App& cmd) {
       auto a = std::make_shared<BenchArgs>();
       add_bench_options(cmd, a->bench);
       cmd.add_option("--sizes", a->sizes, "Comma-separated matrix sizes")->capture_default_str();
       cmd.add_option("--dtypes", a->dtypes, "f64, f32 or both")->capture_default_str();
       cmd.add_option("--kinds", a->kinds, "general (uniform in [-1, 1]) and/or spd (G G^T / n + I)")
           ->capture_default_str();
       cmd.add_option("--methods", a->methods, "Methods to time (each where it applies)")->capture_default_str();
       cmd.callback([a] { run_bench(*a); });
     }},
    {"bench", "solve",
     "Time linv::solve (one right-hand side) in float64 and mixed precision (median of repeats after a warm-up)",
     [](CLI::App& cmd) {
       auto a = std::make_shared<SolveBenchArgs>();
       add_bench_options(cmd, a->bench);
       cmd.add_option("--sizes", a->sizes, "Comma-separated matrix sizes")->capture_default_str();
       cmd.add_option("--precisions", a->precisions,
                      "Comma-separated: double, mixed (factorization chosen by the device: float32 where it is "
                      "faster than float64) or mixed:float32|tf32|bf16|fp16")
           ->capture_default_str();
       cmd.add_option("--methods", a->methods,
                      "Comma-separated: auto, lu (partial pivoting), calu (tournament pivoting) and/or rbt (random butterflies, "
                      "no pivoting, refinement); mixed precision with lu only")
           ->capture_default_str();
       cmd.callback([a] { run_bench_solve(*a); });
     }},
    {"bench", "slam", "Time the bordered-Jacobian step J^+ d and J^+",
     [](CLI::App& cmd) {
       auto a = std::make_shared<SlamBenchArgs>();
       add_bench_options(cmd, a->bench);
       cmd.add_option("--cases", a->cases, "Comma-separated rows:cols pairs")->capture_default_str();
       cmd.callback([a] { run_bench_slam(*a); });
     }},
    {"bench", "batched",
     "Time linv::batched::inv_into on generated batches (median of repeats after a warm-up)",
     [](CLI::App& cmd) {
       auto a = std::make_shared<BatchedBenchArgs>();
       add_bench_options(cmd, a->bench);
       cmd.add_option("--cases", a->cases, "Comma-separated order:count pairs")->capture_default_str();
       cmd.add_option("--dtypes", a->dtypes, "f32, f64 or both")->capture_default_str();
       cmd.callback([a] { run_bench_batched(*a); });
     }},
};

}  // namespace

std::span<const Command> bench_commands() { return kCommands; }

}  // namespace linv::cli
