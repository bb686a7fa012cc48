// linv's element-wise kernels for complex matrices (complex.cu), the ones the complex dense and vector
// families need beside cuBLAS and cuSOLVER: the real kernels (kernels.hpp) read an entry as one number,
// these as two parts. Plain C++ declarations over std::complex<R> (float or double parts), which the kernels
// read as pairs of parts; each launch queues on `stream` and returns.
#pragma once

#include <cuda_runtime.h>

#include <complex>
#include <cstdint>

#include "cuda/kernels.hpp"

namespace linv::cuda::complex_launch {

// *result := max over columns of sum |a_ij| over `part` (the 1-norm, in double); *result starts at +0.0. A
// NaN anywhere makes it NaN.
template <class R>
void norm1(const std::complex<R>* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* result,
           cudaStream_t stream, launch::Part part = {});
// out[m] := the 1-norm (in double; NaN where a column sum is) of matrix m of a batch of `count` n x n
// matrices stored one after another, n <= 64.
template <class R>
void batched_norm1(const std::complex<R>* A, std::int64_t n, std::int64_t count, double* out, cudaStream_t stream);
// *result := max(*result, max |a_ij|) over the matrix, or its upper triangle (the growth of LU's U); *result
// starts at +0.0.
template <class R>
void max_modulus(const std::complex<R>* A, std::int64_t n, std::int64_t ld, bool upper, double* result,
                 cudaStream_t stream);
// out[0] := min(out[0], j rows + i) over entries with a part not finite; out[1] := the bits of the largest
// larger part |re| or |im| among the finite entries (out starts {~0, bits of +0.0}).
template <class R>
void magnitude(const std::complex<R>* A, std::int64_t rows, std::int64_t cols, std::int64_t ld,
               unsigned long long* out, cudaStream_t stream);
// flags (starting {1, 1, 1}) cleared where A is not lower triangular, not upper triangular, not Hermitian
// (a diagonal entry with an imaginary part, or a(i, j) != conj(a(j, i))).
template <class R>
void structure_flags(const std::complex<R>* A, std::int64_t n, std::int64_t ld, int* flags, cudaStream_t stream);
// *out := min(*out, j n + i) over the entries on and below the diagonal with |a(i, j) - conj(a(j, i))| > tol
// (*out starts at ~0: none).
template <class R>
void first_asymmetric(const std::complex<R>* A, std::int64_t n, std::int64_t ld, double tol, unsigned long long* out,
                      cudaStream_t stream);
template <class R>
void zero_triangle(std::complex<R>* A, std::int64_t n, std::int64_t ld, bool upper, cudaStream_t stream);
template <class R>
void set_diagonal(std::complex<R>* A, std::int64_t n, std::int64_t ld, std::complex<R> value, cudaStream_t stream);
// A := the identity (n x n).
template <class R>
void fill_identity(std::complex<R>* A, std::int64_t n, std::int64_t ld, cudaStream_t stream);
// The strict upper triangle := the conjugate of the lower one's mirror, and the diagonal's imaginary parts
// := 0 (a Hermitian matrix's diagonal is real; what is left there is rounding).
template <class R>
void mirror_lower(std::complex<R>* A, std::int64_t n, std::int64_t ld, cudaStream_t stream);
// X(i, j) *= d[i].
template <class R>
void scale_rows(std::complex<R>* X, std::int64_t rows, std::int64_t cols, std::int64_t ld, const double* d,
                cudaStream_t stream);
// dst := src in complex128.
template <class R>
void widen(const std::complex<R>* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::complex<double>* dst,
           std::int64_t ld_dst, cudaStream_t stream);
// out[j] := sum_i |x_ij|^2, in double.
template <class R>
void column_norms_squared(const std::complex<R>* X, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* out,
                          cudaStream_t stream);
// Entry (i, j)'s parts uniform in [lo, hi) part by part, from the counters 2k and 2k + 1 (k = j rows + i):
// the CPU family's matrix.
template <class R>
void fill_uniform(std::complex<R>* A, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed,
                  std::complex<R> lo, std::complex<R> hi, cudaStream_t stream);

}  // namespace linv::cuda::complex_launch
