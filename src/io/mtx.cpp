// Matrix Market exchange format (https://math.nist.gov/MatrixMarket/formats.html).
//
// linv reads `%%MatrixMarket matrix <array|coordinate> <real|integer|pattern> <general|symmetric|
// skew-symmetric>` into a dense float64 matrix or, from a coordinate file, compressed rows, and `complex`
// fields (general, symmetric, skew-symmetric or hermitian) into a dense complex128 matrix (read_mtx_dense);
// it writes `array real general` or `coordinate real general`, `complex` for complex matrices. linv checks the banner and the size line itself (its
// messages name what is wrong); fast_matrix_market parses the entries, in parallel. Keywords are
// case-insensitive; '%' comment lines may come before the size line, blank lines anywhere. Faults are
// reported by line number.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <complex>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <streambuf>
#include <limits>
#include <string_view>
#include <type_traits>

#include <fast_matrix_market/fast_matrix_market.hpp>

#include "io/formats.hpp"
#include "linv/errors.hpp"

namespace linv::io::detail::mtx_values {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// A value as linv reads it: fast_matrix_market's own reader stops at the first character that is not part
// of a number and skips the rest of the line, so '1,5' would read as 1. This one, found by argument-dependent
// lookup from fast_matrix_market's parser, also refuses a value followed by anything but white space.
// A complex one ("re im") is read the same way, both parts.
struct Value {
  double v = 0;
};
struct ComplexValue {
  std::complex<double> v;
};
// (fast_matrix_market's symmetric expansion, which linv leaves off, negates values)
[[maybe_unused]] Value operator-(const Value& x) { return {-x.v}; }
[[maybe_unused]] ComplexValue operator-(const ComplexValue& x) { return {-x.v}; }

// One number at pos, and where the white space after it ends.
const char* read_number(const char* pos, const char* end, double& out) {
  const char* p = pos;
  if (end - p > 1 && p[0] == '+' && p[1] != '-') ++p;  // from_chars takes no '+'
  const auto [next, ec] = std::from_chars(p, end, out);
  if (ec == std::errc::result_out_of_range) throw fast_matrix_market::out_of_range("Floating-point value out of range.");
  if (ec != std::errc()) throw fast_matrix_market::invalid_mm("Invalid floating-point value.");
  const char* rest = next;
  while (rest != end && is_space(*rest)) ++rest;
  return rest;
}

// rest, which must be the end of the line.
const char* line_ends(const char* rest, const char* end) {
  if (rest != end && *rest != '\n') throw fast_matrix_market::invalid_mm("Invalid floating-point value.");
  return rest;
}

[[maybe_unused]] const char* read_value(const char* pos, const char* end, Value& out, const fast_matrix_market::read_options&) {
  return line_ends(read_number(pos, end, out.v), end);
}
[[maybe_unused]] const char* read_value(const char* pos, const char* end, ComplexValue& out, const fast_matrix_market::read_options&) {
  double re = 0, im = 0;
  const char* rest = read_number(read_number(pos, end, re), end, im);
  out.v = {re, im};
  return line_ends(rest, end);
}

}  // namespace linv::io::detail::mtx_values

// fast_matrix_market reads a complex field into a value type it is told can hold one.
template <>
struct fast_matrix_market::can_read_complex<linv::io::detail::mtx_values::ComplexValue> : std::true_type {};

