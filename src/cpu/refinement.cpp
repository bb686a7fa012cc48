// Mixed-precision refinement on the CPU (the mixed family, src/kernels/vectors.hpp): a float32 factorization
// and corrections against the float64 residual (LAPACK's dsgesv), where the float32 factors can judge the
// matrix (kernels::float32_cannot_judge: rcond32 >= eps32, where plain refinement converges); elsewhere the
// caller factors in float64.
//
// GMRES-IR (Carson and Higham, SIAM J. Sci. Comput. 2018) took over where plain corrections stalled and
// reached float64's backward error up to cond(A) = 1e12, but it converged just as well on a singular matrix
// with a consistent right-hand side, where the float64 path refuses: with the float32 judgement in front it
// had nothing left to do, and it was removed (docs/design.md, "Mixed precision").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/lapack.hpp"
#include "cpu/algorithms.hpp"

namespace linv::cpu {
namespace {

namespace k = lapack;

constexpr int kMaxCorrections = 30;  // plain corrections, as LAPACK's ITERMAX

// NaN when x holds one (std::max would skip it, and a NaN residual would pass every test).
double norm_inf_vector(const double* x, index n) {
  double m = 0;
  for (index i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return x[i];
    m = std::max(m, std::abs(x[i]));
  }
  return m;
}

double norm1_of(ConstMatrixView<double> A) {
  double best = 0;
  for (index j = 0; j < A.cols(); ++j) {
    double s = 0;
    for (index i = 0; i < A.rows(); ++i) s += std::abs(A(i, j));
    best = std::max(best, s);
  }
  return best;
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
  std::vector<int> ipiv_;
  std::string why_;
  Scratch scratch_;
};

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
  if (const std::string why = kernels::float32_cannot_judge(M.rcond(norm1_of(A))); !why.empty()) {
    out.failure = why;
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
      // A correction that does not halve the residual will not get there: float64 takes over.
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

  out.backward_error = backward_error();
  out.failure = fmt::format("refinement stalled at a backward error of {:.3g} after {} corrections",
                            out.backward_error, out.iterations);
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
