// linv's dense entry points: method selection (Method::Auto), input checks, reports, and the LU and
// Cholesky decomposition objects. The algorithms themselves are LAPACK's (src/cpu) or the source
// documents' (core/algorithms.hpp).
#include "linv/dense.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include "core/algorithms.hpp"
#include "kernels/dense.hpp"
#include "linv/accuracy.hpp"
#include "linv/errors.hpp"

namespace linv {
namespace {

namespace k = kernels::cpu;

template <Real T>
constexpr double eps() {
  return std::numeric_limits<T>::epsilon();
}

class Stopwatch {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

template <Real T>
void require_square(ConstMatrixView<T> A, const char* what) {
  if (!A.is_square())
    throw InvalidArgument(fmt::format("{} needs a square matrix, got {}", what, shape_string(A.rows(), A.cols())));
}

template <Real T>
void check_inputs(ConstMatrixView<T> A, const char* what, bool check_finite) {
  require_host(A.device(), what);
  if (check_finite) require_finite(A, "A");
}

template <Real T>
Matrix<T> lower_only(ConstMatrixView<T> F) {  // copy of the lower triangle, zeros above
  Matrix<T> L(F.rows(), F.cols());
  for (index j = 0; j < F.cols(); ++j)
    for (index i = j; i < F.rows(); ++i) L(i, j) = F(i, j);
  return L;
}

template <Real T>
void mirror_lower_to_upper(MatrixView<T> A) {
  for (index j = 1; j < A.cols(); ++j)
    for (index i = 0; i < j; ++i) A(i, j) = A(j, i);
}

// A singular-to-working-precision matrix gives results with no correct digits: refuse them.
void require_rcond(double rcond, double epsilon, index smallest_pivot, const char* detail) {
  if (rcond < epsilon) throw SingularMatrix(smallest_pivot, rcond == 0 ? 1e-300 : rcond, detail);
}

template <Real T>
index smallest_diagonal(ConstMatrixView<T> F) {
  index best = 0;
  for (index i = 1; i < F.rows(); ++i)
    if (std::abs(F(i, i)) < std::abs(F(best, best))) best = i;
  return F.rows() > 0 ? best + 1 : 0;
}

std::string precision_name(const char* type, Precision p) {
  return p == Precision::Mixed ? "mixed (float32 factorization, float64 refinement)" : std::string(type);
}

struct Choice {
  Method method;
  std::string reason;
  Uplo uplo = Uplo::Lower;  // for Triangular
};

// What Method::Auto (or an explicit method) means for this matrix.
template <Real T>
Choice choose(ConstMatrixView<T> A, Method requested) {
  const Structure s = detect_structure(A);
  const bool triangular = s == Structure::Lower || s == Structure::Upper || s == Structure::Diagonal;
  const Uplo uplo = s == Structure::Upper ? Uplo::Upper : Uplo::Lower;
  if (requested == Method::Triangular) {
    if (!triangular)
      throw InvalidArgument("method triangular needs a triangular matrix; this one has nonzeros on both sides of the diagonal");
    return {Method::Triangular, "", uplo};
  }
  if (requested != Method::Auto) return {requested, "", uplo};
  if (triangular)
    return {Method::Triangular, s == Structure::Diagonal ? "matrix is diagonal" :
                                s == Structure::Lower ? "matrix is lower triangular" : "matrix is upper triangular",
            uplo};
  if (s == Structure::Symmetric) return {Method::Cholesky, "matrix is symmetric: trying Cholesky", uplo};
  return {Method::LU, "general matrix", uplo};
}

template <Real T>
void fill_report(SolveReport& r, const char* operation, const Choice& c, Precision p) {
  r.operation = operation;
  r.method = std::string(to_string(c.method));
  r.method_reason = c.reason;
  r.device = "cpu";
  r.precision = precision_name(type_name<T>(), p);
}

template <Real T>
void require_mixed_supported(Precision p, Method m) {
  if (p != Precision::Mixed) return;
  if constexpr (!std::is_same_v<T, double>)
    throw InvalidArgument("mixed precision refines to float64: give a float64 matrix");
  if (m != Method::LU && m != Method::Cholesky)
    throw InvalidArgument(fmt::format("mixed precision is available with the lu and cholesky methods, not {}", to_string(m)));
}

double default_tolerance(index n, double epsilon) { return static_cast<double>(std::max<index>(n, 16)) * epsilon; }

// Mixed-precision solve of A X = B with LAPACK's float32-factor / float64-refinement drivers. When the
// refinement converges the matrix is well within float64's reach; when it does not, LAPACK factors in
// float64 instead, and that factorization is checked for singularity to working precision like any other.
Matrix<double> mixed_solve(ConstMatrixView<double> A, ConstMatrixView<double> B, Method m, SolveReport& report) {
  const index n = A.rows();
  Matrix<double> a = Matrix<double>::copy_of(A), b = Matrix<double>::copy_of(B);
  Matrix<double> x = Matrix<double>::uninitialized(n, B.cols());
  std::vector<int> ipiv(static_cast<std::size_t>(n));
  int iterations = 0;
  if (m == Method::Cholesky) {
    const int info = k::dsposv(Uplo::Lower, a.view(), b.view(), x.view(), iterations);
    if (info > 0) throw NotPositiveDefinite(info, "mixed-precision Cholesky");
  } else {
    const int info = k::dsgesv(a.view(), b.view(), x.view(), iterations, ipiv.data());
    if (info > 0) throw SingularMatrix(info, 0.0, "mixed-precision LU");
  }
  if (iterations >= 0) {
    report.iterations = iterations;
    report.stop_reason = "refinement converged";
    return x;
  }
  report.stop_reason = "fell back to float64";
  report.notes.push_back(fmt::format(
      "float32 refinement did not converge (LAPACK code {}): solved with a float64 factorization instead", iterations));
  const double anorm = norm1(A);
  report.rcond = m == Method::Cholesky ? k::pocon<double>(Uplo::Lower, a.view(), anorm)
                                       : k::gecon<double>(a.view(), anorm);
  require_rcond(report.rcond, eps<double>(), smallest_diagonal<double>(a.view()), "float64 fallback");
  return x;
}

// Factors A for the Cholesky methods. Under Method::Auto an indefinite matrix is no error: it returns
// nullopt after switching the choice to LU and saying why in the report.
template <Real T>
std::optional<Cholesky<T>> cholesky_or_fallback(ConstMatrixView<T> A, Choice& c, Method requested, SolveReport& report) {
  if (requested != Method::Auto) require_symmetric(A, std::string(to_string(c.method)).c_str());
  try {
    Cholesky<T> chol(A);
    if (requested == Method::Auto) report.method_reason = "matrix is symmetric positive definite";
    return chol;
  } catch (const NotPositiveDefinite& e) {
    if (requested != Method::Auto) throw;
    c = {Method::LU, fmt::format("symmetric but not positive definite (leading minor {}): LU", e.minor())};
    report.method = std::string(to_string(c.method));
    report.method_reason = c.reason;
    return std::nullopt;
  }
}

// Mixed precision with Method::Auto's Cholesky-then-LU fallback for symmetric indefinite matrices.
Matrix<double> mixed_solve_choosing(ConstMatrixView<double> A, ConstMatrixView<double> B, Choice& c,
                                    Method requested, SolveReport& report) {
  if (c.method == Method::Cholesky) {
    if (requested != Method::Auto) require_symmetric(A, "cholesky");
    try {
      return mixed_solve(A, B, Method::Cholesky, report);
    } catch (const NotPositiveDefinite& e) {
      if (requested != Method::Auto) throw;
      c = {Method::LU, fmt::format("symmetric but not positive definite (leading minor {}): LU", e.minor())};
      report.method = "lu";
      report.method_reason = c.reason;
    }
  }
  return mixed_solve(A, B, Method::LU, report);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
std::string_view to_string(Method m) {
  switch (m) {
    case Method::Auto: return "auto";
    case Method::LU: return "lu";
    case Method::Cholesky: return "cholesky";
    case Method::GaussJordan: return "gauss-jordan";
    case Method::CholeskyGETS: return "cholesky-gets";
    case Method::GaussSeidel: return "gauss-seidel";
    case Method::Triangular: return "triangular";
  }
  return "?";
}

Method parse_method(std::string_view name) {
  for (auto m : {Method::Auto, Method::LU, Method::Cholesky, Method::GaussJordan, Method::CholeskyGETS,
                 Method::GaussSeidel, Method::Triangular})
    if (to_string(m) == name) return m;
  throw InvalidArgument(fmt::format(
      "unknown method '{}': expected auto, lu, cholesky, gauss-jordan, cholesky-gets, gauss-seidel or triangular", name));
}

double Determinant::value() const { return sign == 0 ? 0.0 : sign * std::exp(log_abs); }

template <Real T>
void require_finite(ConstMatrixView<T> A, const char* name) {
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < A.rows(); ++i)
      if (!std::isfinite(A(i, j))) throw NonFiniteInput(name, i, j, static_cast<double>(A(i, j)));
}

template <Real T>
void require_symmetric(ConstMatrixView<T> A, const char* method) {
  const index n = A.rows();
  double max_abs = 0;
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < n; ++i) max_abs = std::max(max_abs, std::abs(static_cast<double>(A(i, j))));
  const double tol = static_cast<double>(n) * eps<T>() * max_abs;
  for (index j = 0; j < n; ++j)
    for (index i = j + 1; i < n; ++i)
      if (std::abs(static_cast<double>(A(i, j)) - A(j, i)) > tol)
        throw NumericalError(fmt::format(
            "{} needs a symmetric positive definite matrix, but a({},{}) = {:.6g} differs from a({},{}) = {:.6g}",
            method, i + 1, j + 1, static_cast<double>(A(i, j)), j + 1, i + 1, static_cast<double>(A(j, i))));
}

template <Real T>
Structure detect_structure(ConstMatrixView<T> A) {
  const index n = A.rows();
  bool lower = true, upper = true, symmetric = true;
  for (index j = 0; j < n && (lower || upper || symmetric); ++j)
    for (index i = 0; i < j; ++i) {  // (i, j) above the diagonal, (j, i) its mirror below
      const T above = A(i, j), below = A(j, i);
      if (above != T(0)) lower = false;
      if (below != T(0)) upper = false;
      if (above != below) symmetric = false;
    }
  if (lower && upper) return Structure::Diagonal;
  if (lower) return Structure::Lower;
  if (upper) return Structure::Upper;
  return symmetric ? Structure::Symmetric : Structure::General;
}

// ---- LU -------------------------------------------------------------------------------------------
template <Real T>
LU<T>::LU(ConstMatrixView<T> A) {
  require_host(A.device(), "LU");
  require_square(A, "LU");
  require_finite(A, "A");
  factors_ = Matrix<T>::copy_of(A);
  pivots_.assign(static_cast<std::size_t>(A.rows()), 0);
  zero_pivot_ = k::getrf<T>(factors_.view(), pivots_.data());
  rcond_ = zero_pivot_ > 0 ? 0.0 : k::gecon<T>(factors_.view(), norm1(A));
}

template <Real T>
void LU<T>::require_nonsingular(const char* what) const {
  if (zero_pivot_ > 0) throw SingularMatrix(zero_pivot_, 0.0, what);
  require_rcond(rcond_, eps<T>(), smallest_diagonal<T>(factors_.view()), what);
}

template <Real T>
Determinant LU<T>::determinant() const {
  Determinant d{1, 0.0};
  if (zero_pivot_ > 0) return {0, -std::numeric_limits<double>::infinity()};
  for (index i = 0; i < size(); ++i) {
    const double u = factors_(i, i);
    if (u < 0) d.sign = -d.sign;
    if (pivots_[i] != i + 1) d.sign = -d.sign;
    d.log_abs += std::log(std::abs(u));
  }
  return d;
}

template <Real T>
Matrix<T> LU<T>::solve(ConstMatrixView<T> B) const {
  require_host(B.device(), "LU::solve");
  if (B.rows() != size()) throw ShapeMismatch("LU::solve: A and B", size(), size(), B.rows(), B.cols());
  require_nonsingular("LU solve");
  Matrix<T> x = Matrix<T>::copy_of(B);
  k::getrs<T>(Op::None, factors_.view(), pivots_.data(), x.view());
  return x;
}

template <Real T>
Matrix<T> LU<T>::inverse() const {
  require_nonsingular("LU inverse");
  Matrix<T> x = factors_.clone();
  k::getri<T>(x.view(), pivots_.data());
  return x;
}

// ---- Cholesky -------------------------------------------------------------------------------------
template <Real T>
Cholesky<T>::Cholesky(ConstMatrixView<T> A) {
  require_host(A.device(), "Cholesky");
  require_square(A, "Cholesky");
  require_finite(A, "A");
  factor_ = Matrix<T>::copy_of(A);
  const int info = k::potrf<T>(Uplo::Lower, factor_.view());
  if (info > 0) throw NotPositiveDefinite(info);
  rcond_ = k::pocon<T>(Uplo::Lower, factor_.view(), norm1(A));
}

template <Real T>
void Cholesky<T>::require_well_conditioned(const char* what) const {
  require_rcond(rcond_, eps<T>(), smallest_diagonal<T>(factor_.view()), what);
}

template <Real T>
Determinant Cholesky<T>::determinant() const {
  Determinant d{1, 0.0};
  for (index i = 0; i < size(); ++i) d.log_abs += 2.0 * std::log(static_cast<double>(factor_(i, i)));
  return d;
}

template <Real T>
Matrix<T> Cholesky<T>::solve(ConstMatrixView<T> B) const {
  require_host(B.device(), "Cholesky::solve");
  if (B.rows() != size()) throw ShapeMismatch("Cholesky::solve: A and B", size(), size(), B.rows(), B.cols());
  require_well_conditioned("Cholesky solve");
  Matrix<T> x = Matrix<T>::copy_of(B);
  k::potrs<T>(Uplo::Lower, factor_.view(), x.view());
  return x;
}

template <Real T>
Matrix<T> Cholesky<T>::inverse(TriangularInverse how) const {
  require_well_conditioned("Cholesky inverse");
  Matrix<T> x = factor_.clone();
  if (how == TriangularInverse::Lapack) {
    k::potri<T>(Uplo::Lower, x.view());
  } else {
    algorithms::gets_lower_inverse<T>(x.view(), Diag::NonUnit);  // X = L^-1
    k::lauum<T>(Uplo::Lower, x.view());                           // X^T X = L^-T L^-1 = A^-1
  }
  mirror_lower_to_upper<T>(x.view());
  return x;
}

template <Real T>
Matrix<T> Cholesky<T>::L() const {
  return lower_only<T>(factor_.view());
}

// ---- free functions -------------------------------------------------------------------------------
namespace {

// Refuses a singular triangle before any inversion work: an exact zero on the diagonal (named), then
// singular to working precision. Returns rcond.
template <Real T>
double require_invertible_triangle(ConstMatrixView<T> A, Uplo uplo, Diag diag) {
  if (diag == Diag::NonUnit)
    for (index i = 0; i < A.rows(); ++i)
      if (A(i, i) == T(0)) throw SingularMatrix(i + 1, 0.0, "zero on the diagonal of the triangular matrix");
  const double rcond = k::trcon<T>(uplo, diag, A);
  require_rcond(rcond, eps<T>(), smallest_diagonal(A), "triangular matrix");
  return rcond;
}

template <Real T>
Matrix<T> invert_triangle(ConstMatrixView<T> A, Uplo uplo, TriangularInverse how, Diag diag) {
  const index n = A.rows();
  Matrix<T> x = Matrix<T>::copy_of(A);
  if (how == TriangularInverse::Lapack) {
    k::trtri<T>(uplo, diag, x.view());  // cannot fail: the diagonal was checked
  } else if (uplo == Uplo::Lower) {
    algorithms::gets_lower_inverse<T>(x.view(), diag);
  } else {
    // inv(U) = inv(U^T)^T: eliminate on the transposed (lower) triangle.
    Matrix<T> t = Matrix<T>::uninitialized(n, n);
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) t(i, j) = A(j, i);
    algorithms::gets_lower_inverse<T>(t.view(), diag);
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) x(i, j) = t(j, i);
  }
  // Zero the other triangle: the result is a triangular matrix, whatever A held there. A unit
  // triangle's inverse has a unit diagonal, which the routines leave implicit (as stored in A).
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < n; ++i)
      if ((uplo == Uplo::Lower && i < j) || (uplo == Uplo::Upper && i > j)) x(i, j) = T(0);
  if (diag == Diag::Unit)
    for (index i = 0; i < n; ++i) x(i, i) = T(1);
  return x;
}

}  // namespace

