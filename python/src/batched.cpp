// _linv: stacks of small matrices (linv::batched) and weighted least squares (linv::wls and
// linv::WeightedLeastSquares). The Python layer (linv/__init__.py) broadcasts and lays stacks out.
#include "linv/batched.hpp"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "common.hpp"
#include "linv/wls.hpp"

namespace linv_py {
namespace {

using linv::index;

// Op::Transpose where the stack holds each matrix in C order (a_rows): read column-major, its transpose.
linv::Op transposed_if(bool a_rows) { return a_rows ? linv::Op::Transpose : linv::Op::None; }

// A stack's result: the matrices (an array placed by the caller), each matrix's pivot (0: regular, else the
// one it is singular by; an empty list when all were regular), the rcond of each singular one by matrix
// (0: a zero pivot; else below machine epsilon), and the report.
nb::tuple batch_tuple(nb::object x, std::size_t count, const linv::batched::Status& status) {
  std::vector<long long> pivots;
  nb::dict why;  // linv::batched::describe of each singular matrix, by flat index
  if (!status.singular.empty()) pivots.assign(count, 0);
  for (const linv::batched::Singular& m : status.singular) {
    pivots[static_cast<std::size_t>(m.matrix)] = m.pivot;
    why[nb::int_(m.matrix)] = linv::batched::describe(m);
  }
  return nb::make_tuple(x, pivots, why, report_dict(status.report));
}

template <class T>
nb::tuple batch_result(linv::batched::Result<T>&& r, std::vector<std::size_t> shape, std::vector<std::int64_t> strides) {
  const std::size_t count = shape.front();
  nb::object x = nb::cast(to_numpy_nd<T>(std::move(r.x), std::move(shape), std::move(strides)));
  return batch_tuple(x, count, r.status);
}

// The inverses of a C-ordered stack (count, n, n). Its memory holds the column-major transposes, which
// linv inverts in place; their inverses, read back in C order, are the inverses of the stack's matrices.
template <class T>
nb::tuple batched_inv(const Stack<T>& a, const std::string& device) {
  const auto count = static_cast<index>(a.shape(0)), n = static_cast<index>(a.shape(1));
  if (static_cast<index>(a.shape(2)) != n)
    throw linv::ShapeMismatch("batched inv needs square matrices", n, static_cast<index>(a.shape(2)), n, n);
  const linv::ConstMatrixView<T> A(a.data(), n, n * count, std::max<index>(n, 1));
  const linv::Device d = linv::choose_device(device, linv::Operation::BatchedInverse, n * n * count);
  linv::batched::Result<T> r;
  try {
    nb::gil_scoped_release released;
    linv::Matrix<T> copy;
    r = linv::batched::inv<T>(placed(A, d, copy));
    if (!r.x.device().is_cpu()) r.x = r.x.to(linv::Device::cpu());
  } catch (const linv::NonFiniteInput&) {  // linv read the transposes: name the entry as the caller has it
    for (index m = 0; m < count; ++m)
      for (index i = 0; i < n; ++i)
        for (index j = 0; j < n; ++j)
          if (const T v = a.data()[(m * n + i) * n + j]; !linv::is_finite(v))
            throw linv::NonFiniteInput(
                "A", fmt::format("matrix {} of the stack (from 0, as NumPy numbers them), row {}, column {}", m, i + 1, j + 1),
                linv::non_finite_part(v));
    throw;
  }
  const auto sn = static_cast<std::size_t>(n);
  return batch_result<T>(std::move(r), {static_cast<std::size_t>(count), sn, sn},
                         {static_cast<std::int64_t>(n * n), static_cast<std::int64_t>(n), 1});
}

// X(k) = A(k)^-1 B(k) for a stack `at` (count, n, n) and `bt` (count, k, n) holding each B(k) column-major;
// X comes back as (count, n, k). `at` holds each A(k) column-major (A(k)^T in C order), or, where a_rows
// (real matrices), each A(k) itself in C order: read column-major, that is A(k)^T, solved transposed.
template <class T>
nb::tuple batched_solve(const Stack<T>& at, const Stack<T>& bt, bool a_rows, const std::string& device) {
  const auto count = static_cast<index>(at.shape(0)), n = static_cast<index>(at.shape(1));
  const auto k = static_cast<index>(bt.shape(1));
  if (static_cast<index>(bt.shape(0)) != count || static_cast<index>(bt.shape(2)) != n)
    throw linv::ShapeMismatch("batched solve: one n x k block of right-hand sides per matrix", count * n, n,
                              static_cast<index>(bt.shape(0)) * static_cast<index>(bt.shape(2)), k);
  const linv::ConstMatrixView<T> A(at.data(), n, n * count, std::max<index>(n, 1));
  const linv::ConstMatrixView<T> B(bt.data(), n, k * count, std::max<index>(n, 1));
  const linv::Device d = linv::choose_device(device, linv::Operation::BatchedSolve, n * n * count);
  linv::batched::Result<T> r;
  {
    nb::gil_scoped_release released;
    linv::Matrix<T> a_copy, b_copy;
    r = linv::batched::solve<T>(placed(A, d, a_copy), placed(B, d, b_copy), {.op = transposed_if(a_rows)});
    if (!r.x.device().is_cpu()) r.x = r.x.to(linv::Device::cpu());
  }
  return batch_result<T>(std::move(r), {static_cast<std::size_t>(count), static_cast<std::size_t>(n), static_cast<std::size_t>(k)},
                         {static_cast<std::int64_t>(n * k), 1, static_cast<std::int64_t>(n)});
}

// The same for C-contiguous stacks on a GPU (linv_py::Gpu), computed there by the batched kernels; the
// results are arrays of the caller's framework on that GPU, shaped as the NumPy versions'.
template <class T>
nb::tuple batched_inv_gpu(const GpuStack<T>& a, const std::string& framework) {
  const Gpu gpu(a, framework);
  const auto count = static_cast<std::size_t>(a.shape(0)), n = static_cast<std::size_t>(a.shape(1));
  if (a.shape(2) != n)
    throw linv::ShapeMismatch("batched inv needs square matrices", static_cast<index>(n),
                              static_cast<index>(a.shape(2)), static_cast<index>(n), static_cast<index>(n));
  const linv::ConstMatrixView<T> A = gpu.batch<T>(a, "a");
  linv::batched::Result<T> r = gpu.run([&] { return linv::batched::inv<T>(A); });
  const auto ld = static_cast<std::int64_t>(r.x.ld()), sn = static_cast<std::int64_t>(n);
  nb::object x = to_gpu_array_nd<T>(std::move(r.x), {count, n, n}, {sn * ld, ld, 1}, framework);
  return batch_tuple(x, count, r.status);
}

template <class T>
nb::tuple batched_solve_gpu(const GpuStack<T>& at, const GpuStack<T>& bt, bool a_rows, const std::string& framework) {
  const Gpu gpu(at, framework);
  const auto count = static_cast<std::size_t>(at.shape(0)), n = static_cast<std::size_t>(at.shape(1));
  const auto k = static_cast<std::size_t>(bt.shape(1));
  if (bt.shape(0) != count || bt.shape(2) != n || at.shape(2) != n)
    throw linv::ShapeMismatch("batched solve: one n x k block of right-hand sides per n x n matrix",
                              static_cast<index>(count * n), static_cast<index>(at.shape(2)),
                              static_cast<index>(bt.shape(0) * bt.shape(2)), static_cast<index>(k));
  const linv::ConstMatrixView<T> A = gpu.batch<T>(at, "a"), B = gpu.batch<T>(bt, "b");
  linv::batched::Result<T> r =
      gpu.run([&] { return linv::batched::solve<T>(A, B, {.op = transposed_if(a_rows)}); });
  const auto ld = static_cast<std::int64_t>(r.x.ld()), sk = static_cast<std::int64_t>(k);
  nb::object x = to_gpu_array_nd<T>(std::move(r.x), {count, n, k}, {sk * ld, 1, ld}, framework);
  return batch_tuple(x, count, r.status);
}

// ---- weighted least squares ----

linv::WlsOptions wls_options(const std::string& precision, const std::string& storage, const std::string& weights,
                             double tolerance, int max_iterations, bool check) {
  linv::WlsOptions o;
  if (precision == "native") o.precision = linv::Precision::Native;
  else if (precision == "mixed") o.precision = linv::Precision::Mixed;
  else throw linv::InvalidArgument("precision is 'native' or 'mixed', not '" + precision + "'");
  if (storage == "full") o.storage = linv::Storage::Full;
  else if (storage == "packed") o.storage = linv::Storage::Packed;
  else throw linv::InvalidArgument("storage is 'full' or 'packed', not '" + storage + "'");
  if (weights == "squared") o.weights = linv::Weights::Squared;
  else if (weights == "plain") o.weights = linv::Weights::Plain;
  else throw linv::InvalidArgument("weights is 'squared' (d holds the diagonal of D^2) or 'plain' (of D), not '" +
                                   weights + "'");
  o.tolerance = tolerance;
  o.max_iterations = max_iterations;
  o.compute_residual = check;
  return o;
}

// form: "normal" (a m x n, d, b) or "statsmodels" (X n x p, w, y), linv::WlsForm's names.
template <class T>
nb::tuple wls(const Input<T>& a, const Input<T>& d, const Input<T>& b, const std::string& precision,
              const std::string& storage, const std::string& weights, double tolerance, int max_iterations,
              const std::string& device, bool check, const std::string& form) {
  linv::Matrix<T> a_copy, d_copy, b_copy;
  const linv::ConstMatrixView<T> A = column_major(a, a_copy), D = column_major(d, d_copy), B = column_major(b, b_copy);
  linv::WlsOptions o = wls_options(precision, storage, weights, tolerance, max_iterations, check);
  o.form = linv::parse_wls_form(form);
  const linv::index unknowns = o.form == linv::WlsForm::Design ? A.cols() : A.rows();
  const linv::Device dev = linv::choose_device(device, linv::Operation::WeightedLeastSquares, unknowns);
  linv::Solution<T> s;
  {
    nb::gil_scoped_release released;
    linv::Matrix<T> ga, gd, gb;
    s = linv::wls<T>(placed(A, dev, ga), placed(D, dev, gd), placed(B, dev, gb), o);
  }
  return nb::make_tuple(numpy_object<T>(std::move(s.x)), report_dict(s.report));
}

// The same for GPU arrays, on their GPU (d of shape (n, 1), b (n, k), all column-major).
template <class T>
nb::tuple wls_gpu(const GpuInput<T>& a, const GpuInput<T>& d, const GpuInput<T>& b, const std::string& precision,
                  const std::string& storage, const std::string& weights, double tolerance, int max_iterations,
                  bool check, const std::string& framework, const std::string& form) {
  const Gpu gpu(a, framework);
  const linv::ConstMatrixView<T> A = gpu.view<T>(a, "a"), D = gpu.view<T>(d, "d"), B = gpu.view<T>(b, "b");
  linv::WlsOptions o = wls_options(precision, storage, weights, tolerance, max_iterations, check);
  o.form = linv::parse_wls_form(form);
  linv::Solution<T> s = gpu.run([&] { return linv::wls<T>(A, D, B, o); });
  return nb::make_tuple(gpu.array<T>(std::move(s.x)), report_dict(s.report));
}

// linv::WeightedLeastSquares for one A on one device: factor(d) for each set of weights, solve(b) after.
template <class T>
struct WlsObject {
  std::unique_ptr<linv::WeightedLeastSquares<T>> system;
  linv::Device device;

