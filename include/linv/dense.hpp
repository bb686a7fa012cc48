// Dense inversion, solves, least squares and factorizations.
//
//   auto lu = linv::LU<double>(A);          // factor once
//   auto x = lu.solve(b);                   // reuse
//   auto [Ai, report] = linv::inv<double>(A, {.method = linv::Method::Auto});
//
// Operations run where their operands live (see Matrix::to); results come back on the same device.
// On a CUDA device everything here runs but lstsq, pinv and Gauss-Seidel, which refuse GPU operands in
// this version, saying so.
//
// Complex matrices (complex64, complex128) take the same calls on the CPU in this version, where
// "symmetric" reads Hermitian (A = A^H: Cholesky factors A = L L^H) and Op::Transpose is the conjugate
// transpose. Their methods are LU with partial pivoting, Cholesky, the triangular ones and Householder QR
// (Method::Auto picks among them as for real matrices); Gauss-Jordan, Gauss-Seidel, tournament and
// randomized pivoting and mixed precision are refused with InvalidArgument, saying so.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "linv/matrix.hpp"
#include "linv/report.hpp"

namespace linv {

enum class Precision {
  Native,  // compute in the matrix's own element type
  Mixed,   // float64 matrices only: factor in a lower precision, refine to float64 accuracy
};

// The factorization's precision under Precision::Mixed. Auto: float32 where the device factors float32
// faster than float64, otherwise float64 itself (GPUs with float64 at half float32's rate or better, such
// as the H100, where the LU's panels bound both precisions alike: refinement would only add time), by the
// method a native solve takes (the randomized LU for general matrices from order 512 on such a GPU); the
// report says which. Float32 everywhere; the others on a CUDA GPU only, as LU with float32 storage and
// tensor-core updates in that format (cuSOLVER's IRS solver). They converge only where their unit
// roundoff times cond(A) stays well below 1 (TF32 and Float16 keep 11 significant bits, BFloat16 8):
// otherwise refinement fails and the float64 fallback runs.
enum class FactorPrecision { Auto, Float32, TF32, BFloat16, Float16 };
std::string_view to_string(FactorPrecision p);
// Accepts "auto", "float32", "tf32", "bf16", "fp16"; throws InvalidArgument listing them otherwise.
FactorPrecision parse_factor_precision(std::string_view name);

enum class Uplo { Lower, Upper };
enum class Op { None, Transpose };  // Transpose: A^T, or the conjugate transpose A^H for complex T
enum class Diag { NonUnit, Unit };
enum class Side { Left, Right };  // a triangular factor applied from the left or the right

struct SolveOptions {
  Method method = Method::Auto;
  Precision precision = Precision::Native;
  FactorPrecision factor_precision = FactorPrecision::Auto;  // Mixed only
  // Gauss-Seidel: stop when the normwise backward error ||B - A X|| / (||A|| ||X|| + ||B||) (inf-norm)
  // falls below `tolerance` (0: max(n, 16) * eps), or fail with NoConvergence after max_iterations. A
  // tolerance outside [0, 1) (a backward error of 1 leaves no correct digit) or a max_iterations below 1 is
  // refused with InvalidArgument.
  double tolerance = 0;
  int max_iterations = 1000;
  bool compute_residual = false;  // fill report.scaled_residual (costs one more matrix product)
  bool check_finite = true;       // reject NaN / Inf input with NonFiniteInput
  // A matrix singular to working precision (rcond below machine epsilon, LAPACK's definition) is refused
  // with SingularMatrix, since no digit of the result is guaranteed; with this set the result comes
  // back, backward stable as always, with a note in the report. Exactly zero pivots are always refused.
  bool allow_ill_conditioned = false;
};

template <Scalar T>
struct Solution {
  Matrix<T> x;
  Report report;
};

// A^-1. Throws SingularMatrix (exactly singular, or rcond < eps unless allowed), NotPositiveDefinite
// (Cholesky methods), NoConvergence (Gauss-Seidel), InvalidArgument (not square).
template <Scalar T>
Solution<T> inv(ConstMatrixView<T> A, const SolveOptions& options = {});

// X with A X = B.
template <Scalar T>
Solution<T> solve(ConstMatrixView<T> A, ConstMatrixView<T> B, const SolveOptions& options = {});

// The Cholesky factor L (lower, zeros above) of a symmetric positive definite A = L L^T, with rcond in the
// report and, with options.compute_residual, ||A - L L^T|| / (n eps ||A||). Throws NotPositiveDefinite
// naming the failing leading minor, NumericalError when A is not symmetric (beyond n eps max|a|). Of the
// options only compute_residual and check_finite apply.
template <Scalar T>
Solution<T> cholesky(ConstMatrixView<T> A, const SolveOptions& options = {});

struct LstsqOptions {
  // Singular values below rcond * sigma_max count as zero; < 0 means max(m, n) * eps; NaN and infinity are
  // refused (InvalidArgument).
  double rcond = -1;
  // Mixed (float64 data, m >= n): the normal equations with a float32 Cholesky factor and float64
  // refinement when A is well conditioned enough (cond(A) up to about 300), QR otherwise, as the report says.
  Precision precision = Precision::Native;
  bool compute_residual = false;
  bool check_finite = true;
};

// Minimum-norm least-squares solution of A X ~ B by QR with column pivoting (LAPACK gelsy);
// report.rank is the numerical rank.
template <Scalar T>
Solution<T> lstsq(ConstMatrixView<T> A, ConstMatrixView<T> B, const LstsqOptions& options = {});

// Moore-Penrose pseudoinverse by SVD (LAPACK gesdd), singular values below the tolerance dropped.
template <Scalar T>
Solution<T> pinv(ConstMatrixView<T> A, const LstsqOptions& options = {});

// Inverse of a triangular matrix: LAPACK trtri, or Gaussian elimination on the triangle ("GETS",
// blocked Gauss-Jordan restricted to the triangle). Throws SingularMatrix naming a zero diagonal entry.
enum class TriangularInverse { Lapack, GETS };
template <Scalar T>
Matrix<T> tri_inv(ConstMatrixView<T> A, Uplo uplo, TriangularInverse how = TriangularInverse::Lapack,
                  Diag diag = Diag::NonUnit);

// C := alpha op(A) op(B) + beta C
template <Scalar T>
void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta, MatrixView<T> C);
// C := alpha op(A) op(A)^T + beta C, touching only the `uplo` triangle of C (half the flops of gemm).
template <Real T>
void syrk(Uplo uplo, Op op, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C);
// A(i, j) := conj(A(j, i)) above the diagonal: a full symmetric (Hermitian) matrix from its lower triangle.
template <Scalar T>
void symmetrize_from_lower(MatrixView<T> A);
// A B, a new matrix.
template <Scalar T>
Matrix<T> matmul(ConstMatrixView<T> A, ConstMatrixView<T> B);
// The n x n identity made on `device` (Matrix<T>::identity(n).to(device) fills and copies n^2 entries
// through host memory: 0.1 s at n = 4096 on a GPU).
template <Scalar T>
Matrix<T> identity(index n, Device device);

