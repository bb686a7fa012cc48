// The weighted-least-squares family (include/linv/wls.hpp): forming C = A D^2 A^T, its Cholesky factor
// and solves, in full or rectangular full packed storage (LAPACK's RFP, TRANSR = 'N', UPLO = 'L').
// Declared once here, implemented by each backend; the algorithm around them is src/wls/wls.cpp's.
#pragma once

#include "linv/matrix.hpp"
#include "linv/wls.hpp"

namespace linv::kernels {

template <Real T>
class Wls {
 public:
  virtual ~Wls() = default;
  // C := (A diag(w)) (A diag(w))^T for A m x n and w (n x 1, float64), through `scaled` (m x n): the lower
  // triangle of C (m x m), or packed (m (m + 1) / 2 entries in C's data). Returns ||A diag(w)||_F^2.
  virtual double form(ConstMatrixView<T> A, ConstMatrixView<double> w, MatrixView<T> scaled, MatrixView<T> C,
                      Storage storage) const = 0;
  // Cholesky of that C in place: LAPACK's info (> 0: the failing leading minor).
  virtual index cholesky(MatrixView<T> C, index m, Storage storage) const = 0;
  // B := C^-1 B with the factor.
  virtual void solve(ConstMatrixView<T> C, index m, Storage storage, MatrixView<T> B) const = 0;
};

}  // namespace linv::kernels
