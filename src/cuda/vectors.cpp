// The CUDA backend's vector family (src/kernels/vectors.hpp): cuBLAS level 1 and linv's element-wise
// kernels. The reductions come back to the host (cuBLAS's host pointer mode), so each is a synchronisation.
#include <cublas_v2.h>

#include <type_traits>

#include "cuda/backend.hpp"
#include "cuda/blas.hpp"
#include "cuda/context.hpp"
#include "cuda/fmri.hpp"
#include "cuda/kernels.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

// The entries of a contiguous view (a vector, or a matrix read as one).
template <Real T>
std::int64_t entries(ConstMatrixView<T> x) {
  if (x.cols() > 1 && x.ld() != x.rows()) throw InvalidArgument("vector kernels need contiguous views");
  return x.rows() * x.cols();
}

template <Real T>
class Vectors final : public kernels::Vectors<T> {
 public:
  void widen(ConstMatrixView<T> src, MatrixView<double> dst) const override {
    if (src.empty()) return;
    Context& ctx = context_of(src.device());
    launch::to_double(src.data(), src.rows(), src.cols(), ld_of(src.ld()), dst.data(), ld_of(dst.ld()),
                      ctx.main().stream);
    ctx.synchronize();
  }
  void scale_rows(ConstMatrixView<double> d, MatrixView<T> X) const override {
    if (X.empty()) return;
    Context& ctx = context_of(X.device());
    launch::scale_rows(X.data(), X.rows(), X.cols(), ld_of(X.ld()), d.data(), ctx.main().stream);
    ctx.synchronize();
  }
  // float32 data is summed in float32 here (cuBLAS); linv's float32 iterations run their vectors in float64.
  double dot(ConstMatrixView<T> x, ConstMatrixView<T> y) const override {
    const std::int64_t n = entries(x);
    if (n == 0) return 0;
    const cublasHandle_t h = context_of(x.device()).main().blas;
    T v = 0;
    check(blas::pick<T>(cublasSdot_64, cublasDdot_64)(h, n, x.data(), 1, y.data(), 1, &v), "dot");
    return static_cast<double>(v);
  }
  double norm2(ConstMatrixView<T> x) const override {
    const std::int64_t n = entries(x);
    if (n == 0) return 0;
    const cublasHandle_t h = context_of(x.device()).main().blas;
    T v = 0;
    check(blas::pick<T>(cublasSnrm2_64, cublasDnrm2_64)(h, n, x.data(), 1, &v), "nrm2");
    return static_cast<double>(v);
  }
  void copy(ConstMatrixView<T> x, MatrixView<T> y) const override {
    if (x.empty()) return;
    Context& ctx = context_of(x.device());
    check(cudaMemcpy2DAsync(y.data(), ld_of(y.ld()) * sizeof(T), x.data(), ld_of(x.ld()) * sizeof(T),
                            x.rows() * sizeof(T), x.cols(), cudaMemcpyDeviceToDevice, ctx.main().stream),
          "cudaMemcpy2D");
  }
  void axpy(T alpha, ConstMatrixView<T> x, MatrixView<T> y) const override {
    const std::int64_t n = entries(x);
    if (n == 0) return;
    const cublasHandle_t h = context_of(x.device()).main().blas;
    check(blas::pick<T>(cublasSaxpy_64, cublasDaxpy_64)(h, n, &alpha, x.data(), 1, y.data(), 1), "axpy");
  }
  void scal(T alpha, MatrixView<T> x) const override {
    const std::int64_t n = entries<T>(x);
    if (n == 0) return;
    const cublasHandle_t h = context_of(x.device()).main().blas;
    check(blas::pick<T>(cublasSscal_64, cublasDscal_64)(h, n, &alpha, x.data(), 1), "scal");
  }
  void synchronize(Device device) const override { context_of(device).synchronize(); }
  void column_norms_squared(ConstMatrixView<T> X, MatrixView<double> out) const override {
    if (X.empty()) return;
    Context& ctx = context_of(X.device());
    fmri_kernels::column_norms<T>(X.data(), X.rows(), X.cols(), ld_of(X.ld()), out.data(), ctx.main().stream);
    ctx.synchronize();
  }
  // cuBLAS's geam with beta = 0: At = 1 A^T + 0 At (At as its own B, which geam allows in place with op N)
  void transpose(ConstMatrixView<T> A, MatrixView<T> At) const override {
    if (A.empty()) return;
    Context& ctx = context_of(A.device());
    const T one = 1, zero = 0;
    check(blas::pick<T>(cublasSgeam_64, cublasDgeam_64)(ctx.main().blas, CUBLAS_OP_T, CUBLAS_OP_N, At.rows(),
                                                        At.cols(), &one, A.data(), A.ld(), &zero, At.data(),
                                                        At.ld(), At.data(), At.ld()),
          "geam (transpose)");
    ctx.synchronize();
  }
  void fill_uniform(MatrixView<T> A, std::uint64_t seed, T lo, T hi) const override {
    if (A.empty()) return;
    Context& ctx = context_of(A.device());
    launch::fill_uniform(A.data(), A.rows(), A.cols(), ld_of(A.ld()), seed, lo, hi, ctx.main().stream);
    ctx.synchronize();
  }
};

}  // namespace

template <Real T>
const kernels::Vectors<T>& vectors() { return kernels::instance<Vectors<T>>(); }
template const kernels::Vectors<float>& vectors<float>();
template const kernels::Vectors<double>& vectors<double>();

}  // namespace linv::cuda