namespace linv::io::detail {

namespace {

namespace fmm = fast_matrix_market;
using mtx_values::ComplexValue;
using mtx_values::is_space;
using mtx_values::Value;

enum class Layout { array, coordinate };
enum class Field { real, integer, pattern, complex };
enum class Symmetry { general, symmetric, skew, hermitian };

struct Banner {
  Layout layout;
  Field field;
  Symmetry symmetry;
};

// Lines of a text file, without their '\n'.
class LineReader {
 public:
  explicit LineReader(InputFile& in) : in_(in) {}
  ~LineReader() { std::free(buffer_); }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line; false at the end of the file.
  bool next(std::string_view& line) {
    const ssize_t n = ::getline(&buffer_, &capacity_, in_.get());
    if (n < 0) {
      if (std::ferror(in_.get()))
        throw InputError(fmt::format("could not read {}: {}", in_.path(), std::strerror(errno)));
      return false;
    }
    ++number_;
    line = std::string_view(buffer_, static_cast<std::size_t>(n));
    if (line.ends_with('\n')) line.remove_suffix(1);
    return true;
  }
  // The number (1-based) of the line last returned by next().
  std::int64_t number() const noexcept { return number_; }

 private:
  InputFile& in_;
  char* buffer_ = nullptr;
  std::size_t capacity_ = 0;
  std::int64_t number_ = 0;
};


// Splits `line` at whitespace into up to N fields and returns how many fields the line has in all.
template <std::size_t N>
std::size_t split(std::string_view line, std::array<std::string_view, N>& fields) {
  std::size_t count = 0, pos = 0;
  while (true) {
    while (pos < line.size() && is_space(line[pos])) ++pos;
    if (pos == line.size()) return count;
    const std::size_t start = pos;
    while (pos < line.size() && !is_space(line[pos])) ++pos;
    if (count < N) fields[count] = line.substr(start, pos - start);
    ++count;
  }
}

bool skippable(std::string_view line) {
  const std::size_t first = std::find_if_not(line.begin(), line.end(), is_space) - line.begin();
  return first == line.size() || line[first] == '%';
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

Banner parse_banner(const std::string& path, std::string_view line) {
  constexpr const char* expected =
      "'%%MatrixMarket matrix <array|coordinate> <real|integer|pattern|complex> "
      "<general|symmetric|skew-symmetric|hermitian>'";
  std::array<std::string_view, 5> f;
  const std::size_t n = split(line, f);
  if (n == 0 || lowercase(f[0]) != "%%matrixmarket")
    throw ParseError(path, -1, 1,
                     fmt::format("not a Matrix Market file: the first line must be the banner {}", expected));
  if (n != 5) throw ParseError(path, -1, 1, fmt::format("malformed banner '{}': expected {}", line, expected));
  const std::string object = lowercase(f[1]), layout = lowercase(f[2]), field = lowercase(f[3]),
                    symmetry = lowercase(f[4]);
  if (object != "matrix")
    throw ParseError(path, -1, 1, fmt::format("Matrix Market object '{}' is not supported: linv reads 'matrix'", f[1]));

  Banner b{};
  if (layout == "array")
    b.layout = Layout::array;
  else if (layout == "coordinate")
    b.layout = Layout::coordinate;
  else
    throw ParseError(path, -1, 1,
                     fmt::format("unknown Matrix Market format '{}' (expected array or coordinate)", f[2]));

  if (field == "real")
    b.field = Field::real;
  else if (field == "integer")
    b.field = Field::integer;
  else if (field == "pattern")
    b.field = Field::pattern;
  else if (field == "complex")
    b.field = Field::complex;
  else
    throw ParseError(path, -1, 1,
                     fmt::format("unknown Matrix Market field '{}' (expected real, integer, pattern or complex)", f[3]));

  if (symmetry == "general")
    b.symmetry = Symmetry::general;
  else if (symmetry == "symmetric")
    b.symmetry = Symmetry::symmetric;
  else if (symmetry == "skew-symmetric")
    b.symmetry = Symmetry::skew;
  else if (symmetry == "hermitian")
    b.symmetry = Symmetry::hermitian;
  else
    throw ParseError(path, -1, 1,
                     fmt::format("unknown Matrix Market symmetry '{}' (expected general, symmetric, "
                                 "skew-symmetric or hermitian)",
                                 f[4]));
  if (b.symmetry == Symmetry::hermitian && b.field != Field::complex)
    throw ParseError(path, -1, 1, fmt::format("a hermitian matrix needs the complex field, not '{}'", f[3]));

  if (b.field == Field::pattern && b.layout == Layout::array)
    throw ParseError(path, -1, 1, "the pattern field needs the coordinate format, not array");
  return b;
}

bool parse_count(std::string_view s, std::int64_t& v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v >= 0;
}

// Refuses dense sizes that overflow (complex128 entries are 16 bytes).
void check_dense_size(const std::string& path, std::int64_t line, index rows, index cols, index entry_bytes = 8) {
  constexpr index max_bytes = std::numeric_limits<index>::max();
  if (rows > 0 && cols > max_bytes / rows / entry_bytes)
    throw ParseError(path, -1, line, fmt::format("a {} matrix is too large to hold densely", shape_string(rows, cols)));
}

// The number of values an array-format file stores for a rows x cols matrix.
std::int64_t array_entries(Symmetry symmetry, index rows, index cols) {
  if (symmetry == Symmetry::general) return rows * cols;
  return symmetry == Symmetry::skew ? rows * (rows - 1) / 2 : rows * (rows + 1) / 2;
}

// What the banner and the size line say, and where the entries begin.
struct Header {
  Banner banner;
  index rows = 0, cols = 0;
  std::int64_t entries = 0;   // stored values: declared (coordinate) or implied by the shape (array)
  std::int64_t size_line = 0;  // its line number
  std::int64_t body = 0;       // the byte offset of the first entry's line
};

Header read_header(const std::string& path) {
  InputFile in(path);
  LineReader lines(in);
  std::string_view line;
  if (!lines.next(line)) throw ParseError(path, -1, 1, "the file is empty, not a Matrix Market file");
  Header h;
  h.banner = parse_banner(path, line);
  const Banner& b = h.banner;

  do {
    if (!lines.next(line)) throw ParseError(path, -1, lines.number(), "the file ends before the size line");
  } while (skippable(line));
  h.size_line = lines.number();
  h.body = std::ftell(in.get());
  std::array<std::string_view, 3> f;
  const std::size_t want = b.layout == Layout::array ? 2 : 3;
  if (split(line, f) != want || !parse_count(f[0], h.rows) || !parse_count(f[1], h.cols) ||
      (want == 3 && !parse_count(f[2], h.entries)))
    throw ParseError(path, -1, h.size_line,
                     fmt::format("malformed size line '{}': expected '{}' as non-negative integers", line,
                                 want == 2 ? "rows columns" : "rows columns entries"));
  if (b.symmetry != Symmetry::general && h.rows != h.cols)
    throw ParseError(path, -1, h.size_line,
                     fmt::format("a {} matrix must be square, the size line says {}",
                                 b.symmetry == Symmetry::symmetric ? "symmetric"
                                 : b.symmetry == Symmetry::skew    ? "skew-symmetric"
                                                                   : "hermitian",
                                 shape_string(h.rows, h.cols)));
  if (b.layout == Layout::array) {
    check_dense_size(path, h.size_line, h.rows, h.cols, b.field == Field::complex ? 16 : 8);
    h.entries = array_entries(b.symmetry, h.rows, h.cols);
  }
  if (in.size()) {
    // Every array entry takes at least two bytes ("0\n"; complex four, "0 0\n"), every coordinate entry four
    // ("1 1\n"): a file too short to hold the declared entries is reported before anything is allocated.
    if (b.layout == Layout::array && (b.field == Field::complex ? 4 : 2) * h.entries > *in.size())
      throw ParseError(path, -1, h.size_line,
                       fmt::format("the size line declares a {} array, but the file ({} bytes) is too short to hold "
                                   "its entries",
                                   shape_string(h.rows, h.cols), *in.size()));
    if (b.layout == Layout::coordinate && h.entries > *in.size() / 4)
      throw ParseError(path, -1, h.size_line,
                       fmt::format("the size line declares {} entries, but the file ({} bytes) is too short to hold "
                                   "them",
                                   h.entries, *in.size()));
  }
  return h;
}

// Refuses what would not fit in this machine's memory before allocating it: a coordinate file of a few bytes
// can declare a matrix of terabytes.
void check_memory(const std::string& path, const Header& h, double bytes, const char* what) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGESIZE);
  const double memory = static_cast<double>(pages) * static_cast<double>(page_size);
  if (pages > 0 && page_size > 0 && bytes > memory)
    throw ParseError(path, -1, h.size_line,
                     fmt::format("a {} {} matrix needs {:.1f} GiB, more than this machine's {:.1f} GiB of memory", what,
                                 shape_string(h.rows, h.cols), bytes / (1 << 30), memory / (1 << 30)));
}

void check_dense_memory(const std::string& path, const Header& h) {
  const index entry_bytes = h.banner.field == Field::complex ? 16 : 8;
  check_dense_size(path, h.size_line, h.rows, h.cols, entry_bytes);
  check_memory(path, h, static_cast<double>(h.rows) * static_cast<double>(h.cols) * static_cast<double>(entry_bytes),
               "dense");
}

// The real readers' refusal of a complex file (read_mtx_dense reads it).
void require_real(const std::string& path, const Header& h) {
  if (h.banner.field == Field::complex)
    throw ParseError(path, -1, 1,
                     "a complex matrix, where real numbers are read: complex Matrix Market files are read by the "
                     "commands that compute in complex numbers (inv, solve, lstsq; io::read_dense)");
}

// ---- the entries, parsed by fast_matrix_market ----

// fast_matrix_market's view of the header linv has checked: its line numbers then count from the file's
// first line, and symmetric halves are left to linv (whose handlers know them).
fmm::matrix_market_header fmm_header(const Header& h) {
  fmm::matrix_market_header m(h.rows, h.cols);
  m.format = h.banner.layout == Layout::array ? fmm::array : fmm::coordinate;
  switch (h.banner.field) {
    case Field::real: m.field = fmm::real; break;
    case Field::integer: m.field = fmm::integer; break;
    case Field::pattern: m.field = fmm::pattern; break;
    case Field::complex: m.field = fmm::complex; break;
  }
  switch (h.banner.symmetry) {
    case Symmetry::general: m.symmetry = fmm::general; break;
    case Symmetry::symmetric: m.symmetry = fmm::symmetric; break;
    case Symmetry::skew: m.symmetry = fmm::skew_symmetric; break;
    case Symmetry::hermitian: m.symmetry = fmm::hermitian; break;
  }
  m.nnz = h.entries;
  m.header_line_count = h.size_line;
  return m;
}

fmm::read_options fmm_options(const Header& h) {
  fmm::read_options o;
  o.parallel_ok = h.rows > 0;  // its parallel array reader divides by the rows
  o.generalize_symmetry = false;
  o.num_threads = cpu_threads();
  return o;
}

// The number of lines of the file (a last line without '\n' counts), and the text of line `wanted` (1-based)
// if it has one: where a fault is, for a message.
std::pair<std::int64_t, std::string> find_line(const std::string& path, std::int64_t wanted) {
  InputFile in(path);
  LineReader lines(in);
  std::string_view line;
  std::string text;
  while (lines.next(line))
    if (lines.number() == wanted) text = line;
  return {lines.number(), text};
}

// A file's bytes from an offset, and a '\n' after them when its last line has none: fast_matrix_market looks
// for each line's end with strchr, which would run off the end of an unterminated last line.
class TerminatedFile final : public std::streambuf {
 public:
  TerminatedFile(const std::string& path, std::int64_t offset) : in_(path) { in_.seek(offset); }

