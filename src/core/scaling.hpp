// Scaling by powers of two, the way linv keeps its answers independent of the units of the data
// (docs/design.md, "Numerical policy"). Multiplying by 2^e is exact, so the factorizations, condition
// estimates and residual checks of 2^e A are those of A, bit for bit, wherever nothing over- or underflows;
// and they do over- or underflow at the edges of the range: LAPACK's condition estimators give up (rcond 0)
// when their intermediate vectors pass the safe minimum, which called 1e-307 I singular, and the norms of a
// matrix with entries near 1e307 overflow. So an operand whose largest magnitude lies outside
// [2^-kBand, 2^kBand] is brought to [1/2, 1) first and the result scaled back; within the band nothing is
// copied, and the result is the same either way.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "kernels/backend.hpp"
#include "linv/distributed.hpp"
#include "linv/errors.hpp"
#include "linv/matrix.hpp"

namespace linv::scaling {

inline constexpr int kBand = 32;

// e with max_abs / 2^e in [1/2, 1) for a max_abs outside the band; 0 within it, and for 0, Inf or NaN.
inline int exponent_for(double max_abs) {
  if (!(max_abs > 0) || !std::isfinite(max_abs)) return 0;
  int e = 0;
  std::frexp(max_abs, &e);
  return e - 1 >= -kBand && e - 1 <= kBand ? 0 : e;
}

// The largest magnitude of A's finite entries.
template <Scalar T>
double max_abs(ConstMatrixView<T> A) {
  return kernels::dense<T>(A.device()).magnitude(A).max_abs;
}

// exponent_for over a job: every process of `grid` (when there is one) takes the exponent of the largest
// magnitude any of them holds, so that all scale their share alike.
inline int agreed_exponent(double max_abs, const dist::Grid* grid) {
  return exponent_for(grid ? grid->max(max_abs) : max_abs);
}

// X := 2^e X in place (X contiguous), in steps that each stay representable in T (2^-1074 is not a float).
template <Scalar T>
void scale_by_power_of_two(MatrixView<T> X, int e) {
  const kernels::Vectors<T>& v = kernels::vectors<T>(X.device());
  constexpr int kStep = 64;
  while (e != 0) {
    const int step = e > kStep ? kStep : (e < -kStep ? -kStep : e);
    v.scal(T(std::ldexp(real_t<T>(1), step)), X);
    e -= step;
  }
}

// A copy of A times 2^-e (e from exponent_for): its largest magnitude in [1/2, 1).
template <Scalar T>
Matrix<T> normalized_copy(ConstMatrixView<T> A, int e) {
  Matrix<T> scaled = Matrix<T>::copy_of(A);
  scale_by_power_of_two<T>(scaled.view(), -e);
  return scaled;
}

// The result of an operation on scaled operands, scaled back by 2^e; NumericalError when the true result
// does not fit T (its entries overflow), naming `what`.
template <Scalar T>
void scale_back(Matrix<T>& X, int e, const char* what) {
  if (e == 0) return;
  scale_by_power_of_two<T>(X.view(), e);
  const kernels::Magnitude m = kernels::dense<T>(X.device()).magnitude(X);
  if (m.first_non_finite)
    throw NumericalError(fmt::format("the {} overflows {}: entry ({}, {}) of it exceeds the largest number, {:.3g}", what,
                                     type_name<T>(), m.first_non_finite->first + 1, m.first_non_finite->second + 1,
                                     static_cast<double>(std::numeric_limits<real_t<T>>::max())));
}

}  // namespace linv::scaling
