// linv's Python module (_linv): the public C++ API over NumPy arrays, nothing of its own. Inputs are used
// in place where the layout allows; results are linv's own matrices handed to NumPy without a copy; the
// GIL is released while linv computes; linv's errors become the Python exceptions of linv/__init__.py.
#include <cmath>
#include <complex>
#include <string>
#include <utility>

#include <nanobind/stl/complex.h>

#include "common.hpp"

namespace nb = nanobind;

namespace {

using linv_py::Array;
using linv_py::Input;
using linv_py::report_dict;
using linv_py::to_numpy;
using linv_py::view;

// inv's and solve's keywords: method, precision ("native" or "mixed": a lower-precision factorization
// refined to float64) and the factorization's precision under "mixed" (factor: "auto", "float32", ...).
linv::SolveOptions options(const std::string& method, const std::string& precision, const std::string& factor,
                           bool check) {
  linv::SolveOptions o;
  o.method = linv::parse_method(method);
  if (precision == "mixed")
    o.precision = linv::Precision::Mixed;
  else if (precision != "native")
    throw linv::InvalidArgument("precision is 'native' or 'mixed', not '" + precision + "'");
  o.factor_precision = linv::parse_factor_precision(factor);
  o.compute_residual = check;
  return o;
}

// Runs f on `device` (the data moves there and back when it is a GPU) with the GIL released.
template <class T, class F>
linv::Solution<T> run(const std::string& device, F&& f) {
  const linv::Device d = linv::Device::parse(device);
  nb::gil_scoped_release released;
  linv::Solution<T> s = f(d);
  if (!s.x.device().is_cpu()) s.x = s.x.to(linv::Device::cpu());
  return s;
}

// The result as a NumPy array (transposed: the array is the matrix's transpose), with the report if asked.
template <class T>
nb::object finish(linv::Solution<T>&& s, bool transposed, bool report) {
  nb::object x = nb::cast(to_numpy<T>(std::move(s.x), transposed));
  return report ? nb::make_tuple(x, report_dict(s.report)) : x;
}

// The error linv raised for the transpose of a C-ordered array, with the entry named as the caller sees it.
template <class T>
linv::NonFiniteInput non_finite_as_given(const Input<T>& a) {
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t j = 0; j < a.shape(1); ++j) {
      const T v = a.data()[i * static_cast<std::size_t>(a.stride(0)) + j * static_cast<std::size_t>(a.stride(1))];
      if (!linv::is_finite(v))
        return {"A", static_cast<std::int64_t>(i), static_cast<std::int64_t>(j), linv::non_finite_part(v)};
    }
  return {"A", 0, 0, 0.0};  // not reached: linv found one
}

// f(), where linv reads a C-ordered `a` as its transpose: a NaN or Inf is named where the caller has it.
template <class T, class F>
auto as_given(const Input<T>& a, bool transposed, F&& f) {
  try {
    return f();
  } catch (const linv::NonFiniteInput&) {
    if (!transposed) throw;
    throw non_finite_as_given(a);
  }
}

template <class T>
nb::object inv(const Input<T>& a, const std::string& method, const std::string& precision,
                   const std::string& factor, const std::string& device, bool check, bool report) {
  bool transposed = false;
  const linv::ConstMatrixView<T> A = view(a, transposed);
  linv::Solution<T> s = as_given(a, transposed, [&] {
    return run<T>(device, [&](linv::Device d) {
      if (d.is_cpu()) return linv::inv<T>(A, options(method, precision, factor, check));
      const linv::Matrix<T> on = linv::Matrix<T>::copy_of(A).to(d);
      return linv::inv<T>(on.view(), options(method, precision, factor, check));
    });
  });
  return finish<T>(std::move(s), transposed, report);
}

using linv_py::column_major;
using linv_py::Gpu;
using linv_py::GpuInput;

// GPU arrays (DLPack) stay on their GPU (linv_py::Gpu): read in place once the work queued there by their
// producer has finished, results back as the caller's kind of array on the same GPU. A C-ordered a is
// inverted in place as the transpose of a Fortran one (inv(A^T) = inv(A)^T).
template <class T>
nb::object inv_gpu(const GpuInput<T>& a, const std::string& method, const std::string& precision,
                   const std::string& factor, bool check, bool report, const std::string& framework) {
  const Gpu gpu(a, framework);
  bool transposed = false;
  const linv::ConstMatrixView<T> A = gpu.view<T>(a, "a", &transposed);
  const linv::SolveOptions o = options(method, precision, factor, check);
  return linv_py::solution<T>(gpu, gpu.run([&] { return linv::inv<T>(A, o); }), report, transposed);
}

