// G = linv_omp(D, X, T0, name, value, ...)   [G, report] = linv_omp(...)
// Batch-OMP: each column of X (T x N) coded over the atoms of D (T x K) with at most T0 atoms; G is the
// K x N sparse code matrix (sparse double). Options: 'tolerance' (also stop once ||x - D g||^2 falls to
// it), 'device'.
#include <chrono>

#include "gateway.hpp"

namespace {

void call(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::check_counts("linv_omp", nrhs, 3, nlhs, 2, "[G, report] = linv_omp(D, X, T0, name, value, ...)");
  const linv_mex::Options o("linv_omp", prhs + 3, nrhs - 3, {"tolerance", "device"});
  linv_mex::dispatch(linv_mex::real_class(prhs[0], "D"), [&]<class T>() {
    const linv::ConstMatrixView<T> D = linv_mex::view<T>(prhs[0], "D"), X = linv_mex::view<T>(prhs[1], "X");
    const linv::fmri::OmpOptions options{.sparsity = linv_mex::count(prhs[2], "T0"),
                                         .tolerance = o.number("tolerance").value_or(0)};
    const linv::Device device = o.device(linv::Operation::SparseCoding, X.cols());
    const auto start = std::chrono::steady_clock::now();
    linv::Matrix<T> d_copy, x_copy;
    const linv::fmri::SparseCodes<T> codes = linv::fmri::batch_omp<T>(
        linv_mex::placed(D, device, d_copy), linv_mex::placed(X, device, x_copy), options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    plhs[0] = linv_mex::to_mx(codes);
    if (nlhs > 1) {  // what linv omp --report writes
      double used = 0;
      for (linv::index c : codes.count) used += static_cast<double>(c);
      plhs[1] = linv_mex::to_mx(nlohmann::json{
          {"operation", linv::to_string(linv::Operation::SparseCoding)},
          {"method", linv::to_string(linv::Method::BatchOMP)},
          {"device", device.name()},
          {"precision", std::is_same_v<T, float> ? "float32" : "float64"},
          {"sparsity", options.sparsity},
          {"tolerance", options.tolerance},
          {"mean_atoms_per_signal", codes.signals > 0 ? used / static_cast<double>(codes.signals) : 0.0},
          {"seconds", seconds}});
    }
  });
}

}  // namespace

void mexFunction(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::run(nlhs, plhs, nrhs, prhs, call);
}
