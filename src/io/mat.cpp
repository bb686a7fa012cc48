// MATLAB .mat files through matio. linv reads double, single, integer and logical arrays (2-D, or 3-D as a
// stack: MATLAB stores rows x cols x B column-major, so each matrix is contiguous), complex ones as
// matrices, and writes one variable per file in the MAT 5 format (7.3 beyond 2 GiB), complex ones too.
#include <fmt/format.h>

#include "io/formats.hpp"
#include "linv/errors.hpp"

#ifdef LINV_HAVE_MATIO

#include <fmt/ranges.h>
#include <matio.h>
#ifdef LINV_HAVE_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <complex>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <new>
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

// The bytes of one element of a dense variable linv reads (double, single, the integers, logical), else 0.
std::size_t element_bytes(const matvar_t& v) {
  switch (v.class_type) {
    case MAT_C_DOUBLE: case MAT_C_INT64: case MAT_C_UINT64: return 8;
    case MAT_C_SINGLE: case MAT_C_INT32: case MAT_C_UINT32: return 4;
    case MAT_C_INT16: case MAT_C_UINT16: return 2;
    case MAT_C_INT8: case MAT_C_UINT8: return 1;  // logical too: uint8 data
    default: return 0;
  }
}

// The type matio reads a variable's data as: its class's.
matio_types data_type_of(const matvar_t& v) {
  switch (v.class_type) {
    case MAT_C_DOUBLE: return MAT_T_DOUBLE;
    case MAT_C_SINGLE: return MAT_T_SINGLE;
    case MAT_C_INT64: return MAT_T_INT64;
    case MAT_C_UINT64: return MAT_T_UINT64;
    case MAT_C_INT32: return MAT_T_INT32;
    case MAT_C_UINT32: return MAT_T_UINT32;
    case MAT_C_INT16: return MAT_T_INT16;
    case MAT_C_UINT16: return MAT_T_UINT16;
    case MAT_C_INT8: return MAT_T_INT8;
    default: return MAT_T_UINT8;
  }
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

// A damaged file may hold a variable without a name, which no spec can pick.
std::string describe(const matvar_t& v) {
  return fmt::format("{} ({} {})", v.name != nullptr ? v.name : "(no name)", dims_text(v), class_name(v));
}

std::uint32_t byte_swapped(std::uint32_t v) {
  return v >> 24 | (v >> 8 & 0xff00) | (v << 8 & 0xff0000) | v << 24;
}

// A MAT 4 file is a sequence of variables, each a header of five 32-bit integers (type, rows, columns,
// imaginary flag, name length), the name and the data. matio allocates the name's length and trusts the
// dimensions as they stand (a header of 20 bytes could make it allocate gigabytes), so every header is
// checked against the file first. A header that is not MAT 4's ends the walk, as it ends matio's reading.
void check_mat4(InputFile& in, std::int64_t size) {
  // The type's digit P: double, single, int32, int16, uint16, uint8.
  static constexpr int kElementBytes[] = {8, 4, 4, 2, 2, 1};
  const std::string& path = in.path();
  for (std::int64_t pos = 0; pos < size;) {
    std::array<std::uint32_t, 5> h{};
    in.seek(pos);
    if (in.read_some(h.data(), sizeof h) < sizeof h) return;
    // The type is M * 1000 + O * 100 + P * 10 + T, written in the file's byte order, which M names
    // (0 little-endian, 1 big-endian); matio swaps it when it is out of range as read.
    std::uint32_t type = h[0];
    if (type > 4052) type = byte_swapped(type);
    const std::uint32_t M = type / 1000, O = type / 100 % 10, P = type / 10 % 10, T = type % 10;
    const bool complex = h[3] != 0;  // matio reads the flag as it is, unswapped
    if (type > 4052 || M > 1 || O != 0 || P > 5 || T > 2 || (complex && T == 1)) return;
    const auto field = [&](std::size_t k) { return static_cast<std::int32_t>(M == 1 ? byte_swapped(h[k]) : h[k]); };
    const std::int32_t rows = field(1), cols = field(2), name_bytes = field(4);
    if (name_bytes < 1) return;
    if (rows < 0 || cols < 0)
      throw ParseError(path, pos + 4, -1, fmt::format("a MAT 4 variable header declares {}x{}", rows, cols));
    const std::int64_t after_header = size - pos - 20;
    if (name_bytes > after_header)
      throw ParseError(path, pos + 16, -1,
                       fmt::format("truncated: a MAT 4 variable header declares a name of {} bytes, but {} follow it",
                                   name_bytes, after_header));
    // In double: the product may overflow 64 bits; once it is known to fit in the file, it is exact.
    const double data = static_cast<double>(rows) * cols * kElementBytes[P] * (complex ? 2 : 1);
    if (data > static_cast<double>(after_header - name_bytes))
      throw ParseError(path, pos + 20 + name_bytes, -1,
                       fmt::format("truncated data: a {}x{} MAT 4 variable needs {:.0f} bytes, but {} follow its name",
                                   rows, cols, data, after_header - name_bytes));
    pos += 20 + name_bytes + static_cast<std::int64_t>(data);
  }
}

// ---- MAT 5 variables, walked before matio reads them ----
//
// matio allocates what a variable's headers announce (a name's length, the dimensions, the cells of a cell
// array, the fields of every element of a struct) before it reads what they announce, and reads the cells
// and fields of every variable it passes, recursing once per level. A header of a few bytes could make it
// allocate gigabytes, or nest deeply enough to exhaust its stack. So linv walks each variable's headers
// first, in the order matio will read them, and refuses a variable whose headers announce more than its
// bytes hold (a cell or a field takes at least an 8-byte tag), that departs from the layout MATLAB, SciPy
// and matio write, or that nests cells and structs deeper than kMaxNesting.

constexpr int kMaxNesting = 64;
// Data types (the tags' first word) and array classes (the array flags' low byte) of the MAT 5 format.
constexpr std::uint32_t kMiInt8 = 1, kMiInt32 = 5, kMiUInt32 = 6, kMiMatrix = 14, kMiCompressed = 15;
constexpr std::uint32_t kCellClass = 1, kStructClass = 2, kFunctionClass = 16, kOpaqueClass = 17;

std::uint64_t padding(std::uint64_t bytes) { return (8 - bytes % 8) % 8; }  // data are padded to 8 bytes

// The bytes of one top-level data element, read as they are or inflated from a compressed element.
class ElementBytes {
 public:
  ElementBytes(InputFile& in, std::int64_t begin, std::int64_t end, bool compressed)
      : in_(in), next_(begin), end_(end), compressed_(compressed) {
#ifdef LINV_HAVE_ZLIB
    if (compressed_) {
      input_.resize(std::size_t{1} << 16);
      scratch_.resize(std::size_t{1} << 16);
      if (inflateInit(&z_) != Z_OK) throw std::bad_alloc();
    }
#endif
  }
  ~ElementBytes() {
#ifdef LINV_HAVE_ZLIB
    if (compressed_) inflateEnd(&z_);
#endif
  }
  ElementBytes(const ElementBytes&) = delete;
  ElementBytes& operator=(const ElementBytes&) = delete;

  // Reads exactly n bytes into dst, or skips them when dst is null; false where the element ends first.
  bool read(void* dst, std::uint64_t n) {
    if (!compressed_) {
      if (n > static_cast<std::uint64_t>(end_ - next_)) return false;
      in_.seek(next_);
      if (dst != nullptr && in_.read_some(dst, n) < n) return false;
      next_ += static_cast<std::int64_t>(n);
      return true;
    }
#ifdef LINV_HAVE_ZLIB
    auto* out = static_cast<unsigned char*>(dst);
    while (n > 0) {
      const std::size_t piece = static_cast<std::size_t>(std::min<std::uint64_t>(n, scratch_.size()));
      z_.next_out = out != nullptr ? out : scratch_.data();
      z_.avail_out = static_cast<uInt>(piece);
      while (z_.avail_out > 0) {
        if (z_.avail_in == 0) {
          const auto want = static_cast<std::size_t>(std::min<std::int64_t>(end_ - next_, std::ssize(input_)));
          in_.seek(next_);
          const std::size_t got = want > 0 ? in_.read_some(input_.data(), want) : 0;
          next_ += static_cast<std::int64_t>(got);
          z_.next_in = input_.data();
          z_.avail_in = static_cast<uInt>(got);
        }
        const int rc = inflate(&z_, Z_NO_FLUSH);
        if ((rc != Z_OK && rc != Z_STREAM_END) || (rc == Z_STREAM_END && z_.avail_out > 0)) return false;
      }
      n -= piece;
      if (out != nullptr) out += piece;
    }
    return true;
#else
    (void)dst, (void)n;
    return false;
#endif
  }

 private:
  InputFile& in_;
  std::int64_t next_, end_;
  bool compressed_;
#ifdef LINV_HAVE_ZLIB
  z_stream z_{};
  std::vector<unsigned char> input_, scratch_;
#endif
};

// Walks the arrays of one top-level variable (see above).
class VariableWalk {
 public:
  VariableWalk(ElementBytes& bytes, bool compressed, bool little, const std::string& path, std::int64_t offset)
      : bytes_(bytes), compressed_(compressed), little_(little), path_(path), offset_(offset) {}

  // Walks an array whose miMATRIX tag announced `size` bytes and returns how many of them it read (it
  // stops after the headers of arrays without arrays inside, whose data matio reads on request). matio
  // reads compressed and plain variables alike but for two classes: it looks into function handles only
  // in plain variables, and into opaque objects only in compressed ones.
  std::uint64_t array(std::uint64_t size, int depth) {
    // An empty cell or field; matio reads a top-level variable's headers whatever its size, from the bytes
    // after it (a fuzzed 0-byte variable had it allocate 4 GB for a "name" read there).
    if (size == 0 && depth == 0) fail("it is an array (miMATRIX) of 0 bytes, without flags, dimensions or name");
    if (size == 0) return 0;
    if (depth > kMaxNesting)
      fail(fmt::format("cells or structs nested deeper than {} levels, which linv does not read", kMaxNesting));
    std::uint64_t used = 0;
    const auto fits = [&](std::uint64_t n) {
      if (n > size - used) fail(fmt::format("its headers announce more bytes than the {} of its array", size));
    };
    const auto take = [&](void* dst, std::uint64_t n) {
      fits(n);
      if (!bytes_.read(dst, n)) fail("its bytes end before what its headers announce");
      used += n;
    };
    const auto next_tag = [&] {
      std::array<unsigned char, 8> t{};
      take(t.data(), t.size());
      return t;
    };
    // A tag is (type, size) as two words, or a small element: size << 16 | type, then up to 4 bytes of data.
    const auto is_small = [&](const std::array<unsigned char, 8>& t) { return u32(t.data()) >> 16 != 0; };
    const auto type_of = [&](const std::array<unsigned char, 8>& t) { return u32(t.data()) & 0xffff; };
    const auto size_of = [&](const std::array<unsigned char, 8>& t) {
      return is_small(t) ? u32(t.data()) >> 16 : u32(t.data() + 4);
    };

    // Array flags: class, complex, global, logical; nzmax. As uint32, which matio requires of compressed
    // arrays and of cells and fields (it skips an array's rest and reads on from there otherwise); it also
    // takes int32 for a plain top-level variable.
    const auto flags = next_tag();
    const bool int32_flags = depth == 0 && !compressed_ && type_of(flags) == kMiInt32;
    if (is_small(flags) || (type_of(flags) != kMiUInt32 && !int32_flags) || size_of(flags) != 8)
      fail("its array flags are not two 32-bit unsigned words");
    std::array<unsigned char, 8> f{};
    take(f.data(), f.size());
    const std::uint32_t array_class = u32(f.data()) & 0xff;
    if (array_class == kOpaqueClass && compressed_) return used;

    // Dimensions: whole 32-bit integers in a tag of their own. matio reads a small element's data as the
    // dimensions' byte count, and counts the bytes it skips by whole integers, so any other layout would
    // have it read on from bytes this walk has not checked.
    const auto dims = next_tag();
    if (is_small(dims) || type_of(dims) != kMiInt32 || size_of(dims) % 4 != 0)
      fail("its dimensions are not a tag of whole 32-bit integers");
    double elements = 1;
    fits(size_of(dims));
    for (std::uint32_t k = 0; k < size_of(dims) / 4; ++k) {
      std::array<unsigned char, 4> d{};
      take(d.data(), d.size());
      elements *= u32(d.data());
    }
    take(nullptr, padding(size_of(dims)));

    const auto name = next_tag();
    if (type_of(name) != kMiInt8) fail("its name is not 8-bit characters");
    if (!is_small(name)) take(nullptr, size_of(name) + padding(size_of(name)));

    double fields = 1;
    if (array_class == kStructClass) {
      // The length of a field name, always read as a small element, then the names.
      const auto length = next_tag();
      const std::uint32_t name_length = u32(length.data() + 4);
      if (type_of(length) != kMiInt32 || name_length == 0) fail("its field names have no length");
      const auto names = next_tag();
      if (type_of(names) != kMiInt8) fail("its field names are not 8-bit characters");
      const std::uint64_t count = size_of(names) / name_length;
      if (!is_small(names)) take(nullptr, count * name_length + padding(count * name_length));
      fields = static_cast<double>(count);
    } else if (array_class != kCellClass && (array_class != kFunctionClass || compressed_)) {
      return used;
    }
    const double children = elements * fields;
    if (!(children * 8 <= static_cast<double>(size - used)))  // NaN too: no dimensions times zero fields
      fail(fmt::format("a {} announces {:.0f} {}, but the {} bytes left in it hold at most {}",
                       array_class == kStructClass ? "struct" : "cell array or function handle", children,
                       array_class == kStructClass ? "fields" : "elements", size - used, (size - used) / 8));
    for (auto k = static_cast<std::uint64_t>(children); k > 0; --k) {
      const auto child = next_tag();
      if (is_small(child) || type_of(child) != kMiMatrix) fail("a cell or field is not an array (miMATRIX)");
      if (size_of(child) > size - used)
        fail(fmt::format("a cell or field announces {} bytes, but {} are left in its parent", size_of(child),
                         size - used));
      const std::uint64_t consumed = array(size_of(child), depth + 1);
      used += consumed;
      take(nullptr, size_of(child) - consumed);
    }
    return used;
  }

 private:
  std::uint32_t u32(const unsigned char* p) const {
    return little_ ? std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
                         std::uint32_t{p[3]} << 24
                   : std::uint32_t{p[3]} | std::uint32_t{p[2]} << 8 | std::uint32_t{p[1]} << 16 |
                         std::uint32_t{p[0]} << 24;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ParseError(path_, offset_, -1, "malformed variable: " + what);
  }

  ElementBytes& bytes_;
  bool compressed_, little_;
  const std::string& path_;
  std::int64_t offset_;
};

// matio reads truncated MAT 5 files without complaint, filling in zeros for what is missing. Every top-level
// data element (one per variable) declares its size in its tag, so a walk over the tags finds truncation;
// each variable's headers are walked too, as said above. MAT 4 files are checked as check_mat4 says; MAT
// 7.3 files (HDF5) are left to matio. Opening the file here also gives missing and unreadable files the
// OS's reason as an InputError.
void check_structure(const std::string& path) {
  InputFile in(path);
  if (in.size() == 0) throw ParseError(path, 0, -1, "the file is empty, not a MATLAB .mat file");
  if (!in.size()) return;  // a stream: left to matio
  const std::int64_t size = *in.size();
  std::array<unsigned char, 128> header{};
  // Bytes 124-127: the version and "MI" as a 16-bit number in the writer's byte order. matio takes every
  // file without them, shorter ones included, for MAT 4.
  if (in.read_some(header.data(), header.size()) < header.size()) return check_mat4(in, size);
  const bool little = header[126] == 'I' && header[127] == 'M', big = header[126] == 'M' && header[127] == 'I';
  const unsigned version = little ? header[124] | header[125] << 8 : header[124] << 8 | header[125];
  if ((!little && !big) || (version != 0x0100 && version != 0x0200)) return check_mat4(in, size);
  if (version == 0x0200) return;  // MAT 7.3
  const auto u32 = [little](const unsigned char* p) {
    return little
               ? std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24
               : std::uint32_t{p[3]} | std::uint32_t{p[2]} << 8 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[0]} << 24;
  };
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
    if (type == kMiMatrix || type == kMiCompressed) {
      ElementBytes element(in, pos + 8, end, type == kMiCompressed);
      VariableWalk walk(element, type == kMiCompressed, little, path, pos);
      std::uint64_t array_bytes = bytes;
      if (type == kMiCompressed) {  // an miMATRIX element, deflated
        std::array<unsigned char, 8> inner{};
        if (!element.read(inner.data(), inner.size()) || u32(inner.data()) != kMiMatrix)
          throw ParseError(path, pos, -1, "malformed variable: its compressed data do not hold an array (miMATRIX)");
        array_bytes = u32(inner.data() + 4);
      }
      walk.array(array_bytes, 0);
    }
    pos = end;  // where matio reads the next variable: no padding after a top-level element
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
    if (is_numeric(*v) && v->name != nullptr) numeric.emplace_back(v->name);
  }
}

