// The vector family (element-wise steps and reductions that iterations are made of), the linear operators
// that Krylov methods apply (src/core/krylov.hpp), and the mixed-precision family. Declared once here,
// implemented by each backend. Vectors are contiguous views (leading dimension = rows): a matrix counts as
// its rows * cols entries.
//
// Unlike the other families, copy, axpy, scal and the operators' products are queued in order on the
// device and may return before their result is complete (a GPU iteration would otherwise wait after every
// step): each sees the results of those before it, and the reductions (dot, norm2) return complete values.
// Code that hands such vectors to anything else, or frees them, calls synchronize() first.
#pragma once

#include <cstdint>
#include <cstdio>
#include <complex>
#include <limits>
#include <string>

#include "linv/dense.hpp"
#include "linv/matrix.hpp"

namespace linv::kernels {

// Complex T: dot is the real part of x^H y; fill_uniform draws the real and imaginary parts each between
// those of lo and hi.
template <Scalar T>
class Vectors {
 public:
  virtual ~Vectors() = default;
  virtual void widen(ConstMatrixView<T> src, MatrixView<wide_t<T>> dst) const = 0;  // dst := src in float64
  virtual void scale_rows(ConstMatrixView<double> d, MatrixView<T> X) const = 0;  // X(i, j) *= d(i)
  virtual double dot(ConstMatrixView<T> x, ConstMatrixView<T> y) const = 0;
  virtual double norm2(ConstMatrixView<T> x) const = 0;
  virtual void copy(ConstMatrixView<T> x, MatrixView<T> y) const = 0;           // y := x (ordered)
  virtual void axpy(T alpha, ConstMatrixView<T> x, MatrixView<T> y) const = 0;  // y += alpha x (ordered)
  virtual void scal(T alpha, MatrixView<T> x) const = 0;                        // x *= alpha (ordered)
  virtual void synchronize(Device device) const = 0;  // returns once the work queued on `device` is complete
  // out(j) := ||X(:, j)||_2^2 in float64 (out: X.cols() entries).
  virtual void column_norms_squared(ConstMatrixView<T> X, MatrixView<double> out) const = 0;
  // At := A^T (At: A.cols() x A.rows(), complete on return).
  virtual void transpose(ConstMatrixView<T> A, MatrixView<T> At) const = 0;
  // Entries uniform in [lo, hi) from a counter-based generator: entry (i, j) depends only on the seed and
  // i + j * rows, so a seed gives the same matrix on every device.
  virtual void fill_uniform(MatrixView<T> A, std::uint64_t seed, T lo, T hi) const = 0;
};

// y := A x and x := A^T y for vectors living on one device (A may be an operator never formed: a
// convolution, a sparse matrix), queued in order like the vector family's steps. Applying may use the
// operator's own scratch memory, hence not const.
template <Real T>
class LinearOperator {
 public:
  virtual ~LinearOperator() = default;
  virtual index rows() const = 0;  // entries of y
  virtual index cols() const = 0;  // entries of x
  virtual void apply(ConstMatrixView<T> x, MatrixView<T> y) = 0;
  virtual void apply_transpose(ConstMatrixView<T> y, MatrixView<T> x) = 0;
};

// How a mixed-precision solve ended.
struct MixedOutcome {
  int iterations = 0;  // refinement steps
  // max over columns of ||b - A x||_inf / (||A||_inf ||x||_inf) at the stop; NaN: not measured
  double backward_error = std::numeric_limits<double>::quiet_NaN();
  std::string failure;  // why refinement did not reach float64's accuracy (empty: it did)
  std::string note;     // what else the report should say (e.g. GMRES-IR took over)
};

// Float32 factors whose reciprocal condition estimate lies below float32's epsilon cannot tell a matrix
// that is singular in float64 from one that is merely ill-conditioned: refinement against a consistent
// right-hand side converges either way (measured: exactly singular matrices of order 10 to 500, a row or a
// column dependent, gave estimates of 1e-34 to 1e-9, a hundred times below it). A mixed solve then gives way
// to a float64 factorization, which judges as the float64 path does. Returns why, or nothing where the
// float32 factors can judge.
inline std::string float32_cannot_judge(double rcond32) {
  const double eps32 = std::numeric_limits<float>::epsilon();
  if (rcond32 >= eps32) return {};
  char estimate[32];
  std::snprintf(estimate, sizeof estimate, "%.3g", rcond32);
  return std::string("A is singular to float32's working precision (its float32 rcond estimate ") + estimate +
         " is below float32's epsilon), where float32 factors cannot tell whether it is singular in float64";
}

// Float64 data, float32 (or lower) work.
class Mixed {
 public:
  virtual ~Mixed() = default;
  // X from A X = B: a low-precision factorization (LU, or Cholesky of A's lower triangle) refined against
  // the float64 residual to LAPACK's test ||r||_inf <= ||x||_inf ||A||_inf eps sqrt(n) for every column.
  // A is left untouched; on failure the caller solves in float64.
  virtual MixedOutcome solve(ConstMatrixView<double> A, ConstMatrixView<double> B, MatrixView<double> X, bool cholesky,
                             FactorPrecision low) const = 0;
  // The same for complex128 data: complex64 factors (LU, or Cholesky of a Hermitian A's lower triangle where
  // the device has its refinement) refined against the complex128 residual.
  virtual MixedOutcome solve_complex(ConstMatrixView<std::complex<double>> A, ConstMatrixView<std::complex<double>> B,
                                     MatrixView<std::complex<double>> X, bool cholesky) const = 0;
  // Empty where a float32 factorization is faster than a float64 one on `device` (what FactorPrecision::Auto
  // needs to refine at all); otherwise why not, for the report.
  virtual std::string float64_is_as_fast(Device device) const = 0;
  // X from min ||A X - B|| (m >= n) by the normal equations: A^T A formed in float64, a float32 Cholesky
  // factor, corrections against the float64 residual. Fails (saying why) where A^T A is too ill
  // conditioned for float32, where QR is the accurate method.
  virtual MixedOutcome least_squares(ConstMatrixView<double> A, ConstMatrixView<double> B,
                                     MatrixView<double> X) const = 0;
  virtual void round_to_float(ConstMatrixView<double> src, MatrixView<float> dst) const = 0;
  virtual void add_correction(ConstMatrixView<float> d, MatrixView<double> x) const = 0;  // x += double(d)
};

}  // namespace linv::kernels
