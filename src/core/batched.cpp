// Batched inversion and solves: shape checks, then the batched family of the device the batch lives on.
#include "linv/batched.hpp"

#include <fmt/format.h>

#include <limits>

#include "core/stopwatch.hpp"
#include "kernels/backend.hpp"
#include "linv/errors.hpp"

namespace linv::batched {
namespace {

template <Real T>
void require_batch(ConstMatrixView<T> A, const char* what) {
  const index n = A.rows();
  if (n > kMaxOrder)
    throw InvalidArgument(fmt::format("{}: matrices of order {} are larger than the {} supported; invert them one at "
                                      "a time with linv::inv",
                                      what, n, kMaxOrder));
  if (n == 0 ? A.cols() != 0 : A.cols() % n != 0)
    throw InvalidArgument(fmt::format("{}: a batch of order-n matrices is n x (n * count); got {} x {}, and {} is not "
                                      "a multiple of {}",
                                      what, A.rows(), A.cols(), A.cols(), A.rows()));
  if (A.cols() > 1 && A.ld() != n)
    throw InvalidArgument(
        fmt::format("{}: the matrices must be contiguous (leading dimension {}, not {})", what, n, A.ld()));
}

// Whether the element ranges of two contiguous views meet.
template <Real T>
bool overlaps(ConstMatrixView<T> a, ConstMatrixView<T> b) {
  return !a.empty() && !b.empty() && a.data() < b.data() + b.rows() * b.cols() && b.data() < a.data() + a.rows() * a.cols();
}

template <Real T>
kernels::BatchedPolicy policy_of(const Options& options) {
  return {.threshold = std::numeric_limits<T>::epsilon(), .keep_ill_conditioned = options.allow_ill_conditioned};
}

// The notes naming kept results stop here; Status::singular lists them all.
constexpr std::size_t kMaxKeptNotes = 100;

// The status of a batch: what ran, its singular matrices, a note per result kept (up to kMaxKeptNotes)
// and time.
template <Real T>
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
                                    m.matrix, m.rcond, std::numeric_limits<T>::epsilon(), m.pivot));
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

template <Real T>
Status inv_into(ConstMatrixView<T> A, MatrixView<T> X, const Options& options) {
  const Stopwatch clock;
  require_batch(A, "batched inverse");
  require_batch(ConstMatrixView<T>(X), "batched inverse (output)");
  if (X.rows() != A.rows() || X.cols() != A.cols())
    throw ShapeMismatch("batched inverse: X must have A's shape", A.rows(), A.cols(), X.rows(), X.cols());
  if (X.device() != A.device())
    throw InvalidArgument(fmt::format("batched inverse: A is on {} but X is on {}", A.device().name(), X.device().name()));
  if (overlaps<T>(A, X)) throw InvalidArgument("batched inverse: X overlaps A; give the result its own memory");
  std::vector<Singular> singular;
  const kernels::BatchedMethod ran = kernels::batched<T>(A.device()).invert(A, X, policy_of<T>(options), singular);
  return finish<T>(Operation::BatchedInverse, ran, std::move(singular), A.device(), clock);
}

template <Real T>
Result<T> inv(ConstMatrixView<T> A, const Options& options) {
  require_batch(A, "batched inverse");
  Result<T> r{Matrix<T>::uninitialized(A.rows(), A.cols(), A.device()), {}};
  r.status = inv_into<T>(A, r.x.view(), options);
  return r;
}

template <Real T>
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
  std::vector<Singular> singular;
  const kernels::BatchedMethod ran = kernels::batched<T>(A.device()).solve(A, B, X, policy_of<T>(options), singular);
  return finish<T>(Operation::BatchedSolve, ran, std::move(singular), A.device(), clock);
}

template <Real T>
Result<T> solve(ConstMatrixView<T> A, ConstMatrixView<T> B, const Options& options) {
  Result<T> r{Matrix<T>::uninitialized(B.rows(), B.cols(), B.device()), {}};
  r.status = solve_into<T>(A, B, r.x.view(), options);
  return r;
}

template Status solve_into<float>(ConstMatrixView<float>, ConstMatrixView<float>, MatrixView<float>, const Options&);
template Status solve_into<double>(ConstMatrixView<double>, ConstMatrixView<double>, MatrixView<double>,
                                   const Options&);
template Result<float> solve<float>(ConstMatrixView<float>, ConstMatrixView<float>, const Options&);
template Result<double> solve<double>(ConstMatrixView<double>, ConstMatrixView<double>, const Options&);
template Status inv_into<float>(ConstMatrixView<float>, MatrixView<float>, const Options&);
template Status inv_into<double>(ConstMatrixView<double>, MatrixView<double>, const Options&);
template Result<float> inv<float>(ConstMatrixView<float>, const Options&);
template Result<double> inv<double>(ConstMatrixView<double>, const Options&);

}  // namespace linv::batched
