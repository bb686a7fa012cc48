// The CUDA backend's dense and vector families for complex matrices (complex64 and complex128): cuSOLVER's
// 64-bit API with complex data types, cuBLAS's C and Z routines and the element-wise kernels of complex.cu.
// It runs what the CPU's complex family runs on the GPU, by the libraries' own algorithms: LU with partial
// pivoting, Hermitian Cholesky, the triangular inverse and their condition estimates. The real family's own
// kernels (the few-right-hand-side solves, Gauss-Jordan, the tournament, the butterflies, GETS) are for real
// matrices in this version, as on the CPU (kernels/dense.hpp).
#include <fmt/format.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <complex>
#include <limits>
#include <type_traits>

#include "cuda/backend.hpp"
#include "cuda/dense_host.hpp"
#include "cuda/complex_blas.hpp"
#include "cuda/complex_kernels.hpp"
#include "cuda/context.hpp"
#include "cuda/few_rhs.hpp"
#include "cuda/kernels.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

template <Complex T>
constexpr cudaDataType data_type() {
  return kSingle<T> ? CUDA_C_32F : CUDA_C_64F;
}

// Op::Transpose is the conjugate transpose for complex matrices.
cublasOperation_t op(Op o) { return o == Op::None ? CUBLAS_OP_N : CUBLAS_OP_C; }
cublasFillMode_t fill(Uplo u) { return u == Uplo::Lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }
cublasDiagType_t diag_of(Diag d) { return d == Diag::Unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT; }
cublasSideMode_t side_of(Side s) { return s == Side::Left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT; }

// The entries of a contiguous view (a vector, or a matrix read as one).
template <Complex T>
std::int64_t entries(ConstMatrixView<T> x) {
  if (x.cols() > 1 && x.ld() != x.rows()) throw InvalidArgument("vector kernels need contiguous views");
  return x.rows() * x.cols();
}

[[noreturn]] void real_only(const char* what) {
  throw InvalidArgument(fmt::format("{} is for real matrices in this version; complex ones take LU with partial "
                                    "pivoting, Cholesky and the triangular methods",
                                    what));
}

[[noreturn]] void cpu_only(const char* what, Device device) {
  throw InvalidArgument(fmt::format("{} of complex matrices runs on the CPU only in this version of linv; the matrix "
                                    "is on {}: move it with .to(Device::cpu())",
                                    what, device.name()));
}

template <Complex T>
void queue_trsm(cublasHandle_t h, Side s, Uplo u, Op o, Diag d, std::int64_t m, std::int64_t n, T alpha, const T* A,
                std::int64_t lda, T* B, std::int64_t ldb) {
  if (m == 0 || n == 0) return;
  check(pick<T>(cublasCtrsm_64, cublasZtrsm_64)(h, side_of(s), fill(u), op(o), diag_of(d), m, n, cu(&alpha), cu(A),
                                                lda, cu(B), ldb),
        "trsm");
}

// B := op(A)^-1 B from getrf's factors and 1-based pivots (already on the device as int64).
template <Complex T>
void queue_getrs(Context& ctx, Op o, const T* LU, std::int64_t n, std::int64_t ld, const std::int64_t* d_piv, T* B,
                 std::int64_t nrhs, std::int64_t ldb) {
  if (n == 0 || nrhs == 0) return;
  check(cusolverDnXgetrs(ctx.main().solver, ctx.params(), op(o), n, nrhs, data_type<T>(), cu_mutable(LU), ld, d_piv,
                         data_type<T>(), cu(B), ldb, ctx.info()),
        "getrs");
}

template <Complex T>
void queue_potrs(Context& ctx, const T* L, std::int64_t n, std::int64_t ld, T* B, std::int64_t nrhs,
                 std::int64_t ldb) {
  if (n == 0 || nrhs == 0) return;
  check(cusolverDnXpotrs(ctx.main().solver, ctx.params(), CUBLAS_FILL_MODE_LOWER, n, nrhs, data_type<T>(),
                         cu_mutable(L), ld, data_type<T>(), cu(B), ldb, ctx.info()),
        "potrs");
}

