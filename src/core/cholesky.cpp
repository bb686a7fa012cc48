// Cholesky factorization (the Cholesky class) and the one-shot cholesky(): its checks, scaling by an even
// power of two, the factor L and its report.
#include "linv/dense.hpp"

#include <cmath>
#include <numbers>

#include "common/stopwatch.hpp"
#include "core/dense_steps.hpp"
#include "core/scaling.hpp"
#include "kernels/backend.hpp"
#include "linv/accuracy.hpp"
#include "linv/errors.hpp"

namespace linv {

using namespace dense_steps;

template <Scalar T>
Cholesky<T>::Cholesky(ConstMatrixView<T> A) {
  require_square(A, "Cholesky");
  const kernels::Magnitude magnitude = dense_of(A).magnitude(A);
  if (magnitude.first_non_finite) throw_non_finite<T>(A, *magnitude.first_non_finite, "A");
  exponent_ = scaling::exponent_for(magnitude.max_abs);
  exponent_ += exponent_ % 2 != 0 ? 1 : 0;  // even: L of 2^(2k) A is 2^k L
  factor_ = exponent_ != 0 ? scaling::normalized_copy<T>(A, exponent_) : Matrix<T>::copy_of(A);
  anorm_ = norm1<T>(factor_);
  const index info = dense_of(A).cholesky_factor(factor_.view());
  if (info > 0) throw NotPositiveDefinite(info);
}

template <Scalar T>
double Cholesky<T>::rcond() const {
  if (rcond_ < 0)
    rcond_ = dense_of<T>(factor_).cholesky_rcond(factor_, anorm_);
  return rcond_;
}

template <Scalar T>
Determinant Cholesky<T>::determinant() const {
  Determinant d{1, 0.0};
  // L's diagonal is real and positive, for a Hermitian A too
  for (T l : dense_of<T>(factor_).diagonal(factor_)) d.log_abs += 2.0 * std::log(static_cast<double>(std::real(l)));
  d.log_abs += static_cast<double>(size()) * exponent_ * std::numbers::ln2;
  return d;
}

template <Scalar T>
Matrix<T> Cholesky<T>::solve(ConstMatrixView<T> B) const {
  require_same_device<T>(factor_, B, "Cholesky::solve");
  if (B.rows() != size()) throw ShapeMismatch("Cholesky::solve: A and B", size(), size(), B.rows(), B.cols());
  Matrix<T> x = Matrix<T>::copy_of(B);
  dense_of<T>(factor_).cholesky_solve(factor_, x.view());
  scaling::scale_back(x, -exponent_, "solution");
  return x;
}

template <Scalar T>
Matrix<T> Cholesky<T>::inverse(TriangularInverse how) const {
  Matrix<T> x = factor_.clone();
  dense_of<T>(x).cholesky_inverse(x.view(), how);
  rcond_ = size() > 0 ? 1.0 / (anorm_ * norm1<T>(x)) : 1.0;
  require_finite_rcond(rcond_, smallest_diagonal<T>(factor_), "Cholesky inverse overflowed");
  scaling::scale_back(x, -exponent_, "inverse");
  return x;
}

template <Scalar T>
Matrix<T> Cholesky<T>::L() const {
  Matrix<T> l = factor_.clone();
  keep_triangle<T>(l.view(), Uplo::Lower);
  scaling::scale_back(l, exponent_ / 2, "Cholesky factor");
  return l;
}

namespace {

// cholesky of a matrix checked by cholesky() and within the scaling band.
template <Scalar T>
Solution<T> cholesky_as_given(ConstMatrixView<T> A, const SolveOptions& options) {
  require_symmetric(A, "cholesky");
  Solution<T> out;
  Report& r = out.report;
  r.operation = Operation::Cholesky;
  r.method = Method::Cholesky;
  r.device = A.device();
  r.precision = type_name<T>();
  Stopwatch clock;
  const Cholesky<T> chol(A);
  out.x = chol.L();
  r.seconds = clock.seconds();
  r.rcond = chol.rcond();
  if (options.compute_residual) r.scaled_residual = scaled_residual_cholesky<T>(A, out.x.view(), eps<T>());
  return out;
}

}  // namespace

template <Scalar T>
Solution<T> cholesky(ConstMatrixView<T> A, const SolveOptions& options) {
  require_square(A, "cholesky");
  Scaled<T> a(A, checked_magnitude(A, "A", options.check_finite));
  if (a.exponent % 2 != 0) {  // L of 2^(2k) A is 2^k L: an even power
    a.copy = scaling::normalized_copy<T>(A, a.exponent + 1);
    a.view = a.copy.view();
    a.exponent += 1;
  }
  Solution<T> s = cholesky_as_given<T>(a.view, options);
  note_scaling<T>(s.report, "A", a.exponent);
  scaling::scale_back(s.x, a.exponent / 2, "Cholesky factor");
  return s;
}

template class Cholesky<float>;
template class Cholesky<double>;
template Solution<float> cholesky<float>(ConstMatrixView<float>, const SolveOptions&);
template Solution<double> cholesky<double>(ConstMatrixView<double>, const SolveOptions&);
template class Cholesky<std::complex<float>>;
template class Cholesky<std::complex<double>>;
template Solution<std::complex<float>> cholesky<std::complex<float>>(ConstMatrixView<std::complex<float>>,
                                                                     const SolveOptions&);
template Solution<std::complex<double>> cholesky<std::complex<double>>(ConstMatrixView<std::complex<double>>,
                                                                       const SolveOptions&);

}  // namespace linv
