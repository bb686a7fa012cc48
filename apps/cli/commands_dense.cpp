// linv inv | solve | lstsq | pinv | chol
#include <fmt/format.h>

#include <cstdio>
#include <limits>
#include <memory>
#include <optional>

#include "common.hpp"

namespace linv::cli {
namespace {

constexpr const char* kMatrixHelp = "Input matrix: .npy, .npz[:name], .mtx or .mat[:variable]";
// inv, solve and lstsq take complex matrices too (the others compute in real numbers and refuse them).
constexpr const char* kComplexMatrixHelp =
    "Input matrix: .npy, .npz[:name], .mtx or .mat[:variable]; complex ones too, complex64 or complex128 "
    "(computed in complex numbers, as NumPy promotes; the result is written complex)";
// --method's help; what auto picks comes from the library's own orders, so the two cannot drift.
std::string method_help() {
  return "auto, lu, calu (LU with tournament pivoting: panels that do not serialise a GPU; partial pivoting again "
         "if its growth factor passes 8 n^(2/3)), rbt (random butterfly transform, LU without pivoting, refinement "
         "against A: the fastest GPU solve; an inverse is refined by a Newton step; partial pivoting again "
         "if refinement stalls), cholesky, gauss-jordan, cholesky-gets, gauss-seidel or triangular. " +
         describe_auto_method();
}

struct SolveArgs {
  std::string a, b, output, method = "auto";
  std::string structure = "dense", apply;  // pinv: dense (SVD), bordered (SLAM Jacobian) or sparse; d for J^+ d
  index dense_cols = 1;
  double damping = 0;
  bool batch = false;  // A (and B) are stacks of matrices (B x n x n, B x n x k)
  double tolerance = 0;
  int max_iterations = 1000;
  std::string factor = "auto";  // --precision mixed: the factorization's precision
  double rcond = -1;
  bool allow_ill_conditioned = false;
  bool distributed = false;  // one process of an MPI job: A's tiles over a process grid
  std::string devices;       // "cuda:0,cuda:1": a job of one process per device, started by linv
  std::string grid;          // "RxC", empty: the most nearly square
  index block = 0;  // the grid's default (dist::default_block)
  CommonOptions common;
};

// The options inv and solve share: a method, mixed precision's factor, Gauss-Seidel's iterations, the
// conditioning policy, and the common flags.
void add_solve_options(CLI::App& cmd, SolveArgs& a) {
  cmd.add_option("--method", a.method, method_help())->capture_default_str();
  cmd.add_option("--factor", a.factor,
                 "With --precision mixed: the factorization's precision. auto: float32 where the device factors "
                 "float32 faster than float64, else float64 (GPUs such as the H100, where float32 is no faster; the "
                 "report says so); float32 everywhere; tf32, bf16 and fp16 (float32 storage, tensor-core updates) "
                 "for LU on a GPU, converging only for well-conditioned matrices (otherwise the float64 fallback "
                 "runs and the report says so)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "float32", "tf32", "bf16", "fp16"}));
  cmd.add_option("--tol", a.tolerance,
                 "gauss-seidel: stop at this normwise backward error (default: max(n, 16) x machine epsilon)")
      ->check(above(0));
  cmd.add_option("--max-iter", a.max_iterations, "gauss-seidel: iteration limit (exit code 4 when reached)")
      ->capture_default_str()
      ->check(whole(1));
  cmd.add_flag("--allow-ill-conditioned", a.allow_ill_conditioned,
               "Return the result for a matrix singular to working precision (rcond below machine epsilon) "
               "with a note, instead of refusing it (exit 4); with --batch, for each such matrix of the batch. "
               "Exactly singular matrices are always refused");
  add_common_options(cmd, a.common);
}

// inv and solve over several processes: mpirun -np N linv inv A.npy -o X.npy --distributed.
void add_distributed_options(CLI::App& cmd, SolveArgs& a) {
  cmd.add_flag("--distributed", a.distributed,
               "Run as one process of an MPI job (mpirun -np N linv ... --distributed): each process reads its own "
               "tiles of the .npy inputs, the engine (ScaLAPACK; cuSOLVERMp with --device cuda) factors the matrix "
               "over all of them, each writes its tiles of the output; process 0 prints and writes the report. "
               "Methods auto, lu and cholesky");
  cmd.add_option("--devices", a.devices,
                 "Distribute over these devices of this machine, one process each, started by linv (no MPI needed): "
                 "e.g. cuda:0,cuda:1 (cuSOLVERMp)");
  cmd.add_option("--grid", a.grid,
                 "--distributed, --devices: the process grid, RxC (default: the most nearly square, R <= C)");
  cmd.add_option("--block", a.block,
                 "--distributed, --devices: the tile size of the block-cyclic layout (default: 128 for CPU processes, "
                 "1024 for GPUs)")
      ->check(whole(1));
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

// linv inv --batch / solve --batch: every matrix of a B x n x n stack (with a B x n x k stack of
// right-hand sides for solve), on the GPU by the batched kernels.
template <Real T>
void batch_typed(const SolveArgs& a, const char* command, io::MatrixStack<T>&& stack,
                 std::optional<io::MatrixStack<T>>&& rhs) {
  const index n = stack.rows, count = stack.count;
  if (stack.cols != n)
    throw InvalidArgument(fmt::format("{} --batch needs square matrices; {} holds {} matrices of {}", command, a.a,
                                      count, shape_string(stack.rows, stack.cols)));
  if (rhs && (rhs->count != count || rhs->rows != n))
    throw InvalidArgument(fmt::format("{} --batch: A and B: shapes {}x{}x{} and {}x{}x{} do not fit: {} must hold one "
                                      "{} x k block per matrix of {}",
                                      command, count, n, n, rhs->count, rhs->rows, rhs->cols, a.b, n, a.a));
  // The batch as one n x (n count) matrix: the stack's layout already.
  const auto as_matrix = [](const io::MatrixStack<T>& st) {
    Matrix<T> m = Matrix<T>::uninitialized(st.rows, st.cols * st.count);
    std::copy(st.data.begin(), st.data.end(), m.data());
    return m;
  };
  const Matrix<T> A = as_matrix(stack);
  const Device device = device_for(a.common, rhs ? Operation::BatchedSolve : Operation::BatchedInverse, n * n * count);
  Matrix<T> a_copy, b_copy;
  const ConstMatrixView<T> a_on = placed(A.view(), device, a_copy);
  const batched::Options options{.allow_ill_conditioned = a.allow_ill_conditioned};
  batched::Result<T> result;
  io::MatrixStack<T> out;
  if (rhs) {
    const Matrix<T> B = as_matrix(*rhs);
    result = batched::solve<T>(a_on, placed(B.view(), device, b_copy), options);
    out = std::move(*rhs);
  } else {
    result = batched::inv<T>(a_on, options);
    out = std::move(stack);
  }
  const batched::Status& s = result.status;
  const Matrix<T> x = result.x.to(Device::cpu());
  std::copy(x.data(), x.data() + out.data.size(), out.data.begin());
  io::write_stack<T>(a.output, out);

  std::vector<std::pair<std::string, std::string>> inputs = {{"A", a.a}};
  if (rhs) inputs.emplace_back("B", a.b);
  nlohmann::json j = report_json(std::string(command) + " --batch", s.report, inputs, a.output, n, n * count);
  nlohmann::json singular = nlohmann::json::array();  // the first 1000, as [matrix, pivot, rcond]
  std::vector<batched::Singular> refused;               // those whose blocks are NaN
  for (const batched::Singular& m : s.singular) {
    if (singular.size() < 1000) singular.push_back({m.matrix, m.pivot, m.rcond});
    if (!m.kept) refused.push_back(m);
  }
  j.update({{"count", count},
            {"order", n},
            {"singular", s.singular.size()},
            {"kept", s.singular.size() - refused.size()},
            {"singular_matrices", singular}});
  write_report(a.common, j);
  if (!a.common.quiet) {
    std::printf("%s --batch: %lld matrices of %s %s | %s | %s | %.4f s -> %s\n", command, static_cast<long long>(count),
                shape_string(n, n).c_str(), type_name<T>(), device.name().c_str(),
                fmt::format("{}{}", to_string(s.report.method),
                            s.report.notes.empty() ? "" : " (" + s.report.notes.front() + ")")
                    .c_str(),
                s.report.seconds, a.output.c_str());
    for (std::size_t i = 1; i < s.report.notes.size(); ++i) std::printf("  note: %s\n", s.report.notes[i].c_str());
  }
  if (refused.empty()) return;
  io::commit_outputs_so_far();  // the result and the report stand: the refused matrices are NaN in it
  // Name the first few; the report lists up to 1000.
  constexpr std::size_t kNamed = 10;
  std::string named;
  bool working_precision = false;  // some were refused only for their rcond: --allow-ill-conditioned helps
  for (std::size_t i = 0; i < refused.size(); ++i) {
    const batched::Singular& m = refused[i];
    working_precision = working_precision || m.rcond > 0;
    if (i >= kNamed) continue;
    named += fmt::format("{}matrix {} ({})", i == 0 ? "" : ", ", m.matrix, batched::describe(m));
  }
  if (refused.size() > kNamed) named += fmt::format(" and {} more", refused.size() - kNamed);
  throw NumericalError(fmt::format(
      "{} of {} matrices are singular, exactly or to working precision (rcond below machine epsilon {:.3g}): {}; "
      "their blocks of {} are NaN, every other {} was computed{}",
      refused.size(), count, std::numeric_limits<T>::epsilon(), named, a.output, rhs ? "system" : "matrix",
      working_precision ? " (--allow-ill-conditioned keeps the results of those singular only to working precision)"
                        : ""));
}

void run_batch(const SolveArgs& a, const char* command) {
  if (a.method != "auto")
    throw InvalidArgument(fmt::format(
        "{} --batch chooses its own method (Gauss-Jordan on the GPU, LAPACK on the CPU): drop --method", command));
  if (a.common.precision == "mixed") throw InvalidArgument(fmt::format("{} --batch has no mixed-precision variant", command));
  io::AnyStack S = io::read_stack(a.a);
  std::optional<io::AnyStack> R;
  if (!a.b.empty()) R = io::read_stack(a.b);
  std::vector<io::DType> types{dtype_of(S)};
  if (R) types.push_back(dtype_of(*R));
  const Compute c = compute_type(a.common.precision, types);
  with_type(c, [&]<Real T>() {
    std::optional<io::MatrixStack<T>> rhs;
    if (R) rhs = as<T>(std::move(*R), c);
    batch_typed<T>(a, command, as<T>(std::move(S), c), std::move(rhs));
  });
}

// The process grid of inv and solve --distributed or --devices.
dist::Grid distributed_grid(const SolveArgs& a, const char* command) {
  if (a.batch) throw InvalidArgument(fmt::format("{} --distributed takes one matrix, not --batch", command));
  return job_grid({a.distributed, a.devices, a.grid, a.common.device}, command);
}

// inv and solve --distributed or --devices: every process of the job runs this, reading and writing its
// own tiles.
void run_distributed(const SolveArgs& a, const char* command) {
  const SolveOptions options = solve_options(a, a.common.precision == "mixed" ? Compute::mixed : Compute::f64);
  const dist::Grid grid = distributed_grid(a, command);
  if (!grid.is_root()) silence_errors();  // one message for the job, from process 0
  const bool solving = !a.b.empty();
  std::vector<io::DType> types;
  grid.together([&] {
    types.push_back(dist::npy_dtype(a.a));
    if (solving) types.push_back(dist::npy_dtype(a.b));
    if (a.common.precision == "single" || a.common.precision == "double") {
      const io::DType want = a.common.precision == "single" ? io::DType::Float32 : io::DType::Float64;
      for (io::DType t : types)
        if (t != want)
          throw InvalidArgument(fmt::format("{} --distributed computes in the files' own type ({}): convert them with "
                                            "NumPy rather than ask for --precision {}",
                                            command, io::to_string(t), a.common.precision));
    }
    if (solving && types[0] != types[1])
      throw InvalidArgument(fmt::format("{} --distributed: {} holds {} and {} holds {}; give both in one type", command,
                                        a.a, io::to_string(types[0]), a.b, io::to_string(types[1])));
  });
  with_type(types[0] == io::DType::Float32 ? Compute::f32 : Compute::f64, [&]<Real T>() {
    const dist::DistMatrix<T> A = dist::DistMatrix<T>::read(grid, a.a, a.block);
    dist::Solution<T> s;
    if (solving)
      s = dist::solve<T>(A, dist::DistMatrix<T>::read(grid, a.b, a.block), options);
    else
      s = dist::inv<T>(A, options);
    s.x.write(a.output, solving && io::is_vector(a.b));  // a 1-D b gives a 1-D x, as on one process
    if (!grid.is_root()) return;
    std::vector<std::pair<std::string, std::string>> inputs = {{"A", a.a}};
    if (solving) inputs.emplace_back("B", a.b);
    nlohmann::json j = report_json(command, s.report, inputs, a.output, s.x.rows(), s.x.cols());
    j["distributed"] = {{"processes", grid.size()},
                        {"grid", {grid.rows(), grid.cols()}},
                        {"block", s.x.block()},
                        {"engine", dist::engine(grid)}};
    write_report(a.common, j);
    print_summary(a.common, command, s.report, s.x.rows(), s.x.cols(), a.output);
  });
}

// ---- complex matrices (inv, solve, lstsq) ----

bool is_complex(const io::AnyDense& m) {
  return std::holds_alternative<Matrix<std::complex<float>>>(m) || std::holds_alternative<Matrix<std::complex<double>>>(m);
}

// A real AnyDense as the AnyMatrix the real paths take.
io::AnyMatrix real_matrix(io::AnyDense&& m) {
  if (auto* f = std::get_if<Matrix<float>>(&m)) return std::move(*f);
  return std::move(std::get<Matrix<double>>(m));
}

// Calls f.template operator()<T>() with the complex type a command computes complex inputs in: complex64
// where --precision single asks for it or every input is float32 or complex64, complex128 otherwise (as
// NumPy promotes), and under --precision mixed (complex64 factors refined to complex128) where the command
// `refines` (inv, solve), else refused before anything is computed.
template <class F>
void with_complex_type(const CommonOptions& o, const char* command, bool refines,
                       const std::vector<const io::AnyDense*>& inputs, F&& f) {
  if (o.precision == "mixed" && !refines)
    throw InvalidArgument(fmt::format("{}: complex matrices have no mixed-precision variant here: use --precision "
                                      "single or double",
                                      command));
  bool single = o.precision == "single";
  if (o.precision != "double" && o.precision != "mixed" && !single) {
    single = true;
    for (const io::AnyDense* m : inputs)
      single = single && (std::holds_alternative<Matrix<float>>(*m) ||
                          std::holds_alternative<Matrix<std::complex<float>>>(*m));
  }
  if (single)
    f.template operator()<std::complex<float>>();
  else
    f.template operator()<std::complex<double>>();
}

// An input in the complex type T (a real one with zero imaginary parts; complex128 narrowed only where
// --precision single asked for it, as compute_type narrows real ones).
template <Complex T>
Matrix<T> as_complex(io::AnyDense&& m) {
  if (auto* same = std::get_if<Matrix<T>>(&m)) return std::move(*same);
  return std::visit([](const auto& other) { return other.template cast<T>(); }, m);
}

void run_inv(const SolveArgs& a) {
  if (a.distributed || !a.devices.empty()) return run_distributed(a, "inv");
  if (a.batch) return run_batch(a, "inv");
  const Method method = parse_method(a.method);  // usage errors before any file is read
  io::AnyDense read = io::read_dense(a.a);
  if (is_complex(read))
    return with_complex_type(a.common, "inv", true, {&read}, [&]<Complex T>() {
      const Matrix<T> m = as_complex<T>(std::move(read));
      const SolveOptions options = solve_options(a, a.common.precision == "mixed" ? Compute::mixed : Compute::f64);
      const Device device = device_for(a.common, Operation::Inverse, m.rows(), method);
      finish(a.common, "inv", run_on<T>(device, m, [&](ConstMatrixView<T> v) { return inv<T>(v, options); }),
             {{"A", a.a}}, a.output);
    });
  io::AnyMatrix A = real_matrix(std::move(read));
  const Compute c = compute_type(a.common.precision, {dtype_of(A)});
  with_type(c, [&]<Real T>() {
    const Matrix<T> m = as<T>(std::move(A), c);
    const SolveOptions options = solve_options(a, c);
    const Device device = device_for(a.common, Operation::Inverse, m.rows(), method);
    finish(a.common, "inv", run_on<T>(device, m, [&](ConstMatrixView<T> v) { return inv<T>(v, options); }),
           {{"A", a.a}}, a.output);
  });
}

void run_solve(const SolveArgs& a) {
  if (a.distributed || !a.devices.empty()) return run_distributed(a, "solve");
  if (a.batch) return run_batch(a, "solve");
  const Method method = parse_method(a.method);
  io::AnyDense read_a = io::read_dense(a.a), read_b = io::read_dense(a.b);
  if (is_complex(read_a) || is_complex(read_b))
    return with_complex_type(a.common, "solve", true, {&read_a, &read_b}, [&]<Complex T>() {
      const Matrix<T> m = as_complex<T>(std::move(read_a)), rhs = as_complex<T>(std::move(read_b));
      const SolveOptions options = solve_options(a, a.common.precision == "mixed" ? Compute::mixed : Compute::f64);
      const Device device = device_for(a.common, Operation::Solve, m.rows(), method);
      Matrix<T> rhs_copy;
      const ConstMatrixView<T> b = placed(rhs.view(), device, rhs_copy);
      finish(a.common, "solve", run_on<T>(device, m, [&](ConstMatrixView<T> v) { return solve<T>(v, b, options); }),
             {{"A", a.a}, {"B", a.b}}, a.output, io::is_vector(a.b));
    });
  io::AnyMatrix A = real_matrix(std::move(read_a)), B = real_matrix(std::move(read_b));
  const Compute c = compute_type(a.common.precision, {dtype_of(A), dtype_of(B)});
  with_type(c, [&]<Real T>() {
    const Matrix<T> m = as<T>(std::move(A), c), rhs = as<T>(std::move(B), c);
    const SolveOptions options = solve_options(a, c);
    const Device device = device_for(a.common, Operation::Solve, m.rows(), method);
    Matrix<T> rhs_copy;  // B goes where A goes; on the CPU it is used in place
    const ConstMatrixView<T> b = placed(rhs.view(), device, rhs_copy);
    finish(a.common, "solve", run_on<T>(device, m, [&](ConstMatrixView<T> v) { return solve<T>(v, b, options); }),
           {{"A", a.a}, {"B", a.b}}, a.output, io::is_vector(a.b));
  });
}

void run_lstsq(const SolveArgs& a) {
  io::AnyDense read_a = io::read_dense(a.a), read_b = io::read_dense(a.b);
  if (is_complex(read_a) || is_complex(read_b))
    return with_complex_type(a.common, "lstsq", false, {&read_a, &read_b}, [&]<Complex T>() {
      const Matrix<T> m = as_complex<T>(std::move(read_a)), rhs = as_complex<T>(std::move(read_b));
      const LstsqOptions options{.rcond = a.rcond, .compute_residual = !a.common.no_check};
      finish(a.common, "lstsq", lstsq<T>(m.view(), rhs.view(), options), {{"A", a.a}, {"B", a.b}}, a.output,
             io::is_vector(a.b));
    });
  io::AnyMatrix A = real_matrix(std::move(read_a)), B = real_matrix(std::move(read_b));
  const Compute c = compute_type(a.common.precision, {dtype_of(A), dtype_of(B)});
  with_type(c, [&]<Real T>() {
    const Matrix<T> m = as<T>(std::move(A), c), rhs = as<T>(std::move(B), c);
    const LstsqOptions options{.rcond = a.rcond,
                               .precision = c == Compute::mixed ? Precision::Mixed : Precision::Native,
                               .compute_residual = !a.common.no_check};
    const Device device = device_for(a.common, Operation::LeastSquares, m.rows());
    Matrix<T> rhs_copy;
    const ConstMatrixView<T> b = placed(rhs.view(), device, rhs_copy);
    finish(a.common, "lstsq", run_on<T>(device, m, [&](ConstMatrixView<T> v) { return lstsq<T>(v, b, options); }),
           {{"A", a.a}, {"B", a.b}}, a.output, io::is_vector(a.b));
  });
}

// The bordered structure of J (see slam::BorderedJacobian::from_sparse); a matrix without it is refused
// naming the file and the row.
template <Real T>
slam::BorderedJacobian<T> bordered_from(const SparseMatrix<T>& J, index k, const std::string& file) {
  try {
    return slam::BorderedJacobian<T>::from_sparse(J, k);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(fmt::format("{}: {} (use --structure dense or sparse)", file, e.what()));
  }
}

template <Real T>
void pinv_bordered(const SolveArgs& a, const SparseMatrix<T>& J, Compute c) {
  const slam::BorderedJacobian<T> host = bordered_from(J, a.dense_cols, a.a);
  const Operation op = a.apply.empty() ? Operation::SlamPseudoinverse : Operation::SlamStep;
  const Device device = device_for(a.common, op, host.rows());
  const slam::BorderedJacobian<T> bj = host.to(device);
  Solution<T> s;
  if (!a.apply.empty()) {
    const Matrix<T> d = as<T>(io::read_matrix(a.apply), c).to(device);
    s = slam::pinv_apply(bj, d.view(), a.damping);
  } else {
    s = slam::pinv(bj, a.damping);
  }
  s.x = s.x.to(Device::cpu());
  std::vector<std::pair<std::string, std::string>> inputs = {{"J", a.a}};
  if (!a.apply.empty()) inputs.emplace_back("d", a.apply);
  finish(a.common, "pinv", s, inputs, a.output, !a.apply.empty() && io::is_vector(a.apply));
}

// The general sparse fallback: x = argmin ||J x - d|| by CGLS, J as compressed rows.
template <Real T>
void pinv_sparse(const SolveArgs& a, const SparseMatrix<T>& J, Compute c) {
  const Matrix<T> d = as<T>(io::read_matrix(a.apply), c);
  const double tolerance = a.tolerance > 0 ? a.tolerance : 1e-10;
  const Device device = device_for(a.common, Operation::SlamStep, J.rows);
  Matrix<T> d_copy;
  Solution<T> s = slam::cgls_apply(J, placed(d.view(), device, d_copy),
                                   {.tolerance = tolerance, .max_iterations = a.max_iterations});
  s.x = s.x.to(Device::cpu());
  finish(a.common, "pinv", s, {{"J", a.a}, {"d", a.apply}}, a.output, io::is_vector(a.apply));
}

void run_pinv(const SolveArgs& a) {
  if (a.structure != "dense" && a.structure != "bordered" && a.structure != "sparse")
    throw InvalidArgument(fmt::format("--structure {}: expected dense (SVD), bordered or sparse", a.structure));
  if (a.structure == "dense" && !a.apply.empty()) throw InvalidArgument("--apply needs --structure bordered or sparse");
  if (a.structure == "sparse" && a.apply.empty())
    throw InvalidArgument("--structure sparse computes the step J^+ d by CGLS: give --apply d.npy (J^+ itself of a "
                          "general sparse J is dense: use --structure dense)");
  if (a.structure != "dense") {
    // J as compressed rows: a Matrix Market coordinate file is never made dense
    io::AnySparse J = io::read_sparse(a.a);
    const Compute c = compute_type(a.common.precision, {dtype_of(J)});
    refuse_mixed(c, "pinv");
    return with_type(c, [&]<Real T>() {
      const SparseMatrix<T> m = as<T>(std::move(J));
      if (a.structure == "bordered") return pinv_bordered<T>(a, m, c);
      return pinv_sparse<T>(a, m, c);
    });
  }
  io::AnyMatrix A = io::read_matrix(a.a);
  const Compute c = compute_type(a.common.precision, {dtype_of(A)});
  refuse_mixed(c, "pinv");
  with_type(c, [&]<Real T>() {
    const Matrix<T> m = as<T>(std::move(A), c);
    const LstsqOptions options{.rcond = a.rcond, .compute_residual = !a.common.no_check};
    const Device device = device_for(a.common, Operation::Pseudoinverse, m.rows());
    finish(a.common, "pinv", run_on<T>(device, m, [&](ConstMatrixView<T> v) { return pinv<T>(v, options); }),
           {{"A", a.a}}, a.output);
  });
}

void run_chol(const SolveArgs& a) {
  io::AnyMatrix A = io::read_matrix(a.a);
  const Compute c = compute_type(a.common.precision, {dtype_of(A)});
  refuse_mixed(c, "chol");
  with_type(c, [&]<Real T>() {
    const Matrix<T> m = as<T>(std::move(A), c);
    const SolveOptions options{.compute_residual = !a.common.no_check};
    const Device device = device_for(a.common, Operation::Cholesky, m.rows());
    finish(a.common, "chol", run_on<T>(device, m, [&](ConstMatrixView<T> v) { return cholesky<T>(v, options); }),
           {{"A", a.a}}, a.output);
  });
}

const Command kCommands[] = {
    {"", "inv", "Invert a square matrix: X = A^-1",
     [](CLI::App& cmd) {
       auto a = std::make_shared<SolveArgs>();
       input(cmd.add_option("A", a->a, kComplexMatrixHelp))->required();
       output(cmd.add_option("-o,--output", a->output, "Where to write the inverse"), io::OutputKind::matrix)->required();
       cmd.add_flag("--batch", a->batch,
                    "A is a stack of B square matrices (a B x n x n .npy array; batched kernels up to n = 64, one by one above): "
                    "invert each one. A singular "
                    "matrix is reported (exit 4) with its block of the output NaN; the others are still inverted");
       add_solve_options(cmd, *a);
       add_distributed_options(cmd, *a);
       cmd.callback([a] { run_inv(*a); });
     }},
    {"", "solve", "Solve A X = B for square A",
     [](CLI::App& cmd) {
       auto a = std::make_shared<SolveArgs>();
       input(cmd.add_option("A", a->a, kComplexMatrixHelp))->required();
       input(cmd.add_option("B", a->b, "Right-hand sides (n x k)"))->required();
       output(cmd.add_option("-o,--output", a->output, "Where to write X"), io::OutputKind::matrix)->required();
       cmd.add_flag("--batch", a->batch,
                    "A is a stack of B square matrices (B x n x n .npy; batched kernels up to n = 64, one by one above) and B a "
                    "stack of B right-hand-side "
                    "blocks (B x n x k): solve each system. A singular system is reported (exit 4) with its block of "
                    "the output NaN; the others are still solved");
       add_solve_options(cmd, *a);
       add_distributed_options(cmd, *a);
       cmd.callback([a] { run_solve(*a); });
     }},
    {"", "lstsq", "Minimum-norm least-squares solution of A X ~ B (QR with column pivoting; on the CPU only: --device cuda is "
     "refused)",
     [](CLI::App& cmd) {
       auto a = std::make_shared<SolveArgs>();
       input(cmd.add_option("A", a->a, kComplexMatrixHelp))->required();
       input(cmd.add_option("B", a->b, "Right-hand sides (m x k)"))->required();
       output(cmd.add_option("-o,--output", a->output, "Where to write X"), io::OutputKind::matrix)->required();
       cmd.add_option("--rcond", a->rcond, "Relative rank tolerance (default: max(m, n) x machine epsilon)")
           ->check(at_least(0));
       add_common_options(cmd, a->common);
       cmd.callback([a] { run_lstsq(*a); });
     }},
    {"", "pinv", "Moore-Penrose pseudoinverse (SVD with a rank tolerance; on the CPU only: --device cuda is refused)",
     [](CLI::App& cmd) {
       auto a = std::make_shared<SolveArgs>();
       input(cmd.add_option("A", a->a, kMatrixHelp))->required();
       output(cmd.add_option("-o,--output", a->output,
                             "Where to write the pseudoinverse (n x m), or J^+ d with --apply"),
              io::OutputKind::matrix)
           ->required();
       cmd.add_option("--structure", a->structure,
                      "dense (SVD); bordered: a SLAM Jacobian with --dense-cols dense columns, then one contiguous "
                      "run of rows per column (J^T J is an arrowhead, solved in O(n)); sparse: any sparse J, the step "
                      "J^+ d by CGLS (with --apply; --tol, --max-iter)")
           ->capture_default_str();
       cmd.add_option("--dense-cols", a->dense_cols, "bordered: the number of dense leading columns")
           ->capture_default_str()
           ->check(whole(1));
       input(cmd.add_option("--apply", a->apply,
                      "bordered, sparse: write J^+ d for this d (n x k) instead of J^+, never forming J^+"));
       cmd.add_option("--damping", a->damping, "bordered: Levenberg-Marquardt damping lambda (J^T J + lambda diag)")
           ->capture_default_str()
           ->check(at_least(0));
       cmd.add_option("--tol", a->tolerance, "sparse: CGLS relative residual to stop at (default 1e-10)")
           ->check(above(0));
       cmd.add_option("--max-iter", a->max_iterations, "sparse: CGLS iterations at most")
           ->capture_default_str()
           ->check(whole(1));
       cmd.add_option("--rcond", a->rcond,
                      "Singular values below rcond x the largest count as zero (default: max(m, n) x machine epsilon)")
           ->check(at_least(0));
       add_common_options(cmd, a->common);
       cmd.callback([a] { run_pinv(*a); });
     }},
    {"", "chol", "Cholesky factor L (lower, A = L L^T) of a symmetric positive definite matrix",
     [](CLI::App& cmd) {
       auto a = std::make_shared<SolveArgs>();
       input(cmd.add_option("A", a->a, kMatrixHelp))->required();
       output(cmd.add_option("-o,--output", a->output, "Where to write L"), io::OutputKind::matrix)->required();
       add_common_options(cmd, a->common);
       cmd.callback([a] { run_chol(*a); });
     }},
};

}  // namespace

std::span<const Command> dense_commands() { return kCommands; }

}  // namespace linv::cli
