// The CUDA backend's dense routines on cuBLAS and cuSOLVER (see dense.hpp). Each entry point queues its
// work on the device's main stream and synchronises once before returning.
#include "cuda/dense.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <lapacke.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "cuda/blas.hpp"
#include "cuda/context.hpp"
#include "cuda/kernels.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

using blas::Side;

template <Real T>
T* ptr(ConstMatrixView<T> A) {
  return const_cast<T*>(A.data());  // cuSOLVER's const-incorrect signatures
}

std::int64_t* upload_pivots(Context& ctx, const std::vector<int>& pivots, bool zero_based) {
  std::vector<std::int64_t> p(pivots.size());
  for (std::size_t i = 0; i < pivots.size(); ++i) p[i] = pivots[i] - (zero_based ? 1 : 0);
  auto* d = ctx.scratch_as<std::int64_t>(Slot::pivots, std::max<std::size_t>(p.size(), 1));
  check(cudaMemcpyAsync(d, p.data(), p.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice, ctx.main().stream),
        "cudaMemcpy");
  check(cudaStreamSynchronize(ctx.main().stream), "stream synchronization");  // p dies here
  return d;
}

// LAPACK's 1-norm estimator (reverse communication, on the host) driving solves with A and A^T on the
// GPU: about five round trips of one vector each, instead of moving the factors to the host.
template <Real T, class Solve>
double estimate_rcond(Context& ctx, std::int64_t n, double anorm, Solve&& solve_in_place) {
  if (n == 0) return 1.0;
  if (anorm == 0) return 0.0;
  std::vector<T> v(n), x(n);
  std::vector<lapack_int> isgn(n);
  T est = 0;
  lapack_int kase = 0, isave[3] = {0, 0, 0};
  T* d_x = ctx.scratch_as<T>(Slot::small, n);
  const cudaStream_t s = ctx.main().stream;
  for (;;) {
    if constexpr (std::is_same_v<T, float>)
      LAPACKE_slacn2(static_cast<lapack_int>(n), v.data(), x.data(), isgn.data(), &est, &kase, isave);
    else
      LAPACKE_dlacn2(static_cast<lapack_int>(n), v.data(), x.data(), isgn.data(), &est, &kase, isave);
    if (kase == 0) break;
    check(cudaMemcpyAsync(d_x, x.data(), n * sizeof(T), cudaMemcpyHostToDevice, s), "cudaMemcpy");
    solve_in_place(d_x, kase == 1 ? Op::None : Op::Transpose);
    check(cudaMemcpyAsync(x.data(), d_x, n * sizeof(T), cudaMemcpyDeviceToHost, s), "cudaMemcpy");
    check(cudaStreamSynchronize(s), "stream synchronization");
  }
  return est > 0 ? 1.0 / (anorm * static_cast<double>(est)) : 0.0;
}

constexpr std::int64_t kGetriBlock = 512;
constexpr std::int64_t kLauumBlock = 512;

// A := L^T L on the lower triangle (LAPACK's blocked lauum): the matrix products go to cuBLAS, the
// diagonal blocks to cuSOLVER's lauum, which is slow on a whole large matrix but fine on a block.
template <Real T>
void lauum_lower(Context& ctx, T* A, std::int64_t n, std::int64_t ld) {
  const Lane& lane = ctx.main();
  for (std::int64_t i = 0; i < n; i += kLauumBlock) {
    const std::int64_t ib = std::min(kLauumBlock, n - i), rest = n - i - ib;
    T* aii = A + i + i * ld;
    T* ai0 = A + i;
    blas::trmm<T>(lane.blas, Side::Left, Uplo::Lower, Op::Transpose, Diag::NonUnit, ib, i, T(1), aii, ld, ai0, ld);
    const int ni = static_cast<int>(ib), ldi = static_cast<int>(ld);
    int lwork = 0;
    if constexpr (std::is_same_v<T, float>) {
      check(cusolverDnSlauum_bufferSize(lane.solver, CUBLAS_FILL_MODE_LOWER, ni, aii, ldi, &lwork), "lauum query");
      check(cusolverDnSlauum(lane.solver, CUBLAS_FILL_MODE_LOWER, ni, aii, ldi,
                             ctx.scratch_as<T>(Slot::solver, std::max(lwork, 1)), lwork, ctx.info()),
            "lauum");
    } else {
      check(cusolverDnDlauum_bufferSize(lane.solver, CUBLAS_FILL_MODE_LOWER, ni, aii, ldi, &lwork), "lauum query");
      check(cusolverDnDlauum(lane.solver, CUBLAS_FILL_MODE_LOWER, ni, aii, ldi,
                             ctx.scratch_as<T>(Slot::solver, std::max(lwork, 1)), lwork, ctx.info()),
            "lauum");
    }
    if (rest > 0) {
      T* below = aii + ib;  // L(i+ib:, i:i+ib)
      blas::gemm<T>(lane.blas, Op::Transpose, Op::None, ib, i, rest, T(1), below, ld, A + i + ib, ld, T(1), ai0, ld);
      blas::syrk<T>(lane.blas, Uplo::Lower, Op::Transpose, ib, rest, T(1), below, ld, T(1), aii, ld);
    }
  }
}
constexpr std::int64_t kTriangleBlock = 512;

}  // namespace

