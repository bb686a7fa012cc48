// The CPU backend's batched family (src/kernels/batched.hpp): an LU per matrix (linv's unblocked one up to
// order 32, LAPACK's above), matrices spread across threads, each matrix's rcond from the same pass. Real
// and complex matrices alike (complex pivots chosen by |re| + |im|, as LAPACK's getf2 chooses them).
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <utility>
#include <vector>

#include "common/lapack.hpp"
#include "common/parallel.hpp"
#include "cpu/backend.hpp"
#include "cpu/lu_rcond.hpp"

namespace linv::cpu {
namespace {

// Matrices per CPU thread below which one thread does the whole batch (thread start-up dominates).
constexpr index kMatricesPerThread = 256;

template <Scalar T>
void fill_nan(MatrixView<T> x) {
  for (index j = 0; j < x.cols(); ++j)
    for (index i = 0; i < x.rows(); ++i) x(i, j) = quiet_nan<T>();
}

// The size a pivot is chosen by: |a|, or |re| + |im| for complex a (LAPACK's i?amax).
template <Scalar T>
real_t<T> pivot_size(T a) {
  if constexpr (Complex<T>)
    return std::abs(a.real()) + std::abs(a.imag());
  else
    return std::abs(a);
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
template <Scalar T>
int small_lu(T* a, index n, int* pivots) {
  int info = 0;
  for (index k = 0; k < n; ++k) {
    T* col = a + k * n;
    index p = k;
    real_t<T> best = pivot_size(col[k]);
    for (index i = k + 1; i < n; ++i)
      if (pivot_size(col[i]) > best) best = pivot_size(col[i]), p = i;
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
template <Scalar T>
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

// The 1-norm (largest column sum) of the n x n column-major `a` (leading dimension lda), and the first
// column (1-based) whose sum is not finite (a NaN or an infinite entry), or 0.
struct Norm1 {
  double value = 0;
  index nonfinite = 0;
};

template <Scalar T>
Norm1 norm1(const T* a, index n, index lda) {
  Norm1 norm;
  for (index j = 0; j < n; ++j) {
    double column = 0;
    for (index i = 0; i < n; ++i) column += std::abs(static_cast<wide_t<T>>(a[i + j * lda]));
    if (!std::isfinite(column) && norm.nonfinite == 0) norm.nonfinite = j + 1;
    if (std::isnan(column) || column > norm.value) norm.value = column;
  }
  return norm;
}

// The 1-based position of the smallest |u_kk| of LU factors (the pivot a singular matrix is named by).
template <Scalar T>
index smallest_pivot(const Matrix<T>& lu) {
  index best = 0;
  for (index k = 1; k < lu.rows(); ++k)
    if (std::abs(lu(k, k)) < std::abs(lu(best, best))) best = k;
  return best + 1;
}

// Each matrix m of the batch A (n x n blocks side by side) is copied (as op(A(m)): its transpose for
// Op::Transpose, real T), has its 1-norm summed and is factored by LU with partial pivoting (small_lu up
// to kSmallOrder, LAPACK's getrf above). A factored one goes to finish(m, lu, ipiv, x, small, anorm, work),
// x its k columns of X and work 3n entries, which writes x and returns the matrix's rcond. A zero pivot or an rcond below the policy's threshold makes the
// matrix singular: it is recorded in `singular`, and its columns become NaN unless the policy keeps them.
// A matrix with a non-finite entry has no condition number (rcond NaN, named by that column) and is not
// factored: LAPACK refuses NaN. Matrices are spread across threads.
template <Scalar T, class Finish>
void factor_each(ConstMatrixView<T> A, MatrixView<T> X, index k, Op op, const kernels::BatchedPolicy& policy,
                 std::vector<batched::Singular>& singular, const Finish& finish) {
  const index n = A.rows(), count = A.cols() / std::max<index>(n, 1);
  const bool small = n <= kSmallOrder;
  // per matrix: 0 when regular, else the pivot it is named by; and its rcond
  std::vector<index> pivot(static_cast<std::size_t>(count), 0);
  std::vector<double> rcond(static_cast<std::size_t>(count), 0.0);
  detail::in_parallel(count, kMatricesPerThread, [&](index first, index last) {
    Matrix<T> lu(n, n);
    std::vector<int> ipiv(static_cast<std::size_t>(n));
    std::vector<T> work(static_cast<std::size_t>(3 * n));
    for (index m = first; m < last; ++m) {
      const T* a = A.data() + m * n * A.ld();
      MatrixView<T> x = X.block(0, m * k, n, k);
      for (index j = 0; j < n; ++j)  // op(A(k)), the matrix of the system (real T: Transpose is A^T)
        for (index i = 0; i < n; ++i) lu(i, j) = op == Op::None ? a[i + j * A.ld()] : a[j + i * A.ld()];
      const Norm1 anorm = norm1(lu.data(), n, n);
      if (anorm.nonfinite != 0) {
        pivot[static_cast<std::size_t>(m)] = anorm.nonfinite;
        rcond[static_cast<std::size_t>(m)] = std::numeric_limits<double>::quiet_NaN();
        fill_nan(x);
        continue;
      }
      const int info = small ? small_lu(lu.data(), n, ipiv.data()) : lapack::getrf<T>(lu.view(), ipiv.data());
      const double r = info == 0 ? finish(m, lu, ipiv, x, small, anorm.value, work.data()) : 0.0;
      if (info == 0 && r >= policy.threshold) continue;
      pivot[static_cast<std::size_t>(m)] = info != 0 ? info : smallest_pivot(lu);
      rcond[static_cast<std::size_t>(m)] = r;
      if (info != 0 || !policy.keeps(r)) fill_nan(x);
    }
  });
  for (index m = 0; m < count; ++m) {
    const auto i = static_cast<std::size_t>(m);
    if (pivot[i] != 0) singular.push_back({m, pivot[i], rcond[i], policy.keeps(rcond[i]), {}});
  }
}

template <Scalar T>
class Batched final : public kernels::Batched<T> {
 public:
  // LU per matrix, then its inverse: column by column of the identity, or LAPACK's getri above kSmallOrder.
  // The rcond is exact, from the inverse: 1 / (||A||_1 ||A^-1||_1).
  kernels::BatchedMethod invert(ConstMatrixView<T> A, MatrixView<T> X, const kernels::BatchedPolicy& policy,
                                std::vector<batched::Singular>& singular) const override {
    const index n = A.rows();
    factor_each(A, X, n, Op::None, policy, singular,
                [n](index, const Matrix<T>& lu, std::vector<int>& ipiv, MatrixView<T> x, bool small, double anorm,
                    T*) {
                  if (small) {
                    for (index j = 0; j < n; ++j)
                      for (index i = 0; i < n; ++i) x(i, j) = i == j ? T(1) : T(0);
                    small_lu_solve(lu.data(), n, ipiv.data(), x.data(), x.ld(), n);
                  } else {
                    for (index j = 0; j < n; ++j)
                      for (index i = 0; i < n; ++i) x(i, j) = lu(i, j);
                    lapack::getri<T>(x, ipiv.data());
                  }
                  return 1.0 / (anorm * norm1(x.data(), n, x.ld()).value);
                });
    if (n <= kSmallOrder)
      return {Method::BatchedLU,
              "LU with partial pivoting per matrix (as LAPACK's getf2), then the identity's columns"};
    return {Method::BatchedLU, "LAPACK getrf and getri per matrix"};
  }

  // LU and substitution per matrix (LAPACK's getrf + getrs above kSmallOrder). The rcond is LAPACK's
  // estimate from the factors (lu_rcond, gecon's algorithm, as for a single matrix) where a cheaper bound
  // does not already show the matrix regular: forming the inverse for the exact one would cost more than
  // the solve.
  kernels::BatchedMethod solve(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X, Op op,
                               const kernels::BatchedPolicy& policy,
                               std::vector<batched::Singular>& singular) const override {
    const index n = A.rows(), nrhs = B.cols() / std::max<index>(A.cols() / std::max<index>(n, 1), 1);
    factor_each(A, X, nrhs, op, policy, singular,
                [&](index m, const Matrix<T>& lu, std::vector<int>& ipiv, MatrixView<T> x, bool small, double anorm,
                    T* work) {
                  for (index j = 0; j < nrhs; ++j)
                    for (index i = 0; i < n; ++i) x(i, j) = B(i, m * nrhs + j);
                  if (small)
                    small_lu_solve(lu.data(), n, ipiv.data(), x.data(), x.ld(), nrhs);
                  else
                    lapack::getrs<T>(Op::None, lu.view(), ipiv.data(), x);
                  if constexpr (Complex<T>)
                    return lapack::gecon<T>(lu.view(), anorm);
                  else
                    return lu_rcond(lu.data(), n, anorm, policy.threshold, work);
                });
    if (n <= kSmallOrder)
      return {Method::BatchedLU,
              "LU with partial pivoting and substitution per matrix (as LAPACK's getf2 and getrs), rcond as "
              "LAPACK's gecon"};
    return {Method::BatchedLU, "LAPACK getrf and getrs per matrix, rcond as LAPACK's gecon"};
  }
};

}  // namespace

template <Scalar T>
const kernels::Batched<T>& batched() { return kernels::instance<Batched<T>>(); }
template const kernels::Batched<float>& batched<float>();
template const kernels::Batched<double>& batched<double>();
template const kernels::Batched<std::complex<float>>& batched<std::complex<float>>();
template const kernels::Batched<std::complex<double>>& batched<std::complex<double>>();

}  // namespace linv::cpu
