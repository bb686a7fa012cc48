// The CUDA backend's dense family (src/kernels/dense.hpp) on cuBLAS and cuSOLVER, at decomposition level:
// each method queues its work on the device's main stream (Gauss-Jordan on two) and synchronises once
// before returning, reading back info, pivots and rcond then. Only kernels are .cu files; the rest is
// C++ calling the libraries.
#include <fmt/format.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <numeric>

#include "cuda/backend.hpp"
#include "cuda/blas.hpp"
#include "cuda/dense_host.hpp"
#include "cuda/context.hpp"
#include "cuda/few_rhs.hpp"
#include "cuda/kernels.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

template <Real T>
T* ptr(ConstMatrixView<T> A) {
  return const_cast<T*>(A.data());  // cuSOLVER's const-incorrect signatures
}

// getrs of B in place from the factors and LAPACK's 1-based pivots, in a buffer of its own (Slot::pivots
// may hold upload_permutation's `perm`, which later passes reuse): few_rhs_or_substitution's fallback.
template <Real T>
void getrs_in_place(Context& ctx, ConstMatrixView<T> LU, const std::vector<int>& pivots, T* B, std::int64_t ldb,
                    int k, Op op) {
  const std::int64_t n = LU.rows();
  std::vector<std::int64_t> ipiv(pivots.begin(), pivots.end());
  DeviceBuffer d_piv(bytes_of(n, sizeof(std::int64_t)), ctx.device());
  to_device(d_piv.p, ipiv.data(), ipiv.size() * sizeof(std::int64_t), ctx.main().stream);
  check(cusolverDnXgetrs(ctx.main().solver, ctx.params(), blas::op(op), n, k, blas::data_type<T>(), ptr(LU),
                         ld_of(LU.ld()), d_piv.as<std::int64_t>(), blas::data_type<T>(), B, ldb, ctx.info()),
        "getrs");
  ctx.synchronize();
}

template <Real T>
void lu_solve_few(Context& ctx, ConstMatrixView<T> LU, const std::vector<int>& pivots, const std::int64_t* perm, T* B,
                  std::int64_t ldb, int k, Op op) {
  cuda::lu_solve_few<T>(ctx, LU, perm, B, ldb, k, op, [&] { getrs_in_place<T>(ctx, LU, pivots, B, ldb, k, op); });
}

template <Real T>
void cholesky_solve_few(Context& ctx, ConstMatrixView<T> L, T* B, std::int64_t ldb, int k) {
  cuda::cholesky_solve_few<T>(ctx, L, B, ldb, k, [&] {
    check(cusolverDnXpotrs(ctx.main().solver, ctx.params(), CUBLAS_FILL_MODE_LOWER, L.rows(), k, blas::data_type<T>(),
                           ptr(L), ld_of(L.ld()), blas::data_type<T>(), B, ldb, ctx.info()),
          "potrs");
  });
}

constexpr std::int64_t kLauumBlock = 512;

// The blocks of the GETS triangular inverse and of getri. Their diagonal blocks are inverted together
// (invert_diagonal_blocks), so larger blocks buy no parallelism there; from order 8192 the larger
// products of 512-blocks win (H100 harness, the whole inverse of the factors: 3.33 against 3.40 ms at
// 4096, 17.0 against 17.6 ms at 8192, 120 against 124 ms at 16384).
std::int64_t inverse_block(std::int64_t n) { return std::min<std::int64_t>(n, n >= 8192 ? 512 : 256); }

// The inverses of the diagonal blocks of A's `uplo` triangle (block k covers rows and columns
// [k nb, min(n, (k + 1) nb))), block k at the result + k nb^2, leading dimension nb, in Slot::c. Each is a
// triangular solve against the identity, every full block in one batched call (eight calls of cuBLAS's
// trsm took 1.9 ms for the 512-blocks at n = 4096, one batched call 0.4 ms). The solve leaves exact zeros
// in the other triangle, so products with the blocks are plain gemms (multiply_into).
template <Real T>
const T* invert_diagonal_blocks(Context& ctx, const T* A, std::int64_t n, std::int64_t ld, std::int64_t nb, Uplo uplo,
                                Diag diag) {
  const Lane& lane = ctx.main();
  const std::int64_t full = n / nb, count = (n + nb - 1) / nb;
  T* inverses = ctx.scratch_as<T>(Slot::c, static_cast<std::size_t>(count * nb * nb));
  launch::fill_identity(inverses, nb, nb, lane.stream, count);
  std::int64_t k = 0;
  if (full > 1) {
    std::vector<T*> pointers(static_cast<std::size_t>(2 * full));
    for (std::int64_t i = 0; i < full; ++i) {
      pointers[static_cast<std::size_t>(i)] = const_cast<T*>(A + i * nb * (ld + 1));
      pointers[static_cast<std::size_t>(full + i)] = inverses + i * nb * nb;
    }
    T** d = ctx.scratch_as<T*>(Slot::d, pointers.size());
    to_device(d, pointers.data(), pointers.size() * sizeof(T*), lane.stream);
    wait(lane.stream);  // pointers dies here
    blas::trsm_batched<T>(lane.blas, Side::Left, uplo, Op::None, diag, nb, nb, T(1), d, ld, d + full, nb, full);
    k = full;
  }
  for (; k < count; ++k) {
    const std::int64_t b = std::min(nb, n - k * nb);
    blas::trsm<T>(lane.blas, Side::Left, uplo, Op::None, diag, b, b, T(1), A + k * nb * (ld + 1), ld,
                  inverses + k * nb * nb, nb);
  }
  return inverses;
}

