// ScaLAPACK, PBLAS and BLACS as linv calls them: the Fortran symbols, and overloads for float and double
// with the submatrix offsets (always the whole matrix, IA = JA = 1) filled in.
#pragma once

#include "kernels/distributed.hpp"

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int rows, int cols);
void Cblacs_gridinfo(int context, int* rows, int* cols, int* row, int* col);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
               const int* ictxt, const int* lld, int* info);

#define LINV_SCALAPACK_DECLARE(p, T)                                                                                  \
  T p##lange_(const char* norm, const int* m, const int* n, const T* a, const int* ia, const int* ja, const int* desc, \
              T* work);                                                                                               \
  void p##gemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const T* alpha, const T* a,  \
                const int* ia, const int* ja, const int* da, const T* b, const int* ib, const int* jb, const int* db,  \
                const T* beta, T* c, const int* ic, const int* jc, const int* dc);                                    \
  void p##tran_(const int* m, const int* n, const T* alpha, const T* a, const int* ia, const int* ja, const int* da,   \
                const T* beta, T* c, const int* ic, const int* jc, const int* dc);                                    \
  void p##laset_(const char* uplo, const int* m, const int* n, const T* alpha, const T* beta, T* a, const int* ia,    \
                 const int* ja, const int* desc);                                                                     \
  void p##getrf_(const int* m, const int* n, T* a, const int* ia, const int* ja, const int* desc, int* ipiv,          \
                 int* info);                                                                                          \
  void p##getrs_(const char* trans, const int* n, const int* nrhs, const T* a, const int* ia, const int* ja,          \
                 const int* da, const int* ipiv, T* b, const int* ib, const int* jb, const int* db, int* info);       \
  void p##getri_(const int* n, T* a, const int* ia, const int* ja, const int* desc, const int* ipiv, T* work,         \
                 const int* lwork, int* iwork, const int* liwork, int* info);                                        \
  void p##potrf_(const char* uplo, const int* n, T* a, const int* ia, const int* ja, const int* desc, int* info);     \
  void p##potrs_(const char* uplo, const int* n, const int* nrhs, const T* a, const int* ia, const int* ja,           \
                 const int* da, T* b, const int* ib, const int* jb, const int* db, int* info);                        \
  void p##potri_(const char* uplo, const int* n, T* a, const int* ia, const int* ja, const int* desc, int* info);     \
  void p##geqrf_(const int* m, const int* n, T* a, const int* ia, const int* ja, const int* desc, T* tau, T* work,     \
                 const int* lwork, int* info);                                                                        \
  void p##ormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k, const T* a,           \
                 const int* ia, const int* ja, const int* da, const T* tau, T* c, const int* ic, const int* jc,       \
                 const int* dc, T* work, const int* lwork, int* info);                                                \
  void p##trtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs, const T* a,    \
                 const int* ia, const int* ja, const int* da, T* b, const int* ib, const int* jb, const int* db,      \
                 int* info);
LINV_SCALAPACK_DECLARE(pd, double)
LINV_SCALAPACK_DECLARE(ps, float)
#undef LINV_SCALAPACK_DECLARE
}