// a and b column-major (the Python layer makes them so with the caller's framework, on the GPU).
template <class T>
nb::object solve_gpu(const GpuInput<T>& a, const GpuInput<T>& b, const std::string& method,
                     const std::string& precision, const std::string& factor, bool check, bool report,
                     const std::string& framework) {
  const Gpu gpu(a, framework);
  const linv::ConstMatrixView<T> A = gpu.view<T>(a, "a"), B = gpu.view<T>(b, "b");
  const linv::SolveOptions o = options(method, precision, factor, check);
  return linv_py::solution<T>(gpu, gpu.run([&] { return linv::solve<T>(A, B, o); }), report);
}

// Where a Hermitian GPU array may be read in either order: a real symmetric one is its own transpose; a
// complex C-ordered one is read as conj(A), so it must come column-major (the Python layer makes it so).
template <class T>
bool* either_order_if_real(bool& transposed) {
  return linv::Real<T> ? &transposed : nullptr;
}

// Cholesky of a symmetric (Hermitian) a: a real one in any order.
template <class T>
nb::object cholesky_gpu(const GpuInput<T>& a, bool check, bool report, const std::string& framework) {
  const Gpu gpu(a, framework);
  bool transposed = false;
  const linv::ConstMatrixView<T> A = gpu.view<T>(a, "a", either_order_if_real<T>(transposed));
  linv::SolveOptions o;
  o.compute_residual = check;
  return linv_py::solution<T>(gpu, gpu.run([&] { return linv::cholesky<T>(A, o); }), report);
}

// (sign, log |det A|) as NumPy's slogdet gives them: for complex T the sign is the complex number det / |det|.
template <class T>
nb::tuple determinant_tuple(const linv::Determinant& d) {
  if constexpr (linv::Complex<T>)
    return nb::make_tuple(static_cast<double>(d.sign) * std::polar(1.0, d.phase), d.log_abs);
  else
    return nb::make_tuple(d.sign, d.log_abs);
}

// (sign, log |det a|) by an LU factorization on a's GPU (det A^T = det A: any order in place).
template <class T>
nb::tuple slogdet_gpu(const GpuInput<T>& a) {
  const Gpu gpu(a, "");
  bool transposed = false;
  const linv::ConstMatrixView<T> A = gpu.view<T>(a, "a", &transposed);
  return determinant_tuple<T>(gpu.run([&] { return linv::LU<T>(A).determinant(); }));
}

template <class T>
nb::object solve(const Input<T>& a, const Input<T>& b, const std::string& method, const std::string& precision,
                   const std::string& factor, const std::string& device,
                 bool check, bool report) {
  linv::Matrix<T> a_copy, b_copy;
  const linv::ConstMatrixView<T> A = column_major(a, a_copy), B = column_major(b, b_copy);
  return finish<T>(run<T>(device, [&](linv::Device d) {
                     if (d.is_cpu()) return linv::solve<T>(A, B, options(method, precision, factor, check));
                     const linv::Matrix<T> ga = linv::Matrix<T>::copy_of(A).to(d), gb = linv::Matrix<T>::copy_of(B).to(d);
                     return linv::solve<T>(ga.view(), gb.view(), options(method, precision, factor, check));
                   }),
                   false, report);
}

// A Hermitian (for real T: symmetric) a as a column-major view. A C-ordered array is read as its transpose,
// which is A itself where A is real, but conj(A) where it is complex: such an array is copied.
template <class T>
linv::ConstMatrixView<T> hermitian_view(const Input<T>& a, bool& transposed, linv::Matrix<T>& copy) {
  if constexpr (linv::Complex<T>) {
    transposed = false;
    return column_major(a, copy);
  } else {
    (void)copy;
    return view(a, transposed);
  }
}

