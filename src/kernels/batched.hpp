// The batched family: many small matrices at once (include/linv/batched.hpp: n <= 64, matrix k the column
// block [k n, (k + 1) n) of one n x (n count) view). Declared once here, implemented by each backend.
#pragma once

#include <string>
#include <vector>

#include "linv/matrix.hpp"
#include "linv/operation.hpp"

namespace linv::kernels {

// What ran: the method, and how (e.g. "8 lanes per matrix").
struct BatchedMethod {
  Method method = Method::Auto;
  std::string detail;
};

template <Real T>
class Batched {
 public:
  virtual ~Batched() = default;
  // X(k) := A(k)^-1 for every matrix of A (X: A's shape, not overlapping it). A singular matrix leaves its
  // block of X NaN and does not stop the others. pivot: empty when every matrix is regular, or one entry
  // per matrix, 0 or the 1-based column of its first exactly zero pivot.
  virtual BatchedMethod invert(ConstMatrixView<T> A, MatrixView<T> X, std::vector<index>& pivot) const = 0;
  // X(k) := A(k)^-1 B(k), B(k) the k-th block of B's columns (X: B's shape), with the same conventions.
  virtual BatchedMethod solve(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X,
                            std::vector<index>& pivot) const = 0;
};

}  // namespace linv::kernels
