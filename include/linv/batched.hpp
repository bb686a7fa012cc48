// Many small matrices at once: inversion of, and solves with, a batch of n x n matrices (n up to 64,
// any count).
//
// Layout ("strided"): the batch is one Matrix of n rows and n * count columns, matrix k being the
// column block [k n, (k + 1) n), so each matrix is column-major and contiguous, n * n elements after
// the previous one: the layout of io::MatrixStack, so a B x n x n NumPy array read with io::read_stack
// is a batch as it stands.
//
// On the GPU each matrix is inverted by Gauss-Jordan elimination with partial pivoting in registers
// (a group of n lanes of a warp per matrix for n <= 32, a block of 64 threads for n <= 64); on the CPU
// by LAPACK (getrf + getri) per matrix, across threads. A singular matrix does not stop the batch: its
// status names the pivot, its block of the result is NaN, and every other matrix is inverted.
#pragma once

#include <string>
#include <vector>

#include "linv/matrix.hpp"
#include "linv/report.hpp"

namespace linv::batched {

// The largest order inverted in one batch.
inline constexpr index kMaxOrder = 64;

// What happened to a batch.
struct Status {
  index singular = 0;        // how many matrices have an exactly zero pivot (their blocks of X are NaN)
  std::vector<index> pivot;  // when singular > 0: per matrix, 0 or the 1-based column of its first zero
                             // pivot; empty when every matrix was regular (saves a read-back per call)
  Report report;             // the method (batched Gauss-Jordan or LU) and how it ran, device, seconds
};

template <Real T>
struct Result {
  Matrix<T> x;  // same shape and device as the input
  Status status;
};

// Inverts each n x n matrix of A (n = A.rows() <= kMaxOrder, A.cols() a multiple of n, A.ld() == n).
template <Real T>
Result<T> inv(ConstMatrixView<T> A);
// The same into X (A's shape, on A's device, contiguous, not overlapping A): no allocation, for loops
// that invert batch after batch.
template <Real T>
Status inv_into(ConstMatrixView<T> A, MatrixView<T> X);

// Solves A(k) X(k) = B(k) for each matrix of A, B holding the right-hand sides the same way: n x (nrhs *
// count), B(k) its column block [k nrhs, (k + 1) nrhs). On the CPU by LU (getrf + getrs), backward stable;
// on the GPU as A(k)^-1 B(k) from the register elimination, whose forward error is that of a backward
// stable solve (about cond(A) eps) but whose residual can be cond(A) times larger.
template <Real T>
Result<T> solve(ConstMatrixView<T> A, ConstMatrixView<T> B);
template <Real T>
Status solve_into(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X);

}  // namespace linv::batched
