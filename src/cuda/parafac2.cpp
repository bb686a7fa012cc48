// PARAFAC2's passes on the GPU (src/kernels/fmri.hpp), driven by the loop in src/fmri/parafac2.cpp.
//
// As on the CPU (src/cpu/parafac2.cpp says why), each slab is reduced once to its float64 Gram matrix
// G_k = X_k X_k^T (I x I, by cuBLAS gemm on float64 column blocks), so iterations never touch the data.
// An iteration is then a handful of batched calls over all K slabs at once, never one library call per
// slab (the source thesis's GPU PARAFAC2 was slower than MATLAB on a CPU because each small SVD was a call
// of its own): M_k = A B_k, Z_k = G_k M_k, S_k = M_k^T Z_k and Y_k = Z_k S_k^(-1/2) as strided-batched
// gemms, the K small eigenproblems of S_k by one cusolverDnDsyevjBatched (F <= 32; LAPACK on the host
// beyond), then A_new = Y krv and W = Y^T A_new. One upload and one download per iteration, of a few
// kilobytes. The final P_k come from a QR of X_k^T M_k on the GPU and the SVD of its F x F R.
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cfloat>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common/lapack.hpp"
#include "cuda/backend.hpp"
#include "cuda/blas.hpp"
#include "cuda/context.hpp"
#include "cuda/kernels.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

constexpr std::int64_t kBatchedEigenMax = 32;  // cusolverDnDsyevjBatched's largest order

std::size_t doubles(std::int64_t count) { return bytes_of(count, sizeof(double)); }

// The parameters of cuSOLVER's batched Jacobi eigensolver: tolerance of float64's machine epsilon,
// eigenvalues sorted.
class JacobiParams {
 public:
  JacobiParams() {
    check(cusolverDnCreateSyevjInfo(&params_), "cusolverDnCreateSyevjInfo");
    (void)cusolverDnXsyevjSetTolerance(params_, DBL_EPSILON);
  }
  ~JacobiParams() { (void)cusolverDnDestroySyevjInfo(params_); }
  JacobiParams(const JacobiParams&) = delete;
  JacobiParams& operator=(const JacobiParams&) = delete;
  syevjInfo_t get() const { return params_; }

 private:
  syevjInfo_t params_ = nullptr;
};

template <Real T>
class GpuParafac2 final : public linv::kernels::Parafac2Steps<T> {
 public:
  GpuParafac2(const std::vector<ConstMatrixView<T>>& slabs, const linv::kernels::SlabShare& share)
      : slabs_(slabs), share_(share), lane_(context_of(slabs[0].device()).main()), I_(slabs[0].rows()),
        K_(static_cast<std::int64_t>(slabs.size())), grams_(doubles(I_ * I_ * K_), device()) {
    // G_k = X_k X_k^T in float64, by column blocks of about 256 MiB converted from float32 when needed
    const std::int64_t chunk = std::max<std::int64_t>(1, (std::int64_t{1} << 25) / I_);
    std::unique_ptr<DeviceBuffer> block;
    if constexpr (!std::is_same_v<T, double>) {
      std::int64_t widest = 0;
      for (const auto& X : slabs_) widest = std::max<std::int64_t>(widest, X.cols());
      block = std::make_unique<DeviceBuffer>(doubles(I_ * std::min(chunk, widest)), device());
    }
    for (std::int64_t k = 0; k < K_; ++k) {
      const ConstMatrixView<T>& X = slabs_[static_cast<std::size_t>(k)];
      double* G = gram(k);
      if constexpr (std::is_same_v<T, double>) {
        // gemm, not syrk: cuBLAS's syrk does not split a long inner dimension
        blas::gemm<double>(lane_.blas, Op::None, Op::Transpose, I_, I_, X.cols(), 1.0, X.data(), ld_of(X.ld()), X.data(),
                           ld_of(X.ld()), 0.0, G, I_);
      } else {
        for (std::int64_t j0 = 0; j0 < X.cols(); j0 += chunk) {
          const std::int64_t n = std::min(chunk, X.cols() - j0);
          launch::to_double<T>(X.data() + j0 * X.ld(), I_, n, ld_of(X.ld()), block->as<double>(), I_, lane_.stream);
          blas::gemm<double>(lane_.blas, Op::None, Op::Transpose, I_, I_, n, 1.0, block->as<double>(), I_,
                             block->as<double>(), I_, j0 == 0 ? 0.0 : 1.0, G, I_);
        }
      }
      launch::mirror_lower<double>(G, I_, I_, lane_.stream);  // exactly symmetric, as the CPU's
    }
    // block is freed on return, on the legacy stream, which does not wait for ours: without this the next
    // allocation (this thread's or another's) could take it while the last gemm still reads it. A suspect
    // for the NaN a float32 run met once under 16 concurrent sanitizer processes (not reproduced since).
    if (block) wait(lane_.stream);
  }
  ~GpuParafac2() override { (void)cudaStreamSynchronize(lane_.stream); }
  GpuParafac2(const GpuParafac2&) = delete;
  GpuParafac2& operator=(const GpuParafac2&) = delete;