// dst (rows x cols, leading dimension ld_dst) := alpha left right through `product` (rows x cols): cuBLAS's
// in-place trmm runs at 5-30 TFLOP/s on the triangular inverses' shapes where gemm runs at 40-60 (H100).
template <Real T>
void multiply_into(const Lane& lane, std::int64_t rows, std::int64_t cols, std::int64_t inner, T alpha, const T* left,
                   std::int64_t ld_left, const T* right, std::int64_t ld_right, T* dst, std::int64_t ld_dst, T* product) {
  if (rows == 0 || cols == 0) return;
  blas::gemm<T>(lane.blas, Op::None, Op::None, rows, cols, inner, alpha, left, ld_left, right, ld_right, T(0), product,
                rows);
  check(cudaMemcpy2DAsync(dst, ld_dst * sizeof(T), product, rows * sizeof(T), rows * sizeof(T), cols,
                          cudaMemcpyDeviceToDevice, lane.stream),
        "cudaMemcpy2D");
}

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
    check(blas::pick<T>(cusolverDnSlauum_bufferSize, cusolverDnDlauum_bufferSize)(lane.solver, CUBLAS_FILL_MODE_LOWER,
                                                                                  ni, aii, ldi, &lwork),
          "lauum query");
    check(blas::pick<T>(cusolverDnSlauum, cusolverDnDlauum)(lane.solver, CUBLAS_FILL_MODE_LOWER, ni, aii, ldi,
                                                            ctx.scratch_as<T>(Slot::solver, std::max(lwork, 1)), lwork,
                                                            ctx.info()),
          "lauum");
    if (rest > 0) {
      T* below = aii + ib;  // L(i+ib:, i:i+ib)
      blas::gemm<T>(lane.blas, Op::Transpose, Op::None, ib, i, rest, T(1), below, ld, A + i + ib, ld, T(1), ai0, ld);
      blas::syrk<T>(lane.blas, Uplo::Lower, Op::Transpose, ib, rest, T(1), below, ld, T(1), aii, ld);
    }
  }
}

// LU with tournament pivoting, right-looking (the algorithm of src/cpu/calu.cpp, which says why): per
// panel of kPanel columns, one launch plays the whole tournament (it writes LAPACK-style interchanges
// into pivots, 0-based, and the L \ U of the pivot rows) and one moves the rows of every other column and
// writes the panel's L21 = A21 U11^-1; then the rest of the kBlock-wide block column is updated, and
// every kBlock columns the trailing matrix gets one rank-kBlock update. All of it is queued on the main
// stream, with no host round trip.
template <Real T>
void tournament_factor(Context& ctx, T* A, std::int64_t n, std::int64_t ld, std::int64_t* pivots, int* zero_pivot,
                       PhaseProfile& profile) {
  using Shape = kernels::Tournament;
  const Lane& lane = ctx.main();
  const cudaStream_t s = lane.stream;
  const auto work = launch::calu_work<T>(ctx.scratch(Slot::a, launch::calu_work_bytes(n, sizeof(T))), n);
  check(cudaMemsetAsync(work.counters, 0, work.counter_count * sizeof(int), s), "cudaMemset");
  for (std::int64_t k = 0; k < n; k += Shape::kBlock) {
    const std::int64_t block_end = std::min(n, k + Shape::kBlock);
    for (std::int64_t j = k; j < block_end; j += Shape::kPanel) {
      const int w = static_cast<int>(std::min<std::int64_t>(Shape::kPanel, block_end - j));
      T* panel = A + j + j * ld;
      profile.begin("tournament", s);
      launch::calu_tournament(panel, ld, w, n - j, j, pivots + j, zero_pivot, work, s);
      profile.end("tournament", s);
      profile.begin("interchanges and panel", s);
      launch::calu_finish(A, ld, n, j, w, work, s);
      profile.end("interchanges and panel", s);
      const std::int64_t below = n - j - w, right = block_end - j - w;
      profile.begin("block update", s);
      if (right > 0) {
        blas::trsm<T>(lane.blas, Side::Left, Uplo::Lower, Op::None, Diag::Unit, w, right, T(1), panel, ld,
                      panel + w * ld, ld);
        if (below > 0)
          blas::gemm<T>(lane.blas, Op::None, Op::None, below, right, w, T(-1), panel + w, ld, panel + w * ld, ld, T(1),
                        panel + w + w * ld, ld);
      }
      profile.end("block update", s);
    }
    const std::int64_t width = block_end - k, rest = n - block_end;
    profile.begin("trailing update", s);
    if (rest > 0) {
      T* akk = A + k + k * ld;
      blas::trsm<T>(lane.blas, Side::Left, Uplo::Lower, Op::None, Diag::Unit, width, rest, T(1), akk, ld,
                    akk + width * ld, ld);
      blas::gemm<T>(lane.blas, Op::None, Op::None, rest, rest, width, T(-1), akk + width, ld, akk + width * ld, ld,
                    T(1), akk + width + width * ld, ld);
    }
    profile.end("trailing update", s);
  }
}

}  // namespace

