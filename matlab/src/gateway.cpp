#include "gateway.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "linv/errors.hpp"

namespace linv_mex {

using linv::index;

namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// MATLAB's own words for an array, for messages: "3x4x2 int32", "2x2 sparse double", "1x3 cell".
std::string describe(const mxArray* a) {
  const mwSize rank = mxGetNumberOfDimensions(a);
  const mwSize* dims = mxGetDimensions(a);
  return fmt::format("{} {}{}{}", fmt::join(dims, dims + rank, "x"), mxIsComplex(a) ? "complex " : "",
                     mxIsSparse(a) ? "sparse " : "", mxGetClassName(a));
}

std::string text_of(const mxArray* a) {
  char* s = mxArrayToString(a);
  if (s == nullptr) return {};
  std::string out(s);
  mxFree(s);
  return out;
}

// The identifier's second part for each kind of linv error, the most derived first.
const char* kind_of(const linv::Error& e) {
  if (dynamic_cast<const linv::SingularMatrix*>(&e)) return "singular";
  if (dynamic_cast<const linv::NotPositiveDefinite*>(&e)) return "notPositiveDefinite";
  if (dynamic_cast<const linv::NoConvergence*>(&e)) return "noConvergence";
  if (dynamic_cast<const linv::NumericalError*>(&e)) return "numerical";
  if (dynamic_cast<const linv::ShapeMismatch*>(&e)) return "shapeMismatch";
  if (dynamic_cast<const linv::InvalidArgument*>(&e)) return "invalidArgument";
  if (dynamic_cast<const linv::NonFiniteInput*>(&e)) return "nonFinite";
  if (dynamic_cast<const linv::InputError*>(&e)) return "input";
  if (dynamic_cast<const linv::OutOfDeviceMemory*>(&e)) return "outOfMemory";
  if (dynamic_cast<const linv::DeviceError*>(&e)) return "device";
  return "internal";
}

}  // namespace

void run(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[], const Body& body) {
  // mexErrMsgIdAndTxt does not return (MATLAB unwinds past this frame), so what it prints is copied out
  // of the exception first, and nothing that owns memory is alive when it is called.
  static char id[64], message[4096];
  const char* kind = "internal";
  try {
    body(nlhs, plhs, nrhs, prhs);
    return;
  } catch (const linv::Error& e) {
    kind = kind_of(e);
    std::snprintf(message, sizeof message, "%s", e.what());
  } catch (const std::bad_alloc&) {
    kind = "outOfMemory";
    std::snprintf(message, sizeof message, "not enough host memory");
  } catch (const std::exception& e) {
    std::snprintf(message, sizeof message, "%s", e.what());
  } catch (...) {
    std::snprintf(message, sizeof message, "an unknown C++ exception");
  }
  std::snprintf(id, sizeof id, "linv:%s", kind);
  mexErrMsgIdAndTxt(id, "%s", message);  // MATLAB and Octave name the function themselves
}

void check_counts(const char* function, int nrhs, int min_in, int nlhs, int max_out, std::string_view usage) {
  if (nrhs < min_in)
    throw linv::InvalidArgument(
        fmt::format("{} needs at least {} input{} ({} given): {}", function, min_in, min_in == 1 ? "" : "s", nrhs, usage));
  if (nlhs > max_out)
    throw linv::InvalidArgument(fmt::format("{} returns at most {} output{} ({} asked for): {}", function, max_out,
                                            max_out == 1 ? "" : "s", nlhs, usage));
}

Class real_class(const mxArray* a, std::string_view what) {
  if (mxIsSparse(a))
    throw linv::InvalidArgument(fmt::format("{} is {}: this function takes full matrices (pass full({}))", what,
                                            describe(a), what));
  if (mxIsComplex(a))
    throw linv::InvalidArgument(fmt::format("{} is {}: this function computes with real double and single arrays "
                                            "(complex ones: linv_inv and linv_solve)",
                                            what, describe(a)));
  return dense_class(a, what);
}

Class dense_class(const mxArray* a, std::string_view what) {
  if (mxIsSparse(a))
    throw linv::InvalidArgument(fmt::format("{} is {}: this function takes full matrices (pass full({}))", what,
                                            describe(a), what));
  const bool complex = mxIsComplex(a);
  if (mxIsDouble(a)) return complex ? Class::ComplexDouble : Class::Double;
  if (mxIsSingle(a)) return complex ? Class::ComplexSingle : Class::Single;
  throw linv::InvalidArgument(fmt::format("{} is {}: linv computes with double and single arrays (pass "
                                          "double({}) or single({}))",
                                          what, describe(a), what, what));
}

