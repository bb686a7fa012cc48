// BLAS and LAPACK on host matrices: OpenBLAS and LAPACK through LAPACKE, column-major throughout.
#include <complex>
// LAPACKE's complex arguments as std::complex (its C default, float _Complex, is not C++).
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <cblas.h>
#include <lapacke.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/lapack.hpp"
#include "linv/errors.hpp"

namespace linv::cpu::lapack {
namespace {

template <Real T>
constexpr bool is_f32 = std::is_same_v<T, float>;

// The single- or double-precision routine of a BLAS/LAPACK pair, for T.
template <Real T, class F, class D>
constexpr auto pick(F single, D twin) {
  if constexpr (is_f32<T>)
    return single;
  else
    return twin;
}
// The s, d, c or z routine of a BLAS/LAPACK quadruple, for T.
template <Scalar T, class S, class D, class C, class Z>
constexpr auto pick(S s, D d, C c, Z z) {
  if constexpr (std::is_same_v<T, float>) return s;
  else if constexpr (std::is_same_v<T, double>) return d;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return c;
  else return z;
}

// Op::Transpose is the conjugate transpose for complex T (what every algorithm of linv means by it).
template <Scalar T>
CBLAS_TRANSPOSE blas_op(Op op) {
  if (op == Op::None) return CblasNoTrans;
  return Complex<T> ? CblasConjTrans : CblasTrans;
}
CBLAS_UPLO blas_uplo(Uplo u) { return u == Uplo::Lower ? CblasLower : CblasUpper; }
CBLAS_DIAG blas_diag(Diag d) { return d == Diag::Unit ? CblasUnit : CblasNonUnit; }
CBLAS_SIDE blas_side(Side s) { return s == Side::Left ? CblasLeft : CblasRight; }
char lapack_uplo(Uplo u) { return u == Uplo::Lower ? 'L' : 'U'; }
char lapack_diag(Diag d) { return d == Diag::Unit ? 'U' : 'N'; }
template <Scalar T>
char lapack_op(Op op) {
  if (op == Op::None) return 'N';
  return Complex<T> ? 'C' : 'T';
}

int ld(index v) { return static_cast<int>(std::max<index>(v, 1)); }

// LAPACKE checks the matrices it is given for NaN and reports one as an argument error. In linv a NaN
// reaching LAPACK is a numerical outcome, not a bug: factors of a badly scaled matrix that overflowed, which
// linv reports itself (a zero rcond, an inverse that is not finite), and the routines that could loop on
// one (SVD, eigenpairs) refuse non-finite input first. So the check is off, process-wide (LAPACKE has no
// other switch), before linv's first call.
const bool lapacke_nan_check_off = [] {
  LAPACKE_set_nancheck(0);
  return true;
}();

// LAPACKE returns a negative info for argument errors (a bug in linv, never the user's input) and
// LAPACK_WORK_MEMORY_ERROR when its workspace allocation fails.
int checked(lapack_int info, const char* routine) {
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR) throw std::bad_alloc();
  if (info < 0) throw std::logic_error(fmt::format("internal error: LAPACK {} rejected argument {}", routine, -info));
  return info;
}

// LAPACKE refuses NaN as an argument error, and OpenBLAS's SVD can loop without end on Inf (its
// bidiagonal QR iteration, seen on a 3 x 3 Gram matrix of data near float64's range): a matrix that is
// not finite, the trace of an overflow in an earlier step, is a numerical failure reported before LAPACK
// sees it.
// The first entry that is not finite, column by column, among all of A or only its triangle `part`.
template <Scalar T>
std::optional<std::pair<index, index>> first_non_finite(ConstMatrixView<T> A, std::optional<Uplo> part = {}) {
  for (index j = 0; j < A.cols(); ++j) {
    const index first = part == Uplo::Lower ? j : 0, last = part == Uplo::Upper ? std::min(j + 1, A.rows()) : A.rows();
    for (index i = first; i < last; ++i)
      if (!is_finite(A(i, j))) return std::pair{i, j};
  }
  return std::nullopt;
}

template <Scalar T>
void refuse_non_finite(ConstMatrixView<T> A, const char* routine, std::optional<Uplo> part = {}) {
  if (const auto at = first_non_finite(A, part))
    throw NumericalError(fmt::format("{}: the matrix holds {} at row {}, column {}: a value overflowed before it (is "
                                     "the data's scale near the end of the floating-point range?)",
                                     routine, std::isnan(std::abs(A(at->first, at->second))) ? "NaN" : "Inf", at->first + 1,
                                     at->second + 1));
}

}  // namespace