// B := op(A)^-1 B from the LU factors by the few-right-hand-side kernels (src/cuda/few_rhs.hpp), getrs where
// they overflow.
template <Complex T>
void lu_solve_few(Context& ctx, ConstMatrixView<T> LU, const std::vector<int>& pivots, const std::int64_t* perm, T* B,
                  std::int64_t ldb, int k, Op o) {
  cuda::lu_solve_few<T>(ctx, LU, perm, B, ldb, k, o, [&] {
    // getrs's pivots in a buffer of their own: Slot::pivots holds `perm`, which later passes reuse
    std::vector<std::int64_t> ipiv(pivots.begin(), pivots.end());
    DeviceBuffer d_piv(bytes_of(LU.rows(), sizeof(std::int64_t)), ctx.device());
    to_device(d_piv.p, ipiv.data(), ipiv.size() * sizeof(std::int64_t), ctx.main().stream);
    queue_getrs<T>(ctx, o, LU.data(), LU.rows(), ld_of(LU.ld()), d_piv.as<std::int64_t>(), B, k, ldb);
    ctx.synchronize();  // before d_piv is freed
  });
}

// B := A^-1 B for A = L L^H by the few-right-hand-side kernels, potrs where they overflow.
template <Complex T>
void cholesky_solve_few(Context& ctx, ConstMatrixView<T> L, T* B, std::int64_t ldb, int k) {
  cuda::cholesky_solve_few<T>(ctx, L, B, ldb, k,
                              [&] { queue_potrs<T>(ctx, L.data(), L.rows(), ld_of(L.ld()), B, k, ldb); });
}

template <Complex T>
class Dense final : public kernels::Dense<T> {
 public:
  using R = real_t<T>;

  kernels::DensePreferences preferences() const override { return {}; }  // LU, and cuSOLVER's trtri
  bool runs(kernels::Optional) const override { return false; }

  double norm1(ConstMatrixView<T> A) const override { return norm1_of(A, {}); }

  kernels::Magnitude magnitude(ConstMatrixView<T> A) const override {
    if (A.empty()) return {};
    return read_magnitude(context_of(A.device()), A.rows(), [&](unsigned long long* out, cudaStream_t s) {
      complex_launch::magnitude(A.data(), A.rows(), A.cols(), ld_of(A.ld()), out, s);
    });
  }

  Structure detect_structure(ConstMatrixView<T> A) const override {
    const index n = A.rows();
    if (n < 2) return Structure::Diagonal;
    return read_structure(context_of(A.device()), [&](int* flags, cudaStream_t s) {
      complex_launch::structure_flags(A.data(), n, ld_of(A.ld()), flags, s);
    });
  }

  std::optional<std::pair<index, index>> first_asymmetric(ConstMatrixView<T> A) const override {
    // Exactly Hermitian passes at once; anything else is judged with the CPU family's tolerance, n eps max|a|.
    if (detect_structure(A) == Structure::Symmetric) return std::nullopt;
    const index n = A.rows();
    Context& ctx = context_of(A.device());
    const cudaStream_t stream = ctx.main().stream;
    auto* d_max = ctx.scratch_as<double>(Slot::small, 1);
    check(cudaMemsetAsync(d_max, 0, sizeof(double), stream), "cudaMemset");
    complex_launch::max_modulus(A.data(), n, ld_of(A.ld()), /*upper=*/false, d_max, stream);
    double largest = 0;
    to_host(&largest, d_max, sizeof(largest), stream);
    wait(stream);
    const double tol = static_cast<double>(n) * std::numeric_limits<R>::epsilon() * largest;
    return read_first_asymmetric(ctx, n, [&](unsigned long long* out, cudaStream_t s) {
      complex_launch::first_asymmetric(A.data(), n, ld_of(A.ld()), tol, out, s);
    });
  }

