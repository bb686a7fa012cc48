// The steps src/core's dense drivers share (lu.cpp, cholesky.cpp, triangular.cpp, inv.cpp, solve.cpp,
// lstsq.cpp, dense.cpp): input checks, method selection, the common steps of the accuracy promise, mixed
// precision, and the one-shot functions' scaling. Internal to src/core; the non-templates are in
// dense_steps.cpp. Each routine runs where its operands live, through the dense and mixed families of that
// device's backend (src/kernels/dense.hpp, vectors.hpp).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/policy.hpp"
#include "core/scaling.hpp"
#include "kernels/backend.hpp"
#include "linv/accuracy.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"

namespace linv::dense_steps {

// The unit roundoff of T's precision (complex64's is float32's).
template <Scalar T>
constexpr double eps() {
  return std::numeric_limits<real_t<T>>::epsilon();
}

// The dense family of the device A lives on.
template <Scalar T>
const kernels::Dense<T>& dense_of(ConstMatrixView<T> A) {
  return kernels::dense<T>(A.device());
}

// NonFiniteInput for A's entry at `at`, its value read from wherever A lives.
template <Scalar T>
[[noreturn]] void throw_non_finite(ConstMatrixView<T> A, std::pair<index, index> at, const char* name) {
  const T v = Matrix<T>::copy_of(A.block(at.first, at.second, 1, 1)).to(Device::cpu())(0, 0);
  throw NonFiniteInput(name, at.first, at.second, non_finite_part(v));
}

template <Scalar T>
void require_square(ConstMatrixView<T> A, const char* what) {
  if (!A.is_square())
    throw InvalidArgument(fmt::format("{} needs a square matrix, got {}", what, shape_string(A.rows(), A.cols())));
}

template <Scalar T>
void require_same_device(ConstMatrixView<T> A, ConstMatrixView<T> B, const char* what) {
  if (A.device() != B.device())
    throw InvalidArgument(fmt::format("{}: A is on {} but B is on {}; move one with .to()", what, A.device().name(),
                                      B.device().name()));
}

// An inverse that overflowed has no meaning at all: refuse it whatever the caller allows.
void require_finite_rcond(double rcond, index smallest_pivot, const char* detail);

template <Scalar T>
index smallest_diagonal(ConstMatrixView<T> F) {
  return policy::smallest_entry(dense_of(F).diagonal(F));
}

// ---- the accuracy promise of inv and solve (src/core/policy.hpp) ----------------------------------------
// Refinement computes the residual in float64.
using policy::apply_conditioning_policy;
using policy::kResidualBound;
inline constexpr int kPromiseRefinementSteps = policy::kRefinementSteps;

// Partial pivoting past lu_growth_limit(n): elimination's backward error bound (n growth eps) then
// guarantees no residual, and condition estimates from the factors mean nothing (Wilkinson's growth matrix
// of order 2048, condition number 2000, overflows U and reads as singular). A randomized LU has its own
// check, the refinement against A.
template <Scalar T>
bool grew_too_much(const LU<T>& lu) {
  return lu.pivoting() != Pivoting::Randomized && !(lu.growth() <= lu_growth_limit(lu.size()));
}

template <Scalar T>
std::string growth_reason(const LU<T>& lu) {
  return fmt::format("partial pivoting grew the entries {:.3g}-fold (limit {:.3g}), so its factors bound no residual",
                     lu.growth(), lu_growth_limit(lu.size()));
}

// X = A^-1 B by Householder QR, backward stable whatever elimination's growth; judge(rcond, smallest)
// receives R's reciprocal condition estimate (within a factor n of A's in the 1-norm, A = Q R) and its
// smallest diagonal entry. `why` goes into the report.
template <Scalar T, class Judge>
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

// M in float64 (complex128 for a complex M), on its device.
template <Scalar T>
Matrix<wide_t<T>> widened(ConstMatrixView<T> M) {
  Matrix<wide_t<T>> w = Matrix<wide_t<T>>::uninitialized(M.rows(), M.cols(), M.device());
  kernels::vectors<T>(M.device()).widen(M, w.view());
  return w;
}

// ---- LU's steps for inv and solve (factor_lu and judgeable are lu.cpp's) --------------------------------
// The LU that inv and solve use for `method` (LU, CALU or RBT), its pivoting and growth in the report.
// Their callers applied the finiteness policy (SolveOptions::check_finite) already.
template <Scalar T>
LU<T> factor_lu(ConstMatrixView<T> A, Method method, Report& r);

// A randomized factorization's condition estimate is only as good as its factors, whose normwise backward
// error is about eps growth (measured below it: 2.7e-12 against 1.3e-11 at order 4096, growth 6e4; the
// worst-case bound's factor n would send random float64 matrices of order 2050 back): a matrix closer than
// that to a singular one (a zero column, once the butterflies have mixed it, no longer shows as a zero
// pivot) is judged by partial pivoting instead, which finds exact zero pivots and estimates from stable
// factors. Returns the factorization to use, with a note when it changed.
template <Scalar T>
LU<T> judgeable(LU<T> lu, ConstMatrixView<T> A, Report& r);

// use(lu), and where a randomized factorization's refinement stalls, a note and use() of partial
// pivoting's factors instead (lu then holds them), or nothing when those grew too much to be trusted
// (the caller turns to Householder QR).
template <Scalar T, class Use>
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

// ---- method selection and the steps the methods share ----------------------------------------------------

// Zeroes the strict triangle opposite `keep`.
template <Scalar T>
void keep_triangle(MatrixView<T> A, Uplo keep) {
  dense_of<T>(A).zero_triangle(A, keep == Uplo::Lower ? Uplo::Upper : Uplo::Lower);
}

std::string precision_name(const char* type, Precision p, FactorPrecision low = FactorPrecision::Float32);

struct Choice {
  Method method;
  std::string reason;
  Uplo uplo = Uplo::Lower;  // for Triangular
  bool in_float64 = false;  // a float32 inverse computed by float64's randomized LU (inverse_in_float64)
};

// What Method::Auto (or an explicit method) means for this matrix, for an inverse or a solve; the
// backend says which inverses it computes fastest.
template <Scalar T>
Choice choose(ConstMatrixView<T> A, Method requested, bool inverse) {
  const Structure s = detect_structure(A);
  const bool triangular = s == Structure::Lower || s == Structure::Upper || s == Structure::Diagonal;
  const Uplo uplo = s == Structure::Upper ? Uplo::Upper : Uplo::Lower;
  if (requested == Method::Triangular) {
    if (!triangular)
      throw InvalidArgument("method triangular needs a triangular matrix; this one has nonzeros on both sides of the diagonal");
    return {Method::Triangular, "", uplo};
  }
  if constexpr (Complex<T>) {
    if (requested != Method::Auto && requested != Method::LU && requested != Method::Cholesky)
      throw InvalidArgument(fmt::format("{} matrices take the methods auto, lu, cholesky and triangular in this "
                                        "version, not {}",
                                        type_name<T>(), to_string(requested)));
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
    return {gets ? Method::CholeskyGETS : Method::Cholesky,
            Complex<T> ? "matrix is Hermitian: trying Cholesky" : "matrix is symmetric: trying Cholesky", uplo};
  }
  if (!inverse && A.rows() >= fastest.randomized_solve_from && A.rows() < fastest.randomized_solve_to)
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

template <Scalar T>
void fill_report(Report& r, Operation operation, const Choice& c, const SolveOptions& o, Device d) {
  r.operation = operation;
  r.method = c.method;
  r.method_reason = c.reason;
  r.device = d;
  r.precision = precision_name(type_name<T>(), o.precision, o.factor_precision);
}

template <Scalar T>
void require_supported(const SolveOptions& o, Method m) {
  const Precision p = o.precision;
  if (p != Precision::Mixed && o.factor_precision != FactorPrecision::Auto)
    throw InvalidArgument(fmt::format("a {} factorization applies to mixed precision only", to_string(o.factor_precision)));
  if (p != Precision::Mixed) return;
  if constexpr (std::is_same_v<T, std::complex<float>>)
    throw InvalidArgument("mixed precision refines complex64 factors to complex128: give a complex128 matrix");
  else if constexpr (std::is_same_v<T, float>)
    throw InvalidArgument("mixed precision refines to float64: give a float64 matrix");
  if (Complex<T> && o.factor_precision != FactorPrecision::Auto && o.factor_precision != FactorPrecision::Float32)
    throw InvalidArgument(fmt::format("complex matrices refine from complex64 factors: a {} factorization is for real "
                                      "float64 ones",
                                      to_string(o.factor_precision)));
  if (Complex<T> && m == Method::RBT)
    throw InvalidArgument("mixed precision for complex matrices is available with the lu and cholesky methods");
  if (m == Method::Triangular) return;  // substitution: nothing to refine (refines() below)
  if (m != Method::LU && m != Method::RBT && m != Method::Cholesky)
    throw InvalidArgument(
        fmt::format("mixed precision is available with the lu, rbt and cholesky methods, not {}", to_string(m)));
}

// Whether a solve refines low-precision factors: mixed precision asked for, and factors to refine. A
// triangular matrix has none: it is solved by substitution in its own precision (backward stable, O(n^2) a
// column), and the report says so (note_substitution).
inline bool refines(const SolveOptions& o, const Choice& c) {
  return o.precision == Precision::Mixed && c.method != Method::Triangular;
}
template <Scalar T>
void note_substitution(const SolveOptions& o, const Choice& c, Report& r) {
  if (o.precision != Precision::Mixed || c.method != Method::Triangular) return;
  r.precision = type_name<T>();
  r.notes.push_back(fmt::format("mixed precision: a triangular matrix has no factorization to refine; solved by "
                                "substitution in {}",
                                type_name<T>()));
}

double default_tolerance(index n, double epsilon);

// Factors A for the Cholesky methods. Under Method::Auto an indefinite matrix is no error: it returns
// nullopt after switching the choice to LU and saying why in the report.
template <Scalar T>
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
                                    Method requested, FactorPrecision low, Report& report);
// The same for complex128 matrices: complex64 factors refined to complex128 (low: Auto or Float32).
Matrix<std::complex<double>> mixed_solve_choosing(ConstMatrixView<std::complex<double>> A,
                                                  ConstMatrixView<std::complex<double>> B, Choice& c, Method requested,
                                                  FactorPrecision low, Report& report);

// A triangle's rcond (LAPACK's estimate, before any inversion work); an exact zero on the diagonal is
// refused at once, naming it. `smallest` receives the smallest diagonal entry's index for messages.
template <Scalar T>
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

template <Scalar T>
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
template <Scalar T>
double gauss_jordan_in_place(ConstMatrixView<T> A, MatrixView<T> X, index& smallest) {
  smallest = dense_of(A).gauss_jordan_inverse(X);
  return 1.0 / (norm1(A) * norm1<T>(X));
}

// ---- the one-shot functions' input checks and scaling ----------------------------------------------------

// Checks A's entries when asked and returns its largest finite magnitude (one pass for both).
template <Scalar T>
double checked_magnitude(ConstMatrixView<T> A, const char* name, bool check_finite) {
  const kernels::Magnitude m = dense_of(A).magnitude(A);
  if (check_finite && m.first_non_finite) throw_non_finite<T>(A, *m.first_non_finite, name);
  return m.max_abs;
}

// A operand scaled into the band (src/core/scaling.hpp), or A itself.
template <Scalar T>
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
void require_meaningful(const SolveOptions& o);
void require_meaningful(const LstsqOptions& o);

template <Scalar T>
void note_scaling(Report& r, const char* name, int exponent) {
  if (exponent != 0)
    r.notes.push_back(fmt::format("{} was scaled by 2^{} (exactly) for the computation: its entries lie far from 1, "
                                  "where norms and condition estimates over- or underflow",
                                  name, -exponent));
}

}  // namespace linv::dense_steps