int blas_dim(index n, const char* what) {
  if (n > std::numeric_limits<int>::max())
    throw InvalidArgument(fmt::format("{}: dimension {} exceeds the 32-bit range of the BLAS/LAPACK in use", what, n));
  return static_cast<int>(n);
}

template <Scalar T>
void gemm(Op op_a, Op op_b, T alpha, ConstMatrixView<T> A, ConstMatrixView<T> B, T beta, MatrixView<T> C) {
  const index m = C.rows(), n = C.cols();
  const index k = op_a == Op::None ? A.cols() : A.rows();
  if (m == 0 || n == 0) return;
  auto f = [](index v) { return blas_dim(v, "gemm"); };
  if constexpr (Complex<T>)  // complex BLAS takes its scalars by address
    pick<T>(cblas_sgemm, cblas_dgemm, cblas_cgemm, cblas_zgemm)(
        CblasColMajor, blas_op<T>(op_a), blas_op<T>(op_b), f(m), f(n), f(k), &alpha, A.data(), ld(A.ld()), B.data(),
        ld(B.ld()), &beta, C.data(), ld(C.ld()));
  else
    pick<T>(cblas_sgemm, cblas_dgemm)(CblasColMajor, blas_op<T>(op_a), blas_op<T>(op_b), f(m), f(n), f(k), alpha,
                                      A.data(), ld(A.ld()), B.data(), ld(B.ld()), beta, C.data(), ld(C.ld()));
}

template <Scalar T>
void syrk(Uplo uplo, Op op, T alpha, ConstMatrixView<T> A, T beta, MatrixView<T> C) {
  const index n = C.rows();
  const index k = op == Op::None ? A.cols() : A.rows();
  if (n == 0) return;
  if constexpr (Complex<T>) {
    if (alpha.imag() != 0 || beta.imag() != 0) throw std::logic_error("internal error: herk takes real alpha and beta");
    pick<T>(cblas_ssyrk, cblas_dsyrk, cblas_cherk, cblas_zherk)(CblasColMajor, blas_uplo(uplo), blas_op<T>(op),
                                                               blas_dim(n, "herk"), blas_dim(k, "herk"), alpha.real(),
                                                               A.data(), ld(A.ld()), beta.real(), C.data(), ld(C.ld()));
  } else {
    pick<T>(cblas_ssyrk, cblas_dsyrk)(CblasColMajor, blas_uplo(uplo), blas_op<T>(op), blas_dim(n, "syrk"),
                                      blas_dim(k, "syrk"), alpha, A.data(), ld(A.ld()), beta, C.data(), ld(C.ld()));
  }
}

template <Scalar T>
void trsm(Side side, Uplo uplo, Op op, Diag diag, T alpha, ConstMatrixView<T> A, MatrixView<T> B) {
  if (B.empty()) return;
  const int m = blas_dim(B.rows(), "trsm"), n = blas_dim(B.cols(), "trsm");
  if constexpr (Complex<T>)
    pick<T>(cblas_strsm, cblas_dtrsm, cblas_ctrsm, cblas_ztrsm)(CblasColMajor, blas_side(side), blas_uplo(uplo),
                                                               blas_op<T>(op), blas_diag(diag), m, n, &alpha, A.data(),
                                                               ld(A.ld()), B.data(), ld(B.ld()));
  else
    pick<T>(cblas_strsm, cblas_dtrsm)(CblasColMajor, blas_side(side), blas_uplo(uplo), blas_op<T>(op), blas_diag(diag),
                                      m, n, alpha, A.data(), ld(A.ld()), B.data(), ld(B.ld()));
}

template <Real T>
void trmm(Side side, Uplo uplo, Op op, Diag diag, T alpha, ConstMatrixView<T> A, MatrixView<T> B) {
  if (B.empty()) return;
  const int m = blas_dim(B.rows(), "trmm"), n = blas_dim(B.cols(), "trmm");
  pick<T>(cblas_strmm, cblas_dtrmm)(CblasColMajor, blas_side(side), blas_uplo(uplo), blas_op<T>(op), blas_diag(diag), m, n,
                                    alpha, A.data(), ld(A.ld()), B.data(), ld(B.ld()));
}