// Every method below runs on the GPU its views live on.
template <Real T>
class Dense final : public kernels::Dense<T> {
 public:
  // Elimination on the triangle (GETS) beats cuSOLVER's trtri at every size (10.7 ms against about 2 ms
  // at 4096 on an H200), and the GETS pipeline cuSOLVER's potri for SPD inverses (0.142 s against 0.278 s
  // at 16384 on an H200). float64 solves go to the randomized LU from the order where it was measured
  // faster, refinement included (bench/results/h100/solve-rbt.json: 1.5 against 1.7 ms at 512, 1.3
  // against 1.0 ms at 256), up to 32768: its growth on random matrices grows with n (1e7 at 40960 to
  // 6.7e7 at 65536, H200), so from about 50000 a draw's rcond falls below eps growth, where it cannot be
  // refined and partial pivoting runs after it (57344: 6.2 s against LU's 3.4; 65536: 9.3 against 5.1),
  // while a draw it can refine gains 1.2x. float32 solves never: eps growth is 0.02-0.4 at 8192-16384,
  // above any matrix's rcond there, so every one fell back (0.6x torch).
  kernels::DensePreferences preferences() const override {
    // Measured on an H100 (bench/results/h100/inverse-batched-diagonal*.json and inverse-float32.json,
    // linv against torch.linalg.inv in one run):
    // - float64: the randomized LU and Newton steps (two n^3 products each) from 256 to 4096, 1.08-2.16x
    //   torch where partial pivoting is 0.95-1.14x; 1.9x slower than LU at 8192.
    // - float32: the same in float64, rounded (core's choose()), from 512 to 4096: 1.08-1.41x torch where
    //   float32's LU is 0.86-1.07x; at 256 the widening and rounding lose (0.99 against 0.87 ms).
    // - Gauss-Jordan from 16384 in float64 (0.280 against LU's 0.282 s there, and more accurate; LU is
    //   8 % faster at 8192); in float32 LU stays faster (0.276 against 0.407 s at 16384).
    const bool float64 = std::is_same_v<T, double>;
    const GpuAutoOrders& o = kGpuAutoOrders;  // the help texts say the same (describe_auto_method)
    return {.gauss_jordan_from = float64 ? o.gauss_jordan_from_float64 : std::numeric_limits<index>::max(),
            .triangles = TriangularInverse::GETS,
            .randomized_solve_from = float64 ? o.randomized_solve_from : std::numeric_limits<index>::max(),
            .randomized_solve_to = o.randomized_solve_to,
            .randomized_inverse_from = float64 ? o.randomized_inverse_from_float64 : o.randomized_inverse_from_float32,
            .randomized_inverse_to = o.randomized_inverse_to};
  }
  double norm1(ConstMatrixView<T> A) const override {
    if (A.empty()) return 0.0;
    Context& ctx = context_of(A.device());
    auto* d = ctx.scratch_as<double>(Slot::small, 1);
    const cudaStream_t s = ctx.main().stream;
    check(cudaMemsetAsync(d, 0, sizeof(double), s), "cudaMemset");
    launch::norm1(A.data(), A.rows(), A.cols(), ld_of(A.ld()), d, s);
    return read_back(d, s);
  }
  kernels::Magnitude magnitude(ConstMatrixView<T> A) const override {
    if (A.empty()) return {};
    return read_magnitude(context_of(A.device()), A.rows(), [&](unsigned long long* out, cudaStream_t s) {
      launch::magnitude(A.data(), A.rows(), A.cols(), ld_of(A.ld()), out, s);
    });
  }
  Structure detect_structure(ConstMatrixView<T> A) const override {
    const index n = A.rows();
    if (n < 2) return Structure::Diagonal;
    return read_structure(context_of(A.device()),
                          [&](int* flags, cudaStream_t s) { launch::structure_flags(A.data(), n, ld_of(A.ld()), flags, s); });
  }
  std::optional<std::pair<index, index>> first_asymmetric(ConstMatrixView<T> A) const override {
    // Exactly symmetric passes at once; anything else is judged with the CPU family's tolerance, n eps max|a|.
    const Structure s = detect_structure(A);
    if (s == Structure::Symmetric || s == Structure::Diagonal) return std::nullopt;
    const index n = A.rows();
    const double tol = static_cast<double>(n) * std::numeric_limits<T>::epsilon() * magnitude(A).max_abs;
    return read_first_asymmetric(context_of(A.device()), n, [&](unsigned long long* out, cudaStream_t stream) {
      launch::first_asymmetric(A.data(), n, ld_of(A.ld()), tol, out, stream);
    });
  }
  std::vector<T> diagonal(ConstMatrixView<T> A) const override { return diagonal_to_host(A); }
  void zero_triangle(MatrixView<T> A, Uplo which) const override {
    Context& ctx = context_of(A.device());
    launch::zero_triangle(A.data(), A.rows(), ld_of(A.ld()), which == Uplo::Upper, ctx.main().stream);
    ctx.synchronize();
  }
  void set_diagonal(MatrixView<T> A, T value) const override {
    Context& ctx = context_of(A.device());
    launch::set_diagonal(A.data(), std::min(A.rows(), A.cols()), ld_of(A.ld()), value, ctx.main().stream);
    ctx.synchronize();
  }
  void mirror_lower(MatrixView<T> A) const override {
    Context& ctx = context_of(A.device());
    launch::mirror_lower(A.data(), A.rows(), ld_of(A.ld()), ctx.main().stream);
    ctx.synchronize();
  }
  void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta,
            MatrixView<T> C) const override {
    Context& ctx = context_of(C.device());
    const index k = op_a == Op::None ? A.cols() : A.rows();
    blas::gemm<T>(ctx.main().blas, op_a, op_b, C.rows(), C.cols(), k, alpha, A.data(), ld_of(A.ld()), B.data(),
                  ld_of(B.ld()), beta, C.data(), ld_of(C.ld()));
    ctx.synchronize();
  }
  void syrk(Uplo uplo, Op op, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C) const override {
    Context& ctx = context_of(C.device());
    const index k = op == Op::None ? A.cols() : A.rows();
    blas::syrk<T>(ctx.main().blas, uplo, op, C.rows(), k, alpha, A.data(), ld_of(A.ld()), beta, C.data(),
                  ld_of(C.ld()));
    ctx.synchronize();
  }
  void trsm(Side side, Uplo uplo, Op op, Diag diag, T alpha, ConstMatrixView<T> A, MatrixView<T> B) const override {
    if (B.empty()) return;
    Context& ctx = context_of(A.device());
    blas::trsm<T>(ctx.main().blas, side, uplo, op, diag, B.rows(), B.cols(), alpha, A.data(), ld_of(A.ld()), B.data(),
                  ld_of(B.ld()));
    ctx.synchronize();
  }
  kernels::LuOutcome lu_factor(MatrixView<T> A, std::vector<int>& pivots, Pivoting pivoting) const override {
    const std::int64_t n = A.rows(), ld = ld_of(A.ld());
    pivots.assign(static_cast<std::size_t>(n), 0);
    if (n == 0) return {};
    Context& ctx = context_of(A.device());
    const Lane& lane = ctx.main();
    auto* d_piv = ctx.scratch_as<std::int64_t>(Slot::pivots, n);
    // [0]: max|A|, [1]: max|U| (bit patterns for atomicMax); then the first zero pivot (tournament)
    auto* d_small = ctx.scratch_as<double>(Slot::small, 3);
    int* d_zero = reinterpret_cast<int*>(d_small + 2);
    check(cudaMemsetAsync(d_small, 0, 2 * sizeof(double), lane.stream), "cudaMemset");
    check(cudaMemsetAsync(d_zero, 0x7F, sizeof(int), lane.stream), "cudaMemset");  // 0x7F7F7F7F: none yet
    launch::max_abs(A.data(), n, n, ld, /*upper=*/false, d_small, lane.stream);
    PhaseProfile profile(pivoting == Pivoting::Tournament ? "calu" : pivoting == Pivoting::Randomized ? "getrf, no pivoting" : "getrf");
    profile.begin("factor", lane.stream);
    int info = 0;
    if (pivoting == Pivoting::Tournament) {
      tournament_factor(ctx, A.data(), n, ld, d_piv, d_zero, profile);
    } else {
      // Without a pivot array cuSOLVER factors without interchanges (Pivoting::Randomized): the panel has
      // no search and runs 6x faster than with one at n = 4096 (docs/gpu-performance-notes.md).
      std::int64_t* ipiv = pivoting == Pivoting::Randomized ? nullptr : d_piv;
      std::size_t dev_bytes = 0, host_bytes = 0;
      check(cusolverDnXgetrf_bufferSize(lane.solver, ctx.params(), n, n, blas::data_type<T>(), A.data(), ld,
                                        blas::data_type<T>(), &dev_bytes, &host_bytes),
            "getrf workspace query");
      void* dev_work = ctx.scratch(Slot::solver, dev_bytes);
      void* host_work = ctx.host_scratch(host_bytes);
      check(cusolverDnXgetrf(lane.solver, ctx.params(), n, n, blas::data_type<T>(), A.data(), ld, ipiv,
                             blas::data_type<T>(), dev_work, dev_bytes, host_work, host_bytes, ctx.info()),
            "getrf");
    }
    profile.end("factor", lane.stream);
    launch::max_abs(A.data(), n, n, ld, /*upper=*/true, d_small + 1, lane.stream);
    std::vector<std::int64_t> p(static_cast<std::size_t>(n));
    check(cudaMemcpyAsync(p.data(), d_piv, n * sizeof(std::int64_t), cudaMemcpyDeviceToHost, lane.stream),
          "cudaMemcpy");
    double maxima[2];
    check(cudaMemcpyAsync(maxima, d_small, sizeof(maxima), cudaMemcpyDeviceToHost, lane.stream), "cudaMemcpy");
    if (pivoting == Pivoting::Tournament) {
      const int zero = read_back(d_zero, lane.stream);
      info = zero == 0x7F7F7F7F ? 0 : zero;
      for (std::size_t i = 0; i < p.size(); ++i) pivots[i] = static_cast<int>(p[i]) + 1;  // 0-based rows
    } else {
      info = read_back(ctx.info(), lane.stream);
      for (std::size_t i = 0; i < p.size(); ++i)  // getrf's are 1-based
        pivots[i] = pivoting == Pivoting::Randomized ? static_cast<int>(i) + 1 : static_cast<int>(p[i]);
    }
    profile.report();
    return {info, maxima[0] > 0 ? maxima[1] / maxima[0] : 0.0};
  }
  void lu_solve(ConstMatrixView<T> LU, const std::vector<int>& pivots, MatrixView<T> B, Op op) const override {
    if (B.empty()) return;
    Context& ctx = context_of(LU.device());
    if (B.cols() > launch::kFewRhs) {  // enough columns for cuSOLVER's trsm to run at its product rate
      const std::int64_t* d_piv = upload_pivots(ctx, pivots, /*zero_based=*/false);
      check(cusolverDnXgetrs(ctx.main().solver, ctx.params(), op == Op::Transpose ? CUBLAS_OP_T : CUBLAS_OP_N, LU.rows(), B.cols(), blas::data_type<T>(),
                             LU.data(), ld_of(LU.ld()), d_piv, blas::data_type<T>(), B.data(), ld_of(B.ld()),
                             ctx.info()),
            "getrs");
      ctx.synchronize();
      return;
    }
    const std::int64_t* perm = upload_permutation(ctx, pivots);
    PhaseProfile profile("lu solve");
    profile.begin("triangular solves (few right-hand sides)", ctx.main().stream);
    lu_solve_few<T>(ctx, LU, pivots, perm, B.data(), ld_of(B.ld()), static_cast<int>(B.cols()), op);
    profile.end("triangular solves (few right-hand sides)", ctx.main().stream);
    ctx.synchronize();
    profile.report();
  }
  void butterflies(ConstMatrixView<T> r, Side side, Op op, MatrixView<T> X) const override {
    const bool left = side == Side::Left, ascending = left == (op == Op::Transpose);
    const std::int64_t n = left ? X.rows() : X.cols(), other = left ? X.cols() : X.rows();
    Context& ctx = context_of(X.device());
    const int depth = static_cast<int>(r.cols());
    if (depth == 2 && n % 4 == 0) {  // half the memory traffic of a pass per level
      launch::butterfly_two_levels(r.data(), r.ld(), n, other, X.data(), ld_of(X.ld()), left, ascending,
                                   ctx.main().stream);
      ctx.synchronize();
      return;
    }
    for (int step = 0; step < depth; ++step) {
      const int level = ascending ? step : depth - 1 - step;
      launch::butterfly_level(r.data() + level * r.ld(), level, n, other, X.data(), ld_of(X.ld()), left,
                              /*mix_first=*/ascending, ctx.main().stream);
    }
    ctx.synchronize();
  }
  void lu_inverse(MatrixView<T> A, const std::vector<int>& pivots) const override {
    const std::int64_t n = A.rows(), ld = ld_of(A.ld());
    if (n == 0) return;
    Context& ctx = context_of(A.device());
    const Lane& lane = ctx.main();
    PhaseProfile profile("lu inverse");
    profile.begin("U^-1", lane.stream);
    triangular_inverse(A, Uplo::Upper, TriangularInverse::GETS, Diag::NonUnit);  // L below stays
    profile.end("U^-1", lane.stream);
    profile.begin("X L = U^-1 (getri)", lane.stream);
    // LAPACK getri, right to left: X(:, J) = (U^-1(:, J) - X(:, J+) L(J+, J)) L(J, J)^-1 for block columns J,
    // with the L(J, J)^-1 made first, all at once, and applied by gemm (2.5 ms for getri at 4096 with a
    // trsm per block, 2.0 ms so).
    const std::int64_t nb = inverse_block(n);
    T* work = ctx.scratch_as<T>(Slot::a, static_cast<std::size_t>(n * nb));
    T* product = ctx.scratch_as<T>(Slot::b, static_cast<std::size_t>(n * nb));
    const T* inverses = invert_diagonal_blocks<T>(ctx, A.data(), n, ld, nb, Uplo::Lower, Diag::Unit);
    const std::int64_t last = ((n - 1) / nb) * nb;
    for (std::int64_t j = last; j >= 0; j -= nb) {
      const std::int64_t jb = std::min(nb, n - j);
      launch::take_lower_block(A.data(), n, ld, j, jb, work, n, lane.stream);
      if (j + jb < n)
        blas::gemm<T>(lane.blas, Op::None, Op::None, n, jb, n - j - jb, T(-1), A.data() + (j + jb) * ld, ld,
                      work + (j + jb), n, T(1), A.data() + j * ld, ld);
      multiply_into<T>(lane, n, jb, jb, T(1), A.data() + j * ld, ld, inverses + (j / nb) * nb * nb, nb,
                       A.data() + j * ld, ld, product);
    }
    profile.end("X L = U^-1 (getri)", lane.stream);
    // A randomized LU's pivots are the identity: nothing to undo (0.46 ms of gathers at n = 4096).
    bool interchanged = false;
    for (std::size_t i = 0; i < pivots.size() && !interchanged; ++i) interchanged = pivots[i] != static_cast<int>(i) + 1;
    if (interchanged) {
      const std::int64_t* d_piv = upload_pivots(ctx, pivots, /*zero_based=*/true);
      auto* sources = ctx.scratch_as<std::int64_t>(Slot::c, static_cast<std::size_t>(n));
      profile.begin("column interchanges", lane.stream);
      launch::unpermute_columns(A.data(), n, n, ld, d_piv, sources, work, nb, lane.stream);
      profile.end("column interchanges", lane.stream);
    }
    ctx.synchronize();
    profile.report();
  }
  double lu_rcond(ConstMatrixView<T> LU, const std::vector<int>& pivots, double anorm) const override {
    const std::int64_t n = LU.rows();
    if (n == 0) return 1.0;
    Context& ctx = context_of(LU.device());
    const std::int64_t* perm = upload_permutation(ctx, pivots);
    PhaseProfile profile("lu rcond");
    profile.begin("block 1-norm estimate", ctx.main().stream);
    const double rcond =
        estimate_rcond<T>(ctx, n, anorm, [&](T* x, int t, Op op) { lu_solve_few<T>(ctx, LU, pivots, perm, x, n, t, op); });
    profile.end("block 1-norm estimate", ctx.main().stream);
    profile.report();
    return rcond;
  }
  index cholesky_factor(MatrixView<T> A) const override {
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
  void cholesky_solve(ConstMatrixView<T> L, MatrixView<T> B) const override {
    if (B.empty()) return;
    Context& ctx = context_of(L.device());
    if (B.cols() <= launch::kFewRhs) {
      cholesky_solve_few<T>(ctx, L, B.data(), ld_of(B.ld()), static_cast<int>(B.cols()));
    } else {
      check(cusolverDnXpotrs(ctx.main().solver, ctx.params(), CUBLAS_FILL_MODE_LOWER, L.rows(), B.cols(),
                             blas::data_type<T>(), L.data(), ld_of(L.ld()), blas::data_type<T>(), B.data(),
                             ld_of(B.ld()), ctx.info()),
            "potrs");
    }
    ctx.synchronize();
  }
  void cholesky_inverse(MatrixView<T> L, TriangularInverse how) const override {
    const std::int64_t n = L.rows();
    if (n == 0) return;
    Context& ctx = context_of(L.device());
    const Lane& lane = ctx.main();
    const int ni = static_cast<int>(n), ld = static_cast<int>(ld_of(L.ld()));
    int lwork = 0;
    if (how == TriangularInverse::Lapack) {  // cuSOLVER potri: trtri + lauum
      check(blas::pick<T>(cusolverDnSpotri_bufferSize, cusolverDnDpotri_bufferSize)(lane.solver, CUBLAS_FILL_MODE_LOWER,
                                                                                    ni, L.data(), ld, &lwork),
            "potri query");
      check(blas::pick<T>(cusolverDnSpotri, cusolverDnDpotri)(lane.solver, CUBLAS_FILL_MODE_LOWER, ni, L.data(), ld,
                                                              ctx.scratch_as<T>(Slot::solver, std::max(lwork, 1)),
                                                              lwork, ctx.info()),
            "potri");
    } else {  // the documents' pipeline: L^-1 by elimination on the triangle, then L^-T L^-1
      PhaseProfile profile("cholesky inverse (GETS)");
      profile.begin("triangular inverse", lane.stream);
      triangular_inverse(L, Uplo::Lower, TriangularInverse::GETS, Diag::NonUnit);
      profile.end("triangular inverse", lane.stream);
      profile.begin("lauum", lane.stream);
      lauum_lower<T>(ctx, L.data(), n, ld_of(L.ld()));
      profile.end("lauum", lane.stream);
      ctx.synchronize();
      profile.report();
    }
    launch::mirror_lower(L.data(), n, ld_of(L.ld()), lane.stream);
    ctx.synchronize();
  }
  double cholesky_rcond(ConstMatrixView<T> L, double anorm) const override {
    const std::int64_t n = L.rows();
    if (n == 0) return 1.0;
    Context& ctx = context_of(L.device());
    return estimate_rcond<T>(ctx, n, anorm, [&](T* x, int t, Op) {  // A is symmetric: A^-T = A^-1
      cholesky_solve_few<T>(ctx, L, x, n, t);
    });
  }
  void triangular_inverse(MatrixView<T> A, Uplo uplo, TriangularInverse how, Diag diag) const override {
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
      // the upper case is its transpose: U12 := -U11^-1 U12, U02 += U01 U12, U01 := U01 U11^-1. The
      // diagonal blocks are inverted first, all at once (three times trtri's flops, but cuBLAS's trsm runs
      // tens of times faster than cuSOLVER's trtri on a block: 1.0 ms for trtri at 1024 on an H200), and
      // every product is a gemm: U^-1 at 4096 took 4.1 ms with a trsm and trmm per block, 1.3 ms so
      // (docs/gpu-performance-notes.md).
      const std::int64_t nb = inverse_block(n);
      const T* inverses = invert_diagonal_blocks<T>(ctx, A.data(), n, ld, nb, uplo, diag);
      T* product = ctx.scratch_as<T>(Slot::b, static_cast<std::size_t>(nb * n));
      const bool upper = uplo == Uplo::Upper;
      for (std::int64_t k0 = 0; k0 < n; k0 += nb) {
        const std::int64_t b = std::min(nb, n - k0), rest = n - k0 - b;
        const T* inverse = inverses + (k0 / nb) * nb * nb;
        T* a11 = A.data() + k0 + k0 * ld;
        launch::copy_triangle(inverse, nb, a11, ld, b, upper, diag == Diag::NonUnit, lane.stream);
        if (upper) {
          T* a12 = a11 + b * ld;
          T* a01 = A.data() + k0 * ld;
          multiply_into<T>(lane, b, rest, b, T(-1), inverse, nb, a12, ld, a12, ld, product);
          if (k0 > 0) {
            if (rest > 0)
              blas::gemm<T>(lane.blas, Op::None, Op::None, k0, rest, b, T(1), a01, ld, a12, ld, T(1),
                            A.data() + (k0 + b) * ld, ld);
            multiply_into<T>(lane, k0, b, b, T(1), a01, ld, inverse, nb, a01, ld, product);
          }
        } else {
          T* a21 = a11 + b;
          T* a10 = A.data() + k0;
          multiply_into<T>(lane, rest, b, b, T(-1), a21, ld, inverse, nb, a21, ld, product);
          if (k0 > 0) {
            if (rest > 0)
              blas::gemm<T>(lane.blas, Op::None, Op::None, rest, k0, b, T(1), a21, ld, a10, ld, T(1),
                            A.data() + k0 + b, ld);
            multiply_into<T>(lane, b, k0, b, T(1), inverse, nb, a10, ld, a10, ld, product);
          }
        }
      }
    }
    ctx.synchronize();
  }
  double triangular_rcond(ConstMatrixView<T> A, Uplo uplo, Diag diag) const override {
    const std::int64_t n = A.rows();
    if (n == 0) return 1.0;
    Context& ctx = context_of(A.device());
    // ||A||_1 of the triangle alone: the other triangle may hold anything.
    auto* d = ctx.scratch_as<double>(Slot::small, 1);
    const cudaStream_t s = ctx.main().stream;
    check(cudaMemsetAsync(d, 0, sizeof(double), s), "cudaMemset");
    const launch::Part part{uplo == Uplo::Lower ? launch::Part::Lower : launch::Part::Upper, diag == Diag::Unit};
    launch::norm1(A.data(), n, n, ld_of(A.ld()), d, s, part);
    const double anorm = read_back(d, s);
    return estimate_rcond<T>(ctx, n, anorm, [&](T* x, int t, Op op) {
      int* sync = few_rhs_scratch<T>(ctx, n).sync;
      few_rhs_or_substitution<T>(
          ctx, x, n, n, t,
          [&] {
            launch::triangular_solve_few<T>(A.data(), n, ld_of(A.ld()), uplo == Uplo::Lower, op == Op::Transpose,
                                            diag == Diag::Unit, x, n, nullptr, x, n, t, sync, s);
          },
          [&] {
            blas::trsm<T>(ctx.main().blas, Side::Left, uplo, op, diag, n, t, T(1), A.data(), ld_of(A.ld()), x, n);
          });
    });
  }
  index qr_solve(MatrixView<T> A, MatrixView<T> B) const override {
    const std::int64_t n = A.rows(), nrhs = B.cols();
    if (n == 0) return 0;
    if (n > INT_MAX || nrhs > INT_MAX || ld_of(B.ld()) > INT_MAX || ld_of(A.ld()) > INT_MAX)
      throw InvalidArgument(fmt::format("QR solve: order {} with {} right-hand sides is beyond cuSOLVER's 32-bit ormqr",
                                        n, nrhs));
    Context& ctx = context_of(A.device());
    const Lane& lane = ctx.main();
    const int ni = static_cast<int>(n), ri = static_cast<int>(nrhs);
    const int lda = static_cast<int>(ld_of(A.ld())), ldb = static_cast<int>(ld_of(B.ld()));
    const DeviceBuffer tau(bytes_of(n, sizeof(T)), ctx.device());
    std::size_t dev_bytes = 0, host_bytes = 0;
    check(cusolverDnXgeqrf_bufferSize(lane.solver, ctx.params(), n, n, blas::data_type<T>(), A.data(), lda,
                                      blas::data_type<T>(), tau.p, blas::data_type<T>(), &dev_bytes, &host_bytes),
          "geqrf workspace query");
    check(cusolverDnXgeqrf(lane.solver, ctx.params(), n, n, blas::data_type<T>(), A.data(), lda, blas::data_type<T>(),
                           tau.p, blas::data_type<T>(), ctx.scratch(Slot::solver, dev_bytes), dev_bytes,
                           ctx.host_scratch(host_bytes), host_bytes, ctx.info()),
          "geqrf");
    wait(lane.stream);  // diagonal() copies on the default stream, which does not wait for ours
    const std::vector<T> r = diagonal(A);
    for (std::size_t i = 0; i < r.size(); ++i)
      if (r[i] == T(0)) return static_cast<index>(i) + 1;
    if (nrhs == 0) return 0;
    int lwork = 0;
    check(blas::pick<T>(cusolverDnSormqr_bufferSize, cusolverDnDormqr_bufferSize)(
              lane.solver, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, ni, ri, ni, A.data(), lda, tau.as<T>(), B.data(), ldb, &lwork),
          "ormqr workspace query");
    check(blas::pick<T>(cusolverDnSormqr, cusolverDnDormqr)(lane.solver, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, ni, ri, ni,
                                                            A.data(), lda, tau.as<T>(), B.data(), ldb,
                                                            ctx.scratch_as<T>(Slot::solver, std::max(lwork, 1)), lwork,
                                                            ctx.info()),
          "ormqr");
    blas::trsm<T>(lane.blas, Side::Left, Uplo::Upper, Op::None, Diag::NonUnit, n, nrhs, T(1), A.data(), lda, B.data(),
                  ldb);
    ctx.synchronize();
    return 0;
  }
  index gauss_jordan_inverse(MatrixView<T> A) const override {
    const index zero = cuda::gauss_jordan_inverse<T>(A);
    if (zero > 0) throw SingularMatrix(zero, 0.0, "Gauss-Jordan elimination");
    return 0;  // the smallest pivot is not tracked on the GPU
  }

  // Not on the GPU in this version: these refuse with the CPU as the way out, and runs() says so first.
  bool runs(kernels::Optional) const override { return false; }
  kernels::IterationOutcome gauss_seidel(ConstMatrixView<T> A, ConstMatrixView<T>, MatrixView<T>, double,
                                         int) const override {
    cpu_only("gauss-seidel", A.device());
  }
  index least_squares(MatrixView<T> A, MatrixView<T>, double) const override {
    cpu_only("least squares (lstsq)", A.device());
  }
  int svd(MatrixView<T> A, T*, MatrixView<T>, MatrixView<T>) const override { cpu_only("the SVD (pinv)", A.device()); }
  int largest_eigenpair(MatrixView<T> A, T&, T*) const override { cpu_only("the symmetric eigensolver", A.device()); }
  int orthonormalize(MatrixView<T> A) const override { cpu_only("QR orthonormalisation", A.device()); }

 private:
  [[noreturn]] static void cpu_only(const char* what, Device device) {
    throw InvalidArgument(
        fmt::format("{} runs on the CPU only in this version of linv; the matrix is on {}: move it "
                    "with .to(Device::cpu())",
                    what, device.name()));
  }
};

template <Real T>
const kernels::Dense<T>& dense() { return kernels::instance<Dense<T>>(); }
template const kernels::Dense<float>& dense<float>();
template const kernels::Dense<double>& dense<double>();

}  // namespace linv::cuda