  Matrix<double> gram_sum() override {
    DeviceBuffer total(doubles(I_ * I_), device());
    check(cudaMemsetAsync(total.p, 0, doubles(I_ * I_), lane_.stream), "cudaMemset");
    const double one = 1;
    for (std::int64_t k = 0; k < K_; ++k)
      check(cublasDaxpy_64(lane_.blas, I_ * I_, &one, gram(k), 1, total.as<double>(), 1), "axpy");
    sum(total.as<double>(), I_ * I_);
    Matrix<double> out = Matrix<double>::uninitialized(I_, I_);
    to_host(out.data(), total.p, doubles(I_ * I_), lane_.stream);
    wait(lane_.stream);
    return out;
  }

  void iterate(const Matrix<double>& A, const Matrix<double>& B, const Matrix<double>& krv, Matrix<double>& A_new,
               Matrix<double>& W, int iteration) override {
    const std::int64_t F = A.cols(), I = I_, K = K_, FK = F * K, first = share_.first * F, all = W.rows();
    if (!work_ || F_ != F) allocate(F);
    // the inputs in one upload: A (I x F), this process's blocks of B (F x F K) and rows of krv (F K x F)
    double* in = host_in_->as<double>();
    std::copy_n(A.data(), I * F, in);
    std::copy_n(B.data() + first * F, F * FK, in + I * F);
    for (std::int64_t c = 0; c < F; ++c) std::copy_n(krv.data() + c * all + first, FK, in + I * F + F * FK + c * FK);
    to_device(d_A_, in, doubles(I * F + 2 * F * FK), lane_.stream);
    const cublasHandle_t h = lane_.blas;
    // M_k = A B_k, Z_k = G_k M_k, S_k = M_k^T Z_k
    blas::gemm_strided_batched<double>(h, Op::None, Op::None, I, F, F, 1.0, d_A_, I, 0, d_B_, F, F * F, 0.0, d_M_, I,
                                       I * F, K);
    blas::gemm_strided_batched<double>(h, Op::None, Op::None, I, F, I, 1.0, gram(0), I, I * I, d_M_, I, I * F, 0.0, d_Z_,
                                       I, I * F, K);
    blas::gemm_strided_batched<double>(h, Op::Transpose, Op::None, F, F, I, 1.0, d_M_, I, I * F, d_Z_, I, I * F, 0.0,
                                       d_S_, F, F * F, K);
    // R_k = S_k^(-1/2) (pseudo-inverse root, as the CPU's SVD gives it); the failures are counted into
    // d_failed_ and summed with W, so that every process raises them alike
    if (F <= kBatchedEigenMax) {
      check(cusolverDnDsyevjBatched(lane_.solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, static_cast<int>(F),
                                    d_S_, static_cast<int>(F), d_values_, eigen_work_->as<double>(), eigen_lwork_,
                                    d_info_, jacobi_.get(), static_cast<int>(K)),
            "batched symmetric eigensolver (syevjBatched)");
      launch::inverse_roots(d_S_, d_values_, F, K, d_R_, lane_.stream);
      launch::count_nonzero(d_info_, K, d_failed_, lane_.stream);
    } else {
      host_roots(F);
    }
    // Y_k = Z_k R_k; A_new = Y krv summed over the processes; W = Y^T A_new in this process's rows of the
    // whole W, the others' zero, so that the sum assembles it exactly
    blas::gemm_strided_batched<double>(h, Op::None, Op::None, I, F, F, 1.0, d_Z_, I, I * F, d_R_, F, F * F, 0.0, d_Y_, I,
                                       I * F, K);
    blas::gemm<double>(h, Op::None, Op::None, I, F, FK, 1.0, d_Y_, I, d_krv_, FK, 0.0, d_Anew_, I);
    sum(d_Anew_, I * F);
    if (all != FK) check(cudaMemsetAsync(d_W_, 0, doubles(all * F), lane_.stream), "cudaMemset");
    blas::gemm<double>(h, Op::Transpose, Op::None, FK, F, I, 1.0, d_Y_, I, d_Anew_, I, 0.0, d_W_ + first, all);
    sum(d_W_, all * F + 1);  // W and the failures
    // A_new, W and the failures in one download
    double* out = host_out_->as<double>();
    to_host(out, d_Anew_, doubles(I * F + all * F + 1), lane_.stream);
    wait(lane_.stream);
    if (const double failed = out[I * F + all * F]; failed > 0)
      throw linv::kernels::parafac2_p_step_failure(F <= kBatchedEigenMax ? "cuSOLVER syevjBatched" : "LAPACK gesdd",
                                                   iteration, failed);
    std::copy_n(out, I * F, A_new.data());
    std::copy_n(out + I * F, all * F, W.data());
  }

