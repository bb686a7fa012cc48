// Sparse coding for fMRI factorisation (include/linv/fmri.hpp): Batch-OMP on the CPU, signals spread
// across threads.
#include "linv/fmri.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.hpp"
#include "kernels/dense.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"

namespace linv::fmri {
namespace {

namespace k = kernels::cpu;

constexpr index kSignalsPerThread = 64;

// One signal's OMP from its correlations alpha0 = D^T x (K) and G, into the signal's code slots.
template <Real T>
void omp_one(ConstMatrixView<T> G, const T* alpha0, double norm_squared, const OmpOptions& o, index* atoms, T* values,
             index& count) {
  const index K = G.rows(), T0 = o.sparsity;
  constexpr double tiny = std::numeric_limits<double>::min();
  std::vector<double> alpha(alpha0, alpha0 + K), L(static_cast<std::size_t>(T0 * T0)), gamma(static_cast<std::size_t>(T0)),
      w(static_cast<std::size_t>(T0));
  std::vector<index> chosen;
  chosen.reserve(static_cast<std::size_t>(T0));
  auto at = [&](index r, index c) -> double& { return L[static_cast<std::size_t>(r + c * T0)]; };
  double residual = norm_squared, delta = 0;
  count = 0;
  for (index n = 0; n < T0; ++n) {
    if (o.tolerance > 0 && residual <= o.tolerance) break;
    // the first atom of largest |correlation|
    index best = 0;
    for (index a = 1; a < K; ++a)
      if (std::abs(alpha[static_cast<std::size_t>(a)]) > std::abs(alpha[static_cast<std::size_t>(best)])) best = a;
    const double top = alpha[static_cast<std::size_t>(best)];
    if (top * top < tiny || std::find(chosen.begin(), chosen.end(), best) != chosen.end()) break;  // nothing left
    // grow the Cholesky factor of G restricted to the support by one row
    if (n > 0) {
      for (index p = 0; p < n; ++p) {
        double t = static_cast<double>(G(chosen[static_cast<std::size_t>(p)], best));
        for (index q = 0; q < p; ++q) t -= at(p, q) * w[static_cast<std::size_t>(q)];
        w[static_cast<std::size_t>(p)] = t / at(p, p);
      }
      double d = static_cast<double>(G(best, best));
      for (index p = 0; p < n; ++p) d -= w[static_cast<std::size_t>(p)] * w[static_cast<std::size_t>(p)];
      if (d <= tiny) break;  // the atom depends on the chosen ones
      for (index p = 0; p < n; ++p) at(n, p) = w[static_cast<std::size_t>(p)];
      at(n, n) = std::sqrt(d);
    } else {
      at(0, 0) = std::sqrt(static_cast<double>(G(best, best)));
    }
    chosen.push_back(best);
    const index m = n + 1;
    // gamma = (L L^T)^-1 alpha0 on the support
    for (index p = 0; p < m; ++p) {
      double t = static_cast<double>(alpha0[chosen[static_cast<std::size_t>(p)]]);
      for (index q = 0; q < p; ++q) t -= at(p, q) * gamma[static_cast<std::size_t>(q)];
      gamma[static_cast<std::size_t>(p)] = t / at(p, p);
    }
    for (index p = m - 1; p >= 0; --p) {
      double t = gamma[static_cast<std::size_t>(p)];
      for (index q = p + 1; q < m; ++q) t -= at(q, p) * gamma[static_cast<std::size_t>(q)];
      gamma[static_cast<std::size_t>(p)] = t / at(p, p);
    }
    // alpha = alpha0 - G(:, support) gamma, and the residual's squared norm
    double inner = 0;
    for (index a = 0; a < K; ++a) {
      double beta = 0;
      for (index p = 0; p < m; ++p)
        beta += static_cast<double>(G(a, chosen[static_cast<std::size_t>(p)])) * gamma[static_cast<std::size_t>(p)];
      alpha[static_cast<std::size_t>(a)] = static_cast<double>(alpha0[a]) - beta;
      for (index p = 0; p < m; ++p)
        if (chosen[static_cast<std::size_t>(p)] == a) inner += gamma[static_cast<std::size_t>(p)] * beta;
    }
    residual += delta - inner;
    delta = inner;
    count = m;
  }
  for (index p = 0; p < count; ++p) {
    atoms[p] = chosen[static_cast<std::size_t>(p)];
    values[p] = static_cast<T>(gamma[static_cast<std::size_t>(p)]);
  }
}

}  // namespace

template <Real T>
Matrix<T> SparseCodes<T>::to_dense() const {
  Matrix<T> out(atoms, signals);
  for (index j = 0; j < signals; ++j)
    for (index t = 0; t < count[static_cast<std::size_t>(j)]; ++t) {
      const std::size_t slot = static_cast<std::size_t>(t + j * sparsity);
      out(atom[slot], j) = value[slot];
    }
  return out;
}

template <Real T>
SparseCodes<T> batch_omp_gram(ConstMatrixView<T> G, ConstMatrixView<T> DtX, const std::vector<double>& norms_squared,
                              const OmpOptions& options) {
  const index K = G.rows(), N = DtX.cols();
  if (G.cols() != K) throw InvalidArgument(fmt::format("Batch-OMP: G must be square, got {}", shape_string(K, G.cols())));
  if (DtX.rows() != K) throw ShapeMismatch("Batch-OMP: G and D^T X", K, K, DtX.rows(), N);
  if (options.sparsity < 1 || options.sparsity > K)
    throw InvalidArgument(fmt::format("Batch-OMP: the sparsity must be between 1 and the {} atoms; got {}", K,
                                      options.sparsity));
  if (options.tolerance > 0 && static_cast<index>(norms_squared.size()) != N)
    throw InvalidArgument(fmt::format("Batch-OMP: a tolerance needs the {} signals' squared norms; got {}", N,
                                      norms_squared.size()));
  require_host(G.device(), "Batch-OMP");
  SparseCodes<T> c{K, N, options.sparsity, std::vector<index>(static_cast<std::size_t>(N)),
                   std::vector<index>(static_cast<std::size_t>(N * options.sparsity)),
                   std::vector<T>(static_cast<std::size_t>(N * options.sparsity))};
  detail::in_parallel(N, kSignalsPerThread, [&](index first, index last) {
    std::vector<T> alpha0(static_cast<std::size_t>(K));
    for (index j = first; j < last; ++j) {
      for (index a = 0; a < K; ++a) alpha0[static_cast<std::size_t>(a)] = DtX(a, j);
      omp_one<T>(G, alpha0.data(), options.tolerance > 0 ? norms_squared[static_cast<std::size_t>(j)] : 0.0, options,
                 &c.atom[static_cast<std::size_t>(j * options.sparsity)],
                 &c.value[static_cast<std::size_t>(j * options.sparsity)], c.count[static_cast<std::size_t>(j)]);
    }
  });
  return c;
}

template <Real T>
SparseCodes<T> batch_omp(ConstMatrixView<T> D, ConstMatrixView<T> X, const OmpOptions& options) {
  if (D.rows() != X.rows()) throw ShapeMismatch("Batch-OMP: D and X (time points)", D.rows(), D.cols(), X.rows(), X.cols());
  require_host(D.device(), "Batch-OMP");
  require_host(X.device(), "Batch-OMP");
  require_finite(D, "D");
  require_finite(X, "X");
  const index K = D.cols(), N = X.cols();
  Matrix<T> G(K, K), DtX(K, N);
  k::syrk<T>(Uplo::Lower, Op::Transpose, T(1), D, T(0), G.view());
  for (index c = 0; c < K; ++c)
    for (index r = 0; r < c; ++r) G(r, c) = G(c, r);
  k::gemm<T>(Op::Transpose, Op::None, T(1), D, X, T(0), DtX.view());
  std::vector<double> norms(static_cast<std::size_t>(N), 0.0);
  for (index j = 0; j < N; ++j)
    for (index i = 0; i < X.rows(); ++i) norms[static_cast<std::size_t>(j)] += static_cast<double>(X(i, j)) * X(i, j);
  return batch_omp_gram<T>(G.view(), DtX.view(), norms, options);
}

template struct SparseCodes<float>;
template struct SparseCodes<double>;
template SparseCodes<float> batch_omp<float>(ConstMatrixView<float>, ConstMatrixView<float>, const OmpOptions&);
template SparseCodes<double> batch_omp<double>(ConstMatrixView<double>, ConstMatrixView<double>, const OmpOptions&);
template SparseCodes<float> batch_omp_gram<float>(ConstMatrixView<float>, ConstMatrixView<float>,
                                                  const std::vector<double>&, const OmpOptions&);
template SparseCodes<double> batch_omp_gram<double>(ConstMatrixView<double>, ConstMatrixView<double>,
                                                    const std::vector<double>&, const OmpOptions&);

}  // namespace linv::fmri