template <Real T>
Matrix<T> tri_inv(ConstMatrixView<T> A, Uplo uplo, TriangularInverse how, Diag diag) {
  require_host(A.device(), "tri_inv");
  require_square(A, "tri_inv");
  require_finite(A, "A");
  require_invertible_triangle(A, uplo, diag);
  return invert_triangle(A, uplo, how, diag);
}

template <Real T>
Solution<T> inv(ConstMatrixView<T> A, const SolveOptions& options) {
  check_inputs(A, "inv", options.check_finite);
  require_square(A, "inv");
  const index n = A.rows();
  Choice c = choose(A, options.method);
  require_mixed_supported<T>(options.precision, c.method);
  Solution<T> out;
  fill_report<T>(out.report, "inv", c, options.precision);
  Stopwatch clock;

  if (options.precision == Precision::Mixed) {
    if constexpr (std::is_same_v<T, double>) {
      out.x = mixed_solve_choosing(A, Matrix<double>::identity(n).view(), c, options.method, out.report);
      out.report.rcond = 1.0 / (norm1(A) * norm1<double>(out.x.view()));
      require_rcond(out.report.rcond, eps<double>(), 0, "mixed-precision inverse");
    }
  } else {
    switch (c.method) {
      case Method::Triangular: {
        out.report.rcond = require_invertible_triangle(A, c.uplo, Diag::NonUnit);
        out.x = invert_triangle(A, c.uplo, TriangularInverse::Lapack, Diag::NonUnit);
        break;
      }
      case Method::Cholesky:
      case Method::CholeskyGETS: {
        std::optional<Cholesky<T>> chol = cholesky_or_fallback(A, c, options.method, out.report);
        if (!chol) {
          LU<T> lu(A);
          out.x = lu.inverse();
          out.report.rcond = lu.rcond();
          break;
        }
        out.x = chol->inverse(c.method == Method::CholeskyGETS ? TriangularInverse::GETS : TriangularInverse::Lapack);
        out.report.rcond = chol->rcond();
        break;
      }
      case Method::GaussJordan: {
        out.x = Matrix<T>::copy_of(A);
        const index smallest = algorithms::gauss_jordan_inverse<T>(out.x.view());
        out.report.rcond = 1.0 / (norm1(A) * norm1<T>(out.x.view()));
        require_rcond(out.report.rcond, eps<T>(), smallest, "Gauss-Jordan inverse");
        break;
      }
      case Method::GaussSeidel: {
        const double tol = options.tolerance > 0 ? options.tolerance : default_tolerance(n, eps<T>());
        Matrix<T> identity = Matrix<T>::identity(n);
        out.x = Matrix<T>(n, n);
        auto it = algorithms::gauss_seidel<T>(A, identity.view(), out.x.view(), tol, options.max_iterations);
        out.report.iterations = it.iterations;
        out.report.stop_reason = it.stop_reason;
        out.report.notes.push_back(fmt::format("final backward error {:.3g} (tolerance {:.3g})", it.backward_error, tol));
        out.report.rcond = 1.0 / (norm1(A) * norm1<T>(out.x.view()));
        break;
      }
      case Method::LU:
      case Method::Auto: {
        LU<T> lu(A);
        out.x = lu.inverse();
        out.report.rcond = lu.rcond();
        break;
      }
    }
  }
  out.report.seconds = clock.seconds();
  if (options.compute_residual) {
    const double e = options.precision == Precision::Mixed ? eps<double>() : eps<T>();
    out.report.scaled_residual = scaled_residual_inverse<T>(A, out.x.view(), e);
  }
  return out;
}

