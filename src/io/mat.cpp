// MATLAB .mat files through matio. linv reads real double and single arrays (2-D, or 3-D as a stack: MATLAB
// stores rows x cols x B column-major, so each matrix is contiguous) and writes one variable per file in
// the MAT 5 format (7.3 beyond 2 GiB).
#include <fmt/format.h>

#include "io/formats.hpp"
#include "linv/errors.hpp"

#ifdef LINV_HAVE_MATIO

#include <fmt/ranges.h>
#include <matio.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace linv::io::detail {

namespace {

// matio reports problems through its logger, which prints to stderr by default. linv raises its own errors
// instead and quotes matio's last complaint in them.
thread_local std::string matio_message;

void matio_log(int level, char* message) {
  if ((level & (MATIO_LOG_LEVEL_ERROR | MATIO_LOG_LEVEL_CRITICAL)) != 0) matio_message = message;
}

void start_matio_call() {
  static std::once_flag once;
  std::call_once(once, [] { Mat_LogInitFunc("linv", matio_log); });
  matio_message.clear();
}

std::string matio_reason() { return matio_message.empty() ? std::string() : " (matio: " + matio_message + ")"; }

struct MatCloser {
  void operator()(mat_t* mat) const noexcept { Mat_Close(mat); }
};
using MatFile = std::unique_ptr<mat_t, MatCloser>;
struct VarFreer {
  void operator()(matvar_t* var) const noexcept { Mat_VarFree(var); }
};
using MatVar = std::unique_ptr<matvar_t, VarFreer>;

// As MATLAB's isnumeric: numeric classes, dense or sparse, complex or real; not logical, char or containers.
bool is_numeric(const matvar_t& v) {
  const matio_classes c = v.class_type;
  return !v.isLogical &&
         (c == MAT_C_DOUBLE || c == MAT_C_SINGLE || c == MAT_C_SPARSE || (c >= MAT_C_INT8 && c <= MAT_C_UINT64));
}

// The class as MATLAB's class() and whos name it, with "complex"/"sparse" qualifiers.
std::string class_name(const matvar_t& v) {
  static constexpr const char* names[] = {"empty",  "cell",   "struct", "object", "char",     "sparse",
                                          "double", "single", "int8",   "uint8",  "int16",    "uint16",
                                          "int32",  "uint32", "int64",  "uint64", "function", "opaque"};
  const auto c = static_cast<std::size_t>(v.class_type);
  std::string name = c < std::size(names) ? names[c] : fmt::format("class {}", c);
  if (v.isLogical) name = "logical";
  if (v.class_type == MAT_C_SPARSE) name = v.isLogical ? "sparse logical" : "sparse";
  return v.isComplex ? "complex " + name : name;
}

std::string dims_text(const matvar_t& v) { return fmt::format("{}", fmt::join(v.dims, v.dims + v.rank, "x")); }

std::string describe(const matvar_t& v) { return fmt::format("{} ({} {})", v.name, dims_text(v), class_name(v)); }

// matio reads truncated MAT 5 files without complaint, filling in zeros for what is missing. Every top-level
// data element (one per variable) declares its size in its tag, so a walk over the tags finds truncation.
// Opening the file here also gives missing and unreadable files the OS's reason as an InputError.
void check_structure(const std::string& path) {
  InputFile in(path);
  if (in.size() == 0) throw ParseError(path, 0, -1, "the file is empty, not a MATLAB .mat file");
  std::array<unsigned char, 128> header{};
  if (!in.size() || in.read_some(header.data(), header.size()) < header.size()) return;  // left to matio
  // Bytes 124-127: version 0x0100 and "MI" as a 16-bit number in the writer's byte order.
  const bool little = header[126] == 'I' && header[127] == 'M', big = header[126] == 'M' && header[127] == 'I';
  const auto u32 = [little](const unsigned char* p) {
    return little
               ? std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24
               : std::uint32_t{p[3]} | std::uint32_t{p[2]} << 8 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[0]} << 24;
  };
  const unsigned version = little ? header[124] | header[125] << 8 : header[124] << 8 | header[125];
  if ((!little && !big) || version != 0x0100) return;  // MAT 4, or 7.3 (HDF5): another layout
  constexpr std::uint32_t compressed = 15;             // miCOMPRESSED: not padded to 8 bytes
  const std::int64_t size = *in.size();
  std::int64_t pos = 128;
  while (pos < size) {
    std::array<unsigned char, 8> tag{};
    in.seek(pos);
    if (in.read_some(tag.data(), tag.size()) < tag.size())
      throw ParseError(path, pos, -1, "truncated: the file ends inside the tag of a data element");
    const std::uint32_t type = u32(tag.data()), bytes = u32(tag.data() + 4);
    if (type >> 16 != 0) {  // a small data element: tag and data fit in these 8 bytes
      pos += 8;
      continue;
    }
    const std::int64_t end = pos + 8 + bytes;
    if (end > size)
      throw ParseError(
          path, pos, -1,
          fmt::format("truncated data element: its tag declares {} bytes, but only {} follow", bytes, size - pos - 8));
    pos = type == compressed ? end : (end + 7) / 8 * 8;
  }
}

