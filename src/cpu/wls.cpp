// The CPU backend's weighted-least-squares family (src/kernels/wls.hpp): C = (A D)(A D)^T by one symmetric
// rank-n update of a single triangle (LAPACK's syrk, or sfrk in RFP storage), Cholesky (potrf / pftrf),
// solves (potrs / pftrs).
#include "common/lapack.hpp"
#include "cpu/backend.hpp"

namespace linv::cpu {
namespace {

template <Real T>
class Wls final : public kernels::Wls<T> {
 public:
  double form(ConstMatrixView<T> A, ConstMatrixView<double> w, MatrixView<T> scaled, MatrixView<T> C,
              Storage storage) const override {
    double scale = 0;
    for (index j = 0; j < A.cols(); ++j)
      for (index i = 0; i < A.rows(); ++i) {
        scaled(i, j) = static_cast<T>(static_cast<double>(A(i, j)) * w(j, 0));
        scale += static_cast<double>(scaled(i, j)) * static_cast<double>(scaled(i, j));
      }
    if (storage == Storage::Packed)
      lapack::sfrk<T>(T(1), scaled, T(0), C.data());
    else
      lapack::syrk<T>(Uplo::Lower, Op::None, T(1), scaled, T(0), C);
    return scale;
  }
  index cholesky(MatrixView<T> C, index m, Storage storage) const override {
    return storage == Storage::Packed ? lapack::pftrf<T>(m, C.data()) : lapack::potrf<T>(Uplo::Lower, C);
  }
  void solve(ConstMatrixView<T> C, index m, Storage storage, MatrixView<T> B) const override {
    if (storage == Storage::Packed)
      lapack::pftrs<T>(m, C.data(), B);
    else
      lapack::potrs<T>(Uplo::Lower, C, B);
  }
};

}  // namespace

template <Real T>
const kernels::Wls<T>& wls() { return kernels::instance<Wls<T>>(); }
template const kernels::Wls<float>& wls<float>();
template const kernels::Wls<double>& wls<double>();

}  // namespace linv::cpu