namespace {
bool is_single(Class c) { return c == Class::Single || c == Class::ComplexSingle; }
bool is_complex(Class c) { return c == Class::ComplexDouble || c == Class::ComplexSingle; }
}  // namespace

Class common_class(std::initializer_list<std::pair<const mxArray*, std::string_view>> inputs) {
  bool single = false, complex = false;
  const mxArray* first = nullptr;
  std::string_view first_name;
  for (const auto& [a, what] : inputs) {
    const Class c = dense_class(a, what);
    if (first != nullptr && is_single(c) != single)
      throw linv::InvalidArgument(fmt::format("{} is {}, but {} is {}: pass arrays of one class", what, describe(a),
                                              first_name, describe(first)));
    if (first == nullptr) first = a, first_name = what, single = is_single(c);
    complex = complex || is_complex(c);
  }
  if (single) return complex ? Class::ComplexSingle : Class::Single;
  return complex ? Class::ComplexDouble : Class::Double;
}

namespace {

// A's rows and columns; InvalidArgument unless it is 2-D.
std::pair<index, index> matrix_shape(const mxArray* a, std::string_view what) {
  if (mxGetNumberOfDimensions(a) != 2)
    throw linv::InvalidArgument(fmt::format("{} is {}: a matrix (2-D) is needed here", what, describe(a)));
  return {static_cast<index>(mxGetM(a)), static_cast<index>(mxGetN(a))};
}

[[noreturn]] void refuse_other_class(const mxArray* a, std::string_view what, bool single) {
  throw linv::InvalidArgument(fmt::format("{} is {}, but the other inputs are {}: pass arrays of one class", what,
                                          describe(a), single ? "single" : "double"));
}

}  // namespace

template <linv::Real T>
linv::ConstMatrixView<T> view(const mxArray* a, std::string_view what) {
  const bool single = std::is_same_v<T, float>;
  if (real_class(a, what) != (single ? Class::Single : Class::Double)) refuse_other_class(a, what, single);
  const auto [rows, cols] = matrix_shape(a, what);
  return {static_cast<const T*>(mxGetData(a)), rows, cols, std::max<index>(rows, 1)};
}
template linv::ConstMatrixView<double> view<double>(const mxArray*, std::string_view);
template linv::ConstMatrixView<float> view<float>(const mxArray*, std::string_view);

template <linv::Scalar T>
linv::ConstMatrixView<T> view_as(const mxArray* a, std::string_view what, linv::Matrix<T>& storage) {
  if constexpr (linv::Real<T>) {
    return view<T>(a, what);
  } else {
    // complex, or real of T's precision (MATLAB computes a real operand with a complex one in complex numbers)
    using R = linv::real_t<T>;
    const bool single = std::is_same_v<R, float>;
    const Class c = dense_class(a, what);
    if (c != (single ? Class::ComplexSingle : Class::ComplexDouble) && c != (single ? Class::Single : Class::Double))
      refuse_other_class(a, what, single);
    const auto [rows, cols] = matrix_shape(a, what);
    const R* re = static_cast<const R*>(mxGetData(a));
    const R* im = mxIsComplex(a) ? static_cast<const R*>(mxGetImagData(a)) : nullptr;
    storage = linv::Matrix<T>::uninitialized(rows, cols);
    for (index j = 0; j < cols; ++j)
      for (index i = 0; i < rows; ++i) storage(i, j) = T(re[i + j * rows], im ? im[i + j * rows] : R(0));
    return storage.view();
  }
}
template linv::ConstMatrixView<double> view_as<double>(const mxArray*, std::string_view, linv::Matrix<double>&);
template linv::ConstMatrixView<float> view_as<float>(const mxArray*, std::string_view, linv::Matrix<float>&);
template linv::ConstMatrixView<std::complex<double>> view_as<std::complex<double>>(
    const mxArray*, std::string_view, linv::Matrix<std::complex<double>>&);
template linv::ConstMatrixView<std::complex<float>> view_as<std::complex<float>>(
    const mxArray*, std::string_view, linv::Matrix<std::complex<float>>&);

template <linv::Real T>
linv::ConstMatrixView<T> column(const mxArray* a, std::string_view what) {
  const linv::ConstMatrixView<T> v = view<T>(a, what);
  if (v.rows() != 1 && v.cols() != 1)
    throw linv::InvalidArgument(fmt::format("{} is {}: a vector is needed here", what, describe(a)));
  const index n = v.rows() * v.cols();
  return {v.data(), n, 1, std::max<index>(n, 1)};
}
template linv::ConstMatrixView<double> column<double>(const mxArray*, std::string_view);
template linv::ConstMatrixView<float> column<float>(const mxArray*, std::string_view);

