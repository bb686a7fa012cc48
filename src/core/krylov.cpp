#include "core/krylov.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/backend.hpp"
#include "linv/errors.hpp"

namespace linv::krylov {

template <Real T>
Outcome cg(kernels::LinearOperator<T>& A, ConstMatrixView<T> b, MatrixView<T> x, double tolerance, int max_iterations,
           kernels::LinearOperator<T>* M, const std::function<void(int, double)>& progress) {
  const Device device = b.device();
  const kernels::Vectors<T>& v = kernels::vectors<T>(device);
  auto vector = [&] { return Matrix<T>::uninitialized(b.rows(), b.cols(), device); };
  Matrix<T> r = vector(), z = vector(), p = vector(), q = vector();
  A.apply(x, q.view());  // r := b - A x
  v.copy(b, r.view());
  v.axpy(T(-1), q.view(), r.view());
  const double bnorm = std::sqrt(v.dot(b, b));
  auto precondition = [&] {  // z := M^-1 r
    if (M != nullptr)
      M->apply(r.view(), z.view());
    else
      v.copy(r.view(), z.view());
  };
  precondition();
  v.copy(z.view(), p.view());
  double rz = v.dot(r.view(), z.view()), rr = v.dot(r.view(), r.view());
  Outcome out;
  for (; out.iterations < max_iterations && std::sqrt(rr) > tolerance * bnorm; ++out.iterations) {
    A.apply(p.view(), q.view());
    const double alpha = rz / v.dot(p.view(), q.view());
    v.axpy(static_cast<T>(alpha), p.view(), x);
    v.axpy(static_cast<T>(-alpha), q.view(), r.view());
    rr = v.dot(r.view(), r.view());
    if (!std::isfinite(rr))  // NaN would end the loop as if converged and hand the NaN on
      throw NumericalError(fmt::format("conjugate gradients: the residual became {} at iteration {} (the system "
                                       "or its preconditioner is not positive definite, or overflowed)",
                                       rr, out.iterations + 1));
    if (progress) progress(out.iterations + 1, bnorm > 0 ? std::sqrt(rr) / bnorm : 0.0);
    precondition();
    const double next = v.dot(r.view(), z.view());
    v.scal(static_cast<T>(next / rz), p.view());  // p := z + (next / rz) p
    v.axpy(T(1), z.view(), p.view());
    rz = next;
  }
  v.synchronize(device);
  out.residual = bnorm > 0 ? std::sqrt(rr) / bnorm : 0.0;
  out.converged = out.residual <= tolerance;
  return out;
}

template <Real T>
Outcome cgls(kernels::LinearOperator<T>& J, ConstMatrixView<T> d, MatrixView<T> X, double tolerance,
             int max_iterations) {
  const Device device = d.device();
  const kernels::Vectors<T>& v = kernels::vectors<T>(device);
  const index n = J.rows(), m = J.cols();
  Outcome out;
  for (index c = 0; c < d.cols(); ++c) {
    Matrix<T> x(m, 1, device), s = Matrix<T>::uninitialized(m, 1, device), p = Matrix<T>::uninitialized(m, 1, device);
    Matrix<T> r = Matrix<T>::uninitialized(n, 1, device), q = Matrix<T>::uninitialized(n, 1, device);
    v.copy(d.block(0, c, n, 1), r.view());
    J.apply_transpose(r.view(), s.view());
    v.copy(s.view(), p.view());
    const double s0 = std::sqrt(v.dot(s.view(), s.view()));
    double gamma = s0 * s0;
    int k = 0;
    for (; k < max_iterations && std::sqrt(gamma) > tolerance * s0; ++k) {
      J.apply(p.view(), q.view());
      const double alpha = gamma / v.dot(q.view(), q.view());
      v.axpy(static_cast<T>(alpha), p.view(), x.view());
      v.axpy(static_cast<T>(-alpha), q.view(), r.view());
      J.apply_transpose(r.view(), s.view());
      const double next = v.dot(s.view(), s.view());
      if (!std::isfinite(next))
        throw NumericalError(fmt::format("CGLS: the normal-equation residual became {} at iteration {} of column {} "
                                         "(overflow in J or d)",
                                         next, k + 1, c + 1));
      v.scal(static_cast<T>(next / gamma), p.view());  // p := s + (next / gamma) p
      v.axpy(T(1), s.view(), p.view());
      gamma = next;
    }
    v.copy(x.view(), X.block(0, c, m, 1));
    v.synchronize(device);  // before this column's vectors are freed
    const double relative = s0 > 0 ? std::sqrt(gamma) / s0 : 0.0;
    out.iterations = std::max(out.iterations, k);
    out.residual = std::max(out.residual, relative);
    out.converged = out.converged && relative <= tolerance;
  }
  return out;
}

template Outcome cg<double>(kernels::LinearOperator<double>&, ConstMatrixView<double>, MatrixView<double>, double, int,
                            kernels::LinearOperator<double>*, const std::function<void(int, double)>&);
template Outcome cgls<double>(kernels::LinearOperator<double>&, ConstMatrixView<double>, MatrixView<double>, double,
                              int);

}  // namespace linv::krylov
