// Mixed precision on the GPU: LAPACK dsgesv / dsposv's algorithm on cuSOLVER and cuBLAS. Factor a
// float32 copy of A, solve in float32, and refine the solution against the float64 residual
// r = B - A X until ||r||_inf <= ||x||_inf ||A||_inf eps sqrt(n) for every column (LAPACK's test). When the
// float32 factorization fails, A does not fit float32, or 30 corrections do not get there, A is factored
// in float64 instead (A then holds that factorization, as LAPACK leaves it).
#include <cuda_runtime.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "cuda/blas.hpp"
#include "cuda/context.hpp"
#include "cuda/dense.hpp"
#include "cuda/kernels.hpp"

namespace linv::cuda {
namespace {

constexpr int kMaxCorrections = 30;  // LAPACK's ITERMAX

std::int64_t ld_of(std::int64_t ld) { return ld > 1 ? ld : 1; }

// A float32 or float64 LU or Cholesky factorization on the main lane, and solves with it.
class Factor {
 public:
  Factor(Context& ctx, bool cholesky, std::int64_t n) : ctx_(ctx), cholesky_(cholesky), n_(n) {}

  // Factors `a` (n x n, leading dimension ld) of `type` in place; returns LAPACK's info.
  int factor(void* a, std::int64_t ld, cudaDataType type, std::int64_t* pivots) {
    a_ = a;
    ld_ = ld;
    type_ = type;
    pivots_ = pivots;
    const Lane& lane = ctx_.main();
    std::size_t dev_bytes = 0, host_bytes = 0;
    if (cholesky_)
      check(cusolverDnXpotrf_bufferSize(lane.solver, ctx_.params(), CUBLAS_FILL_MODE_LOWER, n_, type, a, ld, type,
                                        &dev_bytes, &host_bytes),
            "potrf workspace query");
    else
      check(cusolverDnXgetrf_bufferSize(lane.solver, ctx_.params(), n_, n_, type, a, ld, type, &dev_bytes, &host_bytes),
            "getrf workspace query");
    void* dev_work = ctx_.scratch(Slot::solver, dev_bytes);
    void* host_work = ctx_.host_scratch(host_bytes);
    if (cholesky_)
      check(cusolverDnXpotrf(lane.solver, ctx_.params(), CUBLAS_FILL_MODE_LOWER, n_, type, a, ld, type, dev_work,
                             dev_bytes, host_work, host_bytes, ctx_.info()),
            "potrf");
    else
      check(cusolverDnXgetrf(lane.solver, ctx_.params(), n_, n_, type, a, ld, pivots, type, dev_work, dev_bytes,
                             host_work, host_bytes, ctx_.info()),
            "getrf");
    int info = 0;
    check(cudaMemcpyAsync(&info, ctx_.info(), sizeof(int), cudaMemcpyDeviceToHost, lane.stream), "cudaMemcpy");
    ctx_.synchronize();
    return info;
  }

  // B := A^-1 B in the factorization's type (B n x nrhs, leading dimension ldb).
  void solve(void* b, std::int64_t nrhs, std::int64_t ldb) {
    const Lane& lane = ctx_.main();
    if (cholesky_)
      check(cusolverDnXpotrs(lane.solver, ctx_.params(), CUBLAS_FILL_MODE_LOWER, n_, nrhs, type_, a_, ld_, type_, b, ldb,
                             ctx_.info(1)),
            "potrs");
    else
      check(cusolverDnXgetrs(lane.solver, ctx_.params(), CUBLAS_OP_N, n_, nrhs, type_, a_, ld_, pivots_, type_, b, ldb,
                             ctx_.info(1)),
            "getrs");
  }