 protected:
  int_type underflow() override {
    std::size_t got = in_.read_some(buffer_.data(), buffer_.size());
    if (got == 0) {
      if (terminated_) return traits_type::eof();
      buffer_[0] = '\n';
      got = 1;
    }
    terminated_ = buffer_[got - 1] == '\n';
    setg(buffer_.data(), buffer_.data(), buffer_.data() + got);
    return traits_type::to_int_type(buffer_[0]);
  }

 private:
  InputFile in_;
  std::array<char, 1 << 16> buffer_{};
  bool terminated_ = true;  // an empty rest needs no '\n'
};

// Runs fast_matrix_market's parse of the entries, its faults raised as ParseError naming the line and
// quoting it, in linv's words where linv knows the fault.
template <class Parse>
void parse_entries(const std::string& path, const Header& h, Parse&& parse) {
  {
    // fast_matrix_market finds line ends with strchr, which a NUL byte stops: a file holding one (not text)
    // is refused before it parses
    InputFile in(path);
    in.seek(h.body);
    std::vector<char> block(1 << 20);
    for (std::size_t got; (got = in.read_some(block.data(), block.size())) > 0;)
      if (const void* nul = std::memchr(block.data(), '\0', got))
        throw ParseError(path, in.offset() - static_cast<std::int64_t>(got) + (static_cast<const char*>(nul) - block.data()),
                         -1, "a NUL byte: Matrix Market files are text");
  }
  TerminatedFile file(path, h.body);
  std::istream stream(&file);
  try {
    parse(stream);
  } catch (const fmm::fmm_error& e) {
    std::string what = e.what();
    std::int64_t line = -1;
    if (what.starts_with("Line ")) {
      const char* digits = what.c_str() + 5;
      const auto [end, ec] = std::from_chars(digits, what.c_str() + what.size(), line);
      if (ec == std::errc() && std::string_view(end).starts_with(": ")) what = std::string(end + 2);
    }
    const auto [lines, text] = find_line(path, line);
    const std::string declared = fmt::format("the {} declared by the size line (line {})", h.entries, h.size_line);
    const bool complex = h.banner.field == Field::complex;
    const std::string fields = h.banner.layout == Layout::array ? (complex ? "real imaginary" : "one value")
                               : h.banner.field == Field::pattern ? "row column"
                               : complex                          ? "row column real imaginary"
                                                                  : "row column value";
    if (what.starts_with("Truncated file")) {
      line = lines;
      what = fmt::format("the file ends before the last of the {} entries declared by the size line (line {})",
                         h.entries, h.size_line);
    } else if (what.starts_with("Too many")) {
      what = fmt::format("more entries than {}: '{}'", declared, text);
    } else if (skippable(text)) {
      what = "a comment among the entries: comments may only come before the size line";
    } else if (what.starts_with("Row index out of bounds")) {
      what = fmt::format("row index out of range 1..{} in '{}'", h.rows, text);
    } else if (what.starts_with("Column index out of bounds")) {
      what = fmt::format("column index out of range 1..{} in '{}'", h.cols, text);
    } else if (what.starts_with("Floating-point value out of range")) {
      what = fmt::format("a value is outside the range of float64 in '{}'", text);
    } else if (what.starts_with("Invalid")) {
      what = fmt::format("expected '{}' as numbers (indices integers), found '{}'", fields, text);
    }
    throw ParseError(path, -1, line, what);
  }
}

// The entry a symmetric, skew-symmetric or hermitian file implies at (j, i) from its (i, j).
double mirrored(Symmetry symmetry, double v) { return symmetry == Symmetry::skew ? -v : v; }
std::complex<double> mirrored(Symmetry symmetry, std::complex<double> v) {
  return symmetry == Symmetry::skew ? -v : symmetry == Symmetry::hermitian ? std::conj(v) : v;
}

// A skew-symmetric file's diagonal entry, which must be zero. (A hermitian file's diagonal is kept as given:
// writers such as SciPy's leave the rounding of a computed matrix's imaginary parts there.)
template <class V>
void check_diagonal(Symmetry symmetry, std::int64_t row, V v) {
  if (symmetry != Symmetry::skew || v == V(0)) return;
  const std::string value = std::imag(v) == 0 ? fmt::format("{}", std::real(v))
                                              : fmt::format("{}{:+}i", std::real(v), std::imag(v));
  throw fmm::invalid_mm(
      fmt::format("a skew-symmetric matrix has a zero diagonal, but entry ({}, {}) is {}", row + 1, row + 1, value));
}

// Stores each entry at its place in preallocated triplets (fast_matrix_market's parallel chunks each get
// their own offset), refusing a skew-symmetric file's nonzero diagonal.
class TripletHandler {
 public:
  using coordinate_type = std::int64_t;
  using value_type = Value;
  static constexpr int flags = fmm::kParallelOk;