template <Real T>
void ger(T alpha, const T* x, const T* y, index incy, MatrixView<T> A) {
  if (A.empty()) return;
  const int m = blas_dim(A.rows(), "ger"), n = blas_dim(A.cols(), "ger");
  pick<T>(cblas_sger, cblas_dger)(CblasColMajor, m, n, alpha, x, 1, y, static_cast<int>(incy), A.data(), ld(A.ld()));
}

template <Scalar T>
int getrf(MatrixView<T> A, int* ipiv) {
  if (A.empty()) return 0;
  const int m = blas_dim(A.rows(), "getrf"), n = blas_dim(A.cols(), "getrf");
  return checked(pick<T>(LAPACKE_sgetrf, LAPACKE_dgetrf, LAPACKE_cgetrf, LAPACKE_zgetrf)(LAPACK_COL_MAJOR, m, n, A.data(), ld(A.ld()), ipiv), "getrf");
}

int mixed_solve(ConstMatrixView<std::complex<double>> A, ConstMatrixView<std::complex<double>> B,
                MatrixView<std::complex<double>> X, bool cholesky, int& iter) {
  using C = std::complex<double>;
  const int n = blas_dim(A.rows(), "zcgesv"), k = blas_dim(B.cols(), "zcgesv");
  iter = 0;
  if (n == 0 || k == 0) return 0;
  // zcgesv and zcposv leave A unchanged only where refinement succeeds, and take B unconst
  Matrix<C> a = Matrix<C>::copy_of(A), b = Matrix<C>::copy_of(B);
  lapack_int steps = 0, info = 0;
  if (cholesky) {
    info = LAPACKE_zcposv(LAPACK_COL_MAJOR, 'L', n, k, a.data(), ld(a.ld()), b.data(), ld(b.ld()), X.data(), ld(X.ld()),
                          &steps);
  } else {
    std::vector<lapack_int> pivots(static_cast<std::size_t>(n));
    info = LAPACKE_zcgesv(LAPACK_COL_MAJOR, n, k, a.data(), ld(a.ld()), pivots.data(), b.data(), ld(b.ld()), X.data(),
                          ld(X.ld()), &steps);
  }
  iter = static_cast<int>(steps);
  return checked(info, cholesky ? "zcposv" : "zcgesv");
}

template <Scalar T>
int getri(MatrixView<T> A, const int* ipiv) {
  if (A.empty()) return 0;
  const int n = blas_dim(A.rows(), "getri");
  return checked(pick<T>(LAPACKE_sgetri, LAPACKE_dgetri, LAPACKE_cgetri, LAPACKE_zgetri)(LAPACK_COL_MAJOR, n, A.data(), ld(A.ld()), ipiv), "getri");
}

template <Scalar T>
int getrs(Op op, ConstMatrixView<T> LU, const int* ipiv, MatrixView<T> B) {
  if (B.empty()) return 0;
  const int n = blas_dim(LU.rows(), "getrs"), nrhs = blas_dim(B.cols(), "getrs");
  return checked(pick<T>(LAPACKE_sgetrs, LAPACKE_dgetrs, LAPACKE_cgetrs, LAPACKE_zgetrs)(LAPACK_COL_MAJOR, lapack_op<T>(op), n, nrhs, LU.data(),
                                                         ld(LU.ld()), ipiv, B.data(), ld(B.ld())),
                 "getrs");
}

template <Scalar T>
double gecon(ConstMatrixView<T> LU, double anorm) {
  if (LU.empty()) return 1.0;
  // Factors that overflowed are singular to working precision; LAPACKE would refuse them as an argument error.
  if (first_non_finite(LU)) return 0;
  const int n = blas_dim(LU.rows(), "gecon");
  real_t<T> rcond = 0;
  checked(pick<T>(LAPACKE_sgecon, LAPACKE_dgecon, LAPACKE_cgecon, LAPACKE_zgecon)(
              LAPACK_COL_MAJOR, '1', n, LU.data(), ld(LU.ld()), static_cast<real_t<T>>(anorm), &rcond),
          "gecon");
  return rcond;
}

template <Scalar T>
int potrf(Uplo uplo, MatrixView<T> A) {
  if (A.empty()) return 0;
  const int n = blas_dim(A.rows(), "potrf");
  return checked(pick<T>(LAPACKE_spotrf, LAPACKE_dpotrf, LAPACKE_cpotrf, LAPACKE_zpotrf)(LAPACK_COL_MAJOR, lapack_uplo(uplo), n, A.data(), ld(A.ld())),
                 "potrf");
}

