// The CUDA backend's dense routines in a build without CUDA. No matrix can live on a GPU in such a
// build (allocating one already fails), so these are unreachable in practice; they exist so the core
// dispatches without conditional compilation, and they fail clearly if reached.
#include "cuda/batched.hpp"
#include "cuda/dense.hpp"
#include "linv/errors.hpp"

namespace linv::cuda {
namespace {
[[noreturn]] void unavailable() {
  throw DeviceError("this linv was built without the CUDA backend (configure with nvcc on PATH, or -DLINV_CUDA=ON)");
}
}  // namespace

template <Real T>
double norm1(ConstMatrixView<T>) {
  unavailable();
}

template <Real T>
void require_finite(ConstMatrixView<T>, const char*) {
  unavailable();
}

template <Real T>
Structure detect_structure(ConstMatrixView<T>) {
  unavailable();
}

template <Real T>
std::vector<T> diagonal(ConstMatrixView<T>) {
  unavailable();
}

template <Real T>
void zero_triangle(MatrixView<T>, Uplo) {
  unavailable();
}

template <Real T>
void set_diagonal(MatrixView<T>, T) {
  unavailable();
}

template <Real T>
void mirror_lower(MatrixView<T>) {
  unavailable();
}

template <Real T>
void gemm(Op, Op, T, ConstMatrixView<T>, ConstMatrixView<T>, T, MatrixView<T>) {
  unavailable();
}

template <Real T>
void syrk(Uplo, Op, T, ConstMatrixView<T>, T, MatrixView<T>) {
  unavailable();
}

template <Real T>
index lu_factor(MatrixView<T>, std::vector<int>&) {
  unavailable();
}

template <Real T>
void lu_solve(ConstMatrixView<T>, const std::vector<int>&, MatrixView<T>) {
  unavailable();
}

template <Real T>
void lu_inverse(MatrixView<T>, const std::vector<int>&) {
  unavailable();
}

template <Real T>
double lu_rcond(ConstMatrixView<T>, const std::vector<int>&, double) {
  unavailable();
}

template <Real T>
index cholesky_factor(MatrixView<T>) {
  unavailable();
}

template <Real T>
void cholesky_solve(ConstMatrixView<T>, MatrixView<T>) {
  unavailable();
}

template <Real T>
void cholesky_inverse(MatrixView<T>, TriangularInverse) {
  unavailable();
}

template <Real T>
double cholesky_rcond(ConstMatrixView<T>, double) {
  unavailable();
}

template <Real T>
void triangular_inverse(MatrixView<T>, Uplo, TriangularInverse, Diag) {
  unavailable();
}

template <Real T>
void triangular_solve(ConstMatrixView<T>, Uplo, Diag, MatrixView<T>) {
  unavailable();
}

template <Real T>
double triangular_rcond(ConstMatrixView<T>, Uplo, Diag) {
  unavailable();
}

template <Real T>
index gauss_jordan_inverse(MatrixView<T>, index) {
  unavailable();
}

MixedOutcome mixed_solve(ConstMatrixView<double>, ConstMatrixView<double>, MatrixView<double>, bool, FactorPrecision) {
  unavailable();
}

template <Real T>
double wls_form(ConstMatrixView<T>, const double*, MatrixView<T>, MatrixView<T>, bool) {
  unavailable();
}
template <Real T>
index wls_cholesky(MatrixView<T>, index, bool) {
  unavailable();
}
template <Real T>
void wls_cholesky_solve(ConstMatrixView<T>, index, bool, MatrixView<T>) {
  unavailable();
}
template <Real T>
void scale_rows(const double*, MatrixView<T>) {
  unavailable();
}
template <Real T>
SlamOutcome slam_step(const BorderedView<T>&, ConstMatrixView<T>, double, MatrixView<T>) {
  unavailable();
}
template <Real T>
SlamOutcome slam_pinv(const BorderedView<T>&, double, MatrixView<T>) {
  unavailable();
}
template <Real T>
fmri::SparseCodes<T> batch_omp(ConstMatrixView<T>, ConstMatrixView<T>, const fmri::OmpOptions&) {
  unavailable();
}

template <Real T>
fmri::KsvdResult<T> ksvd(ConstMatrixView<T>, const fmri::KsvdOptions&, const Matrix<T>&, std::mt19937_64&) {
  unavailable();
}

template <Real T>
std::unique_ptr<linv::kernels::AdlSteps<T>> adl_steps(ConstMatrixView<T>, Matrix<T>, ConstMatrixView<T>, linv::kernels::AdlConstraints) {
  unavailable();
}

template <Real T>
std::unique_ptr<linv::kernels::Parafac2Steps<T>> parafac2_steps(const std::vector<ConstMatrixView<T>>&) {
  unavailable();
}

template <Real T>
CglsResult cgls(const CsrView<T>&, ConstMatrixView<T>, double, int, MatrixView<T>) {
  unavailable();
}
Matrix<double> normal_matrix(index, index, const Matrix<double>&, double, Device) { unavailable(); }
Matrix<double> deblur_matrix_free(ConstMatrixView<double>, const Matrix<double>&, double, int, double, Device, int&) {
  unavailable();
}
void round_to_float(ConstMatrixView<double>, MatrixView<float>) { unavailable(); }
void add_to(ConstMatrixView<float>, MatrixView<double>) { unavailable(); }
double norm2(ConstMatrixView<double>) { unavailable(); }

template <Real T>
std::string batched_gauss_jordan(const T*, const T*, int, T*, std::int64_t, int, int, std::vector<index>&) {
  unavailable();
}

template <Real T>
double scaled_residual_inverse(ConstMatrixView<T>, ConstMatrixView<T>, double) {
  unavailable();
}

template <Real T>
double scaled_residual_solve(ConstMatrixView<T>, ConstMatrixView<T>, ConstMatrixView<T>, double) {
  unavailable();
}

template <Real T>
void fill_uniform(MatrixView<T>, std::uint64_t, T, T) {
  unavailable();
}

#define LINV_INSTANTIATE(T) \
  template double norm1<T>(ConstMatrixView<T>); \
  template void require_finite<T>(ConstMatrixView<T>, const char*); \
  template Structure detect_structure<T>(ConstMatrixView<T>); \
  template std::vector<T> diagonal<T>(ConstMatrixView<T>); \
  template void zero_triangle<T>(MatrixView<T>, Uplo); \
  template void set_diagonal<T>(MatrixView<T>, T); \
  template void mirror_lower<T>(MatrixView<T>); \
  template void gemm<T>(Op, Op, T, ConstMatrixView<T>, ConstMatrixView<T>, T, MatrixView<T>); \
  template void syrk<T>(Uplo, Op, T, ConstMatrixView<T>, T, MatrixView<T>); \
  template index lu_factor<T>(MatrixView<T>, std::vector<int>&); \
  template void lu_solve<T>(ConstMatrixView<T>, const std::vector<int>&, MatrixView<T>); \
  template void lu_inverse<T>(MatrixView<T>, const std::vector<int>&); \
  template double lu_rcond<T>(ConstMatrixView<T>, const std::vector<int>&, double); \
  template index cholesky_factor<T>(MatrixView<T>); \
  template void cholesky_solve<T>(ConstMatrixView<T>, MatrixView<T>); \
  template void cholesky_inverse<T>(MatrixView<T>, TriangularInverse); \
  template double cholesky_rcond<T>(ConstMatrixView<T>, double); \
  template void triangular_inverse<T>(MatrixView<T>, Uplo, TriangularInverse, Diag); \
  template void triangular_solve<T>(ConstMatrixView<T>, Uplo, Diag, MatrixView<T>); \
  template double triangular_rcond<T>(ConstMatrixView<T>, Uplo, Diag); \
  template index gauss_jordan_inverse<T>(MatrixView<T>, index); \
  template double wls_form<T>(ConstMatrixView<T>, const double*, MatrixView<T>, MatrixView<T>, bool); \
  template index wls_cholesky<T>(MatrixView<T>, index, bool); \
  template void wls_cholesky_solve<T>(ConstMatrixView<T>, index, bool, MatrixView<T>); \
  template void scale_rows<T>(const double*, MatrixView<T>); \
  template SlamOutcome slam_step<T>(const BorderedView<T>&, ConstMatrixView<T>, double, MatrixView<T>); \
  template SlamOutcome slam_pinv<T>(const BorderedView<T>&, double, MatrixView<T>); \
  template CglsResult cgls<T>(const CsrView<T>&, ConstMatrixView<T>, double, int, MatrixView<T>); \
  template fmri::SparseCodes<T> batch_omp<T>(ConstMatrixView<T>, ConstMatrixView<T>, const fmri::OmpOptions&); \
  template fmri::KsvdResult<T> ksvd<T>(ConstMatrixView<T>, const fmri::KsvdOptions&, const Matrix<T>&, std::mt19937_64&); \
  template std::unique_ptr<linv::kernels::AdlSteps<T>> adl_steps<T>(ConstMatrixView<T>, Matrix<T>, ConstMatrixView<T>, \
                                                              linv::kernels::AdlConstraints); \
  template std::unique_ptr<linv::kernels::Parafac2Steps<T>> parafac2_steps<T>(const std::vector<ConstMatrixView<T>>&); \
  template std::string batched_gauss_jordan<T>(const T*, const T*, int, T*, std::int64_t, int, int, \
                                               std::vector<index>&);                               \
  template double scaled_residual_inverse<T>(ConstMatrixView<T>, ConstMatrixView<T>, double); \
  template double scaled_residual_solve<T>(ConstMatrixView<T>, ConstMatrixView<T>, ConstMatrixView<T>, double); \
  template void fill_uniform<T>(MatrixView<T>, std::uint64_t, T, T);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
#undef LINV_INSTANTIATE

}  // namespace linv::cuda
