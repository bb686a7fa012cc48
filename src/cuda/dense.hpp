// The dense routines of the CUDA backend, at the level linv's core dispatches to: whole
// factorizations, solves and inverses rather than one LAPACK call per step, because look-ahead and a
// single synchronisation per API call do not fit a call-per-step interface. Plain C++ declarations
// (no CUDA headers), implemented in dense.cpp / gauss_jordan.cpp on cuBLAS, cuSOLVER and kernels.cu.
// Every function takes device views and returns once the result is complete.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/fmri.hpp"
#include "linv/dense.hpp"
#include "linv/fmri.hpp"
#include "linv/matrix.hpp"

namespace linv::cuda {

// ---- inspection ----
template <Real T>
double norm1(ConstMatrixView<T> A);
template <Real T>
void require_finite(ConstMatrixView<T> A, const char* name);
template <Real T>
Structure detect_structure(ConstMatrixView<T> A);
template <Real T>
std::vector<T> diagonal(ConstMatrixView<T> A);

// ---- element-wise ----
// Zeroes the strict upper (which == Upper) or strict lower triangle.
template <Real T>
void zero_triangle(MatrixView<T> A, Uplo which);
template <Real T>
void set_diagonal(MatrixView<T> A, T value);
template <Real T>
void mirror_lower(MatrixView<T> A);

// ---- products ----
template <Real T>
void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta, MatrixView<T> C);
template <Real T>
void syrk(Uplo uplo, Op op, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C);

// ---- LU (pivots 1-based, as LAPACK's) ----
template <Real T>
index lu_factor(MatrixView<T> A, std::vector<int>& pivots);  // returns LAPACK's info
template <Real T>
void lu_solve(ConstMatrixView<T> LU, const std::vector<int>& pivots, MatrixView<T> B);
// In place, 2n^3 flops in all with the factorization: U^-1, then X L = U^-1, then the column interchanges.
template <Real T>
void lu_inverse(MatrixView<T> LU, const std::vector<int>& pivots);
// Reciprocal condition estimate (1-norm, LAPACK's estimator driving GPU solves).
template <Real T>
double lu_rcond(ConstMatrixView<T> LU, const std::vector<int>& pivots, double anorm);

// ---- Cholesky (lower) ----
template <Real T>
index cholesky_factor(MatrixView<T> A);  // returns LAPACK's info
template <Real T>
void cholesky_solve(ConstMatrixView<T> L, MatrixView<T> B);
// In place: the full symmetric inverse from the factor.
template <Real T>
void cholesky_inverse(MatrixView<T> L, TriangularInverse how);
template <Real T>
double cholesky_rcond(ConstMatrixView<T> L, double anorm);

// ---- triangles ----
// In place on the `uplo` triangle; the other triangle is left as it is. The caller has checked the diagonal.
template <Real T>
void triangular_inverse(MatrixView<T> A, Uplo uplo, TriangularInverse how, Diag diag);
template <Real T>
void triangular_solve(ConstMatrixView<T> A, Uplo uplo, Diag diag, MatrixView<T> B);
template <Real T>
double triangular_rcond(ConstMatrixView<T> A, Uplo uplo, Diag diag);

// ---- Gauss-Jordan ----
// In-place inverse by blocked Gauss-Jordan with partial pivoting and look-ahead. Returns 0, or the
// 1-based index of the first exactly zero pivot (the contents of A are then unspecified).
template <Real T>
index gauss_jordan_inverse(MatrixView<T> A, index block = 0);

// ---- mixed precision (src/cuda/mixed.cpp) ----
struct MixedOutcome {
  int iterations = 0;         // refinement steps
  double backward_error = 0;  // max over columns of ||b - A x||_inf / (||A||_inf ||x||_inf) at the stop
  std::string failure;        // why refinement did not reach float64's backward error (empty: it did)
};
// Solves A X = B by a lower-precision factorization refined against the float64 residual: LU through
// cuSOLVER's IRS solver (factor in `low`; GMRES-IR for one right-hand side, plain refinement for
// several), Cholesky in float32 with plain refinement (LAPACK dsposv's). A is left untouched; on failure
// the caller solves in float64.
MixedOutcome mixed_solve(ConstMatrixView<double> A, ConstMatrixView<double> B, MatrixView<double> X, bool cholesky,
                         FactorPrecision low);

// ---- weighted least squares (src/cuda/wls.cpp) ----
// C := (A diag(w)) (A diag(w))^T for A m x n and w (n doubles on A's device), through `scaled` (m x n,
// leading dimension m): the lower triangle of C (m x m), or packed, LAPACK's rectangular full packed
// format (TRANSR = 'N', UPLO = 'L', m (m + 1) / 2 entries in C's data). Returns ||A diag(w)||_F^2.
template <Real T>
double wls_form(ConstMatrixView<T> A, const double* w, MatrixView<T> scaled, MatrixView<T> C, bool packed);
// Cholesky of that C in place: LAPACK's info (> 0: the failing leading minor).
template <Real T>
index wls_cholesky(MatrixView<T> C, index m, bool packed);
// B := C^-1 B with the factor.
template <Real T>
void wls_cholesky_solve(ConstMatrixView<T> C, index m, bool packed, MatrixView<T> B);
// Element-wise steps of refinement loops: X(i, j) *= d[i] (d on X's device); dst := float(src);
// x += double(d) (d contiguous); the 2-norm of a vector.
template <Real T>
void scale_rows(const double* d, MatrixView<T> X);
void round_to_float(ConstMatrixView<double> src, MatrixView<float> dst);
void add_to(ConstMatrixView<float> d, MatrixView<double> x);
double norm2(ConstMatrixView<double> x);