index count(const mxArray* a, std::string_view what) {
  const double v = (mxIsNumeric(a) && !mxIsComplex(a) && mxGetNumberOfElements(a) == 1) ? mxGetScalar(a) : -1;
  if (!(v >= 0) || v != std::floor(v) || v > 1e15)
    throw linv::InvalidArgument(fmt::format("{} must be a whole non-negative number, not {}", what,
                                            mxGetNumberOfElements(a) == 1 && mxIsNumeric(a)
                                                ? fmt::format("{}", mxGetScalar(a))
                                                : describe(a)));
  return static_cast<index>(v);
}

template <linv::Scalar T>
mxArray* to_mx(const linv::Matrix<T>& m) {
  linv::Matrix<T> host;
  const linv::Matrix<T>* h = &m;
  if (!m.device().is_cpu()) {
    host = m.to(linv::Device::cpu());
    h = &host;
  }
  // uninitialised (MATLAB R2015a, Octave 7): every entry is written below, and zeroing a large result
  // first would cost a pass over its memory
  const auto rows = static_cast<mwSize>(h->rows()), cols = static_cast<mwSize>(h->cols());
  const mxClassID id = std::is_same_v<linv::real_t<T>, float> ? mxSINGLE_CLASS : mxDOUBLE_CLASS;
  mxArray* out = mxCreateUninitNumericMatrix(rows, cols, id, linv::Complex<T> ? mxCOMPLEX : mxREAL);
  if constexpr (linv::Complex<T>) {  // the separate-complex API: real parts, then imaginary parts
    using R = linv::real_t<T>;
    R* re = static_cast<R*>(mxGetData(out));
    R* im = static_cast<R*>(mxGetImagData(out));
    for (index j = 0; j < h->cols(); ++j)
      for (index i = 0; i < h->rows(); ++i) {
        const T z = (*h)(i, j);
        re[i + j * h->rows()] = z.real(), im[i + j * h->rows()] = z.imag();
      }
  } else {
    T* dst = static_cast<T*>(mxGetData(out));
    for (index j = 0; j < h->cols(); ++j)
      std::copy_n(h->data() + j * h->ld(), h->rows(), dst + j * h->rows());
  }
  return out;
}
template mxArray* to_mx<double>(const linv::Matrix<double>&);
template mxArray* to_mx<float>(const linv::Matrix<float>&);
template mxArray* to_mx<std::complex<double>>(const linv::Matrix<std::complex<double>>&);
template mxArray* to_mx<std::complex<float>>(const linv::Matrix<std::complex<float>>&);

mxArray* to_mx(const std::vector<double>& row) {
  mxArray* out = mxCreateDoubleMatrix(1, static_cast<mwSize>(row.size()), mxREAL);
  std::copy(row.begin(), row.end(), mxGetPr(out));
  return out;
}

template <linv::Real T>
mxArray* to_mx(const linv::fmri::SparseCodes<T>& codes) {
  index nonzeros = 0;
  for (index j = 0; j < codes.signals; ++j) nonzeros += codes.count[static_cast<std::size_t>(j)];
  mxArray* out = mxCreateSparse(static_cast<mwSize>(codes.atoms), static_cast<mwSize>(codes.signals),
                                static_cast<mwSize>(std::max<index>(nonzeros, 1)), mxREAL);
  mwIndex* row = mxGetIr(out);
  mwIndex* start = mxGetJc(out);
  double* value = mxGetPr(out);
  mwIndex next = 0;
  std::vector<std::pair<index, double>> column;
  for (index j = 0; j < codes.signals; ++j) {
    start[j] = next;
    // MATLAB keeps each column's rows in increasing order; OMP lists them in the order it chose them
    column.clear();
    for (index t = 0; t < codes.count[static_cast<std::size_t>(j)]; ++t) {
      const auto k = static_cast<std::size_t>(t + j * codes.sparsity);
      column.emplace_back(codes.atom[k], static_cast<double>(codes.value[k]));
    }
    std::sort(column.begin(), column.end());
    for (const auto& [atom, v] : column) {
      row[next] = static_cast<mwIndex>(atom);
      value[next++] = v;
    }
  }
  start[codes.signals] = next;
  return out;
}
template mxArray* to_mx<double>(const linv::fmri::SparseCodes<double>&);
template mxArray* to_mx<float>(const linv::fmri::SparseCodes<float>&);