template <Real T>
Solution<T> solve(ConstMatrixView<T> A, ConstMatrixView<T> B, const SolveOptions& options) {
  check_inputs(A, "solve", options.check_finite);
  require_host(B.device(), "solve");
  if (options.check_finite) require_finite(B, "B");
  require_square(A, "solve");
  if (B.rows() != A.rows()) throw ShapeMismatch("solve: A and B", A.rows(), A.cols(), B.rows(), B.cols());
  const index n = A.rows();
  Choice c = choose(A, options.method);
  require_mixed_supported<T>(options.precision, c.method);
  Solution<T> out;
  fill_report<T>(out.report, "solve", c, options.precision);
  Stopwatch clock;

  if (options.precision == Precision::Mixed) {
    if constexpr (std::is_same_v<T, double>) {
      out.x = mixed_solve_choosing(A, B, c, options.method, out.report);
    }
  } else {
    switch (c.method) {
      case Method::Triangular: {
        out.report.rcond = require_invertible_triangle(A, c.uplo, Diag::NonUnit);
        out.x = Matrix<T>::copy_of(B);
        k::trtrs<T>(c.uplo, Op::None, Diag::NonUnit, A, out.x.view());
        break;
      }
      case Method::Cholesky:
      case Method::CholeskyGETS: {
        std::optional<Cholesky<T>> chol = cholesky_or_fallback(A, c, options.method, out.report);
        if (!chol) {
          LU<T> lu(A);
          out.x = lu.solve(B);
          out.report.rcond = lu.rcond();
          break;
        }
        out.report.rcond = chol->rcond();
        if (c.method == Method::Cholesky) {
          out.x = chol->solve(B);
        } else {
          // X = L^-T (L^-1 B) with L^-1 from elimination on the triangle.
          Matrix<T> linv = chol->factor().clone();
          algorithms::gets_lower_inverse<T>(linv.view(), Diag::NonUnit);
          out.x = Matrix<T>::copy_of(B);
          k::trmm<T>(k::Side::Left, Uplo::Lower, Op::None, Diag::NonUnit, T(1), linv.view(), out.x.view());
          k::trmm<T>(k::Side::Left, Uplo::Lower, Op::Transpose, Diag::NonUnit, T(1), linv.view(), out.x.view());
        }
        break;
      }
      case Method::GaussJordan: {
        // Through the inverse (2n^3 flops rather than elimination's n^3): it gives the exact rcond, and
        // Gauss-Jordan elimination has no factorization left over to estimate it from.
        Matrix<T> inverse = Matrix<T>::copy_of(A);
        const index smallest = algorithms::gauss_jordan_inverse<T>(inverse.view());
        out.report.rcond = 1.0 / (norm1(A) * norm1<T>(inverse.view()));
        require_rcond(out.report.rcond, eps<T>(), smallest, "Gauss-Jordan inverse");
        out.x = matmul<T>(inverse.view(), B);
        break;
      }
      case Method::GaussSeidel: {
        const double tol = options.tolerance > 0 ? options.tolerance : default_tolerance(n, eps<T>());
        out.x = Matrix<T>(n, B.cols());
        auto it = algorithms::gauss_seidel<T>(A, B, out.x.view(), tol, options.max_iterations);
        out.report.iterations = it.iterations;
        out.report.stop_reason = it.stop_reason;
        out.report.notes.push_back(fmt::format("final backward error {:.3g} (tolerance {:.3g})", it.backward_error, tol));
        break;
      }
      case Method::LU:
      case Method::Auto: {
        LU<T> lu(A);
        out.x = lu.solve(B);
        out.report.rcond = lu.rcond();
        break;
      }
    }
  }
  out.report.seconds = clock.seconds();
  if (options.compute_residual) {
    const double e = options.precision == Precision::Mixed ? eps<double>() : eps<T>();
    out.report.scaled_residual = scaled_residual_solve<T>(A, out.x.view(), B, e);
  }
  return out;
}

