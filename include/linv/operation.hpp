// What linv computes (Operation), by which method (Method), why an iteration ended (StopReason), and
// where an operation is best run when the caller leaves that to linv (auto_device). Reports carry these
// as values; to_string gives the names the command line and JSON reports print.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "linv/device.hpp"
#include "linv/matrix.hpp"

namespace linv {

enum class Operation {
  Inverse,               // inv
  Solve,                 // solve
  LeastSquares,          // lstsq
  Pseudoinverse,         // pinv
  Cholesky,              // chol (the factor itself)
  BatchedInverse,        // batched::inv
  BatchedSolve,          // batched::solve
  WeightedLeastSquares,  // wls
  Deblur,                // imaging::deblur
  SlamStep,              // slam::pinv_apply (bordered) and slam::cgls_apply (sparse)
  SlamPseudoinverse,     // slam::pinv
  SparseCoding,          // fmri::batch_omp
  Ksvd,                  // fmri::ksvd
  Adl,                   // fmri::adl
  Parafac2,              // fmri::parafac2
};
std::string_view to_string(Operation op);  // "inv", "solve", "lstsq", "pinv", "chol", "wls", "deblur", ...

enum class Method {
  Auto,  // a request only: the method is chosen by structure and size, and the choice reported
  // What inv and solve take (SolveOptions::method):
  LU,            // LU with partial pivoting (LAPACK getrf, then getri / getrs)
  CALU,          // LU with tournament pivoting (communication-avoiding LU, Pivoting::Tournament)
  RBT,           // random butterfly transform, LU without pivoting, refinement (Pivoting::Randomized)
  Cholesky,      // Cholesky (potrf, then potri / potrs); fails on matrices that are not positive definite
  GaussJordan,   // blocked in-place Gauss-Jordan with partial pivoting
  CholeskyGETS,  // Cholesky, triangular inverse by Gaussian elimination on the triangle, L^-T L^-1
  GaussSeidel,   // Gauss-Seidel iteration (diagonally dominant or SPD matrices)
  Triangular,    // the matrix is triangular: triangular inverse / substitution
  // What the other operations run:
  QR,                  // least squares by complete orthogonal factorization (LAPACK gelsy); for inv and solve,
                       // Householder QR where elimination's result cannot be trusted (the accuracy promise)
  NormalEquations,     // least squares through A^T A (or A D^2 A^T) and Cholesky
  SVD,                 // pseudoinverse by singular value decomposition (gesdd)
  Spectral,            // deblurring's system made diagonal by the 2-D DFT or DCT: a direct solve
  ConjugateGradients,  // deblurring's regularised normal equations, H applied as a convolution
  ADMM,                // deblurring with total variation by the alternating direction method of multipliers
  BorderedSchur,       // a bordered Jacobian's arrowhead J^T J through its Schur complement
  CGLS,                // sparse least squares by conjugate gradients on the normal equations
  BatchedGaussJordan,  // many small inverses by Gauss-Jordan in registers (GPU)
  BatchedLU,           // many small matrices by LAPACK, one per thread (CPU)
  BatchOMP,            // orthogonal matching pursuit from D^T D and D^T X
  KSVD,                // k-SVD dictionary learning
  ADL,                 // atom-assisted dictionary learning by majorisation-minimisation
  PARAFAC2,            // PARAFAC2 by alternating least squares
};
// The methods inv and solve take.
inline constexpr Method kSolveMethods[] = {Method::Auto,        Method::LU,          Method::CALU,
                                           Method::RBT,         Method::Cholesky,    Method::GaussJordan,
                                           Method::CholeskyGETS, Method::GaussSeidel, Method::Triangular};
// "auto", "lu", "calu", "rbt", "cholesky", "gauss-jordan", "cholesky-gets", "gauss-seidel", "triangular", "qr",
// "normal-equations", "svd", "spectral", "cg", "bordered-schur", "cgls", "batched-gauss-jordan", "batched-lu",
// "batch-omp", "ksvd", "adl", "parafac2".
std::string_view to_string(Method m);
// The orders at which `auto` changes method for one dense matrix on an NVIDIA GPU, measured against
// torch.linalg on H100s (the CUDA backend's preferences, src/cuda/dense.cpp, take them from here, as do the
// help texts: describe_auto_method). On the CPU auto is LU (Cholesky, triangular: by structure) at every order.
struct GpuAutoOrders {
  index randomized_solve_from = 512;            // float64 solves: the randomized LU (rbt) over [from, to)
  index randomized_solve_to = 32769;
  index randomized_inverse_from_float64 = 256;  // inverses: rbt and a Newton step over [from, to)
  index randomized_inverse_from_float32 = 512;  // (float32: float64's, rounded)
  index randomized_inverse_to = 4097;
  index gauss_jordan_from_float64 = 16384;  // float64 inverses: blocked Gauss-Jordan from this order
};
inline constexpr GpuAutoOrders kGpuAutoOrders{};
// What auto picks, in words, from kGpuAutoOrders: the sentence the command line's --method help and the
// Python docstrings end with.
std::string describe_auto_method();

// The methods inv and solve take, by their names ("auto", "lu", "calu", "rbt", "cholesky", "gauss-jordan", "cholesky-gets",
// "gauss-seidel", "triangular"); throws InvalidArgument listing them otherwise.
Method parse_method(std::string_view name);

enum class StopReason {
  None,            // a direct method: nothing to stop
  Converged,       // the tolerance was met (the report's notes say which test)
  IterationLimit,  // max_iterations ran out first
  FellBack,        // mixed-precision refinement did not reach float64's accuracy: a float64 factorization ran
};
std::string_view to_string(StopReason s);  // "none", "converged", "iteration limit", "fell back to float64"

// Where to run an operation on data now in host memory when the caller leaves the choice to linv: the
// first GPU when one is usable, the operation (with this method) runs there, and `size` is large enough
// to repay the transfers and the GPU's start (matrix order for dense operations, pixels for deblurring,
// elements for batches, signals for the fMRI factorisations); the CPU otherwise.
Device auto_device(Operation op, index size, Method method = Method::Auto);

// What `device`'s backend does not run itself, as users name it ("lstsq", "pinv", "--method gauss-seidel"):
// on that device these are refused, naming the CPU, and auto_device keeps them on the CPU. Empty for the
// CPU. Asked of the backend (kernels::Dense::runs), for reports such as `linv info` and linv.info().
std::vector<std::string> cpu_only_on(Device device);

// The device a caller's --device (or device=) names: "cpu", "cuda", "cuda:N" as Device::parse reads them,
// or "auto", auto_device's choice. The command line, Python and MATLAB all read theirs here.
Device choose_device(std::string_view spec, Operation op, index size, Method method = Method::Auto);

}  // namespace linv