// ---- inspection ----------------------------------------------------------------------------------

template <Real T>
double norm1(ConstMatrixView<T> A) {
  if (A.empty()) return 0.0;
  Context& ctx = context_of(A.device());
  auto* d = ctx.scratch_as<double>(Slot::small, 1);
  const cudaStream_t s = ctx.main().stream;
  check(cudaMemsetAsync(d, 0, sizeof(double), s), "cudaMemset");
  kernels::norm1(A.data(), A.rows(), A.cols(), ld_of(A.ld()), d, s);
  return read_back(d, s);
}

template <Real T>
void require_finite(ConstMatrixView<T> A, const char* name) {
  if (A.empty()) return;
  Context& ctx = context_of(A.device());
  auto* d = ctx.scratch_as<unsigned long long>(Slot::small, 1);
  const cudaStream_t s = ctx.main().stream;
  check(cudaMemsetAsync(d, 0xFF, sizeof(unsigned long long), s), "cudaMemset");
  kernels::first_non_finite(A.data(), A.rows(), A.cols(), ld_of(A.ld()), d, s);
  const unsigned long long first = read_back(d, s);
  if (first == ~0ull) return;
  const index i = static_cast<index>(first % static_cast<unsigned long long>(A.rows()));
  const index j = static_cast<index>(first / static_cast<unsigned long long>(A.rows()));
  const T value = read_back(A.data() + i + j * A.ld(), s);
  throw NonFiniteInput(name, i, j, static_cast<double>(value));
}

template <Real T>
Structure detect_structure(ConstMatrixView<T> A) {
  const index n = A.rows();
  int flags[3] = {1, 1, 1};
  if (n >= 2) {
    Context& ctx = context_of(A.device());
    auto* d = ctx.scratch_as<int>(Slot::small, 3);
    const cudaStream_t s = ctx.main().stream;
    check(cudaMemcpyAsync(d, flags, sizeof(flags), cudaMemcpyHostToDevice, s), "cudaMemcpy");
    kernels::structure_flags(A.data(), n, ld_of(A.ld()), d, s);
    check(cudaMemcpyAsync(flags, d, sizeof(flags), cudaMemcpyDeviceToHost, s), "cudaMemcpy");
    check(cudaStreamSynchronize(s), "stream synchronization");
  }
  const bool lower = flags[0] != 0, upper = flags[1] != 0;
  if (lower && upper) return Structure::Diagonal;
  if (lower) return Structure::Lower;
  if (upper) return Structure::Upper;
  return flags[2] != 0 ? Structure::Symmetric : Structure::General;
}

template <Real T>
std::vector<T> diagonal(ConstMatrixView<T> A) {
  const index n = std::min(A.rows(), A.cols());
  std::vector<T> d(static_cast<std::size_t>(n));
  if (n == 0) return d;
  context_of(A.device());
  check(cudaMemcpy2D(d.data(), sizeof(T), A.data(), (A.ld() + 1) * sizeof(T), sizeof(T), n, cudaMemcpyDeviceToHost),
        "cudaMemcpy2D");
  return d;
}

// ---- element-wise --------------------------------------------------------------------------------

template <Real T>
void zero_triangle(MatrixView<T> A, Uplo which) {
  Context& ctx = context_of(A.device());
  kernels::zero_triangle(A.data(), A.rows(), ld_of(A.ld()), which == Uplo::Upper, ctx.main().stream);
  ctx.synchronize();
}

