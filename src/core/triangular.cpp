// tri_inv: the inverse of a triangular matrix, its conditioning judged from LAPACK's estimate before any
// inversion work.
#include "linv/dense.hpp"

#include "core/dense_steps.hpp"

namespace linv {

using namespace dense_steps;

template <Scalar T>
Matrix<T> tri_inv(ConstMatrixView<T> A, Uplo uplo, TriangularInverse how, Diag diag) {
  require_square(A, "tri_inv");
  require_finite(A, "A");
  index smallest = 0;
  const double rcond = triangle_rcond(A, uplo, diag, smallest);
  apply_conditioning_policy(rcond, eps<T>(), smallest, /*allow=*/false, nullptr, "triangular inverse");
  return invert_triangle(A, uplo, how, diag);
}

template Matrix<float> tri_inv<float>(ConstMatrixView<float>, Uplo, TriangularInverse, Diag);
template Matrix<double> tri_inv<double>(ConstMatrixView<double>, Uplo, TriangularInverse, Diag);
template Matrix<std::complex<float>> tri_inv<std::complex<float>>(ConstMatrixView<std::complex<float>>, Uplo,
                                                                  TriangularInverse, Diag);
template Matrix<std::complex<double>> tri_inv<std::complex<double>>(ConstMatrixView<std::complex<double>>, Uplo,
                                                                    TriangularInverse, Diag);

}  // namespace linv