template <Scalar T>
int potrs(Uplo uplo, ConstMatrixView<T> L, MatrixView<T> B) {
  if (B.empty()) return 0;
  const int n = blas_dim(L.rows(), "potrs"), nrhs = blas_dim(B.cols(), "potrs");
  return checked(pick<T>(LAPACKE_spotrs, LAPACKE_dpotrs, LAPACKE_cpotrs, LAPACKE_zpotrs)(LAPACK_COL_MAJOR, lapack_uplo(uplo), n, nrhs, L.data(),
                                                         ld(L.ld()), B.data(), ld(B.ld())),
                 "potrs");
}

template <Scalar T>
int potri(Uplo uplo, MatrixView<T> A) {
  if (A.empty()) return 0;
  const int n = blas_dim(A.rows(), "potri");
  return checked(pick<T>(LAPACKE_spotri, LAPACKE_dpotri, LAPACKE_cpotri, LAPACKE_zpotri)(LAPACK_COL_MAJOR, lapack_uplo(uplo), n, A.data(), ld(A.ld())),
                 "potri");
}

template <Scalar T>
double pocon(Uplo uplo, ConstMatrixView<T> L, double anorm) {
  if (L.empty()) return 1.0;
  if (first_non_finite(L, uplo)) return 0;  // as gecon
  const int n = blas_dim(L.rows(), "pocon");
  real_t<T> rcond = 0;
  checked(pick<T>(LAPACKE_spocon, LAPACKE_dpocon, LAPACKE_cpocon, LAPACKE_zpocon)(
              LAPACK_COL_MAJOR, lapack_uplo(uplo), n, L.data(), ld(L.ld()), static_cast<real_t<T>>(anorm), &rcond),
          "pocon");
  return rcond;
}

template <Real T>
int lauum(Uplo uplo, MatrixView<T> A) {
  if (A.empty()) return 0;
  const int n = blas_dim(A.rows(), "lauum");
  return checked(pick<T>(LAPACKE_slauum, LAPACKE_dlauum)(LAPACK_COL_MAJOR, lapack_uplo(uplo), n, A.data(), ld(A.ld())),
                 "lauum");
}

template <Scalar T>
int trtri(Uplo uplo, Diag diag, MatrixView<T> A) {
  if (A.empty()) return 0;
  const int n = blas_dim(A.rows(), "trtri");
  return checked(pick<T>(LAPACKE_strtri, LAPACKE_dtrtri, LAPACKE_ctrtri, LAPACKE_ztrtri)(LAPACK_COL_MAJOR, lapack_uplo(uplo), lapack_diag(diag), n,
                                                         A.data(), ld(A.ld())),
                 "trtri");
}

template <Scalar T>
double trcon(Uplo uplo, Diag diag, ConstMatrixView<T> A) {
  if (A.empty()) return 1.0;
  if (first_non_finite(A, uplo)) return 0;  // as gecon
  const int n = blas_dim(A.rows(), "trcon");
  real_t<T> rcond = 0;
  checked(pick<T>(LAPACKE_strcon, LAPACKE_dtrcon, LAPACKE_ctrcon, LAPACKE_ztrcon)(LAPACK_COL_MAJOR, '1', lapack_uplo(uplo), lapack_diag(diag), n,
                                                  A.data(), ld(A.ld()), &rcond),
          "trcon");
  return rcond;
}

template <Scalar T>
index gelsy(MatrixView<T> A, MatrixView<T> B, double rcond) {
  const int m = blas_dim(A.rows(), "gelsy"), n = blas_dim(A.cols(), "gelsy");
  const int nrhs = blas_dim(B.cols(), "gelsy");
  if (m == 0 || n == 0 || nrhs == 0) return 0;
  std::vector<lapack_int> jpvt(static_cast<std::size_t>(n), 0);  // 0: every column is free to move
  lapack_int rank = 0;
  checked(pick<T>(LAPACKE_sgelsy, LAPACKE_dgelsy, LAPACKE_cgelsy, LAPACKE_zgelsy)(LAPACK_COL_MAJOR, m, n, nrhs, A.data(), ld(A.ld()), B.data(),
                                                  ld(B.ld()), jpvt.data(), static_cast<real_t<T>>(rcond), &rank),
          "gelsy");
  return rank;
}

