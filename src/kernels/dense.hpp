// The dense kernel family, declared once and implemented by each backend (src/cpu/dense.cpp on LAPACK and
// the source documents' algorithms, src/cuda/dense.cpp on cuBLAS/cuSOLVER and linv's kernels). It works at
// the level the GPU needs, whole factorizations, solves and inverses (as MAGMA and cuSOLVER do), so that a
// backend may queue work on several streams and synchronise once per call. Every method takes views that
// live on the backend's device and returns once the result is complete; the policy around them (method
// choice, input checks, conditioning, reports) is src/core's.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "linv/dense.hpp"
#include "linv/matrix.hpp"

namespace linv::kernels {

// How a backend inverts fastest, for Method::Auto.
struct DensePreferences {
  // General inverses of this order and above by blocked Gauss-Jordan instead of LU.
  index gauss_jordan_from = std::numeric_limits<index>::max();
  // Triangular inverses (and the SPD inverse's L^-1): LAPACK's trtri, or elimination on the triangle.
  TriangularInverse triangles = TriangularInverse::Lapack;
  // Solves of order in [from, to) by the randomized LU (Method::RBT) instead of partial pivoting.
  index randomized_solve_from = std::numeric_limits<index>::max();
  index randomized_solve_to = 0;
  // General inverses of order in [from, to) by the randomized LU and Newton-Schulz steps: faster than
  // getrf's panels while the steps' n^3 products cost less than the pivot search they replace. float32's
  // own cannot be refined (eps times the growth), so a float32 inverse in this range is float64's, rounded,
  // on a device where float64 runs at float32's rate (Mixed::float64_is_as_fast), and LU elsewhere.
  index randomized_inverse_from = std::numeric_limits<index>::max();
  index randomized_inverse_to = 0;
};

// The random butterfly transform's depth (Pivoting::Randomized): two levels, as in MAGMA and SLATE.
inline constexpr int kButterflyDepth = 2;

// An LU factorization's result besides its factors.
struct LuOutcome {
  index zero_pivot = 0;  // LAPACK's info: the 1-based column of the first exactly zero pivot, 0 if none
  double growth = 0;     // max|U| / max|A| (0 for a zero matrix)
};

// The tournament's shape (Pivoting::Tournament), the same on every backend so that they pick the same
// pivots: panels of kPanel columns; leaves of kTile rows; kTile / kPanel candidate sets per later round;
// trailing updates every kBlock columns.
struct Tournament {
  static constexpr int kPanel = 32;
  static constexpr int kTile = 256;
  static constexpr index kBlock = 256;
};

// What the input checks and the scaling of extreme matrices need, in one pass: the first NaN or Inf (column
// by column), if any, and the largest magnitude among the finite entries (0 for an empty or zero matrix).
struct Magnitude {
  std::optional<std::pair<index, index>> first_non_finite;
  double max_abs = 0;
};

// Where Gauss-Seidel stopped, its tolerance met (src/cpu/gauss_seidel.cpp).
struct IterationOutcome {
  int iterations = 0;
  double backward_error = 0;
};

// The dense methods a backend may leave out (every other method each backend runs). One it lacks throws
// InvalidArgument naming the CPU as the way out; Dense::runs says beforehand which it has, so that
// auto_device asks the backend instead of keeping a list of its own.
enum class Optional { GaussSeidel, LeastSquares, Svd, LargestEigenpair, Orthonormalize };

// Complex T: "symmetric" reads Hermitian, Op::Transpose is the conjugate transpose, and syrk is herk (alpha
// and beta real). A backend's complex family may leave out the source documents' algorithms (Gauss-Jordan,
// Gauss-Seidel), the tournament, the butterflies and GETS, throwing InvalidArgument: src/core refuses explicit
// requests for them first, and the family's preferences() must then not prefer them (Method::Auto follows it).
template <Scalar T>
class Dense {
 public:
  virtual ~Dense() = default;
  virtual DensePreferences preferences() const = 0;
  virtual bool runs(Optional method) const = 0;

  // ---- inspection ----
  virtual double norm1(ConstMatrixView<T> A) const = 0;  // in float64
  virtual Magnitude magnitude(ConstMatrixView<T> A) const = 0;
  virtual Structure detect_structure(ConstMatrixView<T> A) const = 0;  // exact tests
  // The first (row, column) below the diagonal with |a(i,j) - a(j,i)| > n eps max|a|, if any.
  virtual std::optional<std::pair<index, index>> first_asymmetric(ConstMatrixView<T> A) const = 0;
  virtual std::vector<T> diagonal(ConstMatrixView<T> A) const = 0;  // in host memory

  // ---- element-wise ----
  virtual void zero_triangle(MatrixView<T> A, Uplo which) const = 0;  // the strict triangle
  virtual void set_diagonal(MatrixView<T> A, T value) const = 0;
  // A(i, j) := conj(A(j, i)) for i < j (complex T: and the diagonal made real, as a Hermitian matrix's is)
  virtual void mirror_lower(MatrixView<T> A) const = 0;

