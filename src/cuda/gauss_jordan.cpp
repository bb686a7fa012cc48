// Blocked in-place Gauss-Jordan inversion with partial pivoting on the GPU, with look-ahead.
//
// A Gauss-Jordan step on block column k turns it into [-A01 A11^-1; A11^-1; -A21 A11^-1] and updates
// every other column with one matrix product (see src/core/gauss_jordan.cpp). With partial pivoting the
// pivots are exactly those of an LU factorization of the panel's lower part, [A11; A21] = P [L11; L21] U11,
// and then A11^-1 = U11^-1 L11^-1 and A21 A11^-1 = L21 L11^-1. So the panel is one cuSOLVER getrf on a
// tall panel plus triangular solves: no host round trip and no launch per column.
//
// Look-ahead: the next panel's columns are updated first, and the next panel is factored on the side
// stream while the main stream runs the large update of all the other columns. Each step's swaps and
// update touch only columns the side stream is not working on.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "cuda/blas.hpp"
#include "cuda/context.hpp"
#include "cuda/backend.hpp"
#include "cuda/kernels.hpp"

namespace linv::cuda {
namespace {


class Event {
 public:
  Event() { check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate"); }
  ~Event() { (void)cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) { check(cudaEventRecord(event_, s), "cudaEventRecord"); }
  void wait_in(cudaStream_t s) { check(cudaStreamWaitEvent(s, event_, 0), "cudaStreamWaitEvent"); }

 private:
  cudaEvent_t event_{};
};

// Panel width: wide enough that the update runs near the matrix-product rate, narrow enough that the
// panel (about 2 n nb^2 extra flops in all) stays hidden behind it. LINV_GJ_BLOCK overrides it, for
// tuning on a new GPU (scripts/bench-gpu sweeps it).
std::int64_t default_block(std::int64_t n) {
  if (const char* env = std::getenv("LINV_GJ_BLOCK")) {
    const long long b = std::atoll(env);
    if (b > 0) return b;
  }
  if (n >= 8192) return 512;
  if (n >= 2048) return 256;
  return 128;
}

}  // namespace

template <Real T>
index gauss_jordan_inverse(MatrixView<T> A, index block) {
  const std::int64_t n = A.rows(), ld = std::max<std::int64_t>(A.ld(), 1);
  if (n == 0) return 0;
  Context& ctx = Context::get(A.device().index());
  ctx.activate();
  const Lane& main = ctx.main();
  const Lane& side = ctx.side();
  const std::int64_t nb = std::min<std::int64_t>(block > 0 ? block : default_block(n), n);
  const std::int64_t panels = (n + nb - 1) / nb;

  auto* pivots = ctx.scratch_as<std::int64_t>(Slot::pivots, n);     // 0-based matrix rows
  auto* local = ctx.scratch_as<std::int64_t>(Slot::d, nb);          // one panel's getrf pivots
  auto* infos = ctx.scratch_as<int>(Slot::small, panels);           // one getrf info per panel
  T* row_block = ctx.scratch_as<T>(Slot::a, static_cast<std::size_t>(nb * n));
  T* lu11 = ctx.scratch_as<T>(Slot::b, static_cast<std::size_t>(nb * nb));
  // One panel's interchanges as a gather plan (built on the side stream, applied on the main one; the
  // side stream builds the next plan only after next_ready, when the main stream is done with this one).
  auto* plan = ctx.scratch_as<std::int64_t>(Slot::c, static_cast<std::size_t>(4 * nb + 1));
  std::int64_t* plan_touched = plan;
  std::int64_t* plan_source = plan + 2 * nb;
  int* plan_count = reinterpret_cast<int*>(plan + 4 * nb);
  std::size_t dev_bytes = 0, host_bytes = 0;
  check(cusolverDnXgetrf_bufferSize(side.solver, ctx.params(), n, nb, blas::data_type<T>(), A.data(), ld,
                                    blas::data_type<T>(), &dev_bytes, &host_bytes),
        "getrf workspace query");
  void* dev_work = ctx.scratch(Slot::side_solver, dev_bytes);
  void* host_work = ctx.host_scratch(host_bytes);
  PhaseProfile profile("gauss-jordan (side stream: panels; main stream: interchanges and copies, updates)");

  // Factor panel [k, k + b) into its Gauss-Jordan transformation below its top (rows k..), on the side
  // stream. The rows above, -A01 U11^-1 L11^-1, are the main stream's (transform_above): they are two
  // triangular solves as long as the panel is tall that need not hold up the next panel.
  auto factor_panel = [&](std::int64_t k, std::int64_t b, std::int64_t step) {
    profile.begin("panels", side.stream);
    T* panel = A.data() + k + k * ld;  // rows k.., the part that is pivoted
    check(cusolverDnXgetrf(side.solver, ctx.params(), n - k, b, blas::data_type<T>(), panel, ld, local,
                           blas::data_type<T>(), dev_work, dev_bytes, host_work, host_bytes, infos + step),
          "getrf (panel)");
    launch::panel_pivots(local, pivots, k, b, side.stream);
    launch::interchange_plan(pivots, k, k + b, plan_touched, plan_source, plan_count, side.stream);
    check(cudaMemcpy2DAsync(lu11, b * sizeof(T), panel, ld * sizeof(T), b * sizeof(T), b, cudaMemcpyDeviceToDevice,
                            side.stream),
          "cudaMemcpy2D");
    // A11^-1 = U11^-1 L11^-1 in place of the diagonal block
    launch::fill_identity(panel, b, ld, side.stream);
    blas::trsm<T>(side.blas, Side::Left, Uplo::Upper, Op::None, Diag::NonUnit, b, b, T(1), lu11, b, panel, ld);
    blas::trsm<T>(side.blas, Side::Right, Uplo::Lower, Op::None, Diag::Unit, b, b, T(1), lu11, b, panel, ld);
    // below: -A21 A11^-1 = -L21 L11^-1
    blas::trsm<T>(side.blas, Side::Right, Uplo::Lower, Op::None, Diag::Unit, n - k - b, b, T(-1), lu11, b, panel + b,
                  ld);
    profile.end("panels", side.stream);
  };
  // Rows above panel [k, k + b): -A01 A11^-1 = -A01 U11^-1 L11^-1, on the main stream (lu11 still holds
  // this panel's factors: the side stream overwrites it only after next_ready).
  auto transform_above = [&](std::int64_t k, std::int64_t b) {
    T* above = A.data() + k * ld;
    blas::trsm<T>(main.blas, Side::Right, Uplo::Upper, Op::None, Diag::NonUnit, k, b, T(-1), lu11, b, above, ld);
    blas::trsm<T>(main.blas, Side::Right, Uplo::Lower, Op::None, Diag::Unit, k, b, T(1), lu11, b, above, ld);
  };

  Event start, next_ready, panel_done;
  check(cudaMemsetAsync(infos, 0, panels * sizeof(int), main.stream), "cudaMemset");
  start.record(main.stream);
  start.wait_in(side.stream);
  factor_panel(0, nb, 0);
  panel_done.record(side.stream);

  for (std::int64_t step = 0, k = 0; k < n; ++step, k += nb) {
    const std::int64_t b = std::min(nb, n - k);
    const std::int64_t k2 = k + b, b2 = std::min(nb, n - k2);  // the next panel (b2 == 0: none)
    T* panel = A.data() + k * ld;
    panel_done.wait_in(main.stream);
    profile.begin("interchanges+copies", main.stream);
    // The panel's row interchanges, in every other column.
    const int max_count = static_cast<int>(2 * b);
    launch::apply_interchange_plan(A.data(), ld, 0, k, plan_touched, plan_source, plan_count, max_count, main.stream);
    launch::apply_interchange_plan(A.data(), ld, k + b, n, plan_touched, plan_source, plan_count, max_count,
                                    main.stream);
    // Copy the block row of the other columns out and zero it: then one product updates every row.
    // row_block's columns: [0, k) then [k + b, n).
    check(cudaMemcpy2DAsync(row_block, b * sizeof(T), A.data() + k, ld * sizeof(T), b * sizeof(T), k,
                            cudaMemcpyDeviceToDevice, main.stream),
          "cudaMemcpy2D");
    check(cudaMemcpy2DAsync(row_block + k * b, b * sizeof(T), A.data() + k + (k + b) * ld, ld * sizeof(T),
                            b * sizeof(T), n - k - b, cudaMemcpyDeviceToDevice, main.stream),
          "cudaMemcpy2D");
    check(cudaMemset2DAsync(A.data() + k, ld * sizeof(T), 0, b * sizeof(T), k, main.stream), "cudaMemset2D");
    check(cudaMemset2DAsync(A.data() + k + (k + b) * ld, ld * sizeof(T), 0, b * sizeof(T), n - k - b, main.stream),
          "cudaMemset2D");
    profile.end("interchanges+copies", main.stream);
    profile.begin("updates", main.stream);
    transform_above(k, b);
    if (b2 > 0) {
      blas::gemm<T>(main.blas, Op::None, Op::None, n, b2, b, T(1), panel, ld, row_block + k * b, b, T(1),
                    A.data() + k2 * ld, ld);
      next_ready.record(main.stream);
      next_ready.wait_in(side.stream);
      factor_panel(k2, b2, step + 1);
      panel_done.record(side.stream);
    }
    blas::gemm<T>(main.blas, Op::None, Op::None, n, k, b, T(1), panel, ld, row_block, b, T(1), A.data(), ld);
    const std::int64_t rest = n - k2 - b2;
    blas::gemm<T>(main.blas, Op::None, Op::None, n, rest, b, T(1), panel, ld, row_block + (k + b2) * b, b, T(1),
                  A.data() + (k2 + b2) * ld, ld);
    profile.end("updates", main.stream);
  }
  // (P A)^-1 = A^-1 P^T: interchange the columns back, last first.
  auto* sources = ctx.scratch_as<std::int64_t>(Slot::c, static_cast<std::size_t>(n));
  launch::unpermute_columns(A.data(), n, n, ld, pivots, sources, row_block, nb, main.stream);
  std::vector<int> info(static_cast<std::size_t>(panels));
  check(cudaMemcpyAsync(info.data(), infos, panels * sizeof(int), cudaMemcpyDeviceToHost, main.stream), "cudaMemcpy");
  ctx.synchronize();
  profile.report();
  for (std::int64_t s = 0; s < panels; ++s)
    if (info[s] > 0) return s * nb + info[s];
  return 0;
}

template index gauss_jordan_inverse<float>(MatrixView<float>, index);
template index gauss_jordan_inverse<double>(MatrixView<double>, index);

}  // namespace linv::cuda