std::string list_text(const std::vector<std::string>& all) {
  return all.empty() ? std::string("no variables") : fmt::format("{}", fmt::join(all, ", "));
}

// The variable named by the spec, or the file's only numeric one; checked to be a numeric array of the
// given rank (2, or 3 for a stack), real unless `complex` allows otherwise, before its data is read.
MatVar read_variable(mat_t* mat, const std::string& path, const std::string& variable, bool stack,
                     bool complex = false) {
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
  if (element_bytes(v) == 0)
    throw ParseError(path, -1, -1,
                     fmt::format("variable '{}' is {} {}: linv reads double, single, integer and logical arrays", name,
                                 dims_text(v), class_name(v)));
  if (v.isComplex && !complex)
    throw ParseError(path, -1, -1,
                     fmt::format("variable '{}' is {} {}, where real numbers are read{}", name, dims_text(v),
                                 class_name(v), stack ? " (complex arrays are read as matrices, not stacks)" : ""));
  // Trailing singleton dimensions are MATLAB's business: a 3x4x1 array is a 3x4 matrix.
  int rank = v.rank;
  while (rank > 2 && v.dims[rank - 1] == 1) --rank;
  if (rank > (stack ? 3 : 2))
    throw ParseError(path, -1, -1,
                     fmt::format("variable '{}' is a {}-dimensional {} array; linv reads {}", name, rank, dims_text(v),
                                 stack ? "matrices and 3-D stacks of them" : "matrices (2-D)"));
  // A header may announce any size: the file must be able to hold the data before matio allocates it. Its
  // length bounds plain data; compressed variables (and MAT 7.3's HDF5 datasets, which may be compressed)
  // inflate to at most kMaxDeflateRatio times it. Sizes are multiplied in double: their product may overflow.
  double bytes = static_cast<double>(element_bytes(v)) * (v.isComplex ? 2 : 1);
  for (int k = 0; k < v.rank; ++k) bytes *= static_cast<double>(v.dims[k]);
  const bool compressed = v.compression == MAT_COMPRESSION_ZLIB || Mat_GetVersion(mat) == MAT_FT_MAT73;
  std::error_code ec;
  const auto size = static_cast<double>(std::filesystem::file_size(path, ec));
  if (!ec && bytes > size * static_cast<double>(compressed ? kMaxDeflateRatio : 1))
    throw ParseError(path, -1, -1,
                     fmt::format("variable '{}' is {} {}: {:.0f} bytes, more than the file's {:.0f} bytes can hold{}",
                                 name, dims_text(v), class_name(v), bytes, size,
                                 compressed ? fmt::format(" inflated (at most {} times as many)", kMaxDeflateRatio)
                                            : ""));
  start_matio_call();
  MatVar var{Mat_VarRead(mat, name.c_str())};
  if (!var || var->data_type != data_type_of(v) || (var->data == nullptr && Mat_VarGetSize(var.get()) > 0))
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

// A complex variable's matrix: matio keeps the real and imaginary parts apart.
template <Real T>
Matrix<std::complex<T>> complex_matrix_from(index rows, index cols, const T* re, const T* im) {
  Matrix<std::complex<T>> m = Matrix<std::complex<T>>::uninitialized(rows, cols);
  for (index e = 0; e < m.size(); ++e) m.data()[e] = {re[e], im[e]};
  return m;
}

// An integer or logical variable's entries (`count` of them) as float64, exactly, as .npy integers are read:
// a value beyond +-2^53, which float64 cannot hold exactly, is refused naming its place; the conversion is
// noted for the report.
std::vector<double> exact_doubles(const matvar_t& v, const void* data, std::size_t count, const std::string& path,
                                  const std::string& name) {
  constexpr std::uint64_t kExact = std::uint64_t{1} << 53;  // every integer up to it has a float64
  std::vector<double> out(count);
  const auto at = [&](std::size_t k, auto value) {
    using V = decltype(value);
    const std::uint64_t magnitude = value < V(0) ? std::uint64_t(0) - static_cast<std::uint64_t>(value)
                                                 : static_cast<std::uint64_t>(value);
    if (magnitude > kExact)
      throw InputError(fmt::format("{}: the {} at linear index {} (1-based) of '{}' lies beyond +-2^53, where float64 "
                                   "cannot hold every integer; convert it to double yourself if rounding is acceptable",
                                   path, class_name(v), k + 1, name));
    out[k] = static_cast<double>(value);
  };
  const auto each = [&](auto typed) {
    for (std::size_t k = 0; k < count; ++k) at(k, typed[k]);
  };
  switch (v.class_type) {
    case MAT_C_INT64: each(static_cast<const std::int64_t*>(data)); break;
    case MAT_C_UINT64: each(static_cast<const std::uint64_t*>(data)); break;
    case MAT_C_INT32: each(static_cast<const std::int32_t*>(data)); break;
    case MAT_C_UINT32: each(static_cast<const std::uint32_t*>(data)); break;
    case MAT_C_INT16: each(static_cast<const std::int16_t*>(data)); break;
    case MAT_C_UINT16: each(static_cast<const std::uint16_t*>(data)); break;
    case MAT_C_INT8: each(static_cast<const std::int8_t*>(data)); break;
    default: each(static_cast<const std::uint8_t*>(data)); break;  // uint8 and logical
  }
  add_input_note(fmt::format("{}: {} values of '{}' read as float64 (exactly)", path, class_name(v), name));
  return out;
}

template <Real T>
MatrixStack<T> stack_from(const matvar_t& v) {
  MatrixStack<T> s{dim(v, 2), dim(v, 0), dim(v, 1), {}};
  const T* data = static_cast<const T*>(v.data);
  // An empty stack may have huge other dimensions (a fuzzed (4294967040, 0, 3556769914) overflowed their
  // product); a non-empty one was checked to fit the file before matio read it.
  const index entries = s.count == 0 || s.rows == 0 || s.cols == 0 ? 0 : s.count * s.rows * s.cols;
  s.data.assign(data, data + entries);
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

// matio does not check its writes: past a full disk or ulimit -f it reports success, having recorded the
// length it managed in the file. An uncompressed MAT 5 file of one variable has a size known in advance:
// the 128-byte header, then one element of 8-byte tag, array flags, dimensions, name and data (a complex
// array's real part, then its imaginary part), each padded to 8 bytes (a name of up to 4 characters packed
// into its tag).
void require_complete_mat5(const AtomicFile& out, const std::string& name, const std::vector<std::size_t>& dims,
                           std::uintmax_t data_bytes, bool complex) {
  const auto padded = [](std::uintmax_t bytes) { return (bytes + 7) / 8 * 8; };
  const std::uintmax_t expected = 128 + 8 + 16 + (8 + padded(4 * dims.size())) +
                                  (name.size() <= 4 ? 8 : 8 + padded(name.size())) +
                                  (complex ? 2 * (8 + padded(data_bytes / 2)) : 8 + padded(data_bytes));
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(out.temp_path(), ec);
  if (ec) out.fail(ec.message());
  if (size != expected)
    out.fail(fmt::format("only {} bytes of {} were written (is the disk full, or a file-size limit reached?)", size,
                         expected));
}

template <Scalar T>
void write_array(const std::string& path, const std::string& variable, const T* data, std::vector<std::size_t> dims) {
  const std::string name = variable.empty() ? "X" : variable;
  check_name(name);
  // MAT 5 keeps sizes in 32 bits, so larger variables need the HDF5-based 7.3 format (MATLAB's "-v7.3").
  using R = real_t<T>;
  std::size_t bytes = sizeof(T);
  for (std::size_t d : dims) bytes *= d;
  const mat_ft version = bytes >= (std::size_t{1} << 31) - 4096 ? MAT_FT_MAT73 : MAT_FT_MAT5;
  AtomicFile out(path);
  out.close_handle();
  start_matio_call();
  MatFile mat(Mat_CreateVer(out.temp_path().c_str(), nullptr, version));
  if (!mat) out.fail("matio could not create the file" + matio_reason());
  constexpr bool single = std::same_as<R, float>;
  // matio takes a non-const pointer, but only reads through it when writing. It takes a complex array as
  // its real and imaginary parts apart.
  std::vector<R> re, im;
  mat_complex_split_t parts{};
  void* values = const_cast<T*>(data);
  int flags = MAT_F_DONT_COPY_DATA;
  if constexpr (Complex<T>) {
    const std::size_t count = bytes / sizeof(T);
    re.resize(count);
    im.resize(count);
    for (std::size_t e = 0; e < count; ++e) re[e] = data[e].real(), im[e] = data[e].imag();
    parts = {re.data(), im.data()};
    values = &parts;
    flags |= MAT_F_COMPLEX;
  }
  MatVar var{Mat_VarCreate(name.c_str(), single ? MAT_C_SINGLE : MAT_C_DOUBLE, single ? MAT_T_SINGLE : MAT_T_DOUBLE,
                           static_cast<int>(dims.size()), dims.data(), values, flags)};
  if (!var) out.fail("matio could not create the variable" + matio_reason());
  // Uncompressed: dense floating-point data barely compresses, and zlib would make writing ~100x slower.
  if (Mat_VarWrite(mat.get(), var.get(), MAT_COMPRESSION_NONE) != 0) out.fail("matio failed to write" + matio_reason());
  if (Mat_Close(mat.release()) != 0) out.fail("matio failed to close the file" + matio_reason());
  if (version == MAT_FT_MAT5) require_complete_mat5(out, name, dims, bytes, Complex<T>);
  out.commit();
}

}  // namespace

AnyMatrix read_mat(const std::string& path, const std::string& variable) {
  MatFile mat = open_for_reading(path);
  MatVar var = read_variable(mat.get(), path, variable, false);
  if (var->class_type == MAT_C_SINGLE) return matrix_from<float>(*var);
  if (var->class_type == MAT_C_DOUBLE) return matrix_from<double>(*var);
  Matrix<double> m = Matrix<double>::uninitialized(dim(*var, 0), dim(*var, 1));
  const std::vector<double> values =
      exact_doubles(*var, var->data, static_cast<std::size_t>(m.size()), path, var->name);
  std::copy(values.begin(), values.end(), m.data());
  return m;
}

AnyDense read_mat_dense(const std::string& path, const std::string& variable) {
  MatFile mat = open_for_reading(path);
  MatVar var = read_variable(mat.get(), path, variable, false, true);
  if (!var->isComplex) {
    Mat_Close(mat.release());
    return std::visit([](auto&& m) -> AnyDense { return std::move(m); }, read_mat(path, var->name));
  }
  const index rows = dim(*var, 0), cols = dim(*var, 1);
  const auto* parts = static_cast<const mat_complex_split_t*>(var->data);
  if (var->class_type == MAT_C_SINGLE)
    return complex_matrix_from(rows, cols, static_cast<const float*>(parts->Re), static_cast<const float*>(parts->Im));
  if (var->class_type == MAT_C_DOUBLE)
    return complex_matrix_from(rows, cols, static_cast<const double*>(parts->Re),
                               static_cast<const double*>(parts->Im));
  const auto count = static_cast<std::size_t>(rows * cols);
  const std::vector<double> re = exact_doubles(*var, parts->Re, count, path, var->name),
                            im = exact_doubles(*var, parts->Im, count, path, var->name);
  return complex_matrix_from(rows, cols, re.data(), im.data());
}

AnyStack read_mat_stack(const std::string& path, const std::string& variable) {
  MatFile mat = open_for_reading(path);
  MatVar var = read_variable(mat.get(), path, variable, true);
  if (var->class_type == MAT_C_SINGLE) return stack_from<float>(*var);
  if (var->class_type == MAT_C_DOUBLE) return stack_from<double>(*var);
  MatrixStack<double> s{dim(*var, 2), dim(*var, 0), dim(*var, 1), {}};
  const index entries = s.count == 0 || s.rows == 0 || s.cols == 0 ? 0 : s.count * s.rows * s.cols;
  s.data = exact_doubles(*var, var->data, static_cast<std::size_t>(entries), path, var->name);
  return s;
}

template <Scalar T>
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
AnyDense read_mat_dense(const std::string&, const std::string&) { no_matio(); }
template <Scalar T>
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
template void write_mat<std::complex<float>>(const std::string&, const std::string&,
                                             ConstMatrixView<std::complex<float>>);
template void write_mat<std::complex<double>>(const std::string&, const std::string&,
                                              ConstMatrixView<std::complex<double>>);
template void write_mat_stack<float>(const std::string&, const std::string&, const MatrixStack<float>&);
template void write_mat_stack<double>(const std::string&, const std::string&, const MatrixStack<double>&);
}  // namespace linv::io::detail
