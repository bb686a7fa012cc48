// The randomized LU's pieces on the host (Pivoting::Randomized): the butterflies and the factorization
// without pivoting. The CUDA backend applies the same butterflies (src/cuda/kernels.cu) and factors with
// cuSOLVER's getrf without a pivot array.
#include <cmath>

#include "common/lapack.hpp"
#include "cpu/algorithms.hpp"

namespace linv::cpu {
namespace {

constexpr index kLeaf = 32;  // below this order, elimination column by column

template <Real T>
index unblocked(MatrixView<T> A) {
  const index n = A.rows();
  index zero = 0;
  for (index k = 0; k < n; ++k) {
    const T p = A(k, k);
    if (p == T(0)) {
      if (zero == 0) zero = k + 1;
      continue;  // as LAPACK's getf2: the column stays, the factorization goes on
    }
    const T inverse = T(1) / p;
    for (index i = k + 1; i < n; ++i) A(i, k) *= inverse;
    for (index j = k + 1; j < n; ++j) {
      const T u = A(k, j);
      for (index i = k + 1; i < n; ++i) A(i, j) -= A(i, k) * u;
    }
  }
  return zero;
}

// Toledo's recursion without the interchanges: the left half, then U12 and L21 by triangular solves, the
// Schur complement by one product, then the right half.
template <Real T>
index recursive(MatrixView<T> A) {
  const index n = A.rows();
  if (n <= kLeaf) return unblocked(A);
  const index n1 = n / 2, n2 = n - n1;
  const index zero = recursive(A.block(0, 0, n1, n1));
  const ConstMatrixView<T> a11 = A.block(0, 0, n1, n1);
  lapack::trsm<T>(Side::Left, Uplo::Lower, Op::None, Diag::Unit, T(1), a11, A.block(0, n1, n1, n2));
  lapack::trsm<T>(Side::Right, Uplo::Upper, Op::None, Diag::NonUnit, T(1), a11, A.block(n1, 0, n2, n1));
  lapack::gemm<T>(Op::None, Op::None, T(-1), A.block(n1, 0, n2, n1), A.block(0, n1, n1, n2), T(1),
                  A.block(n1, n1, n2, n2));
  const index right = recursive(A.block(n1, n1, n2, n2));
  return zero > 0 ? zero : right > 0 ? n1 + right : 0;
}

}  // namespace

template <Real T>
kernels::LuOutcome unpivoted_lu(MatrixView<T> A) {
  const double a_max = max_abs_entry(ConstMatrixView<T>(A), false);
  kernels::LuOutcome outcome;
  outcome.zero_pivot = recursive(A);
  const double u_max = max_abs_entry(ConstMatrixView<T>(A), true);
  outcome.growth = a_max > 0 ? u_max / a_max : 0.0;
  return outcome;
}

template <Real T>
void apply_butterflies(ConstMatrixView<T> r, Side side, Op op, MatrixView<T> X) {
  const bool left = side == Side::Left;
  const index n = left ? X.rows() : X.cols(), other = left ? X.cols() : X.rows();
  const int depth = static_cast<int>(r.cols());
  // op(W) X with W = B_0 ... B_{d-1}: W^T X and X W take the levels in order and mix the pair before
  // scaling it (the product with B^T from the left, with B from the right); W X and X W^T take them in
  // reverse and scale before mixing.
  const bool ascending = left == (op == Op::Transpose);
  auto at = [&](index k, index e) -> T& { return left ? X(k, e) : X(e, k); };
  const T half = static_cast<T>(M_SQRT1_2);
  for (int step = 0; step < depth; ++step) {
    const int level = ascending ? step : depth - 1 - step;
    const index blocks = index{1} << level;
    for (index b = 0; b < blocks; ++b) {
      const index start = b * n / blocks, end = (b + 1) * n / blocks, h = (end - start) / 2;
      for (index e = 0; e < other; ++e) {
        for (index i = start; i < start + h; ++i) {
          T& x = at(i, e);
          T& y = at(i + h, e);
          const T ri = r(i, level), rj = r(i + h, level);
          if (ascending) {
            const T s = x + y, d = x - y;
            x = ri * s * half;
            y = rj * d * half;
          } else {
            const T a = ri * x, c = rj * y;
            x = (a + c) * half;
            y = (a - c) * half;
          }
        }
        if ((end - start) % 2 != 0) at(end - 1, e) *= r(end - 1, level);
      }
    }
  }
}

#define LINV_INSTANTIATE(T)                                          \
  template kernels::LuOutcome unpivoted_lu<T>(MatrixView<T>);        \
  template void apply_butterflies<T>(ConstMatrixView<T>, Side, Op, MatrixView<T>);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
#undef LINV_INSTANTIATE

}  // namespace linv::cpu