  std::vector<T> diagonal(ConstMatrixView<T> A) const override { return diagonal_to_host(A); }
  void zero_triangle(MatrixView<T> A, Uplo which) const override {
    Context& ctx = context_of(A.device());
    complex_launch::zero_triangle(A.data(), A.rows(), ld_of(A.ld()), which == Uplo::Upper, ctx.main().stream);
    ctx.synchronize();
  }
  void set_diagonal(MatrixView<T> A, T value) const override {
    Context& ctx = context_of(A.device());
    complex_launch::set_diagonal(A.data(), std::min(A.rows(), A.cols()), ld_of(A.ld()), value, ctx.main().stream);
    ctx.synchronize();
  }
  void mirror_lower(MatrixView<T> A) const override {
    Context& ctx = context_of(A.device());
    complex_launch::mirror_lower(A.data(), A.rows(), ld_of(A.ld()), ctx.main().stream);
    ctx.synchronize();
  }

  void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta,
            MatrixView<T> C) const override {
    if (C.empty()) return;
    Context& ctx = context_of(C.device());
    const index k = op_a == Op::None ? A.cols() : A.rows();
    check(pick<T>(cublasCgemm_64, cublasZgemm_64)(ctx.main().blas, op(op_a), op(op_b), C.rows(), C.cols(), k,
                                                  cu(&alpha), cu(A.data()), ld_of(A.ld()), cu(B.data()),
                                                  ld_of(B.ld()), cu(&beta), cu(C.data()), ld_of(C.ld())),
          "gemm");
    ctx.synchronize();
  }
  // herk: alpha and beta real (kernels/dense.hpp)
  void syrk(Uplo uplo, Op o, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C) const override {
    if (C.empty()) return;
    Context& ctx = context_of(C.device());
    const index k = o == Op::None ? A.cols() : A.rows();
    const R a = alpha.real(), b = beta.real();
    check(pick<T>(cublasCherk_64, cublasZherk_64)(ctx.main().blas, fill(uplo), op(o), C.rows(), k, &a, cu(A.data()),
                                                  ld_of(A.ld()), &b, cu(C.data()), ld_of(C.ld())),
          "herk");
    ctx.synchronize();
  }
  void trsm(Side s, Uplo uplo, Op o, Diag d, T alpha, ConstMatrixView<T> A, MatrixView<T> B) const override {
    if (B.empty()) return;
    Context& ctx = context_of(A.device());
    queue_trsm<T>(ctx.main().blas, s, uplo, o, d, B.rows(), B.cols(), alpha, A.data(), ld_of(A.ld()), B.data(),
                  ld_of(B.ld()));
    ctx.synchronize();
  }

  kernels::LuOutcome lu_factor(MatrixView<T> A, std::vector<int>& pivots, Pivoting pivoting) const override {
    if (pivoting != Pivoting::Partial) real_only("tournament and randomized pivoting");
    const std::int64_t n = A.rows(), ld = ld_of(A.ld());
    pivots.assign(static_cast<std::size_t>(n), 0);
    if (n == 0) return {};
    Context& ctx = context_of(A.device());
    const Lane& lane = ctx.main();
    auto* d_piv = ctx.scratch_as<std::int64_t>(Slot::pivots, n);
    auto* d_max = ctx.scratch_as<double>(Slot::small, 2);  // max|A|, max|U|
    check(cudaMemsetAsync(d_max, 0, 2 * sizeof(double), lane.stream), "cudaMemset");
    complex_launch::max_modulus(A.data(), n, ld, /*upper=*/false, d_max, lane.stream);
    std::size_t dev_bytes = 0, host_bytes = 0;
    check(cusolverDnXgetrf_bufferSize(lane.solver, ctx.params(), n, n, data_type<T>(), cu(A.data()), ld,
                                      data_type<T>(), &dev_bytes, &host_bytes),
          "getrf workspace query");
    void* dev_work = ctx.scratch(Slot::solver, dev_bytes);
    void* host_work = ctx.host_scratch(host_bytes);
    check(cusolverDnXgetrf(lane.solver, ctx.params(), n, n, data_type<T>(), cu(A.data()), ld, d_piv, data_type<T>(),
                           dev_work, dev_bytes, host_work, host_bytes, ctx.info()),
          "getrf");
    complex_launch::max_modulus(A.data(), n, ld, /*upper=*/true, d_max + 1, lane.stream);
    std::vector<std::int64_t> p(static_cast<std::size_t>(n));
    double largest[2];
    to_host(p.data(), d_piv, p.size() * sizeof(std::int64_t), lane.stream);
    to_host(largest, d_max, sizeof(largest), lane.stream);
    const int info = read_back(ctx.info(), lane.stream);
    if (info < 0) throw DeviceError(fmt::format("getrf: argument {} was rejected", -info));
    for (std::size_t i = 0; i < p.size(); ++i) pivots[i] = static_cast<int>(p[i]);
    return {info, largest[0] > 0 ? largest[1] / largest[0] : 0.0};
  }
  void lu_solve(ConstMatrixView<T> LU, const std::vector<int>& pivots, MatrixView<T> B, Op o) const override {
    if (B.empty()) return;
    Context& ctx = context_of(LU.device());
    if (B.cols() <= launch::few_rhs_limit<T>()) {
      lu_solve_few(ctx, LU, pivots, upload_permutation(ctx, pivots), B.data(), ld_of(B.ld()),
                   static_cast<int>(B.cols()), o);
    } else {  // enough columns for cuSOLVER's trsm to run at its product rate
      const std::int64_t* d_piv = upload_pivots(ctx, pivots, /*zero_based=*/false);
      queue_getrs<T>(ctx, o, LU.data(), LU.rows(), ld_of(LU.ld()), d_piv, B.data(), B.cols(), ld_of(B.ld()));
    }
    ctx.synchronize();
  }
  void butterflies(ConstMatrixView<T>, Side, Op, MatrixView<T>) const override {
    real_only("the random butterfly transform");
  }
  // A^-1 as getrs's solution of A X = I (2 n^3 flops against getri's 4/3 n^3: cuSOLVER has no complex getri).
  void lu_inverse(MatrixView<T> LU, const std::vector<int>& pivots) const override {
    const std::int64_t n = LU.rows();
    if (n == 0) return;
    Context& ctx = context_of(LU.device());
    const cudaStream_t s = ctx.main().stream;
    const std::int64_t* d_piv = upload_pivots(ctx, pivots, /*zero_based=*/false);
    DeviceBuffer X(bytes_of(n * n, sizeof(T)), LU.device().index());
    complex_launch::fill_identity(X.as<T>(), n, n, s);
    queue_getrs<T>(ctx, Op::None, LU.data(), n, ld_of(LU.ld()), d_piv, X.as<T>(), n, n);
    check(cudaMemcpy2DAsync(LU.data(), ld_of(LU.ld()) * sizeof(T), X.as<T>(), n * sizeof(T), n * sizeof(T), n,
                            cudaMemcpyDeviceToDevice, s),
          "cudaMemcpy2D");
    ctx.synchronize();
  }
  double lu_rcond(ConstMatrixView<T> LU, const std::vector<int>& pivots, double anorm) const override {
    const std::int64_t n = LU.rows();
    if (n == 0) return 1.0;
    Context& ctx = context_of(LU.device());
    const std::int64_t* perm = upload_permutation(ctx, pivots);
    return estimate_rcond<T>(ctx, n, anorm,
                             [&](T* x, int t, Op o) { lu_solve_few(ctx, LU, pivots, perm, x, n, t, o); });
  }

  index cholesky_factor(MatrixView<T> A) const override {
    const std::int64_t n = A.rows();
    if (n == 0) return 0;
    Context& ctx = context_of(A.device());
    const Lane& lane = ctx.main();
    std::size_t dev_bytes = 0, host_bytes = 0;
    check(cusolverDnXpotrf_bufferSize(lane.solver, ctx.params(), CUBLAS_FILL_MODE_LOWER, n, data_type<T>(),
                                      cu(A.data()), ld_of(A.ld()), data_type<T>(), &dev_bytes, &host_bytes),
          "potrf workspace query");
    void* dev_work = ctx.scratch(Slot::solver, dev_bytes);
    void* host_work = ctx.host_scratch(host_bytes);
    check(cusolverDnXpotrf(lane.solver, ctx.params(), CUBLAS_FILL_MODE_LOWER, n, data_type<T>(), cu(A.data()),
                           ld_of(A.ld()), data_type<T>(), dev_work, dev_bytes, host_work, host_bytes, ctx.info()),
          "potrf");
    const int info = read_back(ctx.info(), lane.stream);
    if (info < 0) throw DeviceError(fmt::format("potrf: argument {} was rejected", -info));
    return info;
  }
  void cholesky_solve(ConstMatrixView<T> L, MatrixView<T> B) const override {
    if (B.empty()) return;
    Context& ctx = context_of(L.device());
    if (B.cols() <= launch::few_rhs_limit<T>())
      cholesky_solve_few(ctx, L, B.data(), ld_of(B.ld()), static_cast<int>(B.cols()));
    else
      queue_potrs<T>(ctx, L.data(), L.rows(), ld_of(L.ld()), B.data(), B.cols(), ld_of(B.ld()));
    ctx.synchronize();
  }
  void cholesky_inverse(MatrixView<T> L, TriangularInverse how) const override {
    if (how != TriangularInverse::Lapack) real_only("elimination on the triangle (GETS)");
    const std::int64_t n = L.rows();
    if (n == 0) return;
    Context& ctx = context_of(L.device());
    const Lane& lane = ctx.main();
    const auto ld = static_cast<int>(ld_of(L.ld()));
    if (n > INT_MAX || ld_of(L.ld()) > INT_MAX)
      throw InvalidArgument(fmt::format("Cholesky inverse: order {} is beyond cuSOLVER's 32-bit potri", n));
    const int ni = static_cast<int>(n);
    int work_size = 0;
    check(pick<T>(cusolverDnCpotri_bufferSize, cusolverDnZpotri_bufferSize)(lane.solver, CUBLAS_FILL_MODE_LOWER, ni,
                                                                            cu(L.data()), ld, &work_size),
          "potri workspace query");
    auto* work = ctx.scratch_as<Cu<T>>(Slot::solver, static_cast<std::size_t>(std::max(work_size, 1)));
    check(pick<T>(cusolverDnCpotri, cusolverDnZpotri)(lane.solver, CUBLAS_FILL_MODE_LOWER, ni, cu(L.data()), ld, work,
                                                      work_size, ctx.info()),
          "potri");
    const int info = read_back(ctx.info(), lane.stream);
    if (info != 0) throw DeviceError(fmt::format("potri: info {} after a successful potrf", info));
    mirror_lower(L);
  }
  double cholesky_rcond(ConstMatrixView<T> L, double anorm) const override {
    const std::int64_t n = L.rows();
    Context& ctx = context_of(L.device());
    // A is Hermitian: A^-H = A^-1, so both products are one solve
    return estimate_rcond<T>(ctx, n, anorm, [&](T* x, int t, Op) { cholesky_solve_few(ctx, L, x, n, t); });
  }

  void triangular_inverse(MatrixView<T> A, Uplo uplo, TriangularInverse how, Diag d) const override {
    if (how != TriangularInverse::Lapack) real_only("elimination on the triangle (GETS)");
    const std::int64_t n = A.rows();
    if (n == 0) return;
    Context& ctx = context_of(A.device());
    const Lane& lane = ctx.main();
    std::size_t dev_bytes = 0, host_bytes = 0;
    check(cusolverDnXtrtri_bufferSize(lane.solver, fill(uplo), diag_of(d), n, data_type<T>(), cu(A.data()),
                                      ld_of(A.ld()), &dev_bytes, &host_bytes),
          "trtri workspace query");
    void* dev_work = ctx.scratch(Slot::solver, dev_bytes);
    void* host_work = ctx.host_scratch(host_bytes);
    check(cusolverDnXtrtri(lane.solver, fill(uplo), diag_of(d), n, data_type<T>(), cu(A.data()), ld_of(A.ld()),
                           dev_work, dev_bytes, host_work, host_bytes, ctx.info()),
          "trtri");
    const int info = read_back(ctx.info(), lane.stream);
    if (info != 0) throw DeviceError(fmt::format("trtri: info {} on a triangle the caller checked", info));
  }
  double triangular_rcond(ConstMatrixView<T> A, Uplo uplo, Diag d) const override {
    const std::int64_t n = A.rows();
    if (n == 0) return 1.0;
    Context& ctx = context_of(A.device());
    // ||A||_1 of the triangle alone: the other triangle may hold anything.
    const double anorm =
        norm1_of(A, {uplo == Uplo::Lower ? launch::Part::Lower : launch::Part::Upper, d == Diag::Unit});
    return estimate_rcond<T>(ctx, n, anorm, [&](T* x, int t, Op o) {
      few_rhs_or_substitution<T>(
          ctx, x, n, n, t,
          [&] {
            launch::triangular_solve_few<T>(A.data(), n, ld_of(A.ld()), uplo == Uplo::Lower, o == Op::Transpose,
                                            d == Diag::Unit, x, n, nullptr, x, n, t,
                                            few_rhs_scratch<T>(ctx, n).sync, ctx.main().stream);
          },
          [&] { queue_trsm<T>(ctx.main().blas, Side::Left, uplo, o, d, n, t, T(1), A.data(), ld_of(A.ld()), x, n); });
    });
  }

  index gauss_jordan_inverse(MatrixView<T>) const override { real_only("Gauss-Jordan elimination"); }
  kernels::IterationOutcome gauss_seidel(ConstMatrixView<T>, ConstMatrixView<T>, MatrixView<T>, double,
                                         int) const override {
    real_only("Gauss-Seidel");
  }
  index qr_solve(MatrixView<T> A, MatrixView<T>) const override { cpu_only("the QR solve", A.device()); }
  index least_squares(MatrixView<T> A, MatrixView<T>, double) const override {
    cpu_only("least squares (lstsq)", A.device());
  }
  int svd(MatrixView<T> A, R*, MatrixView<T>, MatrixView<T>) const override {
    cpu_only("the SVD (pinv)", A.device());
  }
  int largest_eigenpair(MatrixView<T>, T&, T*) const override { real_only("the largest eigenpair"); }
  int orthonormalize(MatrixView<T>) const override { real_only("orthonormalization"); }

 private:
  static double norm1_of(ConstMatrixView<T> A, launch::Part part) {
    if (A.empty()) return 0;
    Context& ctx = context_of(A.device());
    auto* d = ctx.scratch_as<double>(Slot::small, 1);
    const cudaStream_t s = ctx.main().stream;
    check(cudaMemsetAsync(d, 0, sizeof(double), s), "cudaMemset");
    complex_launch::norm1(A.data(), A.rows(), A.cols(), ld_of(A.ld()), d, s, part);
    return read_back(d, s);
  }
};

