// Internal to linv_io: the per-format readers and writers that io.cpp dispatches to, and the pieces they
// share (opening files for reading, writing files atomically).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linv/io.hpp"

namespace linv::io::detail {

// ---- reading ----

// A file opened for binary reading. Opening failures raise InputError with the OS's reason.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  // Bytes in memory (a member of an archive) read as a regular file of their size; `path` names them in
  // messages.
  InputFile(std::string path, std::vector<unsigned char> bytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const noexcept { return path_; }
  std::FILE* get() const noexcept { return file_; }
  // The size in bytes of a regular file; nullopt for pipes and other streams of unknown length.
  std::optional<std::int64_t> size() const noexcept { return size_; }
  // Reads up to `bytes` bytes and returns how many were read (fewer only at the end of the file); a read
  // error raises InputError.
  std::size_t read_some(void* dst, std::size_t bytes);
  // Moves to `offset` bytes from the start; a failure raises InputError.
  void seek(std::int64_t offset);
  // Where the next read starts.
  std::int64_t offset() const noexcept { return offset_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::optional<std::int64_t> size_;
  std::int64_t offset_ = 0;
  std::vector<unsigned char> bytes_;  // what a memory-backed file reads
  void open_bytes();                  // file_ reading bytes_
};

// The unsigned integer stored in `bytes` (at most 8) little-endian bytes at p.
inline std::uint64_t little_endian(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int k = bytes - 1; k >= 0; --k) v = v << 8 | p[k];
  return v;
}

// Deflate (zlib, gzip, PNG's IDAT) packs at most 1032 bytes into one: a compressed file of n bytes inflates
// to at most 1032 n. Readers of compressed data refuse headers announcing more than that before they
// allocate what the header announces.
constexpr std::int64_t kMaxDeflateRatio = 1032;

// ---- writing ----

// A file written under a temporary name beside `target` (".<name>.tmp-<pid>-<random>") and renamed over
// the target by commit(). Destroyed without commit() (an exception on the way), it removes the temporary
// file, so a failed write leaves the target as it was; while it exists, the temporary file is listed for
// io::remove_temporary_files(), which a handler of a fatal signal calls. Failures raise
// InputError("could not write ...").
// Where writing `target` puts the bytes: a symbolic link at that path is written through to the file it
// names (as cp and compilers do), however many links lead there, dangling or not; otherwise the path itself.
std::filesystem::path written_path(const std::string& target);

class AtomicFile {
 public:
  explicit AtomicFile(std::string target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& temp_path() const noexcept { return temp_; }
  void write(const void* data, std::size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // For libraries that open the file by name (matio): closes linv's handle, keeping the temporary name
  // reserved; such a library writes temp_path() itself before commit().
  void close_handle();
  void commit();
  // Throws InputError("could not write <target>: <reason>").
  [[noreturn]] void fail(const std::string& reason) const;

 private:
  std::string target_;       // as the caller named it, for messages
  std::string destination_;  // the file written: target_, or where a symbolic link there leads
  std::string temp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
  int listed_ = -1;  // its entry in the table of temporary files (src/io/temporary_files.hpp)
};

// Whether the view's elements lie in one block of memory, column after column.
template <Scalar T>
bool is_contiguous(ConstMatrixView<T> A) {
  return A.empty() || A.cols() == 1 || A.ld() == A.rows();
}

// ---- notes for the report (io::take_input_notes) ----
void add_input_note(std::string note);

// ---- NumPy .npy, and .npz archives of them ----
AnyMatrix read_npy(InputFile& in);
// A matrix as read_npy reads it, or a complex one ('<c8', '<c16'); read_npy and the others refuse those.
AnyDense read_npy_dense(InputFile& in);
AnyStack read_npy_stack(InputFile& in);
// io::read_stack_part of a .npy: a C-order float32/float64 3-D array in a regular file from its part's
// bytes only, any other read whole and cut by part_of.
StackPart read_npy_stack_part(InputFile& in, int part, int parts);
// io::read_matrix_columns of a .npy: a 2-D float array in a regular file from its part's bytes, any other
// read whole and cut.
ColumnPart read_npy_columns(InputFile& in, int part, int parts);
// Where part `part` of `parts` of a stack of `total` matrices begins.
index part_begin(index total, int part, int parts);
// Part `part` of `parts` of the columns of a matrix read whole.
ColumnPart columns_of(AnyMatrix&& whole, int part, int parts);
// Part `part` of `parts` of a stack read whole.
StackPart part_of(AnyStack&& whole, int part, int parts);
// The member `name` (with or without ".npy"; empty: the archive's only member) of a .npz archive, as a
// file of its own. The archive's faults raise ParseError, a missing or ambiguous name InvalidArgument
// listing the members.
InputFile npz_member(const std::string& path, const std::string& name);
// The number of dimensions of a .npy file's array (its header only is read).
std::size_t npy_dimensions(InputFile& in);
// With `vector`, A (one column) is written as a 1-D array.
template <Scalar T>
void write_npy(const std::string& path, ConstMatrixView<T> A, bool vector = false);
template <Scalar T>
void write_npz(const std::string& path, const std::vector<std::pair<std::string, ConstMatrixView<T>>>& arrays,
               bool vectors = false);
template <Real T>
void write_npy_stack(const std::string& path, const MatrixStack<T>& stack);
// The preamble and header np.save writes for a Fortran-order rows x cols array of T, or with `vector` for a
// 1-D array of rows entries (cols 1); the data follows it.
template <Real T>
std::string npy_header(index rows, index cols, bool vector = false);
// An image: height x width or height x width x channels (1 to 4), float32/float64 as they are, uint8/uint16
// scaled to [0, 1]. Malformed arrays, and shapes or types that are not an image's, raise ParseError.
Image read_npy_image(const std::string& path);
// `pixels` is height x (width * channels), channel-blocked as in Image; written as float64, height x width
// for one channel and height x width x channels otherwise.
void write_npy_image(const std::string& path, ConstMatrixView<double> pixels, int channels);

// ---- Matrix Market .mtx ----
// A real, integer or pattern file as float64 (a complex one is a ParseError: read_mtx_dense reads it).
AnyMatrix read_mtx(const std::string& path);
// read_mtx's matrix, or a complex file's as complex128.
AnyDense read_mtx_dense(const std::string& path);
// A coordinate file straight into compressed rows; an array file's nonzeros (real files only).
SparseMatrix<double> read_mtx_sparse(const std::string& path);
// Coordinate when at most a third of A's entries are stored, array otherwise; the complex field for complex A.
template <Scalar T>
void write_mtx(const std::string& path, ConstMatrixView<T> A);
// Coordinate, whatever the density.
template <Real T>
void write_mtx_sparse(const std::string& path, const SparseMatrix<T>& S);

// ---- MATLAB .mat (stubs that raise InputError when linv was built without matio) ----
// An empty `variable` picks the file's only numeric variable when reading and means "X" when writing.
AnyMatrix read_mat(const std::string& path, const std::string& variable);
AnyStack read_mat_stack(const std::string& path, const std::string& variable);
// read_mat's matrix, or a complex variable's (complex integers exactly, as complex128).
AnyDense read_mat_dense(const std::string& path, const std::string& variable);
template <Scalar T>
void write_mat(const std::string& path, const std::string& variable, ConstMatrixView<T> A);
template <Real T>
void write_mat_stack(const std::string& path, const std::string& variable, const MatrixStack<T>& stack);

}  // namespace linv::io::detail
