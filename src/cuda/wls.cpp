// The weighted-least-squares family on the GPU (src/kernels/wls.hpp; the algorithm is src/wls/wls.cpp's):
// C = (A D)(A D)^T formed on one triangle, its Cholesky factorization and solves, in full storage or in
// LAPACK's rectangular full packed format (TRANSR = 'N', UPLO = 'L'), each RFP step being the cuBLAS /
// cuSOLVER call LAPACK's dsfrk, dpftrf and dpftrs make on the format's three blocks.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "cuda/backend.hpp"
#include "cuda/blas.hpp"
#include "cuda/context.hpp"
#include "cuda/kernels.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {

// Where RFP keeps a symmetric n x n matrix's lower triangle: T1, the leading n1 x n1 block's lower
// triangle; S, the n2 x n1 block below it; T2, the trailing n2 x n2 block's lower triangle transposed
// (an upper triangle). Offsets into the array, whose leading dimension is ld.
struct Rfp {
  std::int64_t n1, n2, ld, t1, s, t2;
};

Rfp rfp_layout(std::int64_t n) {
  if (n % 2 == 0) {
    const std::int64_t k = n / 2;
    return {k, k, n + 1, 1, k + 1, 0};
  }
  const std::int64_t n2 = n / 2, n1 = n - n2;
  return {n1, n2, n, 0, n1, n};
}

// C := alpha S S^T + beta C on the `uplo` triangle (C r x r, S r x k): cuBLAS syrk on diagonal blocks of
// kBlock rows and gemm for the rest, which runs nearer the matrix-product peak than syrk on the whole
// triangle (m = 8192, n = 16384 on an H200: 34.0 ms for the whole solve with 2048-row blocks, 37.0 with
// 1024, 37.4 with 512, 36.0 with syrk alone). Only the triangle is written, so it also works on RFP's
// triangles, whose other halves hold the other block.
constexpr std::int64_t kBlock = 2048;

template <Real T>
void syrk_blocked(cublasHandle_t h, Uplo uplo, std::int64_t r, std::int64_t k, T alpha, const T* S, std::int64_t ls,
                  T beta, T* C, std::int64_t ldc) {
  for (std::int64_t j = 0; j < r; j += kBlock) {
    const std::int64_t jb = std::min(kBlock, r - j), rest = r - j - jb;
    T* diagonal = C + j + j * ldc;
    blas::syrk<T>(h, uplo, Op::None, jb, k, alpha, S + j, ls, beta, diagonal, ldc);
    if (uplo == Uplo::Lower)  // the rows below the diagonal block
      blas::gemm<T>(h, Op::None, Op::Transpose, rest, jb, k, alpha, S + j + jb, ls, S + j, ls, beta, diagonal + jb, ldc);
    else  // the columns right of it
      blas::gemm<T>(h, Op::None, Op::Transpose, jb, rest, k, alpha, S + j, ls, S + j + jb, ls, beta,
                    diagonal + jb * ldc, ldc);
  }
}

// S := S L^-T for L n1 x n1 lower (S r x n1), by blocks of kBlock columns: a triangular solve on each
// block, then a product updating the columns right of it (cuBLAS's trsm alone ran at 22 TFLOP/s there).
template <Real T>
void trsm_right_lower_transpose(cublasHandle_t h, std::int64_t r, std::int64_t n1, const T* L, std::int64_t ld_l, T* S,
                                std::int64_t ld_s) {
  for (std::int64_t j = 0; j < n1; j += kBlock) {
    const std::int64_t jb = std::min(kBlock, n1 - j), rest = n1 - j - jb;
    blas::trsm<T>(h, Side::Right, Uplo::Lower, Op::Transpose, Diag::NonUnit, r, jb, T(1), L + j + j * ld_l, ld_l,
                  S + j * ld_s, ld_s);
    blas::gemm<T>(h, Op::None, Op::Transpose, r, rest, jb, T(-1), S + j * ld_s, ld_s, L + (j + jb) + j * ld_l, ld_l,
                  T(1), S + (j + jb) * ld_s, ld_s);
  }
}

