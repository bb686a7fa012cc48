// The format-independent half of linv's file I/O: choosing the format from the file name (one table of
// formats) and element-type conversion; the file plumbing the formats share is src/io/files.cpp's.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "io/formats.hpp"
#include "io/temporary_files.hpp"
#include "linv/errors.hpp"

namespace linv::io {

namespace {
// The file of a spec, without the variable of a .mat or .npz ("file.mat:x" is file.mat).
std::string file_part(const std::string& spec);
}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  if (a == "-" || b == "-" || a.empty() || b.empty()) return false;
  auto resolved = [](const std::string& spec) {
    std::error_code ec;
    const fs::path written = detail::written_path(file_part(spec));
    const fs::path canonical = fs::weakly_canonical(fs::absolute(written, ec), ec);
    return ec ? fs::absolute(written, ec).lexically_normal() : canonical;
  };
  const fs::path pa = resolved(a), pb = resolved(b);
  if (pa == pb) return true;
  std::error_code ec;
  return fs::exists(pa, ec) && fs::exists(pb, ec) && fs::equivalent(pa, pb, ec);
}

namespace {

enum class Format { npy, npz, mtx, mat };

// One entry per matrix file format: what the spec parser, the error that lists the formats and the output
// check know of it. Its reader and writer are the cases of Format in the functions below, one file each
// (npy.cpp, npz.cpp, mtx.cpp, mat.cpp), so a new format is that file, this line and those cases.
struct FormatEntry {
  Format format;
  std::string_view extension;  // lower case, with the dot
  std::string_view described;  // for the error that lists them
  bool names_variables;        // "file.ext:NAME" picks one of several arrays
  bool (*built)();             // nullptr: always built in
  std::string_view library;    // what it needs where `built` says no
};
constexpr FormatEntry kFormats[] = {
    {Format::npy, ".npy", "NumPy", false, nullptr, ""},
    {Format::npz, ".npz", "NumPy archives; file.npz:NAME picks an array", true, have_npz_support, "zlib"},
    {Format::mtx, ".mtx", "Matrix Market", false, nullptr, ""},
    {Format::mat, ".mat", "MATLAB; file.mat:NAME picks a variable", true, have_mat_support, "matio"},
};

const FormatEntry& entry(Format format) {
  for (const FormatEntry& e : kFormats)
    if (e.format == format) return e;
  throw std::logic_error("io: a format without an entry in kFormats");
}

// ".npy (NumPy), .npz (NumPy archives; ...), .mtx (Matrix Market) and .mat (MATLAB; ...)"
std::string listed_formats() {
  std::string out;
  for (std::size_t k = 0; k < std::size(kFormats); ++k) {
    if (k > 0) out += k + 1 == std::size(kFormats) ? " and " : ", ";
    out += fmt::format("{} ({})", kFormats[k].extension, kFormats[k].described);
  }
  return out;
}

// A spec split into the file, its format and (for .mat and .npz) the variable.
struct Target {
  std::string path;
  Format format;
  std::string variable;
};

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool names_variables(const std::string& path) {
  const std::string lower = lowercase(path);
  for (const FormatEntry& e : kFormats)
    if (e.names_variables && lower.ends_with(e.extension)) return true;
  return false;
}

// Directories may contain ':'; only one in the file name, right after ".mat" or ".npz", introduces a
// variable.
std::string file_part(const std::string& spec) {
  const std::size_t slash = spec.rfind('/');
  const std::size_t name_begin = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t colon = spec.rfind(':');
  if (colon != std::string::npos && colon >= name_begin && names_variables(spec.substr(0, colon)))
    return spec.substr(0, colon);
  return spec;
}

Target parse_spec(const std::string& spec) {
  Target t{file_part(spec), Format::npy, {}};
  if (t.path.size() < spec.size()) {
    t.variable = spec.substr(t.path.size() + 1);
    if (t.variable.empty())
      throw InvalidArgument(
          fmt::format("'{}' names no variable after the ':' (write {}:NAME, or leave the ':' out)", spec, t.path));
  }
  if (spec == "-") return t;  // standard input or output: a .npy stream
  const std::string extension = lowercase(std::filesystem::path(t.path).extension().string());
  for (const FormatEntry& e : kFormats)
    if (e.extension == extension) {
      t.format = e.format;
      return t;
    }
  throw InvalidArgument(fmt::format("cannot tell the file format of '{}' from its extension: linv reads and writes {}",
                                    spec, listed_formats()));
}

// The .npy file a spec of format npy or npz names: the file, or the archive's member.
detail::InputFile npy_source(const Target& t) {
  if (t.format == Format::npz) return detail::npz_member(t.path, t.variable);
  return detail::InputFile(t.path);
}

template <Real T>
MatrixStack<T> stack_of_one(Matrix<T>&& m) {
  MatrixStack<T> s{1, m.rows(), m.cols(), {}};
  s.data.assign(m.data(), m.data() + m.size());
  return s;
}

}  // namespace