template <Real T>
void set_diagonal(MatrixView<T> A, T value) {
  Context& ctx = context_of(A.device());
  kernels::set_diagonal(A.data(), std::min(A.rows(), A.cols()), ld_of(A.ld()), value, ctx.main().stream);
  ctx.synchronize();
}

template <Real T>
void mirror_lower(MatrixView<T> A) {
  Context& ctx = context_of(A.device());
  kernels::mirror_lower(A.data(), A.rows(), ld_of(A.ld()), ctx.main().stream);
  ctx.synchronize();
}

// ---- products ------------------------------------------------------------------------------------

template <Real T>
void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta, MatrixView<T> C) {
  Context& ctx = context_of(C.device());
  const index k = op_a == Op::None ? A.cols() : A.rows();
  blas::gemm<T>(ctx.main().blas, op_a, op_b, C.rows(), C.cols(), k, alpha, A.data(), ld_of(A.ld()), B.data(),
                ld_of(B.ld()), beta, C.data(), ld_of(C.ld()));
  ctx.synchronize();
}

template <Real T>
void syrk(Uplo uplo, Op op, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C) {
  Context& ctx = context_of(C.device());
  const index k = op == Op::None ? A.cols() : A.rows();
  blas::syrk<T>(ctx.main().blas, uplo, op, C.rows(), k, alpha, A.data(), ld_of(A.ld()), beta, C.data(), ld_of(C.ld()));
  ctx.synchronize();
}

// ---- LU ------------------------------------------------------------------------------------------

template <Real T>
index lu_factor(MatrixView<T> A, std::vector<int>& pivots) {
  const std::int64_t n = A.rows();
  pivots.assign(static_cast<std::size_t>(n), 0);
  if (n == 0) return 0;
  Context& ctx = context_of(A.device());
  const Lane& lane = ctx.main();
  auto* d_piv = ctx.scratch_as<std::int64_t>(Slot::pivots, n);
  std::size_t dev_bytes = 0, host_bytes = 0;
  check(cusolverDnXgetrf_bufferSize(lane.solver, ctx.params(), n, n, blas::data_type<T>(), A.data(), ld_of(A.ld()),
                                    blas::data_type<T>(), &dev_bytes, &host_bytes),
        "getrf workspace query");
  void* dev_work = ctx.scratch(Slot::solver, dev_bytes);
  void* host_work = ctx.host_scratch(host_bytes);
  check(cusolverDnXgetrf(lane.solver, ctx.params(), n, n, blas::data_type<T>(), A.data(), ld_of(A.ld()), d_piv,
                         blas::data_type<T>(), dev_work, dev_bytes, host_work, host_bytes, ctx.info()),
        "getrf");
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  check(cudaMemcpyAsync(p.data(), d_piv, n * sizeof(std::int64_t), cudaMemcpyDeviceToHost, lane.stream), "cudaMemcpy");
  const int info = read_back(ctx.info(), lane.stream);
  for (std::size_t i = 0; i < p.size(); ++i) pivots[i] = static_cast<int>(p[i]);
  return info;
}

template <Real T>
void lu_solve(ConstMatrixView<T> LU, const std::vector<int>& pivots, MatrixView<T> B) {
  if (B.empty()) return;
  Context& ctx = context_of(LU.device());
  const std::int64_t* d_piv = upload_pivots(ctx, pivots, /*zero_based=*/false);
  check(cusolverDnXgetrs(ctx.main().solver, ctx.params(), CUBLAS_OP_N, LU.rows(), B.cols(), blas::data_type<T>(),
                         LU.data(), ld_of(LU.ld()), d_piv, blas::data_type<T>(), B.data(), ld_of(B.ld()), ctx.info()),
        "getrs");
  ctx.synchronize();
}

