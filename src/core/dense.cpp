// linv's dense entry points: method selection (Method::Auto), input checks, the conditioning policy,
// reports, and the LU and Cholesky decomposition objects. Each routine runs where its operands live,
// through the dense and mixed families of that device's backend (src/kernels/dense.hpp, vectors.hpp).
#include "linv/dense.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <random>

#include "common/names.hpp"
#include "common/norm_estimate.hpp"
#include "common/stopwatch.hpp"
#include "core/policy.hpp"
#include "core/scaling.hpp"
#include "kernels/backend.hpp"
#include "linv/accuracy.hpp"
#include "linv/errors.hpp"

namespace linv {

// Below, with LU.
template <Real T>
LU<T> factor_lu(ConstMatrixView<T> A, Method method, Report& r);
template <Real T>
LU<T> judgeable(LU<T> lu, ConstMatrixView<T> A, Report& r);
template <Real T, class Use>
std::optional<Matrix<T>> randomized_or_partial(LU<T>& lu, ConstMatrixView<T> A, Report& r, Use&& use);

namespace {

template <Real T>
constexpr double eps() {
  return std::numeric_limits<T>::epsilon();
}

// The dense family of the device A lives on.
template <Real T>
const kernels::Dense<T>& dense_of(ConstMatrixView<T> A) {
  return kernels::dense<T>(A.device());
}

// NonFiniteInput for A's entry at `at`, its value read from wherever A lives.
template <Real T>
[[noreturn]] void throw_non_finite(ConstMatrixView<T> A, std::pair<index, index> at, const char* name) {
  const Matrix<T> value = Matrix<T>::copy_of(A.block(at.first, at.second, 1, 1)).to(Device::cpu());
  throw NonFiniteInput(name, at.first, at.second, static_cast<double>(value(0, 0)));
}

template <Real T>
void require_square(ConstMatrixView<T> A, const char* what) {
  if (!A.is_square())
    throw InvalidArgument(fmt::format("{} needs a square matrix, got {}", what, shape_string(A.rows(), A.cols())));
}

template <Real T>
void require_same_device(ConstMatrixView<T> A, ConstMatrixView<T> B, const char* what) {
  if (A.device() != B.device())
    throw InvalidArgument(fmt::format("{}: A is on {} but B is on {}; move one with .to()", what, A.device().name(),
                                      B.device().name()));
}

// An inverse that overflowed has no meaning at all: refuse it whatever the caller allows.
void require_finite_rcond(double rcond, index smallest_pivot, const char* detail) {
  if (!(rcond > 0)) throw SingularMatrix(smallest_pivot, 1e-300, detail);
}

template <Real T>
index smallest_diagonal(ConstMatrixView<T> F) {
  return policy::smallest_entry(dense_of(F).diagonal(F));
}

// ---- the accuracy promise of inv and solve (src/core/policy.hpp) ----------------------------------------
// Refinement computes the residual in float64.
using policy::apply_conditioning_policy;
using policy::kResidualBound;
constexpr int kPromiseRefinementSteps = policy::kRefinementSteps;

// X := op^-1 R with the factorization (or inverse) that produced a result, for its refinement.
template <Real T>
using Corrector = std::function<Matrix<T>(ConstMatrixView<T>)>;

// Partial pivoting past lu_growth_limit(n): elimination's backward error bound (n growth eps) then
// guarantees no residual, and condition estimates from the factors mean nothing (Wilkinson's growth matrix
// of order 2048, condition number 2000, overflows U and reads as singular). A randomized LU has its own
// check, the refinement against A.
template <Real T>
bool grew_too_much(const LU<T>& lu) {
  return lu.pivoting() != Pivoting::Randomized && !(lu.growth() <= lu_growth_limit(lu.size()));
}

template <Real T>
std::string growth_reason(const LU<T>& lu) {
  return fmt::format("partial pivoting grew the entries {:.3g}-fold (limit {:.3g}), so its factors bound no residual",
                     lu.growth(), lu_growth_limit(lu.size()));
}

// X = A^-1 B by Householder QR, backward stable whatever elimination's growth; judge(rcond, smallest)
// receives R's reciprocal condition estimate (within a factor n of A's in the 1-norm, A = Q R) and its
// smallest diagonal entry. `why` goes into the report.
template <Real T, class Judge>
Matrix<T> householder_solve(ConstMatrixView<T> A, ConstMatrixView<T> B, const std::string& why, Report& r,
                            Judge&& judge) {
  Matrix<T> factors = Matrix<T>::copy_of(A), x = Matrix<T>::copy_of(B);
  const kernels::Dense<T>& dense = dense_of(A);
  const index zero = dense.qr_solve(factors.view(), x.view());
  if (zero > 0) throw SingularMatrix(zero, 0.0, "Householder QR");
  r.method = Method::QR;
  r.notes.push_back(why + ": solved by Householder QR instead");
  judge(dense.triangular_rcond(factors, Uplo::Upper, Diag::NonUnit), smallest_diagonal<T>(factors));
  return x;
}

// M in float64, on its device.
Matrix<double> widened(ConstMatrixView<float> M) {
  Matrix<double> w = Matrix<double>::uninitialized(M.rows(), M.cols(), M.device());
  kernels::vectors<float>(M.device()).widen(M, w.view());
  return w;
}

// B - A X with the products in float64, rounded to T.
template <Real T>
Matrix<T> residual_in_float64(ConstMatrixView<T> A, ConstMatrixView<T> X, ConstMatrixView<T> B) {
  if constexpr (std::is_same_v<T, double>) {
    Matrix<double> r = Matrix<double>::copy_of(B);
    gemm<double>(Op::None, Op::None, -1.0, A, X, 1.0, r.view());
    return r;
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
template <Real T, class Judge>
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

// The scaled residual an inverse is judged on: ||A X - I||, or ||X A - I|| where that is the smaller (an
// LU-based inverse bounds the left one, Du Croz and Higham 1992), said in the report.
template <Real T>
double inverse_residual(ConstMatrixView<T> A, ConstMatrixView<T> X, double e, Report& r) {
  const double right = scaled_residual_inverse<T>(A, X, e);
  if (right <= kResidualBound) return right;
  const double left = scaled_left_residual_inverse<T>(A, X, e);
  if (!(left < right)) return right;
  r.notes.push_back(fmt::format("scaled residual of X A - I: {:.3g} (of A X - I: {:.3g})", left, right));
  return left;
}

// Keeps the promise for an inverse: Newton-Schulz steps X := X + X (I - A X) while they halve the residual,
// then Householder QR against the identity.
template <Real T, class Judge>
Matrix<T> kept_inverse_promise(ConstMatrixView<T> A, Matrix<T> x, double e, Report& r, bool& acted, Judge&& judge) {
  const index n = A.rows();
  double s = inverse_residual<T>(A, x.view(), e, r);
  const double first = s;
  int steps = 0;
  for (; s > kResidualBound && steps < kPromiseRefinementSteps; ++steps) {
    Matrix<T> residual = identity<T>(n, A.device());
    gemm<T>(Op::None, Op::None, T(-1), A, x.view(), T(1), residual.view());  // I - A X
    Matrix<T> next = x.clone();
    gemm<T>(Op::None, Op::None, T(1), x.view(), residual.view(), T(1), next.view());
    const double refined = inverse_residual<T>(A, next.view(), e, r);
    if (!(refined < s / 2)) break;
    x = std::move(next);
    s = refined;
  }
  if (steps > 0)
    r.notes.push_back(fmt::format("scaled residual {:.3g} above the bound {:g}: {} Newton step(s) to {:.3g}", first,
                                  kResidualBound, steps, s));
  if (s > kResidualBound && r.method != Method::QR) {
    const Matrix<T> eye = identity<T>(n, A.device());
    x = householder_solve<T>(A, eye.view(), fmt::format("scaled residual {:.3g} above the bound {:g}", s,
                                                        kResidualBound),
                             r, judge);
    s = inverse_residual<T>(A, x.view(), e, r);
  }
  acted = steps > 0 || first > kResidualBound;
  if (!(s <= kResidualBound))
    throw NumericalError(fmt::format("inverse: the scaled residual {:.3g} exceeds linv's bound {:g} after Newton steps "
                                     "and Householder QR; no result is returned",
                                     s, kResidualBound));
  r.scaled_residual = s;
  return x;
}

// Zeroes the strict triangle opposite `keep`.
template <Real T>
void keep_triangle(MatrixView<T> A, Uplo keep) {
  dense_of<T>(A).zero_triangle(A, keep == Uplo::Lower ? Uplo::Upper : Uplo::Lower);
}

std::string precision_name(const char* type, Precision p, FactorPrecision low = FactorPrecision::Float32) {
  if (p != Precision::Mixed) return type;
  return low == FactorPrecision::Auto ? "mixed (factorization chosen by the device)"
                                      : fmt::format("mixed ({} factorization, float64 refinement)", to_string(low));
}

struct Choice {
  Method method;
  std::string reason;
  Uplo uplo = Uplo::Lower;  // for Triangular
  bool in_float64 = false;  // a float32 inverse computed by float64's randomized LU (inverse_in_float64)
};

// What Method::Auto (or an explicit method) means for this matrix, for an inverse or a solve; the
// backend says which inverses it computes fastest.
template <Real T>
Choice choose(ConstMatrixView<T> A, Method requested, bool inverse) {
  const Structure s = detect_structure(A);
  const bool triangular = s == Structure::Lower || s == Structure::Upper || s == Structure::Diagonal;
  const Uplo uplo = s == Structure::Upper ? Uplo::Upper : Uplo::Lower;
  if (requested == Method::Triangular) {
    if (!triangular)
      throw InvalidArgument("method triangular needs a triangular matrix; this one has nonzeros on both sides of the diagonal");
    return {Method::Triangular, "", uplo};
  }
  if (requested != Method::Auto) {
    if (std::find(std::begin(kSolveMethods), std::end(kSolveMethods), requested) == std::end(kSolveMethods))
      throw InvalidArgument(fmt::format("inv and solve take the methods auto, lu, calu, rbt, cholesky, gauss-jordan, cholesky-gets, "
                                        "gauss-seidel and triangular, not {}",
                                        to_string(requested)));
    return {requested, "", uplo};
  }
  if (triangular)
    return {Method::Triangular, s == Structure::Diagonal ? "matrix is diagonal" :
                                s == Structure::Lower ? "matrix is lower triangular" : "matrix is upper triangular",
            uplo};
  const kernels::DensePreferences fastest = dense_of(A).preferences();
  if (s == Structure::Symmetric) {
    const bool gets = inverse && fastest.triangles == TriangularInverse::GETS;
    return {gets ? Method::CholeskyGETS : Method::Cholesky, "matrix is symmetric: trying Cholesky", uplo};
  }
  if (!inverse && A.rows() >= fastest.randomized_solve_from)
    return {Method::RBT, fmt::format("general matrix; the randomized LU is the faster solve on {} at this size",
                                     A.device().name()),
            uplo};
  if (inverse && A.rows() >= fastest.randomized_inverse_from && A.rows() < fastest.randomized_inverse_to) {
    if constexpr (std::is_same_v<T, float>) {
      // float32's own randomized LU cannot be refined (eps times its growth leaves ||I - A X|| near 1):
      // float64's, rounded, where the device runs float64 at float32's rate (DensePreferences).
      const std::string why = kernels::mixed(A.device()).float64_is_as_fast(A.device());
      if (!why.empty())
        return {Method::RBT,
                fmt::format("general matrix; {}: the randomized LU and Newton steps in float64, rounded to float32, "
                            "are the faster inverse at this size",
                            why),
                uplo, /*in_float64=*/true};
    } else {
      return {Method::RBT,
              fmt::format("general matrix; the randomized LU and Newton steps are the faster inverse on {} at this size",
                          A.device().name()),
              uplo};
    }
  }
  if (inverse && A.rows() >= fastest.gauss_jordan_from)
    return {Method::GaussJordan, fmt::format("general matrix; Gauss-Jordan is the faster inverse on {} at this size",
                                             A.device().name()),
            uplo};
  return {Method::LU, "general matrix", uplo};
}

template <Real T>
void fill_report(Report& r, Operation operation, const Choice& c, const SolveOptions& o, Device d) {
  r.operation = operation;
  r.method = c.method;
  r.method_reason = c.reason;
  r.device = d;
  r.precision = precision_name(type_name<T>(), o.precision, o.factor_precision);
}

template <Real T>
void require_supported(const SolveOptions& o, Method m) {
  const Precision p = o.precision;
  if (p != Precision::Mixed && o.factor_precision != FactorPrecision::Auto)
    throw InvalidArgument(fmt::format("a {} factorization applies to mixed precision only", to_string(o.factor_precision)));
  if (p != Precision::Mixed) return;
  if constexpr (!std::is_same_v<T, double>)
    throw InvalidArgument("mixed precision refines to float64: give a float64 matrix");
  if (m != Method::LU && m != Method::RBT && m != Method::Cholesky)
    throw InvalidArgument(
        fmt::format("mixed precision is available with the lu, rbt and cholesky methods, not {}", to_string(m)));
}

double default_tolerance(index n, double epsilon) { return static_cast<double>(std::max<index>(n, 16)) * epsilon; }

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
  const kernels::MixedOutcome r = kernels::mixed(A.device()).solve(A, B, x.view(), cholesky, low);
  report.iterations = r.iterations;
  report.backward_error = r.backward_error;
  if (!r.note.empty()) report.notes.push_back(r.note);
  if (r.failure.empty()) {
    report.stop = StopReason::Converged;
    return x;
  }

  // float64 instead, on either device, judged for singularity to working precision like any other.
  report.notes.push_back(
      fmt::format("{} refinement failed ({}): solved with a float64 factorization instead", to_string(low), r.failure));
  report.stop = StopReason::FellBack;
  report.iterations = 0;
  report.backward_error = std::numeric_limits<double>::quiet_NaN();
  return float64_solve(A, B, m, report);
}

// Factors A for the Cholesky methods. Under Method::Auto an indefinite matrix is no error: it returns
// nullopt after switching the choice to LU and saying why in the report.
template <Real T>
std::optional<Cholesky<T>> cholesky_or_fallback(ConstMatrixView<T> A, Choice& c, Method requested, Report& report) {
  if (requested != Method::Auto) require_symmetric(A, std::string(to_string(c.method)).c_str());
  try {
    Cholesky<T> chol(A);
    if (requested == Method::Auto) report.method_reason = "matrix is symmetric positive definite";
    return chol;
  } catch (const NotPositiveDefinite& e) {
    if (requested != Method::Auto) throw;
    c = {Method::LU, fmt::format("symmetric but not positive definite (leading minor {}): LU", e.minor())};
    report.method = c.method;
    report.method_reason = c.reason;
    return std::nullopt;
  }
}

// Mixed precision with Method::Auto's Cholesky-then-LU fallback for symmetric indefinite matrices.
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

// A triangle's rcond (LAPACK's estimate, before any inversion work); an exact zero on the diagonal is
// refused at once, naming it. `smallest` receives the smallest diagonal entry's index for messages.
template <Real T>
double triangle_rcond(ConstMatrixView<T> A, Uplo uplo, Diag diag, index& smallest) {
  if (diag == Diag::NonUnit) {
    const std::vector<T> d = dense_of(A).diagonal(A);
    for (std::size_t i = 0; i < d.size(); ++i)
      if (d[i] == T(0))
        throw SingularMatrix(static_cast<index>(i) + 1, 0.0, "zero on the diagonal of the triangular matrix");
  }
  smallest = smallest_diagonal(A);
  return dense_of(A).triangular_rcond(A, uplo, diag);
}

template <Real T>
Matrix<T> invert_triangle(ConstMatrixView<T> A, Uplo uplo, TriangularInverse how, Diag diag) {
  Matrix<T> x = Matrix<T>::copy_of(A);
  const kernels::Dense<T>& k = dense_of(A);
  k.triangular_inverse(x.view(), uplo, how, diag);
  // The result is triangular whatever A held in the other triangle, and a unit triangle's inverse has
  // a unit diagonal, which the routines leave implicit.
  keep_triangle<T>(x.view(), uplo);
  if (diag == Diag::Unit) k.set_diagonal(x.view(), T(1));
  return x;
}

// In-place Gauss-Jordan inverse; returns the exact rcond (from the inverse).
template <Real T>
double gauss_jordan_in_place(ConstMatrixView<T> A, MatrixView<T> X, index& smallest) {
  smallest = dense_of(A).gauss_jordan_inverse(X);
  return 1.0 / (norm1(A) * norm1<T>(X));
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
std::string_view to_string(FactorPrecision p) {
  switch (p) {
    case FactorPrecision::Auto: return "auto";
    case FactorPrecision::Float32: return "float32";
    case FactorPrecision::TF32: return "tf32";
    case FactorPrecision::BFloat16: return "bf16";
    case FactorPrecision::Float16: return "fp16";
  }
  return "?";
}

FactorPrecision parse_factor_precision(std::string_view name) {
  return parse_name(name, "factor precision",
                    {FactorPrecision::Auto, FactorPrecision::Float32, FactorPrecision::TF32, FactorPrecision::BFloat16,
                     FactorPrecision::Float16});
}

double Determinant::value() const { return sign == 0 ? 0.0 : sign * std::exp(log_abs); }

template <Real T>
void require_finite(ConstMatrixView<T> A, const char* name) {
  if (const auto at = dense_of(A).magnitude(A).first_non_finite) throw_non_finite<T>(A, *at, name);
}

template <Real T>
void require_symmetric(ConstMatrixView<T> A, const char* method) {
  const auto pair = dense_of(A).first_asymmetric(A);
  if (!pair) return;
  const auto [i, j] = *pair;
  const Matrix<T> a_ij = Matrix<T>::copy_of(A.block(i, j, 1, 1)).to(Device::cpu());
  const Matrix<T> a_ji = Matrix<T>::copy_of(A.block(j, i, 1, 1)).to(Device::cpu());
  // every digit the type holds, and the difference: the two may agree in the first six
  const int digits = std::numeric_limits<T>::max_digits10;
  throw NumericalError(fmt::format(
      "{} needs a symmetric positive definite matrix, but a({},{}) = {:.{}g} differs from a({},{}) = {:.{}g} by {:.3g}",
      method, i + 1, j + 1, static_cast<double>(a_ij(0, 0)), digits, j + 1, i + 1, static_cast<double>(a_ji(0, 0)),
      digits, std::abs(static_cast<double>(a_ij(0, 0)) - static_cast<double>(a_ji(0, 0)))));
}

template <Real T>
Structure detect_structure(ConstMatrixView<T> A) {
  return dense_of(A).detect_structure(A);
}

// ---- LU -------------------------------------------------------------------------------------------
std::string_view to_string(Pivoting p) {
  switch (p) {
    case Pivoting::Partial: return "partial";
    case Pivoting::Tournament: return "tournament";
    case Pivoting::Randomized: return "randomized";
  }
  return "?";
}

double lu_growth_limit(index n) { return std::max(64.0, 8.0 * std::pow(static_cast<double>(n), 2.0 / 3.0)); }


namespace {

// The butterflies' factors r = exp(rho / 10), rho uniform in [-1/2, 1/2] (Parker's choice, MAGMA's and
// SLATE's): well conditioned (each level's condition number in the 1-norm is at most 2 e^0.1), yet random
// enough to make every leading minor nonsingular with probability 1. A fixed seed makes the factorization
// reproducible.
template <Real T>
Matrix<T> random_butterflies(index n, Device device) {
  Matrix<T> r(n, 2 * kernels::kButterflyDepth);
  std::mt19937_64 generator(0x6275747465726679ULL);  // "butterfly"
  std::uniform_real_distribution<double> rho(-0.5, 0.5);
  for (index j = 0; j < r.cols(); ++j)
    for (index i = 0; i < n; ++i) r(i, j) = static_cast<T>(std::exp(rho(generator) / 10));
  return r.to(device);
}

// (-1)^sign and log|det W| of the butterflies W of r: each pair's 2 x 2 block [r_i r_j; r_i -r_j] / sqrt2
// has determinant -r_i r_j, an odd block's last entry r.
template <Real T>
Determinant butterfly_determinant(ConstMatrixView<T> r) {
  const Matrix<T> host = Matrix<T>::copy_of(r).to(Device::cpu());
  const index n = r.rows();
  Determinant d{1, 0.0};
  for (index level = 0; level < r.cols(); ++level) {
    const index blocks = index{1} << level;
    for (index b = 0; b < blocks; ++b) {
      const index h = ((b + 1) * n / blocks - b * n / blocks) / 2;
      if (h % 2 != 0) d.sign = -d.sign;
    }
    for (index i = 0; i < n; ++i) d.log_abs += std::log(static_cast<double>(host(i, level)));
  }
  return d;
}

}  // namespace

template <Real T>
LU<T>::LU(ConstMatrixView<T> A, Pivoting pivoting, bool check_finite) : pivoting_(pivoting) {
  require_square(A, "LU");
  const kernels::Dense<T>& dense = dense_of(A);
  const kernels::Magnitude magnitude = dense.magnitude(A);
  if (check_finite && magnitude.first_non_finite) throw_non_finite<T>(A, *magnitude.first_non_finite, "A");
  exponent_ = scaling::exponent_for(magnitude.max_abs);
  // A as factored: scaled into the band; reloaded where a factorization gives way to partial pivoting
  const auto load = [&] {
    copy<T>(A, factors_.view());
    if (exponent_ != 0) scaling::scale_by_power_of_two<T>(factors_.view(), -exponent_);
  };
  factors_ = Matrix<T>::uninitialized(A.rows(), A.cols(), A.device());
  load();
  anorm_ = norm1<T>(factors_);
  if (pivoting == Pivoting::Randomized) {  // A_r = U^T A V
    butterflies_ = random_butterflies<T>(A.rows(), A.device());
    const index d = kernels::kButterflyDepth;
    dense.butterflies(butterflies_.block(0, 0, A.rows(), d), Side::Left, Op::Transpose, factors_.view());
    dense.butterflies(butterflies_.block(0, d, A.rows(), d), Side::Right, Op::None, factors_.view());
  }
  kernels::LuOutcome o = dense.lu_factor(factors_.view(), pivots_, pivoting);
  if (pivoting == Pivoting::Randomized) {
    // A zero pivot of A_r says nothing of A (a leading minor vanished): partial pivoting decides.
    if (o.zero_pivot > 0 || !std::isfinite(o.growth)) {
      fallback_ = o.zero_pivot > 0 ? fmt::format("the randomized factorization met a zero pivot at column {}", o.zero_pivot)
                                   : std::string("the randomized factorization overflowed");
      load();
      o = dense.lu_factor(factors_.view(), pivots_, Pivoting::Partial);
      pivoting_ = Pivoting::Partial;
      butterflies_ = Matrix<T>();
    } else {
      original_ = Matrix<T>::uninitialized(A.rows(), A.cols(), A.device());  // the scaled A, for the refinement
      copy<T>(A, original_.view());
      if (exponent_ != 0) scaling::scale_by_power_of_two<T>(original_.view(), -exponent_);
    }
  }
  if (pivoting == Pivoting::Tournament) {
    // A zero pivot may be the tournament's (a row left out of the final round held the column's only
    // nonzero) and large growth costs digits: partial pivoting decides both.
    const double limit = lu_growth_limit(A.rows());
    if (o.zero_pivot > 0 || !(o.growth <= limit)) {
      fallback_ = o.zero_pivot > 0 ? fmt::format("tournament pivoting met a zero pivot at column {}", o.zero_pivot)
                                   : fmt::format("tournament pivoting grew the entries {:.3g}-fold (limit {:.3g})",
                                                 o.growth, limit);
      load();
      o = dense.lu_factor(factors_.view(), pivots_, Pivoting::Partial);
      pivoting_ = Pivoting::Partial;
    }
  }
  zero_pivot_ = o.zero_pivot;
  growth_ = o.growth;
}

// The LU that inv and solve use for `method` (LU, CALU or RBT), its pivoting and growth in the report.
// Their callers applied the finiteness policy (SolveOptions::check_finite) already.
template <Real T>
LU<T> factor_lu(ConstMatrixView<T> A, Method method, Report& r) {
  LU<T> lu(A,
           method == Method::CALU ? Pivoting::Tournament :
           method == Method::RBT  ? Pivoting::Randomized : Pivoting::Partial,
           /*check_finite=*/false);
  r.growth = lu.growth();
  if (!lu.fallback_reason().empty()) {
    r.method = Method::LU;
    r.notes.push_back(lu.fallback_reason() + ": factored again with partial pivoting");
  }
  return lu;
}

// A randomized factorization's condition estimate is only as good as its factors, whose normwise backward
// error is about eps growth (measured below it: 2.7e-12 against 1.3e-11 at order 4096, growth 6e4; the
// worst-case bound's factor n would send random float64 matrices of order 2050 back): a matrix closer than
// that to a singular one (a zero column, once the butterflies have mixed it, no longer shows as a zero
// pivot) is judged by partial pivoting instead, which finds exact zero pivots and estimates from stable
// factors. Returns the factorization to use, with a note when it changed.
template <Real T>
LU<T> judgeable(LU<T> lu, ConstMatrixView<T> A, Report& r) {
  if (lu.pivoting() != Pivoting::Randomized) return lu;
  const double floor = eps<T>() * std::max(1.0, lu.growth());
  if (lu.rcond() >= floor) return lu;
  r.notes.push_back(fmt::format("the randomized factorization cannot judge this matrix (rcond estimate {:.3g} below "
                                "eps growth = {:.3g}): factored again with partial pivoting",
                                lu.rcond(), floor));
  r.method = Method::LU;
  return factor_lu(A, Method::LU, r);
}

// use(lu), and where a randomized factorization's refinement stalls, a note and use() of partial
// pivoting's factors instead (lu then holds them), or nothing when those grew too much to be trusted
// (the caller turns to Householder QR).
template <Real T, class Use>
std::optional<Matrix<T>> randomized_or_partial(LU<T>& lu, ConstMatrixView<T> A, Report& r, Use&& use) {
  if (lu.pivoting() != Pivoting::Randomized) return use(lu);
  try {
    Matrix<T> x = use(lu);
    r.iterations = lu.refinement_steps();
    r.notes.push_back(fmt::format("randomized LU (growth {:.3g}), refined in {} step(s)", lu.growth(),
                                  lu.refinement_steps()));
    return x;
  } catch (const NumericalError& stalled) {
    r.notes.push_back(std::string(stalled.what()) + ": factored again with partial pivoting");
    lu = factor_lu(A, Method::LU, r);
    r.method = Method::LU;
    if (grew_too_much(lu)) return std::nullopt;
    return use(lu);
  }
}

template <Real T>
Matrix<T> LU<T>::apply_inverse(ConstMatrixView<T> B, Op op) const {
  const kernels::Dense<T>& dense = dense_of<T>(factors_);
  Matrix<T> x = Matrix<T>::copy_of(B);
  if (pivoting_ != Pivoting::Randomized) {
    dense.lu_solve(factors_, pivots_, x.view(), op);
    return x;
  }
  // A^-1 = V A_r^-1 U^T and A^-T = U A_r^-T V^T
  const index n = size(), d = kernels::kButterflyDepth;
  const ConstMatrixView<T> u = butterflies_.block(0, 0, n, d), v = butterflies_.block(0, d, n, d);
  dense.butterflies(op == Op::None ? u : v, Side::Left, Op::Transpose, x.view());
  dense.lu_solve(factors_, pivots_, x.view(), op);
  dense.butterflies(op == Op::None ? v : u, Side::Left, Op::None, x.view());
  return x;
}

template <Real T>
double LU<T>::rcond() const {
  if (rcond_ >= 0) return rcond_;
  if (zero_pivot_ > 0) return rcond_ = 0.0;
  if (pivoting_ != Pivoting::Randomized) return rcond_ = dense_of<T>(factors_).lu_rcond(factors_, pivots_, anorm_);
  // ||A^-1||_1 through the butterflies (A_r's estimate could be off by their condition numbers, up to 24)
  const index n = size();
  if (n == 0 || anorm_ == 0) return rcond_ = n == 0 ? 1.0 : 0.0;
  constexpr int kColumns = 2;
  const double est = cpu::block_norm1_estimate<T>(n, kColumns, [&](std::vector<T>& X, bool transpose) {
    Matrix<T> block(n, static_cast<index>(X.size()) / n);
    std::copy(X.begin(), X.end(), block.data());
    const Matrix<T> y = apply_inverse(block.to(factors_.device()).view(), transpose ? Op::Transpose : Op::None)
                            .to(Device::cpu());
    std::copy(y.data(), y.data() + X.size(), X.begin());
  });
  return rcond_ = est > 0 ? 1.0 / (anorm_ * est) : 0.0;
}

template <Real T>
Determinant LU<T>::determinant() const {
  if (zero_pivot_ > 0) return {0, -std::numeric_limits<double>::infinity()};
  Determinant d{1, 0.0};
  if (pivoting_ == Pivoting::Randomized) {  // det A = det A_r / (det U det V)
    const index d_levels = kernels::kButterflyDepth;
    for (index side = 0; side < 2; ++side) {
      const Determinant w = butterfly_determinant<T>(butterflies_.block(0, side * d_levels, size(), d_levels));
      d.sign *= w.sign;
      d.log_abs -= w.log_abs;
    }
  }
  const std::vector<T> u = dense_of<T>(factors_).diagonal(factors_);
  for (std::size_t i = 0; i < u.size(); ++i) {
    if (u[i] < 0) d.sign = -d.sign;
    if (pivots_[i] != static_cast<int>(i) + 1) d.sign = -d.sign;
    d.log_abs += std::log(std::abs(static_cast<double>(u[i])));
  }
  d.log_abs += static_cast<double>(size()) * exponent_ * std::numbers::ln2;  // det(2^e A_s) = 2^(n e) det A_s
  return d;
}

template <Real T>
Matrix<T> LU<T>::solve(ConstMatrixView<T> B) const {
  require_same_device<T>(factors_, B, "LU::solve");
  if (B.rows() != size()) throw ShapeMismatch("LU::solve: A and B", size(), size(), B.rows(), B.cols());
  if (zero_pivot_ > 0) throw SingularMatrix(zero_pivot_, 0.0, "LU solve");
  refinement_steps_ = 0;
  Matrix<T> x = apply_inverse(B, Op::None);  // of the scaled A: A^-1 B is 2^-e times it
  if (pivoting_ != Pivoting::Randomized || B.empty()) {
    scaling::scale_back(x, -exponent_, "solution");
    return x;
  }
  // Refinement in working precision (LAPACK's gerfs criteria): r = B - A x until the normwise backward
  // error ||r|| / (||A|| ||x|| + ||B||) reaches eps or stops halving.
  const double bnorm = norm1(B), epsilon = eps<T>();
  double previous = std::numeric_limits<double>::infinity(), berr = 0;
  Matrix<T> r(B.rows(), B.cols(), B.device());
  for (;;) {
    copy<T>(B, r.view());
    gemm<T>(Op::None, Op::None, T(-1), original_, x, T(1), r.view());
    berr = norm1<T>(r) / (anorm_ * norm1<T>(x) + bnorm);
    if (!std::isfinite(berr))
      throw NumericalError("randomized LU solve: the refinement's residual is not finite (growth " +
                           fmt::format("{:.3g}", growth_) + "); factor with partial pivoting");
    if (berr <= epsilon || berr > previous / 2 || refinement_steps_ == kMaxRefinementSteps) break;
    const Matrix<T> correction = apply_inverse(r, Op::None);
    kernels::vectors<T>(x.device()).axpy(T(1), correction, x.view());
    previous = berr;
    ++refinement_steps_;
  }
  const double bound = static_cast<double>(size()) * epsilon;
  if (!(berr <= bound))
    throw NumericalError(fmt::format("randomized LU solve: refinement stalled at backward error {:.3g} after {} steps "
                                     "(partial pivoting reaches {:.3g}); factor with partial pivoting",
                                     berr, refinement_steps_, bound));
  scaling::scale_back(x, -exponent_, "solution");
  return x;
}

// A^-1 = V A_r^-1 U^T from the factors of A_r, then Newton-Schulz steps X := X + X (I - A X) in working
// precision. Without pivoting the factors' backward error is eps times a growth of 1e4-6e5 on random
// matrices, so the first X's residual is 100-1000x partial pivoting's; each step squares ||I - A X||
// and adds only the products' rounding (n eps ||A|| ||X||), so one step reaches getri's accuracy once
// ||I - A X||^2 is below that level. Two n^3 products a step: cheaper than the refined solve against
// the identity (an n-column solve and a product per step). Throws NumericalError when ||I - A X|| >= 1
// (the step would diverge) or after kMaxRefinementSteps steps.
template <Real T>
Matrix<T> LU<T>::refined_randomized_inverse() const {
  const index n = size(), d = kernels::kButterflyDepth;
  const kernels::Dense<T>& dense = dense_of<T>(factors_);
  Matrix<T> x = factors_.clone();
  dense.lu_inverse(x.view(), pivots_);  // the pivots are the identity: A_r^-1
  dense.butterflies(butterflies_.block(0, d, n, d), Side::Left, Op::None, x.view());
  dense.butterflies(butterflies_.block(0, 0, n, d), Side::Right, Op::Transpose, x.view());
  const double level = 0.1 * static_cast<double>(n) * eps<T>() * anorm_;  // times ||X||: the products' rounding
  const Matrix<T> eye = identity<T>(n, factors_.device());
  Matrix<T> r(n, n, factors_.device());
  for (refinement_steps_ = 1;; ++refinement_steps_) {
    copy<T>(eye, r.view());
    gemm<T>(Op::None, Op::None, T(-1), original_, x, T(1), r.view());  // I - A X
    const double rnorm = norm1<T>(r), xnorm = norm1<T>(x);
    if (!(rnorm < 1))
      throw NumericalError(fmt::format("randomized LU inverse: ||I - A X||_1 = {:.3g} (growth {:.3g}), too far for "
                                       "Newton steps; factor with partial pivoting",
                                       rnorm, growth_));
    Matrix<T> next = x.clone();
    gemm<T>(Op::None, Op::None, T(1), x, r, T(1), next.view());  // X + X (I - A X)
    x = std::move(next);
    if (rnorm * rnorm <= level * xnorm) return x;
    if (refinement_steps_ == kMaxRefinementSteps)
      throw NumericalError(fmt::format("randomized LU inverse: ||I - A X||_1 still {:.3g} after {} Newton steps "
                                       "(growth {:.3g}); factor with partial pivoting",
                                       rnorm, refinement_steps_, growth_));
  }
}

template <Real T>
Matrix<T> LU<T>::inverse() const {
  if (zero_pivot_ > 0) throw SingularMatrix(zero_pivot_, 0.0, "LU inverse");
  Matrix<T> x;
  if (pivoting_ == Pivoting::Randomized) {
    x = refined_randomized_inverse();
  } else {
    x = factors_.clone();
    dense_of<T>(x).lu_inverse(x.view(), pivots_);
  }
  rcond_ = size() > 0 ? 1.0 / (anorm_ * norm1<T>(x)) : 1.0;
  require_finite_rcond(rcond_, smallest_diagonal<T>(factors_), "LU inverse overflowed");
  scaling::scale_back(x, -exponent_, "inverse");
  return x;
}

// ---- Cholesky -------------------------------------------------------------------------------------
template <Real T>
Cholesky<T>::Cholesky(ConstMatrixView<T> A) {
  require_square(A, "Cholesky");
  const kernels::Magnitude magnitude = dense_of(A).magnitude(A);
  if (magnitude.first_non_finite) throw_non_finite<T>(A, *magnitude.first_non_finite, "A");
  exponent_ = scaling::exponent_for(magnitude.max_abs);
  exponent_ += exponent_ % 2 != 0 ? 1 : 0;  // even: L of 2^(2k) A is 2^k L
  factor_ = exponent_ != 0 ? scaling::normalized_copy<T>(A, exponent_) : Matrix<T>::copy_of(A);
  anorm_ = norm1<T>(factor_);
  const index info = dense_of(A).cholesky_factor(factor_.view());
  if (info > 0) throw NotPositiveDefinite(info);
}

template <Real T>
double Cholesky<T>::rcond() const {
  if (rcond_ < 0)
    rcond_ = dense_of<T>(factor_).cholesky_rcond(factor_, anorm_);
  return rcond_;
}

template <Real T>
Determinant Cholesky<T>::determinant() const {
  Determinant d{1, 0.0};
  for (T l : dense_of<T>(factor_).diagonal(factor_)) d.log_abs += 2.0 * std::log(static_cast<double>(l));
  d.log_abs += static_cast<double>(size()) * exponent_ * std::numbers::ln2;
  return d;
}

template <Real T>
Matrix<T> Cholesky<T>::solve(ConstMatrixView<T> B) const {
  require_same_device<T>(factor_, B, "Cholesky::solve");
  if (B.rows() != size()) throw ShapeMismatch("Cholesky::solve: A and B", size(), size(), B.rows(), B.cols());
  Matrix<T> x = Matrix<T>::copy_of(B);
  dense_of<T>(factor_).cholesky_solve(factor_, x.view());
  scaling::scale_back(x, -exponent_, "solution");
  return x;
}

template <Real T>
Matrix<T> Cholesky<T>::inverse(TriangularInverse how) const {
  Matrix<T> x = factor_.clone();
  dense_of<T>(x).cholesky_inverse(x.view(), how);
  rcond_ = size() > 0 ? 1.0 / (anorm_ * norm1<T>(x)) : 1.0;
  require_finite_rcond(rcond_, smallest_diagonal<T>(factor_), "Cholesky inverse overflowed");
  scaling::scale_back(x, -exponent_, "inverse");
  return x;
}

template <Real T>
Matrix<T> Cholesky<T>::L() const {
  Matrix<T> l = factor_.clone();
  keep_triangle<T>(l.view(), Uplo::Lower);
  scaling::scale_back(l, exponent_ / 2, "Cholesky factor");
  return l;
}

// ---- free functions -------------------------------------------------------------------------------
template <Real T>
Matrix<T> tri_inv(ConstMatrixView<T> A, Uplo uplo, TriangularInverse how, Diag diag) {
  require_square(A, "tri_inv");
  require_finite(A, "A");
  index smallest = 0;
  const double rcond = triangle_rcond(A, uplo, diag, smallest);
  apply_conditioning_policy(rcond, eps<T>(), smallest, /*allow=*/false, nullptr, "triangular inverse");
  return invert_triangle(A, uplo, how, diag);
}

// A float32 inverse by the randomized LU and Newton steps in float64 (Choice::in_float64), rounded to
// float32, with that computation's method, growth, rcond, steps and notes in r. Nothing, with a note, for a
// matrix singular to float32's working precision that the caller does not allow: float32's partial
// pivoting then factors it and names its smallest pivot.
namespace {
std::optional<Matrix<float>> inverse_in_float64(ConstMatrixView<float> A, bool allow_ill_conditioned, Report& r) {
  const Device device = A.device();
  const Solution<double> s =
      inv<double>(widened(A).view(), {.method = Method::RBT, .check_finite = false, .allow_ill_conditioned = true});
  if (!(s.report.rcond >= eps<float>()) && !allow_ill_conditioned) {
    r.notes.push_back(fmt::format("rcond {:.3g} (from the float64 inverse) is below float32's machine epsilon: "
                                  "factored again in float32 with partial pivoting",
                                  s.report.rcond));
    return std::nullopt;
  }
  r.method = s.report.method;
  r.growth = s.report.growth;
  r.rcond = s.report.rcond;
  r.iterations = s.report.iterations;
  r.notes.insert(r.notes.end(), s.report.notes.begin(), s.report.notes.end());
  r.notes.push_back("computed in float64, rounded to float32");
  Matrix<float> x = Matrix<float>::uninitialized(A.rows(), A.cols(), device);
  kernels::mixed(device).round_to_float(s.x.view(), x.view());
  return x;
}

// inv of a matrix checked by inv() and within the scaling band (src/core/scaling.hpp).
template <Real T>
Solution<T> inverse_as_given(ConstMatrixView<T> A, const SolveOptions& options) {
  const index n = A.rows();
  Choice c = choose(A, options.method, /*inverse=*/true);
  require_supported<T>(options, c.method);
  Solution<T> out;
  Report& r = out.report;
  fill_report<T>(r, Operation::Inverse, c, options, A.device());
  const double e = options.precision == Precision::Mixed ? eps<double>() : eps<T>();
  index smallest = 0;  // the smallest pivot, named when the matrix is refused
  // An LU inverse, or Householder QR's where partial pivoting grew too much to be trusted.
  auto lu_or_householder = [&](LU<T>& lu, bool randomized) {
    if (!grew_too_much(lu)) {
      std::optional<Matrix<T>> x =
          randomized ? randomized_or_partial(lu, A, r, [](const LU<T>& f) { return f.inverse(); })
                     : std::optional<Matrix<T>>(lu.inverse());
      if (x) {
        r.rcond = lu.rcond();
        smallest = smallest_diagonal<T>(lu.factors());
        return std::move(*x);
      }
    }
    const Matrix<T> eye = identity<T>(n, A.device());
    return householder_solve<T>(A, eye.view(), growth_reason(lu), r, [&](double rcond, index s) {
      r.rcond = rcond;
      smallest = s;
    });
  };
  Stopwatch clock;

  if (options.precision == Precision::Mixed) {
    if constexpr (std::is_same_v<T, double>) {
      const Matrix<double> eye = identity<double>(n, A.device());
      out.x = mixed_solve_choosing(A, eye.view(), c, options.method, options.factor_precision, r);
      r.rcond = 1.0 / (norm1(A) * norm1<double>(out.x.view()));
    }
  } else {
    switch (c.method) {
      case Method::Triangular: {
        r.rcond = triangle_rcond(A, c.uplo, Diag::NonUnit, smallest);
        apply_conditioning_policy(r.rcond, e, smallest, options.allow_ill_conditioned, &r, "triangular inverse");
        out.x = invert_triangle(A, c.uplo, dense_of(A).preferences().triangles, Diag::NonUnit);
        break;
      }
      case Method::Cholesky:
      case Method::CholeskyGETS: {
        std::optional<Cholesky<T>> chol = cholesky_or_fallback(A, c, options.method, r);
        if (!chol) {
          LU<T> lu = factor_lu(A, Method::LU, r);
          out.x = lu_or_householder(lu, /*randomized=*/false);
          break;
        }
        out.x = chol->inverse(c.method == Method::CholeskyGETS ? TriangularInverse::GETS : TriangularInverse::Lapack);
        r.rcond = chol->rcond();
        smallest = smallest_diagonal<T>(chol->factor());
        break;
      }
      case Method::GaussJordan: {
        out.x = Matrix<T>::copy_of(A);
        r.rcond = gauss_jordan_in_place<T>(A, out.x.view(), smallest);
        if (!(r.rcond >= e)) {
          // Singular, or growth ruined the inverse (Gauss-Jordan pivots as partial pivoting does):
          // partial pivoting's growth tells which, and Householder QR takes the second case.
          LU<T> lu = factor_lu(A, Method::LU, r);
          if (grew_too_much(lu)) out.x = lu_or_householder(lu, /*randomized=*/false);
        }
        break;
      }
      case Method::GaussSeidel: {
        const double tol = options.tolerance > 0 ? options.tolerance : default_tolerance(n, eps<T>());
        const Matrix<T> eye = identity<T>(n, A.device());
        out.x = Matrix<T>(n, n, A.device());
        const kernels::IterationOutcome it =
            dense_of(A).gauss_seidel(A, eye.view(), out.x.view(), tol, options.max_iterations);
        r.iterations = it.iterations;
        r.stop = StopReason::Converged;
        r.notes.push_back(fmt::format("final backward error {:.3g} (tolerance {:.3g})", it.backward_error, tol));
        r.rcond = 1.0 / (norm1(A) * norm1<T>(out.x.view()));
        break;
      }
      default: {  // LU, CALU or RBT: choose() admits only the methods above and these
        if constexpr (std::is_same_v<T, float>) {
          if (c.in_float64) {
            if (std::optional<Matrix<float>> x = inverse_in_float64(A, options.allow_ill_conditioned, r)) {
              out.x = std::move(*x);
              break;
            }
            c.method = r.method = Method::LU;
          }
        }
        // No judgeable(): a randomized inverse is accepted only once ||I - A X|| < 1, which no singular A
        // allows (I - A X then has the eigenvalue 1), and its rcond is then exact, from X.
        LU<T> lu = factor_lu(A, c.method, r);
        out.x = lu_or_householder(lu, /*randomized=*/true);
        break;
      }
    }
  }
  if (r.method == Method::RBT && !(r.rcond >= e) && !options.allow_ill_conditioned) {
    // The randomized factorization never has the last word on singularity: partial pivoting factors and
    // judges the matrix again (on an H100 it called a permutation-like matrix of cond 1e10 singular, with
    // rcond 2.1e-18, where partial pivoting and NumPy invert it).
    SolveOptions partial = options;
    partial.method = Method::LU;
    Solution<T> again = inverse_as_given<T>(A, partial);
    again.report.method_reason = r.method_reason;
    again.report.notes.insert(again.report.notes.begin(),
                              fmt::format("the randomized LU's inverse gave rcond {:.3g}, below machine epsilon: factored "
                                          "again with partial pivoting, which judges",
                                          r.rcond));
    return again;
  }
  if (c.method != Method::Triangular)  // the triangle was judged before it was inverted
    apply_conditioning_policy(r.rcond, e, smallest, options.allow_ill_conditioned, &r, "inverse");
  r.seconds = clock.seconds();
  if (options.compute_residual) {
    bool acted = false;
    out.x = kept_inverse_promise<T>(A, std::move(out.x), e, r, acted, [&](double rcond, index s) {
      r.rcond = rcond;
      apply_conditioning_policy(rcond, e, s, options.allow_ill_conditioned, &r, "inverse");
    });
    if (acted) r.seconds = clock.seconds();  // the promise had to act: its time counts
  }
  return out;
}

// solve of operands checked by solve() and within the scaling band.
template <Real T>
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

  if (options.precision == Precision::Mixed) {
    if constexpr (std::is_same_v<T, double>) {
      out.x = mixed_solve_choosing(A, B, c, options.method, options.factor_precision, r);
      // rcond is known only when refinement failed and LAPACK factored in float64.
      if (!std::isnan(r.rcond)) apply_conditioning_policy(r.rcond, e, 0, options.allow_ill_conditioned, &r, "solve");
      // Refinement that converged knows no rcond, but ||A^-1|| >= ||X|| / ||B||, so ||B|| / (||A|| ||X||) bounds
      // it from above, and the same refusal as float64's applies where that bound is below eps: refinement of
      // an exactly singular matrix "converges" in backward error while X grows without bound (measured: ||X||
      // 3e28 for a singular matrix of order 50, backward error 2e-17).
      const double xnorm = norm1<double>(out.x.view());
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

// cholesky of a matrix checked by cholesky() and within the scaling band.
template <Real T>
Solution<T> cholesky_as_given(ConstMatrixView<T> A, const SolveOptions& options) {
  require_symmetric(A, "cholesky");
  Solution<T> out;
  Report& r = out.report;
  r.operation = Operation::Cholesky;
  r.method = Method::Cholesky;
  r.device = A.device();
  r.precision = type_name<T>();
  Stopwatch clock;
  const Cholesky<T> chol(A);
  out.x = chol.L();
  r.seconds = clock.seconds();
  r.rcond = chol.rcond();
  if (options.compute_residual) r.scaled_residual = scaled_residual_cholesky<T>(A, out.x.view(), eps<T>());
  return out;
}

// lstsq of operands checked by lstsq() and within the scaling band.
template <Real T>
Solution<T> lstsq_as_given(ConstMatrixView<T> A, ConstMatrixView<T> B, const LstsqOptions& options) {
  const index m = A.rows(), n = A.cols(), nrhs = B.cols();
  Solution<T> out;
  out.report.operation = Operation::LeastSquares;
  out.report.method = Method::QR;
  out.report.device = A.device();
  out.report.precision = type_name<T>();
  const double rcond = options.rcond >= 0 ? options.rcond : static_cast<double>(std::max(m, n)) * eps<T>();
  Stopwatch clock;
  if (options.precision == Precision::Mixed) {
    if constexpr (!std::is_same_v<T, double>) {
      throw InvalidArgument("mixed precision refines to float64: give float64 data");
    } else {
      out.report.precision = precision_name(type_name<T>(), Precision::Mixed);
      if (m < n) {
        out.report.notes.push_back("underdetermined (m < n): QR instead of the normal equations");
      } else {
        out.x = Matrix<double>::uninitialized(n, nrhs, A.device());
        const kernels::MixedOutcome r = kernels::mixed(A.device()).least_squares(A, B, out.x.view());
        if (r.failure.empty()) {
          out.report.method = Method::NormalEquations;
          out.report.iterations = r.iterations;
          out.report.stop = StopReason::Converged;
          out.report.rank = n;
          out.report.seconds = clock.seconds();
          if (options.compute_residual) out.report.scaled_residual = scaled_residual_lstsq<T>(A, out.x.view(), B, eps<T>());
          return out;
        }
        out.report.notes.push_back(fmt::format("normal equations not used ({}): QR instead", r.failure));
      }
    }
  }
  Matrix<T> a = Matrix<T>::copy_of(A);
  Matrix<T> b(std::max(m, n), nrhs, A.device());  // X comes back in the first n rows
  copy<T>(B, b.block(0, 0, m, nrhs));
  out.report.rank = dense_of(A).least_squares(a.view(), b.view(), rcond);
  out.x = Matrix<T>::copy_of(b.block(0, 0, n, nrhs));
  out.report.seconds = clock.seconds();
  if (out.report.rank < std::min(m, n))
    out.report.notes.push_back(fmt::format("rank deficient: numerical rank {} of {} (tolerance {:.3g} x largest)",
                                           out.report.rank, std::min(m, n), rcond));
  if (options.compute_residual) out.report.scaled_residual = scaled_residual_lstsq<T>(A, out.x.view(), B, eps<T>());
  return out;
}

// pinv of a matrix checked by pinv() and within the scaling band.
template <Real T>
Solution<T> pseudoinverse_as_given(ConstMatrixView<T> A, const LstsqOptions& options) {
  const index m = A.rows(), n = A.cols(), r = std::min(m, n);
  const Device device = A.device();
  Solution<T> out;
  out.report.operation = Operation::Pseudoinverse;
  out.report.method = Method::SVD;
  out.report.device = device;
  out.report.precision = type_name<T>();
  Stopwatch clock;
  Matrix<T> a = Matrix<T>::copy_of(A);
  Matrix<T> u = Matrix<T>::uninitialized(m, r, device), vt = Matrix<T>::uninitialized(r, n, device);
  std::vector<T> s(static_cast<std::size_t>(r));
  const int info = dense_of(A).svd(a.view(), s.data(), u.view(), vt.view());
  if (info > 0) throw NoConvergence("SVD (gesdd)", 0, NAN, NAN, fmt::format("{} superdiagonals did not converge", info));
  const double rel = options.rcond >= 0 ? options.rcond : static_cast<double>(std::max(m, n)) * eps<T>();
  const double cutoff = r > 0 ? rel * static_cast<double>(s[0]) : 0.0;
  index rank = 0;
  while (rank < r && static_cast<double>(s[rank]) > cutoff) ++rank;
  // P = V_r diag(1/s_r) U_r^T: scale VT's first `rank` rows, then one product.
  Matrix<double> inverse_s(rank, 1);
  for (index j = 0; j < rank; ++j) inverse_s(j, 0) = 1.0 / static_cast<double>(s[static_cast<std::size_t>(j)]);
  kernels::vectors<T>(device).scale_rows(inverse_s.to(device).view(), vt.block(0, 0, rank, n));
  out.x = Matrix<T>(n, m, device);
  gemm<T>(Op::Transpose, Op::Transpose, T(1), vt.block(0, 0, rank, n), u.block(0, 0, m, rank), T(0), out.x.view());
  out.report.rank = rank;
  out.report.rcond = r > 0 && s[0] > 0 ? static_cast<double>(s[r - 1] / s[0]) : 0.0;
  out.report.seconds = clock.seconds();
  if (rank < r)
    out.report.notes.push_back(fmt::format("rank deficient: numerical rank {} of {} (singular values below {:.3g} dropped)",
                                           rank, r, cutoff));
  if (options.compute_residual) out.report.scaled_residual = scaled_residual_pinv<T>(A, out.x.view(), eps<T>());
  return out;
}

// ---- the one-shot functions: input checks and scaling, then the work above ----------------------------

// Checks A's entries when asked and returns its largest finite magnitude (one pass for both).
template <Real T>
double checked_magnitude(ConstMatrixView<T> A, const char* name, bool check_finite) {
  const kernels::Magnitude m = dense_of(A).magnitude(A);
  if (check_finite && m.first_non_finite) throw_non_finite<T>(A, *m.first_non_finite, name);
  return m.max_abs;
}

// A operand scaled into the band (src/core/scaling.hpp), or A itself.
template <Real T>
struct Scaled {
  int exponent = 0;  // the operand is 2^exponent times the view
  Matrix<T> copy;
  ConstMatrixView<T> view;
  Scaled(ConstMatrixView<T> A, double max_abs) : exponent(scaling::exponent_for(max_abs)), view(A) {
    if (exponent == 0) return;
    copy = scaling::normalized_copy<T>(A, exponent);
    view = copy.view();
  }
};

// Option values that mean nothing are refused, not read as something: a NaN tolerance stopped Gauss-Seidel
// never, a tolerance of 1 or more accepted any answer (a backward error of 1 leaves no digit), a NaN rcond
// kept every singular value.
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

// lstsq and pinv promise their least-squares (Penrose) residual within kResidualBound, as inv and solve
// promise theirs (QR and the SVD are backward stable, so they meet it): loosened by as much as a rank
// tolerance above the default truncates, since the singular values dropped are that residual's own.
template <Real T>
void keep_least_squares_promise(const Solution<T>& s, index m, index n, const LstsqOptions& o, const char* what) {
  if (!o.compute_residual) return;
  const double default_rcond = static_cast<double>(std::max(m, n)) * eps<T>();
  const double bound = kResidualBound * std::max(1.0, (o.rcond >= 0 ? o.rcond : default_rcond) / default_rcond);
  if (!(s.report.scaled_residual <= bound))
    throw NumericalError(fmt::format("{}: the scaled residual {:.3g} exceeds linv's bound {:.3g}; no result is returned",
                                     what, s.report.scaled_residual, bound));
}

template <Real T>
void note_scaling(Report& r, const char* name, int exponent) {
  if (exponent != 0)
    r.notes.push_back(fmt::format("{} was scaled by 2^{} (exactly) for the computation: its entries lie far from 1, "
                                  "where norms and condition estimates over- or underflow",
                                  name, -exponent));
}

}  // namespace

template <Real T>
Solution<T> inv(ConstMatrixView<T> A, const SolveOptions& options) {
  require_square(A, "inv");
  require_meaningful(options);
  const Scaled<T> a(A, checked_magnitude(A, "A", options.check_finite));
  Solution<T> s = inverse_as_given<T>(a.view, options);
  note_scaling<T>(s.report, "A", a.exponent);
  scaling::scale_back(s.x, -a.exponent, "inverse");  // (2^e A)^-1 = 2^-e A^-1
  return s;
}

template <Real T>
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

template <Real T>
Solution<T> cholesky(ConstMatrixView<T> A, const SolveOptions& options) {
  require_square(A, "cholesky");
  Scaled<T> a(A, checked_magnitude(A, "A", options.check_finite));
  if (a.exponent % 2 != 0) {  // L of 2^(2k) A is 2^k L: an even power
    a.copy = scaling::normalized_copy<T>(A, a.exponent + 1);
    a.view = a.copy.view();
    a.exponent += 1;
  }
  Solution<T> s = cholesky_as_given<T>(a.view, options);
  note_scaling<T>(s.report, "A", a.exponent);
  scaling::scale_back(s.x, a.exponent / 2, "Cholesky factor");
  return s;
}

template <Real T>
Solution<T> lstsq(ConstMatrixView<T> A, ConstMatrixView<T> B, const LstsqOptions& options) {
  require_same_device(A, B, "lstsq");
  require_meaningful(options);
  if (B.rows() != A.rows()) throw ShapeMismatch("lstsq: A and B", A.rows(), A.cols(), B.rows(), B.cols());
  const Scaled<T> a(A, checked_magnitude(A, "A", options.check_finite));
  const Scaled<T> b(B, checked_magnitude(B, "B", options.check_finite));
  Solution<T> s = lstsq_as_given<T>(a.view, b.view, options);
  keep_least_squares_promise(s, A.rows(), A.cols(), options, "lstsq");
  note_scaling<T>(s.report, "A", a.exponent);
  note_scaling<T>(s.report, "B", b.exponent);
  scaling::scale_back(s.x, b.exponent - a.exponent, "least-squares solution");
  return s;
}

template <Real T>
Solution<T> pinv(ConstMatrixView<T> A, const LstsqOptions& options) {
  require_meaningful(options);
  const Scaled<T> a(A, checked_magnitude(A, "A", options.check_finite));
  Solution<T> s = pseudoinverse_as_given<T>(a.view, options);
  keep_least_squares_promise(s, A.rows(), A.cols(), options, "pinv");
  note_scaling<T>(s.report, "A", a.exponent);
  scaling::scale_back(s.x, -a.exponent, "pseudoinverse");
  return s;
}

template <Real T>
void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta, MatrixView<T> C) {
  require_same_device(A, B, "gemm");
  require_same_device<T>(A, C, "gemm");
  const index am = op_a == Op::None ? A.rows() : A.cols(), ak = op_a == Op::None ? A.cols() : A.rows();
  const index bk = op_b == Op::None ? B.rows() : B.cols(), bn = op_b == Op::None ? B.cols() : B.rows();
  if (ak != bk) throw ShapeMismatch("gemm: op(A) and op(B)", am, ak, bk, bn);
  if (C.rows() != am || C.cols() != bn) throw ShapeMismatch("gemm: op(A) op(B) and C", am, bn, C.rows(), C.cols());
  dense_of(A).gemm(op_a, op_b, alpha, A, B, beta, C);
}

template <Real T>
void syrk(Uplo uplo, Op op, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C) {
  require_same_device<T>(A, C, "syrk");
  const index n = op == Op::None ? A.rows() : A.cols();
  if (C.rows() != n || C.cols() != n) throw ShapeMismatch("syrk: op(A) op(A)^T and C", n, n, C.rows(), C.cols());
  dense_of(A).syrk(uplo, op, alpha, A, beta, C);
}

template <Real T>
void symmetrize_from_lower(MatrixView<T> A) {
  require_square<T>(A, "symmetrize_from_lower");
  dense_of<T>(A).mirror_lower(A);
}

template <Real T>
Matrix<T> matmul(ConstMatrixView<T> A, ConstMatrixView<T> B) {
  Matrix<T> c(A.rows(), B.cols(), A.device());
  gemm<T>(Op::None, Op::None, T(1), A, B, T(0), c.view());
  return c;
}

template <Real T>
Matrix<T> identity(index n, Device device) {
  Matrix<T> m(n, n, device);
  if (n > 0) dense_of<T>(m).set_diagonal(m.view(), T(1));
  return m;
}

#define LINV_INSTANTIATE(T)                                                                                  \
  template class LU<T>;                                                                                      \
  template Matrix<T> identity<T>(index, Device);                                                             \
  template class Cholesky<T>;                                                                                \
  template void require_finite<T>(ConstMatrixView<T>, const char*);                                          \
  template void require_symmetric<T>(ConstMatrixView<T>, const char*);                                       \
  template Structure detect_structure<T>(ConstMatrixView<T>);                                                \
  template Matrix<T> tri_inv<T>(ConstMatrixView<T>, Uplo, TriangularInverse, Diag);                          \
  template Solution<T> inv<T>(ConstMatrixView<T>, const SolveOptions&);                                      \
  template Solution<T> solve<T>(ConstMatrixView<T>, ConstMatrixView<T>, const SolveOptions&);                \
  template Solution<T> cholesky<T>(ConstMatrixView<T>, const SolveOptions&);                                 \
  template Solution<T> lstsq<T>(ConstMatrixView<T>, ConstMatrixView<T>, const LstsqOptions&);                \
  template Solution<T> pinv<T>(ConstMatrixView<T>, const LstsqOptions&);                                     \
  template void gemm<T>(Op, Op, T, ConstMatrixView<T>, ConstMatrixView<T>, T, MatrixView<T>);                \
  template void syrk<T>(Uplo, Op, T, ConstMatrixView<T>, T, MatrixView<T>);                                  \
  template void symmetrize_from_lower<T>(MatrixView<T>);                                                    \
  template Matrix<T> matmul<T>(ConstMatrixView<T>, ConstMatrixView<T>);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
#undef LINV_INSTANTIATE

}  // namespace linv
