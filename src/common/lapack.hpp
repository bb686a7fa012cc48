// BLAS and LAPACK on host matrices (OpenBLAS + LAPACKE), with views for arguments: what the CPU backend is
// made of, and what any backend uses for the small matrices it keeps on the host (as MAGMA does). Return
// values are LAPACK `info` codes (0 = success, > 0 = 1-based failing index). The routines the dense core
// needs take complex matrices too (Scalar): Op::Transpose is then the conjugate transpose, the Cholesky
// routines are Hermitian, and syrk is herk (alpha and beta real).
#pragma once

#include "linv/dense.hpp"
#include "linv/matrix.hpp"

namespace linv::cpu::lapack {

// LAPACK and BLAS take 32-bit dimensions; this throws InvalidArgument for anything larger.
int blas_dim(index n, const char* what);

template <Scalar T>
void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta, MatrixView<T> C);
template <Scalar T>
void syrk(Uplo uplo, Op op, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C);
// B := alpha op(A)^-1 B (left) or alpha B op(A)^-1 (right), A triangular.
template <Scalar T>
void trsm(Side side, Uplo uplo, Op op, Diag diag, T alpha, ConstMatrixView<T> A, MatrixView<T> B);
// B := alpha op(A) B (left) or alpha B op(A) (right), A triangular.
template <Real T>
void trmm(Side side, Uplo uplo, Op op, Diag diag, T alpha, ConstMatrixView<T> A, MatrixView<T> B);
// A := A + alpha x y^T on a view (x: column of length rows, y: row of length cols with stride incy).
template <Real T>
void ger(T alpha, const T* x, const T* y, index incy, MatrixView<T> A);

template <Scalar T>
int getrf(MatrixView<T> A, int* ipiv);
template <Scalar T>
int getri(MatrixView<T> A, const int* ipiv);
template <Scalar T>
int getrs(Op op, ConstMatrixView<T> LU, const int* ipiv, MatrixView<T> B);
// Reciprocal condition number (1-norm) from LU factors and the 1-norm of the original matrix.
template <Scalar T>
double gecon(ConstMatrixView<T> LU, double anorm);

// X := A^-1 B by complex64 factors (LU, or Cholesky of A's lower triangle) refined against the complex128
// residual to LAPACK's test (zcgesv, zcposv); A and B are left as they are. Returns info (> 0: the complex128
// factorization LAPACK fell back to found U(i, i) = 0, or the minor i not positive definite); `iter` is
// LAPACK's ITER: the refinement steps, or < 0 where it fell back (-2 A overflows complex64, -3 the complex64
// factorization failed, -31 no convergence in 30 steps).
int mixed_solve(ConstMatrixView<std::complex<double>> A, ConstMatrixView<std::complex<double>> B,
                MatrixView<std::complex<double>> X, bool cholesky, int& iter);

template <Scalar T>
int potrf(Uplo uplo, MatrixView<T> A);
template <Scalar T>
int potrs(Uplo uplo, ConstMatrixView<T> L, MatrixView<T> B);
template <Scalar T>
int potri(Uplo uplo, MatrixView<T> A);
template <Scalar T>
double pocon(Uplo uplo, ConstMatrixView<T> L, double anorm);
// A := op(L) products of a triangle with its transpose: L^T L (Lower) or U U^T (Upper), in place.
template <Real T>
int lauum(Uplo uplo, MatrixView<T> A);

template <Scalar T>
int trtri(Uplo uplo, Diag diag, MatrixView<T> A);
template <Scalar T>
double trcon(Uplo uplo, Diag diag, ConstMatrixView<T> A);

// Minimum-norm least squares by complete orthogonal factorization; A and B overwritten. B must have
// max(m, n) rows. Returns the numerical rank.
template <Scalar T>
index gelsy(MatrixView<T> A, MatrixView<T> B, double rcond);
// B := A^-1 B for a square A by Householder QR (geqrf, ormqr, trsm); A overwritten by the factors. Returns the
// 1-based column of the first exactly zero diagonal entry of R (B then unsolved), else 0.
template <Scalar T>
index qr_solve(MatrixView<T> A, MatrixView<T> B);
// Replaces A (m x n, m >= n) by the orthonormal factor Q of its QR factorization (geqrf + orgqr).
template <Real T>
int orthonormalize(MatrixView<T> A);
// Thin SVD A = U diag(s) VT (divide and conquer); A destroyed. Returns info (> 0: no convergence).
template <Scalar T>
int gesdd(MatrixView<T> A, real_t<T>* s, MatrixView<T> U, MatrixView<T> VT);
// The largest eigenvalue of the symmetric A (lower triangle read; A destroyed) and its unit eigenvector
// (LAPACK syevr, only that one computed). Returns info.
template <Real T>
int largest_eigenpair(MatrixView<T> A, T& value, T* vector);

// Rectangular full packed (RFP) storage of a symmetric n x n matrix's lower triangle in n (n + 1) / 2
// entries (LAPACK's TRANSR = 'N', UPLO = 'L'). sfrk: C := alpha A A^T + beta C for A n x k; pftrf:
// Cholesky in place (LAPACK info); pftrs: B := C^-1 B with that factor.
template <Real T>
void sfrk(T alpha, ConstMatrixView<T> A, T beta, T* C);
template <Real T>
int pftrf(index n, T* C);
template <Real T>
int pftrs(index n, const T* C, MatrixView<T> B);

// W := S^(-1/2) for the symmetric positive semidefinite S (F x F) by its SVD, singular values below F eps
// s_1 left out (a pseudo-inverse root, as parafac2.m's psqrt); false when the SVD does not converge.
bool inverse_root(const Matrix<double>& S, MatrixView<double> W);

}  // namespace linv::cpu::lapack