// det A = sign e^(i phase) e^log_abs. A real matrix's phase is 0; a complex one's sign is 1 (0 when singular)
// and its phase in (-pi, pi].
struct Determinant {
  int sign = 0;          // -1, 0 or +1
  double log_abs = 0;    // log |det|; -inf when singular
  double phase = 0;      // complex matrices: the argument of det A, in radians
  double value() const;  // sign * exp(log_abs), real matrices; may overflow to +-inf for large matrices
};

// How an LU factorization picks its pivot rows.
//  - Partial: LAPACK's partial pivoting (the largest entry of each column), one column at a time.
//  - Tournament: communication-avoiding LU (CALU; Grigori, Demmel and Xiang 2011). Each panel of 32
//    columns chooses its 32 pivot rows by a reduction tree: tiles of 256 rows are each factored by partial
//    pivoting and put forward their pivot rows, and groups of 8 such candidate sets play again until one
//    set is left; the panel is then factored with those rows on top and no further search. The tiles run
//    side by side, so the panel no longer serialises a GPU. Its growth factor is bounded less tightly
//    than partial pivoting's (2^(n (log2(tile rows) + 1)) against 2^(n-1), both far from what is seen), so
//    LU measures the growth of every tournament factorization and falls back to partial pivoting past
//    kTournamentGrowthLimit.
//  - Randomized: no row interchanges at all. A is first multiplied by random butterfly matrices on both
//    sides, A_r = U^T A V (Parker 1995; Baboulin, Dongarra et al., "Accelerating linear system solutions
//    using randomization techniques", ACM TOMS 2013), which makes every leading minor of A_r nonsingular
//    with probability 1, and A_r is factored without pivoting: the panel has no search, so a GPU runs the
//    factorization at the rate of its matrix products (6x cuSOLVER's partial pivoting at n = 4096 on an
//    H100). Its growth is larger than partial pivoting's (1e4-1e5 on random matrices of order 4096), so
//    solve() and inverse() refine against A in working precision until the backward error is partial
//    pivoting's (inverse() solves against the identity: the growth bounds neither U's nor L's error, and
//    without refinement an inverse's residual was measured up to 114 times the bound), and say when they
//    cannot; inv() and solve() then fall back to partial pivoting. The butterflies come from a fixed
//    seed: the same A gives the same factors on every run and device. The factors and pivots (the
//    identity) are A_r's; LU keeps a copy of A (n^2 more elements) for the refinement.
enum class Pivoting { Partial, Tournament, Randomized };
std::string_view to_string(Pivoting p);  // "partial", "tournament", "randomized"

