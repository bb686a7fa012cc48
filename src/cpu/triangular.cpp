// Triangular inverse by Gaussian elimination on the triangle ("GETS", the source documents' name).
//
// Gauss-Jordan without pivoting on a lower triangular matrix never fills the upper triangle, so one
// block step with diagonal block L11 (rows above are zero) is just
//     L21 := -L21 L11^-1,   L20 += L21_new L10,   L10 := L11^-1 L10,   L11 := L11^-1,
// n^3/3 flops in all, the bulk in the matrix product. The diagonal block is eliminated element-wise.
#include <cmath>
#include <string>

#include "common/lapack.hpp"
#include "cpu/algorithms.hpp"
#include "linv/errors.hpp"

namespace linv::cpu {
namespace {

namespace k = lapack;

constexpr index kBlock = 128;

// Element-wise Gauss-Jordan on the lower triangle of a diagonal block (the off-diagonal blocks are the
// caller's, with products). `offset` turns block indices into matrix indices for messages.
template <Real T>
void eliminate_triangle(MatrixView<T> L, Diag diag, index offset) {
  const index b = L.rows();
  for (index j = 0; j < b; ++j) {
    const T d = diag == Diag::Unit ? T(1) : L(j, j);
    if (d == T(0)) throw SingularMatrix(offset + j + 1, 0.0, "zero on the diagonal of the triangular matrix");
    const T inv = T(1) / d;
    for (index l = 0; l < j; ++l) L(j, l) *= inv;
    if (diag == Diag::NonUnit) L(j, j) = inv;
    for (index i = j + 1; i < b; ++i) {
      const T f = L(i, j);
      for (index l = 0; l < j; ++l) L(i, l) -= f * L(j, l);
      L(i, j) = -f * inv;
    }
  }
}

}  // namespace

template <Real T>
void gets_lower_inverse(MatrixView<T> L, Diag diag) {
  const index n = L.rows();
  for (index k0 = 0; k0 < n; k0 += kBlock) {
    const index b = std::min(kBlock, n - k0);
    const index below = n - k0 - b;
    auto L10 = L.block(k0, 0, b, k0);
    auto L11 = L.block(k0, k0, b, b);
    auto L20 = L.block(k0 + b, 0, below, k0);
    auto L21 = L.block(k0 + b, k0, below, b);
    eliminate_triangle(L11, diag, k0);  // L11 := L11^-1
    // L21 := -L21 L11^-1 (L11 now holds its inverse), then the trailing rows and the block row.
    k::trmm<T>(Side::Right, Uplo::Lower, Op::None, diag, T(-1), L11, L21);
    if (k0 > 0) {
      k::gemm<T>(Op::None, Op::None, T(1), L21, L10, T(1), L20);
      k::trmm<T>(Side::Left, Uplo::Lower, Op::None, diag, T(1), L11, L10);
    }
  }
}

template void gets_lower_inverse<float>(MatrixView<float>, Diag);
template void gets_lower_inverse<double>(MatrixView<double>, Diag);

}  // namespace linv::cpu
