// Krylov iterations, written once for every backend over its linear operators and vector family
// (src/kernels/vectors.hpp): conjugate gradients for symmetric positive definite systems (deblurring's
// regularised normal equations) and CGLS for least squares without forming J^T J (sparse SLAM steps).
#pragma once

#include <functional>

#include "kernels/vectors.hpp"
#include "linv/matrix.hpp"

namespace linv::krylov {

struct Outcome {
  int iterations = 0;   // the most any column took
  double residual = 0;  // the largest final relative residual
  bool converged = true;
};

// x := A^-1 b by conjugate gradients from the x given (b's shape, contiguous, on b's device), until
// ||b - A x||_2 <= tolerance ||b||_2 or max_iterations; preconditioned when M is given (M.apply(r, z):
// z := M^-1 r, symmetric positive definite). `progress`, when given, hears each iteration's number and
// relative residual.
template <Real T>
Outcome cg(kernels::LinearOperator<T>& A, ConstMatrixView<T> b, MatrixView<T> x, double tolerance, int max_iterations,
           kernels::LinearOperator<T>* M = nullptr, const std::function<void(int, double)>& progress = {});

// X(:, c) := argmin ||J x - d(:, c)||_2 by CGLS from x = 0 for each column of d (n x k; X: m x k, on d's
// device), until ||J^T (d - J x)|| <= tolerance ||J^T d|| or max_iterations.
template <Real T>
Outcome cgls(kernels::LinearOperator<T>& J, ConstMatrixView<T> d, MatrixView<T> X, double tolerance,
             int max_iterations);

}  // namespace linv::krylov
