// A backend: every kernel family for one kind of device, and the one place that picks it.
//
// src/core/ writes its algorithms against the families (src/kernels/*.hpp) and asks for them by the device
// its operands live on, `kernels::dense<T>(A.device())`; src/kernels/registry.cpp, the only file that knows
// which backends were built, maps the device's kind to its backend. A backend (src/cpu/, src/cuda/)
// implements each family and one Backend<T> handing them out; a family it leaves out is a compile error
// (every method below and in the families is pure virtual). Adding a backend adds files and touches no
// algorithm: its directory, a Device::Kind, and a case in registry.cpp and runtime.cpp.
#pragma once

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
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const Dense<T>& dense() const = 0;
  virtual const Vectors<T>& vectors() const = 0;
  virtual const Batched<T>& batched() const = 0;
  virtual const Wls<T>& wls() const = 0;
  virtual const Slam<T>& slam() const = 0;
  virtual const Fmri<T>& fmri() const = 0;
  // The families whose data is float64 whatever T is: the same objects for both element types.
  virtual const Mixed& mixed() const = 0;
  virtual const Imaging& imaging() const = 0;
};

// The one object of a family class, made on first use: what each backend's family accessor returns
// (cpu::dense<T>(), cuda::wls<T>() ...).
template <class Family>
const Family& instance() {
  static const Family family;
  return family;
}

// The backend of `device`'s kind. Throws DeviceError when this linv was built without it.
template <Real T>
const Backend<T>& backend(Device device);

template <Real T>
const Dense<T>& dense(Device device) {
  return backend<T>(device).dense();
}
template <Real T>
const Vectors<T>& vectors(Device device) {
  return backend<T>(device).vectors();
}
template <Real T>
const Batched<T>& batched(Device device) {
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
