// What the files of linv's Python module (_linv) share: NumPy arrays as linv matrix views, linv matrices
// handed to NumPy without a copy, reports as dicts, and the choice of device. Only the public C++ API.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "linv/dense.hpp"
#include "linv/device.hpp"
#include "linv/errors.hpp"
#include "linv/operation.hpp"
#include "linv/report.hpp"

namespace linv_py {

namespace nb = nanobind;

template <class T>
using Array = nb::ndarray<nb::numpy, T, nb::ndim<2>>;
template <class T>
using AnyArray = nb::ndarray<nb::numpy, T>;  // any number of dimensions
template <class T>
using Input = nb::ndarray<const T, nb::ndim<2>, nb::device::cpu>;
// A C-contiguous stack of matrices (count, rows, cols).
template <class T>
using Stack = nb::ndarray<const T, nb::ndim<3>, nb::c_contig, nb::device::cpu>;

// A matrix on a CUDA GPU from any framework that speaks DLPack (PyTorch, CuPy, JAX ...), used in place.
template <class T>
using GpuInput = nb::ndarray<const T, nb::ndim<2>, nb::device::cuda>;

// A 2-D array (NumPy's, or a GPU array on `device`) as a column-major view: Fortran order as it is; C
// order as its transpose, which `transposed` reports.
template <class T, class A>
linv::ConstMatrixView<T> view_any(const A& a, bool& transposed, linv::Device device) {
  const auto rows = static_cast<linv::index>(a.shape(0)), cols = static_cast<linv::index>(a.shape(1));
  const auto s0 = a.stride(0), s1 = a.stride(1);  // in elements
  if (s0 == 1 && (cols <= 1 || s1 >= rows)) {
    transposed = false;
    return {a.data(), rows, cols, cols <= 1 ? std::max<linv::index>(rows, 1) : s1, device};
  }
  if (s1 == 1 && (rows <= 1 || s0 >= cols)) {
    transposed = true;
    return {a.data(), cols, rows, rows <= 1 ? std::max<linv::index>(cols, 1) : s0, device};
  }
  throw linv::InvalidArgument("the array is neither C- nor Fortran-contiguous in one dimension: pass "
                              "numpy.ascontiguousarray(a)");
}
template <class T>
linv::ConstMatrixView<T> view(const Input<T>& a, bool& transposed) {
  return view_any<T>(a, transposed, linv::Device::cpu());
}

// A column-major view of `a`: in place when it is Fortran-ordered, else a column-major copy in `copy`.
template <class T>
linv::ConstMatrixView<T> column_major(const Input<T>& a, linv::Matrix<T>& copy) {
  bool transposed = false;
  const linv::ConstMatrixView<T> v = view(a, transposed);
  if (!transposed) return v;
  copy = linv::Matrix<T>(v.cols(), v.rows());
  for (linv::index j = 0; j < v.rows(); ++j)
    for (linv::index i = 0; i < v.cols(); ++i) copy(i, j) = v(j, i);
  return copy.view();
}

// linv's matrix moved to the heap, and the capsule that deletes it: the owner of an array over its memory.
template <class T>
std::pair<linv::Matrix<T>*, nb::capsule> owned_by_capsule(linv::Matrix<T>&& m) {
  auto* owned = new linv::Matrix<T>(std::move(m));
  return {owned, nb::capsule(owned, [](void* p) noexcept { delete static_cast<linv::Matrix<T>*>(p); })};
}

// A linv matrix as a NumPy array of any shape over its storage (strides in elements), owning it.
template <class T>
AnyArray<T> to_numpy_nd(linv::Matrix<T>&& m, std::vector<std::size_t> shape, std::vector<std::int64_t> strides) {
  if (!m.device().is_cpu()) m = m.to(linv::Device::cpu());
  auto [owned, owner] = owned_by_capsule(std::move(m));
  return AnyArray<T>(owned->data(), shape.size(), shape.data(), owner, strides.data());
}

// A linv matrix (on any device: brought to the CPU) as a NumPy array that owns it; transposed: the array
// is its transpose.
template <class T>
Array<T> to_numpy(linv::Matrix<T>&& m, bool transposed) {
  if (!m.device().is_cpu()) m = m.to(linv::Device::cpu());
  auto [owned, owner] = owned_by_capsule(std::move(m));
  std::size_t shape[2] = {static_cast<std::size_t>(owned->rows()), static_cast<std::size_t>(owned->cols())};
  std::int64_t strides[2] = {1, static_cast<std::int64_t>(owned->ld())};
  if (transposed) std::swap(shape[0], shape[1]), std::swap(strides[0], strides[1]);
  return Array<T>(owned->data(), 2, shape, owner, strides);
}

// A linv matrix on a GPU handed to PyTorch (framework "torch") or CuPy (anything else) without a copy,
// through DLPack; the array owns it. transposed: the array is its transpose.
template <class T>
nb::object to_gpu_array(linv::Matrix<T>&& m, bool transposed, const std::string& framework) {
  auto [owned, owner] = owned_by_capsule(std::move(m));
  std::size_t shape[2] = {static_cast<std::size_t>(owned->rows()), static_cast<std::size_t>(owned->cols())};
  std::int64_t strides[2] = {1, static_cast<std::int64_t>(owned->ld())};
  if (transposed) std::swap(shape[0], shape[1]), std::swap(strides[0], strides[1]);
  const int id = owned->device().index();
  if (framework == "torch")
    return nb::cast(nb::ndarray<nb::pytorch, T, nb::ndim<2>>(owned->data(), 2, shape, owner, strides, nb::dtype<T>(),
                                                             nb::device::cuda::value, id));
  return nb::cast(nb::ndarray<nb::cupy, T, nb::ndim<2>>(owned->data(), 2, shape, owner, strides, nb::dtype<T>(),
                                                        nb::device::cuda::value, id));
}

template <class T>
nb::object numpy_object(linv::Matrix<T>&& m) {
  return nb::cast(to_numpy<T>(std::move(m), false));
}

// A std::vector as a 1-D NumPy array (a copy).
template <class T>
nb::object vector_to_numpy(const std::vector<T>& v) {
  auto* owned = new std::vector<T>(v);
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const std::size_t shape[1] = {owned->size()};
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), 1, shape, owner));
}