namespace linv::scalapack {

// The ScaLAPACK family (src/scalapack/distributed.cpp), for src/dispatch/registry.cpp.
template <Real T>
const kernels::Distributed<T>& distributed();

namespace wrap {
inline constexpr int one = 1;
}

#define LINV_SCALAPACK_WRAP(p, T)                                                                                     \
  inline T plange(const char* norm, int m, int n, const T* a, const int* d, T* work) {                               \
    return p##lange_(norm, &m, &n, a, &wrap::one, &wrap::one, d, work);                                              \
  }                                                                                                                  \
  inline void pgemm(const char* ta, const char* tb, int m, int n, int k, T alpha, const T* a, const int* da,          \
                    const T* b, const int* db, T beta, T* c, const int* dc) {                                        \
    p##gemm_(ta, tb, &m, &n, &k, &alpha, a, &wrap::one, &wrap::one, da, b, &wrap::one, &wrap::one, db, &beta, c,      \
             &wrap::one, &wrap::one, dc);                                                                            \
  }                                                                                                                  \
  inline void ptran(int m, int n, T alpha, const T* a, const int* da, T beta, T* c, const int* dc) {                  \
    p##tran_(&m, &n, &alpha, a, &wrap::one, &wrap::one, da, &beta, c, &wrap::one, &wrap::one, dc);                   \
  }                                                                                                                  \
  inline void plaset(const char* uplo, int m, int n, T alpha, T beta, T* a, const int* d) {                          \
    p##laset_(uplo, &m, &n, &alpha, &beta, a, &wrap::one, &wrap::one, d);                                            \
  }                                                                                                                  \
  inline void pgetrf(int m, int n, T* a, const int* d, int* ipiv, int* info) {                                       \
    p##getrf_(&m, &n, a, &wrap::one, &wrap::one, d, ipiv, info);                                                     \
  }                                                                                                                  \
  inline void pgetrs(const char* trans, int n, int nrhs, const T* a, const int* da, const int* ipiv, T* b,            \
                     const int* db, int* info) {                                                                     \
    p##getrs_(trans, &n, &nrhs, a, &wrap::one, &wrap::one, da, ipiv, b, &wrap::one, &wrap::one, db, info);           \
  }                                                                                                                  \
  inline void pgetri(int n, T* a, const int* d, const int* ipiv, T* work, int lwork, int* iwork, int liwork,         \
                     int* info) {                                                                                    \
    p##getri_(&n, a, &wrap::one, &wrap::one, d, ipiv, work, &lwork, iwork, &liwork, info);                           \
  }                                                                                                                  \
  inline void ppotrf(const char* uplo, int n, T* a, const int* d, int* info) {                                       \
    p##potrf_(uplo, &n, a, &wrap::one, &wrap::one, d, info);                                                         \
  }                                                                                                                  \
  inline void ppotrs(const char* uplo, int n, int nrhs, const T* a, const int* da, T* b, const int* db, int* info) {  \
    p##potrs_(uplo, &n, &nrhs, a, &wrap::one, &wrap::one, da, b, &wrap::one, &wrap::one, db, info);                  \
  }                                                                                                                  \
  inline void ppotri(const char* uplo, int n, T* a, const int* d, int* info) {                                       \
    p##potri_(uplo, &n, a, &wrap::one, &wrap::one, d, info);                                                         \
  }                                                                                                                  \
  inline void pgeqrf(int m, int n, T* a, const int* d, T* tau, T* work, int lwork, int* info) {                      \
    p##geqrf_(&m, &n, a, &wrap::one, &wrap::one, d, tau, work, &lwork, info);                                        \
  }                                                                                                                  \
  inline void pormqr(const char* side, const char* trans, int m, int n, int k, const T* a, const int* da,             \
                     const T* tau, T* c, const int* dc, T* work, int lwork, int* info) {                              \
    p##ormqr_(side, trans, &m, &n, &k, a, &wrap::one, &wrap::one, da, tau, c, &wrap::one, &wrap::one, dc, work,      \
              &lwork, info);                                                                                         \
  }                                                                                                                  \
  inline void ptrtrs(const char* uplo, const char* trans, const char* diag, int n, int nrhs, const T* a,              \
                     const int* da, T* b, const int* db, int* info) {                                                \
    p##trtrs_(uplo, trans, diag, &n, &nrhs, a, &wrap::one, &wrap::one, da, b, &wrap::one, &wrap::one, db, info);     \
  }
LINV_SCALAPACK_WRAP(pd, double)
LINV_SCALAPACK_WRAP(ps, float)
#undef LINV_SCALAPACK_WRAP

}  // namespace linv::scalapack
