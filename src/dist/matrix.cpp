// Block-cyclic matrices: allocation, the parallel .npy reader and writer (each process maps the file and
// touches only its own tiles), and scatter and gather through the root.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include "dist/communicator.hpp"
#include "dist/layout.hpp"
#include "linv/io.hpp"
#include "kernels/distributed.hpp"
#include "linv/distributed.hpp"

namespace linv::dist {
namespace {

// A whole file mapped into memory, read-only or writable, unmapped and closed on destruction.
class MappedFile {
 public:
  MappedFile(const std::string& path, bool writable) : path_(path) {
    fd_ = ::open(path.c_str(), writable ? O_RDWR : O_RDONLY);
    if (fd_ < 0) fail("open");
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail("stat");
    bytes_ = static_cast<std::size_t>(st.st_size);
    if (bytes_ == 0) return;
    data_ = ::mmap(nullptr, bytes_, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd_, 0);
    if (data_ == MAP_FAILED) {
      data_ = nullptr;
      fail("map");
    }
    ::madvise(data_, bytes_, MADV_SEQUENTIAL);
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, bytes_);
    if (fd_ >= 0) ::close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  char* data() const noexcept { return static_cast<char*>(data_); }
  std::size_t bytes() const noexcept { return bytes_; }
  // Flushes the writes to the file, so that a process on another host sees them once the root renames it.
  void sync() {
    if (data_ != nullptr && ::msync(data_, bytes_, MS_SYNC) != 0) fail("write");
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    const int error = errno;
    if (fd_ >= 0) ::close(fd_);
    throw InputError(fmt::format("could not {} {}: {}", what, path_, std::strerror(error)));
  }
  std::string path_;
  int fd_ = -1;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Visits this process's tiles as runs of entries that are contiguous in the global column-major order:
// run(local row, local col, global row, global col, length), down each local column.
template <class Run>
void for_each_run(index local_rows, index local_cols, index block, const Grid& g, Run&& run) {
  for (index lj = 0; lj < local_cols; ++lj) {
    const index gj = layout::global_index(lj, block, g.col(), g.cols());
    for (index li = 0; li < local_rows; li += block)
      run(li, lj, layout::global_index(li, block, g.row(), g.rows()), gj, std::min(block, local_rows - li));
  }
}

// A local matrix in host memory: a view of it on the CPU, else of a copy made in `staged`.
template <Real T>
ConstMatrixView<T> on_host(const Matrix<T>& local, Matrix<T>& staged) {
  if (local.device().is_cpu()) return local.view();
  staged = local.to(Device::cpu());
  return staged.view();
}

// Process (prow, pcol)'s tiles of `whole` (every process's tiles, of a matrix every process or the root
// holds), and the reverse: a process's tiles put back into `whole`.
template <Real T>
Matrix<T> tiles_of(ConstMatrixView<T> whole, index block, int prow, int nprow, int pcol, int npcol) {
  Matrix<T> part = Matrix<T>::uninitialized(layout::local_count(whole.rows(), block, prow, nprow),
                                            layout::local_count(whole.cols(), block, pcol, npcol));
  for (index lj = 0; lj < part.cols(); ++lj) {
    const index gj = layout::global_index(lj, block, pcol, npcol);
    for (index li = 0; li < part.rows(); ++li) part(li, lj) = whole(layout::global_index(li, block, prow, nprow), gj);
  }
  return part;
}
template <Real T>
void place_tiles(ConstMatrixView<T> part, Matrix<T>& whole, index block, int prow, int nprow, int pcol, int npcol) {
  for (index lj = 0; lj < part.cols(); ++lj) {
    const index gj = layout::global_index(lj, block, pcol, npcol);
    for (index li = 0; li < part.rows(); ++li) whole(layout::global_index(li, block, prow, nprow), gj) = part(li, lj);
  }
}

// Puts a host image back where `local` lives.
template <Real T>
void store(Matrix<T>& local, Matrix<T>&& host) {
  local = local.device().is_cpu() ? std::move(host) : host.to(local.device());
}

}  // namespace

io::DType npy_dtype(const std::string& path) { return io::npy_layout(path).dtype; }

template <Real T>
DistMatrix<T>::DistMatrix(const Grid& grid, index rows, index cols, index block)
    : grid_(grid), rows_(rows), cols_(cols), block_(block == 0 ? default_block(grid) : block) {
  if (rows < 0 || cols < 0) throw InvalidArgument(fmt::format("a distributed matrix of {} x {}", rows, cols));
  if (block_ < 1) throw InvalidArgument(fmt::format("a distributed matrix needs tiles of at least 1, not {}", block));
  grid.together([&] {
    local_ = Matrix<T>::uninitialized(layout::local_count(rows, block_, grid.row(), grid.rows()),
                                      layout::local_count(cols, block_, grid.col(), grid.cols()), grid.device());
  });
}

template <Real T>
index DistMatrix<T>::global_row(index i) const noexcept {
  return layout::global_index(i, block_, grid_.row(), grid_.rows());
}

template <Real T>
index DistMatrix<T>::global_col(index j) const noexcept {
  return layout::global_index(j, block_, grid_.col(), grid_.cols());
}

template <Real T>
DistMatrix<T> DistMatrix<T>::clone() const {
  DistMatrix<T> copy;
  copy.grid_ = grid_;
  copy.rows_ = rows_, copy.cols_ = cols_, copy.block_ = block_;
  grid_.together([&] { copy.local_ = local_.clone(); });
  return copy;
}

template <Real T>
DistMatrix<T> DistMatrix<T>::read(const Grid& grid, const std::string& path, index block) {
  io::NpyLayout file;
  grid.together([&] {
    if (!path.ends_with(".npy"))
      throw InvalidArgument(fmt::format("{}: a distributed matrix is read from a .npy file, each process its own tiles "
                                        "(convert other formats with NumPy first)",
                                        path));
    file = io::npy_layout(path);
    const io::DType want = std::is_same_v<T, float> ? io::DType::Float32 : io::DType::Float64;
    if (file.dtype != want)
      throw InvalidArgument(fmt::format("{} holds {} entries; it was to be read as {}", path, io::to_string(file.dtype),
                                        io::to_string(want)));
  });
  DistMatrix<T> M(grid, file.rows, file.cols, block);
  block = M.block();
  grid.together([&] {
    const MappedFile mapped(path, /*writable=*/false);
    const char* data = mapped.data() + file.data_offset;
    Matrix<T> host = Matrix<T>::uninitialized(M.local_.rows(), M.local_.cols());
    const index rows = file.rows, cols = file.cols;
    for_each_run(host.rows(), host.cols(), block, grid, [&](index li, index lj, index gi, index gj, index count) {
      T* to = &host(li, lj);
      if (file.fortran_order) {
        std::memcpy(to, data + static_cast<std::size_t>(gi + gj * rows) * sizeof(T),
                    static_cast<std::size_t>(count) * sizeof(T));
      } else {  // the run's entries lie a row apart
        for (index k = 0; k < count; ++k)
          std::memcpy(to + k, data + static_cast<std::size_t>((gi + k) * cols + gj) * sizeof(T), sizeof(T));
      }
    });
    store(M.local_, std::move(host));
  });
  return M;
}

template <Real T>
DistMatrix<T> DistMatrix<T>::from_replicated(const Grid& grid, ConstMatrixView<T> A, index block) {
  DistMatrix<T> M(grid, A.rows(), A.cols(), block);
  grid.together([&] {
    store(M.local_, tiles_of(A, M.block_, grid.row(), grid.rows(), grid.col(), grid.cols()));
  });
  return M;
}

template <Real T>
DistMatrix<T> DistMatrix<T>::random_uniform(const Grid& grid, index rows, index cols, std::uint64_t seed, T lo, T hi,
                                            index block) {
  DistMatrix<T> M(grid, rows, cols, block);
  kernels::distributed<T>(grid).fill_uniform(M, seed, lo, hi);
  return M;
}

template <Real T>
void DistMatrix<T>::write(const std::string& path, bool vector) const {
  if (vector && cols_ != 1)
    throw InvalidArgument(fmt::format("a {} matrix is not written as a vector", shape_string(rows_, cols_)));
  std::optional<io::NpyInPlace<T>> file;  // the root's: renamed into place once every process has written
  std::string temp;
  grid_.together([&] {
    if (!grid_.is_root()) return;
    file.emplace(path, rows_, cols_, vector);
    temp = file->temp_path();
  });
  grid_.broadcast(temp, 0);
  grid_.together([&] {
    Matrix<T> staged;
    const ConstMatrixView<T> host = on_host(local_, staged);
    MappedFile mapped(temp, /*writable=*/true);
    // every process knows the header's length: np.save's for this shape and type, as NpyInPlace wrote it
    char* data = mapped.data() + io::NpyInPlace<T>::header_bytes(rows_, cols_, vector);
    for_each_run(host.rows(), host.cols(), block_, grid_, [&](index li, index lj, index gi, index gj, index count) {
      std::memcpy(data + static_cast<std::size_t>(gi + gj * rows_) * sizeof(T), &host(li, lj),
                  static_cast<std::size_t>(count) * sizeof(T));
    });
    mapped.sync();
  });
  grid_.together([&] {
    if (file) file->commit();
  });
}

template <Real T>
DistMatrix<T> DistMatrix<T>::scatter(const Grid& grid, ConstMatrixView<T> A, index rows, index cols, index block) {
  grid.together([&] {
    if (grid.is_root() && (A.rows() != rows || A.cols() != cols))
      throw ShapeMismatch("DistMatrix::scatter: the root's matrix and the shape given", A.rows(), A.cols(), rows, cols);
  });
  DistMatrix<T> M(grid, rows, cols, block);
  block = M.block();
  const detail::Communicator& comm = grid.communicator();
  Matrix<T> mine;
  if (grid.is_root()) {
    Matrix<T> staged;  // A in host memory, where it is not already
    ConstMatrixView<T> whole = A;
    if (!A.device().is_cpu()) {
      staged = Matrix<T>::copy_of(A).to(Device::cpu());
      whole = staged.view();
    }
    for (int p = grid.size() - 1; p >= 0; --p) {  // the root's own part last: it is kept
      Matrix<T> part = tiles_of(whole, block, p / grid.cols(), grid.rows(), p % grid.cols(), grid.cols());
      if (p == 0)
        mine = std::move(part);
      else
        comm.send(p, part.data(), part.bytes());
    }
  } else {
    mine = Matrix<T>::uninitialized(M.local_.rows(), M.local_.cols());
    comm.receive(0, mine.data(), mine.bytes());
  }
  grid.together([&] { store(M.local_, std::move(mine)); });
  return M;
}

template <Real T>
Matrix<T> DistMatrix<T>::gather() const {
  const detail::Communicator& comm = grid_.communicator();
  Matrix<T> whole;
  grid_.together([&] {
    if (grid_.is_root()) whole = Matrix<T>::uninitialized(rows_, cols_);
  });
  Matrix<T> staged;
  const ConstMatrixView<T> mine = on_host(local_, staged);  // contiguous: ld is its rows
  if (!grid_.is_root()) {
    comm.send(0, mine.data(), static_cast<std::size_t>(mine.rows() * mine.cols()) * sizeof(T));
    return whole;
  }
  place_tiles(mine, whole, block_, 0, grid_.rows(), 0, grid_.cols());
  for (int p = 1; p < grid_.size(); ++p) {
    const int prow = p / grid_.cols(), pcol = p % grid_.cols();
    Matrix<T> part = Matrix<T>::uninitialized(layout::local_count(rows_, block_, prow, grid_.rows()),
                                              layout::local_count(cols_, block_, pcol, grid_.cols()));
    comm.receive(p, part.data(), part.bytes());
    place_tiles<T>(part.view(), whole, block_, prow, grid_.rows(), pcol, grid_.cols());
  }
  return whole;
}

template <Real T>
Matrix<T> DistMatrix<T>::replicated() const {
  Matrix<T> whole = gather();
  if (!grid_.is_root()) whole = Matrix<T>::uninitialized(rows_, cols_);
  grid_.broadcast(whole.data(), whole.bytes(), 0);
  return whole;
}

template class DistMatrix<float>;
template class DistMatrix<double>;

}  // namespace linv::dist
