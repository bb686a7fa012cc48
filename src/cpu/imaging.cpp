// The CPU backend's imaging family (src/kernels/imaging.hpp): H^T H + lambda I formed entry by entry from
// the PSF, and H as imaging::Convolution (FFTs of the zero-padded image when linv has FFTW).
#include <algorithm>

#include "cpu/backend.hpp"
#include "linv/imaging.hpp"

namespace linv::cpu {
namespace {

class Convolution final : public kernels::Convolution {
 public:
  Convolution(index height, index width, ConstMatrixView<double> kernel) : h_(height, width, kernel) {}
  index rows() const override { return h_size(); }
  index cols() const override { return h_size(); }
  void apply(ConstMatrixView<double> x, MatrixView<double> y) override { copy<double>(h_.apply(x).view(), y); }
  void apply_transpose(ConstMatrixView<double> y, MatrixView<double> x) override {
    copy<double>(h_.apply_adjoint(y).view(), x);
  }
  void normal(ConstMatrixView<double> x, double lambda, MatrixView<double> y) override {
    const Matrix<double> w = h_.apply_adjoint(h_.apply(x).view());
    for (index j = 0; j < x.cols(); ++j)
      for (index i = 0; i < x.rows(); ++i) y(i, j) = w(i, j) + lambda * x(i, j);
  }

 private:
  index h_size() const { return h_.height() * h_.width(); }
  imaging::Convolution h_;
};

class Imaging final : public kernels::Imaging {
 public:
  // Entry (a, b) sums kernel products over the output pixels that both pixels a and b reach.
  Matrix<double> normal_matrix(index height, index width, ConstMatrixView<double> kernel, double lambda,
                               Device) const override {
    const index size = height * width, kr = kernel.rows(), kc = kernel.cols(), cr = kr / 2, cc = kc / 2;
    Matrix<double> C(size, size);
    for (index ja = 0; ja < width; ++ja)
      for (index ia = 0; ia < height; ++ia)
        for (index dj = 1 - kc; dj < kc; ++dj)
          for (index di = 1 - kr; di < kr; ++di) {
            const index ib = ia + di, jb = ja + dj;
            if (ib < 0 || ib >= height || jb < 0 || jb >= width) continue;
            // output pixels (i, j) both reach: kernel(i - ia + cr, j - ja + cc) kernel(i - ib + cr, j - jb + cc)
            const index i0 = std::max({index{0}, ia - cr, ib - cr});
            const index i1 = std::min({height - 1, ia - cr + kr - 1, ib - cr + kr - 1});
            const index j0 = std::max({index{0}, ja - cc, jb - cc});
            const index j1 = std::min({width - 1, ja - cc + kc - 1, jb - cc + kc - 1});
            double sum = 0;
            for (index j = j0; j <= j1; ++j)
              for (index i = i0; i <= i1; ++i)
                sum += kernel(i - ia + cr, j - ja + cc) * kernel(i - ib + cr, j - jb + cc);
            C(ib + jb * height, ia + ja * height) = sum;
          }
    for (index k = 0; k < size; ++k) C(k, k) += lambda;
    return C;
  }

  std::unique_ptr<kernels::Convolution> convolution(index height, index width, ConstMatrixView<double> kernel,
                                                    Device) const override {
    return std::make_unique<Convolution>(height, width, kernel);
  }
};

}  // namespace

const kernels::Imaging& imaging() { return kernels::instance<Imaging>(); }

}  // namespace linv::cpu
