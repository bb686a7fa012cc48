// The CPU backend's fMRI family (src/kernels/fmri.hpp): Batch-OMP with signals across threads, k-SVD's
// passes on host memory (the codes kept sparse, SparseCodes), and the ADL and PARAFAC2 passes of adl.cpp
// and parafac2.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/fmri_rules.hpp"
#include "common/lapack.hpp"
#include "common/parallel.hpp"
#include "cpu/backend.hpp"
#include "linv/errors.hpp"

namespace linv::cpu {
namespace {

constexpr index kSignalsPerThread = 64;

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
void omp_one(ConstMatrixView<T> G, const T* alpha0, double norm_squared, const fmri::OmpOptions& o, OmpWork& work,
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
    if (fmri::rules::omp_correlations_exhausted<T>(top, first) ||
        std::find(chosen.begin(), chosen.end(), best) != chosen.end())
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
      if (fmri::rules::omp_atom_dependent<T>(d, static_cast<double>(G(best, best)))) break;
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

template <Real T>
fmri::SparseCodes<T> batch_omp(ConstMatrixView<T> G, ConstMatrixView<T> DtX, ConstMatrixView<double> norms,
                               const fmri::OmpOptions& options) {
  const index K = G.rows(), N = DtX.cols();
  fmri::SparseCodes<T> c{K, N, options.sparsity, std::vector<index>(static_cast<std::size_t>(N)),
                         std::vector<index>(static_cast<std::size_t>(N * options.sparsity)),
                         std::vector<T>(static_cast<std::size_t>(N * options.sparsity))};
  detail::in_parallel(N, kSignalsPerThread, [&](index first, index last) {
    OmpWork work(K, options.sparsity);
    for (index j = first; j < last; ++j)  // a column of D^T X is contiguous
      omp_one<T>(G, &DtX(0, j), options.tolerance > 0 ? norms.data()[j] : 0.0, options, work,
                 &c.atom[static_cast<std::size_t>(j * options.sparsity)],
                 &c.value[static_cast<std::size_t>(j * options.sparsity)], c.count[static_cast<std::size_t>(j)]);
  });
  return c;
}

// G = D^T D (both triangles) and DtX = D^T X.
template <Real T>
void gram_and_correlations(ConstMatrixView<T> D, ConstMatrixView<T> X, MatrixView<T> G, MatrixView<T> DtX) {
  lapack::syrk<T>(Uplo::Lower, Op::Transpose, T(1), D, T(0), G);
  for (index j = 1; j < G.cols(); ++j)
    for (index i = 0; i < j; ++i) G(i, j) = G(j, i);
  lapack::gemm<T>(Op::Transpose, Op::None, T(1), D, X, T(0), DtX);
}

// k-SVD's passes with the codes kept sparse.
template <Real T>
class KsvdSteps final : public kernels::KsvdSteps<T> {
 public:
  KsvdSteps(ConstMatrixView<T> X, Matrix<T> D0, const fmri::KsvdOptions& o, const kernels::GridSum* sum)
      : X_(X), D_(std::move(D0)), sparsity_(o.sparsity), sum_(sum) {}

  double code(bool keep_previous) override {
    const index K = D_.cols(), N = X_.cols();
    Matrix<T> G(K, K), DtX(K, N);
    gram_and_correlations<T>(D_.view(), X_, G.view(), DtX.view());
    fmri::SparseCodes<T> fresh = batch_omp<T>(G.view(), DtX.view(), {}, {.sparsity = sparsity_});
    err_ = errors(fresh);
    if (keep_previous) {  // each signal keeps the codes of the last updates where they represent it better
      const std::vector<double> old = errors(codes_);
      for (index s = 0; s < N; ++s)
        if (old[static_cast<std::size_t>(s)] < err_[static_cast<std::size_t>(s)]) {
          err_[static_cast<std::size_t>(s)] = old[static_cast<std::size_t>(s)];
          fresh.count[static_cast<std::size_t>(s)] = codes_.count[static_cast<std::size_t>(s)];
          for (index t = 0; t < sparsity_; ++t) {
            const std::size_t slot = static_cast<std::size_t>(t + s * sparsity_);
            fresh.atom[slot] = codes_.atom[slot];
            fresh.value[slot] = codes_.value[slot];
          }
        }
    }
    codes_ = std::move(fresh);
    users_.clear();
    claimed_.clear();
    double total = 0;
    for (double e : err_) total += e;
    return total;
  }

  std::vector<index> users(T threshold) override {
    std::vector<index> use(static_cast<std::size_t>(D_.cols()), 0);
    for (index s = 0; s < codes_.signals; ++s)
      for (index t = 0; t < codes_.count[static_cast<std::size_t>(s)]; ++t) {
        const std::size_t slot = static_cast<std::size_t>(t + s * sparsity_);
        if (std::abs(codes_.value[slot]) > threshold) ++use[static_cast<std::size_t>(codes_.atom[slot])];
      }
    return use;
  }

  void update_atom(index j, kernels::AtomUsers job, bool exact, int iteration) override {
    if (users_.empty()) {  // who uses each atom since the last sparse coding: (signal, slot), nonzero slots only
      users_.resize(static_cast<std::size_t>(D_.cols()));
      for (index s = 0; s < codes_.signals; ++s)
        for (index t = 0; t < codes_.count[static_cast<std::size_t>(s)]; ++t) {
          const std::size_t slot = static_cast<std::size_t>(t + s * sparsity_);
          if (codes_.value[slot] != T(0)) users_[static_cast<std::size_t>(codes_.atom[slot])].push_back({s, t});
        }
    }
    const auto& w = users_[static_cast<std::size_t>(j)];
    const index n = X_.rows(), m = static_cast<index>(w.size()), total = sum_ ? job.total : m;
    if (total == 0) return;
    // E = X_w - D Gamma_w + d_j gamma_j: each user's residual with atom j's term left in
    Matrix<double> E(n, m);
    for (index u = 0; u < m; ++u) {
      const auto [s, own] = w[static_cast<std::size_t>(u)];
      for (index i = 0; i < n; ++i) E(i, u) = static_cast<double>(X_(i, s));
      for (index t = 0; t < codes_.count[static_cast<std::size_t>(s)]; ++t) {
        if (t == own) continue;
        const std::size_t slot = static_cast<std::size_t>(t + s * sparsity_);
        for (index i = 0; i < n; ++i) E(i, u) -= static_cast<double>(D_(i, codes_.atom[slot])) * codes_.value[slot];
      }
    }
    std::vector<double> atom(static_cast<std::size_t>(n)), gamma(static_cast<std::size_t>(m));
    if (exact) {
      // E's leading singular pair from the largest eigenpair of the smaller Gram matrix, E E^T (n x n)
      // or E^T E (total x total): 0.13 s against 4.2 s for a thin SVD of a 274 x 133000 E. Over a job,
      // E E^T is the sum of every process's, and E^T E needs all of E: each process's columns in their
      // place, added up.
      const bool rows = n <= total;
      Matrix<double> whole;  // all of E, for E^T E over a job
      if (!rows && sum_) {
        whole = Matrix<double>(n, total);
        for (index u = 0; u < m; ++u)
          for (index i = 0; i < n; ++i) whole(i, job.before + u) = E(i, u);
        sum_->sum(whole.data(), static_cast<std::size_t>(whole.size()), nullptr);
      }
      const ConstMatrixView<double> all = whole.empty() ? E.view() : whole.view();
      const index g = rows ? n : total;
      Matrix<double> M(g, g);
      if (!(rows && m == 0))
        lapack::syrk<double>(Uplo::Lower, rows ? Op::None : Op::Transpose, 1.0, rows ? E.view() : all, 0.0, M.view());
      if (rows && sum_) sum_->sum(M.data(), static_cast<std::size_t>(M.size()), nullptr);
      double lambda = 0;
      std::vector<double> vec(static_cast<std::size_t>(g));
      if (lapack::largest_eigenpair<double>(M.view(), lambda, vec.data()) != 0)
        throw NoConvergence("k-SVD's rank-1 update (LAPACK syevr)", iteration + 1, 0.0, 0.0,
                            fmt::format("the eigenproblem of atom {}'s error did not converge", j + 1));
      if (!(lambda > 0)) {  // E = 0: the users need nothing from this atom
        for (const auto& [s, own] : w) codes_.value[static_cast<std::size_t>(own + s * sparsity_)] = T(0);
        return;
      }
      if (rows) {  // atom = u, gamma = E^T u
        atom = vec;
        for (index u = 0; u < m; ++u) {
          double t = 0;
          for (index i = 0; i < n; ++i) t += E(i, u) * atom[static_cast<std::size_t>(i)];
          gamma[static_cast<std::size_t>(u)] = t;
        }
      } else {  // gamma = sigma v (this process's part of v), atom = E v / sigma
        const double sigma = std::sqrt(lambda);
        for (index u = 0; u < m; ++u)
          gamma[static_cast<std::size_t>(u)] = sigma * vec[static_cast<std::size_t>(job.before + u)];
        for (index i = 0; i < n; ++i) {
          double t = 0;
          for (index u = 0; u < total; ++u) t += all(i, u) * vec[static_cast<std::size_t>(u)];
          atom[static_cast<std::size_t>(i)] = t / sigma;
        }
      }
    } else {  // one power step from the current coefficients: atom = E gamma^T (summed over a job), normalised
      for (index i = 0; i < n; ++i) {
        double t = 0;
        for (index u = 0; u < m; ++u) {
          const auto [s, own] = w[static_cast<std::size_t>(u)];
          t += E(i, u) * codes_.value[static_cast<std::size_t>(own + s * sparsity_)];
        }
        atom[static_cast<std::size_t>(i)] = t;
      }
      if (sum_) sum_->sum(atom.data(), atom.size(), nullptr);
      double norm = 0;
      for (double v : atom) norm += v * v;
      norm = std::sqrt(norm);
      if (!(norm > 0)) return;
      for (double& v : atom) v /= norm;
      for (index u = 0; u < m; ++u) {
        double t = 0;
        for (index i = 0; i < n; ++i) t += atom[static_cast<std::size_t>(i)] * E(i, u);
        gamma[static_cast<std::size_t>(u)] = t;
      }
    }
    for (index i = 0; i < n; ++i) D_(i, j) = static_cast<T>(atom[static_cast<std::size_t>(i)]);
    for (index u = 0; u < m; ++u) {
      const auto [s, own] = w[static_cast<std::size_t>(u)];
      codes_.value[static_cast<std::size_t>(own + s * sparsity_)] = static_cast<T>(gamma[static_cast<std::size_t>(u)]);
    }
  }

  kernels::WorstSignal worst_signal() override {
    const auto worst = std::max_element(err_.begin(), err_.end());
    if (worst == err_.end()) return {};
    return {*worst, static_cast<index>(worst - err_.begin())};
  }

  std::vector<double> claim_signal(index s) override {
    err_[static_cast<std::size_t>(s)] = 0;
    claimed_.push_back(s);
    std::vector<double> column(static_cast<std::size_t>(X_.rows()));
    for (index i = 0; i < X_.rows(); ++i) column[static_cast<std::size_t>(i)] = static_cast<double>(X_(i, s));
    return column;
  }

  void set_atom(index j, const std::vector<double>& atom) override {
    for (index i = 0; i < D_.rows(); ++i) D_(i, j) = static_cast<T>(atom[static_cast<std::size_t>(i)]);
  }

  void refresh_errors() override {
    err_ = errors(codes_);
    for (index s : claimed_) err_[static_cast<std::size_t>(s)] = 0;
  }
  Matrix<T> dictionary() override { return D_.clone(); }
  Matrix<T> take_dictionary() override { return std::move(D_); }
  fmri::SparseCodes<T> take_codes() override { return std::move(codes_); }

 private:
  // Squared representation errors ||x_s - D gamma_s||^2 of every signal for codes c.
  std::vector<double> errors(const fmri::SparseCodes<T>& c) const {
    const index n = X_.rows();
    std::vector<double> out(static_cast<std::size_t>(X_.cols()));
    detail::in_parallel(X_.cols(), kSignalsPerThread, [&](index first, index last) {
      std::vector<double> r(static_cast<std::size_t>(n));
      for (index j = first; j < last; ++j) {
        for (index i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = static_cast<double>(X_(i, j));
        for (index t = 0; t < c.count[static_cast<std::size_t>(j)]; ++t) {
          const std::size_t slot = static_cast<std::size_t>(t + j * c.sparsity);
          for (index i = 0; i < n; ++i)
            r[static_cast<std::size_t>(i)] -= static_cast<double>(D_(i, c.atom[slot])) * c.value[slot];
        }
        double e = 0;
        for (double v : r) e += v * v;
        out[static_cast<std::size_t>(j)] = e;
      }
    });
    return out;
  }

  ConstMatrixView<T> X_;
  Matrix<T> D_;
  index sparsity_;
  const kernels::GridSum* sum_;  // over a job's processes, or nullptr
  fmri::SparseCodes<T> codes_;  // the current codes (those of the last updates)
  std::vector<double> err_;
  std::vector<index> claimed_;  // the signals made atoms since the last coding
  std::vector<std::vector<std::pair<index, index>>> users_;  // per atom: (signal, slot), built per coding
};

template <Real T>
class Fmri final : public kernels::Fmri<T> {
 public:
  void gram_and_correlations(ConstMatrixView<T> D, ConstMatrixView<T> X, MatrixView<T> G,
                             MatrixView<T> DtX) const override {
    cpu::gram_and_correlations<T>(D, X, G, DtX);
  }
  fmri::SparseCodes<T> batch_omp(ConstMatrixView<T> G, ConstMatrixView<T> DtX, ConstMatrixView<double> norms,
                                 const fmri::OmpOptions& options) const override {
    return cpu::batch_omp<T>(G, DtX, norms, options);
  }
  std::unique_ptr<kernels::KsvdSteps<T>> ksvd_steps(ConstMatrixView<T> X, Matrix<T> D0,
                                                    const fmri::KsvdOptions& options,
                                                    const kernels::GridSum* sum) const override {
    return std::make_unique<KsvdSteps<T>>(X, std::move(D0), options, sum);
  }
  std::unique_ptr<kernels::AdlSteps<T>> adl_steps(ConstMatrixView<T> X, Matrix<T> D0, ConstMatrixView<T> task,
                                                  kernels::AdlConstraints constraints,
                                                  const kernels::GridSum* sum) const override {
    return cpu::adl_steps<T>(X, std::move(D0), task, constraints, sum);
  }
  std::unique_ptr<kernels::Parafac2Steps<T>> parafac2_steps(
      const std::vector<ConstMatrixView<T>>& slabs, const kernels::SlabShare& share) const override {
    return cpu::parafac2_steps<T>(slabs, share);
  }
};

}  // namespace

template <Real T>
const kernels::Fmri<T>& fmri() { return kernels::instance<Fmri<T>>(); }
template const kernels::Fmri<float>& fmri<float>();
template const kernels::Fmri<double>& fmri<double>();

}  // namespace linv::cpu
