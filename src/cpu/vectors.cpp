// The CPU backend's vector family (src/kernels/vectors.hpp): loops over contiguous host memory, sums in
// float64.
#include <cmath>

#include "common/counter_random.hpp"
#include "cpu/backend.hpp"

namespace linv::cpu {
namespace {

using kernels::counter_uniform;

template <Scalar T>
class Vectors final : public kernels::Vectors<T> {
 public:
  void widen(ConstMatrixView<T> src, MatrixView<wide_t<T>> dst) const override {
    for (index j = 0; j < src.cols(); ++j)
      for (index i = 0; i < src.rows(); ++i) dst(i, j) = static_cast<wide_t<T>>(src(i, j));
  }
  void scale_rows(ConstMatrixView<double> d, MatrixView<T> X) const override {
    for (index j = 0; j < X.cols(); ++j)
      for (index i = 0; i < X.rows(); ++i) X(i, j) = static_cast<T>(d(i, 0) * static_cast<wide_t<T>>(X(i, j)));
  }
  double dot(ConstMatrixView<T> x, ConstMatrixView<T> y) const override {
    double s = 0;
    for (index k = 0; k < x.rows() * x.cols(); ++k)
      s += std::real(conjugate(static_cast<wide_t<T>>(x.data()[k])) * static_cast<wide_t<T>>(y.data()[k]));
    return s;
  }
  double norm2(ConstMatrixView<T> x) const override { return std::sqrt(dot(x, x)); }
  void copy(ConstMatrixView<T> x, MatrixView<T> y) const override { linv::copy<T>(x, y); }
  void axpy(T alpha, ConstMatrixView<T> x, MatrixView<T> y) const override {
    for (index k = 0; k < x.rows() * x.cols(); ++k) y.data()[k] += alpha * x.data()[k];
  }
  void scal(T alpha, MatrixView<T> x) const override {
    for (index k = 0; k < x.rows() * x.cols(); ++k) x.data()[k] *= alpha;
  }
  void synchronize(Device) const override {}  // every step above is complete on return
  void column_norms_squared(ConstMatrixView<T> X, MatrixView<double> out) const override {
    for (index j = 0; j < X.cols(); ++j) {
      double s = 0;
      for (index i = 0; i < X.rows(); ++i) s += std::norm(static_cast<wide_t<T>>(X(i, j)));
      out.data()[j] = s;
    }
  }
  void transpose(ConstMatrixView<T> A, MatrixView<T> At) const override {
    for (index j = 0; j < A.cols(); ++j)
      for (index i = 0; i < A.rows(); ++i) At(j, i) = A(i, j);
  }
  void fill_uniform(MatrixView<T> A, std::uint64_t seed, T lo, T hi) const override {
    for (index j = 0; j < A.cols(); ++j)
      for (index i = 0; i < A.rows(); ++i) {
        const auto k = static_cast<std::uint64_t>(j * A.rows() + i);
        if constexpr (Complex<T>)  // the parts from the counters 2k and 2k + 1
          A(i, j) = T(kernels::uniform_between(lo.real(), hi.real(), counter_uniform(seed, 2 * k)),
                      kernels::uniform_between(lo.imag(), hi.imag(), counter_uniform(seed, 2 * k + 1)));
        else
          A(i, j) = static_cast<T>(kernels::uniform_between(lo, hi, counter_uniform(seed, k)));
      }
  }
};

}  // namespace

template <Scalar T>
const kernels::Vectors<T>& vectors() { return kernels::instance<Vectors<T>>(); }
template const kernels::Vectors<float>& vectors<float>();
template const kernels::Vectors<double>& vectors<double>();
template const kernels::Vectors<std::complex<float>>& vectors<std::complex<float>>();
template const kernels::Vectors<std::complex<double>>& vectors<std::complex<double>>();

}  // namespace linv::cpu
