// Batched inversion: shape checks, then the GPU kernels or LAPACK per matrix across CPU threads.
#include "linv/batched.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "cuda/batched.hpp"
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
  const index threads = std::clamp<index>(count / kMatricesPerThread, 1,
                                          std::max<index>(1, static_cast<index>(std::thread::hardware_concurrency())));
  if (threads == 1) {
    invert_range(0, count);
    return;
  }
  std::vector<std::jthread> pool;
  const index per = (count + threads - 1) / threads;
  for (index t = 0; t < threads; ++t)
    pool.emplace_back(invert_range, std::min(count, t * per), std::min(count, (t + 1) * per));
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
  const T* a_end = A.data() + A.rows() * A.cols();
  const T* x_end = X.data() + X.rows() * X.cols();
  if (A.cols() > 0 && X.data() < a_end && A.data() < x_end)
    throw InvalidArgument("batched inverse: X overlaps A; give the result its own memory");
  const index n = A.rows(), count = n == 0 ? 0 : A.cols() / n;
  Status s;
  if (A.device().is_cuda()) {
    s.method = cuda::batched_inverse<T>(A.data(), X.data(), count, static_cast<int>(n), A.device().index(), s.pivot);
  } else {
    s.pivot.assign(static_cast<std::size_t>(count), 0);
    invert_on_cpu<T>(A, X, s.pivot);
    s.method = "lapack getrf+getri per matrix";
  }
  s.singular = std::count_if(s.pivot.begin(), s.pivot.end(), [](index p) { return p != 0; });
  if (s.singular == 0) s.pivot.clear();
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

template <Real T>
Result<T> inv(ConstMatrixView<T> A) {
  require_batch(A, "batched inverse");
  Result<T> r{Matrix<T>::uninitialized(A.rows(), A.cols(), A.device()), {}};
  r.status = inv_into<T>(A, r.x.view());
  return r;
}

template Status inv_into<float>(ConstMatrixView<float>, MatrixView<float>);
template Status inv_into<double>(ConstMatrixView<double>, MatrixView<double>);
template Result<float> inv<float>(ConstMatrixView<float>);
template Result<double> inv<double>(ConstMatrixView<double>);

}  // namespace linv::batched