// The Cholesky factor L of a symmetric (Hermitian) A.
template <class T>
nb::object cholesky(const Input<T>& a, const std::string& device, bool check, bool report) {
  bool transposed = false;
  linv::Matrix<T> copy;
  const linv::ConstMatrixView<T> A = hermitian_view(a, transposed, copy);
  linv::SolveOptions o;
  o.compute_residual = check;
  return finish<T>(as_given(a, transposed,
                            [&] {
                              return run<T>(device, [&](linv::Device d) {
                                if (d.is_cpu()) return linv::cholesky<T>(A, o);
                                const linv::Matrix<T> on = linv::Matrix<T>::copy_of(A).to(d);
                                return linv::cholesky<T>(on.view(), o);
                              });
                            }),
                   false, report);
}

linv::LstsqOptions lstsq_options(double rcond, bool check) {
  linv::LstsqOptions o;
  o.rcond = rcond;
  o.compute_residual = check;
  return o;
}

template <class T>
nb::object lstsq(const Input<T>& a, const Input<T>& b, double rcond, bool check, bool report) {
  linv::Matrix<T> a_copy, b_copy;
  const linv::ConstMatrixView<T> A = column_major(a, a_copy), B = column_major(b, b_copy);
  return finish<T>(run<T>("cpu", [&](linv::Device) { return linv::lstsq<T>(A, B, lstsq_options(rcond, check)); }),
                   false, report);
}

// pinv(A^T) = pinv(A)^T: a C-ordered array is used in place as its transpose.
template <class T>
nb::object pinv(const Input<T>& a, double rcond, bool check, bool report) {
  bool transposed = false;
  const linv::ConstMatrixView<T> A = view(a, transposed);
  return finish<T>(as_given(a, transposed,
                            [&] {
                              return run<T>("cpu", [&](linv::Device) { return linv::pinv<T>(A, lstsq_options(rcond, check)); });
                            }),
                   transposed, report);
}

// (sign, log |det A|) from an LU factorization (det A^T = det A: any order in place).
template <class T>
nb::tuple slogdet(const Input<T>& a, const std::string& device) {
  bool transposed = false;
  const linv::ConstMatrixView<T> A = view(a, transposed);
  const linv::Device d = linv::Device::parse(device);
  const linv::Determinant det = as_given(a, transposed, [&] {
    nb::gil_scoped_release released;
    if (d.is_cpu()) return linv::LU<T>(A).determinant();
    const linv::Matrix<T> on = linv::Matrix<T>::copy_of(A).to(d);
    return linv::LU<T>(on.view()).determinant();
  });
  return determinant_tuple<T>(det);
}

// Factor once, use many times: linv's LU and Cholesky objects, their factors on `device`, right-hand
// sides moved there and results back.
template <class Decomposition, class T>
struct Factored {
  Decomposition factors;
  linv::Device device;

  linv::Matrix<T> on_device(linv::ConstMatrixView<T> B) const { return linv::Matrix<T>::copy_of(B).to(device); }
  nb::object solve(const Input<T>& b) const {
    linv::Matrix<T> b_copy;
    const linv::ConstMatrixView<T> B = column_major(b, b_copy);
    linv::Matrix<T> x;
    {
      nb::gil_scoped_release released;
      x = device.is_cpu() ? factors.solve(B) : factors.solve(on_device(B).view()).to(linv::Device::cpu());
    }
    return nb::cast(to_numpy<T>(std::move(x), false));
  }
  nb::object inverse() const {
    linv::Matrix<T> x;
    {
      nb::gil_scoped_release released;
      x = factors.inverse().to(linv::Device::cpu());
    }
    return nb::cast(to_numpy<T>(std::move(x), false));
  }
  // b on the factors' GPU: x there, as an array of b's framework.
  nb::object solve_gpu(const GpuInput<T>& b, const std::string& framework) const {
    const Gpu gpu(b, framework);
    gpu.require_at(device, "the factors");
    const linv::ConstMatrixView<T> B = gpu.view<T>(b, "b");
    return gpu.array<T>(gpu.run([&] { return factors.solve(B); }));
  }
  // The inverse on the factors' GPU, as an array of `framework`.
  nb::object inverse_gpu(const std::string& framework) const {
    if (device.is_cpu()) throw linv::InvalidArgument("the factors live on the CPU: use inv()");
    linv::Matrix<T> x;
    {
      nb::gil_scoped_release released;
      x = factors.inverse();
    }
    return linv_py::to_gpu_array<T>(std::move(x), false, framework);
  }
  nb::tuple slogdet() const { return determinant_tuple<T>(factors.determinant()); }
  double rcond() const {
    nb::gil_scoped_release released;
    return factors.rcond();
  }
};

template <class T>
using LUObject = Factored<linv::LU<T>, T>;