template <Real T>
void lu_inverse(MatrixView<T> A, const std::vector<int>& pivots) {
  const std::int64_t n = A.rows(), ld = ld_of(A.ld());
  if (n == 0) return;
  Context& ctx = context_of(A.device());
  const Lane& lane = ctx.main();
  PhaseProfile profile("lu inverse");
  profile.begin("U^-1", lane.stream);
  triangular_inverse<T>(A, Uplo::Upper, TriangularInverse::GETS, Diag::NonUnit);  // L below stays
  profile.end("U^-1", lane.stream);
  profile.begin("X L = U^-1 (getri)", lane.stream);
  // LAPACK getri, right to left: X(:, J) = (U^-1(:, J) - X(:, J+) L(J+, J)) L(J, J)^-1 for block columns J.
  const std::int64_t nb = std::min<std::int64_t>(kGetriBlock, n);
  T* work = ctx.scratch_as<T>(Slot::a, static_cast<std::size_t>(n * nb));
  const std::int64_t last = ((n - 1) / nb) * nb;
  for (std::int64_t j = last; j >= 0; j -= nb) {
    const std::int64_t jb = std::min(nb, n - j);
    kernels::take_lower_block(A.data(), n, ld, j, jb, work, n, lane.stream);
    if (j + jb < n)
      blas::gemm<T>(lane.blas, Op::None, Op::None, n, jb, n - j - jb, T(-1), A.data() + (j + jb) * ld, ld,
                    work + (j + jb), n, T(1), A.data() + j * ld, ld);
    blas::trsm<T>(lane.blas, Side::Right, Uplo::Lower, Op::None, Diag::Unit, n, jb, T(1), work + j, n,
                  A.data() + j * ld, ld);
  }
  profile.end("X L = U^-1 (getri)", lane.stream);
  const std::int64_t* d_piv = upload_pivots(ctx, pivots, /*zero_based=*/true);
  kernels::unpermute_columns(A.data(), n, n, ld, d_piv, lane.stream);
  ctx.synchronize();
  profile.report();
}

template <Real T>
double lu_rcond(ConstMatrixView<T> LU, const std::vector<int>& pivots, double anorm) {
  const std::int64_t n = LU.rows();
  if (n == 0) return 1.0;
  Context& ctx = context_of(LU.device());
  const std::int64_t* d_piv = upload_pivots(ctx, pivots, /*zero_based=*/false);
  return estimate_rcond<T>(ctx, n, anorm, [&](T* x, Op op) {
    check(cusolverDnXgetrs(ctx.main().solver, ctx.params(), blas::op(op), n, 1, blas::data_type<T>(), LU.data(),
                           ld_of(LU.ld()), d_piv, blas::data_type<T>(), x, n, ctx.info()),
          "getrs");
  });
}

// ---- Cholesky ------------------------------------------------------------------------------------

template <Real T>
index cholesky_factor(MatrixView<T> A) {
  const std::int64_t n = A.rows();
  if (n == 0) return 0;
  Context& ctx = context_of(A.device());
  const Lane& lane = ctx.main();
  PhaseProfile profile("cholesky factor");
  profile.begin("potrf", lane.stream);
  std::size_t dev_bytes = 0, host_bytes = 0;
  check(cusolverDnXpotrf_bufferSize(lane.solver, ctx.params(), CUBLAS_FILL_MODE_LOWER, n, blas::data_type<T>(),
                                    A.data(), ld_of(A.ld()), blas::data_type<T>(), &dev_bytes, &host_bytes),
        "potrf workspace query");
  void* dev_work = ctx.scratch(Slot::solver, dev_bytes);
  void* host_work = ctx.host_scratch(host_bytes);
  check(cusolverDnXpotrf(lane.solver, ctx.params(), CUBLAS_FILL_MODE_LOWER, n, blas::data_type<T>(), A.data(),
                         ld_of(A.ld()), blas::data_type<T>(), dev_work, dev_bytes, host_work, host_bytes, ctx.info()),
        "potrf");
  profile.end("potrf", lane.stream);
  const int info = read_back(ctx.info(), lane.stream);
  profile.report();
  return info;
}

template <Real T>
void cholesky_solve(ConstMatrixView<T> L, MatrixView<T> B) {
  if (B.empty()) return;
  Context& ctx = context_of(L.device());
  check(cusolverDnXpotrs(ctx.main().solver, ctx.params(), CUBLAS_FILL_MODE_LOWER, L.rows(), B.cols(),
                         blas::data_type<T>(), L.data(), ld_of(L.ld()), blas::data_type<T>(), B.data(), ld_of(B.ld()),
                         ctx.info()),
        "potrs");
  ctx.synchronize();
}

