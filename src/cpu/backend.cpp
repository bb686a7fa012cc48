// The CPU backend's families gathered for the registry.
#include "cpu/backend.hpp"

namespace linv::cpu {
namespace {

template <Real T>
class Backend final : public kernels::Backend<T> {
 public:
  const kernels::Dense<T>& dense() const override { return cpu::dense<T>(); }
  const kernels::Vectors<T>& vectors() const override { return cpu::vectors<T>(); }
  const kernels::Batched<T>& batched() const override { return cpu::batched<T>(); }
  const kernels::Wls<T>& wls() const override { return cpu::wls<T>(); }
  const kernels::Slam<T>& slam() const override { return cpu::slam<T>(); }
  const kernels::Fmri<T>& fmri() const override { return cpu::fmri<T>(); }
  const kernels::Mixed& mixed() const override { return cpu::mixed(); }
  const kernels::Imaging& imaging() const override { return cpu::imaging(); }
};

}  // namespace

template <Real T>
const kernels::Backend<T>& backend() {
  static const Backend<T> b;
  return b;
}
template const kernels::Backend<float>& backend<float>();
template const kernels::Backend<double>& backend<double>();

}  // namespace linv::cpu