  std::vector<Matrix<T>> polar_factors(const Matrix<double>& A, const Matrix<double>& B, double& nuclear) override {
    // P_k = the polar factor of Q_k = X_k^T M_k: Q_k = Q R (cuSOLVER geqrf and orgqr), R = U s V^T (LAPACK
    // on the F x F R), so Q_k = (Q U) s V^T is its thin SVD and P_k = Q (U V^T)
    const std::int64_t F = A.cols();
    Context& ctx = context_of(slabs_[0].device());
    std::vector<Matrix<T>> P;
    nuclear = 0;
    Matrix<double> M(I_, F);
    Matrix<T> Mt = Matrix<T>::uninitialized(I_, F), R(F, F), U(F, F), VT(F, F), UVT(F, F);
    DeviceBuffer d_M(static_cast<std::size_t>(I_ * F) * sizeof(T), device()), tau(static_cast<std::size_t>(F) * sizeof(T), device()),
        d_UVT(static_cast<std::size_t>(F * F) * sizeof(T), device());
    for (std::int64_t k = 0; k < K_; ++k) {
      const ConstMatrixView<T>& X = slabs_[static_cast<std::size_t>(k)];
      const std::int64_t J = X.cols();
      cpu::lapack::gemm<double>(Op::None, Op::None, 1.0, A.view(), B.view().block(0, (share_.first + k) * F, F, F), 0.0,
                                M.view());
      for (index e = 0; e < M.size(); ++e) Mt.data()[e] = static_cast<T>(M.data()[e]);
      to_device(d_M.p, Mt.data(), Mt.bytes(), lane_.stream);
      Matrix<T> Q = Matrix<T>::uninitialized(J, F, X.device());
      blas::gemm<T>(lane_.blas, Op::Transpose, Op::None, J, F, I_, T(1), X.data(), ld_of(X.ld()), d_M.as<T>(), I_, T(0),
                    Q.data(), J);
      std::size_t device_bytes = 0, host_bytes = 0;
      check(cusolverDnXgeqrf_bufferSize(lane_.solver, ctx.params(), J, F, blas::data_type<T>(), Q.data(), J,
                                        blas::data_type<T>(), tau.p, blas::data_type<T>(), &device_bytes, &host_bytes),
            "geqrf query");
      DeviceBuffer work(device_bytes, device());
      check(cusolverDnXgeqrf(lane_.solver, ctx.params(), J, F, blas::data_type<T>(), Q.data(), J, blas::data_type<T>(),
                             tau.p, blas::data_type<T>(), work.p, device_bytes, ctx.host_scratch(host_bytes), host_bytes,
                             ctx.info()),
            "QR factorization (geqrf)");
      check(cudaMemcpy2DAsync(R.data(), static_cast<std::size_t>(F) * sizeof(T), Q.data(), static_cast<std::size_t>(J) * sizeof(T),
                              static_cast<std::size_t>(F) * sizeof(T), static_cast<std::size_t>(F), cudaMemcpyDeviceToHost,
                              lane_.stream),
            "cudaMemcpy");
      orgqr(Q.data(), J, F, tau.as<T>(), ctx);  // returns complete
      for (std::int64_t c = 0; c < F; ++c)  // geqrf leaves Householder vectors below R's diagonal
        for (std::int64_t r = c + 1; r < F; ++r) R(r, c) = T(0);
      std::vector<T> s(static_cast<std::size_t>(F));
      if (cpu::lapack::gesdd<T>(R.view(), s.data(), U.view(), VT.view()) != 0)
        throw NoConvergence("PARAFAC2's final P-step (LAPACK gesdd)", 0, 0.0, 0.0,
                            "the SVD of slab " + std::to_string(k) + "'s F x F QR factor did not converge");
      for (T v : s) nuclear += static_cast<double>(v);
      cpu::lapack::gemm<T>(Op::None, Op::None, T(1), U.view(), VT.view(), T(0), UVT.view());
      to_device(d_UVT.p, UVT.data(), UVT.bytes(), lane_.stream);
      Matrix<T> Pk = Matrix<T>::uninitialized(J, F, X.device());
      blas::gemm<T>(lane_.blas, Op::None, Op::None, J, F, F, T(1), Q.data(), J, d_UVT.as<T>(), F, T(0), Pk.data(), J);
      wait(lane_.stream);  // Mt and UVT are reused
      P.push_back(std::move(Pk));
    }
    return P;
  }