// LAPACK's getrf result for A itself, in host memory: L (unit, below the diagonal) and U (on and above) with
// the power-of-two scaling LU applied undone on U (L is the same for 2^-e A as for A). What SciPy's
// lu_factor returns; only partial pivoting's factors are of A (a randomized LU's are of A_r).
// linv::plu of any m x n matrix: (LAPACK's factors, their 1-based interchanges, the first zero pivot or 0).
template <class T>
nb::tuple plu(const Input<T>& a) {
  linv::Matrix<T> copy;
  const linv::ConstMatrixView<T> A = column_major(a, copy);
  linv::PluFactors<T> f;
  {
    nb::gil_scoped_release released;
    f = linv::plu<T>(A);
  }
  return nb::make_tuple(to_numpy<T>(std::move(f.lu), false), f.pivots, f.zero_pivot);
}

// linv::plu of a square column-major GPU array on its GPU: (the factors as the caller's kind of array there,
// the 1-based interchanges in host memory, the first zero pivot or 0).
template <class T>
nb::tuple plu_gpu(const GpuInput<T>& a, const std::string& framework) {
  const Gpu gpu(a, framework);
  const linv::ConstMatrixView<T> A = gpu.view<T>(a, "a");
  linv::PluFactors<T> f = gpu.run([&] { return linv::plu<T>(A); });
  return nb::make_tuple(gpu.array<T>(std::move(f.lu)), f.pivots, f.zero_pivot);
}

// linv::plu_solve on the factors' GPU; lu and b column-major there, pivots 1-based in host memory. trans:
// "N" or "C" (the conjugate transpose; the Python layer turns a plain transpose of a complex system into it).
template <class T>
nb::object plu_solve_gpu(const GpuInput<T>& lu, const std::vector<int>& pivots, const GpuInput<T>& b,
                         const std::string& trans, const std::string& framework) {
  if (trans != "N" && trans != "C") throw linv::InvalidArgument("trans is 'N' or 'C', not '" + trans + "'");
  const Gpu gpu(lu, framework);
  const linv::ConstMatrixView<T> LU = gpu.view<T>(lu, "lu"), B = gpu.view<T>(b, "b");
  const linv::Op op = trans == "N" ? linv::Op::None : linv::Op::Transpose;
  return gpu.array<T>(gpu.run([&] { return linv::plu_solve<T>(LU, pivots, B, op); }));
}

template <class T>
using CholeskyObject = Factored<linv::Cholesky<T>, T>;

linv::Pivoting parse_pivoting(const std::string& pivoting) {
  if (pivoting == "partial") return linv::Pivoting::Partial;
  if (pivoting == "tournament") return linv::Pivoting::Tournament;
  if (pivoting == "randomized") return linv::Pivoting::Randomized;
  throw linv::InvalidArgument("pivoting is 'partial', 'tournament' or 'randomized', not '" + pivoting + "'");
}

template <class T>
LUObject<T>* make_lu(const Input<T>& a, const std::string& pivoting, const std::string& device) {
  linv::Matrix<T> copy;
  const linv::ConstMatrixView<T> A = column_major(a, copy);
  const linv::Pivoting p = parse_pivoting(pivoting);
  const linv::Device d = linv::Device::parse(device);
  nb::gil_scoped_release released;
  if (d.is_cpu()) return new LUObject<T>{linv::LU<T>(A, p), d};
  const linv::Matrix<T> on = linv::Matrix<T>::copy_of(A).to(d);
  return new LUObject<T>{linv::LU<T>(on.view(), p), d};
}

template <class T>
CholeskyObject<T>* make_cholesky(const Input<T>& a, const std::string& device) {
  bool transposed = false;
  linv::Matrix<T> copy;
  const linv::ConstMatrixView<T> A = hermitian_view(a, transposed, copy);
  const linv::Device d = linv::Device::parse(device);
  nb::gil_scoped_release released;
  if (d.is_cpu()) return new CholeskyObject<T>{linv::Cholesky<T>(A), d};
  const linv::Matrix<T> on = linv::Matrix<T>::copy_of(A).to(d);
  return new CholeskyObject<T>{linv::Cholesky<T>(on.view()), d};
}

