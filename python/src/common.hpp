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
#include <optional>
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

// A matrix, or a C-contiguous stack of matrices (count, rows, cols), on a CUDA GPU from any framework that
// speaks DLPack (PyTorch, CuPy, JAX ...), used in place: see Gpu below.
template <class T>
using GpuInput = nb::ndarray<const T, nb::ndim<2>, nb::device::cuda>;
template <class T>
using GpuStack = nb::ndarray<const T, nb::ndim<3>, nb::c_contig, nb::device::cuda>;

// A 2-D array (NumPy's, or a GPU array on `device`) as a column-major view: Fortran order as it is; C
// order as its transpose, which `transposed` reports.
template <class T, class A>
linv::ConstMatrixView<T> view_any(const A& a, bool& transposed, linv::Device device) {
  const auto rows = static_cast<linv::index>(a.shape(0)), cols = static_cast<linv::index>(a.shape(1));
  const auto s0 = a.stride(0), s1 = a.stride(1);  // in elements
  if (rows == 0 || cols == 0) {  // nothing to read: any strides (NumPy gives an empty array odd ones) will do
    transposed = false;
    return {a.data(), rows, cols, std::max<linv::index>(rows, 1), device};
  }
  // a dimension of length 1 is never stepped along, so its stride is whatever NumPy left there (a slice
  // a[:, ::3] of one row, say): only the other's counts
  if ((s0 == 1 || rows == 1) && (cols <= 1 || s1 >= rows)) {
    transposed = false;
    return {a.data(), rows, cols, cols <= 1 ? rows : s1, device};
  }
  if ((s1 == 1 || cols == 1) && (rows <= 1 || s0 >= cols)) {
    transposed = true;
    return {a.data(), cols, rows, rows <= 1 ? cols : s0, device};
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
// through DLPack, as an array of `shape` and `strides` (in elements) over its storage; the array owns it.
template <class T>
nb::object to_gpu_array_nd(linv::Matrix<T>&& m, std::vector<std::size_t> shape, std::vector<std::int64_t> strides,
                           const std::string& framework) {
  auto [owned, owner] = owned_by_capsule(std::move(m));
  const int id = owned->device().index();
  if (framework == "torch") {
    // A DLPack capsule handed to torch.utils.dlpack.from_dlpack, which wraps it in one C call. (nanobind's
    // own PyTorch export hands over an array object instead, whose device and current stream
    // from_dlpack then asks for in Python: about 30 us a result. The result is complete when linv returns
    // it, so there is no stream to order it on.) Looked up once and kept for the process's life.
    static const nb::handle from_dlpack =
        nb::object(nb::module_::import_("torch.utils.dlpack").attr("from_dlpack")).release();
    return from_dlpack(nb::cast(nb::ndarray<T>(owned->data(), shape.size(), shape.data(), owner, strides.data(),
                                               nb::dtype<T>(), nb::device::cuda::value, id)));
  }
  return nb::cast(nb::ndarray<nb::cupy, T>(owned->data(), shape.size(), shape.data(), owner, strides.data(),
                                           nb::dtype<T>(), nb::device::cuda::value, id));
}

// The same for one matrix; transposed: the array is its transpose.
template <class T>
nb::object to_gpu_array(linv::Matrix<T>&& m, bool transposed, const std::string& framework) {
  std::vector<std::size_t> shape = {static_cast<std::size_t>(m.rows()), static_cast<std::size_t>(m.cols())};
  std::vector<std::int64_t> strides = {1, static_cast<std::int64_t>(m.ld())};
  if (transposed) std::swap(shape[0], shape[1]), std::swap(strides[0], strides[1]);
  return to_gpu_array_nd<T>(std::move(m), std::move(shape), std::move(strides), framework);
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

// Where a call's results go. Two placements with one interface (array, for a linv matrix): Host hands them
// to NumPy (from any device), Gpu to the GPU framework of the call's arrays, on their GPU.
struct Host {
  template <class T>
  nb::object array(linv::Matrix<T>&& m, bool transposed = false) const {
    return nb::cast(to_numpy<T>(std::move(m), transposed));
  }
};

// The column-major view of a 2-D array of `rows` x `cols` at `data` with strides s0, s1 (in elements), if it
// is one: unit stride down the columns and columns apart by at least `rows` (or a single row or column).
template <class T>
std::optional<linv::ConstMatrixView<T>> column_major_view(const T* data, linv::index rows, linv::index cols,
                                                         std::int64_t s0, std::int64_t s1, linv::Device device) {
  // an empty array holds nothing to lay out (frameworks give it any strides, 0 included)
  if (rows == 0 || cols == 0) return linv::ConstMatrixView<T>(data, rows, cols, std::max<linv::index>(rows, 1), device);
  if (rows > 1 && s0 != 1) return std::nullopt;
  if (cols <= 1) return linv::ConstMatrixView<T>(data, rows, cols, std::max<linv::index>(rows, 1), device);
  if (s1 < std::max<linv::index>(rows, 1)) return std::nullopt;
  return linv::ConstMatrixView<T>(data, rows, cols, s1, device);
}

// A call on GPU arrays of another framework (PyTorch, CuPy, anything with __dlpack__ on a CUDA device): linv
// computes on their GPU through its public API, reading them in place once the work queued there by their
// producer has finished, and hands results back as arrays of `framework` ("torch", else "cupy") on that GPU,
// without a copy. Every GPU entry point of _linv goes through one of these; the Python layer
// (linv/_common.py, _Gpu) checks dtypes and devices first and makes arrays column-major with their framework
// where an operation needs it.
class Gpu {
 public:
  template <class A>
  Gpu(const A& first, std::string framework)
      : device_(linv::Device::cuda(first.device_id())), framework_(std::move(framework)) {}

  linv::Device device() const { return device_; }
  const std::string& framework() const { return framework_; }

  // A 2-D GPU array as a column-major view in place. A C-ordered array is its transpose: where `transposed`
  // is given the view is that transpose (the caller knows what that means for its operation, and says
  // so in *transposed), else it is refused.
  template <class T, class A>
  linv::ConstMatrixView<T> view(const A& a, const char* name, bool* transposed = nullptr) const {
    require_here(a, name);
    const auto rows = static_cast<linv::index>(a.shape(0)), cols = static_cast<linv::index>(a.shape(1));
    if (auto v = column_major_view<T>(a.data(), rows, cols, a.stride(0), a.stride(1), device_)) {
      if (transposed) *transposed = false;
      return *v;
    }
    if (transposed)
      if (auto v = column_major_view<T>(a.data(), cols, rows, a.stride(1), a.stride(0), device_)) {
        *transposed = true;
        return *v;
      }
    throw linv::InvalidArgument(std::string(name) + " is a GPU array that is not column-major (Fortran order) in "
                                "one piece: make it so with its framework (the linv package does)");
  }

  // A C-contiguous GPU stack (count, n, k) as linv's batch layout: n x (k count), each matrix column-major,
  // which is its transpose (k x n as stored) read in C order.
  template <class T>
  linv::ConstMatrixView<T> batch(const GpuStack<T>& a, const char* name) const {
    require_here(a, name);
    const auto count = static_cast<linv::index>(a.shape(0)), rows = static_cast<linv::index>(a.shape(2)),
               k = static_cast<linv::index>(a.shape(1));
    return {a.data(), rows, k * count, std::max<linv::index>(rows, 1), device_};
  }

  // A copy in host memory of a view on this GPU, for the arguments linv reads on the CPU (ADL's task, the
  // starting factors of PARAFAC2), after the work queued on the GPU has finished.
  template <class T>
  linv::Matrix<T> host(linv::ConstMatrixView<T> v) const {
    linv::synchronize(device_);
    linv::Matrix<T> h = linv::Matrix<T>::uninitialized(v.rows(), v.cols());
    linv::copy<T>(v, h.view());
    return h;
  }

  // f() with the GIL released, once the work queued on this GPU (by any stream, any library) has finished.
  template <class F>
  auto run(F&& f) const {
    nb::gil_scoped_release released;
    linv::synchronize(device_);
    return f();
  }

  // A result as an array of the caller's framework on this GPU (moved there when linv left it on the host,
  // as it does for Batch-OMP's codes). transposed: the array is the matrix's transpose.
  template <class T>
  nb::object array(linv::Matrix<T>&& m, bool transposed = false) const {
    if (m.device() != device_) m = m.to(device_);
    return to_gpu_array<T>(std::move(m), transposed, framework_);
  }

  // Throws unless this call's GPU is `where`, the device of an object made earlier (`what`: "the factors").
  void require_at(linv::Device where, const std::string& what) const {
    if (where != device_)
      throw linv::InvalidArgument(what + " live on " + where.name() + " and this array on " + device_.name() +
                                  ": give arrays where " + what + " live (or make them there)");
  }

 private:
  template <class A>
  void require_here(const A& a, const char* name) const {
    if (a.device_id() != device_.index())
      throw linv::InvalidArgument(std::string(name) + " lies on cuda:" + std::to_string(a.device_id()) +
                                  " and the call's first array on " + device_.name() + ": put them on one GPU");
  }

  linv::Device device_;
  std::string framework_;
};

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

// A Solution's matrix placed by `out` (Host or Gpu), with its report as a dict when asked for.
template <class T, class Out>
nb::object solution(const Out& out, linv::Solution<T>&& s, bool report, bool transposed = false) {
  nb::object x = out.template array<T>(std::move(s.x), transposed);
  return report ? nb::object(nb::make_tuple(x, report_dict(s.report))) : x;
}

using linv::placed;  // a view on the device chosen (linv::placed, as the command line and MATLAB place theirs)

// Lets Ctrl-C stop an iterative run (k-SVD, ADL, PARAFAC2): called from linv's hooks (after each
// iteration; in k-SVD also before each atom update), it takes the GIL for a moment and raises what the
// signal handlers raise (KeyboardInterrupt) through linv, whose calls unwind cleanly.
inline void raise_pending_signals() {
  nb::gil_scoped_acquire acquire;
  if (PyErr_CheckSignals() != 0) throw nb::python_error();
}
inline std::function<void(int, double)> interruptible() {
  return [](int, double) { raise_pending_signals(); };
}

// The bindings of each part of the library (one file each).
void bind_batched(nb::module_& m);
void bind_imaging(nb::module_& m);
void bind_slam(nb::module_& m);
void bind_fmri(nb::module_& m);
void bind_io(nb::module_& m);

}  // namespace linv_py
