// Mixed precision on the GPU. Float32 factors (LU or Cholesky, cuSOLVER getrf/potrf): LAPACK dsgesv's and
// dsposv's plain refinement against the float64 residual, continued until the residual stops halving.
// Tensor-core factors (TF32 / BF16 / FP16 updates of an LU): cuSOLVER's iterative-refinement solver
// (cusolverDnIRSXgesv), GMRES-IR for one right-hand side, plain refinement for several. IRS was the float32
// path too (0.152 against 0.180 s for getrf plus refinement at n = 16384 on an H100), but it stops at
// LAPACK's test, and its float32 forward errors were 30-60x the float64 solve's at cond 1e2 to 1e6.
// IRS stops at LAPACK's test ||r||_inf <= ||x||_inf ||A||_inf eps sqrt(n) for every column; the Cholesky
// refinement goes on past it until the residual stops halving. When they cannot get there the outcome
// says why, and linv's core solves in float64 (src/core/dense_steps.cpp). The mixed
// family (src/kernels/vectors.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "cuda/blas.hpp"
#include "cuda/context.hpp"
#include "cuda/backend.hpp"
#include "cuda/complex_kernels.hpp"
#include "cuda/kernels.hpp"
#include "kernels/backend.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

constexpr int kMaxCorrections = 30;    // LAPACK's ITERMAX (plain refinement)
constexpr int kMaxIrsIterations = 50;  // LU through IRS: its outer steps
// FactorPrecision::Auto refines from float32 only where float32 runs at least this many times float64's
// rate (consumer and workstation GPUs: 32 to 64). At 2 (V100, A100, H100, H200) cuSOLVER's float32 getrf
// measured no faster than its float64 one (0.14 s both at n = 16384 on an H100): the panels bound both.
constexpr int kFloat32PaysFromRatio = 4;

// A float32 Cholesky factorization on the main lane, and solves with it.
class FloatCholesky {
 public:
  FloatCholesky(Context& ctx, std::int64_t n)
      : ctx_(ctx), n_(n), l_(ctx.scratch_as<float>(Slot::a, static_cast<std::size_t>(n * n))) {}

  // Factors A rounded to float32; false when that is not positive definite.
  bool factor(ConstMatrixView<double> A) {
    const Lane& lane = ctx_.main();
    launch::to_float(A.data(), n_, n_, ld_of(A.ld()), l_, n_, lane.stream);
    std::size_t dev_bytes = 0, host_bytes = 0;
    check(cusolverDnXpotrf_bufferSize(lane.solver, ctx_.params(), CUBLAS_FILL_MODE_LOWER, n_, CUDA_R_32F, l_, n_,
                                      CUDA_R_32F, &dev_bytes, &host_bytes),
          "potrf workspace query");
    check(cusolverDnXpotrf(lane.solver, ctx_.params(), CUBLAS_FILL_MODE_LOWER, n_, CUDA_R_32F, l_, n_, CUDA_R_32F,
                           ctx_.scratch(Slot::solver, dev_bytes), dev_bytes, ctx_.host_scratch(host_bytes), host_bytes,
                           ctx_.info()),
          "potrf");
    int info = 0;
    check(cudaMemcpyAsync(&info, ctx_.info(), sizeof(int), cudaMemcpyDeviceToHost, lane.stream), "cudaMemcpy");
    ctx_.synchronize();
    return info == 0;
  }

  // B := A32^-1 B (B n x nrhs float32, leading dimension n).
  void solve(float* b, std::int64_t nrhs) {
    check(cusolverDnXpotrs(ctx_.main().solver, ctx_.params(), CUBLAS_FILL_MODE_LOWER, n_, nrhs, CUDA_R_32F, l_, n_,
                           CUDA_R_32F, b, n_, ctx_.info(1)),
          "potrs");
  }

  // The factor's reciprocal condition estimate, given ||A||_1; the last use of the factor (the estimate
  // takes scratch the solves share).
  double rcond(Device device, double anorm) const {
    return kernels::dense<float>(device).cholesky_rcond(ConstMatrixView<float>(l_, n_, n_, n_, device), anorm);
  }

 private:
  Context& ctx_;
  std::int64_t n_;
  float* l_;
};

