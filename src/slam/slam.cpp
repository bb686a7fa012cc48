// Bordered and sparse Jacobians (include/linv/slam.hpp): their storage, checks and messages. Steps and
// pseudoinverses run in the SLAM family of the device J lives on (src/kernels/slam.hpp); the sparse
// fallback is CGLS (src/core/krylov.hpp) over that family's operator.
#include "linv/slam.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "common/stopwatch.hpp"
#include "core/krylov.hpp"
#include "kernels/backend.hpp"
#include "linv/errors.hpp"

namespace linv::slam {
namespace {

std::unique_ptr<void, detail::Deleter> upload(const std::vector<index>& v, Device device) {
  const std::size_t bytes = std::max<std::size_t>(v.size(), 1) * sizeof(index);
  std::unique_ptr<void, detail::Deleter> p(detail::allocate_bytes(bytes, device), detail::Deleter{device});
  if (!v.empty()) detail::copy_bytes(p.get(), device, v.data(), Device::cpu(), v.size() * sizeof(index));
  return p;
}

// The outcome's failures, named by the column of J (the parameter), 1-based; a J^T J singular to working
// precision is one too. Otherwise the report gets J^T J's rcond.
//
// The rcond is 1 / the largest variance inflation factor of J's columns (src/kernels/slam.hpp). Working
// precision for it is that of J^T J's entries, sums over the n rows of J, whose rounding is about sqrt(n)
// eps relative (probabilistic rounding error analysis: Higham and Mary, SIAM J. Sci. Comput. 41, 2019),
// not eps as for a matrix given to working precision (docs/design.md): a column exactly three times
// another, in 100000 rows, came out of the sums with an rcond of 120 eps. Below sqrt(n) eps the normal
// equations determine no digit of the step; the SingularMatrix then carries rcond / sqrt(n), the rcond
// relative to that level.
template <Real T>
void raise(const BorderedJacobian<T>& J, const kernels::SlamOutcome& o, Report* report) {
  const index kd = J.dense_cols();
  if (o.unobservable_segment >= 0) {
    const std::size_t j = static_cast<std::size_t>(o.unobservable_segment);
    const std::string rows = J.lengths()[j] == 0 ? "no rows"
                                                 : fmt::format("rows {}..{}", J.starts()[j] + 1,
                                                               J.starts()[j] + J.lengths()[j]);
    throw SingularMatrix(kd + o.unobservable_segment + 1, 0.0,
                         fmt::format("column {} of J (parameter {}, segment column {}, {}) is zero: the parameter is "
                                     "unobservable",
                                     kd + o.unobservable_segment + 1, kd + o.unobservable_segment + 1, j + 1, rows));
  }
  if (o.failing_dense > 0)
    throw SingularMatrix(o.failing_dense, 0.0,
                         fmt::format("column {} of J (dense parameter {}) is not determined by the data: it is zero "
                                     "or depends on the columns before it, so the Schur complement of J^T J is "
                                     "singular there",
                                     o.failing_dense, o.failing_dense));
  const double rows = static_cast<double>(std::max<index>(J.rows(), 1));
  const double level = std::numeric_limits<T>::epsilon() * std::sqrt(rows);
  if (!(o.rcond >= level))
    throw SingularMatrix(o.worst, o.rcond / std::sqrt(rows),
                         fmt::format("column {} of J (parameter {}) depends on other columns to working precision, "
                                     "the one the data determine worst: 1 / its variance inflation factor, {:.3g}, "
                                     "is below {:.3g}, the rounding of J^T J's {}-row sums (sqrt(n) machine "
                                     "epsilon), to which the reciprocal condition number above is relative",
                                     o.worst, o.worst, o.rcond, level, J.rows()));
  if (report != nullptr) report->rcond = o.rcond;
}

// The report of a bordered step or pseudoinverse, before it runs.
template <Real T>
Report report_of(const BorderedJacobian<T>& J, Operation operation, double damping, const char* what) {
  Report r;
  r.operation = operation;
  r.method = Method::BorderedSchur;
  r.device = J.device();
  r.precision = type_name<T>();
  r.notes.push_back(fmt::format("arrowhead J^T J through its Schur complement ({} dense, {} segment columns), {}",
                                J.dense_cols(), J.segments(), what));
  if (damping != 0) r.notes.push_back(fmt::format("Levenberg-Marquardt damping {:g}", damping));
  return r;
}

}  // namespace

template <Real T>
BorderedJacobian<T>::BorderedJacobian(Matrix<T> dense, std::vector<index> starts, std::vector<index> lengths,
                                      std::vector<T> values)
    : dense_(std::move(dense)), starts_(std::move(starts)), lengths_(std::move(lengths)), values_(std::move(values)) {
  const index n = dense_.rows();
  if (starts_.size() != lengths_.size())
    throw InvalidArgument(fmt::format("bordered Jacobian: {} segment starts but {} lengths", starts_.size(),
                                      lengths_.size()));
  if (static_cast<index>(values_.size()) != n)
    throw InvalidArgument(fmt::format("bordered Jacobian: {} segment values for {} rows", values_.size(), n));
  segment_of_row_.resize(static_cast<std::size_t>(n));
  index next = 0;
  for (std::size_t j = 0; j < starts_.size(); ++j) {
    if (starts_[j] != next || lengths_[j] < 0)
      throw InvalidArgument(fmt::format("bordered Jacobian: segment {} covers rows {}..{} but should start at row {} "
                                        "(segments run in order, without gap or overlap; an empty one is a zero "
                                        "column)",
                                        j + 1, starts_[j] + 1, starts_[j] + lengths_[j], next + 1));
    for (index r = starts_[j]; r < starts_[j] + lengths_[j] && r < n; ++r) segment_of_row_[static_cast<std::size_t>(r)] = static_cast<index>(j);
    next = starts_[j] + lengths_[j];
  }
  if (next != n)
    throw InvalidArgument(fmt::format("bordered Jacobian: the segments cover rows 1..{} of {}", next, n));
  // the arrays the kernels read, where J lives
  const Device device = dense_.device();
  Matrix<T> values_here(n, 1);
  std::copy(values_.begin(), values_.end(), values_here.data());
  device_values_ = values_here.to(device);
  std::vector<index> bounds = starts_;
  bounds.push_back(n);
  device_bounds_ = upload(bounds, device);
  device_segment_of_ = upload(segment_of_row_, device);
}

template <Real T>
BorderedJacobian<T> BorderedJacobian<T>::to(Device device) const {
  return {dense_.to(device), starts_, lengths_, values_};
}

template <Real T>
typename BorderedJacobian<T>::Arrays BorderedJacobian<T>::arrays() const noexcept {
  return {device_values_.data(), static_cast<const index*>(device_bounds_.get()),
          static_cast<const index*>(device_segment_of_.get())};
}

namespace {

// The segments from each row's segment column (among m columns, after k dense ones): the columns must
// follow the rows in order, each on one run. found[r] < 0: row r has no nonzero there, so its segment
// entry is zero and it joins the run before it (the first segment's at the top). A segment column that no
// row reaches stays empty: a zero column of J is a rank-deficient Jacobian, which the solvers refuse
// naming it (SingularMatrix), not a malformed one.
template <Real T>
BorderedJacobian<T> from_rows(Matrix<T> dense, index m, const std::vector<index>& found, std::vector<T> values) {
  const index n = dense.rows(), k = dense.cols();
  std::vector<index> lengths(static_cast<std::size_t>(m - k), 0);
  index column = k;  // the segment column of the rows so far
  for (index r = 0; r < n; ++r) {
    const index c = found[static_cast<std::size_t>(r)] < 0 ? column : found[static_cast<std::size_t>(r)];
    if (c < column)
      throw InvalidArgument(fmt::format("row {} goes back to column {} after column {}; the segment columns must "
                                        "follow the rows in order, each on one run of rows",
                                        r + 1, c + 1, column + 1));
    column = c;
    ++lengths[static_cast<std::size_t>(c - k)];
  }
  std::vector<index> starts(lengths.size());
  std::exclusive_scan(lengths.begin(), lengths.end(), starts.begin(), index{0});
  return {std::move(dense), std::move(starts), std::move(lengths), std::move(values)};
}

void require_dense_cols(index k, index m) {
  if (k < 1 || k >= m)
    throw InvalidArgument(fmt::format("{} dense columns in a {}-column Jacobian: a bordered Jacobian needs 1 <= k < {}",
                                      k, m, m));
}

}  // namespace

template <Real T>
BorderedJacobian<T> BorderedJacobian<T>::from_dense(ConstMatrixView<T> J, index k) {
  const index n = J.rows(), m = J.cols();
  require_dense_cols(k, m);
  std::vector<index> found(static_cast<std::size_t>(n), -1);
  std::vector<T> values(static_cast<std::size_t>(n));
  for (index r = 0; r < n; ++r)
    for (index c = k; c < m; ++c)
      if (J(r, c) != T(0)) {
        if (found[static_cast<std::size_t>(r)] >= 0)
          throw InvalidArgument(fmt::format("row {} has more than one nonzero after the first {} columns; a bordered "
                                            "Jacobian has at most one",
                                            r + 1, k));
        found[static_cast<std::size_t>(r)] = c;
        values[static_cast<std::size_t>(r)] = J(r, c);
      }
  return from_rows<T>(Matrix<T>::copy_of(J.block(0, 0, n, k)), m, found, std::move(values));
}

template <Real T>
BorderedJacobian<T> BorderedJacobian<T>::from_sparse(const SparseJacobian<T>& J, index k) {
  const index n = J.rows, m = J.cols;
  require_dense_cols(k, m);
  Matrix<T> dense(n, k);
  std::vector<index> found(static_cast<std::size_t>(n), -1);
  std::vector<T> values(static_cast<std::size_t>(n));
  for (index r = 0; r < n; ++r)
    for (index e = J.row_start[static_cast<std::size_t>(r)]; e < J.row_start[static_cast<std::size_t>(r) + 1]; ++e) {
      const index c = J.column[static_cast<std::size_t>(e)];
      const T v = J.value[static_cast<std::size_t>(e)];
      if (c < k) {
        dense(r, c) += v;
      } else if (v != T(0)) {
        if (found[static_cast<std::size_t>(r)] >= 0 && found[static_cast<std::size_t>(r)] != c)
          throw InvalidArgument(fmt::format("row {} has more than one nonzero after the first {} columns; a bordered "
                                            "Jacobian has at most one",
                                            r + 1, k));
        found[static_cast<std::size_t>(r)] = c;
        values[static_cast<std::size_t>(r)] += v;
      }
    }
  return from_rows<T>(std::move(dense), m, found, std::move(values));
}

template <Real T>
BorderedJacobian<T> BorderedJacobian<T>::from_compact(ConstMatrixView<T> compact, const std::vector<index>& lengths) {
  if (compact.rows() != 2)
    throw InvalidArgument(fmt::format("the compact layout is 2 x n (the motion column, then each row's segment "
                                      "value); got {}",
                                      shape_string(compact.rows(), compact.cols())));
  const index n = compact.cols();
  Matrix<T> dense(n, 1);
  std::vector<T> values(static_cast<std::size_t>(n));
  for (index r = 0; r < n; ++r) {
    dense(r, 0) = compact(0, r);
    values[static_cast<std::size_t>(r)] = compact(1, r);
  }
  std::vector<index> starts(lengths.size());
  index next = 0;
  for (std::size_t j = 0; j < lengths.size(); ++j) {
    starts[j] = next;
    next += lengths[j];
  }
  return {std::move(dense), std::move(starts), lengths, std::move(values)};  // the constructor checks the lengths
}

template <Real T>
index BorderedJacobian<T>::segment_of(index row) const {
  return segment_of_row_[static_cast<std::size_t>(row)];
}

template <Real T>
Matrix<T> BorderedJacobian<T>::to_dense() const {
  require_host(device(), "BorderedJacobian::to_dense");
  Matrix<T> J(rows(), cols());
  for (index c = 0; c < dense_cols(); ++c)
    for (index r = 0; r < rows(); ++r) J(r, c) = dense_(r, c);
  for (index r = 0; r < rows(); ++r) J(r, dense_cols() + segment_of(r)) = values_[static_cast<std::size_t>(r)];
  return J;
}

template <Real T>
SparseMatrix<T> BorderedJacobian<T>::to_sparse() const {
  require_host(device(), "BorderedJacobian::to_sparse");
  const index n = rows(), k = dense_cols();
  std::vector<index> row, col;
  std::vector<T> value;
  const std::size_t entries = static_cast<std::size_t>(n * (k + 1));
  row.reserve(entries);
  col.reserve(entries);
  value.reserve(entries);
  for (index r = 0; r < n; ++r) {
    for (index c = 0; c < k; ++c) {
      row.push_back(r);
      col.push_back(c);
      value.push_back(dense_(r, c));
    }
    row.push_back(r);
    col.push_back(k + segment_of(r));
    value.push_back(values_[static_cast<std::size_t>(r)]);
  }
  return SparseMatrix<T>::from_triplets(n, cols(), row, col, value);
}

template <Real T>
Arrowhead<T> normal_matrix(const BorderedJacobian<T>& J, double damping) {
  require_host(J.device(), "slam::normal_matrix");
  const index n = J.rows(), kd = J.dense_cols(), s = J.segments();
  Arrowhead<T> a{Matrix<T>(kd, kd), Matrix<T>(kd, s), std::vector<T>(static_cast<std::size_t>(s), T(0))};
  if (kd > 0 && n > 0) {
    syrk<T>(Uplo::Lower, Op::Transpose, T(1), J.dense().view(), T(0), a.corner.view());
    symmetrize_from_lower<T>(a.corner.view());
  }
  for (index r = 0; r < n; ++r) {  // one pass over the rows: each touches one segment column
    const index j = J.segment_of(r);
    const T v = J.values()[static_cast<std::size_t>(r)];
    a.diagonal[static_cast<std::size_t>(j)] += v * v;
    for (index c = 0; c < kd; ++c) a.border(c, j) += J.dense()(r, c) * v;
  }
  if (damping != 0) {
    for (index c = 0; c < kd; ++c) a.corner(c, c) *= T(1 + damping);
    for (T& v : a.diagonal) v *= T(1 + damping);
  }
  return a;
}

template <Real T>
Solution<T> pinv_apply(const BorderedJacobian<T>& J, ConstMatrixView<T> d, double damping) {
  if (d.rows() != J.rows()) throw ShapeMismatch("pinv_apply: J and d", J.rows(), J.cols(), d.rows(), d.cols());
  if (d.device() != J.device())
    throw InvalidArgument(fmt::format("pinv_apply: J is on {} but d is on {}; move one with .to()", J.device().name(),
                                      d.device().name()));
  const Stopwatch clock;
  Solution<T> out{Matrix<T>::uninitialized(J.cols(), d.cols(), J.device()),
                  report_of(J, Operation::SlamStep, damping, "applied to d without forming J^+")};
  raise(J, kernels::slam<T>(J.device()).step(J, d, damping, out.x.view()), &out.report);
  out.report.seconds = clock.seconds();
  return out;
}

template <Real T>
Matrix<T> normal_inverse(const BorderedJacobian<T>& J, double damping) {
  Matrix<T> X(J.cols(), J.cols(), J.device());
  raise(J, kernels::slam<T>(J.device()).normal_inverse(J, damping, X.view()), nullptr);
  return X;
}

template <Real T>
Solution<T> pinv(const BorderedJacobian<T>& J, double damping) {
  const Stopwatch clock;
  Solution<T> out{Matrix<T>::uninitialized(J.cols(), J.rows(), J.device()),
                  report_of(J, Operation::SlamPseudoinverse, damping, "J^+ materialised")};
  raise(J, kernels::slam<T>(J.device()).pinv(J, damping, out.x.view()), &out.report);
  out.report.seconds = clock.seconds();
  return out;
}

template <Real T>
Solution<T> cgls_apply(const SparseJacobian<T>& J, ConstMatrixView<T> d, const CglsOptions& options) {
  if (d.rows() != J.rows) throw ShapeMismatch("cgls: J and d", J.rows, J.cols, d.rows(), d.cols());
  const Stopwatch clock;
  const Device device = d.device();
  const std::unique_ptr<kernels::LinearOperator<double>> op = kernels::slam<T>(device).sparse(J, device);
  const double setup_seconds = clock.seconds();  // J^T formed, both uploaded to a GPU
  Matrix<double> dd = Matrix<double>::uninitialized(d.rows(), d.cols(), device);
  kernels::vectors<T>(device).widen(d, dd.view());
  Matrix<double> x(J.cols, d.cols(), device);
  const krylov::Outcome o = krylov::cgls<double>(*op, dd.view(), x.view(), options.tolerance, options.max_iterations);
  if (!o.converged)
    throw NoConvergence("CGLS", o.iterations, o.residual, options.tolerance, "the iteration limit was reached");
  Solution<T> out;
  if constexpr (std::is_same_v<T, double>) {
    out.x = std::move(x);
  } else {
    out.x = Matrix<float>::uninitialized(x.rows(), x.cols(), device);
    kernels::mixed(device).round_to_float(x.view(), out.x.view());
  }
  Report& r = out.report;
  r.operation = Operation::SlamStep;
  r.method = Method::CGLS;
  r.device = device;
  r.precision = type_name<T>();
  r.iterations = o.iterations;
  r.stop = StopReason::Converged;
  r.notes.push_back(fmt::format("{} nonzeros; CGLS iterates in float64", J.value.size()));
  r.notes.push_back(fmt::format("{:.3g} s forming J^T{} and {:.3g} s iterating", setup_seconds,
                                device.is_cpu() ? "" : " and uploading both", clock.seconds() - setup_seconds));
  r.notes.push_back(fmt::format("largest relative normal-equation residual {:.3g} (tolerance {:.3g})", o.residual,
                                options.tolerance));
  r.seconds = clock.seconds();
  return out;
}

template Solution<float> cgls_apply<float>(const SparseJacobian<float>&, ConstMatrixView<float>, const CglsOptions&);
template Solution<double> cgls_apply<double>(const SparseJacobian<double>&, ConstMatrixView<double>,
                                             const CglsOptions&);

template <Real T>
BorderedJacobian<T> random_bordered_jacobian(index rows, index cols, std::uint64_t seed) {
  const index segments = cols - 1;
  if (segments < 1 || segments > rows)
    throw InvalidArgument(fmt::format("a bordered Jacobian of {} rows can have 2 to {} columns, not {}", rows, rows + 1,
                                      cols));
  std::mt19937_64 rng(seed);
  std::vector<index> pool(static_cast<std::size_t>(rows - 1)), cuts(static_cast<std::size_t>(segments - 1));
  std::iota(pool.begin(), pool.end(), index{1});
  std::sample(pool.begin(), pool.end(), cuts.begin(), static_cast<std::ptrdiff_t>(cuts.size()), rng);
  std::sort(cuts.begin(), cuts.end());
  std::vector<index> starts{0}, lengths;
  for (index c : cuts) {
    lengths.push_back(c - starts.back());
    starts.push_back(c);
  }
  lengths.push_back(rows - starts.back());
  Matrix<T> dense(rows, 1);
  std::vector<T> values(static_cast<std::size_t>(rows));
  std::uniform_real_distribution<double> uniform(-1, 1), magnitude(0.5, 2);
  for (index r = 0; r < rows; ++r) {
    dense(r, 0) = static_cast<T>(uniform(rng));
    values[static_cast<std::size_t>(r)] = static_cast<T>((rng() % 2 ? 1 : -1) * magnitude(rng));
  }
  return {std::move(dense), starts, lengths, values};
}

template BorderedJacobian<float> random_bordered_jacobian<float>(index, index, std::uint64_t);
template BorderedJacobian<double> random_bordered_jacobian<double>(index, index, std::uint64_t);
template class BorderedJacobian<float>;
template class BorderedJacobian<double>;
template Arrowhead<float> normal_matrix<float>(const BorderedJacobian<float>&, double);
template Arrowhead<double> normal_matrix<double>(const BorderedJacobian<double>&, double);
template Solution<float> pinv_apply<float>(const BorderedJacobian<float>&, ConstMatrixView<float>, double);
template Solution<double> pinv_apply<double>(const BorderedJacobian<double>&, ConstMatrixView<double>, double);
template Solution<float> pinv<float>(const BorderedJacobian<float>&, double);
template Solution<double> pinv<double>(const BorderedJacobian<double>&, double);
template Matrix<float> normal_inverse<float>(const BorderedJacobian<float>&, double);
template Matrix<double> normal_inverse<double>(const BorderedJacobian<double>&, double);

}  // namespace linv::slam
