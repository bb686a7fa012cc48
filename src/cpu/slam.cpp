// The CPU backend's SLAM family (src/kernels/slam.hpp). With N = [A B; B^T D] the arrowhead J^T J (A k x k,
// D diagonal), N [x0; x1] = [r0; r1] is solved by the Schur complement of D: S = A - B D^-1 B^T,
// S x0 = r0 - B D^-1 r1, x1 = D^-1 (r1 - B^T x0). S is k x k and factored once by Cholesky; everything
// else is a pass over the border or the rows. The conditioning (src/kernels/slam.hpp: variance inflation
// factors) takes S^-1 and one more pass over the border.
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/lapack.hpp"
#include "common/parallel.hpp"
#include "cpu/backend.hpp"

namespace linv::cpu {
namespace {

// The factored arrowhead: D, B, and the Cholesky factor of S.
template <Real T>
struct Factored {
  slam::Arrowhead<T> n;
  Matrix<T> schur;  // lower Cholesky factor of S
  kernels::SlamOutcome outcome;

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
    if (kd > 0) lapack::potrs<T>(Uplo::Lower, schur.view(), MatrixView<T>(x, kd, 1, kd));
    // x1 = D^-1 (r1 - B^T x0)
    for (index j = 0; j < s; ++j) {
      T t = x[kd + j];
      for (index i = 0; i < kd; ++i) t -= n.border(i, j) * x[i];
      x[kd + j] = t / n.diagonal[static_cast<std::size_t>(j)];
    }
  }
};

// The outcome's rcond and worst-determined parameter (src/kernels/slam.hpp) for a factored arrowhead: the
// variance inflation factors from S^-1 and one pass over the border, O(segments k^2) as forming S.
template <Real T>
void estimate_condition(const slam::Arrowhead<T>& n, const Matrix<T>& schur, kernels::SlamOutcome& outcome) {
  const index kd = n.corner.rows(), s = static_cast<index>(n.diagonal.size());
  Matrix<T> Sinv = Matrix<T>::copy_of(schur.view());  // S^-1 from its Cholesky factor
  if (kd > 0) lapack::potri<T>(Uplo::Lower, Sinv.view());
  for (index c = 0; c < kd; ++c)
    for (index r = 0; r < c; ++r) Sinv(r, c) = Sinv(c, r);
  double worst = 0;  // the largest factor, the first of equals; the first NaN if there is one
  const auto consider = [&](double factor, index parameter) {
    if (factor > worst || (std::isnan(factor) && !std::isnan(worst))) worst = factor, outcome.worst = parameter;
  };
  for (index p = 0; p < kd; ++p)  // (N^-1)_pp N_pp = (S^-1)_pp A_pp
    consider(static_cast<double>(Sinv(p, p)) * static_cast<double>(n.corner(p, p)), p + 1);
  std::vector<double> e(static_cast<std::size_t>(kd));
  for (index j = 0; j < s; ++j) {  // (N^-1)_jj D_j = (1 / D_j + E_j S^-1 E_j^T) D_j, E_j = B(:, j)^T / D_j
    const double d = n.diagonal[static_cast<std::size_t>(j)];
    for (index p = 0; p < kd; ++p) e[static_cast<std::size_t>(p)] = n.border(p, j) / d;
    double quadratic = 0;
    for (index p = 0; p < kd; ++p) {
      double w = 0;
      for (index q = 0; q < kd; ++q) w += static_cast<double>(Sinv(q, p)) * e[static_cast<std::size_t>(q)];
      quadratic += e[static_cast<std::size_t>(p)] * w;
    }
    consider(1 + d * quadratic, kd + j + 1);
  }
  outcome.rcond = 1 / worst;
}

// The arrowhead and its Schur complement's factor; outcome says where it is singular (the rest is then
// not to be used) or how close to singular it is.
template <Real T>
Factored<T> factor(const slam::BorderedJacobian<T>& J, double damping) {
  Factored<T> f{slam::normal_matrix(J, damping), Matrix<T>(), {}};
  const index kd = J.dense_cols(), s = J.segments();
  for (index j = 0; j < s; ++j)
    if (!(f.n.diagonal[static_cast<std::size_t>(j)] > 0)) {
      f.outcome.unobservable_segment = j;
      return f;
    }
  // S = A - B D^-1 B^T
  f.schur = Matrix<T>::copy_of(f.n.corner.view());
  for (index j = 0; j < s; ++j) {
    const T inv = T(1) / f.n.diagonal[static_cast<std::size_t>(j)];
    for (index c = 0; c < kd; ++c)
      for (index r = c; r < kd; ++r) f.schur(r, c) -= f.n.border(r, j) * f.n.border(c, j) * inv;
  }
  if (kd > 0) f.outcome.failing_dense = lapack::potrf<T>(Uplo::Lower, f.schur.view());
  if (f.outcome.failing_dense == 0) estimate_condition(f.n, f.schur, f.outcome);
  return f;
}

bool failed(const kernels::SlamOutcome& o) { return o.unobservable_segment >= 0 || o.failing_dense > 0; }

// J (compressed rows) in float64: y = J x and x = J^T y.
// J and J^T as float64 compressed rows, so that both products run row-parallel over linv's CPU threads
// (a product with J^T straight from J's rows would scatter into shared entries). Building J^T costs one
// pass over the entries, against the two passes every CGLS iteration makes.
class Sparse final : public kernels::LinearOperator<double> {
 public:
  template <Real T>
  explicit Sparse(const slam::SparseJacobian<T>& J)
      : J_{J.rows, J.cols, J.row_start, J.column, std::vector<double>(J.value.begin(), J.value.end())},
        Jt_(J_.transpose()) {}
  index rows() const override { return J_.rows; }
  index cols() const override { return J_.cols; }
  void apply(ConstMatrixView<double> x, MatrixView<double> y) override { multiply(J_, x.data(), y.data()); }
  void apply_transpose(ConstMatrixView<double> y, MatrixView<double> x) override { multiply(Jt_, y.data(), x.data()); }