// A float32 LU factorization with partial pivoting on the main lane, and solves with it.
class FloatLU {
 public:
  FloatLU(Context& ctx, std::int64_t n)
      : ctx_(ctx), n_(n), lu_(ctx.scratch_as<float>(Slot::a, static_cast<std::size_t>(n * n))),
        pivots_(ctx.scratch_as<std::int64_t>(Slot::pivots, static_cast<std::size_t>(n))) {}

  // Factors A rounded to float32; false at an exactly zero pivot.
  bool factor(ConstMatrixView<double> A) {
    const Lane& lane = ctx_.main();
    launch::to_float(A.data(), n_, n_, ld_of(A.ld()), lu_, n_, lane.stream);
    std::size_t dev_bytes = 0, host_bytes = 0;
    check(cusolverDnXgetrf_bufferSize(lane.solver, ctx_.params(), n_, n_, CUDA_R_32F, lu_, n_, CUDA_R_32F, &dev_bytes,
                                      &host_bytes),
          "getrf workspace query");
    check(cusolverDnXgetrf(lane.solver, ctx_.params(), n_, n_, CUDA_R_32F, lu_, n_, pivots_, CUDA_R_32F,
                           ctx_.scratch(Slot::solver, dev_bytes), dev_bytes, ctx_.host_scratch(host_bytes), host_bytes,
                           ctx_.info()),
          "getrf");
    return read_back(ctx_.info(), lane.stream) == 0;
  }

  // B := A32^-1 B (B n x nrhs float32, leading dimension n).
  void solve(float* b, std::int64_t nrhs) {
    check(cusolverDnXgetrs(ctx_.main().solver, ctx_.params(), CUBLAS_OP_N, n_, nrhs, CUDA_R_32F, lu_, n_, pivots_,
                           CUDA_R_32F, b, n_, ctx_.info(1)),
          "getrs");
  }

  // The factors' reciprocal condition estimate, given ||A||_1; the last use of the factors (the estimate
  // uploads its permutation where the pivots are kept).
  double rcond(Device device, double anorm) const {
    std::vector<std::int64_t> wide(static_cast<std::size_t>(n_));
    check(cudaMemcpyAsync(wide.data(), pivots_, wide.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost,
                          ctx_.main().stream),
          "cudaMemcpy");
    ctx_.synchronize();
    const std::vector<int> pivots(wide.begin(), wide.end());
    return kernels::dense<float>(device).lu_rcond(ConstMatrixView<float>(lu_, n_, n_, n_, device), pivots, anorm);
  }

 private:
  Context& ctx_;
  std::int64_t n_;
  float* lu_;
  std::int64_t* pivots_;
};

// r := B - A X in float64 with per-column ||r||_inf and ||x||_inf, for the stopping test and the report.
class Residual {
 public:
  Residual(Context& ctx, ConstMatrixView<double> A, ConstMatrixView<double> B, ConstMatrixView<double> X)
      : ctx_(ctx), A_(A), B_(B), X_(X), n_(A.rows()), nrhs_(B.cols()),
        r_(ctx.scratch_as<double>(Slot::c, static_cast<std::size_t>(n_ * nrhs_))),
        norms_(ctx.scratch_as<double>(Slot::d, static_cast<std::size_t>(2 * nrhs_ + 1))),
        host_(static_cast<std::size_t>(2 * nrhs_)) {
    const cudaStream_t stream = ctx.main().stream;
    check(cudaMemsetAsync(norms_ + 2 * nrhs_, 0, sizeof(double), stream), "cudaMemset");
    launch::norm_inf(A.data(), n_, n_, ld_of(A.ld()), norms_ + 2 * nrhs_, stream);
    check(cudaMemcpyAsync(&anorm_, norms_ + 2 * nrhs_, sizeof(double), cudaMemcpyDeviceToHost, stream), "cudaMemcpy");
    ctx.synchronize();
  }

  double anorm() const { return anorm_; }
  double* r() const { return r_; }  // n x nrhs, leading dimension n