inline nb::dict report_dict(const linv::Report& r) {
  nb::dict d;
  d["operation"] = std::string(linv::to_string(r.operation));
  d["method"] = std::string(linv::to_string(r.method));
  d["method_reason"] = r.method_reason;
  d["device"] = r.device.name();
  d["precision"] = r.precision;
  d["seconds"] = r.seconds;
  d["iterations"] = r.iterations;
  d["stop"] = std::string(linv::to_string(r.stop));
  d["scaled_residual"] = r.scaled_residual;
  d["rcond"] = r.rcond;
  d["backward_error"] = r.backward_error;
  d["growth"] = r.growth;
  d["rank"] = r.rank;
  d["notes"] = r.notes;
  return d;
}

// "cpu", "cuda", "cuda:N" as Device::parse reads them; "auto": linv's own choice for this operation and size
// (auto_device, as the command line's --device auto).
inline linv::Device pick_device(const std::string& device, linv::Operation op, linv::index size,
                                linv::Method method = linv::Method::Auto) {
  return device == "auto" ? linv::auto_device(op, size, method) : linv::Device::parse(device);
}

// A view on `device`: the view itself on the CPU, else a copy there kept in `copy`.
template <class T>
linv::ConstMatrixView<T> placed(linv::ConstMatrixView<T> v, linv::Device device, linv::Matrix<T>& copy) {
  if (device.is_cpu()) return v;
  copy = linv::Matrix<T>::copy_of(v).to(device);
  return copy.view();
}

// A progress hook that lets Ctrl-C stop an iterative run (k-SVD, ADL, PARAFAC2) after the iteration in
// progress: it takes the GIL for a moment and raises what the signal handlers raise (KeyboardInterrupt)
// through linv, whose calls unwind cleanly.
inline std::function<void(int, double)> interruptible() {
  return [](int, double) {
    nb::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  };
}

// The bindings of each part of the library (one file each).
void bind_batched(nb::module_& m);
void bind_imaging(nb::module_& m);
void bind_slam(nb::module_& m);
void bind_fmri(nb::module_& m);
void bind_io(nb::module_& m);

}  // namespace linv_py
