#include "linv/matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/parallel.hpp"
#include "kernels/runtime.hpp"
#include "linv/errors.hpp"

namespace linv {

std::string shape_string(index rows, index cols) { return fmt::format("{}x{}", rows, cols); }

void require_host(Device device, const char* what) {
  if (!device.is_cpu())
    throw InvalidArgument(fmt::format("{} needs a matrix in host memory, got one on {}; copy it with .to(Device::cpu())",
                                      what, device.name()));
}

template <Scalar T>
void copy(ConstMatrixView<T> src, MatrixView<T> dst) {
  if (src.rows() != dst.rows() || src.cols() != dst.cols())
    throw ShapeMismatch("copy: source and destination", src.rows(), src.cols(), dst.rows(), dst.cols());
  if (src.empty()) return;
  detail::copy_2d(dst.data(), static_cast<std::size_t>(dst.ld()) * sizeof(T), dst.device(), src.data(),
                  static_cast<std::size_t>(src.ld()) * sizeof(T), src.device(),
                  static_cast<std::size_t>(src.rows()) * sizeof(T), static_cast<std::size_t>(src.cols()));
}
template void copy<float>(ConstMatrixView<float>, MatrixView<float>);
template void copy<double>(ConstMatrixView<double>, MatrixView<double>);
template void copy<std::complex<float>>(ConstMatrixView<std::complex<float>>, MatrixView<std::complex<float>>);
template void copy<std::complex<double>>(ConstMatrixView<std::complex<double>>, MatrixView<std::complex<double>>);

template <Real T>
SparseMatrix<T> SparseMatrix<T>::from_dense(ConstMatrixView<T> A) {
  require_host(A.device(), "SparseMatrix::from_dense");
  SparseMatrix s;
  s.rows = A.rows();
  s.cols = A.cols();
  s.row_start.reserve(static_cast<std::size_t>(s.rows + 1));
  s.row_start.push_back(0);
  for (index r = 0; r < s.rows; ++r) {
    for (index c = 0; c < s.cols; ++c)
      if (A(r, c) != T(0)) {
        s.column.push_back(c);
        s.value.push_back(A(r, c));
      }
    s.row_start.push_back(static_cast<index>(s.column.size()));
  }
  return s;
}

template <Real T>
Matrix<T> SparseMatrix<T>::to_dense() const {
  Matrix<T> A(rows, cols);
  for (index r = 0; r < rows; ++r)
    for (index k = row_start[r]; k < row_start[r + 1]; ++k) A(r, column[k]) = value[k];
  return A;
}

template <Real T>
SparseMatrix<T> SparseMatrix<T>::transpose() const {
  // A counting sort by column over linv's threads, each taking a contiguous block of rows: thread t's
  // entries of column c go after those of the threads before it, so each row of A^T keeps its columns (A's
  // rows) ascending, whatever the number of threads.
  // Each thread counts into a row of `count` (threads x cols): no more threads than the entries pay for.
  constexpr index kRowsPerThread = 16384;
  const index threads =
      std::clamp<index>(std::min(rows / kRowsPerThread, nonzeros() / std::max<index>(cols, 1)), 1, cpu_threads());
  const index per = (rows + threads - 1) / threads;
  std::vector<index> count(static_cast<std::size_t>(threads * cols), 0);  // thread t's entries in column c
  detail::in_parallel(threads, 1, [&](index first, index last) {
    for (index t = first; t < last; ++t)
      for (index k = row_start[std::min(rows, t * per)]; k < row_start[std::min(rows, (t + 1) * per)]; ++k)
        ++count[static_cast<std::size_t>(t * cols + column[k])];
  });
  SparseMatrix t{cols, rows, std::vector<index>(static_cast<std::size_t>(cols + 1), 0), {}, {}};
  index next = 0;
  for (index c = 0; c < cols; ++c) {  // count becomes where thread t's entries of column c begin
    t.row_start[c] = next;
    for (index th = 0; th < threads; ++th) next += std::exchange(count[static_cast<std::size_t>(th * cols + c)], next);
  }
  t.row_start[cols] = next;
  t.column.resize(column.size());
  t.value.resize(value.size());
  detail::in_parallel(threads, 1, [&](index first, index last) {
    for (index th = first; th < last; ++th) {
      index* slot = &count[static_cast<std::size_t>(th * cols)];
      for (index r = std::min(rows, th * per); r < std::min(rows, (th + 1) * per); ++r)
        for (index k = row_start[r]; k < row_start[r + 1]; ++k) {
          const index at = slot[column[k]]++;
          t.column[at] = r;
          t.value[at] = value[k];
        }
    }
  });
  return t;
}

template <Real T>
SparseMatrix<T> SparseMatrix<T>::from_triplets(index rows, index cols, const std::vector<index>& row,
                                               const std::vector<index>& column, const std::vector<T>& value) {
  const std::size_t n = value.size();
  if (row.size() != n || column.size() != n)
    throw InvalidArgument(fmt::format("sparse triplets: {} rows, {} columns and {} values", row.size(), column.size(), n));
  SparseMatrix s;
  s.rows = rows;
  s.cols = cols;
  // A counting sort by row, then each row sorted by column and its repeated columns summed.
  s.row_start.assign(static_cast<std::size_t>(rows + 1), 0);
  for (std::size_t k = 0; k < n; ++k) {
    if (row[k] < 0 || row[k] >= rows || column[k] < 0 || column[k] >= cols)
      throw InvalidArgument(fmt::format("sparse triplets: entry {} at ({}, {}) is outside a {} matrix", k, row[k],
                                        column[k], shape_string(rows, cols)));
    ++s.row_start[static_cast<std::size_t>(row[k] + 1)];
  }
  for (index r = 0; r < rows; ++r) s.row_start[r + 1] += s.row_start[r];
  std::vector<index> next(s.row_start.begin(), s.row_start.end() - 1);
  std::vector<std::pair<index, T>> entries(n);
  for (std::size_t k = 0; k < n; ++k) entries[static_cast<std::size_t>(next[row[k]]++)] = {column[k], value[k]};
  s.column.reserve(n);
  s.value.reserve(n);
  index kept = 0;
  for (index r = 0; r < rows; ++r) {
    const auto first = entries.begin() + s.row_start[r], last = entries.begin() + s.row_start[r + 1];
    // stable: repeats are summed in the order given
    std::stable_sort(first, last, [](const auto& a, const auto& b) { return a.first < b.first; });
    s.row_start[r] = kept;
    for (auto e = first; e != last; ++e) {
      if (kept > s.row_start[r] && s.column.back() == e->first) {
        s.value.back() += e->second;
        continue;
      }
      s.column.push_back(e->first);
      s.value.push_back(e->second);
      ++kept;
    }
  }
  s.row_start[rows] = kept;
  return s;
}

template struct SparseMatrix<float>;
template struct SparseMatrix<double>;

namespace detail {

namespace {
// The device whose runtime moves bytes between `dst` and `src`: the host's when both live there, otherwise
// the one that is not the host (copies between two GPUs go through the host).
Device mover(Device dst, Device src) {
  if (!dst.is_cpu() && !src.is_cpu() && dst != src)
    throw InvalidArgument(fmt::format("copies between {} and {} go through the host", src.name(), dst.name()));
  return dst.is_cpu() ? src : dst;
}
}  // namespace

void require_shape(index rows, index cols, std::size_t element, const char* type) {
  if (rows < 0 || cols < 0) throw InvalidArgument(fmt::format("a matrix cannot be {}x{}", rows, cols));
  const double bytes = static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(element);
  if (bytes >= 0x1p62)
    throw InvalidArgument(fmt::format("a {}x{} matrix of {} would take {:.3g} bytes, more than any memory holds", rows,
                                      cols, type, bytes));
}

void* allocate_bytes(std::size_t bytes, Device device) {
  return kernels::runtime(device.kind()).allocate(bytes, device.index());
}

void free_bytes(void* p, Device device) noexcept {
  // Memory exists only on devices whose runtime was built, so the look-up cannot fail here.
  if (p != nullptr && kernels::built_with(device.kind())) kernels::runtime(device.kind()).free(p, device.index());
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) {
  const Device d = mover(dst_device, src_device);
  kernels::runtime(d.kind()).copy(dst, src, bytes, d.index());
}

void copy_2d(void* dst, std::size_t dst_pitch, Device dst_device, const void* src, std::size_t src_pitch,
             Device src_device, std::size_t width, std::size_t height) {
  const Device d = mover(dst_device, src_device);
  kernels::runtime(d.kind()).copy_2d(dst, dst_pitch, src, src_pitch, width, height, d.index());
}

void fill_zero_bytes(void* p, Device device, std::size_t bytes) {
  kernels::runtime(device.kind()).fill_zero(p, bytes, device.index());
}

}  // namespace detail
}  // namespace linv
