// Test matrices of the kinds the source documents exercised, from a seed, reproducibly.
#pragma once

#include <cstdint>
#include <string_view>

#include "linv/matrix.hpp"

namespace linv {

enum class MatrixKind {
  Random,    // entries uniform in [-1, 1]
  SPD,       // symmetric positive definite, condition number about `cond` (default 1e3)
  Band,      // diagonally dominant banded matrix (bandwidth 3 on each side)
  Hollow,    // zero diagonal, random elsewhere (pivoting is mandatory)
  Sparse,    // about 5% nonzeros plus a dominant diagonal
  Identity,
  IllCond,   // U diag(sigma) V^T with singular values spread geometrically to condition `cond` (1e12)
  Singular,  // rank n-1: one column is a combination of two others
};
std::string_view to_string(MatrixKind k);
MatrixKind parse_matrix_kind(std::string_view name);  // throws InvalidArgument listing the kinds

struct GenerateOptions {
  double cond = 0;  // SPD / IllCond target condition number (0: the kind's default)
  std::uint64_t seed = 0;
};

template <Real T>
Matrix<T> generate(MatrixKind kind, index n, const GenerateOptions& options = {});

// A rows x cols matrix with entries uniform in [lo, hi), made on `device`. Entry (i, j) depends only on
// the seed and its position (a counter-based generator), so a seed gives the same matrix on every device.
template <Real T>
Matrix<T> random_uniform(index rows, index cols, std::uint64_t seed, T lo = T(-1), T hi = T(1),
                         Device device = Device::cpu());

}  // namespace linv
