// Batched inversion and solves: shape checks, then the GPU kernels or LAPACK per matrix across CPU threads.
#include "linv/batched.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "cuda/batched.hpp"
#include "core/parallel.hpp"
#include "kernels/dense.hpp"
#include "linv/errors.hpp"

namespace linv::batched {
namespace {

namespace k = kernels::cpu;

// Matrices per CPU thread below which one thread does the whole batch (thread start-up dominates).
constexpr index kMatricesPerThread = 256;

template <Real T>
void invert_on_cpu(ConstMatrixView<T> A, MatrixView<T> X, std::vector<index>& pivot) {
  const index n = A.rows(), count = A.cols() / std::max<index>(n, 1);
  auto invert_range = [&](index first, index last) {
    std::vector<int> ipiv(static_cast<std::size_t>(n));
    for (index m = first; m < last; ++m) {
      MatrixView<T> x = X.block(0, m * n, n, n);
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < n; ++i) x(i, j) = A(i, m * n + j);
      const int info = k::getrf<T>(x, ipiv.data());
      pivot[static_cast<std::size_t>(m)] = info;
      if (info == 0) {
        k::getri<T>(x, ipiv.data());
      } else {
        for (index j = 0; j < n; ++j)
          for (index i = 0; i < n; ++i) x(i, j) = std::numeric_limits<T>::quiet_NaN();
      }
    }
  };
  detail::in_parallel(count, kMatricesPerThread, invert_range);
}

// A(k) X(k) = B(k) by getrf + getrs per matrix; singular matrices leave NaN.
template <Real T>
void solve_on_cpu(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X, std::vector<index>& pivot) {
  const index n = A.rows(), count = A.cols() / std::max<index>(n, 1), nrhs = B.cols() / std::max<index>(count, 1);
  auto solve_range = [&](index first, index last) {
    Matrix<T> lu(n, n);
    std::vector<int> ipiv(static_cast<std::size_t>(n));
    for (index m = first; m < last; ++m) {
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < n; ++i) lu(i, j) = A(i, m * n + j);
      MatrixView<T> x = X.block(0, m * nrhs, n, nrhs);
      const int info = k::getrf<T>(lu.view(), ipiv.data());
      pivot[static_cast<std::size_t>(m)] = info;
      for (index j = 0; j < nrhs; ++j)
        for (index i = 0; i < n; ++i) x(i, j) = info == 0 ? B(i, m * nrhs + j) : std::numeric_limits<T>::quiet_NaN();
      if (info == 0) k::getrs<T>(Op::None, lu.view(), ipiv.data(), x);
    }
  };
  detail::in_parallel(count, kMatricesPerThread, solve_range);
}

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

// The status's count of singular matrices (the per-matrix pivots kept only when there are any) and time.
void finish(Status& s, std::chrono::steady_clock::time_point start) {
  s.singular = std::count_if(s.pivot.begin(), s.pivot.end(), [](index p) { return p != 0; });
  if (s.singular == 0) s.pivot.clear();
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

template <Real T>
Status inv_into(ConstMatrixView<T> A, MatrixView<T> X) {
  const auto start = std::chrono::steady_clock::now();
  require_batch(A, "batched inverse");
  require_batch(ConstMatrixView<T>(X), "batched inverse (output)");
  if (X.rows() != A.rows() || X.cols() != A.cols())
    throw ShapeMismatch("batched inverse: X must have A's shape", A.rows(), A.cols(), X.rows(), X.cols());
  if (X.device() != A.device())
    throw InvalidArgument(fmt::format("batched inverse: A is on {} but X is on {}", A.device().name(), X.device().name()));
  if (overlaps<T>(A, X)) throw InvalidArgument("batched inverse: X overlaps A; give the result its own memory");
  const index n = A.rows(), count = n == 0 ? 0 : A.cols() / n;
  Status s;
  if (A.device().is_cuda()) {
    s.method = cuda::batched_gauss_jordan<T>(A.data(), nullptr, 0, X.data(), count, static_cast<int>(n),
                                             A.device().index(), s.pivot);
  } else {
    s.pivot.assign(static_cast<std::size_t>(count), 0);
    invert_on_cpu<T>(A, X, s.pivot);
    s.method = "lapack getrf+getri per matrix";
  }
  finish(s, start);
  return s;
}

template <Real T>
Result<T> inv(ConstMatrixView<T> A) {
  require_batch(A, "batched inverse");
  Result<T> r{Matrix<T>::uninitialized(A.rows(), A.cols(), A.device()), {}};
  r.status = inv_into<T>(A, r.x.view());
  return r;
}

template <Real T>
Status solve_into(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X) {
  const auto start = std::chrono::steady_clock::now();
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
  Status s;
  if (A.device().is_cuda()) {
    if (nrhs > std::numeric_limits<int>::max()) throw InvalidArgument("batched solve: too many right-hand sides");
    s.method = cuda::batched_gauss_jordan<T>(A.data(), B.data(), static_cast<int>(nrhs), X.data(), count,
                                             static_cast<int>(n), A.device().index(), s.pivot);
  } else {
    s.pivot.assign(static_cast<std::size_t>(count), 0);
    solve_on_cpu<T>(A, B, X, s.pivot);
    s.method = "lapack getrf+getrs per matrix";
  }
  finish(s, start);
  return s;
}

template <Real T>
Result<T> solve(ConstMatrixView<T> A, ConstMatrixView<T> B) {
  Result<T> r{Matrix<T>::uninitialized(B.rows(), B.cols(), B.device()), {}};
  r.status = solve_into<T>(A, B, r.x.view());
  return r;
}

template Status solve_into<float>(ConstMatrixView<float>, ConstMatrixView<float>, MatrixView<float>);
template Status solve_into<double>(ConstMatrixView<double>, ConstMatrixView<double>, MatrixView<double>);
template Result<float> solve<float>(ConstMatrixView<float>, ConstMatrixView<float>);
template Result<double> solve<double>(ConstMatrixView<double>, ConstMatrixView<double>);
template Status inv_into<float>(ConstMatrixView<float>, MatrixView<float>);
template Status inv_into<double>(ConstMatrixView<double>, MatrixView<double>);
template Result<float> inv<float>(ConstMatrixView<float>);
template Result<double> inv<double>(ConstMatrixView<double>);

}  // namespace linv::batched