  TripletHandler(index* row, index* col, double* value, Symmetry symmetry)
      : begin_row_(row), begin_col_(col), begin_value_(value), row_(row), col_(col), value_(value),
        symmetry_(symmetry) {}
  void handle(coordinate_type row, coordinate_type col, value_type value) {
    if (row == col) check_diagonal(symmetry_, row, value.v);
    *row_++ = row;
    *col_++ = col;
    *value_++ = value.v;
  }
  TripletHandler get_chunk_handler(std::int64_t offset) const {
    TripletHandler chunk = *this;
    chunk.row_ = begin_row_ + offset;
    chunk.col_ = begin_col_ + offset;
    chunk.value_ = begin_value_ + offset;
    return chunk;
  }

 private:
  index *begin_row_, *begin_col_;
  double* begin_value_;
  index *row_, *col_;
  double* value_;
  Symmetry symmetry_;
};

// A coordinate file's entries as compressed rows, the other half of a symmetric or skew-symmetric file
// added.
SparseMatrix<double> read_coordinates(const std::string& path, const Header& h) {
  const bool symmetric_halves = h.banner.symmetry != Symmetry::general;
  // The triplets (3 x 8 bytes an entry, twice for a mirrored file), then the rows' sort and the result.
  const double per_entry = (symmetric_halves ? 2.0 : 1.0) * 3 * 8;
  check_memory(path, h, per_entry * 2 * static_cast<double>(h.entries) + 8.0 * static_cast<double>(h.rows + 1),
               "sparse");
  const std::size_t stored = static_cast<std::size_t>(h.entries);
  std::vector<index> row(stored), col(stored);
  std::vector<double> value(stored);
  TripletHandler handler(row.data(), col.data(), value.data(), h.banner.symmetry);
  parse_entries(path, h, [&](std::istream& stream) {
    fmm::read_matrix_market_body(stream, fmm_header(h), handler, Value{1.0}, fmm_options(h));
  });
  if (symmetric_halves) {
    for (std::size_t k = 0; k < stored; ++k)
      if (row[k] != col[k]) {
        row.push_back(col[k]);
        col.push_back(row[k]);
        value.push_back(mirrored(h.banner.symmetry, value[k]));
      }
  }
  return SparseMatrix<double>::from_triplets(h.rows, h.cols, row, col, value);
}

// Writes an array file's values into a dense matrix (double or complex<double>, V the value read), the
// other half of a symmetric, skew-symmetric or hermitian one too; counts them, since fast_matrix_market
// checks neither a symmetric file's length nor a skew-symmetric one's diagonal.
template <class T, class V>
class ArrayHandler {
 public:
  using coordinate_type = std::int64_t;
  using value_type = V;
  static constexpr int flags = fmm::kParallelOk | fmm::kDense;