 private:
  int device() const { return slabs_[0].device().index(); }
  double* gram(std::int64_t k) const { return grams_.as<double>() + k * I_ * I_; }

  // The iteration's buffers for rank F: one device block, one pinned block each way.
  void allocate(std::int64_t F) {
    const std::int64_t I = I_, K = K_, FK = F * K, all = F * share_.total;
    F_ = F;
    const std::int64_t total = I * F + F * FK + FK * F + 3 * I * FK + 2 * F * FK + FK + I * F + all * F + 1;
    work_ = std::make_unique<DeviceBuffer>(doubles(total) + static_cast<std::size_t>(K) * sizeof(int), device());
    double* p = work_->as<double>();
    const auto take = [&](std::int64_t n) {
      double* at = p;
      p += n;
      return at;
    };
    d_A_ = take(I * F), d_B_ = take(F * FK), d_krv_ = take(FK * F);  // uploaded together
    d_M_ = take(I * FK), d_Z_ = take(I * FK), d_Y_ = take(I * FK);
    d_S_ = take(F * FK), d_R_ = take(F * FK), d_values_ = take(FK);
    d_Anew_ = take(I * F), d_W_ = take(all * F), d_failed_ = take(1);  // downloaded together
    d_info_ = reinterpret_cast<int*>(p);
    host_in_ = std::make_unique<PinnedBuffer>(doubles(I * F + 2 * F * FK));
    host_out_ = std::make_unique<PinnedBuffer>(doubles(I * F + all * F + 1));
    if (F <= kBatchedEigenMax) {
      check(cusolverDnDsyevjBatched_bufferSize(lane_.solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER,
                                               static_cast<int>(F), d_S_, static_cast<int>(F), d_values_, &eigen_lwork_,
                                               jacobi_.get(), static_cast<int>(K)),
            "syevjBatched query");
      eigen_work_ = std::make_unique<DeviceBuffer>(doubles(std::max(eigen_lwork_, 1)), device());
    }
  }

