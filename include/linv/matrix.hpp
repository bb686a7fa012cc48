// Dense column-major matrices (the LAPACK and cuBLAS convention) and non-owning views of them.
//
// Matrix<T> owns its storage on one Device. Copies are explicit (clone(), to(device)): nothing moves
// between host and GPU inside an operation. Views are cheap (pointer, shape, leading dimension).
#pragma once

#include <cmath>
#include <complex>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "linv/device.hpp"

namespace linv {

using index = std::int64_t;

template <class T>
concept Real = std::same_as<T, float> || std::same_as<T, double>;
// complex64 and complex128: what the dense core (inverse, solve, LU, Cholesky, least squares, pseudoinverse,
// determinant) also takes, on the CPU in this version. Every other part of linv is for real numbers.
template <class T>
concept Complex = std::same_as<T, std::complex<float>> || std::same_as<T, std::complex<double>>;
template <class T>
concept Scalar = Real<T> || Complex<T>;

namespace detail {
template <class T>
struct real_of {
  using type = T;
};
template <class R>
struct real_of<std::complex<R>> {
  using type = R;
};
}  // namespace detail
// The real type of T's precision: float for float and complex64, double for double and complex128.
template <Scalar T>
using real_t = typename detail::real_of<T>::type;
// T's field in float64, where residuals are measured: double, or complex128 for complex T.
template <Scalar T>
using wide_t = std::conditional_t<Complex<T>, std::complex<double>, double>;

template <Scalar T>
constexpr const char* type_name() {
  if constexpr (std::same_as<T, float>) return "float32";
  if constexpr (std::same_as<T, double>) return "float64";
  if constexpr (std::same_as<T, std::complex<float>>) return "complex64";
  return "complex128";
}

// Neither NaN nor infinite (a complex number: neither part).
template <Scalar T>
bool is_finite(T a) {
  if constexpr (Complex<T>)
    return std::isfinite(a.real()) && std::isfinite(a.imag());
  else
    return std::isfinite(a);
}

// The part of a non-finite a that is NaN or infinite (a itself where a is real), for messages that name it.
template <Scalar T>
double non_finite_part(T a) {
  if constexpr (Complex<T>)
    return std::isfinite(a.real()) ? a.imag() : a.real();
  else
    return a;
}

// A quiet NaN of T: NaN in both parts of a complex one (as NumPy and MATLAB show an undefined result).
template <Scalar T>
constexpr T quiet_nan() {
  constexpr real_t<T> nan = std::numeric_limits<real_t<T>>::quiet_NaN();
  if constexpr (Complex<T>)
    return T(nan, nan);
  else
    return nan;
}

// The complex conjugate of a complex number, a real one itself (std::conj would make it complex).
template <Scalar T>
constexpr T conjugate(T a) {
  if constexpr (Complex<T>)
    return std::conj(a);
  else
    return a;
}

// "3x4"
std::string shape_string(index rows, index cols);

template <Scalar T>
class ConstMatrixView;

template <Scalar T>
class MatrixView {
 public:
  MatrixView() = default;
  MatrixView(T* data, index rows, index cols, index ld, Device device = Device::cpu())
      : data_(data), rows_(rows), cols_(cols), ld_(ld), device_(device) {}

  T* data() const noexcept { return data_; }
  index rows() const noexcept { return rows_; }
  index cols() const noexcept { return cols_; }
  index ld() const noexcept { return ld_; }
  Device device() const noexcept { return device_; }
  bool empty() const noexcept { return rows_ == 0 || cols_ == 0; }
  bool is_square() const noexcept { return rows_ == cols_; }
  // Element access; host memory only.
  T& operator()(index i, index j) const noexcept { return data_[i + j * ld_]; }
  MatrixView block(index i, index j, index r, index c) const noexcept {
    return {data_ + i + j * ld_, r, c, ld_, device_};
  }
  MatrixView cols_range(index j, index c) const noexcept { return block(0, j, rows_, c); }

 private:
  T* data_ = nullptr;
  index rows_ = 0, cols_ = 0, ld_ = 1;
  Device device_ = Device::cpu();
};

template <Scalar T>
class ConstMatrixView {
 public:
  ConstMatrixView() = default;
  ConstMatrixView(const T* data, index rows, index cols, index ld, Device device = Device::cpu())
      : data_(data), rows_(rows), cols_(cols), ld_(ld), device_(device) {}
  ConstMatrixView(MatrixView<T> v)  // NOLINT: a mutable view is always usable as a const one
      : data_(v.data()), rows_(v.rows()), cols_(v.cols()), ld_(v.ld()), device_(v.device()) {}

