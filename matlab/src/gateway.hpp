// What linv's MEX functions share: MATLAB arrays as linv matrix views (inputs are not copied), linv
// results as new MATLAB arrays of the input's class, name-value options, reports as structs, and linv's
// errors as MATLAB error identifiers. Written against MATLAB's C MEX API, which Octave implements, and
// linv's public C++ API only: no algorithm lives here.
#pragma once

#include <mex.h>

#include <complex>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "linv/dense.hpp"
#include "linv/fmri.hpp"
#include "linv/device.hpp"
#include "linv/matrix.hpp"
#include "linv/operation.hpp"
#include "linv/report.hpp"

namespace linv_mex {

using Body = std::function<void(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[])>;

// Runs a MEX function's body. Any exception becomes a MATLAB error whose identifier names its kind
// (docs/matlab.md lists them: linv:singular, linv:notPositiveDefinite, linv:shapeMismatch, ...), raised
// after the C++ frames have unwound, since mexErrMsgIdAndTxt does not return.
void run(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[], const Body& body);

// Refuses a call with fewer than `min_in` inputs or more than `max_out` outputs, quoting `usage`.
void check_counts(const char* function, int nrhs, int min_in, int nlhs, int max_out, std::string_view usage);

// The class of a real, full, numeric array (double or single); InvalidArgument naming `what` otherwise
// (integers, complex, sparse, logical, char, cell and struct arrays are refused, saying which it is).
enum class Class { Double, Single, ComplexDouble, ComplexSingle };
Class real_class(const mxArray* a, std::string_view what);
// The class of a full double or single array, real or complex (the dense functions' inputs); the class
// several of them are computed in: complex where one is (MATLAB's rule), InvalidArgument where double and
// single are mixed.
Class dense_class(const mxArray* a, std::string_view what);
Class common_class(std::initializer_list<std::pair<const mxArray*, std::string_view>> inputs);

// f.template operator()<double>() or <float>(), by the class (a real one).
template <class F>
decltype(auto) dispatch(Class c, F&& f) {
  if (c == Class::Single) return f.template operator()<float>();
  return f.template operator()<double>();
}
// The same over the four classes the dense functions take.
template <class F>
decltype(auto) dispatch_dense(Class c, F&& f) {
  switch (c) {
    case Class::Single: return f.template operator()<float>();
    case Class::ComplexDouble: return f.template operator()<std::complex<double>>();
    case Class::ComplexSingle: return f.template operator()<std::complex<float>>();
    case Class::Double: break;
  }
  return f.template operator()<double>();
}

// A real full 2-D array of T's class as a column-major view of its own memory (MATLAB's layout).
template <linv::Real T>
linv::ConstMatrixView<T> view(const mxArray* a, std::string_view what);
// A full 2-D array as a matrix of T: for real T the view above; for complex T a copy in `storage` of a
// complex array of T's precision (the separate-complex API, which Octave and MATLAB both keep, stores the
// real and imaginary parts apart) or of a real one (MATLAB computes a real operand with a complex one in
// complex numbers).
template <linv::Scalar T>
linv::ConstMatrixView<T> view_as(const mxArray* a, std::string_view what, linv::Matrix<T>& storage);

// A vector, row or column, as an n x 1 view of its own memory.
template <linv::Real T>
linv::ConstMatrixView<T> column(const mxArray* a, std::string_view what);

// A count (T0, K, F: a whole non-negative number), as given positionally.
linv::index count(const mxArray* a, std::string_view what);

using linv::placed;  // an input's view on the device chosen (as the command line and Python place theirs)

// A new MATLAB array of T's class holding m (on any device).
template <linv::Scalar T>
mxArray* to_mx(const linv::Matrix<T>& m);
mxArray* to_mx(const std::vector<double>& row);  // a 1 x n double row
// Sparse codes as a K x N sparse double matrix (MATLAB's sparse matrices are double: float values are
// widened, exactly).
template <linv::Real T>
mxArray* to_mx(const linv::fmri::SparseCodes<T>& codes);

// A JSON value as MATLAB data: objects become 1 x 1 structs, strings char arrays, numbers doubles
// (null, which linv's reports write for NaN, becomes NaN), booleans logicals, arrays of numbers double
// rows and other arrays cell rows.
mxArray* to_mx(const nlohmann::json& j);
// A report as JSON (linv::Report::to_json), to extend with a function's own results before to_mx.
nlohmann::json report_json(const linv::Report& r);

// Name-value options after the positional arguments, names matched case-insensitively as MATLAB does.
// An unknown name, a name without its value or a value of the wrong kind is an InvalidArgument that
// names the option and lists the ones the function takes.
class Options {
 public:
  Options(const char* function, const mxArray* const* args, int count, std::vector<const char*> names);

  std::optional<std::string> text(std::string_view name) const;
  std::optional<double> number(std::string_view name) const;
  std::optional<bool> flag(std::string_view name) const;  // true/false, or a number (nonzero: true)
  const mxArray* array(std::string_view name) const;      // the value as given, or nullptr

  // 'device': "auto" (the default: linv's choice for the operation and its size), "cpu", "cuda",
  // "cuda:N". A GPU asked for where there is none is an error that says so.
  linv::Device device(linv::Operation op, linv::index size, linv::Method method = linv::Method::Auto) const;

 private:
  const mxArray* find(std::string_view name) const;
  std::string function_;
  std::vector<const char*> names_;
  std::vector<std::pair<std::string, const mxArray*>> given_;
};

// inv and solve's options: 'method' ("auto"), 'precision' ("native" or "mixed"), 'factorPrecision'
// ("auto"), 'allowIllConditioned' (false), 'tolerance' and 'maxIterations' (Gauss-Seidel), 'check'
// (true: the report's scaled residual, at the cost of one more matrix product).
linv::SolveOptions solve_options(const Options& o);
// The names solve_options reads, and 'device': the options of linv_inv and linv_solve.
inline const std::vector<const char*> kSolveOptionNames = {
    "method", "device", "precision", "factorPrecision", "allowIllConditioned", "tolerance", "maxIterations", "check"};

// The option `name` as a matrix of T's class on `device` (kept in `storage`), or nullptr where it is not
// given: a starting point such as k-SVD's and ADL's 'initial' dictionary.
template <linv::Real T>
const linv::Matrix<T>* matrix_option(const Options& o, std::string_view name, linv::Device device,
                                     linv::Matrix<T>& storage) {
  const mxArray* given = o.array(name);
  if (given == nullptr) return nullptr;
  storage = linv::Matrix<T>::copy_of(view<T>(given, fmt::format("'{}'", name))).to(device);
  return &storage;
}

}  // namespace linv_mex
