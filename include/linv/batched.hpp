// Many matrices at once: inversion of, and solves with, a batch of n x n matrices (any count; n up to 64
// by batched kernels, one matrix at a time above).
//
// Layout ("strided"): the batch is one Matrix of n rows and n * count columns, matrix k being the
// column block [k n, (k + 1) n), so each matrix is column-major and contiguous, n * n elements after
// the previous one: the layout of io::MatrixStack, so a B x n x n NumPy array read with io::read_stack
// is a batch as it stands.
//
// On the GPU each real matrix is inverted by Gauss-Jordan elimination with partial pivoting in registers
// (a group of n lanes of a warp per matrix for n <= 32, a block of 64 threads for n <= 64), and complex
// stacks by cuBLAS's batched LU and inverse (getrfBatched, getriBatched); on the CPU by LU with partial
// pivoting per matrix, across threads, real and complex alike.
//
// Every matrix gets the single-matrix conditioning policy (docs/design.md): a matrix is singular when
// it has an exactly zero pivot or its reciprocal condition number (1-norm) is below machine epsilon.
// A singular matrix does not stop the batch: the status names it with its pivot and rcond, its block of
// the result is NaN, and every other matrix is computed. Options::allow_ill_conditioned keeps the
// results of the matrices singular only to working precision (rcond > 0), still named.
#pragma once

#include <string>
#include <vector>

#include "linv/dense.hpp"
#include "linv/matrix.hpp"
#include "linv/report.hpp"

namespace linv::batched {

// The largest order the batched kernels take; larger matrices of a batch go one by one through linv::inv or
// linv::solve on the batch's device (the report's notes say so), with the same status.
inline constexpr index kMaxOrder = 64;

struct Options {
  // false (the default): a matrix singular to working precision is refused like an exactly singular one
  // (its block of the result NaN). true: its result is kept, and the status and a note still name it.
  // Matrices with an exactly zero pivot are refused either way.
  bool allow_ill_conditioned = false;
  // Solves of real matrices only: Op::Transpose solves A(k)^T X(k) = B(k), each A(k) read as it is stored. A
  // stack of row-major (C-ordered) matrices is, read column-major, the stack of their transposes: solving
  // with those transposes solves the stack's own systems without a transposed copy. Entries named in errors,
  // pivots and rcond are those of A(k)^T, the matrix of the system solved. (Complex matrices are refused:
  // for them linv's Op::Transpose is the conjugate transpose, which a row-major stack is not.)
  Op op = Op::None;
};

// A singular matrix of a batch.
struct Singular {
  index matrix = 0;  // its position in the batch, from 0
  // 1-based column: its first exactly zero pivot, or (rcond > 0, or an inverse that overflows: see `why`)
  // its smallest pivot
  index pivot = 0;
  // Below machine epsilon: for inverses (and GPU solves, which go through the inverse) exactly
  // 1 / (||A||_1 ||A^-1||_1), for CPU solves LAPACK's estimate (gecon's). 0 for an exactly zero pivot
  // (or one whose reciprocal overflows).
  double rcond = 0;
  bool kept = false;  // its block of the result holds the computed result (Options::allow_ill_conditioned)
  std::string why;    // where the batched kernel could not judge it: what the one-matrix path found
};

// Why `m` is singular, in words the front ends quote: "zero pivot in column 3", "rcond 2.1e-18 below
// machine epsilon, smallest pivot in column 7", or what the one-matrix path found (`why`).
std::string describe(const Singular& m);

// What happened to a batch.
struct Status {
  std::vector<Singular> singular;  // the singular matrices in batch order; empty when all are regular
  Report report;                   // the method (batched Gauss-Jordan or LU) and how it ran, device, seconds
};

template <Scalar T>
struct Result {
  Matrix<T> x;  // same shape and device as the input
  Status status;
};

// A NaN or Inf in A (or B) is NonFiniteInput naming the matrix and its entry. A matrix the batched kernels
// cannot judge (its column sums overflow, its entries lie near the ends of the range) is inverted or solved
// again alone by linv::inv or linv::solve, which scale it, and listed only if that too refuses it.
//
// Inverts each n x n matrix of A (n = A.rows(), A.cols() a multiple of n, A.ld() == n).
template <Scalar T>
Result<T> inv(ConstMatrixView<T> A, const Options& options = {});
// The same into X (A's shape, on A's device, contiguous, not overlapping A): no allocation, for loops
// that invert batch after batch.
template <Scalar T>
Status inv_into(ConstMatrixView<T> A, MatrixView<T> X, const Options& options = {});

// Solves op(A(k)) X(k) = B(k) (op: Options::op) for each matrix of A, B holding the right-hand sides the
// same way: n x (nrhs * count), B(k) its column block [k nrhs, (k + 1) nrhs). On the CPU by LU (getrf + getrs), backward stable;
// on the GPU as A(k)^-1 B(k) from the register elimination, whose forward error is that of a backward
// stable solve (about cond(A) eps) but whose residual can be cond(A) times larger.
template <Scalar T>
Result<T> solve(ConstMatrixView<T> A, ConstMatrixView<T> B, const Options& options = {});
template <Scalar T>
Status solve_into(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X, const Options& options = {});

}  // namespace linv::batched