  ArrayHandler(Matrix<T>& A, Symmetry symmetry, std::int64_t& count) : A_(A), symmetry_(symmetry), count_(count) {}
  void handle(coordinate_type row, coordinate_type col, value_type value) {
    // fast_matrix_market's walk down the columns never wraps in a file of no rows, so values there (and a
    // skew-symmetric file's diagonal) would land outside the matrix
    if (row >= A_.rows() || col >= A_.cols() || (symmetry_ == Symmetry::skew && row == col))
      throw fmm::invalid_mm("Too many values");
    A_(row, col) = value.v;
    if (symmetry_ != Symmetry::general) {
      if (row != col) A_(col, row) = mirrored(symmetry_, value.v);
      ++count_;
    }
  }
  ArrayHandler get_chunk_handler(std::int64_t) const { return *this; }  // general files only: count unused

 private:
  Matrix<T>& A_;
  Symmetry symmetry_;
  std::int64_t& count_;  // outside: fast_matrix_market works on copies of the handler
};

template <class T, class V>
Matrix<T> read_array(const std::string& path, const Header& h) {
  check_dense_memory(path, h);
  Matrix<T> A(h.rows, h.cols);
  std::int64_t count = 0;
  ArrayHandler<T, V> handler(A, h.banner.symmetry, count);
  parse_entries(path, h, [&](std::istream& stream) {
    fmm::read_matrix_market_body(stream, fmm_header(h), handler, V{1.0}, fmm_options(h));
    // fast_matrix_market reads symmetric arrays in order on one thread, and does not count them
    if (h.banner.symmetry != Symmetry::general && count < h.entries)
      throw fmm::invalid_mm("Truncated file.");
  });
  return A;
}

// A complex coordinate file's entries added into a dense matrix (repeated entries summed, as the real
// reader's compressed rows sum them), the other half of a symmetric, skew-symmetric or hermitian file too. One
// thread: entries may repeat, and parallel chunks would race on them.
class ComplexCoordinateHandler {
 public:
  using coordinate_type = std::int64_t;
  using value_type = ComplexValue;
  static constexpr int flags = 0;