template <Real T>
void cholesky_inverse(MatrixView<T> L, TriangularInverse how) {
  const std::int64_t n = L.rows();
  if (n == 0) return;
  Context& ctx = context_of(L.device());
  const Lane& lane = ctx.main();
  const int ni = static_cast<int>(n), ld = static_cast<int>(ld_of(L.ld()));
  int lwork = 0;
  if (how == TriangularInverse::Lapack) {  // cuSOLVER potri: trtri + lauum
    if constexpr (std::is_same_v<T, float>) {
      check(cusolverDnSpotri_bufferSize(lane.solver, CUBLAS_FILL_MODE_LOWER, ni, L.data(), ld, &lwork), "potri query");
      check(cusolverDnSpotri(lane.solver, CUBLAS_FILL_MODE_LOWER, ni, L.data(), ld,
                             ctx.scratch_as<T>(Slot::solver, std::max(lwork, 1)), lwork, ctx.info()),
            "potri");
    } else {
      check(cusolverDnDpotri_bufferSize(lane.solver, CUBLAS_FILL_MODE_LOWER, ni, L.data(), ld, &lwork), "potri query");
      check(cusolverDnDpotri(lane.solver, CUBLAS_FILL_MODE_LOWER, ni, L.data(), ld,
                             ctx.scratch_as<T>(Slot::solver, std::max(lwork, 1)), lwork, ctx.info()),
            "potri");
    }
  } else {  // the documents' pipeline: L^-1 by elimination on the triangle, then L^-T L^-1
    PhaseProfile profile("cholesky inverse (GETS)");
    profile.begin("triangular inverse", lane.stream);
    triangular_inverse<T>(L, Uplo::Lower, TriangularInverse::GETS, Diag::NonUnit);
    profile.end("triangular inverse", lane.stream);
    profile.begin("lauum", lane.stream);
    lauum_lower<T>(ctx, L.data(), n, ld_of(L.ld()));
    profile.end("lauum", lane.stream);
    ctx.synchronize();
    profile.report();
  }
  kernels::mirror_lower(L.data(), n, ld_of(L.ld()), lane.stream);
  ctx.synchronize();
}

template <Real T>
double cholesky_rcond(ConstMatrixView<T> L, double anorm) {
  const std::int64_t n = L.rows();
  if (n == 0) return 1.0;
  Context& ctx = context_of(L.device());
  return estimate_rcond<T>(ctx, n, anorm, [&](T* x, Op) {  // A is symmetric: A^-T = A^-1
    check(cusolverDnXpotrs(ctx.main().solver, ctx.params(), CUBLAS_FILL_MODE_LOWER, n, 1, blas::data_type<T>(),
                           L.data(), ld_of(L.ld()), blas::data_type<T>(), x, n, ctx.info()),
          "potrs");
  });
}

// ---- triangles -----------------------------------------------------------------------------------

