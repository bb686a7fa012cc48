// linv bench inverse | solve | slam | batched: times linv::inv, linv::solve, the bordered SLAM step and
// linv::batched::inv_into on inputs generated where they are used, for the benchmark drivers in bench/
// (which run the peers beside them and write bench/results/). The timed calls are synchronous (they
// return when the result is complete), so a host clock around them times the GPU work, launch and
// read-back included.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
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
      for (const index n : parse_counts(a.sizes, "--sizes"))
        with_type_named(dtype, [&]<Real T>() { bench_case<T>(a, kind, n, device, out["rows"]); });
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
  for (const index n : parse_counts(a.sizes, "--sizes")) {
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
    const index n = parse_count(c.substr(0, colon), "--cases rows"), m = parse_count(c.substr(colon + 1), "--cases cols");
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
      const index n = parse_count(c.substr(0, colon), "--cases order");
      const index count = parse_count(c.substr(colon + 1), "--cases count");
      with_type_named(dtype, [&]<Real T>() { bench_batched_case<T>(a, n, count, device, out["rows"]); });
    }
  write_bench(a.bench, out);
}

struct DistributedBenchArgs {
  BenchOptions bench{"", 3, ""};  // the devices come from --devices or the MPI job
  JobOptions job;
  std::string ops = "solve,inverse";
  std::string sizes = "16384";
  std::string method = "lu";
  index block = 0;
  int check_columns = 8;
};

