// Mixed-precision refinement on the CPU (the mixed family, src/kernels/vectors.hpp): a float32 factorization, corrections against the float64
// residual, and GMRES-based refinement when the plain corrections stall.
//
// Plain refinement (LAPACK's dsgesv) converges when cond(A) * eps32 is well below 1 (cond up to about
// 1e6); beyond it each correction is too inaccurate to shrink the residual. GMRES-IR (Carson and Higham,
// SIAM J. Sci. Comput. 2018) instead solves each correction equation A d = r by GMRES in float64, with
// the float32 factors (applied in float64) as a preconditioner: the preconditioned matrix is close to
// the identity even when the factors are poor, so a few GMRES iterations give an accurate correction,
// and refinement reaches float64's backward error far beyond plain refinement's reach (tested to
// cond(A) = 1e12; at 1e13, n = 150, it took 233 GMRES iterations).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "cpu/algorithms.hpp"
#include "cpu/lapack.hpp"

namespace linv::cpu {
namespace {

namespace k = lapack;

constexpr int kMaxCorrections = 30;       // plain corrections, as LAPACK's ITERMAX
constexpr int kMaxGmresCorrections = 10;  // GMRES-IR corrections per right-hand side
constexpr int kMaxGmresIterations = 200;  // per correction
constexpr double kGmresTolerance = 1e-8;  // relative, on the preconditioned residual

// NaN when x holds one (std::max would skip it, and a NaN residual would pass every test).
double norm_inf_vector(const double* x, index n) {
  double m = 0;
  for (index i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return x[i];
    m = std::max(m, std::abs(x[i]));
  }
  return m;
}

// The float32 factorization and M^-1 v computed through it (v rounded to float32, solved, widened).
class LowFactor {
 public:
  LowFactor(ConstMatrixView<double> A, bool cholesky) : cholesky_(cholesky), lu_(A.rows(), A.rows()) {
    const index n = A.rows();
    constexpr double kFloatMax = std::numeric_limits<float>::max();
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) {
        if (std::abs(A(i, j)) > kFloatMax) {
          why_ = "A does not fit float32";
          return;
        }
        lu_(i, j) = static_cast<float>(A(i, j));
      }
    ipiv_.resize(static_cast<std::size_t>(n));
    const int info = cholesky ? k::potrf<float>(Uplo::Lower, lu_.view()) : k::getrf<float>(lu_.view(), ipiv_.data());
    if (info != 0) why_ = "the float32 factorization failed";
  }
  // The factorization's reciprocal condition estimate (1-norm), given the matrix's 1-norm.
  double rcond(double anorm) const {
    return cholesky_ ? k::pocon<float>(Uplo::Lower, lu_.view(), anorm) : k::gecon<float>(lu_.view(), anorm);
  }
  // Empty when the factorization is usable, else why not.
  const std::string& failure() const { return why_; }

  // V := M^-1 V in float64 with the float32 factors (GMRES-IR needs the preconditioned product more
  // accurate than float32: applied in float32 it stalls near cond(A) = 1e10).
  void apply_exactly(MatrixView<double> V) {
    if (lu_high_.empty()) {
      lu_high_ = Matrix<double>(lu_.rows(), lu_.cols());
      for (index j = 0; j < lu_.cols(); ++j)
        for (index i = 0; i < lu_.rows(); ++i) lu_high_(i, j) = static_cast<double>(lu_(i, j));
    }
    if (cholesky_)
      k::potrs<double>(Uplo::Lower, lu_high_.view(), V);
    else
      k::getrs<double>(Op::None, lu_high_.view(), ipiv_.data(), V);
  }

  // V := M^-1 V for the columns of V (n x c, double), in float32.
  void apply(MatrixView<double> V) {
    const index n = V.rows(), c = V.cols();
    scratch_.resize(n, c);
    Matrix<float>& s = scratch_.m;
    for (index j = 0; j < c; ++j)
      for (index i = 0; i < n; ++i) s(i, j) = static_cast<float>(V(i, j));
    if (cholesky_)
      k::potrs<float>(Uplo::Lower, lu_.view(), s.view());
    else
      k::getrs<float>(Op::None, lu_.view(), ipiv_.data(), s.view());
    for (index j = 0; j < c; ++j)
      for (index i = 0; i < n; ++i) V(i, j) = static_cast<double>(s(i, j));
  }