template <Real T>
Solution<T> lstsq(ConstMatrixView<T> A, ConstMatrixView<T> B, const LstsqOptions& options) {
  check_inputs(A, "lstsq", options.check_finite);
  require_host(B.device(), "lstsq");
  if (options.check_finite) require_finite(B, "B");
  if (B.rows() != A.rows()) throw ShapeMismatch("lstsq: A and B", A.rows(), A.cols(), B.rows(), B.cols());
  const index m = A.rows(), n = A.cols(), nrhs = B.cols();
  Solution<T> out;
  out.report.operation = "lstsq";
  out.report.method = "qr (column pivoting, gelsy)";
  out.report.precision = type_name<T>();
  const double rcond = options.rcond >= 0 ? options.rcond : static_cast<double>(std::max(m, n)) * eps<T>();
  Stopwatch clock;
  Matrix<T> a = Matrix<T>::copy_of(A);
  Matrix<T> b(std::max(m, n), nrhs);  // gelsy returns X in the first n rows
  for (index j = 0; j < nrhs; ++j)
    for (index i = 0; i < m; ++i) b(i, j) = B(i, j);
  out.report.rank = k::gelsy<T>(a.view(), b.view(), rcond);
  out.x = Matrix<T>::copy_of(b.block(0, 0, n, nrhs));
  out.report.seconds = clock.seconds();
  if (out.report.rank < std::min(m, n))
    out.report.notes.push_back(fmt::format("rank deficient: numerical rank {} of {} (tolerance {:.3g} x largest)",
                                           out.report.rank, std::min(m, n), rcond));
  if (options.compute_residual) out.report.scaled_residual = scaled_residual_lstsq<T>(A, out.x.view(), B, eps<T>());
  return out;
}