  // Recomputes r; returns the largest ||r_j|| / (||A|| ||x_j||) and sets `passes` to LAPACK's test.
  double update(bool& passes) {
    const Lane& lane = ctx_.main();
    check(cudaMemcpy2DAsync(r_, n_ * sizeof(double), B_.data(), ld_of(B_.ld()) * sizeof(double), n_ * sizeof(double),
                            nrhs_, cudaMemcpyDeviceToDevice, lane.stream),
          "cudaMemcpy2D");
    blas::gemm<double>(lane.blas, Op::None, Op::None, n_, nrhs_, n_, -1.0, A_.data(), ld_of(A_.ld()), X_.data(),
                       ld_of(X_.ld()), 1.0, r_, n_);
    launch::column_max_abs(r_, n_, nrhs_, n_, norms_, lane.stream);
    launch::column_max_abs(X_.data(), n_, nrhs_, ld_of(X_.ld()), norms_ + nrhs_, lane.stream);
    check(cudaMemcpyAsync(host_.data(), norms_, 2 * nrhs_ * sizeof(double), cudaMemcpyDeviceToHost, lane.stream),
          "cudaMemcpy");
    ctx_.synchronize();
    const double bound = std::sqrt(static_cast<double>(n_)) * std::numeric_limits<double>::epsilon();
    double worst = 0;
    passes = true;
    for (std::int64_t j = 0; j < nrhs_; ++j) {
      const double r = host_[static_cast<std::size_t>(j)], x = host_[static_cast<std::size_t>(nrhs_ + j)];
      const double e = r / (anorm_ * x);
      worst = std::max(worst, std::isnan(e) ? std::numeric_limits<double>::infinity() : e);
      passes = passes && std::isfinite(x) && r <= x * anorm_ * bound;  // never for an X that overflowed
    }
    return worst;
  }

 private:
  Context& ctx_;
  ConstMatrixView<double> A_, B_, X_;
  std::int64_t n_, nrhs_;
  double* r_;
  double* norms_;
  std::vector<double> host_;
  double anorm_ = 0;
};

cusolverPrecType_t irs_precision(FactorPrecision p) {
  switch (p) {
    case FactorPrecision::Auto:  // resolved by the core before it gets here: float32 where it pays
    case FactorPrecision::Float32: return CUSOLVER_R_32F;
    case FactorPrecision::TF32: return CUSOLVER_R_TF32;
    case FactorPrecision::BFloat16: return CUSOLVER_R_16BF;
    case FactorPrecision::Float16: return CUSOLVER_R_16F;
  }
  return CUSOLVER_R_32F;
}

// cuSOLVER's IRS solver: X from A X = B with A left untouched (no fallback: ours follows). Returns the
// refinement steps, or a message why it failed.
struct IrsResult {
  int iterations = 0;
  std::string failure;
};