 private:
  struct Scratch {  // reused between calls of the same width
    Matrix<float> m;
    void resize(index r, index c) {
      if (m.rows() != r || m.cols() != c) m = Matrix<float>(r, c);
    }
  };
  bool cholesky_;
  Matrix<float> lu_;
  Matrix<double> lu_high_;  // the same factors widened, made when GMRES-IR first needs them
  std::vector<int> ipiv_;
  std::string why_;
  Scratch scratch_;
};

// d := approximately A^-1 r by GMRES on M^-1 A d = M^-1 r (float64, modified Gram-Schmidt, Givens
// rotations), from d = 0. Returns the iterations taken.
int gmres_correction(ConstMatrixView<double> A, LowFactor& M, const double* r, double* d) {
  const index n = A.rows();
  const int m = static_cast<int>(std::min<index>(n, kMaxGmresIterations));
  Matrix<double> V(n, m + 1);
  std::vector<double> H(static_cast<std::size_t>((m + 1) * m), 0.0), cs(m), sn(m), g(m + 1, 0.0);
  auto h = [&](int i, int j) -> double& { return H[static_cast<std::size_t>(i + j * (m + 1))]; };
  std::copy(r, r + n, V.data());
  M.apply_exactly(V.view().block(0, 0, n, 1));
  const double beta = std::sqrt(std::inner_product(V.data(), V.data() + n, V.data(), 0.0));
  std::fill(d, d + n, 0.0);
  if (beta == 0) return 0;
  for (index i = 0; i < n; ++i) V(i, 0) /= beta;
  g[0] = beta;
  int j = 0;
  for (; j < m; ++j) {
    // w = M^-1 A v_j
    k::gemm<double>(Op::None, Op::None, 1.0, A, V.view().block(0, j, n, 1), 0.0, V.view().block(0, j + 1, n, 1));
    M.apply_exactly(V.view().block(0, j + 1, n, 1));
    for (int i = 0; i <= j; ++i) {
      double dot = 0;
      for (index t = 0; t < n; ++t) dot += V(t, i) * V(t, j + 1);
      h(i, j) = dot;
      for (index t = 0; t < n; ++t) V(t, j + 1) -= dot * V(t, i);
    }
    double norm = 0;
    for (index t = 0; t < n; ++t) norm += V(t, j + 1) * V(t, j + 1);
    norm = std::sqrt(norm);
    h(j + 1, j) = norm;
    if (norm > 0)
      for (index t = 0; t < n; ++t) V(t, j + 1) /= norm;
    for (int i = 0; i < j; ++i) {  // earlier rotations on the new column
      const double a = h(i, j), b = h(i + 1, j);
      h(i, j) = cs[i] * a + sn[i] * b;
      h(i + 1, j) = -sn[i] * a + cs[i] * b;
    }
    const double a = h(j, j), b = h(j + 1, j), rho = std::hypot(a, b);
    cs[j] = rho > 0 ? a / rho : 1;
    sn[j] = rho > 0 ? b / rho : 0;
    h(j, j) = rho;
    h(j + 1, j) = 0;
    g[j + 1] = -sn[j] * g[j];
    g[j] = cs[j] * g[j];
    if (std::abs(g[j + 1]) <= kGmresTolerance * beta || norm == 0) {
      ++j;
      break;
    }
  }
  // y := H(0:j, 0:j)^-1 g(0:j), then d := V y
  std::vector<double> y(g.begin(), g.begin() + j);
  for (int i = j - 1; i >= 0; --i) {
    for (int c = i + 1; c < j; ++c) y[i] -= h(i, c) * y[c];
    y[i] /= h(i, i);
  }
  for (int c = 0; c < j; ++c)
    for (index t = 0; t < n; ++t) d[t] += y[c] * V(t, c);
  return j;
}

}  // namespace