 private:
  // y = A x, rows split across the threads (each row's sum in order: the result does not depend on them)
  static void multiply(const SparseMatrix<double>& A, const double* x, double* y) {
    constexpr index kRowsPerThread = 8192;
    detail::in_parallel(A.rows, kRowsPerThread, [&](index first, index last) {
      for (index r = first; r < last; ++r) {
        double t = 0;
        for (index k = A.row_start[r]; k < A.row_start[r + 1]; ++k) t += A.value[k] * x[A.column[k]];
        y[r] = t;
      }
    });
  }

  SparseMatrix<double> J_, Jt_;
};

template <Real T>
class Slam final : public kernels::Slam<T> {
 public:
  kernels::SlamOutcome step(const slam::BorderedJacobian<T>& J, ConstMatrixView<T> d, double damping,
                            MatrixView<T> x) const override {
    const Factored<T> f = factor(J, damping);
    if (failed(f.outcome)) return f.outcome;
    const index n = J.rows(), kd = J.dense_cols(), m = J.cols();
    for (index c = 0; c < d.cols(); ++c) {
      T* col = &x(0, c);
      std::fill(col, col + m, T(0));
      for (index r = 0; r < n; ++r) {  // J^T d, one pass over the rows
        const T v = d(r, c);
        for (index p = 0; p < kd; ++p) col[p] += J.dense()(r, p) * v;
        col[kd + J.segment_of(r)] += J.values()[static_cast<std::size_t>(r)] * v;
      }
      f.solve(col);
    }
    return f.outcome;
  }

  kernels::SlamOutcome pinv(const slam::BorderedJacobian<T>& J, double damping, MatrixView<T> P) const override {
    const Factored<T> f = factor(J, damping);
    if (failed(f.outcome)) return f.outcome;
    const index n = J.rows(), kd = J.dense_cols(), m = J.cols();
    for (index r = 0; r < n; ++r) {  // column r of J^+ = N^-1 (row r of J)^T
      T* col = &P(0, r);
      std::fill(col, col + m, T(0));
      for (index p = 0; p < kd; ++p) col[p] = J.dense()(r, p);
      col[kd + J.segment_of(r)] = J.values()[static_cast<std::size_t>(r)];
      f.solve(col, J.segment_of(r));
    }
    return f.outcome;
  }

  // [S^-1, -S^-1 E^T; -E S^-1, D^-1 + E S^-1 E^T] with E = D^-1 B^T, in O(m^2 k).
  kernels::SlamOutcome normal_inverse(const slam::BorderedJacobian<T>& J, double damping,
                                      MatrixView<T> X) const override {
    const Factored<T> f = factor(J, damping);
    if (failed(f.outcome)) return f.outcome;
    const index kd = J.dense_cols(), s = J.segments();
    Matrix<T> Sinv = Matrix<T>::copy_of(f.schur.view());  // S^-1 from its Cholesky factor
    if (kd > 0) lapack::potri<T>(Uplo::Lower, Sinv.view());
    for (index c = 0; c < kd; ++c)
      for (index r = 0; r < c; ++r) Sinv(r, c) = Sinv(c, r);
    Matrix<T> W(s, kd);  // W = E S^-1 (s x kd)
    for (index j = 0; j < s; ++j)
      for (index c = 0; c < kd; ++c) {
        T t = 0;
        for (index p = 0; p < kd; ++p) t += f.n.border(p, j) * Sinv(p, c);
        W(j, c) = t / f.n.diagonal[static_cast<std::size_t>(j)];
      }
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
    return f.outcome;
  }

  std::unique_ptr<kernels::LinearOperator<double>> sparse(const slam::SparseJacobian<T>& J, Device) const override {
    return std::make_unique<Sparse>(J);
  }
};

}  // namespace

template <Real T>
const kernels::Slam<T>& slam() { return kernels::instance<Slam<T>>(); }
template const kernels::Slam<float>& slam<float>();
template const kernels::Slam<double>& slam<double>();

}  // namespace linv::cpu
