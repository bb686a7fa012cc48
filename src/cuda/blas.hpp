// Typed, checked wrappers over the cuBLAS 64-bit-index API and cuSOLVER's data types, so algorithm
// code reads like its CPU counterpart. Each call runs on the handle's stream.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <type_traits>

#include "cuda/context.hpp"
#include "linv/dense.hpp"
#include "linv/matrix.hpp"

namespace linv::cuda::blas {

// The single- or double-precision routine of a cuBLAS/cuSOLVER pair, for T.
template <class T, class F, class D>
constexpr auto pick(F single, D twin) {
  if constexpr (std::is_same_v<T, float>)
    return single;
  else
    return twin;
}

template <class T>
constexpr cudaDataType data_type() {
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
}
inline cublasOperation_t op(Op o) { return o == Op::None ? CUBLAS_OP_N : CUBLAS_OP_T; }
inline cublasFillMode_t fill(Uplo u) { return u == Uplo::Lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }
inline cublasDiagType_t diag(Diag d) { return d == Diag::Unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT; }
inline cublasSideMode_t side(Side s) { return s == Side::Left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT; }

// C := alpha op(A) op(B) + beta C on raw pointers (m x n result, inner dimension k).
template <class T>
void gemm(cublasHandle_t h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* A,
          std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  check(pick<T>(cublasSgemm_64, cublasDgemm_64)(h, op(ta), op(tb), m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc),
        "gemm");
}

// C_i := alpha op(A_i) op(B_i) + beta C_i for i < count, X_i = X + i * stride_x (a stride of 0 shares one
// matrix among all).
template <class T>
void gemm_strided_batched(cublasHandle_t h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                          const T* A, std::int64_t lda, std::int64_t stride_a, const T* B, std::int64_t ldb,
                          std::int64_t stride_b, T beta, T* C, std::int64_t ldc, std::int64_t stride_c,
                          std::int64_t count) {
  if (m == 0 || n == 0 || count == 0) return;
  check(pick<T>(cublasSgemmStridedBatched_64, cublasDgemmStridedBatched_64)(
            h, op(ta), op(tb), m, n, k, &alpha, A, lda, stride_a, B, ldb, stride_b, &beta, C, ldc, stride_c, count),
        "batched gemm");
}

// B := alpha op(A)^-1 B (left) or alpha B op(A)^-1 (right); B is m x n.
template <class T>
void trsm(cublasHandle_t h, Side s, Uplo u, Op o, Diag d, std::int64_t m, std::int64_t n, T alpha, const T* A,
          std::int64_t lda, T* B, std::int64_t ldb) {
  if (m == 0 || n == 0) return;
  check(pick<T>(cublasStrsm_64, cublasDtrsm_64)(h, side(s), fill(u), op(o), diag(d), m, n, &alpha, A, lda, B, ldb),
        "trsm");
}

// B_i := alpha op(A_i)^-1 B_i (left) or alpha B_i op(A_i)^-1 (right) for i < count; A and B are device
// arrays of `count` pointers, each B_i m x n.
template <class T>
void trsm_batched(cublasHandle_t h, Side s, Uplo u, Op o, Diag d, std::int64_t m, std::int64_t n, T alpha,
                  const T* const* A, std::int64_t lda, T* const* B, std::int64_t ldb, std::int64_t count) {
  if (m == 0 || n == 0 || count == 0) return;
  check(pick<T>(cublasStrsmBatched_64, cublasDtrsmBatched_64)(h, side(s), fill(u), op(o), diag(d), m, n, &alpha, A,
                                                              lda, B, ldb, count),
        "batched trsm");
}

// B := alpha op(A) B (left) or alpha B op(A) (right), in place (cuBLAS allows C == B).
template <class T>
void trmm(cublasHandle_t h, Side s, Uplo u, Op o, Diag d, std::int64_t m, std::int64_t n, T alpha, const T* A,
          std::int64_t lda, T* B, std::int64_t ldb) {
  if (m == 0 || n == 0) return;
  check(pick<T>(cublasStrmm_64, cublasDtrmm_64)(h, side(s), fill(u), op(o), diag(d), m, n, &alpha, A, lda, B, ldb, B,
                                                ldb),
        "trmm");
}

// C := alpha op(A) op(A)^T + beta C on the `u` triangle (n x n, inner dimension k).
template <class T>
void syrk(cublasHandle_t h, Uplo u, Op o, std::int64_t n, std::int64_t k, T alpha, const T* A, std::int64_t lda, T beta,
          T* C, std::int64_t ldc) {
  if (n == 0) return;
  check(pick<T>(cublasSsyrk_64, cublasDsyrk_64)(h, fill(u), op(o), n, k, &alpha, A, lda, &beta, C, ldc), "syrk");
}

// y := alpha op(A) x + beta y (A m x n; x with stride incx).
template <class T>
void gemv(cublasHandle_t h, Op o, std::int64_t m, std::int64_t n, T alpha, const T* A, std::int64_t lda, const T* x,
          std::int64_t incx, T beta, T* y, std::int64_t incy) {
  if (m == 0 || n == 0) return;
  check(pick<T>(cublasSgemv_64, cublasDgemv_64)(h, op(o), m, n, &alpha, A, lda, x, incx, &beta, y, incy), "gemv");
}

}  // namespace linv::cuda::blas
