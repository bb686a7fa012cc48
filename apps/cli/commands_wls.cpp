// linv wls, and linv bench wls --paper (the tables of Jung and O'Leary's weighted least-squares paper).
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "common.hpp"

namespace linv::cli {
namespace {

struct WlsArgs {
  std::string a, d, b, output, weights = "d2", storage = "full";
  std::string form = "normal";  // normal: A (m x n, m <= n), d, b; statsmodels: X (n x p), w, y
  double tolerance = 0;
  int max_iterations = 100;
  bool allow_ill_conditioned = false;
  CommonOptions common;
};

WlsOptions wls_options(const WlsArgs& a, Compute c) {
  if (a.weights != "d2" && a.weights != "d")
    throw InvalidArgument(fmt::format("--weights {}: expected d2 (d holds the diagonal of D^2) or d", a.weights));
  if (a.storage != "full" && a.storage != "packed")
    throw InvalidArgument(fmt::format("--storage {}: expected full or packed", a.storage));
  return {.precision = c == Compute::mixed ? Precision::Mixed : Precision::Native,
          .storage = a.storage == "full" ? Storage::Full : Storage::Packed,
          .weights = a.weights == "d2" ? Weights::Squared : Weights::Plain,
          .tolerance = a.tolerance,
          .max_iterations = a.max_iterations,
          .compute_residual = !a.common.no_check,
          .allow_ill_conditioned = a.allow_ill_conditioned};
}

void run_wls(const WlsArgs& a) {
  const WlsForm form = parse_wls_form(a.form);  // a usage error before any file is read
  io::AnyMatrix A = io::read_matrix(a.a), d = io::read_matrix(a.d), b = io::read_matrix(a.b);
  const Compute c = compute_type(a.common.precision, {dtype_of(A), dtype_of(d), dtype_of(b)});
  with_type(c, [&]<Real T>() {
    const Matrix<T> m = as<T>(std::move(A), c), weights = as<T>(std::move(d), c), rhs = as<T>(std::move(b), c);
    WlsOptions options = wls_options(a, c);
    options.form = form;
    const index unknowns = form == WlsForm::Design ? m.cols() : m.rows();
    const Device device = device_for(a.common, Operation::WeightedLeastSquares, unknowns);
    Matrix<T> d_copy, b_copy;
    const Solution<T> s = run_on(device, m, [&](ConstMatrixView<T> a_on) {
      return wls<T>(a_on, placed(weights.view(), device, d_copy), placed(rhs.view(), device, b_copy), options);
    });
    finish(a.common, "wls", s, {{"A", a.a}, {"d", a.d}, {"b", a.b}}, a.output, io::is_vector(a.b));
  });
}

// ---- the paper's tables ------------------------------------------------------------------------

double relative_error(ConstMatrixView<double> x, ConstMatrixView<double> ref) {
  double num = 0, den = 0;
  for (index i = 0; i < x.rows(); ++i) {
    num += (x(i, 0) - ref(i, 0)) * (x(i, 0) - ref(i, 0));
    den += ref(i, 0) * ref(i, 0);
  }
  return std::sqrt(num / den);
}

struct PaperArgs {
  BenchOptions bench{"cuda", 5, ""};  // --device and --repeats: the speed mode (without --paper)
  bool paper = false;
  double tolerance = 1e-8;  // the paper's
  std::string markdown;
  std::string sizes = "512,1024,1536,2048";
  std::string precisions = "double,mixed";
  std::string storages = "full,packed";
};

// ||A D^2 (b - A^T x)||_2 / (||A D||_F^2 ||x||_2): the normal equations' relative residual, in float64 on
// the host (the same formula as the PyTorch peer's).
double normal_residual(const Matrix<double>& A, const Matrix<double>& d2, const Matrix<double>& b,
                       const Matrix<double>& x) {
  const index m = A.rows(), n = A.cols();
  std::vector<double> t(static_cast<std::size_t>(n)), r(static_cast<std::size_t>(m), 0.0);
  double scale = 0, xn = 0, rn = 0;
  for (index i = 0; i < n; ++i) {
    double s = b(i, 0);
    for (index p = 0; p < m; ++p) {
      s -= A(p, i) * x(p, 0);
      scale += A(p, i) * A(p, i) * d2(i, 0);
    }
    t[static_cast<std::size_t>(i)] = d2(i, 0) * s;
  }
  for (index i = 0; i < n; ++i)
    for (index p = 0; p < m; ++p) r[static_cast<std::size_t>(p)] += A(p, i) * t[static_cast<std::size_t>(i)];
  for (index p = 0; p < m; ++p) {
    xn += x(p, 0) * x(p, 0);
    rn += r[static_cast<std::size_t>(p)] * r[static_cast<std::size_t>(p)];
  }
  return std::sqrt(rn) / (scale * std::sqrt(xn));
}

// Times linv::wls (one-shot: copy of A, formation, factorization, solve) for each m (n = 2m), precision
// and storage, on the paper's data (A, d, b uniform in [0, 1]) generated on the device.
void run_speed(const PaperArgs& p) {
  const Device device = Device::parse(p.bench.device);
  nlohmann::json out = bench_output(device);
  for (const index m : parse_counts(p.sizes, "--sizes")) {
    const index n = 2 * m;
    const Matrix<double> A = random_uniform<double>(m, n, 10 + m, 0.0, 1.0, device);
    const Matrix<double> d = random_uniform<double>(n, 1, 30 + m, 0.0, 1.0, device);
    const Matrix<double> b = random_uniform<double>(n, 1, 20 + m, 0.0, 1.0, device);
    const Matrix<double> Ah = A.to(Device::cpu()), dh = d.to(Device::cpu()), bh = b.to(Device::cpu());
    for (const std::string& precision : split(p.precisions))
      for (const std::string& storage : split(p.storages)) {
        if (precision != "double" && precision != "mixed")
          throw InvalidArgument(fmt::format("unknown precision '{}': expected double or mixed", precision));
        if (storage != "full" && storage != "packed")
          throw InvalidArgument(fmt::format("unknown storage '{}': expected full or packed", storage));
        const WlsOptions options{.precision = precision == "mixed" ? Precision::Mixed : Precision::Native,
                                 .storage = storage == "packed" ? Storage::Packed : Storage::Full};
        Solution<double> s;
        const Timing t =
            time_repeats(p.bench.repeats, s, [&] { return wls<double>(A.view(), d.view(), b.view(), options); });
        const double residual = normal_residual(Ah, dh, bh, s.x.to(Device::cpu()));
        const double c_bytes = static_cast<double>(storage == "packed" ? m * (m + 1) / 2 : m * m) *
                               (precision == "mixed" ? sizeof(double) + sizeof(float) : sizeof(double));
        out["rows"].push_back({{"m", m},
                               {"n", n},
                               {"precision", precision},
                               {"storage", storage},
                               {"seconds", t.median},
                               {"seconds_all", t.all},
                               {"iterations", s.report.iterations},
                               {"stop_reason", to_string(s.report.stop)},
                               {"c_bytes", c_bytes},
                               {"normal_residual", residual}});
        std::printf("wls m=%-6lld n=%-6lld %-6s %-6s %9.4f s  C %.3g GB  iterations %d  normal residual %.3g\n",
                    static_cast<long long>(m), static_cast<long long>(n), precision.c_str(), storage.c_str(), t.median,
                    c_bytes / 1e9, s.report.iterations, residual);
      }
  }
  write_bench(p.bench, out);
}

void run_paper(const PaperArgs& p) {
  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream md;
  md << "| table | m | n | single-precision relative error | refined relative error | iterations |\n"
     << "|---|---|---|---|---|---|\n";
  for (int table : {1, 2}) {
    for (const index m : parse_counts(p.sizes, "--sizes")) {
      const index n = 2 * m;
      const Matrix<double> A = random_uniform<double>(m, n, 10 + m, 0.0, 1.0);
      const Matrix<double> b = random_uniform<double>(n, 1, 20 + m, 0.0, 1.0);
      Matrix<double> d = random_uniform<double>(n, 1, 30 + m, 0.0, 1.0);
      if (table == 2)  // D^2_i = 10^(-4 + 8 i / (n - 1)): condition grown by 1e8
        for (index i = 0; i < n; ++i) d(i, 0) = std::pow(10.0, -4.0 + 8.0 * static_cast<double>(i) / (n - 1));
      const Solution<double> reference = wls<double>(A.view(), d.view(), b.view());
      const Solution<float> single = wls<float>(A.cast<float>().view(), d.cast<float>().view(), b.cast<float>().view());
      const Solution<double> refined =
          wls<double>(A.view(), d.view(), b.view(), {.precision = Precision::Mixed, .tolerance = p.tolerance, .max_iterations = 100});
      const double single_error = relative_error(single.x.cast<double>().view(), reference.x.view());
      const double refined_error = relative_error(refined.x.view(), reference.x.view());
      rows.push_back({{"table", table},
                      {"m", m},
                      {"n", n},
                      {"single_relative_error", single_error},
                      {"refined_relative_error", refined_error},
                      {"iterations", refined.report.iterations},
                      {"stop_reason", to_string(refined.report.stop)},
                      {"notes", refined.report.notes}});
      const bool fell_back = refined.report.stop == StopReason::FellBack;
      md << fmt::format("| {} | {} | {} | {:.2g} | {} | {} |\n", table, m, n, single_error,
                        fell_back ? std::string("did not converge (float64 used)") : fmt::format("{:.2g}", refined_error),
                        refined.report.iterations);
      std::printf("table %d  m=%-5lld n=%-5lld single %.2e  refined %.2e  iterations %d  %s\n", table,
                  static_cast<long long>(m), static_cast<long long>(n), single_error, refined_error,
                  refined.report.iterations, std::string(to_string(refined.report.stop)).c_str());
    }
  }
  nlohmann::json out = {{"benchmark", "wls-paper"},
                        {"device", "cpu"},
                        {"linv_version", build_info().version},
                        {"method", {{"data", "A, b uniform in [0, 1]; d (the diagonal of D^2) uniform in [0, 1] (table 1) "
                                              "or 10^(-4 + 8 i / (n - 1)) (table 2); n = 2m"},
                                    {"reference", "float64 formation and Cholesky (linv::wls, float64)"},
                                    {"single", "float32 formation, Cholesky and solve (linv::wls, float32)"},
                                    {"refined", fmt::format("the paper's Algorithm 1 (linv::wls, mixed), tolerance {:g} "
                                                            "on ||r||_2 / ||x||_2 (0: float64's level), at most 100 "
                                                            "iterations",
                                                            p.tolerance)},
                                    {"error", "||x - x_ref||_2 / ||x_ref||_2"}}},
                        {"rows", rows}};
  write_bench(p.bench, out);
  if (!p.markdown.empty()) io::write_text(p.markdown, md.str());
}

const Command kCommands[] = {
    {"", "wls",
     "Weighted least squares: x minimising ||D (b - A^T x)|| for A m x n (m <= n), through A D^2 A^T x = A D^2 b",
     [](CLI::App& cmd) {
       auto a = std::make_shared<WlsArgs>();
       input(cmd.add_option("A", a->a,
                      "The m x n matrix (m <= n); with --form statsmodels X, n x p (one row per observation)"))
           ->required();
       input(cmd.add_option("d", a->d,
                      "The weights: the diagonal of D^2 (default) or of D (--weights d), n entries; with --form "
                      "statsmodels w, the weights of the squared residuals"))
           ->required();
       input(cmd.add_option("b", a->b, "Right-hand sides, n x k (with --form statsmodels y)"))->required();
       output(cmd.add_option("-o,--output", a->output, "Where to write x (m x k; with --form statsmodels beta, p x k)"),
              io::OutputKind::matrix)
           ->required();
       cmd.add_option("--form", a->form,
                      "normal: x minimising ||D (b - A^T x)|| (interior-point methods, SLAM); statsmodels: beta "
                      "minimising ||W^1/2 (y - X beta)|| as statsmodels' WLS(y, X, weights=w) and SciPy take it, "
                      "X tall")
           ->capture_default_str();
       cmd.add_option("--weights", a->weights, "d2: d holds the diagonal of D^2; d: of D")->capture_default_str();
       cmd.add_option("--storage", a->storage, "full, or packed (rectangular full packed: half the memory)")
           ->capture_default_str();
       cmd.add_option("--tol", a->tolerance,
                      "mixed: stop at ||r|| / ||x|| <= tol (default: float64's level, the rounding error of computing r)")
           ->check(above(0));
       cmd.add_option("--max-iter", a->max_iterations, "mixed: iteration limit, then a float64 factorization")
           ->capture_default_str()
           ->check(whole(0));
       cmd.add_flag("--allow-ill-conditioned", a->allow_ill_conditioned,
                    "Return x when A D^2 A^T is singular to working precision (rcond below sqrt(n) eps), with a "
                    "note, instead of refusing it (exit 4); exactly singular systems are always refused");
       add_common_options(cmd, a->common);
       cmd.callback([a] { run_wls(*a); });
     }},
    {"bench", "wls",
     "Weighted least squares: time linv::wls per size, precision and storage (median of repeats after a warm-up); "
     "--paper regenerates Jung and O'Leary's Tables 1 and 2 (accuracy of the single-precision and refined solutions) "
     "instead",
     [](CLI::App& cmd) {
       auto p = std::make_shared<PaperArgs>();
       add_bench_options(cmd, p->bench);
       cmd.add_flag("--paper", p->paper, "Run the paper's tables (on the CPU, sizes default to the paper's)");
       cmd.add_option("--sizes", p->sizes, "Comma-separated m (n = 2m); default: the paper's, or 2048,8192 for timing");
       cmd.add_option("--tol", p->tolerance,
                      "--paper: refinement tolerance on ||r|| / ||x|| (the paper's 1e-8; 0: float64's level)")
           ->capture_default_str()
           ->check(at_least(0));
       cmd.add_option("--precisions", p->precisions, "Timing: double, mixed or both")->capture_default_str();
       cmd.add_option("--storages", p->storages, "Timing: full, packed or both")->capture_default_str();
       output(cmd.add_option("--markdown", p->markdown, "--paper: write a markdown table here"), io::OutputKind::text);
       cmd.callback([p, &cmd] {
         if (p->paper) return run_paper(*p);
         PaperArgs speed = *p;
         if (cmd.count("--sizes") == 0) speed.sizes = "2048,8192";
         run_speed(speed);
       });
     }},
};

}  // namespace

std::span<const Command> wls_commands() { return kCommands; }

}  // namespace linv::cli
