// linv's distributed inverse and solve: method choice, input checks, the conditioning policy and the
// accuracy promise of linv::inv and linv::solve (src/core/policy.hpp), over the distributed family of the
// grid's engine (src/kernels/distributed.hpp). Every step is collective, and every decision is taken on
// values the engine has already made the same on every process, so the processes never part ways.
#include "linv/distributed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>

#include "common/norm_estimate.hpp"
#include "common/stopwatch.hpp"
#include "core/policy.hpp"
#include "kernels/distributed.hpp"

namespace linv::dist {
namespace {

// With LINV_PROFILE set, process 0 says on stderr how long each phase of a distributed solve or inverse
// took (the engines' calls return when their work is complete): where the time that does not shrink with
// more processes goes (docs/scaling.md).
class Phases {
 public:
  Phases(const Grid& grid, const char* what)
      : enabled_(std::getenv("LINV_PROFILE") != nullptr && grid.is_root()), what_(what) {}
  void mark(const char* phase) {
    if (!enabled_) return;
    const double now = clock_.seconds();
    std::fprintf(stderr, "dist::%s: %-22s %8.3f s\n", what_, phase, now - last_);
    last_ = now;
  }

 private:
  bool enabled_;
  const char* what_;
  Stopwatch clock_;
  double last_ = 0;
};

template <Real T>
constexpr double eps() {
  return std::numeric_limits<T>::epsilon();
}

template <Real T>
const kernels::Distributed<T>& engine_of(const DistMatrix<T>& A) {
  return kernels::distributed<T>(A.grid());
}

template <Real T>
void require_finite(const DistMatrix<T>& A, const char* name) {
  if (const std::optional<kernels::DistEntry> bad = engine_of(A).first_nonfinite(A))
    throw NonFiniteInput(name, bad->row, bad->col, bad->value);
}

template <Real T>
void require_operands(const DistMatrix<T>& A, const DistMatrix<T>* B, const SolveOptions& o, const char* what) {
  if (A.rows() != A.cols())
    throw InvalidArgument(fmt::format("{} needs a square matrix, got {}", what, shape_string(A.rows(), A.cols())));
  if (B != nullptr) {
    if (B->rows() != A.rows()) throw ShapeMismatch(fmt::format("{}: A and B", what), A.rows(), A.cols(), B->rows(), B->cols());
    if (B->block() != A.block() || B->grid().rows() != A.grid().rows() || B->grid().cols() != A.grid().cols())
      throw InvalidArgument(fmt::format("{}: A and B must be laid out alike (tiles of {} and {}, grids of {} x {} and "
                                        "{} x {})",
                                        what, A.block(), B->block(), A.grid().rows(), A.grid().cols(),
                                        B->grid().rows(), B->grid().cols()));
  }
  if (o.precision == Precision::Mixed)
    throw InvalidArgument(fmt::format("a distributed {} has no mixed-precision variant in this version", what));
  if (o.method != Method::Auto && o.method != Method::LU && o.method != Method::Cholesky)
    throw InvalidArgument(fmt::format("a distributed {} takes the methods auto, lu and cholesky, not {}", what,
                                      to_string(o.method)));
  if (o.check_finite) {
    require_finite(A, "A");
    if (B != nullptr) require_finite(*B, "B");
  }
}

// The report of a distributed operation on A, before its method is chosen.
template <Real T>
Report start_report(const DistMatrix<T>& A, Operation operation) {
  Report r;
  r.operation = operation;
  r.device = A.grid().device();
  r.precision = type_name<T>();
  r.notes.push_back(fmt::format("distributed: {} over {}, tiles of {}", engine_of(A).name(A.grid()),
                                A.grid().describe(), A.block()));
  return r;
}

// Method::Auto: Cholesky for an exactly symmetric A with a positive diagonal (LU if it then fails), as
// linv::inv chooses; LU otherwise.
template <Real T>
void choose(const DistMatrix<T>& A, Method requested, Report& r) {
  const kernels::Distributed<T>& engine = engine_of(A);
  r.method = requested;
  if (requested != Method::Auto) return;
  if (engine.symmetric(A)) {
    const std::vector<T> d = engine.diagonal(A);
    if (std::all_of(d.begin(), d.end(), [](T v) { return v > T(0); })) {
      r.method = Method::Cholesky;
      r.method_reason = "matrix is symmetric with a positive diagonal: trying Cholesky";
      return;
    }
  }
  r.method = Method::LU;
  r.method_reason = "general matrix";
}

// A factorization of A and what the policy needs of it; none (QR instead) where partial pivoting grew past
// lu_growth_limit(n), the reason then in `why_not`.
template <Real T>
struct Factored {
  DistMatrix<T> f;
  kernels::DistAside pivots;  // LU only
  bool cholesky = false;
  index smallest = 0;  // the smallest pivot, 1-based: named when the matrix is refused
};

// 1 / (||A||_1 ||A^-1||_1), ||A^-1||_1 by Higham and Tisseur's block estimator (two vectors a pass, the
// loop on every process alike) over a factorization's solves: solve(B, op) := op(A)^-1 B.
template <Real T, class Solve>
double rcond_estimate(const DistMatrix<T>& A, double anorm, Solve&& solve) {
  const index n = A.rows();
  if (n == 0 || anorm == 0) return n == 0 ? 1.0 : 0.0;
  const double inverse_norm = cpu::block_norm1_estimate<T>(n, 2, [&](std::vector<T>& X, bool transpose) {
    const index t = static_cast<index>(X.size()) / n;
    DistMatrix<T> V = DistMatrix<T>::from_replicated(A.grid(), ConstMatrixView<T>(X.data(), n, t, n), A.block());
    solve(V, transpose ? Op::Transpose : Op::None);
    const Matrix<T> solved = V.replicated();
    std::copy(solved.data(), solved.data() + solved.size(), X.begin());
  });
  return inverse_norm > 0 ? 1.0 / (anorm * inverse_norm) : 0.0;
}

// A's factorization: of a copy, or of A itself when the caller gave it up (`owned` is A then, and A must
// not be read afterwards). a_max: max |a_ij|, for the growth factor.
template <Real T>
std::optional<Factored<T>> factor(const DistMatrix<T>& A, DistMatrix<T>* owned, double a_max, Method requested,
                                  Report& r, std::string& why_not) {
  const kernels::Distributed<T>& engine = engine_of(A);
  const index n = A.rows();
  Factored<T> out{.f = owned ? std::move(*owned) : A.clone(), .pivots = {}, .cholesky = false, .smallest = 0};
  if (r.method == Method::Cholesky) {
    const index minor = engine.cholesky_factor(out.f);
    if (minor == 0) {
      out.cholesky = true;
      out.smallest = policy::smallest_entry(engine.diagonal(out.f));
      return out;
    }
    if (requested == Method::Cholesky) throw NotPositiveDefinite(minor);
    if (owned)
      throw NumericalError(fmt::format("symmetric but not positive definite (leading minor {}), and A was given up to "
                                       "the factorization, so LU cannot take over: invert a copy",
                                       minor));
    r.method = Method::LU;
    r.method_reason = fmt::format("symmetric but not positive definite (leading minor {}): LU", minor);
    out.f = A.clone();
  }
  engine.lu_factor(out.f, out.pivots);
  const std::vector<T> u = engine.diagonal(out.f);
  if (const auto zero = std::find(u.begin(), u.end(), T(0)); zero != u.end())
    throw SingularMatrix(zero - u.begin() + 1, 0.0, "LU");
  r.growth = a_max > 0 ? engine.max_abs(out.f, /*upper_only=*/true) / a_max : 1.0;
  if (!(r.growth <= lu_growth_limit(n))) {
    why_not = fmt::format("partial pivoting grew the entries {:.3g}-fold (limit {:.3g}), so its factors bound no residual",
                          r.growth, lu_growth_limit(n));
    if (owned)
      throw NumericalError(why_not + ", and A was given up to the factorization, so Householder QR cannot take over: "
                                     "invert a copy");
    return std::nullopt;
  }
  out.smallest = policy::smallest_entry(u);
  return out;
}

// X = A^-1 B by Householder QR, backward stable whatever elimination's growth; judge(rcond, smallest)
// receives A's reciprocal condition estimate, from the QR solves, and R's smallest diagonal entry.
template <Real T, class Judge>
DistMatrix<T> householder_solve(const DistMatrix<T>& A, DistMatrix<T> B, double anorm, const std::string& why,
                                Report& r, Judge&& judge) {
  const kernels::Distributed<T>& engine = engine_of(A);
  DistMatrix<T> f = A.clone();
  kernels::DistAside tau;
  engine.qr_factor(f, tau);
  const std::vector<T> d = engine.diagonal(f);
  if (const auto zero = std::find(d.begin(), d.end(), T(0)); zero != d.end())
    throw SingularMatrix(zero - d.begin() + 1, 0.0, "Householder QR");
  r.method = Method::QR;
  r.notes.push_back(why + ": solved by Householder QR instead");
  judge(rcond_estimate(A, anorm, [&](DistMatrix<T>& V, Op op) { engine.qr_solve(f, tau, V, op); }),
        policy::smallest_entry(d));
  engine.qr_solve(f, tau, B, Op::None);
  return B;
}

template <Real T>
DistMatrix<T> identity_like(const DistMatrix<T>& A) {
  DistMatrix<T> eye(A.grid(), A.rows(), A.cols(), A.block());
  engine_of(A).set_identity(eye);
  return eye;
}

// ||A X - I|| / (n eps ||A|| ||X||), or ||X A - I|| where that is the smaller (an LU inverse bounds the
// left one, Du Croz and Higham 1992), said in the report.
template <Real T>
double inverse_residual(const DistMatrix<T>& A, const DistMatrix<T>& X, double anorm, Report& r) {
  const kernels::Distributed<T>& engine = engine_of(A);
  const double scale = static_cast<double>(A.rows()) * eps<T>() * anorm * engine.norm1(X);
  auto residual = [&](const DistMatrix<T>& left, const DistMatrix<T>& right) {
    DistMatrix<T> R = identity_like(A);
    engine.gemm(T(-1), left, right, T(1), R);
    return engine.norm1(R) / scale;
  };
  const double right = residual(A, X);
  if (right <= policy::kResidualBound) return right;
  const double left = residual(X, A);
  if (!(left < right)) return right;
  r.notes.push_back(fmt::format("scaled residual of X A - I: {:.3g} (of A X - I: {:.3g})", left, right));
  return left;
}

// ||A X - B|| / (n eps (||A|| ||X|| + ||B||))
template <Real T>
double solve_residual(const DistMatrix<T>& A, const DistMatrix<T>& X, const DistMatrix<T>& B, double anorm) {
  const kernels::Distributed<T>& engine = engine_of(A);
  DistMatrix<T> R = B.clone();
  engine.gemm(T(-1), A, X, T(1), R);
  return engine.norm1(R) /
         (static_cast<double>(A.rows()) * eps<T>() * (anorm * engine.norm1(X) + engine.norm1(B)));
}

// The inverse, of A or (owned = &A) in A's own memory.
template <Real T>
Solution<T> inverse_of(const DistMatrix<T>& A, DistMatrix<T>* owned, const SolveOptions& options) {
  const kernels::Distributed<T>& engine = engine_of(A);
  require_operands<T>(A, nullptr, options, "inverse");
  if (owned && options.compute_residual)
    throw InvalidArgument("an inverse that takes A's memory cannot check its residual against A: check it against a "
                          "regenerated A, or invert a copy");
  const index n = A.rows();
  const double e = eps<T>();
  Solution<T> out{.x = {}, .report = start_report(A, Operation::Inverse)};
  Report& r = out.report;
  choose(A, options.method, r);
  Phases phases(A.grid(), "inv");
  const double anorm = engine.norm1(A), a_max = engine.max_abs(A, /*upper_only=*/false);
  phases.mark("norms");
  index smallest = 0;
  auto judge = [&](double rcond, index s) {
    r.rcond = rcond;
    policy::apply_conditioning_policy(rcond, e, s, options.allow_ill_conditioned, &r, "inverse");
  };
  Stopwatch clock;
  std::string why_not;
  if (std::optional<Factored<T>> f = factor(A, owned, a_max, options.method, r, why_not)) {
    phases.mark("factorization");
    if (f->cholesky)
      engine.cholesky_inverse(f->f);
    else
      engine.lu_inverse(f->f, f->pivots);
    phases.mark("inverse of the factors");
    out.x = std::move(f->f);
    smallest = f->smallest;
    r.rcond = 1.0 / (anorm * engine.norm1(out.x));  // exact, from the inverse
    phases.mark("rcond");
  } else {
    out.x = householder_solve(A, identity_like(A), anorm, why_not, r, [&](double rcond, index s) {
      r.rcond = rcond;
      smallest = s;
    });
  }
  if (std::isinf(r.rcond) || n == 0) r.rcond = 1;  // the empty matrix
  policy::apply_conditioning_policy(r.rcond, e, smallest, options.allow_ill_conditioned, &r, "inverse");
  r.seconds = clock.seconds();
  if (!options.compute_residual || n == 0) return out;

  // The accuracy promise: Newton-Schulz steps X := X + X (I - A X) while they halve the residual, then
  // Householder QR against the identity.
  double s = inverse_residual(A, out.x, anorm, r);
  phases.mark("residual");
  const double first = s;
  int steps = 0;
  for (; s > policy::kResidualBound && steps < policy::kRefinementSteps; ++steps) {
    DistMatrix<T> residual = identity_like(A);
    engine.gemm(T(-1), A, out.x, T(1), residual);  // I - A X
    DistMatrix<T> next = out.x.clone();
    engine.gemm(T(1), out.x, residual, T(1), next);
    const double refined = inverse_residual(A, next, anorm, r);
    if (!(refined < s / 2)) break;
    out.x = std::move(next);
    s = refined;
  }
  if (steps > 0)
    r.notes.push_back(fmt::format("scaled residual {:.3g} above the bound {:g}: {} Newton step(s) to {:.3g}", first,
                                  policy::kResidualBound, steps, s));
  if (s > policy::kResidualBound && r.method != Method::QR) {
    out.x = householder_solve(A, identity_like(A), anorm,
                              fmt::format("scaled residual {:.3g} above the bound {:g}", s, policy::kResidualBound), r,
                              judge);
    s = inverse_residual(A, out.x, anorm, r);
  }
  if (!(s <= policy::kResidualBound))
    throw NumericalError(fmt::format("inverse: the scaled residual {:.3g} exceeds linv's bound {:g} after Newton steps "
                                     "and Householder QR; no result is returned",
                                     s, policy::kResidualBound));
  r.scaled_residual = s;
  if (steps > 0 || first > policy::kResidualBound) r.seconds = clock.seconds();  // the promise acted: its time counts
  return out;
}

}  // namespace

template <Real T>
Solution<T> inv(const DistMatrix<T>& A, const SolveOptions& options) {
  return inverse_of<T>(A, nullptr, options);
}

template <Real T>
Solution<T> inv(DistMatrix<T>&& A, const SolveOptions& options) {
  return inverse_of<T>(A, &A, options);
}

template <Real T>
void gemm(T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta, DistMatrix<T>& C) {
  if (A.cols() != B.rows() || C.rows() != A.rows() || C.cols() != B.cols())
    throw ShapeMismatch("dist::gemm: A and B", A.rows(), A.cols(), B.rows(), B.cols());
  if (A.block() != B.block() || A.block() != C.block())
    throw InvalidArgument(fmt::format("dist::gemm: tiles of {}, {} and {}: lay the matrices out alike", A.block(),
                                      B.block(), C.block()));
  engine_of(A).gemm(alpha, A, B, beta, C);
}

template <Real T>
double norm1(const DistMatrix<T>& A) {
  return engine_of(A).norm1(A);
}

template <Real T>
Solution<T> solve(const DistMatrix<T>& A, const DistMatrix<T>& B, const SolveOptions& options) {
  const kernels::Distributed<T>& engine = engine_of(A);
  require_operands<T>(A, &B, options, "solve");
  const index n = A.rows();
  const double e = eps<T>();
  Solution<T> out{.x = {}, .report = start_report(A, Operation::Solve)};
  Report& r = out.report;
  choose(A, options.method, r);
  Phases phases(A.grid(), "solve");
  const double anorm = engine.norm1(A);
  auto judge = [&](double rcond, index smallest) {
    r.rcond = rcond;
    policy::apply_conditioning_policy(rcond, e, smallest, options.allow_ill_conditioned, &r, "solve");
  };
  // X := A^-1 R with the factors that produced the solution, for the accuracy promise's refinement.
  std::function<void(DistMatrix<T>&)> correct;
  Stopwatch clock;
  std::string why_not;
  const double a_max = engine.max_abs(A, /*upper_only=*/false);
  phases.mark("norms");
  std::optional<Factored<T>> f = factor<T>(A, nullptr, a_max, options.method, r, why_not);
  phases.mark("factorization");
  if (f) {
    // op(A)^-1 V with the factors (A symmetric for Cholesky)
    auto solve_with = [&engine, &f](DistMatrix<T>& V, Op op) {
      if (f->cholesky)
        engine.cholesky_solve(f->f, V);
      else
        engine.lu_solve(f->f, f->pivots, V, op);
    };
    judge(rcond_estimate(A, anorm, solve_with), f->smallest);
    phases.mark("condition estimate");
    correct = [solve_with](DistMatrix<T>& R) { solve_with(R, Op::None); };
    out.x = B.clone();
    correct(out.x);
    phases.mark("solve");
  } else {
    out.x = householder_solve(A, B.clone(), anorm, why_not, r, judge);
  }
  r.seconds = clock.seconds();
  if (!options.compute_residual || n == 0) return out;

  // The accuracy promise: refinement with the same factors (residual in working precision) while it
  // halves the residual, then Householder QR.
  double s = solve_residual(A, out.x, B, anorm);
  phases.mark("residual");
  const double first = s;
  int steps = 0;
  for (; correct && s > policy::kResidualBound && steps < policy::kRefinementSteps; ++steps) {
    DistMatrix<T> d = B.clone();
    engine.gemm(T(-1), A, out.x, T(1), d);  // B - A X
    correct(d);
    DistMatrix<T> next = out.x.clone();
    engine.axpy(T(1), d, next);
    const double refined = solve_residual(A, next, B, anorm);
    if (!(refined < s / 2)) break;
    out.x = std::move(next);
    s = refined;
  }
  if (steps > 0)
    r.notes.push_back(fmt::format("scaled residual {:.3g} above the bound {:g}: refined in {} step(s) to {:.3g}", first,
                                  policy::kResidualBound, steps, s));
  if (s > policy::kResidualBound && r.method != Method::QR) {
    out.x = householder_solve(A, B.clone(), anorm,
                              fmt::format("scaled residual {:.3g} above the bound {:g}", s, policy::kResidualBound), r,
                              judge);
    s = solve_residual(A, out.x, B, anorm);
  }
  if (!(s <= policy::kResidualBound))
    throw NumericalError(fmt::format("solve: the scaled residual {:.3g} exceeds linv's bound {:g} after refinement and "
                                     "Householder QR; no result is returned",
                                     s, policy::kResidualBound));
  r.scaled_residual = s;
  if (steps > 0 || first > policy::kResidualBound) r.seconds = clock.seconds();
  return out;
}

std::string engine(const Grid& grid) { return kernels::distributed<double>(grid).name(grid); }
std::string engines() { return kernels::distributed_engines(); }

template Solution<float> inv(const DistMatrix<float>&, const SolveOptions&);
template Solution<double> inv(const DistMatrix<double>&, const SolveOptions&);
template Solution<float> inv(DistMatrix<float>&&, const SolveOptions&);
template Solution<double> inv(DistMatrix<double>&&, const SolveOptions&);
template void gemm(float, const DistMatrix<float>&, const DistMatrix<float>&, float, DistMatrix<float>&);
template void gemm(double, const DistMatrix<double>&, const DistMatrix<double>&, double, DistMatrix<double>&);
template double norm1(const DistMatrix<float>&);
template double norm1(const DistMatrix<double>&);
template Solution<float> solve(const DistMatrix<float>&, const DistMatrix<float>&, const SolveOptions&);
template Solution<double> solve(const DistMatrix<double>&, const DistMatrix<double>&, const SolveOptions&);

}  // namespace linv::dist
