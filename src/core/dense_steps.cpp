// dense_steps.hpp's functions that are not templates, and the mixed-precision solve behind
// mixed_solve_choosing.
#include "core/dense_steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "kernels/backend.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"

namespace linv::dense_steps {

void require_finite_rcond(double rcond, index smallest_pivot, const char* detail) {
  if (!(rcond > 0)) throw SingularMatrix(smallest_pivot, 1e-300, detail);
}

std::string precision_name(const char* type, Precision p, FactorPrecision low) {
  if (p != Precision::Mixed) return type;
  return low == FactorPrecision::Auto ? "mixed (factorization chosen by the device)"
                                      : fmt::format("mixed ({} factorization, float64 refinement)", to_string(low));
}

double default_tolerance(index n, double epsilon) { return static_cast<double>(std::max<index>(n, 16)) * epsilon; }

namespace {

// Mixed-precision solve of A X = B: a lower-precision factorization refined against the float64
// residual by the device's mixed family (on the CPU float32 with plain corrections, then GMRES-IR where they
// stall; on a GPU cuSOLVER's IRS solver for LU and dsposv's refinement for Cholesky). When refinement
// cannot reach float64's backward error, A is factored in float64 instead, the report says so, and that
// factorization is checked for singularity to working precision like any other.
// X from a float64 factorization (LU, randomized LU or Cholesky: `m`), its rcond and smallest pivot in the
// report. A randomized LU whose refinement stalls gives way to partial pivoting, said.
Matrix<double> float64_solve(ConstMatrixView<double> A, ConstMatrixView<double> B, Method m, Report& report) {
  auto householder = [&](const LU<double>& lu) {
    return householder_solve<double>(A, B, growth_reason(lu), report, [&](double rcond, index) { report.rcond = rcond; });
  };
  if (m == Method::RBT) {
    LU<double> lu = judgeable(factor_lu(A, Method::RBT, report), A, report);
    if (lu.is_singular()) throw SingularMatrix(lu.zero_pivot(), 0.0, "mixed precision, float64 LU");
    if (grew_too_much(lu)) return householder(lu);
    report.rcond = lu.rcond();
    std::optional<Matrix<double>> x =
        randomized_or_partial(lu, A, report, [&](const LU<double>& f) { return f.solve(B); });
    return x ? std::move(*x) : householder(lu);
  }
  if (m == Method::Cholesky) {
    const Cholesky<double> chol(A);  // NotPositiveDefinite names the failing minor
    report.rcond = chol.rcond();
    report.notes.push_back(fmt::format("the float64 factorization's smallest pivot is at position {}",
                                       smallest_diagonal<double>(chol.factor())));
    return chol.solve(B);
  }
  const LU<double> lu(A);
  if (lu.is_singular()) throw SingularMatrix(lu.zero_pivot(), 0.0, "mixed precision, float64 LU");
  report.growth = lu.growth();
  if (grew_too_much(lu)) return householder(lu);
  report.rcond = lu.rcond();
  report.notes.push_back(fmt::format("the float64 factorization's smallest pivot is at position {}",
                                     smallest_diagonal<double>(lu.factors())));
  return lu.solve(B);
}

// A refinement's outcome in the report: true where it converged; otherwise the fallback to `wide` factors,
// which the caller then makes, is said (`low`: the factors' precision).
bool refined(const kernels::MixedOutcome& r, std::string_view low, std::string_view wide, Report& report) {
  report.iterations = r.iterations;
  report.backward_error = r.backward_error;
  if (!r.note.empty()) report.notes.push_back(r.note);
  if (r.failure.empty()) {
    report.stop = StopReason::Converged;
    return true;
  }
  report.notes.push_back(
      fmt::format("{} refinement failed ({}): solved with a {} factorization instead", low, r.failure, wide));
  report.stop = StopReason::FellBack;
  report.iterations = 0;
  report.backward_error = std::numeric_limits<double>::quiet_NaN();
  return false;
}

Matrix<double> mixed_solve(ConstMatrixView<double> A, ConstMatrixView<double> B, Method m, FactorPrecision low,
                           Report& report) {
  const index n = A.rows();
  const bool cholesky = m == Method::Cholesky;
  if (low == FactorPrecision::Auto) {
    const std::string why = kernels::mixed(A.device()).float64_is_as_fast(A.device());
    if (!why.empty()) {
      report.precision = "mixed (float64 factorization: as fast here)";
      report.notes.push_back(fmt::format("mixed precision: {}; factored in float64 (--factor float32 refines from "
                                         "float32 anyway)",
                                         why));
      return float64_solve(A, B, m, report);
    }
    low = FactorPrecision::Float32;
    report.precision = precision_name("", Precision::Mixed, low);
  }
  if (low != FactorPrecision::Float32 && cholesky)
    throw InvalidArgument(fmt::format("a {} factorization is available for LU only; Cholesky refines from float32",
                                      to_string(low)));
  if (m == Method::RBT) {  // lower-precision factors are the device mixed family's, with partial pivoting
    report.method = Method::LU;
    report.method_reason = fmt::format("a {} factorization is LU with partial pivoting", to_string(low));
  }
  Matrix<double> x = Matrix<double>::uninitialized(n, B.cols(), A.device());
  if (refined(kernels::mixed(A.device()).solve(A, B, x.view(), cholesky, low), to_string(low), "float64", report))
    return x;
  // float64 instead, on either device, judged for singularity to working precision like any other.
  return float64_solve(A, B, m, report);
}

}  // namespace

Matrix<double> mixed_solve_choosing(ConstMatrixView<double> A, ConstMatrixView<double> B, Choice& c,
                                    Method requested, FactorPrecision low, Report& report) {
  if (c.method == Method::Cholesky && requested == Method::Auto && low != FactorPrecision::Float32 &&
      low != FactorPrecision::Auto) {
    c = {Method::LU, fmt::format("symmetric, but a {} factorization is LU only", to_string(low))};
    report.method = Method::LU;
    report.method_reason = c.reason;
  }
  if (c.method == Method::Cholesky) {
    if (requested != Method::Auto) require_symmetric(A, "cholesky");
    try {
      return mixed_solve(A, B, Method::Cholesky, low, report);
    } catch (const NotPositiveDefinite& e) {
      if (requested != Method::Auto) throw;
      c = {Method::LU, fmt::format("symmetric but not positive definite (leading minor {}): LU", e.minor())};
      report.method = Method::LU;
      report.method_reason = c.reason;
    }
  }
  return mixed_solve(A, B, c.method == Method::RBT ? Method::RBT : Method::LU, low, report);
}

Matrix<std::complex<double>> mixed_solve_choosing(ConstMatrixView<std::complex<double>> A,
                                                  ConstMatrixView<std::complex<double>> B, Choice& c, Method requested,
                                                  FactorPrecision, Report& report) {
  using C = std::complex<double>;
  bool cholesky = c.method == Method::Cholesky;
  if (cholesky && requested != Method::Auto) require_symmetric(A, "cholesky");
  report.precision = "mixed (complex64 factorization, complex128 refinement)";
  Matrix<C> x = Matrix<C>::uninitialized(A.rows(), B.cols(), A.device());
  if (refined(kernels::mixed(A.device()).solve_complex(A, B, x.view(), cholesky), "complex64", "complex128", report))
    return x;
  // complex128 instead, judged for singularity to working precision like any other; an indefinite Hermitian
  // matrix under auto goes to LU
  if (cholesky) {
    try {
      const Cholesky<C> chol(A);
      report.rcond = chol.rcond();
      return chol.solve(B);
    } catch (const NotPositiveDefinite& e) {
      if (requested != Method::Auto) throw;
      c = {Method::LU, fmt::format("Hermitian but not positive definite (leading minor {}): LU", e.minor())};
      report.method = Method::LU;
      report.method_reason = c.reason;
    }
  }
  const LU<C> lu(A);
  if (lu.is_singular()) throw SingularMatrix(lu.zero_pivot(), 0.0, "mixed precision, complex128 LU");
  report.growth = lu.growth();
  report.rcond = lu.rcond();
  return lu.solve(B);
}

void require_meaningful(const SolveOptions& o) {
  if (!(o.tolerance >= 0 && o.tolerance < 1))
    throw InvalidArgument(fmt::format("the tolerance must lie in [0, 1) (0: the default); got {}", o.tolerance));
  if (o.max_iterations < 1)
    throw InvalidArgument(fmt::format("max_iterations must be at least 1; got {}", o.max_iterations));
}
void require_meaningful(const LstsqOptions& o) {
  if (std::isnan(o.rcond) || std::isinf(o.rcond))
    throw InvalidArgument(fmt::format("rcond must be a finite number (negative: the default); got {}", o.rcond));
}

}  // namespace linv::dense_steps