template <Scalar T>
index qr_solve(MatrixView<T> A, MatrixView<T> B) {
  const int n = blas_dim(A.rows(), "qr_solve"), nrhs = blas_dim(B.cols(), "qr_solve");
  if (n == 0) return 0;
  std::vector<T> tau(static_cast<std::size_t>(n));
  checked(pick<T>(LAPACKE_sgeqrf, LAPACKE_dgeqrf, LAPACKE_cgeqrf, LAPACKE_zgeqrf)(LAPACK_COL_MAJOR, n, n, A.data(),
                                                                                 ld(A.ld()), tau.data()),
          "geqrf");
  for (index i = 0; i < n; ++i)
    if (A(i, i) == T(0)) return i + 1;
  if (nrhs == 0) return 0;
  // B := Q^H B (unmqr for complex: ormqr's transpose is unmqr's conjugate transpose)
  checked(pick<T>(LAPACKE_sormqr, LAPACKE_dormqr, LAPACKE_cunmqr, LAPACKE_zunmqr)(
              LAPACK_COL_MAJOR, 'L', lapack_op<T>(Op::Transpose), n, nrhs, n, A.data(), ld(A.ld()), tau.data(),
              B.data(), ld(B.ld())),
          "ormqr");
  trsm<T>(Side::Left, Uplo::Upper, Op::None, Diag::NonUnit, T(1), A, B);
  return 0;
}

template <Real T>
int orthonormalize(MatrixView<T> A) {
  const int m = blas_dim(A.rows(), "orthonormalize"), n = blas_dim(A.cols(), "orthonormalize");
  if (m == 0 || n == 0) return 0;
  std::vector<T> tau(static_cast<std::size_t>(n));
  if constexpr (is_f32<T>) {
    checked(LAPACKE_sgeqrf(LAPACK_COL_MAJOR, m, n, A.data(), ld(A.ld()), tau.data()), "geqrf");
    return checked(LAPACKE_sorgqr(LAPACK_COL_MAJOR, m, n, n, A.data(), ld(A.ld()), tau.data()), "orgqr");
  } else {
    checked(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, n, A.data(), ld(A.ld()), tau.data()), "geqrf");
    return checked(LAPACKE_dorgqr(LAPACK_COL_MAJOR, m, n, n, A.data(), ld(A.ld()), tau.data()), "orgqr");
  }
}

template <Scalar T>
int gesdd(MatrixView<T> A, real_t<T>* s, MatrixView<T> U, MatrixView<T> VT) {
  const int m = blas_dim(A.rows(), "gesdd"), n = blas_dim(A.cols(), "gesdd");
  if (m == 0 || n == 0) return 0;
  refuse_non_finite<T>(A, "SVD (gesdd)");
  return checked(pick<T>(LAPACKE_sgesdd, LAPACKE_dgesdd, LAPACKE_cgesdd, LAPACKE_zgesdd)(LAPACK_COL_MAJOR, 'S', m, n, A.data(), ld(A.ld()), s, U.data(),
                                                         ld(U.ld()), VT.data(), ld(VT.ld())),
                 "gesdd");
}

template <Real T>
int largest_eigenpair(MatrixView<T> A, T& value, T* vector) {
  const int n = blas_dim(A.rows(), "syevr");
  if (n == 0) return 0;
  refuse_non_finite<T>(A, "eigenpair (syevr)", Uplo::Lower);
  lapack_int found = 0;
  std::vector<lapack_int> support(2);
  return checked(pick<T>(LAPACKE_ssyevr, LAPACKE_dsyevr)(LAPACK_COL_MAJOR, 'V', 'I', 'L', n, A.data(), ld(A.ld()), 0, 0,
                                                         n, n, 0, &found, &value, vector, n, support.data()),
                 "syevr");
}

template <Real T>
void sfrk(T alpha, ConstMatrixView<T> A, T beta, T* C) {
  const int n = blas_dim(A.rows(), "sfrk"), k = blas_dim(A.cols(), "sfrk");
  if (n == 0) return;
  checked(pick<T>(LAPACKE_ssfrk, LAPACKE_dsfrk)(LAPACK_COL_MAJOR, 'N', 'L', 'N', n, k, alpha, A.data(), ld(A.ld()),
                                                beta, C),
          "sfrk");
}