template <Real T>
void triangular_inverse(MatrixView<T> A, Uplo uplo, TriangularInverse how, Diag diag) {
  const std::int64_t n = A.rows(), ld = ld_of(A.ld());
  if (n == 0) return;
  Context& ctx = context_of(A.device());
  const Lane& lane = ctx.main();
  if (how == TriangularInverse::Lapack) {
    std::size_t dev_bytes = 0, host_bytes = 0;
    check(cusolverDnXtrtri_bufferSize(lane.solver, blas::fill(uplo), blas::diag(diag), n, blas::data_type<T>(),
                                      A.data(), ld, &dev_bytes, &host_bytes),
          "trtri workspace query");
    void* dev_work = ctx.scratch(Slot::solver, dev_bytes);
    void* host_work = ctx.host_scratch(host_bytes);
    check(cusolverDnXtrtri(lane.solver, blas::fill(uplo), blas::diag(diag), n, blas::data_type<T>(), A.data(), ld,
                           dev_work, dev_bytes, host_work, host_bytes, ctx.info()),
          "trtri");
  } else {
    // Gauss-Jordan on the triangle, block by block (see src/core/triangular.cpp for the derivation);
    // the upper case is its transpose: U12 := -U11^-1 U12, U02 += U01 U12, U01 := U01 U11^-1.
    // Each diagonal block is inverted by a triangular solve against the identity: three times trtri's
    // flops, but cuBLAS's trsm runs tens of times faster than cuSOLVER's trtri on a block (1.0 ms for
    // trtri at 1024 on an H200), so the diagonal blocks stop dominating the small sizes.
    T* identity = ctx.scratch_as<T>(Slot::c, static_cast<std::size_t>(kTriangleBlock * kTriangleBlock));
    auto invert_block = [&](T* block, std::int64_t b) {
      kernels::fill_identity(identity, b, b, lane.stream);
      blas::trsm<T>(lane.blas, Side::Left, uplo, Op::None, diag, b, b, T(1), block, ld, identity, b);
      kernels::copy_triangle(identity, b, block, ld, b, uplo == Uplo::Upper, diag == Diag::NonUnit, lane.stream);
    };
    for (std::int64_t k0 = 0; k0 < n; k0 += kTriangleBlock) {
      const std::int64_t b = std::min(kTriangleBlock, n - k0), rest = n - k0 - b;
      T* a11 = A.data() + k0 + k0 * ld;
      invert_block(a11, b);
      if (uplo == Uplo::Lower) {
        T* a21 = a11 + b;
        T* a10 = A.data() + k0;
        blas::trmm<T>(lane.blas, Side::Right, Uplo::Lower, Op::None, diag, rest, b, T(-1), a11, ld, a21, ld);
        if (k0 > 0) {
          blas::gemm<T>(lane.blas, Op::None, Op::None, rest, k0, b, T(1), a21, ld, a10, ld, T(1), A.data() + k0 + b, ld);
          blas::trmm<T>(lane.blas, Side::Left, Uplo::Lower, Op::None, diag, b, k0, T(1), a11, ld, a10, ld);
        }
      } else {
        T* a12 = a11 + b * ld;
        T* a01 = A.data() + k0 * ld;
        blas::trmm<T>(lane.blas, Side::Left, Uplo::Upper, Op::None, diag, b, rest, T(-1), a11, ld, a12, ld);
        if (k0 > 0) {
          blas::gemm<T>(lane.blas, Op::None, Op::None, k0, rest, b, T(1), a01, ld, a12, ld, T(1),
                        A.data() + (k0 + b) * ld, ld);
          blas::trmm<T>(lane.blas, Side::Right, Uplo::Upper, Op::None, diag, k0, b, T(1), a11, ld, a01, ld);
        }
      }
    }
  }
  ctx.synchronize();
}

template <Real T>
void triangular_solve(ConstMatrixView<T> A, Uplo uplo, Diag diag, MatrixView<T> B) {
  if (B.empty()) return;
  Context& ctx = context_of(A.device());
  blas::trsm<T>(ctx.main().blas, Side::Left, uplo, Op::None, diag, B.rows(), B.cols(), T(1), A.data(), ld_of(A.ld()),
                B.data(), ld_of(B.ld()));
  ctx.synchronize();
}

template <Real T>
double triangular_rcond(ConstMatrixView<T> A, Uplo uplo, Diag diag) {
  const std::int64_t n = A.rows();
  if (n == 0) return 1.0;
  Context& ctx = context_of(A.device());
  // ||A||_1 of the triangle alone: the other triangle may hold anything.
  auto* d = ctx.scratch_as<double>(Slot::small, 1);
  const cudaStream_t s = ctx.main().stream;
  check(cudaMemsetAsync(d, 0, sizeof(double), s), "cudaMemset");
  const kernels::Part part{uplo == Uplo::Lower ? kernels::Part::Lower : kernels::Part::Upper, diag == Diag::Unit};
  kernels::norm1(A.data(), n, n, ld_of(A.ld()), d, s, part);
  const double anorm = read_back(d, s);
  return estimate_rcond<T>(ctx, n, anorm, [&](T* x, Op op) {
    blas::trsm<T>(ctx.main().blas, Side::Left, uplo, op, diag, n, 1, T(1), A.data(), ld_of(A.ld()), x, n);
  });
}

// ---- accuracy ------------------------------------------------------------------------------------

namespace {

// A float64 copy on the same device (the view itself when it is float64 and contiguous).
template <Real T>
Matrix<double> device_double(ConstMatrixView<T> A, cudaStream_t s) {
  Matrix<double> d = Matrix<double>::uninitialized(A.rows(), A.cols(), A.device());
  kernels::to_double(A.data(), A.rows(), A.cols(), ld_of(A.ld()), d.data(), d.ld(), s);
  return d;
}

double ratio(double num, double den) {
  if (num == 0) return 0;
  return den > 0 ? num / den : std::numeric_limits<double>::infinity();
}

}  // namespace

