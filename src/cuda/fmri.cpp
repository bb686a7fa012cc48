// Batch-OMP and k-SVD on the GPU: the algorithms of src/core/fmri.cpp (same choices, same random atom
// order, same clearing rule) with the codes held as a dense K x N matrix Gamma on the device, so that an
// atom's update is two passes over X by cuBLAS gemv (X g and X^T a) plus small kernels
// (src/cuda/fmri.cu). The exact update forms the users' error matrix E in float64 and takes its leading
// singular pair from the largest eigenpair of the smaller Gram matrix, as the CPU does (LAPACK syevr on
// the host for that small matrix).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/fmri_rules.hpp"
#include "cuda/blas.hpp"
#include "cuda/context.hpp"
#include "cuda/dense.hpp"
#include "cuda/fmri.hpp"
#include "cuda/kernels.hpp"
#include "kernels/dense.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

namespace fk = fmri_kernels;


// G = D^T D (both triangles, exactly symmetric as OMP's CPU code has it) and DtX = D^T X.
template <Real T>
void gram_and_correlations(const Lane& lane, const T* D, std::int64_t ldd, std::int64_t n, std::int64_t K, const T* X,
                           std::int64_t ldx, std::int64_t N, T* G, T* DtX) {
  blas::syrk<T>(lane.blas, Uplo::Lower, Op::Transpose, K, n, T(1), D, ldd, T(0), G, K);
  kernels::mirror_lower<T>(G, K, K, lane.stream);
  blas::gemm<T>(lane.blas, Op::Transpose, Op::None, K, N, n, T(1), D, ldd, X, ldx, T(0), DtX, K);
}

// OMP's outputs for N signals (values of value_size bytes).
struct OmpOutputs {
  DeviceBuffer count, atoms, values, scratch;
  OmpOutputs(fmri::OmpGpuKernel kernel, std::int64_t K, int T0, std::int64_t N, std::size_t value_size, int device)
      : count(bytes_of(N, sizeof(std::int64_t)), device), atoms(bytes_of(N * T0, sizeof(std::int64_t)), device),
        values(bytes_of(N * T0, value_size), device), scratch(fk::omp_scratch_bytes(kernel, K, T0, N), device) {}
};

}  // namespace

template <Real T>
fmri::SparseCodes<T> batch_omp(ConstMatrixView<T> D, ConstMatrixView<T> X, const fmri::OmpOptions& o) {
  const fmri::OmpGpuKernel kernel = o.gpu_kernel;
  const std::int64_t n = X.rows(), N = X.cols(), K = D.cols();
  const int T0 = static_cast<int>(o.sparsity), device = X.device().index();
  Context& ctx = context_of(X.device());
  const Lane& lane = ctx.main();
  if (kernel == fmri::OmpGpuKernel::Thread && !fk::thread_kernel_fits(K, T0))
    throw InvalidArgument(fmt::format("Batch-OMP's thread-per-signal kernel handles at most {} atoms and sparsity {}; "
                                      "got {} and {}",
                                      fk::kThreadMaxAtoms, fk::kThreadMaxSparsity, K, T0));
  PhaseProfile profile("Batch-OMP");
  DeviceBuffer G(bytes_of(K * K, sizeof(T)), device), DtX(bytes_of(K * N, sizeof(T)), device);
  profile.begin("G and D^T X", lane.stream);
  gram_and_correlations<T>(lane, D.data(), ld_of(D.ld()), n, K, X.data(), ld_of(X.ld()), N, G.as<T>(), DtX.as<T>());
  profile.end("G and D^T X", lane.stream);
  profile.begin("Batch-OMP", lane.stream);
  std::optional<DeviceBuffer> norms;  // ||x||^2 only for the tolerance
  if (o.tolerance > 0) {
    norms.emplace(bytes_of(N, sizeof(double)), device);
    fk::column_norms<T>(X.data(), n, N, ld_of(X.ld()), norms->as<double>(), lane.stream);
  }
  OmpOutputs out(kernel, K, T0, N, sizeof(T), device);
  fk::batch_omp<T>(kernel, G.as<T>(), K, DtX.as<T>(), norms ? norms->as<double>() : nullptr, o.tolerance, T0, N,
                   out.count.as<std::int64_t>(), out.atoms.as<std::int64_t>(), out.values.as<T>(), nullptr, out.scratch.p, lane.stream);
  profile.end("Batch-OMP", lane.stream);
  // straight into the result's arrays (index is std::int64_t, as the kernels write)
  profile.begin("codes to the host", lane.stream);
  fmri::SparseCodes<T> c{K, N, o.sparsity, std::vector<index>(static_cast<std::size_t>(N)),
                         std::vector<index>(static_cast<std::size_t>(N * T0)),
                         std::vector<T>(static_cast<std::size_t>(N * T0))};
  to_host(c.count.data(), out.count.p, bytes_of(N, sizeof(index)), lane.stream);
  to_host(c.atom.data(), out.atoms.p, bytes_of(N * T0, sizeof(index)), lane.stream);
  to_host(c.value.data(), out.values.p, bytes_of(N * T0, sizeof(T)), lane.stream);
  profile.end("codes to the host", lane.stream);
  wait(lane.stream);
  profile.report();
  return c;
}

