// The CUDA backend's families gathered for the registry.
#include "cuda/backend.hpp"

namespace linv::cuda {
namespace {

template <Real T>
class Backend final : public kernels::Backend<T> {
 public:
  const kernels::Dense<T>& dense() const override { return cuda::dense<T>(); }
  const kernels::Vectors<T>& vectors() const override { return cuda::vectors<T>(); }
  const kernels::Batched<T>& batched() const override { return cuda::batched<T>(); }
  const kernels::Wls<T>& wls() const override { return cuda::wls<T>(); }
  const kernels::Slam<T>& slam() const override { return cuda::slam<T>(); }
  const kernels::Fmri<T>& fmri() const override { return cuda::fmri<T>(); }
  const kernels::Mixed& mixed() const override { return cuda::mixed(); }
  const kernels::Imaging& imaging() const override { return cuda::imaging(); }
};

}  // namespace

template <Real T>
const kernels::Backend<T>& backend() {
  static const Backend<T> b;
  return b;
}
template const kernels::Backend<float>& backend<float>();
template const kernels::Backend<double>& backend<double>();

}  // namespace linv::cuda