template <Real T>
double scaled_residual_inverse(ConstMatrixView<T> A, ConstMatrixView<T> X, double eps) {
  const std::int64_t n = A.rows();
  if (n == 0) return 0;
  Context& ctx = context_of(A.device());
  const Lane& lane = ctx.main();
  Matrix<double> a = device_double(A, lane.stream), x = device_double(X, lane.stream);
  Matrix<double> r = Matrix<double>::uninitialized(n, n, A.device());
  kernels::fill_identity(r.data(), n, n, lane.stream);
  blas::gemm<double>(lane.blas, Op::None, Op::None, n, n, n, 1.0, a.data(), n, x.data(), n, -1.0, r.data(), n);
  return ratio(norm1<double>(r.view()), static_cast<double>(n) * eps * norm1<double>(a.view()) * norm1<double>(x.view()));
}

template <Real T>
double scaled_residual_solve(ConstMatrixView<T> A, ConstMatrixView<T> X, ConstMatrixView<T> B, double eps) {
  const std::int64_t n = A.rows(), k = B.cols();
  if (n == 0 || k == 0) return 0;
  Context& ctx = context_of(A.device());
  const Lane& lane = ctx.main();
  Matrix<double> a = device_double(A, lane.stream), x = device_double(X, lane.stream), r = device_double(B, lane.stream);
  const double bnorm = norm1<double>(r.view());
  blas::gemm<double>(lane.blas, Op::None, Op::None, n, k, n, 1.0, a.data(), n, x.data(), n, -1.0, r.data(), n);
  return ratio(norm1<double>(r.view()),
               static_cast<double>(n) * eps * (norm1<double>(a.view()) * norm1<double>(x.view()) + bnorm));
}

// ---- inputs --------------------------------------------------------------------------------------

template <Real T>
void fill_uniform(MatrixView<T> A, std::uint64_t seed, T lo, T hi) {
  Context& ctx = context_of(A.device());
  kernels::fill_uniform(A.data(), A.rows(), A.cols(), ld_of(A.ld()), seed, lo, hi, ctx.main().stream);
  ctx.synchronize();
}

#define LINV_INSTANTIATE(T)                                                                                     \
  template double norm1<T>(ConstMatrixView<T>);                                                                 \
  template void require_finite<T>(ConstMatrixView<T>, const char*);                                             \
  template Structure detect_structure<T>(ConstMatrixView<T>);                                                   \
  template std::vector<T> diagonal<T>(ConstMatrixView<T>);                                                      \
  template void zero_triangle<T>(MatrixView<T>, Uplo);                                                          \
  template void set_diagonal<T>(MatrixView<T>, T);                                                              \
  template void mirror_lower<T>(MatrixView<T>);                                                                 \
  template void gemm<T>(Op, Op, T, ConstMatrixView<T>, ConstMatrixView<T>, T, MatrixView<T>);                   \
  template void syrk<T>(Uplo, Op, T, ConstMatrixView<T>, T, MatrixView<T>);                                     \
  template index lu_factor<T>(MatrixView<T>, std::vector<int>&);                                                \
  template void lu_solve<T>(ConstMatrixView<T>, const std::vector<int>&, MatrixView<T>);                        \
  template void lu_inverse<T>(MatrixView<T>, const std::vector<int>&);                                          \
  template double lu_rcond<T>(ConstMatrixView<T>, const std::vector<int>&, double);                             \
  template index cholesky_factor<T>(MatrixView<T>);                                                             \
  template void cholesky_solve<T>(ConstMatrixView<T>, MatrixView<T>);                                           \
  template void cholesky_inverse<T>(MatrixView<T>, TriangularInverse);                                          \
  template double cholesky_rcond<T>(ConstMatrixView<T>, double);                                                \
  template void triangular_inverse<T>(MatrixView<T>, Uplo, TriangularInverse, Diag);                            \
  template void triangular_solve<T>(ConstMatrixView<T>, Uplo, Diag, MatrixView<T>);                             \
  template double triangular_rcond<T>(ConstMatrixView<T>, Uplo, Diag);                                          \
  template double scaled_residual_inverse<T>(ConstMatrixView<T>, ConstMatrixView<T>, double);                   \
  template double scaled_residual_solve<T>(ConstMatrixView<T>, ConstMatrixView<T>, ConstMatrixView<T>, double); \
  template void fill_uniform<T>(MatrixView<T>, std::uint64_t, T, T);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
#undef LINV_INSTANTIATE

}  // namespace linv::cuda
