// The CPU backend's batched family (src/kernels/batched.hpp): an LU per matrix (linv's unblocked one up to
// order 32, LAPACK's above), matrices spread across threads.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/parallel.hpp"
#include "cpu/backend.hpp"
#include "cpu/lapack.hpp"

namespace linv::cpu {
namespace {

// Matrices per CPU thread below which one thread does the whole batch (thread start-up dominates).
constexpr index kMatricesPerThread = 256;

template <Real T>
void fill_nan(MatrixView<T> x) {
  for (index j = 0; j < x.cols(); ++j)
    for (index i = 0; i < x.rows(); ++i) x(i, j) = std::numeric_limits<T>::quiet_NaN();
}

// Up to this order a matrix of a batch goes through small_lu below, above it through LAPACK. OpenBLAS's
// getrf + getri per small matrix serialise the threads on its buffer pool; on 16 threads (bench/results/
// cpu/batched-16-threads*.json) LAPACK took 2.78 s for 1048576 inverses of order 4, 0.28 s for 100000 of
// order 8 and 0.22 s for 65536 of order 32, small_lu 0.024, 0.010 and 0.14 s; at order 64 LAPACK's blocked
// code wins (0.13 against 0.22 s).
constexpr index kSmallOrder = 32;

// LU with partial pivoting of the n x n column-major `a` (leading dimension n) in place, as LAPACK's
// unblocked getf2: the first largest |a(i, k)| pivots, multipliers by the pivot's reciprocal, and a zero
// pivot recorded (1-based, the first) without stopping.
template <Real T>
int small_lu(T* a, index n, int* pivots) {
  int info = 0;
  for (index k = 0; k < n; ++k) {
    T* col = a + k * n;
    index p = k;
    T best = std::abs(col[k]);
    for (index i = k + 1; i < n; ++i)
      if (std::abs(col[i]) > best) best = std::abs(col[i]), p = i;
    pivots[k] = static_cast<int>(p);
    if (col[p] == T(0)) {
      if (info == 0) info = static_cast<int>(k + 1);
      continue;
    }
    if (p != k)
      for (index j = 0; j < n; ++j) std::swap(a[k + j * n], a[p + j * n]);
    const T reciprocal = T(1) / col[k];
    for (index i = k + 1; i < n; ++i) col[i] *= reciprocal;
    for (index j = k + 1; j < n; ++j) {
      T* cj = a + j * n;
      const T u = cj[k];
      if (u == T(0)) continue;
      for (index i = k + 1; i < n; ++i) cj[i] -= col[i] * u;
    }
  }
  return info;
}

// x := A^-1 x for the factors of small_lu (x: n x k, leading dimension ldx): the interchanges, then L
// (unit diagonal) and U by substitution, column by column of x.
template <Real T>
void small_lu_solve(const T* lu, index n, const int* pivots, T* x, index ldx, index k) {
  for (index c = 0; c < k; ++c) {
    T* b = x + c * ldx;
    for (index i = 0; i < n; ++i)
      if (pivots[i] != i) std::swap(b[i], b[pivots[i]]);
    for (index j = 0; j < n; ++j) {
      const T bj = b[j];
      if (bj == T(0)) continue;
      const T* l = lu + j * n;
      for (index i = j + 1; i < n; ++i) b[i] -= l[i] * bj;
    }
    for (index j = n - 1; j >= 0; --j) {
      const T* u = lu + j * n;
      b[j] /= u[j];
      const T bj = b[j];
      for (index i = 0; i < j; ++i) b[i] -= u[i] * bj;
    }
  }
}

// Each matrix m of the batch A (n x n blocks side by side) factored in a work copy by LU with partial
// pivoting (small_lu up to kSmallOrder, LAPACK's getrf above), its first zero pivot recorded in pivot[m]
// (0: regular); a regular one goes to finish(m, lu, ipiv, x, small) with x its k columns of X, a singular
// one's columns become NaN. Matrices are spread across threads.
template <Real T, class Finish>
void factor_each(ConstMatrixView<T> A, MatrixView<T> X, index k, std::vector<index>& pivot, const Finish& finish) {
  const index n = A.rows(), count = A.cols() / std::max<index>(n, 1);
  const bool small = n <= kSmallOrder;
  pivot.assign(static_cast<std::size_t>(count), 0);
  detail::in_parallel(count, kMatricesPerThread, [&](index first, index last) {
    Matrix<T> lu(n, n);
    std::vector<int> ipiv(static_cast<std::size_t>(n));
    for (index m = first; m < last; ++m) {
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < n; ++i) lu(i, j) = A(i, m * n + j);
      const int info = small ? small_lu(lu.data(), n, ipiv.data()) : lapack::getrf<T>(lu.view(), ipiv.data());
      pivot[static_cast<std::size_t>(m)] = info;
      MatrixView<T> x = X.block(0, m * k, n, k);
      if (info != 0)
        fill_nan(x);
      else
        finish(m, lu, ipiv, x, small);
    }
  });
}

template <Real T>
class Batched final : public kernels::Batched<T> {
 public:
  // LU per matrix, then its inverse: column by column of the identity, or LAPACK's getri above kSmallOrder.
  kernels::BatchedMethod invert(ConstMatrixView<T> A, MatrixView<T> X, std::vector<index>& pivot) const override {
    const index n = A.rows();
    factor_each(A, X, n, pivot, [n](index, const Matrix<T>& lu, std::vector<int>& ipiv, MatrixView<T> x,
                                    bool small) {
      if (small) {
        for (index j = 0; j < n; ++j)
          for (index i = 0; i < n; ++i) x(i, j) = i == j ? T(1) : T(0);
        small_lu_solve(lu.data(), n, ipiv.data(), x.data(), x.ld(), n);
      } else {
        for (index j = 0; j < n; ++j)
          for (index i = 0; i < n; ++i) x(i, j) = lu(i, j);
        lapack::getri<T>(x, ipiv.data());
      }
    });
    if (n <= kSmallOrder)
      return {Method::BatchedLU,
              "LU with partial pivoting per matrix (as LAPACK's getf2), then the identity's columns"};
    return {Method::BatchedLU, "LAPACK getrf and getri per matrix"};
  }

  // LU and substitution per matrix (LAPACK's getrf + getrs above kSmallOrder).
  kernels::BatchedMethod solve(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X,
                               std::vector<index>& pivot) const override {
    const index n = A.rows(), nrhs = B.cols() / std::max<index>(A.cols() / std::max<index>(n, 1), 1);
    factor_each(A, X, nrhs, pivot, [&](index m, const Matrix<T>& lu, std::vector<int>& ipiv, MatrixView<T> x,
                                       bool small) {
      for (index j = 0; j < nrhs; ++j)
        for (index i = 0; i < n; ++i) x(i, j) = B(i, m * nrhs + j);
      if (small)
        small_lu_solve(lu.data(), n, ipiv.data(), x.data(), x.ld(), nrhs);
      else
        lapack::getrs<T>(Op::None, lu.view(), ipiv.data(), x);
    });
    if (n <= kSmallOrder)
      return {Method::BatchedLU,
              "LU with partial pivoting and substitution per matrix (as LAPACK's getf2 and getrs)"};
    return {Method::BatchedLU, "LAPACK getrf and getrs per matrix"};
  }
};

}  // namespace

template <Real T>
const kernels::Batched<T>& batched() { return kernels::instance<Batched<T>>(); }
template const kernels::Batched<float>& batched<float>();
template const kernels::Batched<double>& batched<double>();

}  // namespace linv::cpu
