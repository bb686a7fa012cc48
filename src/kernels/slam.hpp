// The SLAM family (include/linv/slam.hpp): Gauss-Newton steps and pseudoinverses of bordered Jacobians
// through their arrowhead normal equations, and sparse Jacobians as operators for CGLS. Declared once
// here, implemented by each backend; the checks and messages around them are src/slam/slam.cpp's.
#pragma once

#include <limits>
#include <memory>

#include "kernels/vectors.hpp"
#include "linv/matrix.hpp"
#include "linv/slam.hpp"

namespace linv::kernels {

// What made the normal equations singular, for src/core to name, and how far from singular they are.
struct SlamOutcome {
  index unobservable_segment = -1;  // 0-based segment whose normal entry is zero, or -1
  index failing_dense = 0;          // 1-based dense parameter where the Schur complement fails, or 0
  // When neither failed: 1 / the largest variance inflation factor of J's columns. Column i's factor is
  // 1 / (1 - R_i^2), R_i^2 the fraction of its squared norm that the other columns explain: the i-th
  // diagonal entry of N_s^-1, N_s = diag(N)^-1/2 N diag(N)^-1/2 for N = J^T J (+ damping). The scaling
  // takes the parameters' units out (the rounding of N's entries, sums over J's rows, is relative to
  // sqrt(N_ii N_jj)) and leaves a unit diagonal, so 1 <= ||N_s||_2 <= m and, N_s^-1 being positive
  // definite (no entry above its largest diagonal one), this rcond lies between rcond_2(N_s) and m^2 times
  // it. The dense columns' factors are (S^-1)_pp A_pp, the segments' 1 + D_j E_j S^-1 E_j^T with
  // E = D^-1 B^T: O(segments k^2), as forming S. (Whole 1-norms of N_s^-1 would cost O(segments^2 k), and
  // the 1-norm of N_s grows with the square root of the number of segments a dense column couples, where
  // its 2-norm does not.) NaN when not computed.
  double rcond = std::numeric_limits<double>::quiet_NaN();
  index worst = 0;  // 1-based parameter with the largest factor: the one the data determine worst
};

template <Real T>
class Slam {
 public:
  virtual ~Slam() = default;
  // x := (J^T J + damping diag)^-1 J^T d per column of d (n x c), J, d and x (m x c) on the backend's device.
  virtual SlamOutcome step(const slam::BorderedJacobian<T>& J, ConstMatrixView<T> d, double damping,
                           MatrixView<T> x) const = 0;
  // P := J^+ (m x n).
  virtual SlamOutcome pinv(const slam::BorderedJacobian<T>& J, double damping, MatrixView<T> P) const = 0;
  // X := (J^T J + damping diag)^-1 (m x m).
  virtual SlamOutcome normal_inverse(const slam::BorderedJacobian<T>& J, double damping, MatrixView<T> X) const = 0;
  // J (host compressed rows) on `device` as a float64 operator: CGLS works in float64 whatever T is.
  virtual std::unique_ptr<LinearOperator<double>> sparse(const slam::SparseJacobian<T>& J, Device device) const = 0;
};

}  // namespace linv::kernels