template <Real T>
Solution<T> pinv(ConstMatrixView<T> A, const LstsqOptions& options) {
  check_inputs(A, "pinv", options.check_finite);
  const index m = A.rows(), n = A.cols(), r = std::min(m, n);
  Solution<T> out;
  out.report.operation = "pinv";
  out.report.method = "svd (gesdd)";
  out.report.precision = type_name<T>();
  Stopwatch clock;
  Matrix<T> a = Matrix<T>::copy_of(A);
  Matrix<T> u = Matrix<T>::uninitialized(m, r), vt = Matrix<T>::uninitialized(r, n);
  std::vector<T> s(static_cast<std::size_t>(r));
  const int info = k::gesdd<T>(a.view(), s.data(), u.view(), vt.view());
  if (info > 0) throw NoConvergence("SVD (gesdd)", 0, NAN, NAN, fmt::format("{} superdiagonals did not converge", info));
  const double rel = options.rcond >= 0 ? options.rcond : static_cast<double>(std::max(m, n)) * eps<T>();
  const double cutoff = r > 0 ? rel * static_cast<double>(s[0]) : 0.0;
  index rank = 0;
  while (rank < r && static_cast<double>(s[rank]) > cutoff) ++rank;
  // P = V_r diag(1/s_r) U_r^T: scale U's first `rank` columns, then one product.
  for (index j = 0; j < rank; ++j)
    for (index i = 0; i < m; ++i) u(i, j) /= s[j];
  out.x = Matrix<T>(n, m);
  k::gemm<T>(Op::Transpose, Op::Transpose, T(1), vt.block(0, 0, rank, n), u.block(0, 0, m, rank), T(0), out.x.view());
  out.report.rank = rank;
  out.report.rcond = r > 0 && s[0] > 0 ? static_cast<double>(s[r - 1] / s[0]) : 0.0;
  out.report.seconds = clock.seconds();
  if (rank < r)
    out.report.notes.push_back(fmt::format("rank deficient: numerical rank {} of {} (singular values below {:.3g} dropped)",
                                           rank, r, cutoff));
  if (options.compute_residual) out.report.scaled_residual = scaled_residual_pinv<T>(A, out.x.view(), eps<T>());
  return out;
}

