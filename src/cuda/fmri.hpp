// The GPU kernels of Batch-OMP and k-SVD (src/cuda/fmri.cu), driven by src/cuda/fmri.cpp. Each launches
// on `stream` and returns at once. Matrices are column-major: X is T x N (ldx), D is T x K (ldd), the
// codes Gamma are K x N dense (leading dimension K), and OMP's slots are T0 per signal (atom, value).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "linv/fmri.hpp"

namespace linv::cuda::fmri_kernels {

using fmri::OmpGpuKernel;

constexpr int kThreadMaxAtoms = 16, kThreadMaxSparsity = 8;

// Per signal j: Batch-OMP from G (K x K) and DtX (K x N, ld K); writes count[j], atoms/values (T0
// slots, zeros past the count) and err[j] = ||x_j||^2 - gamma^T (D^T x_j) on the support (norms[j] = ||x_j||^2), the squared
// residual of the least-squares fit. Stops at T0 atoms or once the residual is <= tolerance (> 0). norms
// may be null without a tolerance, and err null when not wanted.
// scratch: omp_scratch_bytes (the warp kernel's per-warp state; none for the thread kernel).
std::size_t omp_scratch_bytes(OmpGpuKernel kernel, std::int64_t K, int T0, std::int64_t N);
template <class T>
void batch_omp(OmpGpuKernel kernel, const T* G, std::int64_t K, const T* DtX, const double* norms, double tolerance,
               int T0, std::int64_t N, std::int64_t* count, std::int64_t* atoms, T* values, double* err, void* scratch,
               cudaStream_t stream);
// Whether the thread kernel handles K atoms and sparsity T0.
bool thread_kernel_fits(std::int64_t K, int T0);

// norms[j] = ||x_j||^2 in float64.
template <class T>
void column_norms(const T* X, std::int64_t T_, std::int64_t N, std::int64_t ldx, double* norms, cudaStream_t stream);

// Gamma (K x N) from OMP's slots. With keep (not null), a signal whose err_prev is below err keeps its
// column of Gamma (the previous codes) and err := err_prev; otherwise the column is replaced.
template <class T>
void scatter_codes(const std::int64_t* count, const std::int64_t* atoms, const T* values, int T0, std::int64_t K, std::int64_t N,
                   const double* err_prev, double* err, T* Gamma, cudaStream_t stream);
// users[a] := the number of signals with a nonzero coefficient for atom a (above `threshold` in
// magnitude), users zeroed first.
template <class T>
void count_users(const T* Gamma, std::int64_t K, std::int64_t N, T threshold, int* users, cudaStream_t stream);
// err[j] = ||x_j - D gamma_j||^2 = ||x_j||^2 - 2 gamma_j^T (D^T x_j) + gamma_j^T G gamma_j, in float64.
template <class T>
void code_errors(const T* G, const T* DtX, const T* Gamma, const double* norms, std::int64_t K, std::int64_t N,
                 double* err, cudaStream_t stream);

// The approximate update of atom j, one block: from t = X g and c = Gamma g (g = Gamma(j, :)),
// a = t - sum_{i != j} d_i c_i, normalised; b := D^T a with b_j = 0 (for the coefficients, before
// d_j changes); then d_j := a. skip := 1 when a = 0 (nothing changes then). work: T_ doubles.
template <class T>
void approximate_atom(const T* t, const T* c, T* D, std::int64_t T_, std::int64_t K, std::int64_t ldd, std::int64_t j,
                      T* b, int* skip, double* work, cudaStream_t stream);
// Gamma(j, s) := h_s - sum_i Gamma(i, s) b_i (b_j = 0) where Gamma(j, s) != 0; nothing when *skip.
template <class T>
void update_coefficients(const T* h, const T* b, T* Gamma, std::int64_t K, std::int64_t N, std::int64_t j,
                         const int* skip, cudaStream_t stream);

// The signals using atom j (Gamma(j, s) != 0), in increasing order, into users[0 .. *m); deterministic.
// scratch: select_scratch_bytes(N) bytes.
std::size_t select_scratch_bytes(std::int64_t N);
template <class T>
void select_users(const T* Gamma, std::int64_t K, std::int64_t N, std::int64_t j, std::int64_t* users, std::int64_t* m,
                  void* scratch, std::size_t scratch_bytes, cudaStream_t stream);
// E(:, u) = x_s - sum_{i != j} d_i Gamma(i, s) for s = users[u], u < m (E T x m, ld T, in float64).
template <class T>
void error_columns(const T* X, std::int64_t ldx, const T* D, std::int64_t ldd, const T* Gamma, std::int64_t T_,
                   std::int64_t K, std::int64_t j, const std::int64_t* users, std::int64_t m, double* E,
                   cudaStream_t stream);
// Gamma(j, users[u]) := scale * gamma[u], u < m (0 when gamma is null).
template <class T>
void set_coefficients(const double* gamma, double scale, const std::int64_t* users, std::int64_t m, T* Gamma,
                      std::int64_t K, std::int64_t j, cudaStream_t stream);
// dst[i] := src[i], i < count: a float64 vector into a column of T.
template <class T>
void store_column(const double* src, T* dst, std::int64_t count, cudaStream_t stream);

}  // namespace linv::cuda::fmri_kernels
