// The batched family: many small matrices at once (include/linv/batched.hpp: n <= 64, matrix k the column
// block [k n, (k + 1) n) of one n x (n count) view). Declared once here, implemented by each backend.
#pragma once

#include <string>
#include <vector>

#include "linv/batched.hpp"
#include "linv/matrix.hpp"
#include "linv/operation.hpp"

namespace linv::kernels {

// What ran: the method, and how (e.g. "8 lanes per matrix").
struct BatchedMethod {
  Method method = Method::Auto;
  std::string detail;
};

// The conditioning policy src/core asks for, applied to each matrix where its rcond is computed (in the
// same pass, so the batch is still read once): a matrix is singular when it has an exactly zero pivot or
// its rcond is not at least `threshold` (a NaN rcond, from an inverse that overflowed or non-finite
// input, included). A singular matrix's block of X is NaN, unless keep_ill_conditioned and its rcond is
// positive (singular to working precision only), when the computed result stays.
struct BatchedPolicy {
  double threshold = 0;
  bool keep_ill_conditioned = false;
  // Whether a singular matrix of this rcond keeps its computed result (batched::Singular::kept).
  bool keeps(double rcond) const { return keep_ill_conditioned && rcond > 0; }
};

template <Scalar T>
class Batched {
 public:
  virtual ~Batched() = default;
  // X(k) := A(k)^-1 for every matrix of A (X: A's shape, not overlapping it). A singular matrix does not stop
  // the others; `singular` receives each one in batch order, and stays empty when all are regular. The
  // rcond is exact, 1 / (||A||_1 ||A^-1||_1).
  virtual BatchedMethod invert(ConstMatrixView<T> A, MatrixView<T> X, const BatchedPolicy& policy,
                               std::vector<batched::Singular>& singular) const = 0;
  // X(k) := op(A(k))^-1 B(k), B(k) the k-th block of B's columns (X: B's shape), with the same conventions
  // for op(A(k)) (its pivots, its rcond); the rcond is exact where the backend forms the inverse, else
  // LAPACK's estimate from the LU factors. Op::Transpose comes for real T only (the core refuses it for
  // complex T).
  virtual BatchedMethod solve(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X, Op op,
                              const BatchedPolicy& policy, std::vector<batched::Singular>& singular) const = 0;
};

}  // namespace linv::kernels