kernels::MixedOutcome refine_mixed(ConstMatrixView<double> A, ConstMatrixView<double> B, MatrixView<double> X,
                                   bool cholesky) {
  const index n = A.rows(), nrhs = B.cols();
  kernels::MixedOutcome out;
  LowFactor M(A, cholesky);
  if (!M.failure().empty()) {
    out.failure = M.failure();
    return out;
  }
  std::vector<double> row_sums(static_cast<std::size_t>(n), 0.0);  // for ||A||_inf, read column by column
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < n; ++i) row_sums[static_cast<std::size_t>(i)] += std::abs(A(i, j));
  const double anorm = n == 0 ? 0.0 : *std::max_element(row_sums.begin(), row_sums.end());
  const double bound = anorm * std::numeric_limits<double>::epsilon() * std::sqrt(static_cast<double>(n));
  Matrix<double> R(n, nrhs);
  // R := B - A X; returns whether column j passes LAPACK's test ||r||_inf <= ||x||_inf ||A||_inf eps sqrt(n).
  auto residual = [&] {
    for (index j = 0; j < nrhs; ++j)
      for (index i = 0; i < n; ++i) R(i, j) = B(i, j);
    k::gemm<double>(Op::None, Op::None, -1.0, A, X, 1.0, R.view());
  };
  auto passes = [&](index j) {  // never for an X that overflowed (inf <= inf holds)
    const double xnorm = norm_inf_vector(&X(0, j), n);
    return std::isfinite(xnorm) && norm_inf_vector(&R(0, j), n) <= xnorm * bound;
  };
  auto backward_error = [&] {  // of the current R and X
    double worst = 0;
    for (index j = 0; j < nrhs; ++j)
      worst = std::max(worst, norm_inf_vector(&R(0, j), n) / (anorm * norm_inf_vector(&X(0, j), n)));
    return worst;
  };

  // A column is done once it passes LAPACK's test and its residual has stopped halving. The test alone
  // allows a forward error sqrt(n) times float64's (measured: 10-20x the float64 solve's at cond 1e4 to
  // 1e8); refinement stops improving x where the residual stops shrinking, and there x is as accurate
  // as a float64 factorization's.
  auto finished = [&](index j, double now, double before) {
    return passes(j) && (now == 0 || now > 0.5 * before);
  };

  // Plain refinement, all right-hand sides together.
  for (index j = 0; j < nrhs; ++j)
    for (index i = 0; i < n; ++i) X(i, j) = B(i, j);
  M.apply(X);
  Matrix<double> D(n, nrhs);  // the corrections, reused across steps
  std::vector<double> last(static_cast<std::size_t>(nrhs), std::numeric_limits<double>::infinity());
  std::vector<bool> stalled(static_cast<std::size_t>(nrhs), false), done(static_cast<std::size_t>(nrhs), false);
  for (int step = 0;; ++step) {
    residual();
    bool all = true, any_live = false;
    for (index j = 0; j < nrhs; ++j) {
      const auto c = static_cast<std::size_t>(j);
      if (done[c]) continue;
      const double now = norm_inf_vector(&R(0, j), n);
      if (finished(j, now, last[c])) {
        done[c] = true;
        continue;
      }
      all = false;
      // A correction that does not halve the residual will not get there: GMRES-IR takes over.
      if (!passes(j) && now > 0.5 * last[c]) stalled[c] = true;
      last[c] = now;
      any_live = any_live || !stalled[c];
    }
    if (all) {
      out.iterations = step;
      out.backward_error = backward_error();
      return out;
    }
    if (!any_live || step == kMaxCorrections) {
      out.iterations = step;
      break;
    }
    for (index j = 0; j < nrhs; ++j)
      for (index i = 0; i < n; ++i) D(i, j) = R(i, j);
    M.apply(D.view());
    for (index j = 0; j < nrhs; ++j)
      if (!stalled[static_cast<std::size_t>(j)] && !done[static_cast<std::size_t>(j)])
        for (index i = 0; i < n; ++i) X(i, j) += D(i, j);
  }

  // GMRES-IR for each column that has not converged.
  const int plain = out.iterations;
  int gmres_corrections = 0, gmres_iterations = 0;
  std::vector<double> d(static_cast<std::size_t>(n));
  bool all = true;
  for (index j = 0; j < nrhs; ++j) {
    if (done[static_cast<std::size_t>(j)]) continue;
    bool converged = false;
    double before = std::numeric_limits<double>::infinity();
    for (int step = 0; step < kMaxGmresCorrections; ++step) {
      const double now = norm_inf_vector(&R(0, j), n);
      if ((converged = finished(j, now, before))) break;
      before = now;
      gmres_iterations += gmres_correction(A, M, &R(0, j), d.data());
      ++gmres_corrections;
      for (index i = 0; i < n; ++i) X(i, j) += d[static_cast<std::size_t>(i)];
      for (index i = 0; i < n; ++i) R(i, j) = B(i, j);
      k::gemm<double>(Op::None, Op::None, -1.0, A, ConstMatrixView<double>(X).block(0, j, n, 1), 1.0,
                      R.view().block(0, j, n, 1));
    }
    all = all && (converged || passes(j));
  }
  out.iterations = plain + gmres_corrections;
  out.backward_error = backward_error();
  out.note = fmt::format("plain refinement stalled after {} corrections; GMRES-IR took {} more corrections ({} GMRES "
                         "iterations)",
                         plain, gmres_corrections, gmres_iterations);
  if (!all) out.failure = "refinement did not converge";
  return out;
}

