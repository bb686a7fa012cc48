// The CUDA backend's batched family for complex matrices (src/kernels/batched.hpp): cuBLAS's batched LU
// (getrfBatched) and inverse from it (getriBatched), one call each for the whole stack, then each matrix's
// exact rcond 1 / (||A||_1 ||A^-1||_1) from a one-warp-per-matrix norm kernel (complex.cu); solves multiply
// the inverses into the right-hand sides (gemmStridedBatched), as the real family's solves go through its
// inverses. The conditioning policy is applied on the host from what comes back (count infos and norms).
#include <fmt/format.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "cuda/backend.hpp"
#include "cuda/complex_blas.hpp"
#include "cuda/complex_kernels.hpp"
#include "cuda/context.hpp"
#include "kernels/batched.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

// What the batched inversion left on the device and brought back: the inverses (in `inverse`, n x n each),
// and per matrix getrf's info and the exact rcond (NaN where a norm is not finite).
struct Inverted {
  std::vector<int> info;
  std::vector<double> rcond;
};

template <Complex T>
Inverted invert_stack(Context& ctx, ConstMatrixView<T> A, T* inverse, DeviceBuffer& factors) {
  const std::int64_t n = A.rows(), count = A.cols() / n;
  if (n > std::numeric_limits<int>::max() || count > std::numeric_limits<int>::max())
    throw InvalidArgument(fmt::format("batched inverse: {} matrices of order {} are beyond cuBLAS's 32-bit batches",
                                      count, n));
  const cudaStream_t s = ctx.main().stream;
  T* lu = factors.as<T>();
  check(cudaMemcpyAsync(lu, A.data(), bytes_of(n * n * count, sizeof(T)), cudaMemcpyDeviceToDevice, s), "cudaMemcpy");
  std::vector<Cu<T>*> pointers(static_cast<std::size_t>(2 * count));
  for (std::int64_t m = 0; m < count; ++m) {
    pointers[static_cast<std::size_t>(m)] = cu(lu + m * n * n);
    pointers[static_cast<std::size_t>(count + m)] = cu(inverse + m * n * n);
  }
  DeviceBuffer d_pointers(bytes_of(2 * count, sizeof(Cu<T>*)), ctx.device());
  DeviceBuffer d_ints(bytes_of(count * (n + 2), sizeof(int)), ctx.device());  // pivots, then two infos
  DeviceBuffer d_norms(bytes_of(2 * count, sizeof(double)), ctx.device());
  to_device(d_pointers.p, pointers.data(), pointers.size() * sizeof(Cu<T>*), s);
  auto** a_ptrs = d_pointers.as<Cu<T>*>();
  int* pivots = d_ints.as<int>();
  int* info = pivots + count * n;
  const int ni = static_cast<int>(n), batch = static_cast<int>(count);
  check(pick<T>(cublasCgetrfBatched, cublasZgetrfBatched)(ctx.main().blas, ni, a_ptrs, ni, pivots, info, batch),
        "getrfBatched");
  check(pick<T>(cublasCgetriBatched, cublasZgetriBatched)(ctx.main().blas, ni, a_ptrs, ni, pivots, a_ptrs + count,
                                                          ni, info + count, batch),
        "getriBatched");
  auto* norms = d_norms.as<double>();
  complex_launch::batched_norm1(A.data(), n, count, norms, s);
  complex_launch::batched_norm1(inverse, n, count, norms + count, s);
  Inverted out{std::vector<int>(static_cast<std::size_t>(count)), std::vector<double>(static_cast<std::size_t>(count))};
  std::vector<double> both(static_cast<std::size_t>(2 * count));
  to_host(out.info.data(), info, out.info.size() * sizeof(int), s);
  to_host(both.data(), norms, both.size() * sizeof(double), s);
  wait(s);
  for (std::size_t m = 0; m < out.rcond.size(); ++m) {
    const double anorm = both[m], xnorm = both[out.rcond.size() + m];
    out.rcond[m] = std::isfinite(anorm) && std::isfinite(xnorm) ? (anorm > 0 ? 1.0 / (anorm * xnorm) : 0.0)
                                                                  : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

// The 1-based position of the smallest |u_kk| of matrix m's factors (a singular matrix is named by it).
template <Complex T>
index smallest_pivot(const T* lu, std::int64_t n, std::int64_t m) {
  std::vector<T> d(static_cast<std::size_t>(n));
  check(cudaMemcpy2D(d.data(), sizeof(T), lu + m * n * n, (n + 1) * sizeof(T), sizeof(T), n, cudaMemcpyDeviceToHost),
        "cudaMemcpy2D");
  index best = 0;
  for (index k = 1; k < n; ++k)
    if (std::abs(d[static_cast<std::size_t>(k)]) < std::abs(d[static_cast<std::size_t>(best)])) best = k;
  return best + 1;
}

// The policy on the host: a zero pivot (getrf's info) or an rcond below the threshold (NaN included) makes
// matrix m singular; its block of X (`width` columns) becomes NaN unless the policy keeps it.
template <Complex T>
void judge(const Inverted& inv, const T* lu, std::int64_t n, MatrixView<T> X, std::int64_t width,
           const kernels::BatchedPolicy& policy, std::vector<batched::Singular>& singular, cudaStream_t s) {
  for (std::size_t i = 0; i < inv.info.size(); ++i) {
    const auto m = static_cast<index>(i);
    const int info = inv.info[i];
    const double rcond = info > 0 ? 0.0 : inv.rcond[i];
    if (info == 0 && rcond >= policy.threshold) continue;
    const bool kept = info == 0 && policy.keeps(rcond);
    singular.push_back({m, info > 0 ? info : (std::isnan(rcond) ? 0 : smallest_pivot(lu, n, m)), rcond, kept, {}});
    if (!kept)  // all bits set: a NaN in either precision
      check(cudaMemsetAsync(X.data() + m * width * X.ld(), 0xFF, bytes_of(width * X.ld(), sizeof(T)), s),
            "cudaMemset");
  }
  wait(s);
}

template <Complex T>
class ComplexBatched final : public kernels::Batched<T> {
 public:
  kernels::BatchedMethod invert(ConstMatrixView<T> A, MatrixView<T> X, const kernels::BatchedPolicy& policy,
                                std::vector<batched::Singular>& singular) const override {
    const std::int64_t n = A.rows();
    if (n > 0 && A.cols() > 0) {
      Context& ctx = context_of(A.device());
      DeviceBuffer factors(bytes_of(A.rows() * A.cols(), sizeof(T)), ctx.device());
      const Inverted inv = invert_stack<T>(ctx, A, X.data(), factors);
      judge<T>(inv, factors.as<T>(), n, X, n, policy, singular, ctx.main().stream);
    }
    return {Method::BatchedLU, "cuBLAS getrfBatched and getriBatched over the stack"};
  }

  kernels::BatchedMethod solve(ConstMatrixView<T> A, ConstMatrixView<T> B, MatrixView<T> X, Op /*None: the core
                               refuses Transpose for complex stacks*/, const kernels::BatchedPolicy& policy,
                               std::vector<batched::Singular>& singular) const override {
    const std::int64_t n = A.rows(), count = n == 0 ? 0 : A.cols() / n, nrhs = count == 0 ? 0 : B.cols() / count;
    if (n > 0 && count > 0 && nrhs > 0) {
      Context& ctx = context_of(A.device());
      DeviceBuffer factors(bytes_of(n * n * count, sizeof(T)), ctx.device());
      DeviceBuffer inverses(bytes_of(n * n * count, sizeof(T)), ctx.device());
      const Inverted inv = invert_stack<T>(ctx, A, inverses.as<T>(), factors);
      const T one(1), zero(0);
      check(pick<T>(cublasCgemmStridedBatched_64, cublasZgemmStridedBatched_64)(
                ctx.main().blas, CUBLAS_OP_N, CUBLAS_OP_N, n, nrhs, n, cu(&one), cu(inverses.as<T>()), n, n * n,
                cu(B.data()), n, n * nrhs, cu(&zero), cu(X.data()), n, n * nrhs, count),
            "gemmStridedBatched");
      judge<T>(inv, factors.as<T>(), n, X, nrhs, policy, singular, ctx.main().stream);
    }
    return {Method::BatchedLU, "cuBLAS getrfBatched and getriBatched over the stack, the inverses times B"};
  }
};

}  // namespace

template <Complex T>
const kernels::Batched<T>& complex_batched() {
  return kernels::instance<ComplexBatched<T>>();
}
template const kernels::Batched<std::complex<float>>& complex_batched<std::complex<float>>();
template const kernels::Batched<std::complex<double>>& complex_batched<std::complex<double>>();

}  // namespace linv::cuda
