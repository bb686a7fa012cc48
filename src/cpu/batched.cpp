// The CPU backend's batched family (src/kernels/batched.hpp): LAPACK per matrix, matrices spread across
// threads.
#include <limits>

#include "core/parallel.hpp"
#include "cpu/backend.hpp"
#include "cpu/lapack.hpp"

namespace linv::cpu {
namespace {

// Matrices per CPU thread below which one thread does the whole batch (thread start-up dominates).
constexpr index kMatricesPerThread = 256;

template <Real T>
void fill_nan(MatrixView<T> x) {
  for (index j = 0; j < x.cols(); ++j)
    for (index i = 0; i < x.rows(); ++i) x(i, j) = std::numeric_limits<T>::quiet_NaN();
}

template <Real T>
class Batched final : public kernels::Batched<T> {
 public:
  // getrf + getri per matrix.
  kernels::BatchedMethod invert(ConstMatrixView<T> A, MatrixView<T> X, std::vector<index>& pivot) const override {
    const index n = A.rows(), count = A.cols() / std::max<index>(n, 1);
    pivot.assign(static_cast<std::size_t>(count), 0);
    detail::in_parallel(count, kMatricesPerThread, [&](index first, index last) {
      std::vector<int> ipiv(static_cast<std::size_t>(n));
      for (index m = first; m < last; ++m) {
        MatrixView<T> x = X.block(0, m * n, n, n);
        for (index j = 0; j < n; ++j)
          for (index i = 0; i < n; ++i) x(i, j) = A(i, m * n + j);
        const int info = lapack::getrf<T>(x, ipiv.data());
        pivot[static_cast<std::size_t>(m)] = info;
        if (info == 0)
          lapack::getri<T>(x, ipiv.data());
        else
          fill_nan(x);
      }
    });
    return {Method::BatchedLU, "LAPACK getrf and getri per matrix"};
  }

  // getrf + getrs per matrix.
  kernels::BatchedMethod solve(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X,
                    std::vector<index>& pivot) const override {
    const index n = A.rows(), count = A.cols() / std::max<index>(n, 1), nrhs = B.cols() / std::max<index>(count, 1);
    pivot.assign(static_cast<std::size_t>(count), 0);
    detail::in_parallel(count, kMatricesPerThread, [&](index first, index last) {
      Matrix<T> lu(n, n);
      std::vector<int> ipiv(static_cast<std::size_t>(n));
      for (index m = first; m < last; ++m) {
        for (index j = 0; j < n; ++j)
          for (index i = 0; i < n; ++i) lu(i, j) = A(i, m * n + j);
        MatrixView<T> x = X.block(0, m * nrhs, n, nrhs);
        const int info = lapack::getrf<T>(lu.view(), ipiv.data());
        pivot[static_cast<std::size_t>(m)] = info;
        if (info != 0) {
          fill_nan(x);
          continue;
        }
        for (index j = 0; j < nrhs; ++j)
          for (index i = 0; i < n; ++i) x(i, j) = B(i, m * nrhs + j);
        lapack::getrs<T>(Op::None, lu.view(), ipiv.data(), x);
      }
    });
    return {Method::BatchedLU, "LAPACK getrf and getrs per matrix"};
  }
};

}  // namespace

template <Real T>
const kernels::Batched<T>& batched() { return kernels::instance<Batched<T>>(); }
template const kernels::Batched<float>& batched<float>();
template const kernels::Batched<double>& batched<double>();

}  // namespace linv::cpu