mxArray* to_mx(const nlohmann::json& j) {
  if (j.is_null()) return mxCreateDoubleScalar(std::numeric_limits<double>::quiet_NaN());
  if (j.is_boolean()) return mxCreateLogicalScalar(j.get<bool>());
  if (j.is_number()) return mxCreateDoubleScalar(j.get<double>());
  if (j.is_string()) return mxCreateString(j.get<std::string>().c_str());
  if (j.is_object()) {
    mxArray* s = mxCreateStructMatrix(1, 1, 0, nullptr);
    for (const auto& [key, value] : j.items()) {
      const int field = mxAddField(s, key.c_str());
      mxSetFieldByNumber(s, 0, field, to_mx(value));
    }
    return s;
  }
  // an array
  const bool numbers = !j.empty() && std::all_of(j.begin(), j.end(), [](const nlohmann::json& v) {
    return v.is_number() || v.is_null();
  });
  if (numbers) {
    std::vector<double> row;
    for (const auto& v : j) row.push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>());
    return to_mx(row);
  }
  mxArray* c = mxCreateCellMatrix(1, static_cast<mwSize>(j.size()));
  mwIndex k = 0;
  for (const auto& v : j) mxSetCell(c, k++, to_mx(v));
  return c;
}

nlohmann::json report_json(const linv::Report& r) { return nlohmann::json::parse(r.to_json()); }

Options::Options(const char* function, const mxArray* const* args, int count, std::vector<const char*> names)
    : function_(function), names_(std::move(names)) {
  const auto listed = [&] { return fmt::format("'{}'", fmt::join(names_, "', '")); };
  if (count % 2 != 0)
    throw linv::InvalidArgument(fmt::format("{}: options come in name-value pairs, and the last name has no value "
                                            "(it takes {})",
                                            function_, listed()));
  for (int k = 0; k < count; k += 2) {
    if (!mxIsChar(args[k]))
      throw linv::InvalidArgument(fmt::format("{}: option {} is {} where a name is expected (it takes {})", function_,
                                              k / 2 + 1, describe(args[k]), listed()));
    const std::string name = text_of(args[k]);
    const auto known = std::find_if(names_.begin(), names_.end(), [&](const char* n) { return same_name(n, name); });
    if (known == names_.end())
      throw linv::InvalidArgument(fmt::format("{} has no option '{}' (it takes {})", function_, name, listed()));
    given_.emplace_back(*known, args[k + 1]);
  }
}

const mxArray* Options::find(std::string_view name) const {
  const mxArray* found = nullptr;
  for (const auto& [n, value] : given_)
    if (n == name) found = value;  // the last one given wins, as in MATLAB's inputParser
  return found;
}

const mxArray* Options::array(std::string_view name) const { return find(name); }

std::optional<std::string> Options::text(std::string_view name) const {
  const mxArray* v = find(name);
  if (v == nullptr) return std::nullopt;
  if (!mxIsChar(v))
    throw linv::InvalidArgument(fmt::format("{}: option '{}' must be text, not {}", function_, name, describe(v)));
  return text_of(v);
}

std::optional<double> Options::number(std::string_view name) const {
  const mxArray* v = find(name);
  if (v == nullptr) return std::nullopt;
  if (!(mxIsNumeric(v) || mxIsLogical(v)) || mxIsComplex(v) || mxGetNumberOfElements(v) != 1)
    throw linv::InvalidArgument(fmt::format("{}: option '{}' must be a real number, not {}", function_, name,
                                            describe(v)));
  return mxGetScalar(v);
}

std::optional<bool> Options::flag(std::string_view name) const {
  const std::optional<double> v = number(name);
  if (!v) return std::nullopt;
  return *v != 0;
}

linv::Device Options::device(linv::Operation op, index size, linv::Method method) const {
  return linv::choose_device(text("device").value_or("auto"), op, size, method);
}

linv::SolveOptions solve_options(const Options& o) {
  linv::SolveOptions s;
  s.method = linv::parse_method(o.text("method").value_or("auto"));
  const std::string precision = o.text("precision").value_or("native");
  if (precision == "mixed")
    s.precision = linv::Precision::Mixed;
  else if (precision != "native")
    throw linv::InvalidArgument(fmt::format("'precision' is 'native' (in the array's own class) or 'mixed' (double "
                                            "arrays: factor in a lower precision, refine to double); got '{}'",
                                            precision));
  s.factor_precision = linv::parse_factor_precision(o.text("factorPrecision").value_or("auto"));
  s.allow_ill_conditioned = o.flag("allowIllConditioned").value_or(false);
  if (const auto t = o.number("tolerance")) s.tolerance = *t;
  if (const auto m = o.number("maxIterations")) s.max_iterations = static_cast<int>(*m);
  s.compute_residual = o.flag("check").value_or(true);
  return s;
}

}  // namespace linv_mex