// Factors of a GPU array, made on its GPU: a column-major for LU; for Cholesky, any order where a is real.
template <class T>
LUObject<T>* make_lu_gpu(const GpuInput<T>& a, const std::string& pivoting) {
  const Gpu gpu(a, "");
  const linv::ConstMatrixView<T> A = gpu.view<T>(a, "a");
  const linv::Pivoting p = parse_pivoting(pivoting);
  return gpu.run([&] { return new LUObject<T>{linv::LU<T>(A, p), gpu.device()}; });
}

template <class T>
CholeskyObject<T>* make_cholesky_gpu(const GpuInput<T>& a) {
  const Gpu gpu(a, "");
  bool transposed = false;
  const linv::ConstMatrixView<T> A = gpu.view<T>(a, "a", either_order_if_real<T>(transposed));
  return gpu.run([&] { return new CholeskyObject<T>{linv::Cholesky<T>(A), gpu.device()}; });
}

// The CPU functions, factor objects and GPU entry points for T. Overloads are tried in the order they are
// bound: float64, float32, complex128, complex64.
template <class T>
void bind_dense(nb::module_& m, const char* suffix) {
  m.def("inv", &inv<T>, nb::arg("a"), nb::arg("method"), nb::arg("precision"), nb::arg("factor"), nb::arg("device"),
        nb::arg("check"), nb::arg("report"));
  m.def("solve", &solve<T>, nb::arg("a"), nb::arg("b"), nb::arg("method"), nb::arg("precision"), nb::arg("factor"),
        nb::arg("device"), nb::arg("check"), nb::arg("report"));
  m.def("cholesky", &cholesky<T>, nb::arg("a"), nb::arg("device"), nb::arg("check"), nb::arg("report"));
  m.def("lstsq", &lstsq<T>, nb::arg("a"), nb::arg("b"), nb::arg("rcond"), nb::arg("check"), nb::arg("report"));
  m.def("pinv", &pinv<T>, nb::arg("a"), nb::arg("rcond"), nb::arg("check"), nb::arg("report"));
  m.def("slogdet", &slogdet<T>, nb::arg("a"), nb::arg("device"));
  nb::class_<LUObject<T>>(m, (std::string("LU") + suffix).c_str())
      .def("solve", &LUObject<T>::solve)
      .def("inv", &LUObject<T>::inverse)
      .def("solve_gpu", &LUObject<T>::solve_gpu, nb::arg("b"), nb::arg("framework"))
      .def("inv_gpu", &LUObject<T>::inverse_gpu, nb::arg("framework"))
      .def("slogdet", &LUObject<T>::slogdet)
      .def("rcond", &LUObject<T>::rcond)
      .def_prop_ro("pivots", [](const LUObject<T>& o) { return o.factors.pivots(); })
      .def_prop_ro("pivoting",
                   [](const LUObject<T>& o) { return std::string(linv::to_string(o.factors.pivoting())); })
      .def_prop_ro("growth", [](const LUObject<T>& o) { return o.factors.growth(); })
      .def_prop_ro("fallback_reason", [](const LUObject<T>& o) { return o.factors.fallback_reason(); });
  nb::class_<CholeskyObject<T>>(m, (std::string("Cholesky") + suffix).c_str())
      .def("solve", &CholeskyObject<T>::solve)
      .def("inv", &CholeskyObject<T>::inverse)
      .def("solve_gpu", &CholeskyObject<T>::solve_gpu, nb::arg("b"), nb::arg("framework"))
      .def("inv_gpu", &CholeskyObject<T>::inverse_gpu, nb::arg("framework"))
      .def("slogdet", &CholeskyObject<T>::slogdet)
      .def("rcond", &CholeskyObject<T>::rcond);
  m.def("lu", &make_lu<T>, nb::arg("a"), nb::arg("pivoting"), nb::arg("device"));
  m.def("plu", &plu<T>, nb::arg("a"));
  m.def("cholesky_object", &make_cholesky<T>, nb::arg("a"), nb::arg("device"));
  m.def("inv_gpu", &inv_gpu<T>, nb::arg("a"), nb::arg("method"), nb::arg("precision"), nb::arg("factor"),
        nb::arg("check"), nb::arg("report"), nb::arg("framework"));
  m.def("solve_gpu", &solve_gpu<T>, nb::arg("a"), nb::arg("b"), nb::arg("method"), nb::arg("precision"),
        nb::arg("factor"), nb::arg("check"), nb::arg("report"), nb::arg("framework"));
  m.def("cholesky_gpu", &cholesky_gpu<T>, nb::arg("a"), nb::arg("check"), nb::arg("report"), nb::arg("framework"));
  m.def("slogdet_gpu", &slogdet_gpu<T>, nb::arg("a"));
  m.def("lu_gpu", &make_lu_gpu<T>, nb::arg("a"), nb::arg("pivoting"));
  m.def("plu_gpu", &plu_gpu<T>, nb::arg("a"), nb::arg("framework"));
  m.def("plu_solve_gpu", &plu_solve_gpu<T>, nb::arg("lu"), nb::arg("pivots"), nb::arg("b"), nb::arg("trans"),
        nb::arg("framework"));
  m.def("cholesky_object_gpu", &make_cholesky_gpu<T>, nb::arg("a"));
}

