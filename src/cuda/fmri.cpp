// The fMRI family on the GPU (src/kernels/fmri.hpp): Batch-OMP, and k-SVD's passes for the loop of
// src/fmri/fmri.cpp (same choices, same random atom order, same clearing rule as the CPU) with the codes
// held as a dense K x N matrix Gamma on the device, so that an atom's update is two passes over X by cuBLAS
// gemv (X g and X^T a) plus small kernels (src/cuda/fmri.cu). The exact update forms the users' error
// matrix E in float64 and takes its leading singular pair from the largest eigenpair of the smaller Gram
// matrix, as the CPU does (LAPACK syevr on the host for that small matrix).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "common/lapack.hpp"
#include "cuda/backend.hpp"
#include "cuda/blas.hpp"
#include "cuda/context.hpp"
#include "cuda/fmri.hpp"
#include "cuda/kernels.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

namespace fk = fmri_kernels;

// G = D^T D (both triangles, exactly symmetric as OMP's CPU code has it) and DtX = D^T X, queued on `lane`.
template <Real T>
void gram_and_correlations(const Lane& lane, const T* D, std::int64_t ldd, std::int64_t n, std::int64_t K, const T* X,
                           std::int64_t ldx, std::int64_t N, T* G, std::int64_t ldg, T* DtX, std::int64_t ldc) {
  blas::syrk<T>(lane.blas, Uplo::Lower, Op::Transpose, K, n, T(1), D, ldd, T(0), G, ldg);
  launch::mirror_lower<T>(G, K, ldg, lane.stream);
  blas::gemm<T>(lane.blas, Op::Transpose, Op::None, K, N, n, T(1), D, ldd, X, ldx, T(0), DtX, ldc);
}

// OMP's outputs for N signals (values of value_size bytes).
struct OmpOutputs {
  DeviceBuffer count, atoms, values, scratch;
  OmpOutputs(fmri::OmpGpuKernel kernel, std::int64_t K, int T0, std::int64_t N, std::size_t value_size, int device)
      : count(bytes_of(N, sizeof(std::int64_t)), device), atoms(bytes_of(N * T0, sizeof(std::int64_t)), device),
        values(bytes_of(N * T0, value_size), device), scratch(fk::omp_scratch_bytes(kernel, K, T0, N), device) {}
};

// The codes of OMP's slots (T0 per signal) in host memory.
template <Real T>
fmri::SparseCodes<T> codes_to_host(const OmpOutputs& out, std::int64_t K, int T0, std::int64_t N, cudaStream_t stream) {
  // straight into the result's arrays (index is std::int64_t, as the kernels write)
  fmri::SparseCodes<T> c{K, N, T0, std::vector<index>(static_cast<std::size_t>(N)),
                         std::vector<index>(static_cast<std::size_t>(N * T0)),
                         std::vector<T>(static_cast<std::size_t>(N * T0))};
  to_host(c.count.data(), out.count.p, bytes_of(N, sizeof(index)), stream);
  to_host(c.atom.data(), out.atoms.p, bytes_of(N * T0, sizeof(index)), stream);
  to_host(c.value.data(), out.values.p, bytes_of(N * T0, sizeof(T)), stream);
  wait(stream);
  return c;
}

template <Real T>
fmri::SparseCodes<T> batch_omp(ConstMatrixView<T> G, ConstMatrixView<T> DtX, ConstMatrixView<double> norms,
                               const fmri::OmpOptions& o) {
  const fmri::OmpGpuKernel kernel = o.gpu_kernel;
  const std::int64_t K = G.rows(), N = DtX.cols();
  const int T0 = static_cast<int>(o.sparsity);
  Context& ctx = context_of(G.device());
  const cudaStream_t stream = ctx.main().stream;
  if (kernel == fmri::OmpGpuKernel::Thread && !fk::thread_kernel_fits(K, T0))
    throw InvalidArgument(fmt::format("Batch-OMP's thread-per-signal kernel handles at most {} atoms and sparsity {}; "
                                      "got {} and {}",
                                      fk::kThreadMaxAtoms, fk::kThreadMaxSparsity, K, T0));
  // the kernels read G and D^T X with leading dimension K
  const Matrix<T> G_copy = G.ld() == K ? Matrix<T>() : Matrix<T>::copy_of(G);
  const Matrix<T> DtX_copy = DtX.ld() == K || N <= 1 ? Matrix<T>() : Matrix<T>::copy_of(DtX);
  const T* g = G_copy.empty() ? G.data() : G_copy.data();
  const T* dtx = DtX_copy.empty() ? DtX.data() : DtX_copy.data();
  PhaseProfile profile("Batch-OMP");
  profile.begin("Batch-OMP", stream);
  OmpOutputs out(kernel, K, T0, N, sizeof(T), ctx.device());
  fk::batch_omp<T>(kernel, g, K, dtx, norms.empty() ? nullptr : norms.data(), o.tolerance, T0, N,
                   out.count.as<std::int64_t>(), out.atoms.as<std::int64_t>(), out.values.as<T>(), nullptr,
                   out.scratch.p, stream);
  profile.end("Batch-OMP", stream);
  fmri::SparseCodes<T> c = codes_to_host<T>(out, K, T0, N, stream);
  profile.report();
  return c;
}

