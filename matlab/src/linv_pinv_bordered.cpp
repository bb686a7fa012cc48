// P = linv_pinv_bordered(J, name, value, ...)   [P, report] = linv_pinv_bordered(...)
// The pseudoinverse of a bordered SLAM Jacobian, (J'J + damping diag(J'J))^-1 J', through the Schur
// complement of its arrowhead J'J: J's first 'denseCols' columns dense (1: the motion column), then at
// most one nonzero per row among the others, each segment column on one run of rows. J: full (double or
// single) or sparse (double). Options: 'denseCols' (1), 'damping' (0), 'apply' (d, n x c: return the
// step J^+ d instead, without forming J^+), 'device'. A column of J that the others explain to working
// precision (zero, or dependent) is a linv:singular error naming it.
#include <fmt/format.h>

#include "gateway.hpp"
#include "linv/errors.hpp"
#include "linv/slam.hpp"

namespace {

// A MATLAB sparse matrix (compressed columns) as linv's compressed rows.
linv::slam::SparseJacobian<double> sparse_jacobian(const mxArray* J) {
  if (!mxIsDouble(J) || mxIsComplex(J))
    throw linv::InvalidArgument(fmt::format("J is a sparse {} matrix: linv takes real sparse double ones",
                                            mxIsComplex(J) ? "complex" : mxGetClassName(J)));
  linv::slam::SparseJacobian<double> s;
  s.rows = static_cast<linv::index>(mxGetM(J));
  s.cols = static_cast<linv::index>(mxGetN(J));
  const mwIndex* row = mxGetIr(J);
  const mwIndex* start = mxGetJc(J);
  const double* value = mxGetPr(J);
  const auto nonzeros = static_cast<std::size_t>(start[s.cols]);
  s.row_start.assign(static_cast<std::size_t>(s.rows) + 1, 0);
  for (std::size_t p = 0; p < nonzeros; ++p) ++s.row_start[row[p] + 1];
  for (linv::index i = 0; i < s.rows; ++i) s.row_start[i + 1] += s.row_start[i];
  s.column.resize(nonzeros);
  s.value.resize(nonzeros);
  std::vector<linv::index> next(s.row_start.begin(), s.row_start.end() - 1);
  for (linv::index j = 0; j < s.cols; ++j)  // columns in order: each row's entries come out sorted
    for (mwIndex p = start[j]; p < start[j + 1]; ++p) {
      const auto slot = static_cast<std::size_t>(next[row[p]]++);
      s.column[slot] = j;
      s.value[slot] = value[p];
    }
  return s;
}

template <linv::Real T>
void bordered(const linv::slam::BorderedJacobian<T>& host, const linv_mex::Options& o, int nlhs, mxArray* plhs[]) {
  const double damping = o.number("damping").value_or(0);
  const mxArray* apply = o.array("apply");
  const linv::Device device =
      o.device(apply != nullptr ? linv::Operation::SlamStep : linv::Operation::SlamPseudoinverse, host.rows());
  const linv::slam::BorderedJacobian<T> J = host.to(device);
  linv::Solution<T> s;
  if (apply != nullptr) {
    linv::Matrix<T> d_copy;
    s = linv::slam::pinv_apply(J, linv_mex::placed(linv_mex::view<T>(apply, "'apply'"), device, d_copy), damping);
  } else {
    s = linv::slam::pinv(J, damping);
  }
  plhs[0] = linv_mex::to_mx(s.x);
  if (nlhs > 1) plhs[1] = linv_mex::to_mx(linv_mex::report_json(s.report));
}

void call(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::check_counts("linv_pinv_bordered", nrhs, 1, nlhs, 2,
                         "[P, report] = linv_pinv_bordered(J, name, value, ...)");
  const linv_mex::Options o("linv_pinv_bordered", prhs + 1, nrhs - 1, {"denseCols", "damping", "apply", "device"});
  const double k = o.number("denseCols").value_or(1);
  if (!(k >= 0) || k != std::floor(k))
    throw linv::InvalidArgument(fmt::format("'denseCols' must be a whole non-negative number; got {}", k));
  const auto dense_cols = static_cast<linv::index>(k);
  if (mxIsSparse(prhs[0])) {
    bordered(linv::slam::BorderedJacobian<double>::from_sparse(sparse_jacobian(prhs[0]), dense_cols), o, nlhs, plhs);
    return;
  }
  linv_mex::dispatch(linv_mex::real_class(prhs[0], "J"), [&]<class T>() {
    bordered(linv::slam::BorderedJacobian<T>::from_dense(linv_mex::view<T>(prhs[0], "J"), dense_cols), o, nlhs,
             plhs);
  });
}

}  // namespace

void mexFunction(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::run(nlhs, plhs, nrhs, prhs, call);
}
