// ADL's passes on the GPU (src/kernels/fmri.hpp), driven by the loop in src/fmri/adl.cpp. Per outer
// iteration: D^T X and X S^T by cuBLAS (the only passes over X), all coefficient steps in one kernel
// (src/cuda/adl.cu) with S in registers, S S^T by cuBLAS, and all dictionary steps in one single-block
// kernel that also forms the next D^T D. The host waits twice per iteration, for the K x K matrices whose
// largest eigenvalues it computes (LAPACK, as on the CPU), and each wait overlaps a pass over X queued
// before it.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "cuda/adl.hpp"
#include "cuda/blas.hpp"
#include "cuda/context.hpp"
#include "cuda/backend.hpp"
#include "cuda/kernels.hpp"

namespace linv::cuda {
namespace {

namespace ak = adl_kernels;

template <Real T>
class GpuAdl final : public linv::kernels::AdlSteps<T> {
 public:
  GpuAdl(ConstMatrixView<T> X, Matrix<T> D0, ConstMatrixView<T> task, linv::kernels::AdlConstraints constraints,
         const linv::kernels::GridSum* sum)
      : X_(X), lane_(context_of(X.device()).main()), n_(X.rows()), N_(X.cols()), K_(D0.cols()), M_(task.cols()),
        constraints_(constraints), sum_(sum), D_(D0.to(X.device())), S_(K_, N_, X.device()),
        DtX_(Matrix<T>::uninitialized(K_, N_, X.device())), G_(K_, K_, X.device()), H_(K_, K_, X.device()),
        P_(n_, K_, X.device()), V_(n_, K_, X.device()),
        task_(M_ > 0 ? Matrix<T>::copy_of(task).to(X.device()) : Matrix<T>()), profile_("ADL") {
    check(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~GpuAdl() override {
    if (cudaStreamSynchronize(lane_.stream) == cudaSuccess) {
      try {
        profile_.report();
      } catch (...) {  // a profile that cannot be read is not worth failing the result for
      }
    }
    (void)cudaEventDestroy(ready_);
  }
  GpuAdl(const GpuAdl&) = delete;
  GpuAdl& operator=(const GpuAdl&) = delete;

  double norm_squared() override {
    const int blocks = ak::blocks_for(n_ * N_);
    DeviceBuffer partial(bytes_of(blocks, sizeof(double)), device()), total(sizeof(double), device());
    ak::sum_of_squares<T>(X_.data(), n_, N_, ld_of(X_.ld()), partial.as<double>(), lane_.stream);
    ak::sum_partials(partial.as<double>(), blocks, 1, total.as<double>(), lane_.stream);
    sum(total.as<double>(), 1);
    return read_back(total.as<double>(), lane_.stream);
  }

  void gram(Matrix<T>& G) override {
    if (!host_gram_) {  // the first iteration's; later ones come with the dictionary steps
      blas::gemm<T>(lane_.blas, Op::Transpose, Op::None, K_, K_, n_, T(1), D_.data(), n_, D_.data(), n_, T(0),
                    G_.data(), K_);
      host_gram_.emplace(bytes_of(K_ * K_, sizeof(T)));
      to_host(host_gram_->p, G_.data(), bytes_of(K_ * K_, sizeof(T)), lane_.stream);
      wait(lane_.stream);
    }
    profile_.begin("D^T X", lane_.stream);
    blas::gemm<T>(lane_.blas, Op::Transpose, Op::None, K_, N_, n_, T(1), D_.data(), n_, X_.data(), ld_of(X_.ld()), T(0),
                  DtX_.data(), K_);
    profile_.end("D^T X", lane_.stream);
    std::copy_n(host_gram_->as<T>(), K_ * K_, G.data());  // meanwhile the host finds G's largest eigenvalue
  }

  void coefficient_steps(T inv_c, T tau, int steps, std::vector<linv::kernels::AdlCoefficientSums>& sums,
                         Matrix<T>& H) override {
    const int blocks = ak::blocks_for(N_), count = steps * ak::kCoefficientSums;
    const bool fused = K_ <= ak::kFusedMaxAtoms;
    DeviceBuffer partial(bytes_of(blocks, sizeof(double) * ak::kCoefficientSums * (fused ? ak::kFusedMaxSteps : 1)),
                         device()),
        totals(bytes_of(count, sizeof(double)), device());
    std::unique_ptr<DeviceBuffer> W;  // G S, for dictionaries too large for the fused kernel
    if (!fused) W = std::make_unique<DeviceBuffer>(bytes_of(K_ * N_, sizeof(T)), device());
    profile_.begin("coefficient steps", lane_.stream);
    for (int done = 0; done < steps;) {
      const int now = fused ? std::min(steps - done, ak::kFusedMaxSteps) : 1;
      if (fused) {
        ak::fused_coefficients<T>(G_.data(), static_cast<int>(K_), DtX_.data(), S_.data(), N_, now, inv_c, tau,
                                  partial.as<double>(), lane_.stream);
      } else {
        blas::gemm<T>(lane_.blas, Op::None, Op::None, K_, N_, K_, T(1), G_.data(), K_, S_.data(), K_, T(0), W->as<T>(),
                      K_);
        ak::coefficient_pass<T>(DtX_.data(), W->as<T>(), S_.data(), K_, N_, inv_c, tau, partial.as<double>(),
                                lane_.stream);
      }
      ak::sum_partials(partial.as<double>(), blocks, now * ak::kCoefficientSums,
                       totals.as<double>() + done * ak::kCoefficientSums, lane_.stream);
      done += now;
    }
    profile_.end("coefficient steps", lane_.stream);
    sum(totals.as<double>(), count);
    profile_.begin("S S^T", lane_.stream);
    // gemm, not syrk: cuBLAS's syrk of a K x K result over N ~ 1e6 took 73 ms (H100), gemm splits the sum;
    // the lower triangle is then mirrored so that H is exactly symmetric, as on the CPU
    blas::gemm<T>(lane_.blas, Op::None, Op::Transpose, K_, K_, N_, T(1), S_.data(), K_, S_.data(), K_, T(0), H_.data(),
                  K_);
    sum(H_.data(), K_ * K_);  // before the mirror: exactly symmetric whatever order the sum added in
    launch::mirror_lower<T>(H_.data(), K_, K_, lane_.stream);
    profile_.end("S S^T", lane_.stream);
    PinnedBuffer& host = pinned(host_coefficients_, bytes_of(count, sizeof(double)) + bytes_of(K_ * K_, sizeof(T)));
    T* host_H = reinterpret_cast<T*>(host.as<double>() + count);
    to_host(host.p, totals.p, bytes_of(count, sizeof(double)), lane_.stream);
    to_host(host_H, H_.data(), bytes_of(K_ * K_, sizeof(T)), lane_.stream);
    check(cudaEventRecord(ready_, lane_.stream), "cudaEventRecord");
    profile_.begin("X S^T", lane_.stream);  // runs while the host finds H's largest eigenvalue
    blas::gemm<T>(lane_.blas, Op::None, Op::Transpose, n_, K_, N_, T(1), X_.data(), ld_of(X_.ld()), S_.data(), K_, T(0),
                  P_.data(), n_);
    sum(P_.data(), n_ * K_);
    profile_.end("X S^T", lane_.stream);
    check(cudaEventSynchronize(ready_), "event synchronization");
    sums.resize(static_cast<std::size_t>(steps));
    for (int s = 0; s < steps; ++s) {
      const double* q = host.as<double>() + s * ak::kCoefficientSums;
      sums[static_cast<std::size_t>(s)] = {q[0], q[1], q[2], q[3]};
    }
    std::copy_n(host_H, K_ * K_, H.data());
  }

  void dictionary_steps(T inv_c, int steps, std::vector<linv::kernels::AdlDictionarySums>& sums) override {
    const int count = 2 * (steps + 1);
    DeviceBuffer totals(bytes_of(count, sizeof(double)), device());
    profile_.begin("dictionary steps", lane_.stream);
    ak::dictionary_steps<T>(D_.data(), P_.data(), H_.data(), n_, static_cast<int>(K_), M_ > 0 ? task_.data() : nullptr,
                            static_cast<int>(M_), constraints_.c, constraints_.c_d, steps, inv_c, V_.data(),
                            totals.as<double>(), G_.data(), lane_.stream);
    profile_.end("dictionary steps", lane_.stream);
    PinnedBuffer& host = pinned(host_dictionary_, bytes_of(count, sizeof(double)));
    to_host(host.p, totals.p, bytes_of(count, sizeof(double)), lane_.stream);
    to_host(host_gram_->p, G_.data(), bytes_of(K_ * K_, sizeof(T)), lane_.stream);  // for the next gram()
    wait(lane_.stream);
    sums.resize(static_cast<std::size_t>(steps + 1));
    for (int s = 0; s <= steps; ++s) sums[static_cast<std::size_t>(s)] = {host.as<double>()[2 * s], host.as<double>()[2 * s + 1]};
  }

  Matrix<T> take_dictionary() override { return std::move(D_); }
  Matrix<T> take_codes() override { return std::move(S_); }

 private:
  int device() const { return X_.device().index(); }
  // values := their sum over the job's processes (device memory, on the lane's stream; nothing alone).
  template <class V>
  void sum(V* values, std::int64_t count) const {
    if (sum_) sum_->sum(values, static_cast<std::size_t>(count), lane_.stream);
  }
  // `buffer`, (re)made to hold at least `bytes`: page-locking is slow, so it happens once per run.
  static PinnedBuffer& pinned(std::unique_ptr<PinnedBuffer>& buffer, std::size_t bytes) {
    if (!buffer || buffer->bytes < bytes) buffer = std::make_unique<PinnedBuffer>(bytes);
    return *buffer;
  }

  ConstMatrixView<T> X_;
  const Lane& lane_;
  std::int64_t n_, N_, K_, M_;
  linv::kernels::AdlConstraints constraints_;
  const linv::kernels::GridSum* sum_;
  Matrix<T> D_, S_, DtX_, G_, H_, P_, V_, task_;
  std::optional<PinnedBuffer> host_gram_;  // D^T D of the current D, on the host once known
  std::unique_ptr<PinnedBuffer> host_coefficients_, host_dictionary_;  // what each kind of step returns
  cudaEvent_t ready_ = nullptr;
  PhaseProfile profile_;
};

}  // namespace

template <Real T>
std::unique_ptr<linv::kernels::AdlSteps<T>> adl_steps(ConstMatrixView<T> X, Matrix<T> D0, ConstMatrixView<T> task,
                                                      linv::kernels::AdlConstraints constraints,
                                                      const linv::kernels::GridSum* sum) {
  return std::make_unique<GpuAdl<T>>(X, std::move(D0), task, constraints, sum);
}

template std::unique_ptr<linv::kernels::AdlSteps<float>> adl_steps<float>(ConstMatrixView<float>, Matrix<float>,
                                                                          ConstMatrixView<float>,
                                                                          linv::kernels::AdlConstraints,
                                                                          const linv::kernels::GridSum*);
template std::unique_ptr<linv::kernels::AdlSteps<double>> adl_steps<double>(ConstMatrixView<double>, Matrix<double>,
                                                                            ConstMatrixView<double>,
                                                                            linv::kernels::AdlConstraints,
                                                                            const linv::kernels::GridSum*);

}  // namespace linv::cuda
