// X = linv_solve(A, B, name, value, ...)   [X, report] = linv_solve(...)
// The solution of A X = B (MATLAB's A \ B for a square A); A and B both double or both single, complex where
// either is (as MATLAB computes A \ B). Options as linv_inv's.
#include "gateway.hpp"

namespace {

void call(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::check_counts("linv_solve", nrhs, 2, nlhs, 2, "[X, report] = linv_solve(A, B, name, value, ...)");
  const linv_mex::Options o("linv_solve", prhs + 2, nrhs - 2,
                            linv_mex::kSolveOptionNames);
  const linv_mex::Class c = linv_mex::common_class({{prhs[0], "A"}, {prhs[1], "B"}});
  linv_mex::dispatch_dense(c, [&]<class T>() {
    linv::Matrix<T> a_complex, b_complex;  // a real A or B with a complex other: its complex copy
    const linv::ConstMatrixView<T> A = linv_mex::view_as<T>(prhs[0], "A", a_complex),
                                   B = linv_mex::view_as<T>(prhs[1], "B", b_complex);
    const linv::SolveOptions options = linv_mex::solve_options(o);
    const linv::Device device = o.device(linv::Operation::Solve, A.rows(), options.method);
    linv::Matrix<T> a_copy, b_copy;
    const linv::Solution<T> s = linv::solve<T>(linv_mex::placed(A, device, a_copy),
                                               linv_mex::placed(B, device, b_copy), options);
    plhs[0] = linv_mex::to_mx(s.x);
    if (nlhs > 1) plhs[1] = linv_mex::to_mx(linv_mex::report_json(s.report));
  });
}

}  // namespace

void mexFunction(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::run(nlhs, plhs, nrhs, prhs, call);
}