  ComplexCoordinateHandler(Matrix<std::complex<double>>& A, Symmetry symmetry) : A_(A), symmetry_(symmetry) {}
  void handle(coordinate_type row, coordinate_type col, value_type value) {
    if (row == col) check_diagonal(symmetry_, row, value.v);
    add(A_(row, col), value.v);
    if (symmetry_ != Symmetry::general && row != col) add(A_(col, row), mirrored(symmetry_, value.v));
  }
  ComplexCoordinateHandler get_chunk_handler(std::int64_t) const { return *this; }

 private:
  // slot += v, but an entry not yet given takes v itself: 0 + (-0) would lose the sign of a -0 written there
  static void add(std::complex<double>& slot, std::complex<double> v) {
    const auto untouched = [](double x) { return x == 0 && !std::signbit(x); };
    slot = untouched(slot.real()) && untouched(slot.imag()) ? v : slot + v;
  }

  Matrix<std::complex<double>>& A_;
  Symmetry symmetry_;
};

Matrix<std::complex<double>> read_complex_coordinates(const std::string& path, const Header& h) {
  check_dense_memory(path, h);
  Matrix<std::complex<double>> A(h.rows, h.cols);  // zeros
  ComplexCoordinateHandler handler(A, h.banner.symmetry);
  parse_entries(path, h, [&](std::istream& stream) {
    fmm::read_options o = fmm_options(h);
    o.parallel_ok = false;
    fmm::read_matrix_market_body(stream, fmm_header(h), handler, ComplexValue{1.0}, o);
  });
  return A;
}

template <Scalar T>
constexpr const char* value_format() {
  // Enough significant digits to read back the identical value (a complex one's two parts).
  if constexpr (Complex<T>) return std::same_as<T, std::complex<float>> ? "{:.9g} {:.9g}\n" : "{:.17g} {:.17g}\n";
  return std::same_as<T, float> ? "{:.9g}\n" : "{:.17g}\n";
}

// The value's line: "v" or "re im".
template <Scalar T>
void format_value(fmt::memory_buffer& text, T v) {
  if constexpr (Complex<T>)
    fmt::format_to(std::back_inserter(text), value_format<T>(), v.real(), v.imag());
  else
    fmt::format_to(std::back_inserter(text), value_format<T>(), v);
}

}  // namespace

