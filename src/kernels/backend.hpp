// A backend: every kernel family for one kind of device, and the one place that picks it.
//
// src/core/ writes its algorithms against the families (src/kernels/*.hpp) and asks for them by the device
// its operands live on, `kernels::dense<T>(A.device())`; src/dispatch/registry.cpp, the only file that knows
// which backends were built, maps the device's kind to its backend. A backend (src/cpu/, src/cuda/)
// implements each family, and the registry makes one Backend<T> of them; a family left out is a compile
// error (Backend's constructor takes every family, and every method of a family is pure virtual). Adding a backend adds files and touches no
// algorithm: its directory, a Device::Kind, and a case in registry.cpp and runtime.cpp.
#pragma once

#include <memory>
#include <vector>

#include "kernels/batched.hpp"
#include "kernels/dense.hpp"
#include "kernels/fmri.hpp"
#include "kernels/imaging.hpp"
#include "kernels/slam.hpp"
#include "kernels/vectors.hpp"
#include "kernels/wls.hpp"
#include "linv/device.hpp"

namespace linv::kernels {

template <Real T>
class Backend final {
 public:
  // Every family at once: a backend that leaves one out does not compile.
  Backend(const Dense<T>& dense, const Vectors<T>& vectors, const Batched<T>& batched, const Wls<T>& wls,
          const Slam<T>& slam, const Fmri<T>& fmri, const Mixed& mixed, const Imaging& imaging)
      : dense_(dense), vectors_(vectors), batched_(batched), wls_(wls), slam_(slam), fmri_(fmri), mixed_(mixed),
        imaging_(imaging) {}
  const Dense<T>& dense() const { return dense_; }
  const Vectors<T>& vectors() const { return vectors_; }
  const Batched<T>& batched() const { return batched_; }
  const Wls<T>& wls() const { return wls_; }
  const Slam<T>& slam() const { return slam_; }
  const Fmri<T>& fmri() const { return fmri_; }
  // The families whose data is float64 whatever T is: the same objects for both element types.
  const Mixed& mixed() const { return mixed_; }
  const Imaging& imaging() const { return imaging_; }

 private:
  const Dense<T>& dense_;
  const Vectors<T>& vectors_;
  const Batched<T>& batched_;
  const Wls<T>& wls_;
  const Slam<T>& slam_;
  const Fmri<T>& fmri_;
  const Mixed& mixed_;
  const Imaging& imaging_;
};

// The family accessors every backend defines in its own namespace (cpu::dense<T>(), cuda::wls<T>() ...,
// each in the file of its family), and the two passes the fmri family hands out. One list, expanded by
// src/cpu/backend.hpp and src/cuda/backend.hpp, so the backends' faces cannot drift apart.
#define LINV_KERNEL_FAMILY_ACCESSORS                                                                           \
  template <::linv::Scalar T>                                                                                  \
  const ::linv::kernels::Dense<T>& dense();                                                                    \
  const ::linv::kernels::Mixed& mixed();                                                                       \
  template <::linv::Scalar T>                                                                                  \
  const ::linv::kernels::Vectors<T>& vectors();                                                                \
  template <::linv::Scalar T>                                                                                  \
  const ::linv::kernels::Batched<T>& batched();                                                                \
  template <::linv::Real T>                                                                                    \
  const ::linv::kernels::Wls<T>& wls();                                                                        \
  template <::linv::Real T>                                                                                    \
  const ::linv::kernels::Slam<T>& slam();                                                                      \
  template <::linv::Real T>                                                                                    \
  const ::linv::kernels::Fmri<T>& fmri();                                                                      \
  const ::linv::kernels::Imaging& imaging();                                                                   \
  template <::linv::Real T>                                                                                    \
  std::unique_ptr<::linv::kernels::AdlSteps<T>> adl_steps(                                                     \
      ::linv::ConstMatrixView<T> X, ::linv::Matrix<T> D0, ::linv::ConstMatrixView<T> task,                     \
      ::linv::kernels::AdlConstraints constraints, const ::linv::kernels::GridSum* sum);                       \
  template <::linv::Real T>                                                                                    \
  std::unique_ptr<::linv::kernels::Parafac2Steps<T>> parafac2_steps(                                           \
      const std::vector<::linv::ConstMatrixView<T>>& slabs, const ::linv::kernels::SlabShare& share)

// The one object of a family class, made on first use: what each backend's family accessor returns.
template <class Family>
const Family& instance() {
  static const Family family;
  return family;
}

// The backend of `device`'s kind. Throws DeviceError when this linv was built without it.
template <Real T>
const Backend<T>& backend(Device device);

// The families of complex matrices: the dense core, the vector steps it uses and stacks, nothing else.
template <Complex T>
struct ComplexBackend {
  const Dense<T>& dense;
  const Vectors<T>& vectors;
  const Batched<T>& batched;
};
template <Complex T>
const ComplexBackend<T>& complex_backend(Device device);

template <Scalar T>
const Dense<T>& dense(Device device) {
  if constexpr (Complex<T>)
    return complex_backend<T>(device).dense;
  else
    return backend<T>(device).dense();
}
template <Scalar T>
const Vectors<T>& vectors(Device device) {
  if constexpr (Complex<T>)
    return complex_backend<T>(device).vectors;
  else
    return backend<T>(device).vectors();
}
template <Scalar T>
const Batched<T>& batched(Device device) {
  if constexpr (Complex<T>)
    return complex_backend<T>(device).batched;
  else
    return backend<T>(device).batched();
}
template <Real T>
const Wls<T>& wls(Device device) {
  return backend<T>(device).wls();
}
template <Real T>
const Slam<T>& slam(Device device) {
  return backend<T>(device).slam();
}
template <Real T>
const Fmri<T>& fmri(Device device) {
  return backend<T>(device).fmri();
}
inline const Mixed& mixed(Device device) { return backend<double>(device).mixed(); }
inline const Imaging& imaging(Device device) { return backend<double>(device).imaging(); }

}  // namespace linv::kernels