// The growth factor max|U| / max|A| past which an LU's factors are not trusted: a tournament-pivoted
// factorization is redone with partial pivoting, and inv and solve take a partial-pivoting factorization
// that grew past it to Householder QR (Gaussian elimination's backward error bound is n growth eps, and
// condition estimates from such factors mean nothing). n^(2/3) is typical for partial pivoting on random
// matrices (Trefethen and Schreiber 1990) and the same was measured for CALU; this allows each factor of
// 10 in growth to cost a digit that the residual check then sees, and the redo costs one more
// factorization.
double lu_growth_limit(index n);

// LU factorization with row pivoting, P A = L U, on the device A lives on (partial pivoting unless asked
// otherwise). Factoring never fails on a finite square matrix: a singular matrix has determinant 0, and
// solve/inverse then throw SingularMatrix. Otherwise, as LAPACK's routines, solve/inverse return whatever
// the conditioning: judge it with rcond() (inv and solve refuse rcond < eps). Not thread-safe: rcond()
// caches its value.
template <Scalar T>
class LU {
 public:
  // check_finite: refuse NaN / Inf in A with NonFiniteInput (a pass over A; off where the caller checked).
  explicit LU(ConstMatrixView<T> A, Pivoting pivoting = Pivoting::Partial, bool check_finite = true);

  // The pivoting that made the factors: Partial when a tournament's growth or a zero pivot sent it back
  // (a randomized factorization goes back on a zero pivot only).
  Pivoting pivoting() const noexcept { return pivoting_; }
  // Why a tournament or randomized factorization fell back to partial pivoting; empty when it did not.
  const std::string& fallback_reason() const noexcept { return fallback_; }
  // max|U| / max|A| of the factors kept.
  double growth() const noexcept { return growth_; }

  index size() const noexcept { return factors_.rows(); }
  bool is_singular() const noexcept { return zero_pivot_ > 0; }
  // 1-based index of the first exactly zero pivot, 0 when there is none.
  index zero_pivot() const noexcept { return zero_pivot_; }
  // Reciprocal condition number in the 1-norm: LAPACK's estimate, computed on first use, or the exact
  // value once inverse() has run.
  double rcond() const;
  Determinant determinant() const;
  // A^-1 B. A randomized factorization refines against A (at most kMaxRefinementSteps steps, until the
  // normwise backward error stops halving) and throws NumericalError when it stays above n eps, the
  // backward error partial pivoting reaches; refinement_steps() says how many steps the last solve took.
  Matrix<T> solve(ConstMatrixView<T> B) const;
  int refinement_steps() const noexcept { return refinement_steps_; }
  // A^-1. From a randomized factorization: the factors' inverse refined by Newton-Schulz steps against A
  // (2n^3 flops each, usually one; refinement_steps() says how many), throwing NumericalError when they
  // cannot reach partial pivoting's accuracy.
  Matrix<T> inverse() const;
  static constexpr int kMaxRefinementSteps = 5;
  // L (unit, below) and U (on and above) of 2^-scale_exponent() A: a matrix whose entries lie far from 1 is
  // scaled by a power of two (exactly) before it is factored, so that its condition estimate neither over-
  // nor underflows (src/core/scaling.hpp); solve, inverse, rcond and determinant are A's.
  const Matrix<T>& factors() const noexcept { return factors_; }
  int scale_exponent() const noexcept { return exponent_; }
  const std::vector<int>& pivots() const noexcept { return pivots_; }  // LAPACK ipiv, 1-based

