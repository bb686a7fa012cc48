// solve: A X = B by the method chosen for A, judged by the conditioning policy and held to the accuracy
// promise (refinement with the residual in float64, then Householder QR).
#include "linv/dense.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "common/stopwatch.hpp"
#include "core/dense_steps.hpp"
#include "core/scaling.hpp"
#include "kernels/backend.hpp"
#include "linv/accuracy.hpp"
#include "linv/errors.hpp"

namespace linv {

using namespace dense_steps;

namespace {

// X := op^-1 R with the factorization (or inverse) that produced a result, for its refinement.
template <Scalar T>
using Corrector = std::function<Matrix<T>(ConstMatrixView<T>)>;

// B - A X with the products in float64, rounded to T.
template <Scalar T>
Matrix<T> residual_in_float64(ConstMatrixView<T> A, ConstMatrixView<T> X, ConstMatrixView<T> B) {
  if constexpr (std::is_same_v<T, wide_t<T>>) {
    Matrix<T> r = Matrix<T>::copy_of(B);
    gemm<T>(Op::None, Op::None, T(-1), A, X, T(1), r.view());
    return r;
  } else if constexpr (Complex<T>) {  // complex matrices live in host memory in this version
    const Matrix<wide_t<T>> a = widened(A), x = widened(X);
    Matrix<wide_t<T>> r = widened(B);
    gemm<wide_t<T>>(Op::None, Op::None, wide_t<T>(-1), a.view(), x.view(), wide_t<T>(1), r.view());
    return r.template cast<T>();
  } else {
    const Device device = A.device();
    const Matrix<double> a = widened(A), x = widened(X);
    Matrix<double> r = widened(B);
    gemm<double>(Op::None, Op::None, -1.0, a.view(), x.view(), 1.0, r.view());
    Matrix<float> rounded = Matrix<float>::uninitialized(r.rows(), r.cols(), device);
    kernels::mixed(device).round_to_float(r.view(), rounded.view());
    return rounded;
  }
}

// Keeps the promise for a solve: returns X (refined, or from Householder QR) whose scaled residual, left in
// r.scaled_residual, is within `bound`; `judge` re-judges the conditioning when QR takes over.
template <Scalar T, class Judge>
Matrix<T> kept_promise(ConstMatrixView<T> A, ConstMatrixView<T> B, Matrix<T> x, const Corrector<T>& correct,
                       double e, double bound, Report& r, Judge&& judge, bool& acted) {
  double s = scaled_residual_solve<T>(A, x.view(), B, e);
  const double first = s;
  int steps = 0;
  for (; correct && s > bound && steps < kPromiseRefinementSteps; ++steps) {
    Matrix<T> next = x.clone();
    kernels::vectors<T>(A.device()).axpy(T(1), correct(residual_in_float64<T>(A, x.view(), B).view()), next.view());
    const double refined = scaled_residual_solve<T>(A, next.view(), B, e);
    if (!(refined < s / 2)) break;  // no progress: the solver cannot do better
    x = std::move(next);
    s = refined;
  }
  if (steps > 0)
    r.notes.push_back(fmt::format("scaled residual {:.3g} above the bound {:g}: refined in {} step(s) to {:.3g}", first,
                                  bound, steps, s));
  if (s > bound && r.method != Method::QR) {
    x = householder_solve<T>(A, B, fmt::format("scaled residual {:.3g} above the bound {:g}", s, bound), r, judge);
    s = scaled_residual_solve<T>(A, x.view(), B, e);
  }
  acted = steps > 0 || first > bound;
  if (!(s <= bound))
    throw NumericalError(fmt::format("solve: the scaled residual {:.3g} exceeds linv's bound {:g} after refinement "
                                     "and Householder QR; no result is returned",
                                     s, bound));
  r.scaled_residual = s;
  return x;
}

// solve of operands checked by solve() and within the scaling band.
template <Scalar T>
Solution<T> solve_as_given(ConstMatrixView<T> A, ConstMatrixView<T> B, const SolveOptions& options) {
  const index n = A.rows();
  Choice c = choose(A, options.method, /*inverse=*/false);
  require_supported<T>(options, c.method);
  Solution<T> out;
  Report& r = out.report;
  fill_report<T>(r, Operation::Solve, c, options, A.device());
  const double e = options.precision == Precision::Mixed ? eps<double>() : eps<T>();
  // Judges the matrix from its rcond before the solution is computed.
  auto judge = [&](double rcond, index smallest) {
    r.rcond = rcond;
    apply_conditioning_policy(rcond, e, smallest, options.allow_ill_conditioned, &r, "solve");
  };
  Corrector<T> correct;  // the solver that produced X, for the accuracy promise's refinement
  double bound = kResidualBound;
  // An LU solve, or Householder QR's where partial pivoting grew too much to be trusted.
  auto lu_or_householder = [&](LU<T> lu, bool randomized) {
    if (!grew_too_much(lu)) {
      judge(lu.rcond(), smallest_diagonal<T>(lu.factors()));
      std::optional<Matrix<T>> x = randomized ? randomized_or_partial(lu, A, r, [&](const LU<T>& f) { return f.solve(B); })
                                              : std::optional<Matrix<T>>(lu.solve(B));
      if (x) {
        auto factors = std::make_shared<const LU<T>>(std::move(lu));
        correct = [factors](ConstMatrixView<T> R) { return factors->solve(R); };
        return std::move(*x);
      }
    }
    return householder_solve<T>(A, B, growth_reason(lu), r, judge);
  };
  Stopwatch clock;

  note_substitution<T>(options, c, r);
  if (refines(options, c)) {
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>) {
      out.x = mixed_solve_choosing(A, B, c, options.method, options.factor_precision, r);
      // rcond is known only when refinement failed and LAPACK factored in float64.
      if (!std::isnan(r.rcond)) apply_conditioning_policy(r.rcond, e, 0, options.allow_ill_conditioned, &r, "solve");
      // Refinement that converged knows no rcond, but ||A^-1|| >= ||X|| / ||B||, so ||B|| / (||A|| ||X||) bounds
      // it from above, and the same refusal as float64's applies where that bound is below eps: refinement of
      // an exactly singular matrix "converges" in backward error while X grows without bound (measured: ||X||
      // 3e28 for a singular matrix of order 50, backward error 2e-17).
      const double xnorm = norm1<T>(out.x.view());
      if (std::isnan(r.rcond) && xnorm > 0) {
        const double at_most = norm1(B) / (norm1(A) * xnorm);
        if (at_most < e) {
          r.rcond = at_most;
          apply_conditioning_policy(at_most, e, 0, options.allow_ill_conditioned, &r,
                                    "mixed precision: rcond is at most ||B|| / (||A|| ||X||)");
        }
      }
    }
  } else {
    switch (c.method) {
      case Method::Triangular: {
        index smallest = 0;
        judge(triangle_rcond(A, c.uplo, Diag::NonUnit, smallest), smallest);
        correct = [&A, uplo = c.uplo](ConstMatrixView<T> R) {
          Matrix<T> y = Matrix<T>::copy_of(R);
          dense_of(A).trsm(Side::Left, uplo, Op::None, Diag::NonUnit, T(1), A, y.view());
          return y;
        };
        out.x = correct(B);
        break;
      }
      case Method::Cholesky:
      case Method::CholeskyGETS: {
        std::optional<Cholesky<T>> chol = cholesky_or_fallback(A, c, options.method, r);
        if (!chol) {
          out.x = lu_or_householder(factor_lu(A, Method::LU, r), /*randomized=*/false);
          break;
        }
        judge(chol->rcond(), smallest_diagonal<T>(chol->factor()));
        auto factor = std::make_shared<const Cholesky<T>>(std::move(*chol));
        correct = [factor](ConstMatrixView<T> R) { return factor->solve(R); };
        if (c.method == Method::Cholesky) {
          out.x = factor->solve(B);
        } else {
          // X = L^-T (L^-1 B) with L^-1 from elimination on the triangle.
          Matrix<T> linv = invert_triangle<T>(factor->factor(), Uplo::Lower, TriangularInverse::GETS, Diag::NonUnit);
          Matrix<T> y = matmul<T>(linv.view(), B);
          out.x = Matrix<T>(n, B.cols(), A.device());
          gemm<T>(Op::Transpose, Op::None, T(1), linv.view(), y.view(), T(0), out.x.view());
        }
        break;
      }
      case Method::GaussJordan: {
        // Through the inverse (2n^3 flops rather than elimination's n^3): it gives the exact rcond, and
        // Gauss-Jordan elimination has no factorization left over to estimate it from.
        auto inverse = std::make_shared<Matrix<T>>(Matrix<T>::copy_of(A));
        index smallest = 0;
        const double rcond = gauss_jordan_in_place<T>(A, inverse->view(), smallest);
        if (!(rcond >= e)) {  // singular, or ruined by growth: as for the inverse
          LU<T> lu = factor_lu(A, Method::LU, r);
          if (grew_too_much(lu)) {
            out.x = lu_or_householder(std::move(lu), /*randomized=*/false);
            break;
          }
        }
        judge(rcond, smallest);
        correct = [inverse](ConstMatrixView<T> R) { return matmul<T>(inverse->view(), R); };
        out.x = correct(B);
        break;
      }
      case Method::GaussSeidel: {
        const double tol = options.tolerance > 0 ? options.tolerance : default_tolerance(n, eps<T>());
        out.x = Matrix<T>(n, B.cols(), A.device());
        const kernels::IterationOutcome it = dense_of(A).gauss_seidel(A, B, out.x.view(), tol, options.max_iterations);
        r.iterations = it.iterations;
        r.stop = StopReason::Converged;
        r.notes.push_back(fmt::format("final backward error {:.3g} (tolerance {:.3g})", it.backward_error, tol));
        // The iteration stops on the backward error the caller asked for, not on linv's bound.
        bound = std::max(kResidualBound, tol / (static_cast<double>(n) * eps<T>()));
        break;
      }
      default: {  // LU, CALU or RBT: choose() admits only the methods above and these
        out.x = lu_or_householder(judgeable(factor_lu(A, c.method, r), A, r), /*randomized=*/true);
        break;
      }
    }
  }
  r.seconds = clock.seconds();
  if (options.compute_residual) {
    bool acted = false;
    out.x = kept_promise<T>(A, B, std::move(out.x), correct, e, bound, r, judge, acted);
    if (acted) r.seconds = clock.seconds();  // the promise had to act: its time counts
  }
  return out;
}

}  // namespace

