// [A, H, C, P] = linv_parafac2(X, F, name, value, ...)   [A, H, C, P, report] = linv_parafac2(...)
// PARAFAC2 by alternating least squares: X(:,:,k) ~ A diag(C(k,:)) (P{k} H)' for k = 1..K, with A
// (I x F), H (F x F), C (K x F) and P{k} (J_k x F, orthonormal columns; P is a K x 1 cell). X is an
// I x J x K array (slab k: X(:,:,k), used in place) or a cell array of K slabs I x J_k, in one class.
// Options: 'maxIterations' (1000), 'tolerance' (1e-7: stop once the loss changes by at most this
// fraction), 'start' ('svd' or 'random'), 'seed', 'device'. The report adds loss, loss_history,
// norm_squared and variance_explained.
#include <fmt/format.h>

#include "gateway.hpp"
#include "linv/errors.hpp"
#include "linv/parafac2.hpp"

namespace {

// The slabs as views of X's own memory: the pages of a 3-D array, or the cells of a cell array.
template <linv::Real T>
std::vector<linv::ConstMatrixView<T>> slabs_of(const mxArray* X) {
  std::vector<linv::ConstMatrixView<T>> slabs;
  if (mxIsCell(X)) {
    const std::size_t K = mxGetNumberOfElements(X);
    for (std::size_t k = 0; k < K; ++k) {
      const mxArray* slab = mxGetCell(X, static_cast<mwIndex>(k));
      if (slab == nullptr) throw linv::InvalidArgument(fmt::format("X{{{}}} is empty: each cell holds a slab", k + 1));
      slabs.push_back(linv_mex::view<T>(slab, fmt::format("X{{{}}}", k + 1)));
    }
    return slabs;
  }
  (void)linv_mex::real_class(X, "X");
  if (mxGetNumberOfDimensions(X) > 3)
    throw linv::InvalidArgument("X has more than 3 dimensions: PARAFAC2 takes an I x J x K array or a cell of slabs");
  const mwSize* dims = mxGetDimensions(X);
  const auto I = static_cast<linv::index>(dims[0]), J = static_cast<linv::index>(dims[1]);
  const std::size_t K = mxGetNumberOfDimensions(X) == 3 ? dims[2] : 1;
  const T* data = static_cast<const T*>(mxGetData(X));
  for (std::size_t k = 0; k < K; ++k)
    slabs.emplace_back(data + static_cast<linv::index>(k) * I * J, I, J, std::max<linv::index>(I, 1));
  return slabs;
}

linv_mex::Class class_of(const mxArray* X) {
  if (!mxIsCell(X)) return linv_mex::real_class(X, "X");
  if (mxGetNumberOfElements(X) == 0) throw linv::InvalidArgument("X is an empty cell array: it needs K >= 1 slabs");
  const mxArray* first = mxGetCell(X, 0);
  if (first == nullptr) throw linv::InvalidArgument("X{1} is empty: each cell holds a slab");
  return linv_mex::real_class(first, "X{1}");
}

void call(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::check_counts("linv_parafac2", nrhs, 2, nlhs, 5,
                         "[A, H, C, P, report] = linv_parafac2(X, F, name, value, ...)");
  const linv_mex::Options o("linv_parafac2", prhs + 2, nrhs - 2,
                            {"maxIterations", "tolerance", "start", "seed", "device"});
  linv_mex::dispatch(class_of(prhs[0]), [&]<class T>() {
    const std::vector<linv::ConstMatrixView<T>> host = slabs_of<T>(prhs[0]);
    linv::fmri::Parafac2Options options;
    options.rank = linv_mex::count(prhs[1], "F");
    options.max_iterations = static_cast<int>(o.number("maxIterations").value_or(options.max_iterations));
    options.tolerance = o.number("tolerance").value_or(options.tolerance);
    const std::string start = o.text("start").value_or("svd");
    if (start != "svd" && start != "random")
      throw linv::InvalidArgument(fmt::format("'start' is 'svd' or 'random'; got '{}'", start));
    options.start = start == "svd" ? linv::fmri::Parafac2Start::Svd : linv::fmri::Parafac2Start::Random;
    options.seed = static_cast<std::uint64_t>(o.number("seed").value_or(0));
    linv::index voxels = 0;
    for (const auto& v : host) voxels += v.cols();
    const linv::Device device = o.device(linv::Operation::Parafac2, voxels);
    std::vector<linv::Matrix<T>> copies(host.size());
    std::vector<linv::ConstMatrixView<T>> slabs;
    for (std::size_t k = 0; k < host.size(); ++k) slabs.push_back(linv_mex::placed(host[k], device, copies[k]));
    const linv::fmri::Parafac2Result<T> r = linv::fmri::parafac2<T>(slabs, options);
    plhs[0] = linv_mex::to_mx(r.A);
    if (nlhs > 1) plhs[1] = linv_mex::to_mx(r.H);
    if (nlhs > 2) plhs[2] = linv_mex::to_mx(r.C);
    if (nlhs > 3) {
      mxArray* P = mxCreateCellMatrix(static_cast<mwSize>(r.P.size()), 1);
      for (std::size_t k = 0; k < r.P.size(); ++k) mxSetCell(P, static_cast<mwIndex>(k), linv_mex::to_mx(r.P[k]));
      plhs[3] = P;
    }
    if (nlhs > 4) {
      nlohmann::json j = linv_mex::report_json(r.report);
      j.update({{"loss", r.loss},
                {"loss_history", r.loss_history},
                {"norm_squared", r.norm_squared},
                {"variance_explained", r.variance_explained}});
      plhs[4] = linv_mex::to_mx(j);
    }
  });
}

}  // namespace

void mexFunction(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::run(nlhs, plhs, nrhs, prhs, call);
}