  // R_k = S_k^(-1/2) by LAPACK on the host, for ranks beyond the batched eigensolver; the failures into
  // d_failed_.
  void host_roots(std::int64_t F) {
    Matrix<double> S = Matrix<double>::uninitialized(F, F * K_), R(F, F * K_ + 1);
    to_host(S.data(), d_S_, S.bytes(), lane_.stream);
    wait(lane_.stream);
    double& failed = R(0, F * K_);
    for (std::int64_t k = 0; k < K_; ++k) {
      const Matrix<double> Sk = Matrix<double>::copy_of(S.view().block(0, k * F, F, F));
      if (!cpu::lapack::inverse_root(Sk, R.view().block(0, k * F, F, F))) ++failed;
    }
    to_device(d_R_, R.data(), doubles(F * F * K_), lane_.stream);
    to_device(d_failed_, &failed, doubles(1), lane_.stream);
    wait(lane_.stream);  // R is freed on return
  }

  // values := their sum over the share's processes (device memory, on the lane's stream).
  void sum(double* values, std::int64_t count) const {
    if (share_.sum) share_.sum->sum(values, static_cast<std::size_t>(count), lane_.stream);
  }

  void orgqr(T* Q, std::int64_t J, std::int64_t F, const T* tau, Context& ctx) {
    const int m = static_cast<int>(J), n = static_cast<int>(F);
    int lwork = 0;
    check(blas::pick<T>(cusolverDnSorgqr_bufferSize, cusolverDnDorgqr_bufferSize)(lane_.solver, m, n, n, Q, m, tau,
                                                                                &lwork),
          "orgqr query");
    DeviceBuffer work(static_cast<std::size_t>(std::max(lwork, 1)) * sizeof(T), device());
    check(blas::pick<T>(cusolverDnSorgqr, cusolverDnDorgqr)(lane_.solver, m, n, n, Q, m, tau, work.as<T>(), lwork,
                                                            ctx.info()),
          "orgqr");
    wait(lane_.stream);  // work is freed on return (and R's copy is read by the caller)
  }

  std::vector<ConstMatrixView<T>> slabs_;
  linv::kernels::SlabShare share_;
  const Lane& lane_;
  std::int64_t I_, K_, F_ = 0;
  DeviceBuffer grams_;  // G_k, I x I each, one after another
  std::unique_ptr<DeviceBuffer> work_, eigen_work_;
  std::unique_ptr<PinnedBuffer> host_in_, host_out_;
  double *d_A_ = nullptr, *d_B_ = nullptr, *d_krv_ = nullptr, *d_M_ = nullptr, *d_Z_ = nullptr, *d_Y_ = nullptr,
         *d_S_ = nullptr, *d_R_ = nullptr, *d_values_ = nullptr, *d_Anew_ = nullptr, *d_W_ = nullptr,
         *d_failed_ = nullptr;
  int* d_info_ = nullptr;
  int eigen_lwork_ = 0;
  JacobiParams jacobi_;
};

}  // namespace

template <Real T>
std::unique_ptr<linv::kernels::Parafac2Steps<T>> parafac2_steps(const std::vector<ConstMatrixView<T>>& slabs,
                                                                const linv::kernels::SlabShare& share) {
  return std::make_unique<GpuParafac2<T>>(slabs, share);
}

template std::unique_ptr<linv::kernels::Parafac2Steps<float>> parafac2_steps<float>(
    const std::vector<ConstMatrixView<float>>&, const linv::kernels::SlabShare&);
template std::unique_ptr<linv::kernels::Parafac2Steps<double>> parafac2_steps<double>(
    const std::vector<ConstMatrixView<double>>&, const linv::kernels::SlabShare&);

}  // namespace linv::cuda
