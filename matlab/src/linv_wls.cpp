// x = linv_wls(A, d, b, name, value, ...)   [x, report] = linv_wls(...)
// Weighted least squares through the normal equations A D^2 A' x = A D^2 b: min ||D (b - A' x)|| for an
// m x n A (m <= n, full row rank), d of n weights and b of n values (rows or columns); x has m entries.
// Options: 'weights' ('squared': d is D^2's diagonal, the default; 'plain': D's), 'storage' ('full' or
// 'packed', rectangular full packed), 'precision' ('native' or 'mixed'), 'tolerance' and 'maxIterations'
// (mixed refinement), 'check' (true: the report's scaled residual), 'device'.
#include <fmt/format.h>

#include "gateway.hpp"
#include "linv/errors.hpp"
#include "linv/wls.hpp"

namespace {

linv::WlsOptions wls_options(const linv_mex::Options& o) {
  linv::WlsOptions w;
  const std::string weights = o.text("weights").value_or("squared"), storage = o.text("storage").value_or("full"),
                    precision = o.text("precision").value_or("native");
  if (weights != "squared" && weights != "plain")
    throw linv::InvalidArgument(fmt::format("'weights' is 'squared' (d holds D^2's diagonal) or 'plain' (D's); got "
                                            "'{}'",
                                            weights));
  if (storage != "full" && storage != "packed")
    throw linv::InvalidArgument(fmt::format("'storage' is 'full' or 'packed'; got '{}'", storage));
  if (precision != "native" && precision != "mixed")
    throw linv::InvalidArgument(fmt::format("'precision' is 'native' or 'mixed'; got '{}'", precision));
  w.weights = weights == "squared" ? linv::Weights::Squared : linv::Weights::Plain;
  w.storage = storage == "full" ? linv::Storage::Full : linv::Storage::Packed;
  w.precision = precision == "mixed" ? linv::Precision::Mixed : linv::Precision::Native;
  if (const auto t = o.number("tolerance")) w.tolerance = *t;
  if (const auto m = o.number("maxIterations")) w.max_iterations = static_cast<int>(*m);
  w.compute_residual = o.flag("check").value_or(true);
  return w;
}

void call(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::check_counts("linv_wls", nrhs, 3, nlhs, 2, "[x, report] = linv_wls(A, d, b, name, value, ...)");
  const linv_mex::Options o("linv_wls", prhs + 3, nrhs - 3,
                            {"weights", "storage", "precision", "tolerance", "maxIterations", "check", "device"});
  linv_mex::dispatch(linv_mex::real_class(prhs[0], "A"), [&]<class T>() {
    const linv::ConstMatrixView<T> A = linv_mex::view<T>(prhs[0], "A"), d = linv_mex::column<T>(prhs[1], "d"),
                                   b = linv_mex::column<T>(prhs[2], "b");
    const linv::WlsOptions options = wls_options(o);
    const linv::Device device = o.device(linv::Operation::WeightedLeastSquares, A.rows());
    linv::Matrix<T> a_copy, d_copy, b_copy;
    const linv::Solution<T> s =
        linv::wls<T>(linv_mex::placed(A, device, a_copy), linv_mex::placed(d, device, d_copy),
                     linv_mex::placed(b, device, b_copy), options);
    plhs[0] = linv_mex::to_mx(s.x);
    if (nlhs > 1) plhs[1] = linv_mex::to_mx(linv_mex::report_json(s.report));
  });
}

}  // namespace

void mexFunction(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::run(nlhs, plhs, nrhs, prhs, call);
}