const char* to_string(DType t) { return t == DType::Float32 ? "float32" : "float64"; }

namespace {
thread_local std::vector<std::string> input_notes;
}  // namespace

void detail::add_input_note(std::string note) {
  constexpr std::size_t kKept = 32;  // a long-lived caller that never takes them holds no more
  if (input_notes.size() == kKept) input_notes.erase(input_notes.begin());
  input_notes.push_back(std::move(note));
}

std::vector<std::string> take_input_notes() { return std::exchange(input_notes, {}); }

AnyMatrix read_matrix(const std::string& spec) {
  const Target t = parse_spec(spec);
  if (t.format == Format::npy || t.format == Format::npz) {
    detail::InputFile in = npy_source(t);
    return detail::read_npy(in);
  }
  if (t.format == Format::mtx) return detail::read_mtx(t.path);
  return detail::read_mat(t.path, t.variable);
}

AnyDense read_dense(const std::string& spec) {
  const Target t = parse_spec(spec);
  if (t.format == Format::npy || t.format == Format::npz) {
    detail::InputFile in = npy_source(t);
    return detail::read_npy_dense(in);
  }
  if (t.format == Format::mtx) return detail::read_mtx_dense(t.path);
  return detail::read_mat_dense(t.path, t.variable);
}

AnySparse read_sparse(const std::string& spec) {
  const Target t = parse_spec(spec);
  if (t.format == Format::mtx) return detail::read_mtx_sparse(t.path);
  return std::visit([]<Real T>(const Matrix<T>& A) -> AnySparse { return SparseMatrix<T>::from_dense(A.view()); },
                    read_matrix(spec));
}

AnyStack read_stack(const std::string& spec) {
  const Target t = parse_spec(spec);
  if (t.format == Format::npy || t.format == Format::npz) {
    detail::InputFile in = npy_source(t);
    return detail::read_npy_stack(in);
  }
  if (t.format == Format::mtx)
    return std::visit([](auto&& m) -> AnyStack { return stack_of_one(std::move(m)); }, detail::read_mtx(t.path));
  return detail::read_mat_stack(t.path, t.variable);
}

namespace {

void require_part(const char* reader, int part, int parts) {
  if (parts < 1 || part < 0 || part >= parts)
    throw InvalidArgument(fmt::format("{}: part {} of {} does not exist", reader, part, parts));
}

}  // namespace

StackPart read_stack_part(const std::string& spec, int part, int parts) {
  require_part("read_stack_part", part, parts);
  const Target t = parse_spec(spec);
  if (t.format == Format::npy || t.format == Format::npz) {
    detail::InputFile in = npy_source(t);
    return detail::read_npy_stack_part(in, part, parts);
  }
  return detail::part_of(read_stack(spec), part, parts);
}

ColumnPart read_matrix_columns(const std::string& spec, int part, int parts) {
  require_part("read_matrix_columns", part, parts);
  const Target t = parse_spec(spec);
  if (t.format == Format::npy || t.format == Format::npz) {
    detail::InputFile in = npy_source(t);
    return detail::read_npy_columns(in, part, parts);
  }
  return detail::columns_of(read_matrix(spec), part, parts);
}

namespace detail {

index part_begin(index total, int part, int parts) { return total * part / parts; }

ColumnPart columns_of(AnyMatrix&& whole, int part, int parts) {
  return std::visit(
      [&]<Real T>(Matrix<T>& m) -> ColumnPart {
        const index first = part_begin(m.cols(), part, parts), last = part_begin(m.cols(), part + 1, parts);
        return {Matrix<T>::copy_of(m.view().block(0, first, m.rows(), last - first)), first, m.cols()};
      },
      whole);
}

StackPart part_of(AnyStack&& whole, int part, int parts) {
  return std::visit(
      [&]<Real T>(MatrixStack<T>& s) -> StackPart {
        const index total = s.count, first = part_begin(total, part, parts);
        const index count = part_begin(total, part + 1, parts) - first, slice = s.rows * s.cols;
        MatrixStack<T> mine{count, s.rows, s.cols, {}};
        mine.data.assign(s.data.begin() + first * slice, s.data.begin() + (first + count) * slice);
        return {std::move(mine), first, total};
      },
      whole);
}

}  // namespace detail