  // ---- products ----
  virtual void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta,
                    MatrixView<T> C) const = 0;
  virtual void syrk(Uplo uplo, Op op, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C) const = 0;
  // B := alpha op(A)^-1 B (left) or alpha B op(A)^-1 (right), A triangular.
  virtual void trsm(Side side, Uplo uplo, Op op, Diag diag, T alpha, ConstMatrixView<T> A, MatrixView<T> B) const = 0;

  // ---- LU with row pivoting (pivots 1-based, as LAPACK's ipiv, whichever the pivoting) ----
  // Pivoting::Randomized factors A as it is, without interchanges (the caller has applied the
  // butterflies): pivots come back as the identity, zero_pivot names the first exactly zero pivot. A is
  // square, except in the CPU family, whose getrf with partial pivoting takes m x n too (linv::plu).
  virtual LuOutcome lu_factor(MatrixView<T> A, std::vector<int>& pivots, Pivoting pivoting) const = 0;
  // B := op(A)^-1 B from the factors.
  virtual void lu_solve(ConstMatrixView<T> LU, const std::vector<int>& pivots, MatrixView<T> B, Op op) const = 0;
  virtual void lu_inverse(MatrixView<T> LU, const std::vector<int>& pivots) const = 0;  // in place
  // Reciprocal condition estimate in the 1-norm (LAPACK's estimator), given ||A||_1.
  virtual double lu_rcond(ConstMatrixView<T> LU, const std::vector<int>& pivots, double anorm) const = 0;

  // Random butterfly transforms (Pivoting::Randomized). W = B_0 B_1 ... B_{d-1} with d = r.cols(): level l
  // cuts 0..n-1 into 2^l consecutive blocks (block b starts at b n / 2^l, rounded down); in a block of m
  // entries, entry i < m/2 pairs with i + m/2 (m/2 rounded down) through [r_i r_j; r_i -r_j] / sqrt(2),
  // and the last entry of an odd block is scaled by its r. Column l of r holds level l's n factors.
  // X := op(W) X (Side::Left, X has n rows) or X op(W) (Side::Right, X has n columns).
  virtual void butterflies(ConstMatrixView<T> r, Side side, Op op, MatrixView<T> X) const = 0;

  // ---- Cholesky, lower factor ----
  virtual index cholesky_factor(MatrixView<T> A) const = 0;  // LAPACK's info: the failing minor
  virtual void cholesky_solve(ConstMatrixView<T> L, MatrixView<T> B) const = 0;
  // In place: the full symmetric inverse L^-T L^-1, with L^-1 as `how` says.
  virtual void cholesky_inverse(MatrixView<T> L, TriangularInverse how) const = 0;
  virtual double cholesky_rcond(ConstMatrixView<T> L, double anorm) const = 0;

  // ---- triangles (the caller has checked the diagonal) ----
  // In place on the `uplo` triangle; the other triangle is left as it is.
  virtual void triangular_inverse(MatrixView<T> A, Uplo uplo, TriangularInverse how, Diag diag) const = 0;
  virtual double triangular_rcond(ConstMatrixView<T> A, Uplo uplo, Diag diag) const = 0;

  // ---- the source documents' algorithms ----
  // In-place inverse by blocked Gauss-Jordan with partial pivoting. Throws SingularMatrix naming the
  // first exactly zero pivot; returns the 1-based index of the smallest pivot (0 when not tracked).
  virtual index gauss_jordan_inverse(MatrixView<T> A) const = 0;
  // Gauss-Seidel for A X = B from the guess in X, to a normwise backward error of `tolerance`; throws
  // NoConvergence at the iteration limit or when the iteration diverges.
  virtual IterationOutcome gauss_seidel(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X,
                                        double tolerance, int max_iterations) const = 0;

  // ---- Householder QR of a square matrix: the backward-stable solve whatever Gaussian elimination's growth ----
  // B := A^-1 B through A = Q R (A overwritten: R on and above the diagonal, the reflectors below). Returns
  // the 1-based column of the first exactly zero diagonal entry of R (B then left unsolved), else 0.
  virtual index qr_solve(MatrixView<T> A, MatrixView<T> B) const = 0;

  // ---- least squares and spectral decompositions ----
  // Minimum-norm least squares by complete orthogonal factorization (gelsy); A and B (max(m, n) rows)
  // overwritten, X in B's first n rows. Returns the numerical rank.
  virtual index least_squares(MatrixView<T> A, MatrixView<T> B, double rcond) const = 0;
  // Thin SVD A = U diag(s) VT (A destroyed); LAPACK's info (> 0: no convergence).
  virtual int svd(MatrixView<T> A, real_t<T>* s, MatrixView<T> U, MatrixView<T> VT) const = 0;
  // The largest eigenvalue of the symmetric A (lower triangle read, A destroyed) and its unit eigenvector
  // (host memory); LAPACK's info.
  virtual int largest_eigenpair(MatrixView<T> A, T& value, T* vector) const = 0;
  // A (m x n, m >= n) := the orthonormal factor of its QR factorization; LAPACK's info.
  virtual int orthonormalize(MatrixView<T> A) const = 0;
};

}  // namespace linv::kernels