template <Complex T>
class Vectors final : public kernels::Vectors<T> {
 public:
  using R = real_t<T>;

  void widen(ConstMatrixView<T> src, MatrixView<wide_t<T>> dst) const override {
    if (src.empty()) return;
    Context& ctx = context_of(src.device());
    complex_launch::widen(src.data(), src.rows(), src.cols(), ld_of(src.ld()), dst.data(), ld_of(dst.ld()),
                          ctx.main().stream);
    ctx.synchronize();
  }
  void scale_rows(ConstMatrixView<double> d, MatrixView<T> X) const override {
    if (X.empty()) return;
    Context& ctx = context_of(X.device());
    complex_launch::scale_rows(X.data(), X.rows(), X.cols(), ld_of(X.ld()), d.data(), ctx.main().stream);
    ctx.synchronize();
  }
  // Re(x^H y), as the CPU family's
  double dot(ConstMatrixView<T> x, ConstMatrixView<T> y) const override {
    const std::int64_t n = entries(x);
    if (n == 0) return 0;
    const cublasHandle_t h = context_of(x.device()).main().blas;
    T v = 0;
    check(pick<T>(cublasCdotc_64, cublasZdotc_64)(h, n, cu(x.data()), 1, cu(y.data()), 1, cu(&v)), "dotc");
    return static_cast<double>(v.real());
  }
  double norm2(ConstMatrixView<T> x) const override {
    const std::int64_t n = entries(x);
    if (n == 0) return 0;
    const cublasHandle_t h = context_of(x.device()).main().blas;
    R v = 0;
    check(pick<T>(cublasScnrm2_64, cublasDznrm2_64)(h, n, cu(x.data()), 1, &v), "nrm2");
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
    check(pick<T>(cublasCaxpy_64, cublasZaxpy_64)(h, n, cu(&alpha), cu(x.data()), 1, cu(y.data()), 1), "axpy");
  }
  void scal(T alpha, MatrixView<T> x) const override {
    const std::int64_t n = entries<T>(x);
    if (n == 0) return;
    const cublasHandle_t h = context_of(x.device()).main().blas;
    check(pick<T>(cublasCscal_64, cublasZscal_64)(h, n, cu(&alpha), cu(x.data()), 1), "scal");
  }
  void synchronize(Device device) const override { context_of(device).synchronize(); }
  void column_norms_squared(ConstMatrixView<T> X, MatrixView<double> out) const override {
    if (X.empty()) return;
    Context& ctx = context_of(X.device());
    complex_launch::column_norms_squared(X.data(), X.rows(), X.cols(), ld_of(X.ld()), out.data(), ctx.main().stream);
    ctx.synchronize();
  }
  // geam with beta = 0: At = 1 A^T + 0 At (a plain transpose, as the CPU family's)
  void transpose(ConstMatrixView<T> A, MatrixView<T> At) const override {
    if (A.empty()) return;
    Context& ctx = context_of(A.device());
    const T one = 1, zero = 0;
    check(pick<T>(cublasCgeam_64, cublasZgeam_64)(ctx.main().blas, CUBLAS_OP_T, CUBLAS_OP_N, At.rows(), At.cols(),
                                                  cu(&one), cu(A.data()), ld_of(A.ld()), cu(&zero), cu(At.data()),
                                                  ld_of(At.ld()), cu(At.data()), ld_of(At.ld())),
          "geam (transpose)");
    ctx.synchronize();
  }
  void fill_uniform(MatrixView<T> A, std::uint64_t seed, T lo, T hi) const override {
    if (A.empty()) return;
    Context& ctx = context_of(A.device());
    complex_launch::fill_uniform(A.data(), A.rows(), A.cols(), ld_of(A.ld()), seed, lo, hi, ctx.main().stream);
    ctx.synchronize();
  }
};

}  // namespace

template <Complex T>
const kernels::Dense<T>& complex_dense() { return kernels::instance<Dense<T>>(); }
template const kernels::Dense<std::complex<float>>& complex_dense<std::complex<float>>();
template const kernels::Dense<std::complex<double>>& complex_dense<std::complex<double>>();

template <Complex T>
const kernels::Vectors<T>& complex_vectors() { return kernels::instance<Vectors<T>>(); }
template const kernels::Vectors<std::complex<float>>& complex_vectors<std::complex<float>>();
template const kernels::Vectors<std::complex<double>>& complex_vectors<std::complex<double>>();

}  // namespace linv::cuda