template <Real T>
void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta, MatrixView<T> C) {
  require_host(A.device(), "gemm");
  const index am = op_a == Op::None ? A.rows() : A.cols(), ak = op_a == Op::None ? A.cols() : A.rows();
  const index bk = op_b == Op::None ? B.rows() : B.cols(), bn = op_b == Op::None ? B.cols() : B.rows();
  if (ak != bk) throw ShapeMismatch("gemm: op(A) and op(B)", am, ak, bk, bn);
  if (C.rows() != am || C.cols() != bn) throw ShapeMismatch("gemm: op(A) op(B) and C", am, bn, C.rows(), C.cols());
  k::gemm<T>(op_a, op_b, alpha, A, B, beta, C);
}

template <Real T>
void syrk(Uplo uplo, Op op, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C) {
  require_host(A.device(), "syrk");
  const index n = op == Op::None ? A.rows() : A.cols();
  if (C.rows() != n || C.cols() != n) throw ShapeMismatch("syrk: op(A) op(A)^T and C", n, n, C.rows(), C.cols());
  k::syrk<T>(uplo, op, alpha, A, beta, C);
}

template <Real T>
Matrix<T> matmul(ConstMatrixView<T> A, ConstMatrixView<T> B) {
  Matrix<T> c(A.rows(), B.cols());
  gemm<T>(Op::None, Op::None, T(1), A, B, T(0), c.view());
  return c;
}