  void factor(const Input<T>& d) {
    linv::Matrix<T> copy;
    const linv::ConstMatrixView<T> D = column_major(d, copy);
    nb::gil_scoped_release released;
    linv::Matrix<T> on;
    system->factor(placed(D, device, on));
  }
  nb::tuple solve(const Input<T>& b) {
    linv::Matrix<T> copy;
    const linv::ConstMatrixView<T> B = column_major(b, copy);
    linv::Solution<T> s;
    {
      nb::gil_scoped_release released;
      linv::Matrix<T> on;
      s = system->solve(placed(B, device, on));
    }
    return nb::make_tuple(numpy_object<T>(std::move(s.x)), report_dict(s.report));
  }
  // Weights and right-hand sides on the system's GPU, used in place; x as an array of b's framework there.
  void factor_gpu(const GpuInput<T>& d) {
    const Gpu gpu(d, "");
    gpu.require_at(device, "the system's a and C");
    const linv::ConstMatrixView<T> D = gpu.view<T>(d, "d");
    gpu.run([&] { system->factor(D); });
  }
  nb::tuple solve_gpu(const GpuInput<T>& b, const std::string& framework) {
    const Gpu gpu(b, framework);
    gpu.require_at(device, "the system's a and C");
    const linv::ConstMatrixView<T> B = gpu.view<T>(b, "b");
    linv::Solution<T> s = gpu.run([&] { return system->solve(B); });
    return nb::make_tuple(gpu.array<T>(std::move(s.x)), report_dict(s.report));
  }
};

template <class T>
WlsObject<T>* make_wls(const Input<T>& a, const std::string& precision, const std::string& storage,
                       const std::string& weights, double tolerance, int max_iterations, const std::string& device,
                       bool check) {
  linv::Matrix<T> copy;
  const linv::ConstMatrixView<T> A = column_major(a, copy);
  const linv::WlsOptions o = wls_options(precision, storage, weights, tolerance, max_iterations, check);
  const linv::Device dev = linv::choose_device(device, linv::Operation::WeightedLeastSquares, A.rows());
  nb::gil_scoped_release released;
  linv::Matrix<T> on;
  return new WlsObject<T>{std::make_unique<linv::WeightedLeastSquares<T>>(placed(A, dev, on), o), dev};
}

// A system for a GPU array a, on its GPU (a column-major).
template <class T>
WlsObject<T>* make_wls_gpu(const GpuInput<T>& a, const std::string& precision, const std::string& storage,
                           const std::string& weights, double tolerance, int max_iterations, bool check) {
  const Gpu gpu(a, "");
  const linv::ConstMatrixView<T> A = gpu.view<T>(a, "a");
  const linv::WlsOptions o = wls_options(precision, storage, weights, tolerance, max_iterations, check);
  return gpu.run([&] { return new WlsObject<T>{std::make_unique<linv::WeightedLeastSquares<T>>(A, o), gpu.device()}; });
}

// Stacks, in every element type (complex ones too).
template <class T>
void bind_stacks(nb::module_& m) {
  m.def("batched_inv", &batched_inv<T>, nb::arg("a"), nb::arg("device"));
  m.def("batched_solve", &batched_solve<T>, nb::arg("at"), nb::arg("bt"), nb::arg("a_rows"), nb::arg("device"));
  m.def("batched_inv_gpu", &batched_inv_gpu<T>, nb::arg("a"), nb::arg("framework"));
  m.def("batched_solve_gpu", &batched_solve_gpu<T>, nb::arg("at"), nb::arg("bt"), nb::arg("a_rows"),
        nb::arg("framework"));
}

template <class T>
void bind_typed(nb::module_& m, const char* suffix) {
  m.def("wls_gpu", &wls_gpu<T>, nb::arg("a"), nb::arg("d"), nb::arg("b"), nb::arg("precision"), nb::arg("storage"),
        nb::arg("weights"), nb::arg("tolerance"), nb::arg("max_iterations"), nb::arg("check"), nb::arg("framework"),
        nb::arg("form"));
  m.def("wls", &wls<T>, nb::arg("a"), nb::arg("d"), nb::arg("b"), nb::arg("precision"), nb::arg("storage"),
        nb::arg("weights"), nb::arg("tolerance"), nb::arg("max_iterations"), nb::arg("device"), nb::arg("check"),
        nb::arg("form"));
  nb::class_<WlsObject<T>>(m, (std::string("WeightedLeastSquares") + suffix).c_str())
      .def("factor", &WlsObject<T>::factor)
      .def("solve", &WlsObject<T>::solve)
      .def("factor_gpu", &WlsObject<T>::factor_gpu, nb::arg("d"))
      .def("solve_gpu", &WlsObject<T>::solve_gpu, nb::arg("b"), nb::arg("framework"))
      .def_prop_ro("device", [](const WlsObject<T>& o) { return o.device.name(); });
  m.def("wls_object", &make_wls<T>, nb::arg("a"), nb::arg("precision"), nb::arg("storage"), nb::arg("weights"),
        nb::arg("tolerance"), nb::arg("max_iterations"), nb::arg("device"), nb::arg("check"));
  m.def("wls_object_gpu", &make_wls_gpu<T>, nb::arg("a"), nb::arg("precision"), nb::arg("storage"),
        nb::arg("weights"), nb::arg("tolerance"), nb::arg("max_iterations"), nb::arg("check"));
}

}  // namespace

// Batches and weighted least squares (one file: one compile).
void bind_batched(nb::module_& m) {
  m.attr("batched_max_order") = static_cast<long long>(linv::batched::kMaxOrder);
  bind_stacks<double>(m);
  bind_stacks<float>(m);
  bind_stacks<std::complex<double>>(m);
  bind_stacks<std::complex<float>>(m);
  bind_typed<double>(m, "64");
  bind_typed<float>(m, "32");
}

}  // namespace linv_py