 private:
  // op(A)^-1 B through the factors, the butterflies applied where the pivoting is Randomized.
  Matrix<T> apply_inverse(ConstMatrixView<T> B, Op op) const;
  Matrix<T> refined_randomized_inverse() const;

  Matrix<T> factors_;
  std::vector<int> pivots_;
  Matrix<T> butterflies_;  // Randomized: n x 2d, U's levels then V's (kernels::Dense::butterflies)
  Matrix<T> original_;     // Randomized: A, for the refinement
  mutable int refinement_steps_ = 0;
  index zero_pivot_ = 0;
  double anorm_ = 0;  // of the scaled A
  int exponent_ = 0;
  Pivoting pivoting_ = Pivoting::Partial;
  std::string fallback_;
  double growth_ = 0;
  mutable double rcond_ = -1;  // < 0: not computed yet
};

// LAPACK's getrf of an m x n matrix, square or not: P A = L U with L m x min(m, n) (unit, below the diagonal)
// and U min(m, n) x n (on and above it) in one matrix, and the 1-based row interchanges (min(m, n) of them):
// what scipy.linalg.lu_factor and MATLAB's lu give. An exactly zero pivot is not an error here (zero_pivot
// names the first); solve with plu_solve. Any m x n on the CPU, square on a CUDA device (the factors stay
// there; InvalidArgument for a rectangular one); NonFiniteInput for NaN or Inf in A.
template <Scalar T>
struct PluFactors {
  Matrix<T> lu;
  std::vector<int> pivots;
  index zero_pivot = 0;
};
template <Scalar T>
PluFactors<T> plu(ConstMatrixView<T> A);

// X with op(A) X = B from plu's factors of a square A (lu and B on one device; pivots 1-based, as LAPACK's
// and torch's). Op::Transpose is the conjugate transpose for complex T. An exactly zero pivot on U's
// diagonal is SingularMatrix naming it (LAPACK's getrs would return Inf or NaN); pivots out of range and
// shapes that do not fit are InvalidArgument, NaN or Inf in B NonFiniteInput.
template <Scalar T>
Matrix<T> plu_solve(ConstMatrixView<T> lu, const std::vector<int>& pivots, ConstMatrixView<T> B, Op op = Op::None);

// Cholesky factorization A = L L^T of a symmetric positive definite matrix (only the lower triangle
// of A is read), on the device A lives on. Throws NotPositiveDefinite naming the failing leading minor.
template <Scalar T>
class Cholesky {
 public:
  explicit Cholesky(ConstMatrixView<T> A);

  index size() const noexcept { return factor_.rows(); }
  double rcond() const;  // as LU::rcond
  Determinant determinant() const;
  Matrix<T> solve(ConstMatrixView<T> B) const;
  // A^-1 = L^-T L^-1, with L^-1 from LAPACK (potri) or by Gaussian elimination on the triangle.
  Matrix<T> inverse(TriangularInverse how = TriangularInverse::Lapack) const;
  Matrix<T> L() const;  // the lower factor with zeros above the diagonal
  // Raw LAPACK storage (lower) of the factor of 2^-scale_exponent() A, as LU's factors(); the exponent is
  // even, so L() is 2^(scale_exponent() / 2) times it.
  const Matrix<T>& factor() const noexcept { return factor_; }
  int scale_exponent() const noexcept { return exponent_; }

 private:
  Matrix<T> factor_;
  double anorm_ = 0;  // of the scaled A
  int exponent_ = 0;
  mutable double rcond_ = -1;
};

// What Method::Auto would see in A (exact tests, O(n^2)).
enum class Structure { General, Symmetric, Lower, Upper, Diagonal };
template <Scalar T>
Structure detect_structure(ConstMatrixView<T> A);

// Throws NonFiniteInput naming the first NaN/Inf entry of `A` (called `name` in the message).
template <Scalar T>
void require_finite(ConstMatrixView<T> A, const char* name);

// Throws NumericalError naming the first pair a(i,j) != a(j,i) beyond rounding (n eps max|a|): methods
// that read one triangle (Cholesky) would otherwise silently work on another matrix. `what` names the
// method in the message.
template <Scalar T>
void require_symmetric(ConstMatrixView<T> A, const char* what);

}  // namespace linv