template <Real T>
class Wls final : public kernels::Wls<T> {
 public:
  double form(ConstMatrixView<T> A, ConstMatrixView<double> w, MatrixView<T> scaled, MatrixView<T> C,
              Storage storage) const override;
  index cholesky(MatrixView<T> C, index m, Storage storage) const override;
  void solve(ConstMatrixView<T> C, index m, Storage storage, MatrixView<T> B) const override;
};

template <Real T>
double Wls<T>::form(ConstMatrixView<T> A, ConstMatrixView<double> w_view, MatrixView<T> scaled, MatrixView<T> C,
                    Storage storage) const {
  const bool packed = storage == Storage::Packed;
  const double* w = w_view.data();
  const std::int64_t m = A.rows(), n = A.cols(), ls = ld_of(scaled.ld());
  if (m == 0) return 0;
  Context& ctx = context_of(A.device());
  const Lane& lane = ctx.main();
  PhaseProfile profile("wls form");
  profile.begin("scale", lane.stream);
  launch::scale_columns(A.data(), m, n, ld_of(A.ld()), w, scaled.data(), ls, lane.stream);
  profile.end("scale", lane.stream);
  const T* s = scaled.data();
  T* c = C.data();
  profile.begin("rank-n update", lane.stream);
  if (!packed) {
    syrk_blocked<T>(lane.blas, Uplo::Lower, m, n, T(1), s, ls, T(0), c, ld_of(C.ld()));
  } else {
    const Rfp r = rfp_layout(m);
    profile.end("rank-n update", lane.stream);
    profile.begin("T1", lane.stream);
    syrk_blocked<T>(lane.blas, Uplo::Lower, r.n1, n, T(1), s, ls, T(0), c + r.t1, r.ld);
    profile.end("T1", lane.stream);
    // T2 (upper) as the transpose of a lower triangle formed in scratch: 4.8 against 5.4 ms directly
    // (m = 8192, n = 16384, H200), cuBLAS's upper syrk being the slower one
    profile.begin("T2", lane.stream);
    T* work = ctx.scratch_as<T>(Slot::a, static_cast<std::size_t>(r.n2 * r.n2));
    syrk_blocked<T>(lane.blas, Uplo::Lower, r.n2, n, T(1), s + r.n1, ls, T(0), work, r.n2);
    launch::transpose_triangle(work, r.n2, c + r.t2, r.ld, r.n2, /*src_upper=*/false, lane.stream);
    profile.end("T2", lane.stream);
    profile.begin("S", lane.stream);
    blas::gemm<T>(lane.blas, Op::None, Op::Transpose, r.n2, r.n1, n, T(1), s + r.n1, ls, s, ls, T(0), c + r.s, r.ld);
    profile.end("S", lane.stream);
    profile.begin("rank-n update", lane.stream);
  }
  profile.end("rank-n update", lane.stream);
  // ||A D||_F^2, the scale of C (scaled is m x n with leading dimension m)
  T norm = 0;
  check(blas::pick<T>(cublasSnrm2_64, cublasDnrm2_64)(lane.blas, m * n, s, 1, &norm), "nrm2");
  ctx.synchronize();
  profile.report();
  return static_cast<double>(norm) * static_cast<double>(norm);
}