MatFile open_for_reading(const std::string& path) {
  check_structure(path);
  start_matio_call();
  MatFile mat(Mat_Open(path.c_str(), MAT_ACC_RDONLY));
  if (!mat) throw ParseError(path, -1, -1, "not a MATLAB .mat file, or one that matio cannot read" + matio_reason());
  return mat;
}

// Every variable's description, and the names of the numeric ones.
void list_variables(mat_t* mat, std::vector<std::string>& all, std::vector<std::string>& numeric) {
  Mat_Rewind(mat);
  while (MatVar v{Mat_VarReadNextInfo(mat)}) {
    all.push_back(describe(*v));
    if (is_numeric(*v)) numeric.emplace_back(v->name);
  }
}

std::string list_text(const std::vector<std::string>& all) {
  return all.empty() ? std::string("no variables") : fmt::format("{}", fmt::join(all, ", "));
}

// The variable named by the spec, or the file's only numeric one; checked to be a real double or single
// array of the given rank (2, or 3 for a stack) before its data is read.
MatVar read_variable(mat_t* mat, const std::string& path, const std::string& variable, bool stack) {
  std::string name = variable;
  if (name.empty()) {
    std::vector<std::string> all, numeric;
    list_variables(mat, all, numeric);
    if (numeric.empty())
      throw ParseError(path, -1, -1, fmt::format("holds no numeric variable to read (it holds {})", list_text(all)));
    if (numeric.size() > 1)
      throw ParseError(path, -1, -1,
                       fmt::format("holds {} numeric variables; pick one as {}:NAME (it holds {})", numeric.size(),
                                   path, list_text(all)));
    name = numeric.front();
  }
  MatVar info{Mat_VarReadInfo(mat, name.c_str())};
  if (!info) {
    std::vector<std::string> all, numeric;
    list_variables(mat, all, numeric);
    throw ParseError(path, -1, -1, fmt::format("has no variable '{}' (it holds {})", name, list_text(all)));
  }
  const matvar_t& v = *info;
  if ((v.class_type != MAT_C_DOUBLE && v.class_type != MAT_C_SINGLE) || v.isComplex)
    throw ParseError(path, -1, -1,
                     fmt::format("variable '{}' is {} {}: linv reads real double and single arrays", name, dims_text(v),
                                 class_name(v)));
  // Trailing singleton dimensions are MATLAB's business: a 3x4x1 array is a 3x4 matrix.
  int rank = v.rank;
  while (rank > 2 && v.dims[rank - 1] == 1) --rank;
  if (rank > (stack ? 3 : 2))
    throw ParseError(path, -1, -1,
                     fmt::format("variable '{}' is a {}-dimensional {} array; linv reads {}", name, rank, dims_text(v),
                                 stack ? "matrices and 3-D stacks of them" : "matrices (2-D)"));
  start_matio_call();
  MatVar var{Mat_VarRead(mat, name.c_str())};
  const matio_types expected = v.class_type == MAT_C_DOUBLE ? MAT_T_DOUBLE : MAT_T_SINGLE;
  if (!var || var->data_type != expected || (var->data == nullptr && Mat_VarGetSize(var.get()) > 0))
    throw ParseError(path, -1, -1, fmt::format("could not read variable '{}'", name) + matio_reason());
  return var;
}

index dim(const matvar_t& v, int k) { return k < v.rank ? static_cast<index>(v.dims[k]) : 1; }

template <Real T>
Matrix<T> matrix_from(const matvar_t& v) {
  Matrix<T> m = Matrix<T>::uninitialized(dim(v, 0), dim(v, 1));
  if (m.size() > 0) std::memcpy(m.data(), v.data, m.bytes());
  return m;
}

template <Real T>
MatrixStack<T> stack_from(const matvar_t& v) {
  MatrixStack<T> s{dim(v, 2), dim(v, 0), dim(v, 1), {}};
  const T* data = static_cast<const T*>(v.data);
  s.data.assign(data, data + s.count * s.rows * s.cols);
  return s;
}