// ---- imaging (src/cuda/imaging.cu) ----
// H^T H + lambda I for height x width images and a PSF kernel (host), formed on `device`.
Matrix<double> normal_matrix(index height, index width, const Matrix<double>& kernel, double lambda, Device device);
// Conjugate gradients on (H^T H + lambda I) f = H^T g from f = 0, H applied by cuFFT on the zero-padded
// image, until ||r|| <= tolerance ||H^T g|| or max_iterations; g in host memory, f returned there.
Matrix<double> deblur_matrix_free(ConstMatrixView<double> g, const Matrix<double>& kernel, double lambda,
                                  int max_iterations, double tolerance, Device device, int& iterations);

// ---- bordered SLAM Jacobians (src/cuda/slam.cu) ----
constexpr std::int64_t kSlamMaxDense = 32;  // dense columns the GPU kernels handle (the Schur complement's order)
// J's arrays on the device: n x k dense columns, one segment value per row, segment j owning rows
// [starts[j], starts[j + 1]), and each row's segment.
template <Real T>
struct BorderedView {
  const T* dense;
  std::int64_t ld;
  const T* values;
  const std::int64_t* starts;
  const std::int64_t* segment_of;
  std::int64_t n, k, segments;
};
struct SlamOutcome {
  std::int64_t unobservable_segment = -1;  // 0-based segment whose normal entry is zero, or -1
  int failing_dense = 0;                   // 1-based dense parameter where S is not positive definite, or 0
};
// x = (J^T J + damping diag)^-1 J^T d per column of d (n x c, on the device); x m x c.
template <Real T>
SlamOutcome slam_step(const BorderedView<T>& J, ConstMatrixView<T> d, double damping, MatrixView<T> x);
// P = J^+ (m x n).
template <Real T>
SlamOutcome slam_pinv(const BorderedView<T>& J, double damping, MatrixView<T> P);

// CGLS for x = argmin ||J x - d||_2 per column of d (n x c, on the device) with J in compressed rows
// (host arrays, uploaded per call), by cuSPARSE products; stops as linv::slam::cgls_apply does.
template <Real T>
struct CsrView {
  std::int64_t rows, cols;
  const std::int64_t* row_start;  // rows + 1
  const std::int64_t* column;
  const T* value;
};
struct CglsResult {
  int iterations = 0;
  double residual = 0;
  bool converged = false;
};
template <Real T>
CglsResult cgls(const CsrView<T>& J, ConstMatrixView<T> d, double tolerance, int max_iterations, MatrixView<T> X);

// ---- fMRI (src/cuda/fmri.cpp, kernels in src/cuda/fmri.cu) ----
// Batch-OMP of X's columns over D's atoms (both on the GPU) with options.gpu_kernel; the codes come back
// to the host.
template <Real T>
fmri::SparseCodes<T> batch_omp(ConstMatrixView<T> D, ConstMatrixView<T> X, const fmri::OmpOptions& options);
// k-SVD of X (on the GPU) from the unit-norm initial dictionary D0 (host), drawing the atom orders from
// rng as the CPU does; the dictionary is returned on X's device, the codes on the host.
template <Real T>
fmri::KsvdResult<T> ksvd(ConstMatrixView<T> X, const fmri::KsvdOptions& options, const Matrix<T>& D0,
                         std::mt19937_64& rng);

// ADL's passes on the GPU (src/cuda/adl.cpp): X on a GPU; D0 (T x K) and the task (T x M) in host
// memory, copied to X's device.
template <Real T>
std::unique_ptr<linv::kernels::AdlSteps<T>> adl_steps(ConstMatrixView<T> X, Matrix<T> D0, ConstMatrixView<T> task,
                                                linv::kernels::AdlConstraints constraints);

// PARAFAC2's passes on the GPU (src/cuda/parafac2.cpp): every slab on the same GPU.
template <Real T>
std::unique_ptr<linv::kernels::Parafac2Steps<T>> parafac2_steps(const std::vector<ConstMatrixView<T>>& slabs);

// ---- accuracy (computed on the GPU in float64) ----
template <Real T>
double scaled_residual_inverse(ConstMatrixView<T> A, ConstMatrixView<T> X, double eps);
template <Real T>
double scaled_residual_solve(ConstMatrixView<T> A, ConstMatrixView<T> X, ConstMatrixView<T> B, double eps);

// ---- test and benchmark inputs ----
template <Real T>
void fill_uniform(MatrixView<T> A, std::uint64_t seed, T lo, T hi);

}  // namespace linv::cuda