// T: double (real precisions) or std::complex<double> (complex ones); `low` the factors' precision.
template <class T>
IrsResult irs_solve(Context& ctx, ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X, cusolverPrecType_t low) {
  const std::int64_t n = A.rows(), nrhs = B.cols();
  if (n > INT_MAX || nrhs > INT_MAX || ld_of(A.ld()) > INT_MAX || ld_of(B.ld()) > INT_MAX || ld_of(X.ld()) > INT_MAX)
    return {0, "the system is too large for cuSOLVER's 32-bit IRS interface"};
  struct Handles {
    cusolverDnIRSParams_t params = nullptr;
    cusolverDnIRSInfos_t infos = nullptr;
    ~Handles() {
      if (infos) cusolverDnIRSInfosDestroy(infos);
      if (params) cusolverDnIRSParamsDestroy(params);
    }
  } h;
  check(cusolverDnIRSParamsCreate(&h.params), "IRS parameters");
  const cusolverPrecType_t main = std::is_same_v<T, double> ? CUSOLVER_R_64F : CUSOLVER_C_64F;
  check(cusolverDnIRSParamsSetSolverPrecisions(h.params, main, low), "IRS precisions");
  check(cusolverDnIRSParamsSetRefinementSolver(
            h.params, nrhs == 1 ? CUSOLVER_IRS_REFINE_CLASSICAL_GMRES : CUSOLVER_IRS_REFINE_CLASSICAL),
        "IRS refinement solver");
  check(cusolverDnIRSParamsSetMaxIters(h.params, kMaxIrsIterations), "IRS iteration limit");
  check(cusolverDnIRSParamsDisableFallback(h.params), "IRS fallback");
  check(cusolverDnIRSInfosCreate(&h.infos), "IRS infos");
  const Lane& lane = ctx.main();
  std::size_t bytes = 0;
  check(cusolverDnIRSXgesv_bufferSize(lane.solver, h.params, static_cast<int>(n), static_cast<int>(nrhs), &bytes),
        "IRS workspace query");
  void* work = ctx.scratch(Slot::solver, std::max<std::size_t>(bytes, 1));
  int iterations = 0;
  // IRS takes a writable A but leaves it unchanged without fallback.
  const cusolverStatus_t status = cusolverDnIRSXgesv(
      lane.solver, h.params, h.infos, static_cast<int>(n), static_cast<int>(nrhs), const_cast<T*>(A.data()),
      static_cast<int>(ld_of(A.ld())), const_cast<T*>(B.data()), static_cast<int>(ld_of(B.ld())), X.data(),
      static_cast<int>(ld_of(X.ld())), work, bytes, &iterations, ctx.info());
  if (status == CUSOLVER_STATUS_IRS_MATRIX_SINGULAR) return {0, "the low-precision factorization hit a zero pivot"};
  check(status, "cusolverDnIRSXgesv");
  int info = 0;
  check(cudaMemcpyAsync(&info, ctx.info(), sizeof(int), cudaMemcpyDeviceToHost, lane.stream), "cudaMemcpy");
  ctx.synchronize();
  if (info != 0) return {0, fmt::format("the low-precision factorization hit a zero pivot (info {})", info)};
  if (iterations < 0)
    return {0, iterations == -kMaxIrsIterations || iterations == -(kMaxIrsIterations - 1)
                   ? fmt::format("refinement did not converge in {} steps", kMaxIrsIterations)
                   : fmt::format("refinement diverged or overflowed (cuSOLVER IRS code {})", iterations)};
  return {iterations, ""};
}

class Mixed final : public kernels::Mixed {
 public:
  kernels::MixedOutcome solve(ConstMatrixView<double> A, ConstMatrixView<double> B, MatrixView<double> X,
                              bool cholesky, FactorPrecision low) const override;
  std::string float64_is_as_fast(Device device) const override {
    int ratio = 0;  // the device's float32 to float64 throughput
    check(cudaDeviceGetAttribute(&ratio, cudaDevAttrSingleToDoublePrecisionPerfRatio, device.index()),
          "cudaDeviceGetAttribute");
    if (ratio >= kFloat32PaysFromRatio) return "";
    return fmt::format("{} runs float64 at 1/{} of float32's rate or better, and an LU is bound by its panels in "
                       "either precision, so a float32 factorization is no faster",
                       device.name(), ratio);
  }
  kernels::MixedOutcome solve_complex(ConstMatrixView<std::complex<double>> A, ConstMatrixView<std::complex<double>> B,
                                      MatrixView<std::complex<double>> X, bool cholesky) const override;
  kernels::MixedOutcome least_squares(ConstMatrixView<double> A, ConstMatrixView<double>,
                                      MatrixView<double>) const override {
    throw InvalidArgument(fmt::format("mixed-precision least squares runs on the CPU only in this version of linv; "
                                      "the matrix is on {}: move it with .to(Device::cpu())",
                                      A.device().name()));
  }
  void round_to_float(ConstMatrixView<double> src, MatrixView<float> dst) const override {
    if (src.empty()) return;
    Context& ctx = context_of(src.device());
    launch::to_float(src.data(), src.rows(), src.cols(), ld_of(src.ld()), dst.data(), ld_of(dst.ld()),
                     ctx.main().stream);
    ctx.synchronize();
  }
  void add_correction(ConstMatrixView<float> d, MatrixView<double> x) const override {
    if (d.empty()) return;
    Context& ctx = context_of(d.device());
    // the kernel reads d contiguously (leading dimension = rows)
    if (d.cols() > 1 && d.ld() != d.rows()) throw InvalidArgument("add_correction: d must be contiguous");
    launch::add_correction(d.data(), d.rows(), d.cols(), x.data(), ld_of(x.ld()), ctx.main().stream);
    ctx.synchronize();
  }
};

