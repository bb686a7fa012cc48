// X = linv_inv(A, name, value, ...)   [X, report] = linv_inv(...)
// The inverse of a square double or single matrix, real or complex, in A's class. Options: 'method' ('auto', 'lu', 'calu',
// 'rbt', 'cholesky', 'gauss-jordan', 'cholesky-gets', 'gauss-seidel', 'triangular'), 'device' ('auto',
// 'cpu', 'cuda', 'cuda:N'), 'precision' ('native' or 'mixed'), 'factorPrecision', 'allowIllConditioned',
// 'tolerance', 'maxIterations' (Gauss-Seidel), 'check' (true: the report's scaled
// residual, one more matrix product).
#include "gateway.hpp"

namespace {

void call(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::check_counts("linv_inv", nrhs, 1, nlhs, 2, "[X, report] = linv_inv(A, name, value, ...)");
  const linv_mex::Options o("linv_inv", prhs + 1, nrhs - 1,
                            linv_mex::kSolveOptionNames);
  linv_mex::dispatch_dense(linv_mex::dense_class(prhs[0], "A"), [&]<class T>() {
    linv::Matrix<T> a_complex;  // a complex A's copy (kept apart in MATLAB's memory)
    const linv::ConstMatrixView<T> A = linv_mex::view_as<T>(prhs[0], "A", a_complex);
    const linv::SolveOptions options = linv_mex::solve_options(o);
    const linv::Device device = o.device(linv::Operation::Inverse, A.rows(), options.method);
    linv::Matrix<T> a_copy;
    const linv::Solution<T> s = linv::inv<T>(linv_mex::placed(A, device, a_copy), options);
    plhs[0] = linv_mex::to_mx(s.x);
    if (nlhs > 1) plhs[1] = linv_mex::to_mx(linv_mex::report_json(s.report));
  });
}

}  // namespace

void mexFunction(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::run(nlhs, plhs, nrhs, prhs, call);
}