template <Real T>
int pftrf(index n, T* C) {
  const int m = blas_dim(n, "pftrf");
  if (m == 0) return 0;
  return checked(pick<T>(LAPACKE_spftrf, LAPACKE_dpftrf)(LAPACK_COL_MAJOR, 'N', 'L', m, C), "pftrf");
}

template <Real T>
int pftrs(index n, const T* C, MatrixView<T> B) {
  if (B.empty()) return 0;
  const int m = blas_dim(n, "pftrs"), nrhs = blas_dim(B.cols(), "pftrs");
  return checked(pick<T>(LAPACKE_spftrs, LAPACKE_dpftrs)(LAPACK_COL_MAJOR, 'N', 'L', m, nrhs, C, B.data(), ld(B.ld())),
                 "pftrs");
}

bool inverse_root(const Matrix<double>& S, MatrixView<double> W) {
  const index F = S.rows();
  Matrix<double> a = S.clone(), U(F, F), VT(F, F);
  std::vector<double> s(static_cast<std::size_t>(F));
  if (gesdd<double>(a.view(), s.data(), U.view(), VT.view()) != 0) return false;
  const double floor = static_cast<double>(F) * std::numeric_limits<double>::epsilon() * s[0];
  for (index c = 0; c < F; ++c)
    for (index r = 0; r < F; ++r) {
      double t = 0;
      for (index j = 0; j < F; ++j)
        if (s[static_cast<std::size_t>(j)] > floor) t += VT(j, r) * U(c, j) / std::sqrt(s[static_cast<std::size_t>(j)]);
      W(r, c) = t;
    }
  return true;
}

// What the dense core runs, on real and complex matrices.
#define LINV_INSTANTIATE_SCALAR(T)                                                            \
  template void gemm<T>(Op, Op, T, ConstMatrixView<T>, ConstMatrixView<T>, T, MatrixView<T>); \
  template void syrk<T>(Uplo, Op, T, ConstMatrixView<T>, T, MatrixView<T>);                   \
  template void trsm<T>(Side, Uplo, Op, Diag, T, ConstMatrixView<T>, MatrixView<T>);          \
  template int getrf<T>(MatrixView<T>, int*);                                                 \
  template int getri<T>(MatrixView<T>, const int*);                                           \
  template int getrs<T>(Op, ConstMatrixView<T>, const int*, MatrixView<T>);                   \
  template double gecon<T>(ConstMatrixView<T>, double);                                       \
  template int potrf<T>(Uplo, MatrixView<T>);                                                 \
  template int potrs<T>(Uplo, ConstMatrixView<T>, MatrixView<T>);                             \
  template int potri<T>(Uplo, MatrixView<T>);                                                 \
  template double pocon<T>(Uplo, ConstMatrixView<T>, double);                                 \
  template int trtri<T>(Uplo, Diag, MatrixView<T>);                                           \
  template double trcon<T>(Uplo, Diag, ConstMatrixView<T>);                                   \
  template index gelsy<T>(MatrixView<T>, MatrixView<T>, double);                              \
  template index qr_solve<T>(MatrixView<T>, MatrixView<T>);                                    \
  template int gesdd<T>(MatrixView<T>, real_t<T>*, MatrixView<T>, MatrixView<T>);
// And what only the real types have.
#define LINV_INSTANTIATE_REAL(T)                                                     \
  template void trmm<T>(Side, Uplo, Op, Diag, T, ConstMatrixView<T>, MatrixView<T>); \
  template void ger<T>(T, const T*, const T*, index, MatrixView<T>);                 \
  template void sfrk<T>(T, ConstMatrixView<T>, T, T*);                               \
  template int pftrf<T>(index, T*);                                                  \
  template int pftrs<T>(index, const T*, MatrixView<T>);                             \
  template int lauum<T>(Uplo, MatrixView<T>);                                        \
  template int orthonormalize<T>(MatrixView<T>);                                     \
  template int largest_eigenpair<T>(MatrixView<T>, T&, T*);
LINV_INSTANTIATE_SCALAR(float)
LINV_INSTANTIATE_SCALAR(double)
LINV_INSTANTIATE_SCALAR(std::complex<float>)
LINV_INSTANTIATE_SCALAR(std::complex<double>)
LINV_INSTANTIATE_REAL(float)
LINV_INSTANTIATE_REAL(double)
#undef LINV_INSTANTIATE_SCALAR
#undef LINV_INSTANTIATE_REAL

}  // namespace linv::cpu::lapack