template <Scalar T>
void write_matrix(const std::string& spec, ConstMatrixView<T> A) {
  require_host(A.device(), "write_matrix");
  const Target t = parse_spec(spec);
  switch (t.format) {
    case Format::npy:
      return detail::write_npy(t.path, A);
    case Format::npz:  // one array, named as numpy.savez names a positional one unless the spec names it
      return detail::write_npz<T>(t.path, {{t.variable.empty() ? std::string("arr_0") : t.variable, A}});
    case Format::mtx:
      return detail::write_mtx(t.path, A);
    case Format::mat:
      return detail::write_mat(t.path, t.variable, A);
  }
}

template <Real T>
void write_sparse(const std::string& spec, const SparseMatrix<T>& S) {
  const Target t = parse_spec(spec);
  if (t.format == Format::mtx) return detail::write_mtx_sparse(t.path, S);
  const Matrix<T> dense = S.to_dense();
  write_matrix<T>(spec, dense.view());
}
template void write_sparse<float>(const std::string&, const SparseMatrix<float>&);
template void write_sparse<double>(const std::string&, const SparseMatrix<double>&);

void check_output(const std::string& spec, OutputKind kind) {
  std::string path = spec;
  switch (kind) {
    case OutputKind::matrix: {
      const Target t = parse_spec(spec);
      const FormatEntry& e = entry(t.format);
      if (e.built && !e.built())
        throw InvalidArgument(fmt::format("{}: linv was built without {}, so it cannot write {} files (use .npy)", spec,
                                          e.library, e.extension));
      path = t.path;
      break;
    }
    case OutputKind::image: {
      const std::string lower = lowercase(spec);
      if (spec == "-") return;  // a .npy image on standard output
      if (!lower.ends_with(".png") && !lower.ends_with(".pgm") && !lower.ends_with(".npy"))
        throw InvalidArgument(fmt::format("{}: images are written to .png, .pgm or .npy files", spec));
      if (lower.ends_with(".png") && !have_png_support())
        throw InvalidArgument(fmt::format("{}: linv was built without libpng, so it cannot write .png (use .pgm or "
                                          ".npy)",
                                          spec));
      break;
    }
    case OutputKind::nifti:
      if (spec == "-") throw InvalidArgument("NIfTI images are not written to standard output ('-'): name a file");
      if (!is_nifti_path(spec))
        throw InvalidArgument(fmt::format("{}: NIfTI images are written to .nii or .nii.gz files", spec));
      if (!have_nifti_support())
        throw InvalidArgument(fmt::format("{}: linv was built without NIfTI support (libnifti2)", spec));
      break;
    case OutputKind::text:
      if (spec == "-") return;
      break;
    case OutputKind::directory: {
      if (spec == "-") throw InvalidArgument("a directory output cannot be standard output ('-'): name a directory");  // made when missing: its nearest existing ancestor must take it
      std::filesystem::path p = std::filesystem::absolute(spec);
      std::error_code ec;
      while (!std::filesystem::exists(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
      if (!std::filesystem::is_directory(p, ec))
        throw InputError(fmt::format("could not write into {}: {} is not a directory", spec, p.string()));
      if (::access(p.c_str(), W_OK) != 0)
        throw InputError(fmt::format("could not write into {}: {} is not writable ({})", spec, p.string(),
                                     std::strerror(errno)));
      return;
    }
  }
  if (path == "-") return;  // standard output: no directory to check
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::filesystem::path folder = parent.empty() ? std::filesystem::path(".") : parent;
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw InputError(fmt::format("could not write {}: the directory {} does not exist", spec, folder.string()));
  if (::access(folder.c_str(), W_OK) != 0)
    throw InputError(fmt::format("could not write {}: the directory {} is not writable ({})", spec, folder.string(),
                                 std::strerror(errno)));
}

void make_directory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw InputError(fmt::format("could not create the directory {}: {}", path, ec.message()));
}

bool is_vector(const std::string& spec) {
  const Target t = parse_spec(spec);
  if (t.format != Format::npy && t.format != Format::npz) return false;
  detail::InputFile in = npy_source(t);
  return detail::npy_dimensions(in) == 1;
}

template <Scalar T>
void write_vector(const std::string& spec, ConstMatrixView<T> v) {
  require_host(v.device(), "write_vector");
  if (v.cols() != 1)
    throw InvalidArgument(fmt::format("write_vector: {} is not one column", shape_string(v.rows(), v.cols())));
  const Target t = parse_spec(spec);
  switch (t.format) {
    case Format::npy:
      return detail::write_npy(t.path, v, /*vector=*/true);
    case Format::npz:
      return detail::write_npz<T>(t.path, {{t.variable.empty() ? std::string("arr_0") : t.variable, v}},
                                  /*vectors=*/true);
    case Format::mtx:
    case Format::mat:
      return write_matrix<T>(spec, v);
  }
}

template <Real T>
void write_stack(const std::string& spec, const MatrixStack<T>& stack) {
  if (stack.count < 0 || stack.rows < 0 || stack.cols < 0 ||
      static_cast<index>(stack.data.size()) != stack.count * stack.rows * stack.cols)
    throw InvalidArgument(fmt::format("write_stack: a stack of {} matrices of {} needs {} elements, it holds {}",
                                      stack.count, shape_string(stack.rows, stack.cols),
                                      stack.count * stack.rows * stack.cols, stack.data.size()));
  const Target t = parse_spec(spec);
  switch (t.format) {
    case Format::npy:
      return detail::write_npy_stack(t.path, stack);
    case Format::npz:
      throw InvalidArgument(fmt::format("{}: linv writes stacks of matrices as .npy or .mat, not into .npz archives",
                                        spec));
    case Format::mtx:
      if (stack.count != 1)
        throw InvalidArgument(
            fmt::format("{}: a Matrix Market file holds one matrix, the stack has {}; write "
                        "stacks as .npy or .mat",
                        spec, stack.count));
      return detail::write_mtx(t.path, stack[0]);
    case Format::mat:
      return detail::write_mat_stack(t.path, t.variable, stack);
  }
}

template <Real T>
void write_npz(const std::string& path, const std::vector<std::pair<std::string, ConstMatrixView<T>>>& arrays) {
  detail::write_npz<T>(path, arrays);
}

void write_text(const std::string& path, const std::string& text) {
  detail::AtomicFile out(path);
  out.write(text);
  out.commit();
}

bool have_npz_support() {
#ifdef LINV_HAVE_ZLIB
  return true;
#else
  return false;
#endif
}

bool have_mat_support() {
#ifdef LINV_HAVE_MATIO
  return true;
#else
  return false;
#endif
}

template <Real T>
Matrix<T> convert(AnyMatrix&& m, bool allow_narrowing) {
  if (auto* same = std::get_if<Matrix<T>>(&m)) return std::move(*same);
  if constexpr (std::same_as<T, double>) {
    return std::get<Matrix<float>>(m).template cast<double>();
  } else {
    if (!allow_narrowing)
      throw InvalidArgument(
          "the input holds float64 data; reading it as float32 loses precision: ask for single precision "
          "explicitly");
    return std::get<Matrix<double>>(m).template cast<float>();
  }
}

template void write_npz<float>(const std::string&, const std::vector<std::pair<std::string, ConstMatrixView<float>>>&);
template void write_npz<double>(const std::string&, const std::vector<std::pair<std::string, ConstMatrixView<double>>>&);
template void write_matrix<float>(const std::string&, ConstMatrixView<float>);
template void write_matrix<double>(const std::string&, ConstMatrixView<double>);
template void write_vector<float>(const std::string&, ConstMatrixView<float>);
template void write_vector<double>(const std::string&, ConstMatrixView<double>);
template void write_matrix<std::complex<float>>(const std::string&, ConstMatrixView<std::complex<float>>);
template void write_matrix<std::complex<double>>(const std::string&, ConstMatrixView<std::complex<double>>);
template void write_vector<std::complex<float>>(const std::string&, ConstMatrixView<std::complex<float>>);
template void write_vector<std::complex<double>>(const std::string&, ConstMatrixView<std::complex<double>>);
template void write_stack<float>(const std::string&, const MatrixStack<float>&);
template void write_stack<double>(const std::string&, const MatrixStack<double>&);
template Matrix<float> convert<float>(AnyMatrix&&, bool);
template Matrix<double> convert<double>(AnyMatrix&&, bool);

}  // namespace linv::io