template <Scalar T>
Solution<T> solve(ConstMatrixView<T> A, ConstMatrixView<T> B, const SolveOptions& options) {
  require_same_device(A, B, "solve");
  require_square(A, "solve");
  require_meaningful(options);
  if (B.rows() != A.rows()) throw ShapeMismatch("solve: A and B", A.rows(), A.cols(), B.rows(), B.cols());
  const Scaled<T> a(A, checked_magnitude(A, "A", options.check_finite));
  const Scaled<T> b(B, checked_magnitude(B, "B", options.check_finite));
  Solution<T> s = solve_as_given<T>(a.view, b.view, options);
  note_scaling<T>(s.report, "A", a.exponent);
  note_scaling<T>(s.report, "B", b.exponent);
  scaling::scale_back(s.x, b.exponent - a.exponent, "solution");
  return s;
}

template Solution<float> solve<float>(ConstMatrixView<float>, ConstMatrixView<float>, const SolveOptions&);
template Solution<double> solve<double>(ConstMatrixView<double>, ConstMatrixView<double>, const SolveOptions&);
template Solution<std::complex<float>> solve<std::complex<float>>(ConstMatrixView<std::complex<float>>,
                                                                  ConstMatrixView<std::complex<float>>,
                                                                  const SolveOptions&);
template Solution<std::complex<double>> solve<std::complex<double>>(ConstMatrixView<std::complex<double>>,
                                                                    ConstMatrixView<std::complex<double>>,
                                                                    const SolveOptions&);

}  // namespace linv