template <Real T>
fmri::KsvdResult<T> ksvd(ConstMatrixView<T> X, const fmri::KsvdOptions& o, const Matrix<T>& D0, std::mt19937_64& rng) {
  const std::int64_t n = X.rows(), N = X.cols(), K = o.atoms, ldx = ld_of(X.ld());
  const int T0 = static_cast<int>(o.sparsity), device = X.device().index();
  Context& ctx = context_of(X.device());
  const Lane& lane = ctx.main();
  const cudaStream_t stream = lane.stream;
  PhaseProfile profile("k-SVD");

  fmri::KsvdResult<T> out;
  out.dictionary = D0.to(X.device());
  T* D = out.dictionary.data();
  const std::int64_t ldd = ld_of(out.dictionary.ld());
  DeviceBuffer G(bytes_of(K * K, sizeof(T)), device), DtX(bytes_of(K * N, sizeof(T)), device),
      Gamma(bytes_of(K * N, sizeof(T)), device), norms(bytes_of(N, sizeof(double)), device),
      err(bytes_of(N, sizeof(double)), device), err_prev(bytes_of(N, sizeof(double)), device),
      users(bytes_of(K, sizeof(int)), device), products(bytes_of(2 * K + n + N, sizeof(T)), device),
      work(bytes_of(n, sizeof(double)), device), skip(sizeof(int), device);
  T* c = products.as<T>();  // Gamma g (K)
  T* b = c + K;             // D^T a (K)
  T* t = b + K;             // X g (n)
  T* h = t + n;             // X^T a (N)
  OmpOutputs omp(fmri::OmpGpuKernel::Auto, K, T0, N, sizeof(T), device);
  fk::column_norms<T>(X.data(), n, N, ldx, norms.as<double>(), stream);

  const auto gram = [&] {
    gram_and_correlations<T>(lane, D, ldd, n, K, X.data(), ldx, N, G.as<T>(), DtX.as<T>());
  };
  // OMP against the current G and DtX into Gamma (keeping a signal's previous code where it is better),
  // and the RMSE of the codes
  const auto code = [&](bool keep_previous) {
    profile.begin("sparse coding", stream);
    if (keep_previous) fk::code_errors<T>(G.as<T>(), DtX.as<T>(), Gamma.as<T>(), norms.as<double>(), K, N,
                                          err_prev.as<double>(), stream);
    fk::batch_omp<T>(fmri::OmpGpuKernel::Auto, G.as<T>(), K, DtX.as<T>(), norms.as<double>(), 0.0, T0, N, omp.count.as<std::int64_t>(),
                     omp.atoms.as<std::int64_t>(), omp.values.as<T>(), err.as<double>(), omp.scratch.p, stream);
    fk::scatter_codes<T>(omp.count.as<std::int64_t>(), omp.atoms.as<std::int64_t>(), omp.values.as<T>(), T0, K, N,
                         keep_previous ? err_prev.as<double>() : nullptr, err.as<double>(), Gamma.as<T>(), stream);
    profile.end("sparse coding", stream);
    double total = 0;  // err >= 0, so its 1-norm is its sum
    check(cublasDasum_64(lane.blas, N, err.as<double>(), 1, &total), "asum");
    return std::sqrt(total / (static_cast<double>(n) * static_cast<double>(N)));
  };
  const auto users_of = [&](T threshold) {
    fk::count_users<T>(Gamma.as<T>(), K, N, threshold, users.as<int>(), stream);
    std::vector<int> u(static_cast<std::size_t>(K));
    to_host(u.data(), users.p, bytes_of(K, sizeof(int)), stream);
    wait(stream);
    return u;
  };
  // d_j := the worst-represented signal not used this way yet (as the CPU's replace_with_worst)
  const auto replace_with_worst = [&](std::int64_t j) {
    std::int64_t worst = 0;
    check(cublasIdamax_64(lane.blas, N, err.as<double>(), 1, &worst), "amax");
    const std::int64_t s = worst - 1;
    if (s < 0 || s >= N) return false;
    double e = 0, norm = 0;
    to_host(&e, err.as<double>() + s, sizeof(double), stream);
    to_host(&norm, norms.as<double>() + s, sizeof(double), stream);
    wait(stream);
    if (!(e > 0)) return false;
    if (!(norm > 0)) {
      check(cudaMemsetAsync(err.as<double>() + s, 0, sizeof(double), stream), "cudaMemset");
      return false;
    }
    fk::replace_atom<T>(X.data(), ldx, n, s, norms.as<double>(), D, ldd, j, err.as<double>(), stream);
    return true;
  };
  const auto approximate_update = [&](std::int64_t j) {
    profile.begin("approximate updates", stream);
    const T* g = Gamma.as<T>() + j;  // row j of Gamma, stride K
    blas::gemv<T>(lane.blas, Op::None, n, N, T(1), X.data(), ldx, g, K, T(0), t, 1);
    blas::gemv<T>(lane.blas, Op::None, K, N, T(1), Gamma.as<T>(), K, g, K, T(0), c, 1);
    fk::approximate_atom<T>(t, c, D, n, K, ldd, j, b, skip.as<int>(), work.as<double>(), stream);
    blas::gemv<T>(lane.blas, Op::Transpose, n, N, T(1), X.data(), ldx, D + j * ldd, 1, T(0), h, 1);
    fk::update_coefficients<T>(h, b, Gamma.as<T>(), K, N, j, skip.as<int>(), stream);
    profile.end("approximate updates", stream);
  };
  std::optional<DeviceBuffer> selected, selected_count, select_scratch;  // the exact update's, made once
  const std::size_t select_bytes = o.exact ? fk::select_scratch_bytes(N) : 0;
  const auto exact_update = [&](std::int64_t j, int iteration) {
    if (!selected) {
      selected.emplace(bytes_of(N, sizeof(std::int64_t)), device);
      selected_count.emplace(sizeof(std::int64_t), device);
      select_scratch.emplace(select_bytes, device);
    }
    fk::select_users<T>(Gamma.as<T>(), K, N, j, selected->as<std::int64_t>(), selected_count->as<std::int64_t>(),
                        select_scratch->p, select_bytes, stream);
    const std::int64_t m = read_back(selected_count->as<std::int64_t>(), stream);
    if (m == 0) return;
    const std::int64_t* who = selected->as<std::int64_t>();
    DeviceBuffer E(bytes_of(n * m, sizeof(double)), device);
    profile.begin("exact: error matrix", stream);
    fk::error_columns<T>(X.data(), ldx, D, ldd, Gamma.as<T>(), n, K, j, who, m, E.as<double>(), stream);
    profile.end("exact: error matrix", stream);
    const bool rows = n <= m;  // the smaller Gram matrix: E E^T (n x n) or E^T E (m x m)
    const std::int64_t order = rows ? n : m;
    DeviceBuffer M(bytes_of(order * order, sizeof(double)), device);
    // gemm, then the lower triangle mirrored (LAPACK reads only it): cuBLAS's syrk does not split a long
    // inner dimension (ADL's S S^T over 9e5 columns: 73 ms against gemm's fraction of a millisecond)
    profile.begin("exact: Gram of E", stream);
    blas::gemm<double>(lane.blas, rows ? Op::None : Op::Transpose, rows ? Op::Transpose : Op::None, order, order,
                       rows ? m : n, 1.0, E.as<double>(), n, E.as<double>(), n, 0.0, M.as<double>(), order);
    profile.end("exact: Gram of E", stream);
    Matrix<double> host(order, order);
    to_host(host.data(), M.p, bytes_of(order * order, sizeof(double)), stream);
    wait(stream);
    double lambda = 0;
    std::vector<double> vec(static_cast<std::size_t>(order));
    if (linv::kernels::cpu::largest_eigenpair<double>(host.view(), lambda, vec.data()) != 0)
      throw NoConvergence("k-SVD's rank-1 update (LAPACK syevr)", iteration + 1, 0.0, 0.0,
                          fmt::format("the eigenproblem of atom {}'s error did not converge", j + 1));
    if (!(lambda > 0)) {  // E = 0: the users need nothing from this atom
      fk::set_coefficients<T>(nullptr, 0.0, who, m, Gamma.as<T>(), K, j, stream);
      return;
    }
    profile.begin("exact: atom and coefficients", stream);
    // v: the eigenvector (order); a: E^T u (m) or E v / sigma (n)
    DeviceBuffer v(bytes_of(order, sizeof(double)), device), a(bytes_of(std::max(n, m), sizeof(double)), device);
    to_device(v.p, vec.data(), bytes_of(order, sizeof(double)), stream);
    if (rows) {  // atom = u, gamma = E^T u
      fk::store_column<T>(v.as<double>(), D + j * ldd, n, stream);
      blas::gemv<double>(lane.blas, Op::Transpose, n, m, 1.0, E.as<double>(), n, v.as<double>(), 1, 0.0, a.as<double>(),
                         1);
      fk::set_coefficients<T>(a.as<double>(), 1.0, who, m, Gamma.as<T>(), K, j, stream);
    } else {  // gamma = sigma v, atom = E v / sigma
      const double sigma = std::sqrt(lambda);
      blas::gemv<double>(lane.blas, Op::None, n, m, 1.0 / sigma, E.as<double>(), n, v.as<double>(), 1, 0.0,
                         a.as<double>(), 1);
      fk::store_column<T>(a.as<double>(), D + j * ldd, n, stream);
      fk::set_coefficients<T>(v.as<double>(), sigma, who, m, Gamma.as<T>(), K, j, stream);
    }
    profile.end("exact: atom and coefficients", stream);
    wait(stream);  // v, a and E are freed on return
  };

  std::vector<index> order(static_cast<std::size_t>(K));
  std::iota(order.begin(), order.end(), index{0});
  bool have_previous = false, gram_current = false;
  Matrix<T> host_D(n, K);
  for (int it = 0; it < o.iterations; ++it) {
    if (!gram_current) gram();
    out.rmse.push_back(code(o.keep_better_codes && have_previous));
    if (o.progress) o.progress(it + 1, out.rmse.back());
    const std::vector<int> used = users_of(T(0));
    std::vector<bool> replaced(static_cast<std::size_t>(K), false);
    std::shuffle(order.begin(), order.end(), rng);
    for (index j : order) {
      if (used[static_cast<std::size_t>(j)] == 0) {
        if (replace_with_worst(j)) {
          replaced[static_cast<std::size_t>(j)] = true;
          ++out.replaced;
        }
        continue;
      }
      if (o.exact)
        exact_update(j, it);
      else
        approximate_update(j);
    }
    have_previous = true;
    gram_current = false;
    if (o.clear && it + 1 < o.iterations) {  // Rubinstein's cleardict, as on the CPU
      gram();
      fk::code_errors<T>(G.as<T>(), DtX.as<T>(), Gamma.as<T>(), norms.as<double>(), K, N, err.as<double>(), stream);
      const std::vector<int> use = users_of(T(1e-7));
      to_host(host_D.data(), D, bytes_of(n * K, sizeof(T)), stream);  // ld n: the dictionary is a whole Matrix
      wait(stream);
      gram_current = true;
      for (index j = 0; j < K; ++j) {
        if (replaced[static_cast<std::size_t>(j)]) continue;
        if (fmri::rules::should_clear(host_D, j, use[static_cast<std::size_t>(j)], o) && replace_with_worst(j)) {
          ++out.replaced;
          gram_current = false;
          to_host(&host_D(0, j), D + j * ldd, bytes_of(n, sizeof(T)), stream);
          wait(stream);
        }
      }
    }
  }
  if (!gram_current) gram();
  out.rmse.push_back(code(o.keep_better_codes && have_previous));
  // the codes to the host, each signal's atoms in increasing order
  Matrix<T> host_Gamma(K, N);
  to_host(host_Gamma.data(), Gamma.p, bytes_of(K * N, sizeof(T)), stream);
  wait(stream);
  profile.report();
  out.codes = fmri::SparseCodes<T>{K, N, o.sparsity, std::vector<index>(static_cast<std::size_t>(N)),
                                   std::vector<index>(static_cast<std::size_t>(N * T0)),
                                   std::vector<T>(static_cast<std::size_t>(N * T0))};
  for (std::int64_t s = 0; s < N; ++s) {
    index used = 0;
    for (std::int64_t a = 0; a < K && used < T0; ++a)
      if (host_Gamma(a, s) != T(0)) {
        const std::size_t slot = static_cast<std::size_t>(used + s * T0);
        out.codes.atom[slot] = a;
        out.codes.value[slot] = host_Gamma(a, s);
        ++used;
      }
    out.codes.count[static_cast<std::size_t>(s)] = used;
  }
  return out;
}

template fmri::SparseCodes<float> batch_omp<float>(ConstMatrixView<float>, ConstMatrixView<float>,
                                                   const fmri::OmpOptions&);
template fmri::SparseCodes<double> batch_omp<double>(ConstMatrixView<double>, ConstMatrixView<double>,
                                                     const fmri::OmpOptions&);
template fmri::KsvdResult<float> ksvd<float>(ConstMatrixView<float>, const fmri::KsvdOptions&, const Matrix<float>&,
                                             std::mt19937_64&);
template fmri::KsvdResult<double> ksvd<double>(ConstMatrixView<double>, const fmri::KsvdOptions&, const Matrix<double>&,
                                               std::mt19937_64&);

}  // namespace linv::cuda