// x0 = A32^-1 B, then corrections d = A32^-1 r until the residual passes LAPACK's test and stops halving.
template <class Factor>
kernels::MixedOutcome refine(Context& ctx, ConstMatrixView<double> A, ConstMatrixView<double> B, MatrixView<double> X,
                             Residual& residual, Factor& factor) {
  const std::int64_t n = A.rows(), nrhs = B.cols();
  const Lane& lane = ctx.main();
  kernels::MixedOutcome out;
  bool passes = false;
  auto* correction = ctx.scratch_as<float>(Slot::b, static_cast<std::size_t>(n * nrhs));
  launch::to_float(B.data(), n, nrhs, ld_of(B.ld()), correction, n, lane.stream);
  factor.solve(correction, nrhs);
  check(cudaMemset2DAsync(X.data(), ld_of(X.ld()) * sizeof(double), 0, n * sizeof(double), nrhs, lane.stream),
        "cudaMemset2D");
  launch::add_correction(correction, n, nrhs, X.data(), ld_of(X.ld()), lane.stream);
  // Done once every column passes LAPACK's test and the residual has stopped halving: the test alone
  // allows a forward error sqrt(n) times float64's, and refinement stops improving x only where the
  // residual stops shrinking (as on the CPU, src/cpu/refinement.cpp).
  double before = std::numeric_limits<double>::infinity();
  for (int k = 0;; ++k) {
    out.backward_error = residual.update(passes);
    if (passes && (out.backward_error == 0 || out.backward_error > 0.5 * before)) {
      out.iterations = k;
      return out;
    }
    // a correction that does not halve an unconverged residual will not get there: float64 takes over
    if (!passes && !(out.backward_error <= 0.5 * before)) {
      out.iterations = k;
      out.failure = fmt::format("refinement stalled at a backward error of {:.3g} after {} corrections",
                                out.backward_error, k);
      return out;
    }
    before = out.backward_error;
    if (k == kMaxCorrections) break;
    launch::to_float(residual.r(), n, nrhs, n, correction, n, lane.stream);
    factor.solve(correction, nrhs);
    launch::add_correction(correction, n, nrhs, X.data(), ld_of(X.ld()), lane.stream);
  }
  out.iterations = kMaxCorrections;
  out.failure = fmt::format("refinement did not converge in {} steps", kMaxCorrections);
  return out;
}

kernels::MixedOutcome Mixed::solve(ConstMatrixView<double> A, ConstMatrixView<double> B, MatrixView<double> X,
                                   bool cholesky, FactorPrecision low) const {
  const std::int64_t n = A.rows(), nrhs = B.cols();
  kernels::MixedOutcome out;
  if (n == 0 || nrhs == 0) return out;
  Context& ctx = Context::get(A.device().index());
  ctx.activate();
  Residual residual(ctx, A, B, X);
  bool passes = false;
  if (!(residual.anorm() <= FLT_MAX)) {
    out.failure = "A does not fit float32";
    return out;
  }
  const bool tensor_cores =
      low == FactorPrecision::TF32 || low == FactorPrecision::BFloat16 || low == FactorPrecision::Float16;
  if (!cholesky && tensor_cores) {  // cuSOLVER's IRS
    const IrsResult r = irs_solve<double>(ctx, A, B, X, irs_precision(low));
    out.failure = r.failure;
    out.iterations = r.iterations;
    if (out.failure.empty()) {
      out.backward_error = residual.update(passes);
      if (!passes)
        out.failure = fmt::format("IRS stopped at a backward error of {:.3g}, above float64's bound", out.backward_error);
    }
    return out;
  }

  // Refined, then judged: the float32 factors must see A nonsingular (kernels::float32_cannot_judge).
  const auto judged = [&](auto& factor) {
    kernels::MixedOutcome refined = refine(ctx, A, B, X, residual, factor);
    if (refined.failure.empty())
      refined.failure = kernels::float32_cannot_judge(factor.rcond(A.device(), kernels::dense<double>(A.device()).norm1(A)));
    return refined;
  };
  if (cholesky) {
    FloatCholesky factor(ctx, n);
    if (!factor.factor(A)) {
      out.failure = "A is not positive definite in float32";
      return out;
    }
    return judged(factor);
  }
  FloatLU factor(ctx, n);
  if (!factor.factor(A)) {
    out.failure = "the float32 factorization hit a zero pivot";
    return out;
  }
  return judged(factor);
}

