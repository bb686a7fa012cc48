// [D, S] = linv_adl(X, K, name, value, ...)   [D, S, report] = linv_adl(...)
// Atom-assisted dictionary learning: min ||X - D S||_F^2 + lambda ||S||_1 over D (T x K, its columns in
// balls: around the task regressors when 'task' is given) and S (K x N), by majorisation-minimisation.
// Options: 'lambda' (default 0.5 ||X||_F / sqrt(T N)), 'task' (T x M assisted atoms), 'c' (squared radius
// around them), 'cd' (squared radius of the free atoms, 1), 'maxIterations' (200), 'coefficientSteps'
// (20), 'dictionarySteps' (20), 'tolerance' (0: run every iteration), 'seed', 'initial' (a T x K
// dictionary), 'device'. The report adds objective (after each iteration) and lambda (the one used).
#include "gateway.hpp"
#include "linv/adl.hpp"

namespace {

void call(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::check_counts("linv_adl", nrhs, 2, nlhs, 3, "[D, S, report] = linv_adl(X, K, name, value, ...)");
  const linv_mex::Options o("linv_adl", prhs + 2, nrhs - 2,
                            {"lambda", "task", "c", "cd", "maxIterations", "coefficientSteps", "dictionarySteps",
                             "tolerance", "seed", "initial", "device"});
  linv_mex::dispatch(linv_mex::real_class(prhs[0], "X"), [&]<class T>() {
    const linv::ConstMatrixView<T> X = linv_mex::view<T>(prhs[0], "X");
    linv::fmri::AdlOptions options;
    options.atoms = linv_mex::count(prhs[1], "K");
    options.lambda = o.number("lambda").value_or(options.lambda);
    options.c = o.number("c").value_or(options.c);
    options.c_d = o.number("cd").value_or(options.c_d);
    options.max_iterations = static_cast<int>(o.number("maxIterations").value_or(options.max_iterations));
    options.coefficient_steps = static_cast<int>(o.number("coefficientSteps").value_or(options.coefficient_steps));
    options.dictionary_steps = static_cast<int>(o.number("dictionarySteps").value_or(options.dictionary_steps));
    options.tolerance = o.number("tolerance").value_or(options.tolerance);
    options.seed = static_cast<std::uint64_t>(o.number("seed").value_or(0));
    const linv::Device device = o.device(linv::Operation::Adl, X.cols());
    linv::Matrix<T> x_copy, task_copy, initial;
    const linv::ConstMatrixView<T> task =
        o.array("task") != nullptr ? linv_mex::placed(linv_mex::view<T>(o.array("task"), "'task'"), device, task_copy)
                                   : linv::ConstMatrixView<T>{};
    const linv::fmri::AdlResult<T> r = linv::fmri::adl<T>(linv_mex::placed(X, device, x_copy), options, task,
                                                          linv_mex::matrix_option(o, "initial", device, initial));
    plhs[0] = linv_mex::to_mx(r.dictionary);
    if (nlhs > 1) plhs[1] = linv_mex::to_mx(r.codes);
    if (nlhs > 2) {
      nlohmann::json j = linv_mex::report_json(r.report);
      j.update({{"objective", r.objective}, {"lambda", r.lambda}});
      plhs[2] = linv_mex::to_mx(j);
    }
  });
}

}  // namespace

void mexFunction(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::run(nlhs, plhs, nrhs, prhs, call);
}
