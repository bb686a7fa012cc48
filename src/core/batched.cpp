// Batched inversion and solves: shape checks, then the batched family of the device the batch lives on.
#include "linv/batched.hpp"

#include <fmt/format.h>

#include <cmath>
#include <algorithm>
#include <limits>
#include <optional>

#include "common/stopwatch.hpp"
#include "core/policy.hpp"
#include "kernels/backend.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"

namespace linv::batched {

std::string describe(const Singular& m) {
  if (!m.why.empty()) return m.why;
  if (m.rcond == 0) return fmt::format("zero pivot in column {}", m.pivot);
  return fmt::format("rcond {:.3g} below machine epsilon, smallest pivot in column {}", m.rcond, m.pivot);
}

namespace {

template <Scalar T>
void require_batch(ConstMatrixView<T> A, const char* what) {
  const index n = A.rows();
  if (n == 0 ? A.cols() != 0 : A.cols() % n != 0)
    throw InvalidArgument(fmt::format("{}: a batch of order-n matrices is n x (n * count); got {} x {}, and {} is not "
                                      "a multiple of {}",
                                      what, A.rows(), A.cols(), A.cols(), A.rows()));
  if (A.cols() > 1 && A.ld() != n)
    throw InvalidArgument(
        fmt::format("{}: the matrices must be contiguous (leading dimension {}, not {})", what, n, A.ld()));
}

// Whether the element ranges of two contiguous views meet.
template <Scalar T>
bool overlaps(ConstMatrixView<T> a, ConstMatrixView<T> b) {
  return !a.empty() && !b.empty() && a.data() < b.data() + b.rows() * b.cols() && b.data() < a.data() + a.rows() * a.cols();
}

// X := NaN (on X's device): the block of a refused matrix.
template <Scalar T>
void fill_nan(MatrixView<T> X) {
  Matrix<T> nan(X.rows(), X.cols());
  std::fill(nan.data(), nan.data() + X.rows() * X.cols(), quiet_nan<T>());
  copy<T>(nan.to(X.device()).view(), X);
}

template <Scalar T>
kernels::BatchedPolicy policy_of(const Options& options) {
  return {.threshold = std::numeric_limits<real_t<T>>::epsilon(), .keep_ill_conditioned = options.allow_ill_conditioned};
}

// NonFiniteInput for the first NaN or Inf of the matrices of M (`name`: A or B), each `width` columns
// wide, the first of them matrix `first` of the batch; it names the matrix and its entry, as an entry of
// op(M(k)) (Op::Transpose: row and column swapped, the entry of the system's matrix).
template <Scalar T>
void require_finite_batch(ConstMatrixView<T> M, index width, const char* name, index first = 0, Op op = Op::None) {
  if (M.empty() || width == 0) return;
  const auto at = kernels::dense<T>(M.device()).magnitude(M).first_non_finite;
  if (!at) return;
  const Matrix<T> value = Matrix<T>::copy_of(M.block(at->first, at->second, 1, 1)).to(Device::cpu());
  index row = at->first + 1, column = at->second % width + 1;
  if (op == Op::Transpose) std::swap(row, column);
  throw NonFiniteInput(name,
                       fmt::format("matrix {} of the stack (from 0, as NumPy numbers them), row {}, column {}",
                                   first + at->second / width, row, column),
                       non_finite_part(value(0, 0)));
}

// Matrix k of the batch by the one-matrix path: `again(k)` returns its result (`width` columns of X) or
// throws where that path refuses it, which leaves its block NaN. Returns its entry for the status, if any:
// refused, or kept singular to working precision (allow_ill_conditioned). `why` says how it was computed.
template <Scalar T, class Again>
std::optional<Singular> alone(ConstMatrixView<T> A, index k, MatrixView<T> X, index width, Again&& again,
                              const char* why, Method* ran = nullptr) {
  const index n = A.rows();
  try {
    const Solution<T> s = again(k);
    copy<T>(s.x.view(), X.block(0, k * width, X.rows(), width));
    if (ran) *ran = s.report.method;
    if (s.report.rcond < std::numeric_limits<real_t<T>>::epsilon())  // kept by allow_ill_conditioned: listed
      return Singular{k, 0, s.report.rcond, true, why};
    return std::nullopt;
  } catch (const SingularMatrix& e) {
    fill_nan<T>(X.block(0, k * width, X.rows(), width));
    return Singular{k, e.pivot(), e.rcond(), false, e.what()};
  } catch (const NumericalError& e) {  // its inverse does not fit the type: named by its smallest pivot
    fill_nan<T>(X.block(0, k * width, X.rows(), width));
    const LU<T> lu(A.block(0, k * n, n, n), Pivoting::Partial, /*check_finite=*/false);
    return Singular{k, policy::smallest_entry(kernels::dense<T>(A.device()).diagonal(lu.factors())), 0.0, false,
                    e.what()};
  }
}

// The batched kernels give a matrix whose column sums are not finite rcond NaN: a NaN or Inf entry
// (NonFiniteInput, naming it), or sums that overflow at the ends of the range (entries near 1e308; near
// 1e-310 the inverse overflows). Those are computed again alone by the one-matrix path, which scales them,
// and its verdict replaces the kernel's.
template <Scalar T, class Again>
void rejudge_unjudged(ConstMatrixView<T> A, std::vector<Singular>& singular, MatrixView<T> X, index width,
                      Again&& again, Op op = Op::None) {
  const index n = A.rows();
  std::vector<Singular> kept;
  for (Singular& s : singular) {
    if (!std::isnan(s.rcond)) {
      kept.push_back(std::move(s));
      continue;
    }
    require_finite_batch<T>(A.block(0, s.matrix * n, n, n), n, "A", s.matrix, op);
    if (std::optional<Singular> verdict = alone<T>(A, s.matrix, X, width, again, "computed alone (scaled)"))
      kept.push_back(std::move(*verdict));
  }
  singular = std::move(kept);
}

// Above kMaxOrder the batched kernels do not run: each matrix goes through the one-matrix path where the
// batch lives (its blocked factorizations are what such orders want), singular ones NaN and listed as a
// batch lists them.
template <Scalar T, class Again>
kernels::BatchedMethod one_by_one(ConstMatrixView<T> A, std::vector<Singular>& singular, MatrixView<T> X,
                                  index width, Again&& again, const char* routine, Op op = Op::None) {
  const index n = A.rows(), count = n == 0 ? 0 : A.cols() / n;
  require_finite_batch<T>(A, n, "A", 0, op);
  Method ran = Method::LU;
  for (index k = 0; k < count; ++k)
    if (std::optional<Singular> verdict = alone<T>(A, k, X, width, again, "computed alone", &ran))
      singular.push_back(std::move(*verdict));
  return {ran, fmt::format("order {} is above the batched kernels' {}: each matrix by linv::{}", n, kMaxOrder,
                           routine)};
}

// The notes naming kept results stop here; Status::singular lists them all.
constexpr std::size_t kMaxKeptNotes = 100;

// The status of a batch: what ran, its singular matrices, a note per result kept (up to kMaxKeptNotes)
// and time.
template <Scalar T>
Status finish(Operation operation, const kernels::BatchedMethod& ran, std::vector<Singular>&& singular, Device device,
              const Stopwatch& clock) {
  Status s{std::move(singular), {}};
  Report& r = s.report;
  r.operation = operation;
  r.method = ran.method;
  r.device = device;
  r.precision = type_name<T>();
  if (!ran.detail.empty()) r.notes.push_back(ran.detail);
  std::size_t kept = 0;
  for (const Singular& m : s.singular)
    if (m.kept && ++kept <= kMaxKeptNotes)
      r.notes.push_back(fmt::format("matrix {}: singular to working precision: rcond {:.3g} is below machine epsilon "
                                    "{:.3g} (smallest pivot in column {}), so its result may have no correct digits "
                                    "(allowed by the caller)",
                                    m.matrix, m.rcond, std::numeric_limits<real_t<T>>::epsilon(), m.pivot));
  if (kept > kMaxKeptNotes)
    r.notes.push_back(fmt::format("{} more matrices singular to working precision kept (the status lists them all)",
                                  kept - kMaxKeptNotes));
  if (const std::size_t refused = s.singular.size() - kept; refused > 0)
    r.notes.push_back(fmt::format("{} singular matrices (an exactly zero pivot, or rcond below machine epsilon): their "
                                  "blocks of the result are NaN",
                                  refused));
  r.seconds = clock.seconds();
  return s;
}

}  // namespace

template <Scalar T>
Status inv_into(ConstMatrixView<T> A, MatrixView<T> X, const Options& options) {
  const Stopwatch clock;
  require_batch(A, "batched inverse");
  require_batch(ConstMatrixView<T>(X), "batched inverse (output)");
  if (X.rows() != A.rows() || X.cols() != A.cols())
    throw ShapeMismatch("batched inverse: X must have A's shape", A.rows(), A.cols(), X.rows(), X.cols());
  if (X.device() != A.device())
    throw InvalidArgument(fmt::format("batched inverse: A is on {} but X is on {}", A.device().name(), X.device().name()));
  if (overlaps<T>(A, X)) throw InvalidArgument("batched inverse: X overlaps A; give the result its own memory");
  if (options.op != Op::None)
    throw InvalidArgument("batched inverse: Options::op is for solves (the inverse of A^T is the inverse's transpose)");
  std::vector<Singular> singular;
  const index n = A.rows();
  const auto again = [&](index k) {
    return linv::inv<T>(A.block(0, k * n, n, n), {.allow_ill_conditioned = options.allow_ill_conditioned});
  };
  if (n > kMaxOrder)
    return finish<T>(Operation::BatchedInverse, one_by_one<T>(A, singular, X, n, again, "inv"), std::move(singular),
                     A.device(), clock);
  const kernels::BatchedMethod ran = kernels::batched<T>(A.device()).invert(A, X, policy_of<T>(options), singular);
  rejudge_unjudged<T>(A, singular, X, n, again);
  return finish<T>(Operation::BatchedInverse, ran, std::move(singular), A.device(), clock);
}

template <Scalar T>
Result<T> inv(ConstMatrixView<T> A, const Options& options) {
  require_batch(A, "batched inverse");
  Result<T> r{Matrix<T>::uninitialized(A.rows(), A.cols(), A.device()), {}};
  r.status = inv_into<T>(A, r.x.view(), options);
  return r;
}

template <Scalar T>
Status solve_into(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X, const Options& options) {
  const Stopwatch clock;
  require_batch(A, "batched solve");
  const index n = A.rows(), count = n == 0 ? 0 : A.cols() / n;
  if (B.rows() != n || (count == 0 ? B.cols() != 0 : B.cols() % count != 0))
    throw ShapeMismatch("batched solve: B must hold the same number of right-hand-side blocks as A has matrices",
                        A.rows(), A.cols(), B.rows(), B.cols());
  if (X.rows() != B.rows() || X.cols() != B.cols())
    throw ShapeMismatch("batched solve: X must have B's shape", B.rows(), B.cols(), X.rows(), X.cols());
  if (B.device() != A.device() || X.device() != A.device())
    throw InvalidArgument(fmt::format("batched solve: A is on {}, B on {}, X on {}: put them on one device",
                                      A.device().name(), B.device().name(), X.device().name()));
  if (B.cols() > 1 && (B.ld() != n || X.ld() != n))
    throw InvalidArgument("batched solve: B and X must be contiguous (leading dimension n)");
  const index nrhs = count == 0 ? 0 : B.cols() / count;
  if (overlaps<T>(A, X) || overlaps<T>(B, X))
    throw InvalidArgument("batched solve: X overlaps A or B; give the result its own memory");
  if (nrhs > std::numeric_limits<int>::max()) throw InvalidArgument("batched solve: too many right-hand sides");
  if (Complex<T> && options.op != Op::None)
    throw InvalidArgument(fmt::format("batched solve: op Transpose is for real matrices ({} here: linv's Transpose "
                                      "would be the conjugate transpose); transpose the stack first",
                                      type_name<T>()));
  require_finite_batch<T>(B, nrhs, "B");  // the kernels judge A's entries, not B's
  std::vector<Singular> singular;
  const auto again = [&](index k) {
    const ConstMatrixView<T> a = A.block(0, k * n, n, n), b = B.block(0, k * nrhs, n, nrhs);
    const SolveOptions one{.allow_ill_conditioned = options.allow_ill_conditioned};
    if (options.op == Op::None) return linv::solve<T>(a, b, one);
    Matrix<T> transposed = Matrix<T>::uninitialized(n, n, A.device());  // A(k)^T, the system's matrix
    kernels::vectors<T>(A.device()).transpose(a, transposed.view());
    return linv::solve<T>(transposed.view(), b, one);
  };
  if (n > kMaxOrder)
    return finish<T>(Operation::BatchedSolve, one_by_one<T>(A, singular, X, nrhs, again, "solve", options.op),
                     std::move(singular), A.device(), clock);
  const kernels::BatchedMethod ran =
      kernels::batched<T>(A.device()).solve(A, B, X, options.op, policy_of<T>(options), singular);
  rejudge_unjudged<T>(A, singular, X, nrhs, again, options.op);
  return finish<T>(Operation::BatchedSolve, ran, std::move(singular), A.device(), clock);
}

template <Scalar T>
Result<T> solve(ConstMatrixView<T> A, ConstMatrixView<T> B, const Options& options) {
  Result<T> r{Matrix<T>::uninitialized(B.rows(), B.cols(), B.device()), {}};
  r.status = solve_into<T>(A, B, r.x.view(), options);
  return r;
}

#define LINV_INSTANTIATE(T)                                                                              \
  template Status solve_into<T>(ConstMatrixView<T>, ConstMatrixView<T>, MatrixView<T>, const Options&);  \
  template Result<T> solve<T>(ConstMatrixView<T>, ConstMatrixView<T>, const Options&);                   \
  template Status inv_into<T>(ConstMatrixView<T>, MatrixView<T>, const Options&);                        \
  template Result<T> inv<T>(ConstMatrixView<T>, const Options&);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
LINV_INSTANTIATE(std::complex<float>)
LINV_INSTANTIATE(std::complex<double>)
#undef LINV_INSTANTIATE

}  // namespace linv::batched
