// The complex matrices the complex tests draw (tests/cpu/test_complex.cpp, tests/cuda/test_complex_gpu.cpp).
#pragma once

#include <complex>
#include <random>

#include "linv/dense.hpp"
#include "linv/matrix.hpp"

namespace linv::testing {

// Entries with both parts uniform in [-1, 1), times `scale`.
template <Complex T>
Matrix<T> random_complex(index m, index n, std::mt19937_64& g, double scale = 1) {
  std::uniform_real_distribution<double> u(-1, 1);
  Matrix<T> a(m, n);
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < m; ++i) a(i, j) = T(static_cast<real_t<T>>(scale * u(g)), static_cast<real_t<T>>(scale * u(g)));
  return a;
}

// B B^H + n I: Hermitian positive definite, well conditioned, exactly Hermitian (one triangle mirrored, a
// real diagonal: the product's two triangles may round apart).
template <Complex T>
Matrix<T> hermitian_positive_definite(index n, std::mt19937_64& g) {
  const Matrix<T> b = random_complex<T>(n, n, g);
  Matrix<T> a(n, n);
  gemm<T>(Op::None, Op::Transpose, T(1), b.view(), b.view(), T(0), a.view());
  for (index j = 0; j < n; ++j) {
    a(j, j) = T(a(j, j).real() + static_cast<real_t<T>>(n), 0);
    for (index i = 0; i < j; ++i) a(i, j) = std::conj(a(j, i));
  }
  return a;
}

// A diagonally dominant triangle (off-diagonal entries random_complex's / n, 3 added to the diagonal), well
// conditioned at every n: a random triangle's condition grows exponentially with n (adding 2 to the diagonal
// alone left complex64 triangles singular to working precision at n = 100 in some draws).
template <Complex T>
Matrix<T> dominant_triangle(index n, Uplo uplo, std::mt19937_64& g) {
  Matrix<T> a = random_complex<T>(n, n, g);
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < n; ++i) {
      if ((uplo == Uplo::Lower && i < j) || (uplo == Uplo::Upper && i > j))
        a(i, j) = T(0);
      else if (i != j)
        a(i, j) /= static_cast<real_t<T>>(n);
      else
        a(j, j) += T(static_cast<real_t<T>>(3));
    }
  return a;
}

}  // namespace linv::testing
