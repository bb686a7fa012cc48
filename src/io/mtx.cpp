// Matrix Market exchange format (https://math.nist.gov/MatrixMarket/formats.html).
//
// linv reads `%%MatrixMarket matrix <array|coordinate> <real|integer|pattern> <general|symmetric|
// skew-symmetric>` into a dense float64 matrix and writes `array real general`. Keywords are case-insensitive;
// '%' comment lines and blank lines are skipped wherever they appear. Faults are reported by line number.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>

#include "io/formats.hpp"
#include "linv/errors.hpp"

namespace linv::io::detail {

namespace {

enum class Layout { array, coordinate };
enum class Field { real, integer, pattern };
enum class Symmetry { general, symmetric, skew };

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

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

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
      "'%%MatrixMarket matrix <array|coordinate> <real|integer|pattern> <general|symmetric|skew-symmetric>'";
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
    throw ParseError(path, -1, 1, "complex matrices are not supported: linv reads real, integer and pattern fields");
  else
    throw ParseError(path, -1, 1,
                     fmt::format("unknown Matrix Market field '{}' (expected real, integer or pattern)", f[3]));

  if (symmetry == "general")
    b.symmetry = Symmetry::general;
  else if (symmetry == "symmetric")
    b.symmetry = Symmetry::symmetric;
  else if (symmetry == "skew-symmetric")
    b.symmetry = Symmetry::skew;
  else if (symmetry == "hermitian")
    throw ParseError(path, -1, 1, "hermitian matrices are not supported (they are complex)");
  else
    throw ParseError(path, -1, 1,
                     fmt::format("unknown Matrix Market symmetry '{}' (expected general, symmetric or "
                                 "skew-symmetric)",
                                 f[4]));

  if (b.field == Field::pattern && b.layout == Layout::array)
    throw ParseError(path, -1, 1, "the pattern field needs the coordinate format, not array");
  return b;
}

bool parse_count(std::string_view s, std::int64_t& v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v >= 0;
}

// Refuses dense sizes that overflow.
void check_dense_size(const std::string& path, std::int64_t line, index rows, index cols) {
  constexpr index max_bytes = std::numeric_limits<index>::max();
  if (rows > 0 && cols > max_bytes / rows / static_cast<index>(sizeof(double)))
    throw ParseError(path, -1, line, fmt::format("a {} matrix is too large to hold densely", shape_string(rows, cols)));
}

// Refuses dense sizes beyond this machine's memory before allocating them: a coordinate file of a few bytes
// can declare a matrix of terabytes.
void check_dense_memory(const std::string& path, std::int64_t line, index rows, index cols) {
  const double bytes = static_cast<double>(rows) * static_cast<double>(cols) * sizeof(double);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGESIZE);
  const double memory = static_cast<double>(pages) * static_cast<double>(page_size);
  if (pages > 0 && page_size > 0 && bytes > memory)
    throw ParseError(path, -1, line,
                     fmt::format("a dense {} matrix needs {:.1f} GiB, more than this machine's {:.1f} GiB of memory",
                                 shape_string(rows, cols), bytes / (1 << 30), memory / (1 << 30)));
}

// The number of values an array-format file stores for a rows x cols matrix.
std::int64_t array_entries(Symmetry symmetry, index rows, index cols) {
  if (symmetry == Symmetry::general) return rows * cols;
  return symmetry == Symmetry::symmetric ? rows * (rows + 1) / 2 : rows * (rows - 1) / 2;
}

// Reads the entries that follow the size line.
class EntryReader {
 public:
  EntryReader(const std::string& path, LineReader& lines, const Banner& banner, std::int64_t size_line)
      : path_(path), lines_(lines), b_(banner), size_line_(size_line) {}