AnyMatrix read_mtx(const std::string& path) {
  const Header h = read_header(path);
  require_real(path, h);
  if (h.banner.layout == Layout::array) return read_array<double, Value>(path, h);
  check_dense_memory(path, h);
  return read_coordinates(path, h).to_dense();
}

AnyDense read_mtx_dense(const std::string& path) {
  const Header h = read_header(path);
  if (h.banner.field != Field::complex)
    return std::visit([](auto&& m) -> AnyDense { return std::move(m); }, read_mtx(path));
  if (h.banner.layout == Layout::array) return read_array<std::complex<double>, ComplexValue>(path, h);
  return read_complex_coordinates(path, h);
}

SparseMatrix<double> read_mtx_sparse(const std::string& path) {
  const Header h = read_header(path);
  require_real(path, h);
  if (h.banner.layout == Layout::array) return SparseMatrix<double>::from_dense(read_array<double, Value>(path, h).view());
  return read_coordinates(path, h);
}

template <Scalar T>
void write_mtx(const std::string& path, ConstMatrixView<T> A) {
  // Matrix Market's two encodings: array (every entry) and coordinate (the entries that are not +0,
  // "i j value"). The smaller one is written: coordinate when at most a third of the entries are
  // stored, as for a SLAM Jacobian. -0 counts as stored, so every value reads back bit for bit.
  const auto positive_zero = [](real_t<T> v) { return v == 0 && !std::signbit(v); };
  auto stored = [&](T v) { return !(positive_zero(std::real(v)) && positive_zero(std::imag(v))); };
  const char* field = Complex<T> ? "complex" : "real";
  index count = 0;
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < A.rows(); ++i) count += stored(A(i, j)) ? 1 : 0;
  const bool coordinate = 3 * count < A.rows() * A.cols();
  AtomicFile out(path);
  fmt::memory_buffer text;
  if (coordinate)
    fmt::format_to(std::back_inserter(text), "%%MatrixMarket matrix coordinate {} general\n{} {} {}\n", field,
                   A.rows(), A.cols(), count);
  else
    fmt::format_to(std::back_inserter(text), "%%MatrixMarket matrix array {} general\n{} {}\n", field, A.rows(),
                   A.cols());
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < A.rows(); ++i) {
      if (coordinate) {
        if (!stored(A(i, j))) continue;
        fmt::format_to(std::back_inserter(text), "{} {} ", i + 1, j + 1);
      }
      format_value<T>(text, A(i, j));
      if (text.size() > (1 << 20)) {
        out.write(text.data(), text.size());
        text.clear();
      }
    }
  out.write(text.data(), text.size());
  out.commit();
}