// k-SVD's passes with the codes as a dense K x N matrix Gamma on the device.
template <Real T>
class KsvdSteps final : public linv::kernels::KsvdSteps<T> {
 public:
  KsvdSteps(ConstMatrixView<T> X, Matrix<T> D0, const fmri::KsvdOptions& o, const linv::kernels::GridSum* sum)
      : X_(X), sum_(sum), n_(X.rows()), N_(X.cols()), K_(o.atoms), ldx_(ld_of(X.ld())),
        T0_(static_cast<int>(o.sparsity)),
        ctx_(context_of(X.device())), stream_(ctx_.main().stream), profile_("k-SVD"), D_(D0.to(X.device())),
        ldd_(ld_of(D_.ld())), G_(buffer<T>(K_ * K_)), DtX_(buffer<T>(K_ * N_)), Gamma_(buffer<T>(K_ * N_)),
        norms_(buffer<double>(N_)), err_(buffer<double>(N_)), err_prev_(buffer<double>(N_)), users_(buffer<int>(K_)),
        products_(buffer<T>(2 * K_ + n_ + N_)), work_(buffer<double>(n_)), skip_(buffer<int>(1)),
        omp_(fmri::OmpGpuKernel::Auto, K_, T0_, N_, sizeof(T), ctx_.device()) {
    fk::column_norms<T>(X.data(), n_, N_, ldx_, norms_.as<double>(), stream_);
  }
  // OMP against the current G and DtX into Gamma (keeping a signal's previous code where it is better),
  // and the RMSE of the codes.
  double code(bool keep_previous) override {
    claimed_.clear();
    if (dictionary_changed_) gram();
    profile_.begin("sparse coding", stream_);
    if (keep_previous)
      fk::code_errors<T>(G_.as<T>(), DtX_.as<T>(), Gamma_.as<T>(), norms_.as<double>(), K_, N_,
                         err_prev_.as<double>(), stream_);
    fk::batch_omp<T>(fmri::OmpGpuKernel::Auto, G_.as<T>(), K_, DtX_.as<T>(), norms_.as<double>(), 0.0, T0_, N_,
                     omp_.count.as<std::int64_t>(), omp_.atoms.as<std::int64_t>(), omp_.values.as<T>(),
                     err_.as<double>(), omp_.scratch.p, stream_);
    fk::scatter_codes<T>(omp_.count.as<std::int64_t>(), omp_.atoms.as<std::int64_t>(), omp_.values.as<T>(), T0_, K_,
                         N_, keep_previous ? err_prev_.as<double>() : nullptr, err_.as<double>(), Gamma_.as<T>(),
                         stream_);
    profile_.end("sparse coding", stream_);
    double total = 0;  // err >= 0, so its 1-norm is its sum
    check(cublasDasum_64(ctx_.main().blas, N_, err_.as<double>(), 1, &total), "asum");
    return total;
  }

  std::vector<index> users(T threshold) override {
    fk::count_users<T>(Gamma_.as<T>(), K_, N_, threshold, users_.as<int>(), stream_);
    std::vector<int> u(static_cast<std::size_t>(K_));
    to_host(u.data(), users_.p, bytes_of(K_, sizeof(int)), stream_);
    wait(stream_);
    return {u.begin(), u.end()};
  }

  void update_atom(index j, linv::kernels::AtomUsers users, bool exact, int iteration) override {
    dictionary_changed_ = true;
    if (exact)
      exact_update(j, users, iteration);
    else
      approximate_update(j);
  }