void check_name(const std::string& name) {
  // MATLAB's rule (isvarname): a letter, then letters, digits and underscores, at most 63 characters.
  const bool valid = !name.empty() && name.size() <= 63 && std::isalpha(static_cast<unsigned char>(name[0])) &&
                     std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
  if (!valid)
    throw InvalidArgument(
        fmt::format("'{}' is not a valid MATLAB variable name (a letter, then letters, digits or "
                    "underscores, at most 63 characters)",
                    name));
}

template <Real T>
void write_array(const std::string& path, const std::string& variable, const T* data, std::vector<std::size_t> dims) {
  const std::string name = variable.empty() ? "X" : variable;
  check_name(name);
  // MAT 5 keeps sizes in 32 bits, so larger variables need the HDF5-based 7.3 format (MATLAB's "-v7.3").
  std::size_t bytes = sizeof(T);
  for (std::size_t d : dims) bytes *= d;
  const mat_ft version = bytes >= (std::size_t{1} << 31) - 4096 ? MAT_FT_MAT73 : MAT_FT_MAT5;
  AtomicFile out(path);
  out.close_handle();
  start_matio_call();
  MatFile mat(Mat_CreateVer(out.temp_path().c_str(), nullptr, version));
  if (!mat) out.fail("matio could not create the file" + matio_reason());
  constexpr bool single = std::same_as<T, float>;
  // matio takes a non-const pointer, but only reads through it when writing.
  MatVar var{Mat_VarCreate(name.c_str(), single ? MAT_C_SINGLE : MAT_C_DOUBLE, single ? MAT_T_SINGLE : MAT_T_DOUBLE,
                           static_cast<int>(dims.size()), dims.data(), const_cast<T*>(data), MAT_F_DONT_COPY_DATA)};
  if (!var) out.fail("matio could not create the variable" + matio_reason());
  // Uncompressed: dense floating-point data barely compresses, and zlib would make writing ~100x slower.
  if (Mat_VarWrite(mat.get(), var.get(), MAT_COMPRESSION_NONE) != 0) out.fail("matio failed to write" + matio_reason());
  if (Mat_Close(mat.release()) != 0) out.fail("matio failed to close the file" + matio_reason());
  out.commit();
}

}  // namespace

AnyMatrix read_mat(const std::string& path, const std::string& variable) {
  MatFile mat = open_for_reading(path);
  MatVar var = read_variable(mat.get(), path, variable, false);
  if (var->class_type == MAT_C_SINGLE) return matrix_from<float>(*var);
  return matrix_from<double>(*var);
}

AnyStack read_mat_stack(const std::string& path, const std::string& variable) {
  MatFile mat = open_for_reading(path);
  MatVar var = read_variable(mat.get(), path, variable, true);
  if (var->class_type == MAT_C_SINGLE) return stack_from<float>(*var);
  return stack_from<double>(*var);
}

template <Real T>
void write_mat(const std::string& path, const std::string& variable, ConstMatrixView<T> A) {
  const std::vector<std::size_t> dims = {static_cast<std::size_t>(A.rows()), static_cast<std::size_t>(A.cols())};
  if (is_contiguous(A)) return write_array(path, variable, A.data(), dims);
  // matio wants the columns one after another.
  const Matrix<T> packed = Matrix<T>::copy_of(A);
  write_array(path, variable, packed.data(), dims);
}

template <Real T>
void write_mat_stack(const std::string& path, const std::string& variable, const MatrixStack<T>& stack) {
  write_array(path, variable, stack.data.data(),
              {static_cast<std::size_t>(stack.rows), static_cast<std::size_t>(stack.cols),
               static_cast<std::size_t>(stack.count)});
}

}  // namespace linv::io::detail

#else  // no matio

namespace linv::io::detail {

namespace {
[[noreturn]] void no_matio() {
  throw InputError("this linv was built without MATLAB .mat support (libmatio was not found at build time)");
}
}  // namespace

AnyMatrix read_mat(const std::string&, const std::string&) { no_matio(); }
AnyStack read_mat_stack(const std::string&, const std::string&) { no_matio(); }
template <Real T>
void write_mat(const std::string&, const std::string&, ConstMatrixView<T>) {
  no_matio();
}
template <Real T>
void write_mat_stack(const std::string&, const std::string&, const MatrixStack<T>&) {
  no_matio();
}

}  // namespace linv::io::detail

#endif

namespace linv::io::detail {
template void write_mat<float>(const std::string&, const std::string&, ConstMatrixView<float>);
template void write_mat<double>(const std::string&, const std::string&, ConstMatrixView<double>);
template void write_mat_stack<float>(const std::string&, const std::string&, const MatrixStack<float>&);
template void write_mat_stack<double>(const std::string&, const std::string&, const MatrixStack<double>&);
}  // namespace linv::io::detail