 private:
  Context& ctx_;
  bool cholesky_;
  std::int64_t n_, ld_ = 1;
  void* a_ = nullptr;
  cudaDataType type_ = CUDA_R_64F;
  std::int64_t* pivots_ = nullptr;
};

}  // namespace

int mixed_solve(MatrixView<double> A, ConstMatrixView<double> B, MatrixView<double> X, bool cholesky, int& iterations,
                std::vector<int>& pivots) {
  const std::int64_t n = A.rows(), nrhs = B.cols(), lda = ld_of(A.ld());
  pivots.assign(cholesky ? 0 : static_cast<std::size_t>(n), 0);
  iterations = 0;
  if (n == 0 || nrhs == 0) return 0;
  Context& ctx = Context::get(A.device().index());
  ctx.activate();
  const Lane& lane = ctx.main();
  auto* low = ctx.scratch_as<float>(Slot::a, static_cast<std::size_t>(n * n));            // float32 A
  auto* correction = ctx.scratch_as<float>(Slot::b, static_cast<std::size_t>(n * nrhs));  // float32 r, then d
  auto* residual = ctx.scratch_as<double>(Slot::c, static_cast<std::size_t>(n * nrhs));
  auto* d_pivots = ctx.scratch_as<std::int64_t>(Slot::pivots, static_cast<std::size_t>(n));
  auto* norms = ctx.scratch_as<double>(Slot::d, static_cast<std::size_t>(2 * nrhs + 1));  // |r|, |x| per column, |A|
  Factor factor(ctx, cholesky, n);
  const double eps = std::numeric_limits<double>::epsilon();

  check(cudaMemsetAsync(norms + 2 * nrhs, 0, sizeof(double), lane.stream), "cudaMemset");
  kernels::norm_inf(A.data(), n, n, lda, norms + 2 * nrhs, lane.stream);
  double anorm = 0;
  check(cudaMemcpyAsync(&anorm, norms + 2 * nrhs, sizeof(double), cudaMemcpyDeviceToHost, lane.stream), "cudaMemcpy");
  ctx.synchronize();

  // r := B - A X and whether every column has converged.
  std::vector<double> host_norms(static_cast<std::size_t>(2 * nrhs));
  auto converged = [&] {
    check(cudaMemcpy2DAsync(residual, n * sizeof(double), B.data(), ld_of(B.ld()) * sizeof(double), n * sizeof(double),
                            nrhs, cudaMemcpyDeviceToDevice, lane.stream),
          "cudaMemcpy2D");
    blas::gemm<double>(lane.blas, Op::None, Op::None, n, nrhs, n, -1.0, A.data(), lda, X.data(), ld_of(X.ld()), 1.0,
                       residual, n);
    kernels::column_max_abs(residual, n, nrhs, n, norms, lane.stream);
    kernels::column_max_abs(X.data(), n, nrhs, ld_of(X.ld()), norms + nrhs, lane.stream);
    check(cudaMemcpyAsync(host_norms.data(), norms, 2 * nrhs * sizeof(double), cudaMemcpyDeviceToHost, lane.stream),
          "cudaMemcpy");
    ctx.synchronize();
    const double bound = anorm * eps * std::sqrt(static_cast<double>(n));
    for (std::int64_t j = 0; j < nrhs; ++j)
      if (!(host_norms[static_cast<std::size_t>(j)] <= host_norms[static_cast<std::size_t>(nrhs + j)] * bound))
        return false;
    return true;
  };

  int code = 0;  // LAPACK's ITER on failure: -2 A does not fit float32, -3 float32 factorization failed, -31
  if (!(anorm <= FLT_MAX)) {
    code = -2;
  } else {
    kernels::to_float(A.data(), n, n, lda, low, n, lane.stream);
    if (factor.factor(low, n, CUDA_R_32F, d_pivots) != 0) code = -3;
  }
  if (code == 0) {
    // x0 = A32^-1 B, then corrections d = A32^-1 r while the residual is too large.
    kernels::to_float(B.data(), n, nrhs, ld_of(B.ld()), correction, n, lane.stream);
    factor.solve(correction, nrhs, n);
    check(cudaMemset2DAsync(X.data(), ld_of(X.ld()) * sizeof(double), 0, n * sizeof(double), nrhs, lane.stream),
          "cudaMemset2D");
    kernels::add_correction(correction, n, nrhs, X.data(), ld_of(X.ld()), lane.stream);
    for (int k = 0;; ++k) {
      if (converged()) {
        iterations = k;
        return 0;
      }
      if (k == kMaxCorrections) break;
      kernels::to_float(residual, n, nrhs, n, correction, n, lane.stream);
      factor.solve(correction, nrhs, n);
      kernels::add_correction(correction, n, nrhs, X.data(), ld_of(X.ld()), lane.stream);
    }
    code = -(kMaxCorrections + 1);
  }
  // float64 instead: A is overwritten by its factorization, as LAPACK does.
  iterations = code;
  const int info = factor.factor(A.data(), lda, CUDA_R_64F, d_pivots);
  if (info > 0) return info;
  check(cudaMemcpy2DAsync(X.data(), ld_of(X.ld()) * sizeof(double), B.data(), ld_of(B.ld()) * sizeof(double),
                          n * sizeof(double), nrhs, cudaMemcpyDeviceToDevice, lane.stream),
        "cudaMemcpy2D");
  factor.solve(X.data(), nrhs, ld_of(X.ld()));
  if (!cholesky) {
    std::vector<std::int64_t> p(static_cast<std::size_t>(n));
    check(cudaMemcpyAsync(p.data(), d_pivots, n * sizeof(std::int64_t), cudaMemcpyDeviceToHost, lane.stream),
          "cudaMemcpy");
    ctx.synchronize();
    for (std::size_t i = 0; i < p.size(); ++i) pivots[i] = static_cast<int>(p[i]);
  }
  ctx.synchronize();
  return 0;
}

}  // namespace linv::cuda
