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
  double tolerance = 0;
  int max_iterations = 100;
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
          .compute_residual = !a.common.no_check};
}

template <Real T>
void wls_typed(const WlsArgs& a, const Matrix<T>& A, const Matrix<T>& d, const Matrix<T>& b, Compute c) {
  const Solution<T> s = wls<T>(A.view(), d.view(), b.view(), wls_options(a, c));
  io::write_matrix<T>(a.output, s.x.view());
  write_report(a.common, report_json("wls", s.report, {{"A", a.a}, {"d", a.d}, {"b", a.b}}, a.output, s.x.rows(),
                                     s.x.cols()));
  print_summary(a.common, "wls", s.report, s.x.rows(), s.x.cols(), a.output);
}

void run_wls(const WlsArgs& a) {
  if (a.common.device != "auto" && a.common.device != "cpu")
    throw InvalidArgument("wls runs on the CPU only in this version: use --device cpu (or auto)");
  io::AnyMatrix A = io::read_matrix(a.a), d = io::read_matrix(a.d), b = io::read_matrix(a.b);
  const Compute c = compute_type(a.common.precision, {dtype_of(A), dtype_of(d), dtype_of(b)});
  if (c == Compute::f32)
    wls_typed<float>(a, as<float>(std::move(A), c), as<float>(std::move(d), c), as<float>(std::move(b), c), c);
  else
    wls_typed<double>(a, as<double>(std::move(A), c), as<double>(std::move(d), c), as<double>(std::move(b), c), c);
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
  bool paper = false;
  double tolerance = 1e-8;  // the paper's
  std::string json, markdown;
  std::string sizes = "512,1024,1536,2048";
};

void run_paper(const PaperArgs& p) {
  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream md;
  md << "| table | m | n | single-precision relative error | refined relative error | iterations |\n"
     << "|---|---|---|---|---|---|\n";
  std::stringstream list(p.sizes);
  std::vector<index> sizes;
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty()) sizes.push_back(std::stoll(item));
  for (int table : {1, 2}) {
    for (index m : sizes) {
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
                      {"stop_reason", refined.report.stop_reason},
                      {"notes", refined.report.notes}});
      const bool fell_back = refined.report.stop_reason == "fell back to float64";
      md << fmt::format("| {} | {} | {} | {:.2g} | {} | {} |\n", table, m, n, single_error,
                        fell_back ? std::string("did not converge (float64 used)") : fmt::format("{:.2g}", refined_error),
                        refined.report.iterations);
      std::printf("table %d  m=%-5lld n=%-5lld single %.2e  refined %.2e  iterations %d  %s\n", table,
                  static_cast<long long>(m), static_cast<long long>(n), single_error, refined_error,
                  refined.report.iterations, refined.report.stop_reason.c_str());
      std::fflush(stdout);
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
  if (!p.json.empty()) io::write_text(p.json, out.dump(2) + "\n");
  if (!p.markdown.empty()) io::write_text(p.markdown, md.str());
}

}  // namespace

void register_wls_commands(CLI::App& app, CLI::App& bench) {
  auto a = std::make_shared<WlsArgs>();
  CLI::App* cmd = app.add_subcommand("wls", "Weighted least squares: x minimising ||D (b - A^T x)|| for A m x n (m <= n), "
                                            "through A D^2 A^T x = A D^2 b");
  cmd->add_option("A", a->a, "The m x n matrix (m <= n)")->required();
  cmd->add_option("d", a->d, "The weights: the diagonal of D^2 (default) or of D (--weights d), n entries")->required();
  cmd->add_option("b", a->b, "Right-hand sides, n x k")->required();
  cmd->add_option("-o,--output", a->output, "Where to write x (m x k)")->required();
  cmd->add_option("--weights", a->weights, "d2: d holds the diagonal of D^2; d: of D")->capture_default_str();
  cmd->add_option("--storage", a->storage, "full, or packed (rectangular full packed: half the memory)")
      ->capture_default_str();
  cmd->add_option("--tol", a->tolerance,
                  "mixed: stop at ||r|| / ||x|| <= tol (default m x float64 eps x ||A D||_F^2)");
  cmd->add_option("--max-iter", a->max_iterations, "mixed: iteration limit, then a float64 factorization")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_common_options(*cmd, a->common);
  cmd->callback([a] { run_wls(*a); });

  auto p = std::make_shared<PaperArgs>();
  CLI::App* pc = bench.add_subcommand("wls", "Weighted least squares: --paper regenerates Jung and O'Leary's Tables 1 "
                                             "and 2 (accuracy of the single-precision and refined solutions)");
  pc->add_flag("--paper", p->paper, "Run the paper's tables (the only mode so far)")->required();
  pc->add_option("--sizes", p->sizes, "Comma-separated m (n = 2m)")->capture_default_str();
  pc->add_option("--tol", p->tolerance, "Refinement tolerance on ||r|| / ||x|| (the paper's 1e-8; 0: float64's level)")
      ->capture_default_str();
  pc->add_option("--json", p->json, "Write the rows as JSON here");
  pc->add_option("--markdown", p->markdown, "Write a markdown table here");
  pc->callback([p] { run_paper(*p); });
}

}  // namespace linv::cli