  linv::kernels::WorstSignal worst_signal() override {
    std::int64_t worst = 0;  // the first largest, as the CPU's max_element (errors are >= 0)
    check(cublasIdamax_64(ctx_.main().blas, N_, err_.as<double>(), 1, &worst), "amax");
    const std::int64_t s = worst - 1;
    if (s < 0 || s >= N_) return {};
    double e = 0;
    to_host(&e, err_.as<double>() + s, sizeof(double), stream_);
    wait(stream_);
    return {e, s};
  }

  std::vector<double> claim_signal(index s) override {
    check(cudaMemsetAsync(err_.as<double>() + s, 0, sizeof(double), stream_), "cudaMemset");
    claimed_.push_back(s);
    std::vector<T> column(static_cast<std::size_t>(n_));
    to_host(column.data(), X_.data() + s * ldx_, bytes_of(n_, sizeof(T)), stream_);
    wait(stream_);
    return {column.begin(), column.end()};
  }

  void set_atom(index j, const std::vector<double>& atom) override {
    std::vector<T> column(atom.begin(), atom.end());
    to_device(D_.data() + j * ldd_, column.data(), bytes_of(n_, sizeof(T)), stream_);
    wait(stream_);  // `column` is freed on return
    dictionary_changed_ = true;
  }

  void refresh_errors() override {
    if (dictionary_changed_) gram();
    fk::code_errors<T>(G_.as<T>(), DtX_.as<T>(), Gamma_.as<T>(), norms_.as<double>(), K_, N_, err_.as<double>(),
                       stream_);
    for (index s : claimed_)  // a few per iteration
      check(cudaMemsetAsync(err_.as<double>() + s, 0, sizeof(double), stream_), "cudaMemset");
  }

  Matrix<T> dictionary() override {
    Matrix<T> host = Matrix<T>::uninitialized(n_, K_);
    to_host(host.data(), D_.data(), bytes_of(n_ * K_, sizeof(T)), stream_);  // ld n: the dictionary is a whole Matrix
    wait(stream_);
    return host;
  }

  Matrix<T> take_dictionary() override {
    ctx_.synchronize();
    return std::move(D_);
  }

  // The codes to the host, each signal's atoms in increasing order.
  fmri::SparseCodes<T> take_codes() override {
    Matrix<T> host_Gamma(K_, N_);
    to_host(host_Gamma.data(), Gamma_.p, bytes_of(K_ * N_, sizeof(T)), stream_);
    wait(stream_);
    profile_.report();
    fmri::SparseCodes<T> codes{K_, N_, T0_, std::vector<index>(static_cast<std::size_t>(N_)),
                               std::vector<index>(static_cast<std::size_t>(N_ * T0_)),
                               std::vector<T>(static_cast<std::size_t>(N_ * T0_))};
    for (std::int64_t s = 0; s < N_; ++s) {
      index used = 0;
      for (std::int64_t a = 0; a < K_ && used < T0_; ++a)
        if (host_Gamma(a, s) != T(0)) {
          const std::size_t slot = static_cast<std::size_t>(used + s * T0_);
          codes.atom[slot] = a;
          codes.value[slot] = host_Gamma(a, s);
          ++used;
        }
      codes.count[static_cast<std::size_t>(s)] = used;
    }
    return codes;
  }

 private:
  template <class V>
  DeviceBuffer buffer(std::int64_t count) const {
    return DeviceBuffer(bytes_of(count, sizeof(V)), ctx_.device());
  }

  void gram() {
    gram_and_correlations<T>(ctx_.main(), D_.data(), ldd_, n_, K_, X_.data(), ldx_, N_, G_.as<T>(), K_, DtX_.as<T>(), K_);
    dictionary_changed_ = false;
  }

  void approximate_update(std::int64_t j) {
    const Lane& lane = ctx_.main();
    T* c = products_.as<T>();  // Gamma g (K)
    T* t = c + K_;             // X g (n)
    T* b = t + n_;             // D^T a (K)
    T* h = b + K_;             // X^T a (N)
    T* D = D_.data();
    profile_.begin("approximate updates", stream_);
    const T* g = Gamma_.as<T>() + j;  // row j of Gamma, stride K
    blas::gemv<T>(lane.blas, Op::None, n_, N_, T(1), X_.data(), ldx_, g, K_, T(0), t, 1);
    blas::gemv<T>(lane.blas, Op::None, K_, N_, T(1), Gamma_.as<T>(), K_, g, K_, T(0), c, 1);
    if (sum_) sum_->sum(c, static_cast<std::size_t>(K_ + n_), stream_);  // sums over signals: over the job's
    fk::approximate_atom<T>(t, c, D, n_, K_, ldd_, j, b, skip_.as<int>(), work_.as<double>(), stream_);
    blas::gemv<T>(lane.blas, Op::Transpose, n_, N_, T(1), X_.data(), ldx_, D + j * ldd_, 1, T(0), h, 1);
    fk::update_coefficients<T>(h, b, Gamma_.as<T>(), K_, N_, j, skip_.as<int>(), stream_);
    profile_.end("approximate updates", stream_);
  }