template <Real T>
index Wls<T>::cholesky(MatrixView<T> C, index m, Storage storage) const {
  const bool packed = storage == Storage::Packed;
  if (m == 0) return 0;
  Context& ctx = context_of(C.device());
  const Lane& lane = ctx.main();
  PhaseProfile profile("wls cholesky");
  T* c = C.data();
  if (!packed) {
    profile.begin("potrf", lane.stream);
    const index info = cuda::dense<T>().cholesky_factor(C);
    profile.end("potrf", lane.stream);
    ctx.synchronize();
    profile.report();
    return info;
  }
  const Rfp r = rfp_layout(m);
  profile.begin("potrf T1", lane.stream);
  const auto lower = [&](T* a, std::int64_t n, std::int64_t ld) {  // Cholesky in place: LAPACK's info
    return cuda::dense<T>().cholesky_factor(MatrixView<T>(a, n, n, ld, C.device()));
  };
  if (const index info = lower(c + r.t1, r.n1, r.ld); info > 0) return info;
  profile.end("potrf T1", lane.stream);
  profile.begin("trsm S", lane.stream);
  trsm_right_lower_transpose<T>(lane.blas, r.n2, r.n1, c + r.t1, r.ld, c + r.s, r.ld);
  profile.end("trsm S", lane.stream);
  profile.begin("syrk T2", lane.stream);
  syrk_blocked<T>(lane.blas, Uplo::Upper, r.n2, r.n1, T(-1), c + r.s, r.ld, T(1), c + r.t2, r.ld);
  profile.end("syrk T2", lane.stream);
  // T2 holds its factor transposed (upper); cuSOLVER's upper Cholesky took 5.0 ms at n2 = 4096 on an
  // H200 against 1.9 ms for the lower one on a transposed copy, transposes included.
  profile.begin("potrf T2", lane.stream);
  T* work = ctx.scratch_as<T>(Slot::a, static_cast<std::size_t>(r.n2 * r.n2));
  launch::transpose_triangle(c + r.t2, r.ld, work, r.n2, r.n2, /*src_upper=*/true, lane.stream);
  const index info = lower(work, r.n2, r.n2);
  launch::transpose_triangle(work, r.n2, c + r.t2, r.ld, r.n2, /*src_upper=*/false, lane.stream);
  profile.end("potrf T2", lane.stream);
  ctx.synchronize();
  profile.report();
  return info > 0 ? r.n1 + info : 0;
}

template <Real T>
void Wls<T>::solve(ConstMatrixView<T> C, index m, Storage storage, MatrixView<T> B) const {
  const bool packed = storage == Storage::Packed;
  if (m == 0 || B.cols() == 0) return;
  Context& ctx = context_of(C.device());
  const Lane& lane = ctx.main();
  const std::int64_t k = B.cols(), lb = ld_of(B.ld());
  const T* c = C.data();
  T* b = B.data();
  if (!packed) {
    const cudaDataType type = blas::data_type<T>();
    check(cusolverDnXpotrs(lane.solver, ctx.params(), CUBLAS_FILL_MODE_LOWER, m, k, type, c, ld_of(C.ld()), type, b,
                           lb, ctx.info()),
          "potrs");
  } else {
    const Rfp r = rfp_layout(m);
    T* b2 = b + r.n1;
    // L y = b, then L^T x = y, L = [T1 0; S T2^T]
    blas::trsm<T>(lane.blas, Side::Left, Uplo::Lower, Op::None, Diag::NonUnit, r.n1, k, T(1), c + r.t1, r.ld, b, lb);
    blas::gemm<T>(lane.blas, Op::None, Op::None, r.n2, k, r.n1, T(-1), c + r.s, r.ld, b, lb, T(1), b2, lb);
    blas::trsm<T>(lane.blas, Side::Left, Uplo::Upper, Op::Transpose, Diag::NonUnit, r.n2, k, T(1), c + r.t2, r.ld, b2,
                  lb);
    blas::trsm<T>(lane.blas, Side::Left, Uplo::Upper, Op::None, Diag::NonUnit, r.n2, k, T(1), c + r.t2, r.ld, b2, lb);
    blas::gemm<T>(lane.blas, Op::Transpose, Op::None, r.n1, k, r.n2, T(-1), c + r.s, r.ld, b2, lb, T(1), b, lb);
    blas::trsm<T>(lane.blas, Side::Left, Uplo::Lower, Op::Transpose, Diag::NonUnit, r.n1, k, T(1), c + r.t1, r.ld, b,
                  lb);
  }
  ctx.synchronize();
}

}  // namespace

template <Real T>
const kernels::Wls<T>& wls() { return kernels::instance<Wls<T>>(); }
template const kernels::Wls<float>& wls<float>();
template const kernels::Wls<double>& wls<double>();

}  // namespace linv::cuda