  void read_array(Matrix<double>& A) {
    const index rows = A.rows();
    // Symmetric files hold the lower triangle column by column, skew-symmetric ones the part below the
    // diagonal (whose diagonal is zero); the cursor (i, j) walks the stored entries in that order.
    const index below = b_.symmetry == Symmetry::skew ? 1 : 0;
    const std::int64_t expected = array_entries(b_.symmetry, rows, A.cols());
    index i = below, j = 0;
    std::array<std::string_view, 1> f;
    std::string_view line;
    for (std::int64_t k = 0; k < expected; ++k) {
      if (!next_content(line)) too_few(k, expected);
      if (split(line, f) != 1) fail(fmt::format("expected one value per line in the array format, found '{}'", line));
      const double v = value(f[0]);
      A(i, j) = v;
      if (b_.symmetry == Symmetry::symmetric) A(j, i) = v;
      if (b_.symmetry == Symmetry::skew) A(j, i) = -v;
      if (++i == rows) {
        ++j;
        i = b_.symmetry == Symmetry::general ? 0 : j + below;
      }
    }
    expect_end(expected);
  }

  void read_coordinate(Matrix<double>& A, std::int64_t expected) {
    const bool pattern = b_.field == Field::pattern;
    const std::size_t want = pattern ? 2 : 3;
    std::array<std::string_view, 3> f;
    std::string_view line;
    for (std::int64_t k = 0; k < expected; ++k) {
      if (!next_content(line)) too_few(k, expected);
      if (split(line, f) != want)
        fail(fmt::format("expected {} fields ({}), found '{}'", want, pattern ? "row column" : "row column value",
                         line));
      const index i = position(f[0], "row", A.rows()), j = position(f[1], "column", A.cols());
      const double v = pattern ? 1.0 : value(f[2]);
      // Duplicate entries are summed, as scipy.io.mmread and MATLAB's sparse() do.
      A(i, j) += v;
      if (i == j) {
        if (b_.symmetry == Symmetry::skew && v != 0)
          fail(fmt::format("a skew-symmetric matrix has a zero diagonal, but entry ({}, {}) is {}", i + 1, j + 1, v));
      } else if (b_.symmetry == Symmetry::symmetric) {
        A(j, i) += v;
      } else if (b_.symmetry == Symmetry::skew) {
        A(j, i) -= v;
      }
    }
    expect_end(expected);
  }

 private:
  // The next line that is neither blank nor a comment; false at the end of the file.
  bool next_content(std::string_view& line) {
    while (lines_.next(line))
      if (!skippable(line)) return true;
    return false;
  }

  [[noreturn]] void fail(const std::string& what) const { throw ParseError(path_, -1, lines_.number(), what); }

  [[noreturn]] void too_few(std::int64_t found, std::int64_t expected) const {
    fail(fmt::format("the file ends after {} of the {} entries declared by the size line (line {})", found, expected,
                     size_line_));
  }

  // After the last declared entry only blank lines and comments may follow.
  void expect_end(std::int64_t expected) {
    std::string_view line;
    if (next_content(line))
      fail(fmt::format("more entries than the {} declared by the size line (line {})", expected, size_line_));
  }

  double value(std::string_view field) const {
    std::string_view digits = field;
    if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);  // from_chars takes no '+'
    double v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec == std::errc::result_out_of_range) fail(fmt::format("'{}' is outside the range of float64", field));
    if (ec != std::errc() || end != digits.data() + digits.size()) fail(fmt::format("'{}' is not a number", field));
    return v;
  }

  // A 1-based index field, returned 0-based.
  index position(std::string_view field, const char* what, index extent) const {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || end != field.data() + field.size())
      fail(fmt::format("{} index '{}' is not an integer", what, field));
    if (v < 1 || v > extent) fail(fmt::format("{} index {} is out of range 1..{}", what, v, extent));
    return v - 1;
  }

  const std::string& path_;
  LineReader& lines_;
  Banner b_;
  std::int64_t size_line_;
};

template <Real T>
constexpr const char* value_format() {
  // Enough significant digits to read back the identical value.
  return std::same_as<T, float> ? "{:.9g}\n" : "{:.17g}\n";
}

}  // namespace