template <Real T>
void write_mtx_sparse(const std::string& path, const SparseMatrix<T>& S) {
  AtomicFile out(path);
  fmt::memory_buffer text;
  fmt::format_to(std::back_inserter(text), "%%MatrixMarket matrix coordinate real general\n{} {} {}\n", S.rows, S.cols,
                 S.nonzeros());
  for (index r = 0; r < S.rows; ++r)
    for (index k = S.row_start[r]; k < S.row_start[r + 1]; ++k) {
      fmt::format_to(std::back_inserter(text), "{} {} ", r + 1, S.column[k] + 1);
      fmt::format_to(std::back_inserter(text), value_format<T>(), S.value[k]);
      if (text.size() > (1 << 20)) {
        out.write(text.data(), text.size());
        text.clear();
      }
    }
  out.write(text.data(), text.size());
  out.commit();
}

template void write_mtx_sparse<float>(const std::string&, const SparseMatrix<float>&);
template void write_mtx_sparse<double>(const std::string&, const SparseMatrix<double>&);
template void write_mtx<float>(const std::string&, ConstMatrixView<float>);
template void write_mtx<double>(const std::string&, ConstMatrixView<double>);
template void write_mtx<std::complex<float>>(const std::string&, ConstMatrixView<std::complex<float>>);
template void write_mtx<std::complex<double>>(const std::string&, ConstMatrixView<std::complex<double>>);

}  // namespace linv::io::detail
