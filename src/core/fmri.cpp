// Sparse coding for fMRI factorisation (include/linv/fmri.hpp): Batch-OMP on the CPU, signals spread
// across threads.
#include "linv/fmri.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/fmri_rules.hpp"
#include "core/parallel.hpp"
#include "cuda/dense.hpp"
#include "kernels/dense.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"

namespace linv::fmri {
namespace {

namespace k = kernels::cpu;

constexpr index kSignalsPerThread = 64;

// G = D^T D (both triangles) and D^T X: what Batch-OMP works from.
template <Real T>
void gram_and_correlations(ConstMatrixView<T> D, ConstMatrixView<T> X, Matrix<T>& G, Matrix<T>& DtX) {
  const index K = D.cols();
  G = Matrix<T>(K, K);
  DtX = Matrix<T>(K, X.cols());
  k::syrk<T>(Uplo::Lower, Op::Transpose, T(1), D, T(0), G.view());
  symmetrize_from_lower<T>(G.view());
  k::gemm<T>(Op::Transpose, Op::None, T(1), D, X, T(0), DtX.view());
}

// One thread's buffers for omp_one, allocated once rather than per signal.
struct OmpWork {
  std::vector<double> alpha, L, gamma, w;
  std::vector<index> chosen;
  OmpWork(index K, index T0)
      : alpha(static_cast<std::size_t>(K)), L(static_cast<std::size_t>(T0 * T0)), gamma(static_cast<std::size_t>(T0)),
        w(static_cast<std::size_t>(T0)) {
    chosen.reserve(static_cast<std::size_t>(T0));
  }
};

// One signal's OMP from its correlations alpha0 = D^T x (K) and G, into the signal's code slots.
template <Real T>
void omp_one(ConstMatrixView<T> G, const T* alpha0, double norm_squared, const OmpOptions& o, OmpWork& work,
             index* atoms, T* values, index& count) {
  const index K = G.rows(), T0 = o.sparsity;
  std::vector<double>&alpha = work.alpha, &L = work.L, &gamma = work.gamma, &w = work.w;
  std::vector<index>& chosen = work.chosen;
  std::copy(alpha0, alpha0 + K, alpha.begin());
  chosen.clear();
  auto at = [&](index r, index c) -> double& { return L[static_cast<std::size_t>(r + c * T0)]; };
  double residual = norm_squared, delta = 0, first = 0;
  count = 0;
  for (index n = 0; n < T0; ++n) {
    if (o.tolerance > 0 && residual <= o.tolerance) break;
    // the first atom of largest |correlation|
    index best = 0;
    for (index a = 1; a < K; ++a)
      if (std::abs(alpha[static_cast<std::size_t>(a)]) > std::abs(alpha[static_cast<std::size_t>(best)])) best = a;
    const double top = alpha[static_cast<std::size_t>(best)];
    if (n == 0) first = top;
    if (rules::omp_correlations_exhausted<T>(top, first) || std::find(chosen.begin(), chosen.end(), best) != chosen.end())
      break;
    // grow the Cholesky factor of G restricted to the support by one row
    if (n > 0) {
      for (index p = 0; p < n; ++p) {
        double t = static_cast<double>(G(chosen[static_cast<std::size_t>(p)], best));
        for (index q = 0; q < p; ++q) t -= at(p, q) * w[static_cast<std::size_t>(q)];
        w[static_cast<std::size_t>(p)] = t / at(p, p);
      }
      double d = static_cast<double>(G(best, best));
      for (index p = 0; p < n; ++p) d -= w[static_cast<std::size_t>(p)] * w[static_cast<std::size_t>(p)];
      if (rules::omp_atom_dependent<T>(d, static_cast<double>(G(best, best)))) break;
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

namespace rules {
void require_sparsity(index atoms, index sparsity, const char* what) {
  if (sparsity < 1 || sparsity > atoms)
    throw InvalidArgument(fmt::format("{}: the sparsity must be between 1 and the {} atoms; got {}", what, atoms, sparsity));
}
}  // namespace rules

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
  rules::require_sparsity(K, options.sparsity, "Batch-OMP");
  if (options.tolerance > 0 && static_cast<index>(norms_squared.size()) != N)
    throw InvalidArgument(fmt::format("Batch-OMP: a tolerance needs the {} signals' squared norms; got {}", N,
                                      norms_squared.size()));
  require_host(G.device(), "Batch-OMP");
  SparseCodes<T> c{K, N, options.sparsity, std::vector<index>(static_cast<std::size_t>(N)),
                   std::vector<index>(static_cast<std::size_t>(N * options.sparsity)),
                   std::vector<T>(static_cast<std::size_t>(N * options.sparsity))};
  detail::in_parallel(N, kSignalsPerThread, [&](index first, index last) {
    OmpWork work(K, options.sparsity);
    for (index j = first; j < last; ++j)  // a column of D^T X is contiguous
      omp_one<T>(G, &DtX(0, j), options.tolerance > 0 ? norms_squared[static_cast<std::size_t>(j)] : 0.0, options, work,
                 &c.atom[static_cast<std::size_t>(j * options.sparsity)],
                 &c.value[static_cast<std::size_t>(j * options.sparsity)], c.count[static_cast<std::size_t>(j)]);
  });
  return c;
}

template <Real T>
SparseCodes<T> batch_omp(ConstMatrixView<T> D, ConstMatrixView<T> X, const OmpOptions& options) {
  if (D.rows() != X.rows()) throw ShapeMismatch("Batch-OMP: D and X (time points)", D.rows(), D.cols(), X.rows(), X.cols());
  if (D.device() != X.device())
    throw InvalidArgument(fmt::format("Batch-OMP: D is on {} but X is on {}; move one with .to()", D.device().name(),
                                      X.device().name()));
  require_finite(D, "D");
  require_finite(X, "X");
  if (X.device().is_cuda()) {
    rules::require_sparsity(D.cols(), options.sparsity, "Batch-OMP");
    return cuda::batch_omp<T>(D, X, options);
  }
  const index N = X.cols();
  Matrix<T> G, DtX;
  gram_and_correlations<T>(D, X, G, DtX);
  std::vector<double> norms(static_cast<std::size_t>(N), 0.0);
  for (index j = 0; j < N; ++j)
    for (index i = 0; i < X.rows(); ++i) norms[static_cast<std::size_t>(j)] += static_cast<double>(X(i, j)) * X(i, j);
  return batch_omp_gram<T>(G.view(), DtX.view(), norms, options);
}

// ---- k-SVD -------------------------------------------------------------------------------------

namespace {

// Squared representation errors ||x_j - D gamma_j||^2 of every signal.
template <Real T>
std::vector<double> errors(ConstMatrixView<T> X, const Matrix<T>& D, const SparseCodes<T>& c) {
  const index n = X.rows();
  std::vector<double> out(static_cast<std::size_t>(X.cols()));
  detail::in_parallel(X.cols(), kSignalsPerThread, [&](index first, index last) {
    std::vector<double> r(static_cast<std::size_t>(n));
    for (index j = first; j < last; ++j) {
      for (index i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = static_cast<double>(X(i, j));
      for (index t = 0; t < c.count[static_cast<std::size_t>(j)]; ++t) {
        const std::size_t slot = static_cast<std::size_t>(t + j * c.sparsity);
        for (index i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] -= static_cast<double>(D(i, c.atom[slot])) * c.value[slot];
      }
      double e = 0;
      for (double v : r) e += v * v;
      out[static_cast<std::size_t>(j)] = e;
    }
  });
  return out;
}

template <Real T>
SparseCodes<T> code(ConstMatrixView<T> X, const Matrix<T>& D, index sparsity) {
  Matrix<T> G, DtX;
  gram_and_correlations<T>(D.view(), X, G, DtX);
  return batch_omp_gram<T>(G.view(), DtX.view(), {}, {.sparsity = sparsity});
}

double rmse_of(const std::vector<double>& err, index rows) {
  double total = 0;
  for (double e : err) total += e;
  return std::sqrt(total / (static_cast<double>(rows) * static_cast<double>(err.size())));
}

// D(:, j) := x / ||x|| for the worst-represented signal not yet used this way; false when none is left.
template <Real T>
bool replace_with_worst(ConstMatrixView<T> X, Matrix<T>& D, index j, std::vector<double>& err) {
  const auto worst = std::max_element(err.begin(), err.end());
  if (worst == err.end() || !(*worst > 0)) return false;
  const index s = static_cast<index>(worst - err.begin());
  *worst = 0;  // each signal replaces one atom at most
  double norm = 0;
  for (index i = 0; i < X.rows(); ++i) norm += static_cast<double>(X(i, s)) * X(i, s);
  norm = std::sqrt(norm);
  if (!(norm > 0)) return false;
  for (index i = 0; i < X.rows(); ++i) D(i, j) = static_cast<T>(static_cast<double>(X(i, s)) / norm);
  return true;
}

}  // namespace

template <Real T>
KsvdResult<T> ksvd(ConstMatrixView<T> X, const KsvdOptions& o, const Matrix<T>* initial) {
  const index n = X.rows(), N = X.cols(), K = o.atoms;
  require_finite(X, "X");
  if (K < 1) throw InvalidArgument("k-SVD: give at least one atom");
  rules::require_sparsity(K, o.sparsity, "k-SVD");
  if (o.iterations < 0) throw InvalidArgument("k-SVD: the iteration count cannot be negative");
  std::mt19937_64 rng(o.seed);
  KsvdResult<T> out;
  Matrix<T>& D = out.dictionary;
  if (initial) {
    if (initial->rows() != n || initial->cols() != K)
      throw ShapeMismatch("k-SVD: the initial dictionary against X's time points and K", n, K, initial->rows(),
                          initial->cols());
    D = initial->to(Device::cpu());
  } else {
    if (K > N) throw InvalidArgument(fmt::format("k-SVD: {} atoms from {} signals: give fewer atoms or a dictionary", K, N));
    std::vector<index> order(static_cast<std::size_t>(N));
    std::iota(order.begin(), order.end(), index{0});
    std::shuffle(order.begin(), order.end(), rng);
    D = Matrix<T>(n, K);
    for (index j = 0; j < K; ++j)  // a column copy, wherever X lives
      detail::copy_bytes(&D(0, j), Device::cpu(), X.data() + order[static_cast<std::size_t>(j)] * X.ld(), X.device(),
                         static_cast<std::size_t>(n) * sizeof(T));
  }
  for (index j = 0; j < K; ++j) {  // unit-norm atoms (a zero one becomes the first basis vector)
    double norm = 0;
    for (index i = 0; i < n; ++i) norm += static_cast<double>(D(i, j)) * D(i, j);
    norm = std::sqrt(norm);
    for (index i = 0; i < n; ++i) D(i, j) = norm > 0 ? static_cast<T>(static_cast<double>(D(i, j)) / norm) : T(i == 0);
  }
  if (X.device().is_cuda()) return cuda::ksvd<T>(X, o, D, rng);

  std::vector<index> order(static_cast<std::size_t>(K));
  std::iota(order.begin(), order.end(), index{0});
  SparseCodes<T> previous;  // the codes the last update left
  // OMP's codes for D (with keep_better_codes, each signal keeping its previous code where that
  // represents it better); err gets the signals' squared errors.
  auto recode = [&](std::vector<double>& err) {
    SparseCodes<T> c = code<T>(X, D, o.sparsity);
    err = errors<T>(X, D, c);
    if (o.keep_better_codes && previous.signals == N) {
      const std::vector<double> old = errors<T>(X, D, previous);
      for (index s = 0; s < N; ++s)
        if (old[static_cast<std::size_t>(s)] < err[static_cast<std::size_t>(s)]) {
          err[static_cast<std::size_t>(s)] = old[static_cast<std::size_t>(s)];
          c.count[static_cast<std::size_t>(s)] = previous.count[static_cast<std::size_t>(s)];
          for (index t = 0; t < o.sparsity; ++t) {
            const std::size_t slot = static_cast<std::size_t>(t + s * o.sparsity);
            c.atom[slot] = previous.atom[slot];
            c.value[slot] = previous.value[slot];
          }
        }
    }
    return c;
  };
  for (int it = 0; it < o.iterations; ++it) {
    std::vector<double> err;
    SparseCodes<T> c = recode(err);
    out.rmse.push_back(rmse_of(err, n));
    if (o.progress) o.progress(it + 1, out.rmse.back());
    // who uses each atom: (signal, slot)
    std::vector<std::vector<std::pair<index, index>>> users(static_cast<std::size_t>(K));
    for (index s = 0; s < N; ++s)
      for (index t = 0; t < c.count[static_cast<std::size_t>(s)]; ++t)
        users[static_cast<std::size_t>(c.atom[static_cast<std::size_t>(t + s * c.sparsity)])].push_back({s, t});
    std::vector<bool> replaced(static_cast<std::size_t>(K), false);
    std::shuffle(order.begin(), order.end(), rng);
    for (index j : order) {
      const auto& w = users[static_cast<std::size_t>(j)];
      const index m = static_cast<index>(w.size());
      if (m == 0) {
        if (replace_with_worst<T>(X, D, j, err)) {
          replaced[static_cast<std::size_t>(j)] = true;
          ++out.replaced;
        }
        continue;
      }
      // E = X_w - D Gamma_w + d_j gamma_j: each user's residual with atom j's term left in
      Matrix<double> E(n, m);
      for (index u = 0; u < m; ++u) {
        const auto [s, own] = w[static_cast<std::size_t>(u)];
        for (index i = 0; i < n; ++i) E(i, u) = static_cast<double>(X(i, s));
        for (index t = 0; t < c.count[static_cast<std::size_t>(s)]; ++t) {
          if (t == own) continue;
          const std::size_t slot = static_cast<std::size_t>(t + s * c.sparsity);
          for (index i = 0; i < n; ++i) E(i, u) -= static_cast<double>(D(i, c.atom[slot])) * c.value[slot];
        }
      }
      std::vector<double> atom(static_cast<std::size_t>(n)), gamma(static_cast<std::size_t>(m));
      if (o.exact) {
        // E's leading singular pair from the largest eigenpair of the smaller Gram matrix, E E^T (n x n)
        // or E^T E (m x m): 0.13 s against 4.2 s for a thin SVD of a 274 x 133000 E
        const bool rows = n <= m;
        const index g = rows ? n : m;
        Matrix<double> M(g, g);
        k::syrk<double>(Uplo::Lower, rows ? Op::None : Op::Transpose, 1.0, E.view(), 0.0, M.view());
        double lambda = 0;
        std::vector<double> vec(static_cast<std::size_t>(g));
        if (k::largest_eigenpair<double>(M.view(), lambda, vec.data()) != 0)
          throw NoConvergence("k-SVD's rank-1 update (LAPACK syevr)", it + 1, 0.0, 0.0,
                              fmt::format("the eigenproblem of atom {}'s error did not converge", j + 1));
        if (!(lambda > 0)) {  // E = 0: the users need nothing from this atom
          for (index u = 0; u < m; ++u) {
            const auto [s, own] = w[static_cast<std::size_t>(u)];
            c.value[static_cast<std::size_t>(own + s * c.sparsity)] = T(0);
          }
          continue;
        }
        if (rows) {  // atom = u, gamma = E^T u
          atom = vec;
          for (index u = 0; u < m; ++u) {
            double t = 0;
            for (index i = 0; i < n; ++i) t += E(i, u) * atom[static_cast<std::size_t>(i)];
            gamma[static_cast<std::size_t>(u)] = t;
          }
        } else {  // gamma = sigma v, atom = E v / sigma
          const double sigma = std::sqrt(lambda);
          for (index u = 0; u < m; ++u) gamma[static_cast<std::size_t>(u)] = sigma * vec[static_cast<std::size_t>(u)];
          for (index i = 0; i < n; ++i) {
            double t = 0;
            for (index u = 0; u < m; ++u) t += E(i, u) * vec[static_cast<std::size_t>(u)];
            atom[static_cast<std::size_t>(i)] = t / sigma;
          }
        }
      } else {  // one power step from the current coefficients
        double norm = 0;
        for (index i = 0; i < n; ++i) {
          double t = 0;
          for (index u = 0; u < m; ++u)
            t += E(i, u) * c.value[static_cast<std::size_t>(w[static_cast<std::size_t>(u)].second +
                                                            w[static_cast<std::size_t>(u)].first * c.sparsity)];
          atom[static_cast<std::size_t>(i)] = t;
          norm += t * t;
        }
        norm = std::sqrt(norm);
        if (!(norm > 0)) continue;
        for (double& v : atom) v /= norm;
        for (index u = 0; u < m; ++u) {
          double t = 0;
          for (index i = 0; i < n; ++i) t += atom[static_cast<std::size_t>(i)] * E(i, u);
          gamma[static_cast<std::size_t>(u)] = t;
        }
      }
      for (index i = 0; i < n; ++i) D(i, j) = static_cast<T>(atom[static_cast<std::size_t>(i)]);
      for (index u = 0; u < m; ++u) {
        const auto [s, own] = w[static_cast<std::size_t>(u)];
        c.value[static_cast<std::size_t>(own + s * c.sparsity)] = static_cast<T>(gamma[static_cast<std::size_t>(u)]);
      }
    }
    previous = c;
    if (o.clear && it + 1 < o.iterations) {  // Rubinstein's cleardict (not after the last update: a fresh
                                              // atom would reach the result without ever being updated)
      err = errors<T>(X, D, c);
      std::vector<index> use(static_cast<std::size_t>(K), 0);
      for (index s = 0; s < N; ++s)
        for (index t = 0; t < c.count[static_cast<std::size_t>(s)]; ++t)
          if (std::abs(c.value[static_cast<std::size_t>(t + s * c.sparsity)]) > T(1e-7))
            ++use[static_cast<std::size_t>(c.atom[static_cast<std::size_t>(t + s * c.sparsity)])];
      for (index j = 0; j < K; ++j) {
        if (replaced[static_cast<std::size_t>(j)]) continue;
        if (rules::should_clear(D, j, use[static_cast<std::size_t>(j)], o) && replace_with_worst<T>(X, D, j, err))
          ++out.replaced;
      }
    }
  }
  std::vector<double> err;
  out.codes = recode(err);
  out.rmse.push_back(rmse_of(err, n));
  return out;
}

// ---- synthetic fMRI ----------------------------------------------------------------------------

SyntheticFmri synthetic_fmri(const SyntheticOptions& o) {
  const index T = o.time_points, K = o.sources, N = o.nx * o.ny * o.nz;
  if (T < 2 || K < 1 || o.nx < 1 || o.ny < 1 || o.nz < 1)
    throw InvalidArgument(fmt::format("synthetic fMRI: need at least 2 time points, 1 source and 1 voxel; got {} time "
                                      "points, {} sources, a {}x{}x{} volume",
                                      T, K, o.nx, o.ny, o.nz));
  if (!(o.tr > 0)) throw InvalidArgument("synthetic fMRI: the repetition time must be positive");
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  // SPM's canonical HRF: a gamma of shape 6 minus a sixth of one of shape 16, over 32 s
  std::vector<double> hrf;
  for (double t = 0; t <= 32.0; t += o.tr)
    hrf.push_back(std::pow(t, 5) * std::exp(-t) / 120.0 - std::pow(t, 15) * std::exp(-t) / (6.0 * 1307674368000.0));
  SyntheticFmri out{Matrix<double>(T, N), Matrix<double>(T, K), Matrix<double>(K, N)};
  for (index k = 0; k < K; ++k) {
    std::vector<double> design(static_cast<std::size_t>(T), 0.0);
    if (k % 2 == 0) {  // blocks: on and off for `length` volumes, from a random phase
      const index length = 8 + static_cast<index>(unit(rng) * 13), phase = static_cast<index>(unit(rng) * 2 * length);
      for (index t = 0; t < T; ++t) design[static_cast<std::size_t>(t)] = ((t + phase) / length) % 2 == 1 ? 1.0 : 0.0;
    } else {  // events, about one in twelve volumes
      for (index t = 0; t < T; ++t) design[static_cast<std::size_t>(t)] = unit(rng) < 1.0 / 12 ? 1.0 : 0.0;
      design[static_cast<std::size_t>(static_cast<index>(unit(rng) * T))] = 1.0;  // at least one
    }
    double mean = 0;
    for (index t = 0; t < T; ++t) {
      double v = 0;
      for (std::size_t l = 0; l < hrf.size() && static_cast<index>(l) <= t; ++l)
        v += hrf[l] * design[static_cast<std::size_t>(t - static_cast<index>(l))];
      out.timecourses(t, k) = v;
      mean += v / static_cast<double>(T);
    }
    double norm = 0;
    for (index t = 0; t < T; ++t) norm += (out.timecourses(t, k) - mean) * (out.timecourses(t, k) - mean);
    norm = std::sqrt(norm);
    for (index t = 0; t < T; ++t)
      out.timecourses(t, k) = norm > 0 ? (out.timecourses(t, k) - mean) / norm : (t == 0 ? 1.0 : 0.0);
    // a blob: random centre, radius 8 % to 20 % of the volume's largest side
    const double cx = unit(rng) * static_cast<double>(o.nx), cy = unit(rng) * static_cast<double>(o.ny),
                 cz = unit(rng) * static_cast<double>(o.nz);
    const double radius = (0.08 + 0.12 * unit(rng)) * static_cast<double>(std::max({o.nx, o.ny, o.nz}));
    for (index z = 0; z < o.nz; ++z)
      for (index y = 0; y < o.ny; ++y)
        for (index x = 0; x < o.nx; ++x) {
          const double dx = static_cast<double>(x) + 0.5 - cx, dy = o.ny > 1 ? static_cast<double>(y) + 0.5 - cy : 0.0,
                       dz = o.nz > 1 ? static_cast<double>(z) + 0.5 - cz : 0.0;
          const double v = std::exp(-(dx * dx + dy * dy + dz * dz) / (2 * radius * radius));
          out.maps(k, x + o.nx * (y + o.ny * z)) = v >= 0.05 ? v : 0.0;
        }
  }
  k::gemm<double>(Op::None, Op::None, 1.0, out.timecourses.view(), out.maps.view(), 0.0, out.data.view());
  if (std::isfinite(o.snr_db)) {
    double power = 0;
    for (index e = 0; e < out.data.size(); ++e) power += out.data.data()[e] * out.data.data()[e];
    power /= static_cast<double>(out.data.size());
    std::normal_distribution<double> noise(0.0, std::sqrt(power / std::pow(10.0, o.snr_db / 10)));
    for (index e = 0; e < out.data.size(); ++e) out.data.data()[e] += noise(rng);
  }
  return out;
}

template struct SparseCodes<float>;
template struct SparseCodes<double>;
template SparseCodes<float> batch_omp<float>(ConstMatrixView<float>, ConstMatrixView<float>, const OmpOptions&);
template SparseCodes<double> batch_omp<double>(ConstMatrixView<double>, ConstMatrixView<double>, const OmpOptions&);
template KsvdResult<float> ksvd<float>(ConstMatrixView<float>, const KsvdOptions&, const Matrix<float>*);
template KsvdResult<double> ksvd<double>(ConstMatrixView<double>, const KsvdOptions&, const Matrix<double>*);
template SparseCodes<float> batch_omp_gram<float>(ConstMatrixView<float>, ConstMatrixView<float>,
                                                  const std::vector<double>&, const OmpOptions&);
template SparseCodes<double> batch_omp_gram<double>(ConstMatrixView<double>, ConstMatrixView<double>,
                                                    const std::vector<double>&, const OmpOptions&);

}  // namespace linv::fmri
