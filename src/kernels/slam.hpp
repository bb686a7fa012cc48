// The SLAM family (include/linv/slam.hpp): Gauss-Newton steps and pseudoinverses of bordered Jacobians
// through their arrowhead normal equations, and sparse Jacobians as operators for CGLS. Declared once
// here, implemented by each backend; the checks and messages around them are src/core/slam.cpp's.
#pragma once

#include <memory>

#include "kernels/vectors.hpp"
#include "linv/matrix.hpp"
#include "linv/slam.hpp"

namespace linv::kernels {

// What made the normal equations singular, for src/core to name.
struct SlamOutcome {
  index unobservable_segment = -1;  // 0-based segment whose normal entry is zero, or -1
  index failing_dense = 0;          // 1-based dense parameter where the Schur complement fails, or 0
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