// ||B - A X||_1 / (||A||_1 ||X||_1) of complex128 matrices on a GPU.
double complex_backward_error(Context& ctx, ConstMatrixView<std::complex<double>> A,
                              ConstMatrixView<std::complex<double>> B, ConstMatrixView<std::complex<double>> X) {
  using C = std::complex<double>;
  const std::int64_t n = A.rows(), k = B.cols();
  const Lane& lane = ctx.main();
  C* r = ctx.scratch_as<C>(Slot::b, static_cast<std::size_t>(n * k));
  check(cudaMemcpy2DAsync(r, n * sizeof(C), B.data(), ld_of(B.ld()) * sizeof(C), n * sizeof(C), k,
                          cudaMemcpyDeviceToDevice, lane.stream),
        "cudaMemcpy2D");
  const cuDoubleComplex minus_one{-1, 0}, one{1, 0};
  check(cublasZgemm_64(lane.blas, CUBLAS_OP_N, CUBLAS_OP_N, n, k, n, &minus_one,
                       reinterpret_cast<const cuDoubleComplex*>(A.data()), ld_of(A.ld()),
                       reinterpret_cast<const cuDoubleComplex*>(X.data()), ld_of(X.ld()), &one,
                       reinterpret_cast<cuDoubleComplex*>(r), n),
        "gemm");
  auto* norms = ctx.scratch_as<double>(Slot::small, 3);
  check(cudaMemsetAsync(norms, 0, 3 * sizeof(double), lane.stream), "cudaMemset");
  complex_launch::norm1(r, n, k, n, norms, lane.stream);
  complex_launch::norm1(A.data(), n, n, ld_of(A.ld()), norms + 1, lane.stream);
  complex_launch::norm1(X.data(), n, k, ld_of(X.ld()), norms + 2, lane.stream);
  double host[3];
  check(cudaMemcpyAsync(host, norms, sizeof(host), cudaMemcpyDeviceToHost, lane.stream), "cudaMemcpy");
  ctx.synchronize();
  return host[2] > 0 ? host[0] / (host[1] * host[2]) : host[0];
}

// cuSOLVER's IRS with complex64 factors (LU: IRS has no Cholesky, so a Hermitian A is factored as a general one),
// judged afterwards by the normwise backward error in 1-norms.
kernels::MixedOutcome Mixed::solve_complex(ConstMatrixView<std::complex<double>> A,
                                           ConstMatrixView<std::complex<double>> B, MatrixView<std::complex<double>> X,
                                           bool cholesky) const {
  kernels::MixedOutcome out;
  const std::int64_t n = A.rows(), nrhs = B.cols();
  if (n == 0 || nrhs == 0) return out;
  Context& ctx = Context::get(A.device().index());
  ctx.activate();
  const IrsResult r = irs_solve<std::complex<double>>(ctx, A, B, X, CUSOLVER_C_32F);
  out.failure = r.failure;
  out.iterations = r.iterations;
  if (cholesky) out.note = "complex64 factors on a GPU are LU's (cuSOLVER's refinement has no Cholesky)";
  if (!out.failure.empty()) return out;
  out.backward_error = complex_backward_error(ctx, A, B, X);
  // LAPACK's test in the infinity norm, sqrt(n) eps; in 1-norms it may read up to n times larger
  const double bound = std::sqrt(static_cast<double>(n)) * static_cast<double>(n) * std::numeric_limits<double>::epsilon();
  if (!(out.backward_error <= bound))
    out.failure = fmt::format("refinement stopped at a backward error of {:.3g}, above complex128's bound",
                              out.backward_error);
  return out;
}

}  // namespace

const kernels::Mixed& mixed() { return kernels::instance<Mixed>(); }

}  // namespace linv::cuda