  const T* data() const noexcept { return data_; }
  index rows() const noexcept { return rows_; }
  index cols() const noexcept { return cols_; }
  index ld() const noexcept { return ld_; }
  Device device() const noexcept { return device_; }
  bool empty() const noexcept { return rows_ == 0 || cols_ == 0; }
  bool is_square() const noexcept { return rows_ == cols_; }
  const T& operator()(index i, index j) const noexcept { return data_[i + j * ld_]; }
  ConstMatrixView block(index i, index j, index r, index c) const noexcept {
    return {data_ + i + j * ld_, r, c, ld_, device_};
  }

 private:
  const T* data_ = nullptr;
  index rows_ = 0, cols_ = 0, ld_ = 1;
  Device device_ = Device::cpu();
};

namespace detail {
// Byte-level storage on a device; implemented once for all element types.
// InvalidArgument for a negative shape, or one whose bytes no address space holds (rows cols * element
// beyond 2^63: an index would overflow before any allocation could fail and say how much it needed).
void require_shape(index rows, index cols, std::size_t element, const char* type);
void* allocate_bytes(std::size_t bytes, Device device);
void free_bytes(void* p, Device device) noexcept;
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes);
void fill_zero_bytes(void* p, Device device, std::size_t bytes);
// `height` rows of `width` bytes each, `*_pitch` bytes apart (a sub-matrix copy), host or device.
void copy_2d(void* dst, std::size_t dst_pitch, Device dst_device, const void* src, std::size_t src_pitch,
             Device src_device, std::size_t width, std::size_t height);

struct Deleter {
  Device device = Device::cpu();
  void operator()(void* p) const noexcept { free_bytes(p, device); }
};
}  // namespace detail

template <Scalar T>
class Matrix {
 public:
  Matrix() = default;
  // A zero-filled rows x cols matrix on `device`.
  Matrix(index rows, index cols, Device device = Device::cpu()) : Matrix(uninitialized(rows, cols, device)) {
    if (size() > 0) detail::fill_zero_bytes(data(), device, bytes());
  }
  // Storage whose contents are unspecified: for outputs that are overwritten whole.
  static Matrix uninitialized(index rows, index cols, Device device = Device::cpu());
  static Matrix identity(index n);
  // Row-by-row literal, for examples and tests: Matrix<double>::from_rows({{1, 2}, {3, 4}}).
  static Matrix from_rows(std::initializer_list<std::initializer_list<T>> rows);
  // A contiguous copy of a view, on the view's device.
  static Matrix copy_of(ConstMatrixView<T> v);

  Matrix(Matrix&&) noexcept = default;
  Matrix& operator=(Matrix&&) noexcept = default;
  Matrix(const Matrix&) = delete;  // copies are explicit: clone() or to(device)
  Matrix& operator=(const Matrix&) = delete;

  index rows() const noexcept { return rows_; }
  index cols() const noexcept { return cols_; }
  index ld() const noexcept { return rows_ > 0 ? rows_ : 1; }
  index size() const noexcept { return rows_ * cols_; }
  std::size_t bytes() const noexcept { return static_cast<std::size_t>(size()) * sizeof(T); }
  bool empty() const noexcept { return size() == 0; }
  bool is_square() const noexcept { return rows_ == cols_; }
  Device device() const noexcept { return device_; }
  T* data() noexcept { return static_cast<T*>(storage_.get()); }
  const T* data() const noexcept { return static_cast<const T*>(storage_.get()); }

  // Element access; host memory only.
  T& operator()(index i, index j) noexcept { return data()[i + j * rows_]; }
  const T& operator()(index i, index j) const noexcept { return data()[i + j * rows_]; }

  MatrixView<T> view() noexcept { return {data(), rows_, cols_, ld(), device_}; }
  ConstMatrixView<T> view() const noexcept { return {data(), rows_, cols_, ld(), device_}; }
  operator MatrixView<T>() noexcept { return view(); }             // NOLINT
  operator ConstMatrixView<T>() const noexcept { return view(); }  // NOLINT
  MatrixView<T> block(index i, index j, index r, index c) noexcept { return view().block(i, j, r, c); }
  ConstMatrixView<T> block(index i, index j, index r, index c) const noexcept {
    return view().block(i, j, r, c);
  }

  Matrix clone() const { return to(device_); }
  Matrix to(Device device) const;
  // Element-type conversion (host). Narrowing to float is explicit by construction: the caller asks.
  template <Scalar U>
  Matrix<U> cast() const;

 private:
  index rows_ = 0, cols_ = 0;
  Device device_ = Device::cpu();
  std::unique_ptr<void, detail::Deleter> storage_{nullptr, detail::Deleter{}};
};

// Throws InvalidArgument unless the view lives in host memory; `what` names the operation.
void require_host(Device device, const char* what);

