// [D, G] = linv_ksvd(X, K, T0, name, value, ...)   [D, G, report] = linv_ksvd(...)
// k-SVD dictionary learning: D (T x K, unit-norm atoms, X's class) and the sparse codes G (K x N, sparse
// double) with at most T0 atoms per column of X (T x N). Options: 'iterations' (10), 'seed' (0),
// 'exact' (true: exact rank-1 SVD; false: the approximate power step), 'initial' (a T x K dictionary to
// start from; otherwise K distinct columns of X), 'device'. The report adds rmse (after each
// iteration's coding, then the final one) and replaced (atoms replaced).
#include "gateway.hpp"

namespace {

void call(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::check_counts("linv_ksvd", nrhs, 3, nlhs, 3, "[D, G, report] = linv_ksvd(X, K, T0, name, value, ...)");
  const linv_mex::Options o("linv_ksvd", prhs + 3, nrhs - 3, {"iterations", "seed", "exact", "initial", "device"});
  linv_mex::dispatch(linv_mex::real_class(prhs[0], "X"), [&]<class T>() {
    const linv::ConstMatrixView<T> X = linv_mex::view<T>(prhs[0], "X");
    linv::fmri::KsvdOptions options;
    options.atoms = linv_mex::count(prhs[1], "K");
    options.sparsity = linv_mex::count(prhs[2], "T0");
    options.iterations = static_cast<int>(o.number("iterations").value_or(options.iterations));
    options.seed = static_cast<std::uint64_t>(o.number("seed").value_or(0));
    options.exact = o.flag("exact").value_or(true);
    const linv::Device device = o.device(linv::Operation::Ksvd, X.cols());
    linv::Matrix<T> x_copy, initial;
    const linv::fmri::KsvdResult<T> r = linv::fmri::ksvd<T>(linv_mex::placed(X, device, x_copy), options,
                                                            linv_mex::matrix_option(o, "initial", device, initial));
    plhs[0] = linv_mex::to_mx(r.dictionary);
    if (nlhs > 1) plhs[1] = linv_mex::to_mx(r.codes);
    if (nlhs > 2) {
      nlohmann::json j = linv_mex::report_json(r.report);
      j.update({{"rmse", r.rmse}, {"replaced", r.replaced}});
      plhs[2] = linv_mex::to_mx(j);
    }
  });
}

}  // namespace

void mexFunction(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::run(nlhs, plhs, nrhs, prhs, call);
}