AnyMatrix read_mtx(const std::string& path) {
  InputFile in(path);
  LineReader lines(in);
  std::string_view line;
  if (!lines.next(line)) throw ParseError(path, -1, 1, "the file is empty, not a Matrix Market file");
  const Banner b = parse_banner(path, line);

  do {
    if (!lines.next(line)) throw ParseError(path, -1, lines.number(), "the file ends before the size line");
  } while (skippable(line));
  const std::int64_t size_line = lines.number();
  std::array<std::string_view, 3> f;
  const std::size_t want = b.layout == Layout::array ? 2 : 3;
  std::int64_t rows = 0, cols = 0, entries = 0;
  if (split(line, f) != want || !parse_count(f[0], rows) || !parse_count(f[1], cols) ||
      (want == 3 && !parse_count(f[2], entries)))
    throw ParseError(path, -1, size_line,
                     fmt::format("malformed size line '{}': expected '{}' as non-negative integers", line,
                                 want == 2 ? "rows columns" : "rows columns entries"));
  if (b.symmetry != Symmetry::general && rows != cols)
    throw ParseError(
        path, -1, size_line,
        fmt::format("a {} matrix must be square, the size line says {}",
                    b.symmetry == Symmetry::symmetric ? "symmetric" : "skew-symmetric", shape_string(rows, cols)));
  check_dense_size(path, size_line, rows, cols);
  if (in.size()) {
    // Every array entry takes at least two bytes ("0\n"), every coordinate entry four ("1 1\n"): a file too
    // short to hold the declared entries is reported before its matrix is allocated.
    if (b.layout == Layout::array && 2 * array_entries(b.symmetry, rows, cols) > *in.size())
      throw ParseError(path, -1, size_line,
                       fmt::format("the size line declares a {} array, but the file ({} bytes) is too short to hold "
                                   "its entries",
                                   shape_string(rows, cols), *in.size()));
    if (b.layout == Layout::coordinate && entries > *in.size() / 4)
      throw ParseError(path, -1, size_line,
                       fmt::format("the size line declares {} entries, but the file ({} bytes) is too short to hold "
                                   "them",
                                   entries, *in.size()));
  }
  check_dense_memory(path, size_line, rows, cols);

  Matrix<double> A(rows, cols);
  EntryReader reader(path, lines, b, size_line);
  if (b.layout == Layout::array)
    reader.read_array(A);
  else
    reader.read_coordinate(A, entries);
  return A;
}

template <Real T>
void write_mtx(const std::string& path, ConstMatrixView<T> A) {
  // Matrix Market's two encodings: array (every entry) and coordinate (the entries that are not +0,
  // "i j value"). The smaller one is written: coordinate when at most a third of the entries are
  // stored, as for a SLAM Jacobian. -0 counts as stored, so every value reads back bit for bit.
  auto stored = [](T v) { return !(v == T(0) && !std::signbit(v)); };
  index count = 0;
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < A.rows(); ++i) count += stored(A(i, j)) ? 1 : 0;
  const bool coordinate = 3 * count < A.rows() * A.cols();
  AtomicFile out(path);
  fmt::memory_buffer text;
  if (coordinate)
    fmt::format_to(std::back_inserter(text), "%%MatrixMarket matrix coordinate real general\n{} {} {}\n", A.rows(),
                   A.cols(), count);
  else
    fmt::format_to(std::back_inserter(text), "%%MatrixMarket matrix array real general\n{} {}\n", A.rows(), A.cols());
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < A.rows(); ++i) {
      if (coordinate) {
        if (!stored(A(i, j))) continue;
        fmt::format_to(std::back_inserter(text), "{} {} ", i + 1, j + 1);
      }
      fmt::format_to(std::back_inserter(text), value_format<T>(), A(i, j));
      if (text.size() > (1 << 20)) {
        out.write(text.data(), text.size());
        text.clear();
      }
    }
  out.write(text.data(), text.size());
  out.commit();
}

template void write_mtx<float>(const std::string&, ConstMatrixView<float>);
template void write_mtx<double>(const std::string&, ConstMatrixView<double>);

}  // namespace linv::io::detail
