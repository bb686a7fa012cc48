// The imaging family (include/linv/imaging.hpp): the system matrix's normal equations formed from the PSF,
// and the blur H applied as a convolution with zero boundaries, for height x width float64 images on one
// device. Declared once here, implemented by each backend; deblurring itself is src/core/imaging.cpp's.
#pragma once

#include <memory>

#include "kernels/vectors.hpp"
#include "linv/matrix.hpp"

namespace linv::kernels {

// H (apply) and H^T (apply_transpose) on height x width images (contiguous views).
class Convolution : public LinearOperator<double> {
 public:
  // y := (H^T H + lambda I) x
  virtual void normal(ConstMatrixView<double> x, double lambda, MatrixView<double> y) = 0;
};

class Imaging {
 public:
  virtual ~Imaging() = default;
  // H^T H + lambda I for height x width images and the PSF's kernel (host memory), formed on `device`.
  virtual Matrix<double> normal_matrix(index height, index width, ConstMatrixView<double> kernel, double lambda,
                                       Device device) const = 0;
  virtual std::unique_ptr<Convolution> convolution(index height, index width, ConstMatrixView<double> kernel,
                                                   Device device) const = 0;
};

}  // namespace linv::kernels
