// linv inv | solve | lstsq | pinv | chol
#include <fmt/format.h>

#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <variant>

#include "common.hpp"

namespace linv::cli {
namespace {

constexpr const char* kMatrixHelp = "Input matrix: .npy, .mtx or .mat[:variable]";
constexpr const char* kMethodHelp =
    "auto, lu, cholesky, gauss-jordan, cholesky-gets, gauss-seidel or triangular. auto picks triangular "
    "for triangular input, cholesky for symmetric positive definite input, lu otherwise";

struct SolveArgs {
  std::string a, b, output, method = "auto";
  std::string structure = "dense", apply;  // pinv: dense (SVD) or bordered (SLAM Jacobian); d for J^+ d
  index dense_cols = 1;
  double damping = 0;
  bool batch = false;  // A (and B) are stacks of matrices (B x n x n, B x n x k)
  double tolerance = 0;
  int max_iterations = 1000;
  std::string factor = "float32";  // --precision mixed: the factorization's precision
  double rcond = -1;
  bool allow_ill_conditioned = false;
  CommonOptions common;
};

void add_conditioning_option(CLI::App& cmd, SolveArgs& a) {
  cmd.add_flag("--allow-ill-conditioned", a.allow_ill_conditioned,
               "Return the result for a matrix singular to working precision (rcond below machine epsilon) "
               "with a note, instead of refusing it (exit 4). Exactly singular matrices are always refused");
}

void add_factor_option(CLI::App& cmd, SolveArgs& a) {
  cmd.add_option("--factor", a.factor,
                 "With --precision mixed: the factorization's precision. float32 everywhere; tf32, bf16 and fp16 "
                 "(float32 storage, tensor-core updates) for LU on a GPU, converging only for well-conditioned "
                 "matrices (otherwise the float64 fallback runs and the report says so)")
      ->capture_default_str()
      ->check(CLI::IsMember({"float32", "tf32", "bf16", "fp16"}));
}

void add_iteration_options(CLI::App& cmd, SolveArgs& a) {
  cmd.add_option("--tol", a.tolerance,
                 "gauss-seidel: stop at this normwise backward error (default: max(n, 16) x machine epsilon)");
  cmd.add_option("--max-iter", a.max_iterations, "gauss-seidel: iteration limit (exit code 4 when reached)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

SolveOptions solve_options(const SolveArgs& a, Compute c) {
  return {.method = parse_method(a.method),
          .precision = c == Compute::mixed ? Precision::Mixed : Precision::Native,
          .factor_precision = parse_factor_precision(a.factor),
          .tolerance = a.tolerance,
          .max_iterations = a.max_iterations,
          .compute_residual = !a.common.no_check,
          .allow_ill_conditioned = a.allow_ill_conditioned};
}

template <Real T>
void finish(const SolveArgs& a, const char* command, const Solution<T>& s,
            const std::vector<std::pair<std::string, std::string>>& inputs) {
  io::write_matrix<T>(a.output, s.x.view());
  write_report(a.common, report_json(command, s.report, inputs, a.output, s.x.rows(), s.x.cols()));
  print_summary(a.common, command, s.report, s.x.rows(), s.x.cols(), a.output);
}

// Gauss-Seidel runs on the CPU only in this version; auto keeps it there.
bool gpu_capable(const SolveArgs& a) { return a.method != "gauss-seidel"; }

template <Real T>
void inv_typed(const SolveArgs& a, const Matrix<T>& A, Compute c) {
  const Device device = resolve_device(a.common, A.rows(), gpu_capable(a));
  const SolveOptions options = solve_options(a, c);
  finish(a, "inv", run_on<T>(device, A, [&](ConstMatrixView<T> m) { return inv<T>(m, options); }), {{"A", a.a}});
}

// A stack in the type a command computes in (never narrowing unless asked, as for single matrices).
template <Real T>
io::MatrixStack<T> stack_as(io::AnyStack&& s) {
  if (auto* same = std::get_if<io::MatrixStack<T>>(&s)) return std::move(*same);
  return std::visit(
      [](const auto& other) {
        return io::MatrixStack<T>{other.count, other.rows, other.cols, std::vector<T>(other.data.begin(), other.data.end())};
      },
      s);
}

// linv inv --batch / solve --batch: every matrix of a B x n x n stack (with a B x n x k stack of
// right-hand sides for solve), on the GPU by our batched kernels.
template <Real T>
void batch_typed(const SolveArgs& a, const char* command, io::MatrixStack<T>&& stack,
                 std::optional<io::MatrixStack<T>>&& rhs) {
  const index n = stack.rows, count = stack.count;
  if (stack.cols != n)
    throw InvalidArgument(fmt::format("{} --batch needs square matrices; {} holds {} matrices of {}", command, a.a,
                                      count, shape_string(stack.rows, stack.cols)));
  if (rhs && (rhs->count != count || rhs->rows != n))
    throw ShapeMismatch(fmt::format("{} --batch: {} must hold one n x k block per matrix of {}", command, a.b, a.a),
                        count * n, n, rhs->count * rhs->rows, rhs->cols);
  // The batch as one n x (n count) matrix: the stack's layout already.
  const auto as_matrix = [](const io::MatrixStack<T>& st) {
    Matrix<T> m = Matrix<T>::uninitialized(st.rows, st.cols * st.count);
    std::copy(st.data.begin(), st.data.end(), m.data());
    return m;
  };
  const Matrix<T> A = as_matrix(stack);
  // Below about a million elements the transfers and GPU start-up outweigh the work.
  constexpr index kGpuWorthwhile = 1 << 20;
  const Device device = a.common.device != "auto" ? Device::parse(a.common.device)
                        : n * n * count >= kGpuWorthwhile ? Device::best()
                                                          : Device::cpu();
  const Matrix<T> a_on = device.is_cpu() ? Matrix<T>() : A.to(device);
  const ConstMatrixView<T> a_view = device.is_cpu() ? A.view() : a_on.view();
  batched::Result<T> result;
  io::MatrixStack<T> out;
  if (rhs) {
    const Matrix<T> B = as_matrix(*rhs);
    const Matrix<T> b_on = device.is_cpu() ? Matrix<T>() : B.to(device);
    result = batched::solve<T>(a_view, device.is_cpu() ? B.view() : b_on.view());
    out = std::move(*rhs);
  } else {
    result = batched::inv<T>(a_view);
    out = std::move(stack);
  }
  const batched::Status& r = result.status;
  const Matrix<T> x = result.x.to(Device::cpu());
  std::copy(x.data(), x.data() + out.data.size(), out.data.begin());
  io::write_stack<T>(a.output, out);

  nlohmann::json j;
  j["command"] = std::string(command) + " --batch";
  j["inputs"] = {{"A", a.a}};
  if (!a.b.empty()) j["inputs"]["B"] = a.b;
  j["output"] = a.output;
  j["count"] = count;
  j["order"] = n;
  j["device"] = device.name();
  j["precision"] = type_name<T>();
  j["method"] = r.method;
  j["seconds"] = r.seconds;
  j["singular"] = r.singular;
  nlohmann::json singular = nlohmann::json::array();  // the first 1000, as [matrix, pivot]
  for (index m = 0; m < static_cast<index>(r.pivot.size()) && singular.size() < 1000; ++m)
    if (r.pivot[static_cast<std::size_t>(m)] != 0) singular.push_back({m, r.pivot[static_cast<std::size_t>(m)]});
  j["singular_matrices"] = singular;
  j["linv_version"] = build_info().version;
  write_report(a.common, j);
  if (!a.common.quiet)
    std::printf("%s --batch: %lld matrices of %s %s | %s | %s | %.4f s -> %s\n", command, static_cast<long long>(count),
                shape_string(n, n).c_str(), type_name<T>(), device.name().c_str(), r.method.c_str(), r.seconds,
                a.output.c_str());
  if (r.singular > 0)
    throw NumericalError(fmt::format(
        "{} of {} matrices are singular (first: matrix {} with a zero pivot in column {}); their blocks of {} are NaN, "
        "every other {} was computed",
        r.singular, count, singular[0][0].get<index>(), singular[0][1].get<index>(), a.output,
        rhs ? "system" : "matrix"));
}

void run_batch(const SolveArgs& a, const char* command) {
  if (a.method != "auto")
    throw InvalidArgument(fmt::format(
        "{} --batch chooses its own method (Gauss-Jordan on the GPU, LAPACK on the CPU): drop --method", command));
  if (a.common.precision == "mixed") throw InvalidArgument(fmt::format("{} --batch has no mixed-precision variant", command));
  io::AnyStack S = io::read_stack(a.a);
  std::optional<io::AnyStack> R;
  if (!a.b.empty()) R = io::read_stack(a.b);
  const auto dtype = [](const io::AnyStack& st) {
    return std::holds_alternative<io::MatrixStack<float>>(st) ? io::DType::Float32 : io::DType::Float64;
  };
  std::vector<io::DType> types{dtype(S)};
  if (R) types.push_back(dtype(*R));
  if (compute_type(a.common.precision, types) == Compute::f32) {
    std::optional<io::MatrixStack<float>> rhs;
    if (R) rhs = stack_as<float>(std::move(*R));
    batch_typed<float>(a, command, stack_as<float>(std::move(S)), std::move(rhs));
  } else {
    std::optional<io::MatrixStack<double>> rhs;
    if (R) rhs = stack_as<double>(std::move(*R));
    batch_typed<double>(a, command, stack_as<double>(std::move(S)), std::move(rhs));
  }
}

void run_inv(const SolveArgs& a) {
  if (a.batch) return run_batch(a, "inv");
  (void)parse_method(a.method);  // usage errors before any file is read
  io::AnyMatrix A = io::read_matrix(a.a);
  const Compute c = compute_type(a.common.precision, {dtype_of(A)});
  if (c == Compute::f32)
    inv_typed<float>(a, as<float>(std::move(A), c), c);
  else
    inv_typed<double>(a, as<double>(std::move(A), c), c);
}

template <Real T>
void solve_typed(const SolveArgs& a, const Matrix<T>& A, const Matrix<T>& B, Compute c) {
  const Device device = resolve_device(a.common, A.rows(), gpu_capable(a));
  const SolveOptions options = solve_options(a, c);
  // B goes where A goes; on the CPU it is used in place.
  const Matrix<T> b_on_device = device.is_cpu() ? Matrix<T>() : B.to(device);
  const ConstMatrixView<T> b = device.is_cpu() ? B.view() : b_on_device.view();
  finish(a, "solve", run_on<T>(device, A, [&](ConstMatrixView<T> m) { return solve<T>(m, b, options); }),
         {{"A", a.a}, {"B", a.b}});
}

void run_solve(const SolveArgs& a) {
  if (a.batch) return run_batch(a, "solve");
  (void)parse_method(a.method);
  io::AnyMatrix A = io::read_matrix(a.a), B = io::read_matrix(a.b);
  const Compute c = compute_type(a.common.precision, {dtype_of(A), dtype_of(B)});
  if (c == Compute::f32)
    solve_typed<float>(a, as<float>(std::move(A), c), as<float>(std::move(B), c), c);
  else
    solve_typed<double>(a, as<double>(std::move(A), c), as<double>(std::move(B), c), c);
}

void require_not_mixed(const CommonOptions& o, const char* command) {
  if (o.precision == "mixed")
    throw InvalidArgument(fmt::format("{} has no mixed-precision variant: use --precision single or double", command));
}

// lstsq and pinv run on the CPU only in this version: auto keeps them there, an explicit GPU is refused.
void require_cpu_command(const CommonOptions& o, const char* command) {
  if (!resolve_device(o, 0, /*runs_on_gpu=*/false).is_cpu())
    throw InvalidArgument(fmt::format("{} runs on the CPU only in this version of linv: use --device cpu", command));
}

void run_lstsq(const SolveArgs& a) {
  require_cpu_command(a.common, "lstsq");
  io::AnyMatrix A = io::read_matrix(a.a), B = io::read_matrix(a.b);
  const Compute c = compute_type(a.common.precision, {dtype_of(A), dtype_of(B)});
  const LstsqOptions options{.rcond = a.rcond,
                             .precision = c == Compute::mixed ? Precision::Mixed : Precision::Native,
                             .compute_residual = !a.common.no_check};
  const std::vector<std::pair<std::string, std::string>> inputs = {{"A", a.a}, {"B", a.b}};
  if (c == Compute::f32) {
    Matrix<float> a32 = as<float>(std::move(A), c), b32 = as<float>(std::move(B), c);
    finish(a, "lstsq", lstsq<float>(a32.view(), b32.view(), options), inputs);
  } else {
    Matrix<double> a64 = as<double>(std::move(A), c), b64 = as<double>(std::move(B), c);
    finish(a, "lstsq", lstsq<double>(a64.view(), b64.view(), options), inputs);
  }
}

// The bordered structure of J (see slam::BorderedJacobian::from_dense); a matrix without it is refused
// naming the file and the row.
template <Real T>
slam::BorderedJacobian<T> bordered_from(const Matrix<T>& J, index k, const std::string& file) {
  try {
    return slam::BorderedJacobian<T>::from_dense(J.view(), k);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(fmt::format("{}: {} (use --structure dense or sparse)", file, e.what()));
  }
}

template <Real T>
void pinv_bordered(const SolveArgs& a, const Matrix<T>& J) {
  const auto start = std::chrono::steady_clock::now();
  const slam::BorderedJacobian<T> bj = bordered_from(J, a.dense_cols, a.a);
  SolveReport r;
  r.operation = "pinv";
  r.method = fmt::format("bordered Jacobian: arrowhead J^T J through its Schur complement ({} dense, {} segment columns)",
                         bj.dense_cols(), bj.segments());
  r.device = "cpu";
  r.precision = type_name<T>();
  Matrix<T> x;
  if (!a.apply.empty()) {
    io::AnyMatrix d = io::read_matrix(a.apply);
    const Matrix<T> dv = io::convert<T>(std::move(d), /*allow_narrowing=*/std::is_same_v<T, float>);
    x = slam::pinv_apply(bj, dv.view(), a.damping);
    r.method += ", applied to d without forming J^+";
  } else {
    x = slam::pinv(bj, a.damping);
  }
  if (a.damping != 0) r.notes.push_back(fmt::format("Levenberg-Marquardt damping {:g}", a.damping));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  io::write_matrix<T>(a.output, x.view());
  write_report(a.common, report_json("pinv", r, {{"J", a.a}}, a.output, x.rows(), x.cols()));
  print_summary(a.common, "pinv", r, x.rows(), x.cols(), a.output);
}

// The general sparse fallback: x = argmin ||J x - d|| by CGLS, J as compressed rows.
template <Real T>
void pinv_sparse(const SolveArgs& a, const Matrix<T>& J) {
  const auto start = std::chrono::steady_clock::now();
  const Matrix<T> d = io::convert<T>(io::read_matrix(a.apply), /*allow_narrowing=*/std::is_same_v<T, float>);
  const slam::SparseJacobian<T> sparse = slam::SparseJacobian<T>::from_dense(J.view());
  slam::CglsOutcome outcome;
  const double tolerance = a.tolerance > 0 ? a.tolerance : 1e-10;
  const Matrix<T> x = slam::cgls_apply(sparse, d.view(), tolerance, a.max_iterations, outcome);
  SolveReport r;
  r.operation = "pinv";
  r.method = fmt::format("sparse least squares by CGLS ({} nonzeros), applied to d", sparse.value.size());
  r.device = "cpu";
  r.precision = type_name<T>();
  r.iterations = outcome.iterations;
  r.stop_reason = outcome.converged ? "converged" : "iteration limit";
  r.notes.push_back(fmt::format("relative normal-equation residual {:.3g} (tolerance {:.3g})", outcome.residual,
                                tolerance));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!outcome.converged)
    throw NoConvergence("CGLS", outcome.iterations, outcome.residual, tolerance, "the iteration limit (--max-iter) was reached");
  io::write_matrix<T>(a.output, x.view());
  write_report(a.common, report_json("pinv", r, {{"J", a.a}, {"d", a.apply}}, a.output, x.rows(), x.cols()));
  print_summary(a.common, "pinv", r, x.rows(), x.cols(), a.output);
}

void run_pinv(const SolveArgs& a) {
  require_not_mixed(a.common, "pinv");
  if (a.structure == "bordered") {
    require_cpu_command(a.common, "pinv");
    io::AnyMatrix A = io::read_matrix(a.a);
    const Compute c = compute_type(a.common.precision, {dtype_of(A)});
    if (c == Compute::f32)
      pinv_bordered<float>(a, as<float>(std::move(A), c));
    else
      pinv_bordered<double>(a, as<double>(std::move(A), c));
    return;
  }
  if (a.structure == "sparse") {
    require_cpu_command(a.common, "pinv");
    if (a.apply.empty())
      throw InvalidArgument("--structure sparse computes the step J^+ d by CGLS: give --apply d.npy (J^+ itself of a "
                            "general sparse J is dense: use --structure dense)");
    io::AnyMatrix A = io::read_matrix(a.a);
    const Compute c = compute_type(a.common.precision, {dtype_of(A)});
    if (c == Compute::f32)
      pinv_sparse<float>(a, as<float>(std::move(A), c));
    else
      pinv_sparse<double>(a, as<double>(std::move(A), c));
    return;
  }
  if (a.structure != "dense")
    throw InvalidArgument(fmt::format("--structure {}: expected dense (SVD), bordered or sparse", a.structure));
  if (!a.apply.empty()) throw InvalidArgument("--apply needs --structure bordered in this version");
  require_cpu_command(a.common, "pinv");
  io::AnyMatrix A = io::read_matrix(a.a);
  const Compute c = compute_type(a.common.precision, {dtype_of(A)});
  const LstsqOptions options{.rcond = a.rcond, .compute_residual = !a.common.no_check};
  if (c == Compute::f32) {
    finish(a, "pinv", pinv<float>(as<float>(std::move(A), c).view(), options), {{"A", a.a}});
  } else {
    finish(a, "pinv", pinv<double>(as<double>(std::move(A), c).view(), options), {{"A", a.a}});
  }
}

template <Real T>
void chol_typed(const SolveArgs& a, const Matrix<T>& A) {
  require_finite<T>(A.view(), "A");
  if (!A.is_square())
    throw InvalidArgument(fmt::format("chol needs a square matrix, got {}", shape_string(A.rows(), A.cols())));
  require_symmetric<T>(A.view(), "chol");
  const Device device = resolve_device(a.common, A.rows(), /*runs_on_gpu=*/true);
  Solution<T> s = run_on<T>(device, A, [&](ConstMatrixView<T> m) {
    Solution<T> r;
    r.report.operation = "chol";
    r.report.method = "cholesky (potrf)";
    r.report.device = device.name();
    r.report.precision = type_name<T>();
    const auto start = std::chrono::steady_clock::now();
    Cholesky<T> chol(m);
    r.x = chol.L();
    r.report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.report.rcond = chol.rcond();
    return r;
  });
  if (!a.common.no_check)
    s.report.scaled_residual = scaled_residual_cholesky<T>(A.view(), s.x.view(), std::numeric_limits<T>::epsilon());
  finish(a, "chol", s, {{"A", a.a}});
}

void run_chol(const SolveArgs& a) {
  require_not_mixed(a.common, "chol");
  io::AnyMatrix A = io::read_matrix(a.a);
  const Compute c = compute_type(a.common.precision, {dtype_of(A)});
  if (c == Compute::f32)
    chol_typed<float>(a, as<float>(std::move(A), c));
  else
    chol_typed<double>(a, as<double>(std::move(A), c));
}

CLI::App* add_command(CLI::App& app, const char* name, const char* description, std::shared_ptr<SolveArgs> a,
                      void (*run)(const SolveArgs&)) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->callback([a, run] { run(*a); });
  return cmd;
}

}  // namespace

void register_dense_commands(CLI::App& app) {
  {
    auto a = std::make_shared<SolveArgs>();
    CLI::App* cmd = add_command(app, "inv", "Invert a square matrix: X = A^-1", a, run_inv);
    cmd->add_option("A", a->a, kMatrixHelp)->required();
    cmd->add_option("-o,--output", a->output, "Where to write the inverse")->required();
    cmd->add_flag("--batch", a->batch,
                  "A is a stack of B square matrices (a B x n x n .npy array, n <= 64): invert each one. A singular "
                  "matrix is reported (exit 4) with its block of the output NaN; the others are still inverted");
    cmd->add_option("--method", a->method, kMethodHelp)->capture_default_str();
    add_factor_option(*cmd, *a);
    add_iteration_options(*cmd, *a);
    add_conditioning_option(*cmd, *a);
    add_common_options(*cmd, a->common);
  }
  {
    auto a = std::make_shared<SolveArgs>();
    CLI::App* cmd = add_command(app, "solve", "Solve A X = B for square A", a, run_solve);
    cmd->add_option("A", a->a, kMatrixHelp)->required();
    cmd->add_option("B", a->b, "Right-hand sides (n x k)")->required();
    cmd->add_option("-o,--output", a->output, "Where to write X")->required();
    cmd->add_flag("--batch", a->batch,
                  "A is a stack of B square matrices (B x n x n .npy, n <= 64) and B a stack of B right-hand-side "
                  "blocks (B x n x k): solve each system. A singular system is reported (exit 4) with its block of "
                  "the output NaN; the others are still solved");
    cmd->add_option("--method", a->method, kMethodHelp)->capture_default_str();
    add_factor_option(*cmd, *a);
    add_iteration_options(*cmd, *a);
    add_conditioning_option(*cmd, *a);
    add_common_options(*cmd, a->common);
  }
  {
    auto a = std::make_shared<SolveArgs>();
    CLI::App* cmd = add_command(app, "lstsq",
                                "Minimum-norm least-squares solution of A X ~ B (QR with column pivoting)", a, run_lstsq);
    cmd->add_option("A", a->a, kMatrixHelp)->required();
    cmd->add_option("B", a->b, "Right-hand sides (m x k)")->required();
    cmd->add_option("-o,--output", a->output, "Where to write X")->required();
    cmd->add_option("--rcond", a->rcond, "Relative rank tolerance (default: max(m, n) x machine epsilon)");
    add_common_options(*cmd, a->common);
  }
  {
    auto a = std::make_shared<SolveArgs>();
    CLI::App* cmd = add_command(app, "pinv", "Moore-Penrose pseudoinverse (SVD with a rank tolerance)", a, run_pinv);
    cmd->add_option("A", a->a, kMatrixHelp)->required();
    cmd->add_option("-o,--output", a->output, "Where to write the pseudoinverse (n x m), or J^+ d with --apply")->required();
    cmd->add_option("--structure", a->structure,
                    "dense (SVD); bordered: a SLAM Jacobian with --dense-cols dense columns, then one contiguous "
                    "run of rows per column (J^T J is an arrowhead, solved in O(n)); sparse: any sparse J, the step "
                    "J^+ d by CGLS (with --apply; --tol, --max-iter)")
        ->capture_default_str();
    cmd->add_option("--dense-cols", a->dense_cols, "bordered: the number of dense leading columns")->capture_default_str();
    cmd->add_option("--apply", a->apply, "bordered: write J^+ d for this d (n x k) instead of J^+, never forming J^+");
    cmd->add_option("--damping", a->damping, "bordered: Levenberg-Marquardt damping lambda (J^T J + lambda diag)")
        ->capture_default_str();
    cmd->add_option("--tol", a->tolerance, "sparse: CGLS relative residual to stop at (default 1e-10)");
    cmd->add_option("--max-iter", a->max_iterations, "sparse: CGLS iterations at most")->capture_default_str();
    cmd->add_option("--rcond", a->rcond,
                    "Singular values below rcond x the largest count as zero (default: max(m, n) x machine epsilon)");
    add_common_options(*cmd, a->common);
  }
  {
    auto a = std::make_shared<SolveArgs>();
    CLI::App* cmd = add_command(app, "chol", "Cholesky factor L (lower, A = L L^T) of a symmetric positive definite matrix",
                                a, run_chol);
    cmd->add_option("A", a->a, kMatrixHelp)->required();
    cmd->add_option("-o,--output", a->output, "Where to write L")->required();
    add_common_options(*cmd, a->common);
  }
}

}  // namespace linv::cli
