// The GPU kernels of ADL (src/cuda/adl.cu), driven by src/cuda/adl.cpp. Each launches on `stream` and
// returns at once. Column-major throughout: X is T x N, D is T x K (ld T), S and D^T X are K x N (ld K).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace linv::cuda::adl_kernels {

// The fused coefficient kernel handles K up to this many atoms: a column of S stays in registers for all
// its steps. Larger K take one cuBLAS product and one pass per step.
constexpr int kFusedMaxAtoms = 32;
// Steps per launch of the fused kernel (its per-step sums live in shared memory); more run as several
// launches, S written and read back between them.
constexpr int kFusedMaxSteps = 32;

// Sums per step, in float64, for the S a step reads and writes: <DtX, S>, <S, G S>, ||S||_1, ||S_new||_1.
constexpr int kCoefficientSums = 4;

// The grid of these kernels for `work` items (columns of S, or entries of X): each block writes one row of
// partial sums (4 steps doubles for the coefficient kernels, one for sum_of_squares).
int blocks_for(std::int64_t work);

// `steps` coefficient steps on every column of S at once, its K values in registers:
// S(:, j) := soft(S(:, j) + (DtX(:, j) - G S(:, j)) * inv_c, tau). G (K x K, ld K) on the device.
// partial[b * 4 steps + 4 s + q]: block b's sum q of step s.
template <class T>
void fused_coefficients(const T* G, int K, const T* DtX, T* S, std::int64_t N, int steps, T inv_c, T tau,
                        double* partial, cudaStream_t stream);
// One coefficient step given W = G S (K x N): S := soft(S + (DtX - W) * inv_c, tau), one pass over S;
// partial[b * 4 + q] as above for this step.
template <class T>
void coefficient_pass(const T* DtX, const T* W, T* S, std::int64_t K, std::int64_t N, T inv_c, T tau, double* partial,
                      cudaStream_t stream);
// out[q] := sum over b < blocks of partial[b * count + q], q < count, in a fixed order.
void sum_partials(const double* partial, int blocks, int count, double* out, cudaStream_t stream);

// `steps` dictionary steps by one block: D := proj(D + (P - D H) * inv_c), P = X S^T (T x K), H = S S^T;
// sums[2 s], sums[2 s + 1] = <D, P>, <D, D H> for the D step s reads, then the same for the final D at
// sums[2 steps ..]; then G := D^T D (K x K) of the final D. Projection: the first M columns onto the ball
// of squared radius c around task's columns (T x M, ld T), the others onto the ball of squared radius
// c_d around 0. V: T x K scratch.
template <class T>
void dictionary_steps(T* D, const T* P, const T* H, std::int64_t rows, int K, const T* task, int M, double c,
                      double c_d, int steps, T inv_c, T* V, double* sums, T* G, cudaStream_t stream);

// partial[b] := block b's share of ||X||_F^2 (X rows x N, ld ldx) in float64; sum them with sum_partials.
template <class T>
void sum_of_squares(const T* X, std::int64_t rows, std::int64_t N, std::int64_t ldx, double* partial,
                    cudaStream_t stream);

}  // namespace linv::cuda::adl_kernels