nb::dict info() {
  const linv::BuildInfo b = linv::build_info();
  nb::dict d;
  d["version"] = b.version;
  d["blas"] = b.blas;
  d["cuda"] = b.cuda;
  d["cuda_runtime"] = b.cuda_runtime;
  d["cpu_threads"] = linv::cpu_threads();
  const linv::GpuList gpus = linv::cuda_devices();
  nb::list names;
  for (const linv::GpuInfo& g : gpus.gpus) names.append(g.name);
  d["gpus"] = names;
  d["why_no_gpu"] = gpus.why_none;
  // what a GPU refuses (and device="auto" keeps on the CPU): linv::cpu_only_on, asked of the backend
  nb::list cpu_only;
  if (!gpus.gpus.empty())
    for (const std::string& name : linv::cpu_only_on(linv::Device::cuda(gpus.gpus.front().index))) cpu_only.append(name);
  d["cpu_only_on_gpu"] = cpu_only;
  return d;
}

// linv's errors as the exceptions linv/__init__.py defines (set_exceptions hands them over at import;
// the references are kept for the process's life, not released at interpreter shutdown).
PyObject *g_singular = nullptr, *g_not_positive_definite = nullptr, *g_numerical = nullptr, *g_device = nullptr,
         *g_input = nullptr;

void raise_with(PyObject* type, const std::exception& e, const char* attribute = nullptr, long long value = 0) {
  nb::object exc = nb::borrow(type)(std::string(e.what()));
  if (attribute) nb::setattr(exc, attribute, nb::int_(value));
  PyErr_SetObject(type, exc.ptr());
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const linv::SingularMatrix& e) {
    raise_with(g_singular, e, "pivot", e.pivot());
  } catch (const linv::NotPositiveDefinite& e) {
    raise_with(g_not_positive_definite, e, "minor", e.minor());
  } catch (const linv::NumericalError& e) {
    raise_with(g_numerical, e);
  } catch (const linv::OutOfDeviceMemory& e) {
    PyErr_SetString(PyExc_MemoryError, e.what());
  } catch (const linv::DeviceError& e) {
    raise_with(g_device, e);
  } catch (const linv::InvalidArgument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const linv::InputError& e) {
    raise_with(g_input, e);
  }
}

}  // namespace

NB_MODULE(_linv, m) {
  m.doc() = "linv's C++ library (use the linv package, which wraps this module)";
  m.def("info", &info, "What this build of linv contains, and the GPUs it can use.");
  m.def("describe_auto_method", &linv::describe_auto_method,
        "What method auto picks for inv and solve, from the library's own orders.");
  m.def("cpu_threads", &linv::cpu_threads, "The CPU threads linv's host work runs on.");
  m.def("set_cpu_threads", &linv::set_cpu_threads, nb::arg("threads"),
        "Sets the CPU threads linv's host work runs on.");
  m.def("set_exceptions", [](nb::object singular, nb::object not_pd, nb::object numerical, nb::object device,
                             nb::object input) {
    g_singular = singular.release().ptr();
    g_not_positive_definite = not_pd.release().ptr();
    g_numerical = numerical.release().ptr();
    g_device = device.release().ptr();
    g_input = input.release().ptr();
  });
  nb::register_exception_translator(&translate);
  bind_dense<double>(m, "64");
  bind_dense<float>(m, "32");
  bind_dense<std::complex<double>>(m, "c128");
  bind_dense<std::complex<float>>(m, "c64");
  linv_py::bind_batched(m);
  linv_py::bind_imaging(m);
  linv_py::bind_slam(m);
  linv_py::bind_fmri(m);
  linv_py::bind_io(m);
}