  void exact_update(std::int64_t j, linv::kernels::AtomUsers job, int iteration) {
    const Lane& lane = ctx_.main();
    const int device = ctx_.device();
    T* D = D_.data();
    if (!selected_) {  // the exact update's buffers, made once
      select_bytes_ = fk::select_scratch_bytes(N_);
      selected_.emplace(bytes_of(N_, sizeof(std::int64_t)), device);
      selected_count_.emplace(sizeof(std::int64_t), device);
      select_scratch_.emplace(select_bytes_, device);
    }
    fk::select_users<T>(Gamma_.as<T>(), K_, N_, j, selected_->as<std::int64_t>(), selected_count_->as<std::int64_t>(),
                        select_scratch_->p, select_bytes_, stream_);
    const std::int64_t m = read_back(selected_count_->as<std::int64_t>(), stream_), total = sum_ ? job.total : m;
    if (total == 0) return;
    const std::int64_t* who = selected_->as<std::int64_t>();
    // E: this process's users' columns; over a job whose Gram matrix is E^T E, all of E, each process's
    // columns in their place (job.before onwards), added up
    const bool rows = n_ <= total;  // the smaller Gram matrix: E E^T (n x n) or E^T E (total x total)
    const bool whole = !rows && sum_;
    DeviceBuffer E(bytes_of(n_ * (whole ? total : m), sizeof(double)), device);
    double* mine = E.as<double>() + (whole ? n_ * job.before : 0);
    profile_.begin("exact: error matrix", stream_);
    if (whole) check(cudaMemsetAsync(E.p, 0, bytes_of(n_ * total, sizeof(double)), stream_), "cudaMemset");
    fk::error_columns<T>(X_.data(), ldx_, D, ldd_, Gamma_.as<T>(), n_, K_, j, who, m, mine, stream_);
    if (whole) sum_->sum(E.as<double>(), static_cast<std::size_t>(n_ * total), stream_);
    profile_.end("exact: error matrix", stream_);
    const std::int64_t order = rows ? n_ : total;
    DeviceBuffer M(bytes_of(order * order, sizeof(double)), device);
    // gemm, then the lower triangle mirrored (LAPACK reads only it): cuBLAS's syrk does not split a long
    // inner dimension (ADL's S S^T over 9e5 columns: 73 ms against gemm's fraction of a millisecond)
    profile_.begin("exact: Gram of E", stream_);
    if (rows && m == 0)  // a process of a job without users of this atom: its part of E E^T is 0
      check(cudaMemsetAsync(M.p, 0, bytes_of(order * order, sizeof(double)), stream_), "cudaMemset");
    else
      blas::gemm<double>(lane.blas, rows ? Op::None : Op::Transpose, rows ? Op::Transpose : Op::None, order, order,
                         rows ? m : n_, 1.0, E.as<double>(), n_, E.as<double>(), n_, 0.0, M.as<double>(), order);
    if (rows && sum_) sum_->sum(M.as<double>(), static_cast<std::size_t>(order * order), stream_);
    profile_.end("exact: Gram of E", stream_);
    Matrix<double> host(order, order);
    to_host(host.data(), M.p, bytes_of(order * order, sizeof(double)), stream_);
    wait(stream_);
    double lambda = 0;
    std::vector<double> vec(static_cast<std::size_t>(order));
    if (cpu::lapack::largest_eigenpair<double>(host.view(), lambda, vec.data()) != 0)
      throw NoConvergence("k-SVD's rank-1 update (LAPACK syevr)", iteration + 1, 0.0, 0.0,
                          fmt::format("the eigenproblem of atom {}'s error did not converge", j + 1));
    if (!(lambda > 0)) {  // E = 0: the users need nothing from this atom
      fk::set_coefficients<T>(nullptr, 0.0, who, m, Gamma_.as<T>(), K_, j, stream_);
      return;
    }
    profile_.begin("exact: atom and coefficients", stream_);
    // v: the eigenvector (order); a: E^T u (m) or E v / sigma (n)
    DeviceBuffer v(bytes_of(order, sizeof(double)), device), a(bytes_of(std::max(n_, m), sizeof(double)), device);
    to_device(v.p, vec.data(), bytes_of(order, sizeof(double)), stream_);
    if (rows) {  // atom = u, gamma = E^T u
      fk::store_column<T>(v.as<double>(), D + j * ldd_, n_, stream_);
      if (m > 0) {
        blas::gemv<double>(lane.blas, Op::Transpose, n_, m, 1.0, E.as<double>(), n_, v.as<double>(), 1, 0.0,
                           a.as<double>(), 1);
        fk::set_coefficients<T>(a.as<double>(), 1.0, who, m, Gamma_.as<T>(), K_, j, stream_);
      }
    } else {  // gamma = sigma v (this process's part of v), atom = E v / sigma
      const double sigma = std::sqrt(lambda);
      blas::gemv<double>(lane.blas, Op::None, n_, total, 1.0 / sigma, E.as<double>(), n_, v.as<double>(), 1, 0.0,
                         a.as<double>(), 1);
      fk::store_column<T>(a.as<double>(), D + j * ldd_, n_, stream_);
      fk::set_coefficients<T>(v.as<double>() + (whole ? job.before : 0), sigma, who, m, Gamma_.as<T>(), K_, j, stream_);
    }
    profile_.end("exact: atom and coefficients", stream_);
    wait(stream_);  // v, a and E are freed on return
  }