kernels::MixedOutcome refine_least_squares(ConstMatrixView<double> A, ConstMatrixView<double> B, MatrixView<double> X) {
  const index m = A.rows(), n = A.cols(), nrhs = B.cols();
  kernels::MixedOutcome out;
  Matrix<double> G(n, n);  // A^T A, lower triangle, formed in float64
  k::syrk<double>(Uplo::Lower, Op::Transpose, 1.0, A, 0.0, G.view());
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < j; ++i) G(i, j) = G(j, i);
  LowFactor M(G.view(), /*cholesky=*/true);
  if (!M.failure().empty()) {
    out.failure = "A^T A is not positive definite in float32 (A is rank deficient or ill conditioned)";
    return out;
  }
  // Plain refinement converges when cond(A)^2 eps32 is well below 1; beyond cond(A) ~ 300 the
  // float32 Cholesky factor cannot carry it, and QR is the accurate way.
  double gnorm = 0;
  for (index j = 0; j < n; ++j) {
    double s = 0;
    for (index i = 0; i < n; ++i) s += std::abs(G(i, j));
    gnorm = std::max(gnorm, s);
  }
  const double rcond = M.rcond(gnorm);
  if (rcond < 1e-5) {
    out.failure = fmt::format("A^T A is too ill conditioned for float32 (rcond {:.2g})", rcond);
    return out;
  }
  double anorm = 0;  // ||A||_1
  for (index j = 0; j < n; ++j) {
    double s = 0;
    for (index i = 0; i < m; ++i) s += std::abs(A(i, j));
    anorm = std::max(anorm, s);
  }
  Matrix<double> R(m, nrhs), S(n, nrhs);
  // R := B - A X, S := A^T R; whether every column passes ||A^T r||_1 <= max(m, n) eps ||A||_1
  // (||A||_1 ||x||_1 + ||b||_1), the normwise test linv's lstsq results are held to (ratio <= 1).
  auto converged = [&] {
    for (index j = 0; j < nrhs; ++j)
      for (index i = 0; i < m; ++i) R(i, j) = B(i, j);
    k::gemm<double>(Op::None, Op::None, -1.0, A, X, 1.0, R.view());
    k::gemm<double>(Op::Transpose, Op::None, 1.0, A, R.view(), 0.0, S.view());
    const double scale = static_cast<double>(std::max(m, n)) * std::numeric_limits<double>::epsilon() * anorm;
    for (index j = 0; j < nrhs; ++j) {
      double s = 0, x = 0, b = 0;
      for (index i = 0; i < n; ++i) s += std::abs(S(i, j)), x += std::abs(X(i, j));
      for (index i = 0; i < m; ++i) b += std::abs(B(i, j));
      if (!(s <= scale * (anorm * x + b))) return false;
    }
    return true;
  };
  // x0 = G^-1 A^T b, then corrections d = G^-1 A^T (b - A x).
  k::gemm<double>(Op::Transpose, Op::None, 1.0, A, B, 0.0, X);
  M.apply(X);
  for (int step = 0; step <= kMaxCorrections; ++step) {
    if (converged()) {
      out.iterations = step;
      return out;
    }
    M.apply(S.view());
    for (index j = 0; j < nrhs; ++j)
      for (index i = 0; i < n; ++i) X(i, j) += S(i, j);
  }
  out.iterations = kMaxCorrections;
  out.failure = "refinement did not converge";
  return out;
}

}  // namespace linv::cpu