// Times dist::solve (one right-hand side, the accuracy promise's residual included) and dist::inv (in A's own
// memory, so that the largest problems fit: A and A^-1 only) on the benchmark's general matrix, made where
// its tiles live (the same matrix as bench solve's: seed 1; b: seed 4). The inverse is then checked against
// A made again, on check_columns columns of A X - I spread over the matrix: ||A X(:, J) - I(:, J)||_1 /
// (n eps ||A||_1 ||X||_1). Every process runs this; process 0 prints and writes the JSON.
template <Real T>
void bench_distributed_case(const DistributedBenchArgs& a, const dist::Grid& grid, const std::string& op, index n,
                            nlohmann::json& rows) {
  const SolveOptions solve_options{.method = parse_method(a.method), .compute_residual = true};
  const SolveOptions inverse_options{.method = parse_method(a.method)};
  const T eps = std::numeric_limits<T>::epsilon();
  auto timed = [&](auto&& call) {
    grid.barrier();
    const auto start = std::chrono::steady_clock::now();
    auto result = call();
    grid.barrier();
    return std::make_pair(std::move(result),
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  // A warm-up at a small order: the communicators, handles and libraries start once per process.
  {
    const index w = std::min<index>(n, 2048);
    const auto A = dist::DistMatrix<T>::random_uniform(grid, w, w, 1, T(-1), T(1), a.block);
    const auto b = dist::DistMatrix<T>::random_uniform(grid, w, 1, 4, T(-1), T(1), a.block);
    (void)dist::solve<T>(A, b, solve_options);
  }
  std::vector<double> seconds;
  double residual = 0;
  Report report;
  for (int r = 0; r < a.bench.repeats; ++r) {
    if (op == "solve") {
      const auto A = dist::DistMatrix<T>::random_uniform(grid, n, n, 1, T(-1), T(1), a.block);
      const auto b = dist::DistMatrix<T>::random_uniform(grid, n, 1, 4, T(-1), T(1), a.block);
      auto [s, t] = timed([&] { return dist::solve<T>(A, b, solve_options); });
      seconds.push_back(t);
      residual = s.report.scaled_residual;
      report = s.report;
      continue;
    }
    auto A = dist::DistMatrix<T>::random_uniform(grid, n, n, 1, T(-1), T(1), a.block);
    auto [s, t] = timed([&] { return dist::inv<T>(std::move(A), inverse_options); });
    seconds.push_back(t);
    report = s.report;
    const auto again = dist::DistMatrix<T>::random_uniform(grid, n, n, 1, T(-1), T(1), a.block);
    const index k = std::min<index>(a.check_columns, n);
    Matrix<T> columns(n, k);  // I(:, J), J spread over 0 .. n-1
    for (index c = 0; c < k; ++c) columns(c * (n / k) + (n / k) / 2, c) = T(1);
    const auto V = dist::DistMatrix<T>::scatter(grid, grid.is_root() ? columns.view() : ConstMatrixView<T>(), n, k,
                                                s.x.block());
    dist::DistMatrix<T> Y(grid, n, k, s.x.block());
    dist::gemm<T>(T(1), s.x, V, T(0), Y);  // X(:, J)
    dist::DistMatrix<T> R = V.clone();
    dist::gemm<T>(T(1), again, Y, T(-1), R);  // A X(:, J) - I(:, J)
    residual = dist::norm1<T>(R) /
               (static_cast<double>(n) * eps * dist::norm1<T>(again) * dist::norm1<T>(s.x));
  }
  if (!grid.is_root()) return;
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  rows.push_back({{"op", op},
                  {"dtype", dtype_name(type_name<T>())},
                  {"n", n},
                  {"processes", grid.size()},
                  {"grid", {grid.rows(), grid.cols()}},
                  {"block", a.block == 0 ? dist::default_block(grid) : a.block},
                  {"engine", dist::engine(grid)},
                  {"method_used", to_string(report.method)},
                  {"seconds", median},
                  {"seconds_all", seconds},
                  {"scaled_residual", residual},
                  {"residual_kind", op == "solve" ? "||A x - b|| / (n eps (||A|| ||x|| + ||b||))"
                                                  : "sampled columns of A X - I"},
                  {"rcond", report.rcond},
                  {"growth", std::isfinite(report.growth) ? nlohmann::json(report.growth) : nlohmann::json()}});
  std::printf("%-8s %-4s %7lld  %d processes  %10.4f s  residual %.3g  rcond %.3g\n", op.c_str(),
              dtype_name(type_name<T>()), static_cast<long long>(n), grid.size(), median, residual, report.rcond);
}

void run_bench_distributed(const DistributedBenchArgs& a) {
  const dist::Grid grid = job_grid(a.job, "bench distributed");
  if (!grid.is_root()) silence_errors();
  for (const std::string& op : split(a.ops))
    if (op != "solve" && op != "inverse")
      throw InvalidArgument(fmt::format("bench distributed times solve and inverse, not {}", op));
  nlohmann::json out = bench_output(grid.device());
  out["job"] = grid.describe();
  for (const index n : parse_counts(a.sizes, "--sizes"))
    for (const std::string& op : split(a.ops)) bench_distributed_case<double>(a, grid, op, n, out["rows"]);
  if (grid.is_root()) write_bench(a.bench, out);
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
    {"bench", "distributed",
     "Time the distributed solve and inverse (float64, one process per GPU with --devices, or an MPI job with "
     "--distributed) on generated matrices, the inverse checked on sampled columns of A X - I",
     [](CLI::App& cmd) {
       auto a = std::make_shared<DistributedBenchArgs>();
       cmd.add_option("--devices", a->job.devices, "One process per device, started by linv: e.g. cuda:0,cuda:1");
       cmd.add_flag("--distributed", a->job.mpi, "Run as one process of an MPI job (mpirun -np N linv bench ...)");
       cmd.add_option("--device", a->job.device, "--distributed: cpu or cuda")->capture_default_str();
       cmd.add_option("--grid", a->job.grid, "The process grid, RxC (default: the most nearly square)");
       cmd.add_option("--ops", a->ops, "solve, inverse")->capture_default_str();
       cmd.add_option("--sizes", a->sizes, "Orders, comma-separated")->capture_default_str();
       cmd.add_option("--method", a->method, "auto, lu or cholesky")->capture_default_str();
       cmd.add_option("--block", a->block, "Tile size (default: the grid's, 1024 on GPUs)")->check(whole(1));
       cmd.add_option("--check-columns", a->check_columns, "inverse: columns of A X - I checked")
           ->capture_default_str()
           ->check(whole(1));
       cmd.add_option("--repeats", a->bench.repeats, "Timed runs per case")->capture_default_str()->check(whole(1, 1000));
       output(cmd.add_option("--json", a->bench.json, "Write the rows as JSON here (process 0)"), io::OutputKind::text);
       cmd.callback([a] { run_bench_distributed(*a); });
     }},
};

}  // namespace

std::span<const Command> bench_commands() { return kCommands; }

}  // namespace linv::cli