// dst := src for views of one shape, on any devices (host and a GPU, or within one device). Throws
// ShapeMismatch naming both shapes.
template <Scalar T>
void copy(ConstMatrixView<T> src, MatrixView<T> dst);

// A sparse matrix in compressed rows (CSR, SciPy's csr_matrix and cuSPARSE's layout), in host memory: the
// entries of row r are column[k], value[k] for k in row_start[r] .. row_start[r + 1], columns ascending and
// none twice within a row. What linv reads from Matrix Market coordinate files without forming the dense
// matrix (io::read_sparse), and what its sparse solvers take.
template <Real T>
struct SparseMatrix {
  index rows = 0, cols = 0;
  std::vector<index> row_start;  // rows + 1 offsets into column and value
  std::vector<index> column;
  std::vector<T> value;

  index nonzeros() const noexcept { return static_cast<index>(value.size()); }
  // The entries of A that are not zero (a -0 is a zero).
  static SparseMatrix from_dense(ConstMatrixView<T> A);
  Matrix<T> to_dense() const;  // in host memory
  SparseMatrix transpose() const;  // A^T in compressed rows (A in compressed columns), in one pass
  // Entries given in any order as (row, column, value) triplets, 0-based: those at one place are summed (as
  // scipy.sparse and MATLAB's sparse() do), kept even where the sum is zero. Indices out of range throw
  // InvalidArgument naming the entry.
  static SparseMatrix from_triplets(index rows, index cols, const std::vector<index>& row,
                                    const std::vector<index>& column, const std::vector<T>& value);
  template <Real U>
  SparseMatrix<U> cast() const {
    return {rows, cols, row_start, column, std::vector<U>(value.begin(), value.end())};
  }
};

// ---- template definitions ----

template <Scalar T>
Matrix<T> Matrix<T>::uninitialized(index rows, index cols, Device device) {
  Matrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.device_ = device;
  detail::require_shape(rows, cols, sizeof(T), type_name<T>());
  if (m.size() > 0) m.storage_ = {detail::allocate_bytes(m.bytes(), device), detail::Deleter{device}};
  return m;
}

template <Scalar T>
Matrix<T> Matrix<T>::identity(index n) {
  Matrix m(n, n);
  for (index i = 0; i < n; ++i) m(i, i) = T(1);
  return m;
}

template <Scalar T>
Matrix<T> Matrix<T>::from_rows(std::initializer_list<std::initializer_list<T>> rows) {
  const index r = static_cast<index>(rows.size());
  const index c = r > 0 ? static_cast<index>(rows.begin()->size()) : 0;
  Matrix m(r, c);
  index i = 0;
  for (const auto& row : rows) {
    index j = 0;
    for (T v : row) {
      if (j < c) m(i, j) = v;
      ++j;
    }
    ++i;
  }
  return m;
}

template <Scalar T>
Matrix<T> Matrix<T>::copy_of(ConstMatrixView<T> v) {
  Matrix m = uninitialized(v.rows(), v.cols(), v.device());
  if (!m.empty())
    detail::copy_2d(m.data(), m.ld() * sizeof(T), m.device(), v.data(), v.ld() * sizeof(T), v.device(),
                    v.rows() * sizeof(T), static_cast<std::size_t>(v.cols()));
  return m;
}

template <Scalar T>
Matrix<T> Matrix<T>::to(Device device) const {
  Matrix m = uninitialized(rows_, cols_, device);
  if (size() > 0) detail::copy_bytes(m.data(), device, data(), device_, bytes());
  return m;
}

// `v` where `device` can read it: v itself where it lives there already, otherwise a copy made there in one
// transfer (a strided view packed on the way) and kept in `keep`, which must outlive the view. The command
// line, Python and MATLAB place their inputs with it.
template <Scalar T>
ConstMatrixView<T> placed(ConstMatrixView<T> v, Device device, Matrix<T>& keep) {
  if (v.device() == device) return v;
  keep = Matrix<T>::uninitialized(v.rows(), v.cols(), device);
  if (!keep.empty())
    detail::copy_2d(keep.data(), keep.ld() * sizeof(T), device, v.data(), v.ld() * sizeof(T), v.device(),
                    v.rows() * sizeof(T), static_cast<std::size_t>(v.cols()));
  return keep.view();
}

template <Scalar T>
template <Scalar U>
Matrix<U> Matrix<T>::cast() const {
  require_host(device_, "Matrix::cast");
  Matrix<U> m = Matrix<U>::uninitialized(rows_, cols_);
  for (index k = 0; k < size(); ++k) m.data()[k] = static_cast<U>(data()[k]);
  return m;
}

}  // namespace linv