  ConstMatrixView<T> X_;
  const linv::kernels::GridSum* sum_;  // over a job's processes, or nullptr
  std::int64_t n_, N_, K_, ldx_;
  int T0_;
  Context& ctx_;
  cudaStream_t stream_;
  PhaseProfile profile_;
  Matrix<T> D_;
  std::int64_t ldd_;
  DeviceBuffer G_, DtX_, Gamma_, norms_, err_, err_prev_, users_, products_, work_, skip_;
  OmpOutputs omp_;
  std::optional<DeviceBuffer> selected_, selected_count_, select_scratch_;
  std::size_t select_bytes_ = 0;
  bool dictionary_changed_ = true;  // G and D^T X are stale
  std::vector<index> claimed_;      // the signals made atoms since the last coding
};

template <Real T>
class Fmri final : public linv::kernels::Fmri<T> {
 public:
  void gram_and_correlations(ConstMatrixView<T> D, ConstMatrixView<T> X, MatrixView<T> G,
                             MatrixView<T> DtX) const override {
    cuda::gram_and_correlations<T>(context_of(X.device()).main(), D.data(), ld_of(D.ld()), D.rows(), D.cols(),
                                   X.data(), ld_of(X.ld()), X.cols(), G.data(), ld_of(G.ld()), DtX.data(),
                                   ld_of(DtX.ld()));
  }
  fmri::SparseCodes<T> batch_omp(ConstMatrixView<T> G, ConstMatrixView<T> DtX, ConstMatrixView<double> norms,
                                 const fmri::OmpOptions& options) const override {
    return cuda::batch_omp<T>(G, DtX, norms, options);
  }
  std::unique_ptr<linv::kernels::KsvdSteps<T>> ksvd_steps(ConstMatrixView<T> X, Matrix<T> D0,
                                                          const fmri::KsvdOptions& options,
                                                          const linv::kernels::GridSum* sum) const override {
    return std::make_unique<KsvdSteps<T>>(X, std::move(D0), options, sum);
  }
  std::unique_ptr<linv::kernels::AdlSteps<T>> adl_steps(ConstMatrixView<T> X, Matrix<T> D0, ConstMatrixView<T> task,
                                                        linv::kernels::AdlConstraints constraints,
                                                        const linv::kernels::GridSum* sum) const override {
    return cuda::adl_steps<T>(X, std::move(D0), task, constraints, sum);
  }
  std::unique_ptr<linv::kernels::Parafac2Steps<T>> parafac2_steps(
      const std::vector<ConstMatrixView<T>>& slabs, const linv::kernels::SlabShare& share) const override {
    return cuda::parafac2_steps<T>(slabs, share);
  }
};

}  // namespace

template <Real T>
const linv::kernels::Fmri<T>& fmri() { return kernels::instance<Fmri<T>>(); }
template const linv::kernels::Fmri<float>& fmri<float>();
template const linv::kernels::Fmri<double>& fmri<double>();

}  // namespace linv::cuda
