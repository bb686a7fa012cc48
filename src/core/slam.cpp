// Bordered Jacobians and their arrowhead normal equations (include/linv/slam.hpp).
//
// With N = [A B; B^T D] (A k x k, D diagonal), N [x0; x1] = [r0; r1] is solved by the Schur complement
// of D: S = A - B D^-1 B^T, S x0 = r0 - B D^-1 r1, x1 = D^-1 (r1 - B^T x0). S is k x k and factored
// once by Cholesky; everything else is a pass over the border or the rows.
#include "linv/slam.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "cuda/dense.hpp"
#include "kernels/dense.hpp"
#include "linv/errors.hpp"

namespace linv::slam {
namespace {

namespace k = kernels::cpu;

// The factored arrowhead: D, B, and the Cholesky factor of S.
template <Real T>
struct Factored {
  Arrowhead<T> n;
  Matrix<T> schur;  // lower Cholesky factor of S

  // x := N^-1 r for r = [r0; r1] (k + segments entries, one column), in place. When r1 is zero but for
  // segment `only` (a row of J: what J^+ is made of), the reduction r0 - B D^-1 r1 takes that one term.
  void solve(T* x, index only = -1) const {
    const index kd = n.corner.rows(), s = static_cast<index>(n.diagonal.size());
    const index first = only < 0 ? 0 : only, last = only < 0 ? s : only + 1;
    for (index i = 0; i < kd; ++i) {
      T t = x[i];
      for (index j = first; j < last; ++j) t -= n.border(i, j) * x[kd + j] / n.diagonal[static_cast<std::size_t>(j)];
      x[i] = t;
    }
    if (kd > 0) k::potrs<T>(Uplo::Lower, schur.view(), MatrixView<T>(x, kd, 1, kd));
    // x1 = D^-1 (r1 - B^T x0)
    for (index j = 0; j < s; ++j) {
      T t = x[kd + j];
      for (index i = 0; i < kd; ++i) t -= n.border(i, j) * x[i];
      x[kd + j] = t / n.diagonal[static_cast<std::size_t>(j)];
    }
  }
};

template <Real T>
Factored<T> factor(const BorderedJacobian<T>& J, double damping) {
  Factored<T> f{normal_matrix(J, damping), Matrix<T>()};
  const index kd = J.dense_cols(), s = J.segments();
  for (index j = 0; j < s; ++j)
    if (!(f.n.diagonal[static_cast<std::size_t>(j)] > 0))
      throw SingularMatrix(kd + j + 1, 0.0,
                           fmt::format("parameter {} (segment column {}, rows {}..{}) is unobservable: its column of J "
                                       "is zero",
                                       kd + j + 1, j + 1, J.starts()[static_cast<std::size_t>(j)] + 1,
                                       J.starts()[static_cast<std::size_t>(j)] + J.lengths()[static_cast<std::size_t>(j)]));
  // S = A - B D^-1 B^T
  f.schur = Matrix<T>::copy_of(f.n.corner.view());
  for (index j = 0; j < s; ++j) {
    const T inv = T(1) / f.n.diagonal[static_cast<std::size_t>(j)];
    for (index c = 0; c < kd; ++c)
      for (index r = c; r < kd; ++r) f.schur(r, c) -= f.n.border(r, j) * f.n.border(c, j) * inv;
  }
  if (kd > 0) {
    const int info = k::potrf<T>(Uplo::Lower, f.schur.view());
    if (info > 0)
      throw SingularMatrix(info, 0.0,
                           fmt::format("the Schur complement of the normal equations is singular at dense parameter "
                                       "{}: it is not determined by the data",
                                       info));
  }
  return f;
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
    if (starts_[j] != next || lengths_[j] < 1)
      throw InvalidArgument(fmt::format("bordered Jacobian: segment {} covers rows {}..{} but should start at row {} "
                                        "with at least one row (segments run in order, without gap or overlap)",
                                        j + 1, starts_[j] + 1, starts_[j] + lengths_[j], next + 1));
    for (index r = starts_[j]; r < starts_[j] + lengths_[j] && r < n; ++r) segment_of_row_[static_cast<std::size_t>(r)] = static_cast<index>(j);
    next = starts_[j] + lengths_[j];
  }
  if (next != n)
    throw InvalidArgument(fmt::format("bordered Jacobian: the segments cover rows 1..{} of {}", next, n));
}

namespace {

// The segments from each row's segment column (among m columns, after k dense ones): they must follow
// the rows in order, each on one run. found[r] < 0: row r has no nonzero there; more than one is refused
// by the caller.
template <Real T>
BorderedJacobian<T> from_rows(Matrix<T> dense, index m, const std::vector<index>& found, std::vector<T> values) {
  const index n = dense.rows(), k = dense.cols();
  std::vector<index> starts, lengths;
  index column = k - 1;  // the segment column of the previous row
  for (index r = 0; r < n; ++r) {
    const index c = found[static_cast<std::size_t>(r)];
    if (c < 0)
      throw InvalidArgument(fmt::format("row {} has no nonzero after the first {} columns; a bordered Jacobian has "
                                        "exactly one",
                                        r + 1, k));
    if (c == column) {
      ++lengths.back();
    } else if (c == column + 1) {
      starts.push_back(r);
      lengths.push_back(1);
      column = c;
    } else {
      throw InvalidArgument(fmt::format("row {} continues in column {} after column {}; the segment columns must "
                                        "follow the rows in order, each on one run of rows",
                                        r + 1, c + 1, column + 1));
    }
  }
  if (column != m - 1)
    throw InvalidArgument(fmt::format("columns {}..{} have no rows; every parameter needs a segment", column + 2, m));
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
                                            "Jacobian has exactly one",
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
                                            "Jacobian has exactly one",
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
  Matrix<T> J(rows(), cols());
  for (index c = 0; c < dense_cols(); ++c)
    for (index r = 0; r < rows(); ++r) J(r, c) = dense_(r, c);
  for (index r = 0; r < rows(); ++r) J(r, dense_cols() + segment_of(r)) = values_[static_cast<std::size_t>(r)];
  return J;
}

template <Real T>
Arrowhead<T> normal_matrix(const BorderedJacobian<T>& J, double damping) {
  const index n = J.rows(), kd = J.dense_cols(), s = J.segments();
  Arrowhead<T> a{Matrix<T>(kd, kd), Matrix<T>(kd, s), std::vector<T>(static_cast<std::size_t>(s), T(0))};
  if (kd > 0 && n > 0) {
    k::syrk<T>(Uplo::Lower, Op::Transpose, T(1), J.dense().view(), T(0), a.corner.view());
    for (index c = 0; c < kd; ++c)
      for (index r = 0; r < c; ++r) a.corner(r, c) = a.corner(c, r);
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
Matrix<T> pinv_apply(const BorderedJacobian<T>& J, ConstMatrixView<T> d, double damping) {
  if (d.rows() != J.rows())
    throw ShapeMismatch("pinv_apply: J and d", J.rows(), J.cols(), d.rows(), d.cols());
  const Factored<T> f = factor(J, damping);
  const index n = J.rows(), kd = J.dense_cols(), m = J.cols();
  Matrix<T> x(m, d.cols());
  for (index c = 0; c < d.cols(); ++c) {
    T* col = &x(0, c);
    // J^T d, one pass over the rows
    for (index r = 0; r < n; ++r) {
      const T v = d(r, c);
      for (index p = 0; p < kd; ++p) col[p] += J.dense()(r, p) * v;
      col[kd + J.segment_of(r)] += J.values()[static_cast<std::size_t>(r)] * v;
    }
    f.solve(col);
  }
  return x;
}

template <Real T>
Matrix<T> normal_inverse(const BorderedJacobian<T>& J, double damping) {
  const Factored<T> f = factor(J, damping);
  const index kd = J.dense_cols(), s = J.segments(), m = J.cols();
  Matrix<T> Sinv = Matrix<T>::copy_of(f.schur.view());  // S^-1 from its Cholesky factor
  if (kd > 0) k::potri<T>(Uplo::Lower, Sinv.view());
  for (index c = 0; c < kd; ++c)
    for (index r = 0; r < c; ++r) Sinv(r, c) = Sinv(c, r);
  // W = E S^-1 (s x kd), E = D^-1 B^T
  Matrix<T> W(s, kd);
  for (index j = 0; j < s; ++j)
    for (index c = 0; c < kd; ++c) {
      T t = 0;
      for (index p = 0; p < kd; ++p) t += f.n.border(p, j) * Sinv(p, c);
      W(j, c) = t / f.n.diagonal[static_cast<std::size_t>(j)];
    }
  Matrix<T> X(m, m);
  for (index c = 0; c < kd; ++c)
    for (index r = 0; r < kd; ++r) X(r, c) = Sinv(r, c);
  for (index c = 0; c < kd; ++c)
    for (index j = 0; j < s; ++j) X(kd + j, c) = X(c, kd + j) = -W(j, c);
  for (index i = 0; i < s; ++i) {  // D^-1 + W E^T, column by column
    for (index j = 0; j < s; ++j) {
      T t = 0;
      for (index c = 0; c < kd; ++c) t += W(j, c) * f.n.border(c, i);
      X(kd + j, kd + i) = t / f.n.diagonal[static_cast<std::size_t>(i)];
    }
    X(kd + i, kd + i) += T(1) / f.n.diagonal[static_cast<std::size_t>(i)];
  }
  return X;
}

template <Real T>
Matrix<T> pinv(const BorderedJacobian<T>& J, double damping) {
  const Factored<T> f = factor(J, damping);
  const index n = J.rows(), kd = J.dense_cols(), m = J.cols();
  Matrix<T> P(m, n);
  for (index r = 0; r < n; ++r) {  // column r of J^+ = N^-1 (row r of J)^T
    T* col = &P(0, r);
    for (index p = 0; p < kd; ++p) col[p] = J.dense()(r, p);
    col[kd + J.segment_of(r)] = J.values()[static_cast<std::size_t>(r)];
    f.solve(col, J.segment_of(r));
  }
  return P;
}

// ---- on a GPU ----

namespace {

std::unique_ptr<void, detail::Deleter> upload(const std::vector<index>& v, Device device) {
  const std::size_t bytes = std::max<std::size_t>(v.size(), 1) * sizeof(index);
  std::unique_ptr<void, detail::Deleter> p(detail::allocate_bytes(bytes, device), detail::Deleter{device});
  if (!v.empty()) detail::copy_bytes(p.get(), device, v.data(), Device::cpu(), v.size() * sizeof(index));
  return p;
}

template <Real T>
cuda::BorderedView<T> view_of(const DeviceBorderedJacobian<T>& J) {
  return {J.dense().data(), std::max<index>(J.dense().ld(), 1), J.values().data(), J.starts(), J.segment_of(),
          J.rows(), J.dense_cols(), J.segments()};
}

// The outcome's failures as the CPU path reports them.
template <Real T>
void raise(const DeviceBorderedJacobian<T>& J, const cuda::SlamOutcome& o) {
  const index kd = J.dense_cols();
  if (o.unobservable_segment >= 0) {
    const std::size_t j = static_cast<std::size_t>(o.unobservable_segment);
    throw SingularMatrix(kd + o.unobservable_segment + 1, 0.0,
                         fmt::format("parameter {} (segment column {}, rows {}..{}) is unobservable: its column of J "
                                     "is zero",
                                     kd + o.unobservable_segment + 1, j + 1, J.host_starts()[j] + 1,
                                     J.host_starts()[j + 1]));
  }
  if (o.failing_dense > 0)
    throw SingularMatrix(o.failing_dense, 0.0,
                         fmt::format("the Schur complement of the normal equations is singular at dense parameter "
                                     "{}: it is not determined by the data",
                                     o.failing_dense));
}

}  // namespace

template <Real T>
DeviceBorderedJacobian<T>::DeviceBorderedJacobian(const BorderedJacobian<T>& J, Device device)
    : segments_(J.segments()) {
  if (!device.is_cuda()) throw InvalidArgument("DeviceBorderedJacobian: give a CUDA device (the CPU takes J as it is)");
  if (J.dense_cols() > cuda::kSlamMaxDense)
    throw InvalidArgument(fmt::format("the GPU path handles up to {} dense columns; this Jacobian has {} (use the CPU)",
                                      cuda::kSlamMaxDense, J.dense_cols()));
  dense_ = J.dense().to(device);
  Matrix<T> values(J.rows(), 1);
  std::copy(J.values().begin(), J.values().end(), values.data());
  values_ = values.to(device);
  host_starts_ = J.starts();
  host_starts_.push_back(J.rows());
  std::vector<index> rows_segment(static_cast<std::size_t>(J.rows()));
  for (index r = 0; r < J.rows(); ++r) rows_segment[static_cast<std::size_t>(r)] = J.segment_of(r);
  starts_ = upload(host_starts_, device);
  segment_of_ = upload(rows_segment, device);
}

template <Real T>
Matrix<T> pinv_apply(const DeviceBorderedJacobian<T>& J, ConstMatrixView<T> d, double damping) {
  if (d.rows() != J.rows()) throw ShapeMismatch("pinv_apply: J and d", J.rows(), J.cols(), d.rows(), d.cols());
  if (d.device() != J.device())
    throw InvalidArgument(fmt::format("pinv_apply: J is on {} but d is on {}", J.device().name(), d.device().name()));
  Matrix<T> x = Matrix<T>::uninitialized(J.cols(), d.cols(), J.device());
  raise(J, cuda::slam_step<T>(view_of(J), d, damping, x.view()));
  return x;
}

template <Real T>
Matrix<T> pinv(const DeviceBorderedJacobian<T>& J, double damping) {
  Matrix<T> P = Matrix<T>::uninitialized(J.cols(), J.rows(), J.device());
  raise(J, cuda::slam_pinv<T>(view_of(J), damping, P.view()));
  return P;
}

template <Real T>
SparseJacobian<T> SparseJacobian<T>::from_dense(ConstMatrixView<T> J) {
  SparseJacobian<T> s;
  s.rows = J.rows();
  s.cols = J.cols();
  s.row_start.reserve(static_cast<std::size_t>(s.rows + 1));
  s.row_start.push_back(0);
  for (index r = 0; r < s.rows; ++r) {
    for (index c = 0; c < s.cols; ++c)
      if (J(r, c) != T(0)) {
        s.column.push_back(c);
        s.value.push_back(J(r, c));
      }
    s.row_start.push_back(static_cast<index>(s.column.size()));
  }
  return s;
}

template <Real T>
Matrix<T> cgls_apply(const SparseJacobian<T>& J, ConstMatrixView<T> d, double tolerance, int max_iterations,
                     CglsOutcome& outcome) {
  if (d.rows() != J.rows) throw ShapeMismatch("cgls: J and d", J.rows, J.cols, d.rows(), d.cols());
  const index n = J.rows, m = J.cols;
  if (d.device().is_cuda()) {  // the same iteration with cuSPARSE products
    Matrix<T> X = Matrix<T>::uninitialized(m, d.cols(), d.device());
    const cuda::CglsResult r =
        cuda::cgls<T>({n, m, J.row_start.data(), J.column.data(), J.value.data()}, d, tolerance, max_iterations, X.view());
    outcome = CglsOutcome{r.iterations, r.residual, r.converged};
    return X;
  }
  auto times = [&](const std::vector<double>& x, std::vector<double>& y) {  // y = J x
    for (index r = 0; r < n; ++r) {
      double t = 0;
      for (index k = J.row_start[static_cast<std::size_t>(r)]; k < J.row_start[static_cast<std::size_t>(r) + 1]; ++k)
        t += static_cast<double>(J.value[static_cast<std::size_t>(k)]) * x[static_cast<std::size_t>(J.column[static_cast<std::size_t>(k)])];
      y[static_cast<std::size_t>(r)] = t;
    }
  };
  auto transpose_times = [&](const std::vector<double>& y, std::vector<double>& x) {  // x = J^T y
    std::fill(x.begin(), x.end(), 0.0);
    for (index r = 0; r < n; ++r)
      for (index k = J.row_start[static_cast<std::size_t>(r)]; k < J.row_start[static_cast<std::size_t>(r) + 1]; ++k)
        x[static_cast<std::size_t>(J.column[static_cast<std::size_t>(k)])] +=
            static_cast<double>(J.value[static_cast<std::size_t>(k)]) * y[static_cast<std::size_t>(r)];
  };
  auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
    double t = 0;
    for (std::size_t i = 0; i < a.size(); ++i) t += a[i] * b[i];
    return t;
  };
  Matrix<T> X(m, d.cols());
  outcome = CglsOutcome{0, 0.0, true};
  std::vector<double> x(static_cast<std::size_t>(m)), r(static_cast<std::size_t>(n)), s(static_cast<std::size_t>(m)),
      p(static_cast<std::size_t>(m)), q(static_cast<std::size_t>(n));
  for (index c = 0; c < d.cols(); ++c) {
    std::fill(x.begin(), x.end(), 0.0);
    for (index i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = static_cast<double>(d(i, c));
    transpose_times(r, s);
    p = s;
    const double s0 = std::sqrt(dot(s, s));
    double gamma = s0 * s0;
    int k = 0;
    for (; k < max_iterations && std::sqrt(gamma) > tolerance * s0; ++k) {
      times(p, q);
      const double alpha = gamma / dot(q, q);
      for (index i = 0; i < m; ++i) x[static_cast<std::size_t>(i)] += alpha * p[static_cast<std::size_t>(i)];
      for (index i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] -= alpha * q[static_cast<std::size_t>(i)];
      transpose_times(r, s);
      const double next = dot(s, s);
      for (index i = 0; i < m; ++i)
        p[static_cast<std::size_t>(i)] = s[static_cast<std::size_t>(i)] + (next / gamma) * p[static_cast<std::size_t>(i)];
      gamma = next;
    }
    const double relative = s0 > 0 ? std::sqrt(gamma) / s0 : 0.0;
    outcome.iterations = std::max(outcome.iterations, k);
    outcome.residual = std::max(outcome.residual, relative);
    outcome.converged = outcome.converged && relative <= tolerance;
    for (index i = 0; i < m; ++i) X(i, c) = static_cast<T>(x[static_cast<std::size_t>(i)]);
  }
  return X;
}

template struct SparseJacobian<float>;
template struct SparseJacobian<double>;
template Matrix<float> cgls_apply<float>(const SparseJacobian<float>&, ConstMatrixView<float>, double, int,
                                         CglsOutcome&);
template Matrix<double> cgls_apply<double>(const SparseJacobian<double>&, ConstMatrixView<double>, double, int,
                                           CglsOutcome&);

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
template Matrix<float> pinv_apply<float>(const BorderedJacobian<float>&, ConstMatrixView<float>, double);
template Matrix<double> pinv_apply<double>(const BorderedJacobian<double>&, ConstMatrixView<double>, double);
template Matrix<float> pinv<float>(const BorderedJacobian<float>&, double);
template Matrix<double> pinv<double>(const BorderedJacobian<double>&, double);
template Matrix<float> normal_inverse<float>(const BorderedJacobian<float>&, double);
template Matrix<double> normal_inverse<double>(const BorderedJacobian<double>&, double);
template class DeviceBorderedJacobian<float>;
template class DeviceBorderedJacobian<double>;
template Matrix<float> pinv_apply<float>(const DeviceBorderedJacobian<float>&, ConstMatrixView<float>, double);
template Matrix<double> pinv_apply<double>(const DeviceBorderedJacobian<double>&, ConstMatrixView<double>, double);
template Matrix<float> pinv<float>(const DeviceBorderedJacobian<float>&, double);
template Matrix<double> pinv<double>(const DeviceBorderedJacobian<double>&, double);

}  // namespace linv::slam