#define LINV_INSTANTIATE(T)                                                                                  \
  template class LU<T>;                                                                                      \
  template class Cholesky<T>;                                                                                \
  template void require_finite<T>(ConstMatrixView<T>, const char*);                                          \
  template void require_symmetric<T>(ConstMatrixView<T>, const char*);                                       \
  template Structure detect_structure<T>(ConstMatrixView<T>);                                                \
  template Matrix<T> tri_inv<T>(ConstMatrixView<T>, Uplo, TriangularInverse, Diag);                          \
  template Solution<T> inv<T>(ConstMatrixView<T>, const SolveOptions&);                                      \
  template Solution<T> solve<T>(ConstMatrixView<T>, ConstMatrixView<T>, const SolveOptions&);                \
  template Solution<T> lstsq<T>(ConstMatrixView<T>, ConstMatrixView<T>, const LstsqOptions&);                \
  template Solution<T> pinv<T>(ConstMatrixView<T>, const LstsqOptions&);                                     \
  template void gemm<T>(Op, Op, T, ConstMatrixView<T>, ConstMatrixView<T>, T, MatrixView<T>);                \
  template void syrk<T>(Uplo, Op, T, ConstMatrixView<T>, T, MatrixView<T>);                                  \
  template Matrix<T> matmul<T>(ConstMatrixView<T>, ConstMatrixView<T>);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
#undef LINV_INSTANTIATE

}  // namespace linv
