// NumPy .npy files (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
//
// A file is a preamble (magic "\x93NUMPY", version, header length), a header (a Python dict literal with
// 'descr', 'fortran_order' and 'shape') and the raw array data. linv reads versions 1.0-3.0, float32 and
// float64 little-endian data in either order, 0- to 3-dimensional (integers and bools as float64 values,
// exactly; images may be uint8 or uint16 samples; complex64 and complex128 matrices for read_npy_dense); it
// writes version 1.0 the way np.save does, matrices and images in Fortran order (Matrix storage as is) and
// stacks in C order (B, rows, cols).
#include <fmt/format.h>
#ifdef LINV_HAVE_ZLIB
#include <zlib.h>
#endif
#include <fmt/ranges.h>

#include <unistd.h>  // truncate

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cerrno>
#include <complex>
#include <cstring>
#include <memory>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "io/formats.hpp"
#include "linv/errors.hpp"

namespace linv::io::detail {

namespace {

// Data is copied between the file and memory byte for byte.
static_assert(std::endian::native == std::endian::little, "linv's .npy code assumes a little-endian host");

constexpr std::array<unsigned char, 6> kMagic = {0x93, 'N', 'U', 'M', 'P', 'Y'};
// Real headers are a few hundred bytes; a length beyond this is corruption, not a header to allocate.
constexpr std::int64_t kMaxHeaderBytes = std::int64_t{1} << 20;
// Transposing reads and writes go through a buffer of this size.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

// Element types as stored. In an image uint8 and uint16 are samples, scaled to [0, 1]; in a matrix every
// integer type (and bool) is a value, converted to float64 exactly or refused (integer_values), and said
// in io::take_input_notes().
enum class Element { f4, f8, u1, u2, u4, u8, i1, i2, i4, i8, b1, c8, c16 };

std::int64_t item_bytes(Element e) {
  switch (e) {
    case Element::u1: case Element::i1: case Element::b1: return 1;
    case Element::u2: case Element::i2: return 2;
    case Element::f4: case Element::u4: case Element::i4: return 4;
    case Element::c16: return 16;
    default: return 8;
  }
}

bool is_complex(Element e) { return e == Element::c8 || e == Element::c16; }
bool is_integer(Element e) { return e != Element::f4 && e != Element::f8 && !is_complex(e); }

struct Header {
  Element element = Element::f8;
  std::string descr;  // as spelled in the file, for messages
  std::int64_t descr_offset = 0;
  bool fortran_order = false;
  std::vector<index> shape;
  std::int64_t shape_offset = 0;  // file offset of the shape tuple, for messages about it
  std::int64_t data_offset = 0;
  std::int64_t data_bytes = 0;
};

std::string shape_text(const std::vector<index>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// The header dict, parsed as the subset of Python literal syntax that NumPy writes: string keys, string,
// boolean and integer-tuple values. Faults are reported at their byte offset in the file.
class DictParser {
 public:
  // `images`: also accept uint8 and uint16.
  DictParser(const std::string& path, const std::string& text, std::int64_t base, bool images)
      : path_(path), text_(text), base_(base), images_(images) {}

  Header parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    std::int64_t descr_offset = 0;
    skip_space();
    expect('{', "the header is not a Python dict: it does not start with '{'");
    skip_space();
    while (peek() != '}') {
      const std::string key = string_literal("a quoted key");
      skip_space();
      expect(':', "expected ':' after the key");
      skip_space();
      if (key == "descr") {
        if (have_descr) fail("the key 'descr' appears twice");
        if (peek() == '[')
          throw ParseError(path_, file_offset(), -1,
                           "structured dtypes (a list as 'descr') are not supported: linv reads float32 ('<f4') "
                           "and float64 ('<f8')");
        descr_offset = file_offset();
        h.descr = string_literal("a quoted dtype such as '<f8' for 'descr'");
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_order) fail("the key 'fortran_order' appears twice");
        h.fortran_order = boolean();
        have_order = true;
      } else if (key == "shape") {
        if (have_shape) fail("the key 'shape' appears twice");
        h.shape_offset = file_offset();
        h.shape = tuple();
        have_shape = true;
      } else {
        fail(fmt::format("unexpected key '{}' (a .npy header has 'descr', 'fortran_order' and 'shape')", key));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != '}') {
        fail("expected ',' or '}' after a value");
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the header dict");
    for (auto [have, key] : {std::pair{have_descr, "descr"}, {have_order, "fortran_order"}, {have_shape, "shape"}})
      if (!have) throw ParseError(path_, base_, -1, fmt::format("the header has no '{}' key", key));
    h.element = element(h.descr, descr_offset);
    h.descr_offset = descr_offset;
    return h;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  std::int64_t file_offset() const { return base_ + static_cast<std::int64_t>(pos_); }
  [[noreturn]] void fail(const std::string& what) const {
    throw ParseError(path_, file_offset(), -1, "malformed .npy header: " + what);
  }
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c, const char* what) {
    if (peek() != c) fail(what);
    ++pos_;
  }

  std::string string_literal(const char* what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(fmt::format("expected {}", what));
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) fail("unterminated string");
    std::string s = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return s;
  }

  bool boolean() {
    for (auto [word, value] : {std::pair{"True", true}, {"False", false}}) {
      if (text_.compare(pos_, std::strlen(word), word) == 0) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    fail("expected True or False for 'fortran_order'");
  }

  std::vector<index> tuple() {
    expect('(', "expected a tuple such as (3, 4) for 'shape'");
    std::vector<index> dims;
    skip_space();
    while (peek() != ')') {
      dims.push_back(integer());
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != ')') {
        fail("expected ',' or ')' in the shape");
      }
    }
    ++pos_;
    return dims;
  }

  index integer() {
    const std::int64_t start = file_offset();
    const bool negative = peek() == '-';
    if (negative) ++pos_;
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("expected an integer in the shape");
    index value = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<index>::max() - digit) / 10)
        throw ParseError(path_, start, -1, "a dimension in the shape is too large");
      value = value * 10 + digit;
    }
    if (peek() == 'L') ++pos_;  // Python 2 wrote long integers as 3L
    return negative ? -value : value;
  }

  Element element(const std::string& descr, std::int64_t offset) const {
    // NumPy writes one-byte types as '|u1' (one byte has no order); '<' and '=' say the same on a
    // little-endian host.
    static constexpr std::pair<const char*, Element> kTypes[] = {
        {"f8", Element::f8}, {"f4", Element::f4}, {"u1", Element::u1}, {"u2", Element::u2}, {"u4", Element::u4},
        {"u8", Element::u8}, {"i1", Element::i1}, {"i2", Element::i2}, {"i4", Element::i4}, {"i8", Element::i8},
        {"b1", Element::b1}, {"c8", Element::c8}, {"c16", Element::c16}};
    std::optional<Element> found;
    if ((descr.size() == 3 || descr.size() == 4) && (descr[0] == '<' || descr[0] == '=' || descr[0] == '|'))
      for (const auto& [name, e] : kTypes)
        if (descr.substr(1) == name && (descr[0] != '|' || item_bytes(e) == 1)) found = e;
    const bool image_type = found == Element::f8 || found == Element::f4 || found == Element::u1 || found == Element::u2;
    if (found && (!images_ || image_type)) return *found;
    if ((descr.size() == 3 || descr.size() == 4) && descr[0] == '>')
      throw ParseError(path_, offset, -1,
                       fmt::format("'{}' is big-endian, which linv does not support: save the array as "
                                   "little-endian (arr.astype('<{}'))",
                                   descr, descr.substr(1)));
    if (images_)
      throw ParseError(path_, offset, -1,
                       fmt::format("'{}' is not supported: linv reads images of float32 ('<f4'), float64 ('<f8'), "
                                   "uint8 ('|u1') and uint16 ('<u2')",
                                   descr));
    throw ParseError(path_, offset, -1,
                     fmt::format("'{}' is not supported: linv reads float32 ('<f4'), float64 ('<f8'), integers "
                                 "('<i8', '<u4', ...; as float64), bool ('|b1') and, for inv, solve and lstsq, "
                                 "complex64 ('<c8') and complex128 ('<c16')",
                                 descr));
  }

  const std::string& path_;
  const std::string& text_;
  std::int64_t base_;
  bool images_;
  std::size_t pos_ = 0;
};

ParseError data_size_error(const std::string& path, const Header& h, std::int64_t available) {
  if (available < h.data_bytes)
    return ParseError(path, h.data_offset, -1,
                      fmt::format("truncated data: shape {} of '{}' needs {} bytes, but {} follow the header ({} "
                                  "bytes in all)",
                                  shape_text(h.shape), h.descr, h.data_bytes, available, h.data_offset + available));
  return ParseError(path, h.data_offset + h.data_bytes, -1,
                    fmt::format("{} extra bytes after the data: shape {} of '{}' needs {} bytes, but {} follow "
                                "the header",
                                available - h.data_bytes, shape_text(h.shape), h.descr, h.data_bytes, available));
}

// Reads and validates everything up to the data; on return `in` is positioned at the data. `images`: the
// array is an image, which may also hold uint8 or uint16 samples. `complex`: the reader takes complex
// elements (read_npy_dense); every other reader refuses them here, so none reads their real parts alone.
Header read_header(InputFile& in, bool images = false, bool complex = false) {
  const std::string& path = in.path();
  std::array<unsigned char, 12> pre{};
  std::size_t got = in.read_some(pre.data(), 8);
  if (got == 0) throw ParseError(path, 0, -1, "the file is empty, not a .npy file");
  if (std::memcmp(pre.data(), kMagic.data(), std::min<std::size_t>(got, kMagic.size())) != 0)
    throw ParseError(path, 0, -1, "not a .npy file: it does not start with the magic string \"\\x93NUMPY\"");
  if (got < 8)
    throw ParseError(path, static_cast<std::int64_t>(got), -1,
                     fmt::format("truncated header: the file ends after {} bytes", got));
  const int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    throw ParseError(
        path, 6, -1,
        fmt::format("unsupported .npy format version {}.{} (linv reads versions 1.0, 2.0 and 3.0)", major, minor));
  // Version 1.0 stores the header length in 2 bytes, later versions in 4.
  const int length_bytes = major == 1 ? 2 : 4;
  got += in.read_some(pre.data() + 8, static_cast<std::size_t>(length_bytes));
  if (got < static_cast<std::size_t>(8 + length_bytes))
    throw ParseError(path, static_cast<std::int64_t>(got), -1,
                     fmt::format("truncated header: the file ends after {} bytes", got));
  const auto header_bytes = static_cast<std::int64_t>(little_endian(pre.data() + 8, length_bytes));
  const std::int64_t header_offset = 8 + length_bytes;
  if (header_bytes > kMaxHeaderBytes)
    throw ParseError(
        path, 8, -1,
        fmt::format("header length {} is implausible (more than 1 MiB): the file is corrupt", header_bytes));
  if (in.size() && header_offset + header_bytes > *in.size())
    throw ParseError(path, 8, -1,
                     fmt::format("truncated header: the header length {} runs past the end of the file ({} bytes)",
                                 header_bytes, *in.size()));
  std::string text(static_cast<std::size_t>(header_bytes), '\0');
  const std::size_t text_got = in.read_some(text.data(), text.size());
  if (text_got < text.size())
    throw ParseError(path, in.offset(), -1, fmt::format("truncated header: the file ends after {} bytes", in.offset()));

  Header h = DictParser(path, text, header_offset, images).parse();
  if (is_complex(h.element) && !complex)
    throw ParseError(path, h.descr_offset, -1,
                     fmt::format("'{}' holds complex numbers, and this reads real ones: inv, solve and lstsq take "
                                 "complex matrices, the other commands compute in real numbers",
                                 h.descr));
  if (h.shape.size() > 3)
    throw ParseError(path, h.shape_offset, -1,
                     fmt::format("shape {} has {} dimensions; linv reads arrays of up to 3 (a stack of matrices)",
                                 shape_text(h.shape), h.shape.size()));
  const std::int64_t item = item_bytes(h.element);
  // The element count is checked against overflow so that absurd shapes fail here, before any allocation.
  // An empty array's other dimensions too: the readers multiply them (a fuzzed (4000000040, 10000004000, 0)
  // overflowed there).
  std::int64_t nonzero = 1;
  const bool has_zero = std::find(h.shape.begin(), h.shape.end(), 0) != h.shape.end();
  for (index d : h.shape) {
    if (d < 0)
      throw ParseError(path, h.shape_offset, -1, fmt::format("shape {} has a negative dimension", shape_text(h.shape)));
    if (d == 0) continue;
    if (nonzero > std::numeric_limits<std::int64_t>::max() / item / d)
      throw ParseError(path, h.shape_offset, -1,
                       fmt::format("shape {} is too large: its size overflows 64 bits", shape_text(h.shape)));
    nonzero *= d;
  }
  h.data_offset = header_offset + header_bytes;
  h.data_bytes = has_zero ? 0 : nonzero * item;
  if (in.size() && *in.size() - h.data_offset != h.data_bytes)
    throw data_size_error(path, h, *in.size() - h.data_offset);
  return h;
}

// The data of a stream whose length is not known up front (a pipe), read into memory in pieces as they
// arrive, so that a header announcing more than the stream holds fails before what it announces is
// allocated. Reads the way InputFile does, from the start of the data.
class BufferedData {
 public:
  BufferedData(InputFile& in, const Header& h);
  const std::string& path() const noexcept { return path_; }
  std::int64_t offset() const noexcept { return data_offset_ + static_cast<std::int64_t>(at_); }
  std::size_t read_some(void* dst, std::size_t bytes) {
    const std::size_t n = std::min(bytes, data_.size() - at_);
    std::memcpy(dst, data_.data() + at_, n);
    at_ += n;
    return n;
  }

 private:
  std::string path_;
  std::int64_t data_offset_;
  std::vector<unsigned char> data_;
  std::size_t at_ = 0;
};

// Reads `count` elements; a short read means a truncated stream whose size was not known up front.
template <Scalar T, class Source>
void read_exact(Source& in, const Header& h, T* dst, std::int64_t count) {
  const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
  if (in.read_some(dst, bytes) < bytes) throw data_size_error(in.path(), h, in.offset() - h.data_offset);
}

// The stream holds an m x n column-major array; stores its transpose (n x m, column-major) at dst. The
// transpose goes through a bounded buffer: whole source columns when they fit, pieces of one otherwise.
template <Scalar T, class Source>
void read_transposed(Source& in, const Header& h, index m, index n, T* dst) {
  if (m <= 1 || n <= 1) return read_exact(in, h, dst, m * n);
  const index chunk = static_cast<index>(kChunkBytes / sizeof(T));
  const index piece = std::min(m, chunk);                       // rows of a source column read at once
  const index width = m <= chunk ? std::min(n, chunk / m) : 1;  // source columns read at once
  std::vector<T> buffer(static_cast<std::size_t>(piece * width));
  for (index j0 = 0; j0 < n; j0 += width) {
    const index w = std::min(width, n - j0);
    for (index i0 = 0; i0 < m; i0 += piece) {
      const index len = std::min(piece, m - i0);  // == m whenever w > 1, so the buffer is w whole columns
      read_exact(in, h, buffer.data(), len * w);
      for (index i = 0; i < len; ++i)
        for (index jj = 0; jj < w; ++jj) dst[(j0 + jj) + (i0 + i) * n] = buffer[i + jj * len];
    }
  }
}

// Nothing may follow the data. read_header checked this for regular files; this catches it in pipes, whose
// size is not known up front.
template <class Source>
void expect_end(Source& in, const Header& h) {
  std::array<char, 4096> scratch{};
  std::int64_t extra = 0;
  while (const std::size_t got = in.read_some(scratch.data(), scratch.size())) extra += static_cast<std::int64_t>(got);
  if (extra > 0) throw data_size_error(in.path(), h, h.data_bytes + extra);
}

BufferedData::BufferedData(InputFile& in, const Header& h) : path_(in.path()), data_offset_(h.data_offset) {
  const auto total = static_cast<std::size_t>(h.data_bytes);
  while (data_.size() < total) {
    const std::size_t done = data_.size(), piece = std::min(total - done, kChunkBytes);
    data_.resize(done + piece);
    const std::size_t got = in.read_some(data_.data() + done, piece);
    if (got < piece) throw data_size_error(path_, h, static_cast<std::int64_t>(done + got));
  }
  expect_end(in, h);
}

// Calls read(source) with the file itself when its length was checked against the header, or with its data
// read into memory first when it is a stream of unknown length.
template <class Read>
auto with_data(InputFile& in, const Header& h, Read&& read) {
  if (in.size()) return read(in);
  BufferedData data(in, h);
  return read(data);
}

template <Real T, class Source>
MatrixStack<T> read_stack_data(Source& in, const Header& h) {
  MatrixStack<T> s;
  // () is one 1x1 matrix, (n,) one n x 1 column, (r, c) one matrix, (B, r, c) B of them.
  const auto& d = h.shape;
  const std::size_t nd = d.size();
  s.count = nd == 3 ? d[0] : 1;
  s.rows = nd == 0 ? 1 : d[nd == 3 ? 1 : 0];
  s.cols = nd >= 2 ? d[nd - 1] : 1;
  s.data.resize(static_cast<std::size_t>(s.count * s.rows * s.cols));
  const index slice = s.rows * s.cols;
  if (h.fortran_order) {
    // Element [b][i][j] lies at b + (i + j*rows)*count: a count x slice array to transpose.
    read_transposed(in, h, s.count, slice, s.data.data());
  } else {
    // Each matrix is stored row by row: a cols x rows column-major array to transpose. Empty matrices hold
    // nothing to read, however many (a fuzzed shape (4000000040, 0, 0) spent minutes here).
    if (slice > 0)
      for (index b = 0; b < s.count; ++b) read_transposed(in, h, s.cols, s.rows, s.data.data() + b * slice);
  }
  expect_end(in, h);
  return s;
}

template <Scalar T, class Source>
Matrix<T> read_matrix_data(Source& in, const Header& h) {
  // () is a 1x1 matrix and (n,) an n x 1 column.
  const index rows = h.shape.empty() ? 1 : h.shape[0];
  const index cols = h.shape.size() == 2 ? h.shape[1] : 1;
  Matrix<T> m = Matrix<T>::uninitialized(rows, cols);
  if (h.fortran_order)
    read_exact(in, h, m.data(), m.size());
  else
    read_transposed(in, h, cols, rows, m.data());
  expect_end(in, h);
  return m;
}

const char* numpy_name(Element e) {
  switch (e) {
    case Element::u1: return "uint8";
    case Element::u2: return "uint16";
    case Element::u4: return "uint32";
    case Element::u8: return "uint64";
    case Element::i1: return "int8";
    case Element::i2: return "int16";
    case Element::i4: return "int32";
    case Element::i8: return "int64";
    case Element::b1: return "bool";
    case Element::f4: return "float32";
    default: return "float64";
  }
}

// An integer or bool element's value; nullopt for a 64-bit one beyond +-2^53, which float64 may round.
std::optional<double> integer_value(const unsigned char* p, Element e) {
  constexpr std::uint64_t kExact = std::uint64_t{1} << 53;
  switch (e) {
    case Element::b1: return p[0] != 0 ? 1.0 : 0.0;
    case Element::u1: return p[0];
    case Element::i1: return static_cast<std::int8_t>(p[0]);
    case Element::u2: return static_cast<double>(little_endian(p, 2));
    case Element::i2: return static_cast<std::int16_t>(little_endian(p, 2));
    case Element::u4: return static_cast<double>(little_endian(p, 4));
    case Element::i4: return static_cast<std::int32_t>(little_endian(p, 4));
    default: {
      const std::uint64_t bits = little_endian(p, 8);
      if (e == Element::u8) return bits <= kExact ? std::optional<double>(static_cast<double>(bits)) : std::nullopt;
      const auto v = static_cast<std::int64_t>(bits);
      const std::uint64_t magnitude = v < 0 ? 0 - bits : bits;
      return magnitude <= kExact ? std::optional<double>(static_cast<double>(v)) : std::nullopt;
    }
  }
}

// An array of integers (or bools) as float64 values, exactly, shaped as read_stack_data shapes floats: a
// value float64 cannot hold exactly is refused, naming its position. The conversion is noted for the report.
template <class Source>
MatrixStack<double> integer_stack(Source& in, const Header& h) {
  const auto& d = h.shape;
  const std::size_t nd = d.size();
  MatrixStack<double> s;
  s.count = nd == 3 ? d[0] : 1;
  s.rows = nd == 0 ? 1 : d[nd == 3 ? 1 : 0];
  s.cols = nd >= 2 ? d[nd - 1] : 1;
  std::vector<unsigned char> bytes(static_cast<std::size_t>(h.data_bytes));
  if (in.read_some(bytes.data(), bytes.size()) < bytes.size())
    throw data_size_error(in.path(), h, in.offset() - h.data_offset);
  expect_end(in, h);
  // An empty array holds nothing to convert, however many of its matrices (a fuzzed (2017381911, 0, 5)
  // spent minutes in the loops below).
  if (s.count == 0 || s.rows == 0 || s.cols == 0) return s;
  s.data.resize(static_cast<std::size_t>(s.count * s.rows * s.cols));
  const std::int64_t item = item_bytes(h.element);
  for (index b = 0; b < s.count; ++b)
    for (index j = 0; j < s.cols; ++j)
      for (index i = 0; i < s.rows; ++i) {
        const index at = h.fortran_order ? b + (i + j * s.rows) * s.count : (b * s.rows + i) * s.cols + j;
        const std::optional<double> v = integer_value(bytes.data() + at * item, h.element);
        if (!v)
          throw InputError(fmt::format("{}: the {} at index {} lies beyond +-2^53, where float64 cannot hold every "
                                       "integer; convert the array to float yourself if rounding it is acceptable",
                                       in.path(), numpy_name(h.element),
                                       nd == 3 ? fmt::format("[{}, {}, {}]", b, i, j) : fmt::format("[{}, {}]", i, j)));
        s.data[static_cast<std::size_t>(b * s.rows * s.cols + i + j * s.rows)] = *v;
      }
  add_input_note(fmt::format("{}: {} values read as float64 (exactly)", in.path(), numpy_name(h.element)));
  return s;
}

// One image sample as a double: floats as they are, unsigned integers scaled to [0, 1].
double sample(const unsigned char* p, Element e) {
  if (e == Element::u1) return p[0] / 255.0;
  if (e == Element::u2) return static_cast<double>(little_endian(p, 2)) / 65535.0;
  if (e == Element::f4) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  double v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// ---- writing ----

template <Scalar T>
constexpr const char* descr() {
  if constexpr (Complex<T>) return std::same_as<T, std::complex<float>> ? "<c8" : "<c16";
  return std::same_as<T, float> ? "<f4" : "<f8";
}

// A version 1.0 preamble and header as np.save writes them: padded with spaces and ended by '\n' so that the
// data starts at a multiple of 64 bytes. Shapes of up to 3 dimensions keep the header far below the
// 65535-byte limit of version 1.0.
template <Scalar T>
std::string header(bool fortran_order, const std::vector<index>& shape) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': {}, }}", descr<T>(),
                                 fortran_order ? "True" : "False", shape_text(shape));
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((unpadded + 63) / 64 * 64 - unpadded, ' ');
  dict.push_back('\n');
  std::string out(kMagic.begin(), kMagic.end());
  out += {'\x01', '\x00', static_cast<char>(dict.size() & 0xff), static_cast<char>(dict.size() >> 8)};
  return out + dict;
}

template <Scalar T>
void write_columns(AtomicFile& out, ConstMatrixView<T> A) {
  if (is_contiguous(A)) {
    out.write(A.data(), static_cast<std::size_t>(A.rows() * A.cols()) * sizeof(T));
    return;
  }
  for (index j = 0; j < A.cols(); ++j) out.write(&A(0, j), static_cast<std::size_t>(A.rows()) * sizeof(T));
}

// Writes A row by row (C order) through a bounded buffer.
template <Real T>
void write_rows(AtomicFile& out, ConstMatrixView<T> A) {
  std::vector<T> buffer;
  buffer.reserve(kChunkBytes / sizeof(T));
  for (index i = 0; i < A.rows(); ++i)
    for (index j = 0; j < A.cols(); ++j) {
      buffer.push_back(A(i, j));
      if (buffer.size() == buffer.capacity()) {
        out.write(buffer.data(), buffer.size() * sizeof(T));
        buffer.clear();
      }
    }
  out.write(buffer.data(), buffer.size() * sizeof(T));
}

// A 3-D array refused where one matrix is read.
void require_one_matrix(const InputFile& in, const Header& h) {
  if (h.shape.size() == 3)
    throw ParseError(in.path(), h.shape_offset, -1,
                     fmt::format("shape {} is a stack of {} matrices, where one matrix was expected",
                                 shape_text(h.shape), h.shape[0]));
}

// The whole matrix whose header was just read.
AnyMatrix read_whole_matrix(InputFile& in, const Header& h) {
  require_one_matrix(in, h);
  return with_data(in, h, [&h](auto& source) -> AnyMatrix {
    if (h.element == Element::f4) return read_matrix_data<float>(source, h);
    if (is_integer(h.element)) {
      MatrixStack<double> one = integer_stack(source, h);
      Matrix<double> m = Matrix<double>::uninitialized(one.rows, one.cols);
      std::copy(one.data.begin(), one.data.end(), m.data());
      return m;
    }
    return read_matrix_data<double>(source, h);
  });
}

// The whole stack whose header was just read.
AnyStack read_whole_stack(InputFile& in, const Header& h) {
  return with_data(in, h, [&h](auto& source) -> AnyStack {
    if (h.element == Element::f4) return read_stack_data<float>(source, h);
    if (is_integer(h.element)) return integer_stack(source, h);
    return read_stack_data<double>(source, h);
  });
}

}  // namespace

std::size_t npy_dimensions(InputFile& in) { return read_header(in, false, /*complex=*/true).shape.size(); }

AnyMatrix read_npy(InputFile& in) {
  const Header h = read_header(in);
  return read_whole_matrix(in, h);
}

AnyDense read_npy_dense(InputFile& in) {
  const Header h = read_header(in, /*images=*/false, /*complex=*/true);
  if (!is_complex(h.element))
    return std::visit([](auto&& m) -> AnyDense { return std::move(m); }, read_whole_matrix(in, h));
  require_one_matrix(in, h);
  return with_data(in, h, [&h](auto& source) -> AnyDense {
    if (h.element == Element::c8) return read_matrix_data<std::complex<float>>(source, h);
    return read_matrix_data<std::complex<double>>(source, h);
  });
}


template <Real T>
std::string npy_header(index rows, index cols, bool vector) {
  return header<T>(/*fortran_order=*/true, vector ? std::vector<index>{rows} : std::vector<index>{rows, cols});
}
template std::string npy_header<float>(index, index, bool);
template std::string npy_header<double>(index, index, bool);

}  // namespace linv::io::detail

namespace linv::io {

NpyLayout npy_layout(const std::string& path) {
  detail::InputFile in(path);
  const detail::Header h = detail::read_header(in);
  using detail::Element;
  if (h.shape.empty() || h.shape.size() > 2 || (h.element != Element::f4 && h.element != Element::f8))
    throw ParseError(path, h.shape_offset, -1,
                     fmt::format("shape {} of '{}': a distributed matrix is read from a 1-D or 2-D float32 or "
                                 "float64 array",
                                 detail::shape_text(h.shape), h.descr));
  const bool vector = h.shape.size() == 1;  // one column, laid out alike in either order
  return {.dtype = h.element == Element::f4 ? DType::Float32 : DType::Float64,
          .fortran_order = vector || h.fortran_order,
          .rows = h.shape[0],
          .cols = vector ? 1 : h.shape[1],
          .data_offset = h.data_offset};
}

template <Real T>
struct NpyInPlace<T>::File {
  explicit File(const std::string& path) : atomic(path) {}
  detail::AtomicFile atomic;
};

template <Real T>
NpyInPlace<T>::NpyInPlace(const std::string& path, index rows, index cols, bool vector)
    : file_(std::make_unique<File>(path)) {
  if (vector && cols != 1)
    throw InvalidArgument(fmt::format("a {} matrix is not written as a vector", shape_string(rows, cols)));
  const std::string header = detail::npy_header<T>(rows, cols, vector);
  file_->atomic.write(header);
  file_->atomic.close_handle();
  const auto bytes = static_cast<off_t>(header.size() + static_cast<std::size_t>(rows * cols) * sizeof(T));
  if (::truncate(file_->atomic.temp_path().c_str(), bytes) != 0) file_->atomic.fail(std::strerror(errno));
}

template <Real T>
NpyInPlace<T>::~NpyInPlace() = default;

template <Real T>
std::int64_t NpyInPlace<T>::header_bytes(index rows, index cols, bool vector) {
  return static_cast<std::int64_t>(detail::npy_header<T>(rows, cols, vector).size());
}

template <Real T>
const std::string& NpyInPlace<T>::temp_path() const noexcept {
  return file_->atomic.temp_path();
}

template <Real T>
void NpyInPlace<T>::commit() {
  file_->atomic.commit();
}

template class NpyInPlace<float>;
template class NpyInPlace<double>;

}  // namespace linv::io

namespace linv::io::detail {

AnyStack read_npy_stack(InputFile& in) {
  const Header h = read_header(in);
  return read_whole_stack(in, h);
}

StackPart read_npy_stack_part(InputFile& in, int part, int parts) {
  const Header h = read_header(in);
  const bool floats = h.element == Element::f4 || h.element == Element::f8;
  if (h.shape.size() != 3 || h.fortran_order || !floats || !in.size())
    return part_of(read_whole_stack(in, h), part, parts);
  // C order keeps each matrix's rows x cols elements together, one matrix after another: seek to the part's
  // first and read its matrices as read_stack_data reads them all (a file of the wrong size was refused by
  // read_header)
  const index total = h.shape[0], first = part_begin(total, part, parts);
  const index count = part_begin(total, part + 1, parts) - first;
  auto read = [&]<Real T>() -> AnyStack {
    MatrixStack<T> s;
    s.count = count, s.rows = h.shape[1], s.cols = h.shape[2];
    const index slice = s.rows * s.cols;
    s.data.resize(static_cast<std::size_t>(count * slice));
    if (slice > 0) {
      in.seek(h.data_offset + first * slice * static_cast<std::int64_t>(sizeof(T)));
      for (index b = 0; b < count; ++b) read_transposed(in, h, s.cols, s.rows, s.data.data() + b * slice);
    }
    return s;
  };
  return {h.element == Element::f4 ? read.operator()<float>() : read.operator()<double>(), first, total};
}

ColumnPart read_npy_columns(InputFile& in, int part, int parts) {
  const Header h = read_header(in);
  const bool floats = h.element == Element::f4 || h.element == Element::f8;
  if (h.shape.size() != 2 || !floats || !in.size()) return columns_of(read_whole_matrix(in, h), part, parts);
  const index rows = h.shape[0], total = h.shape[1], first = part_begin(total, part, parts);
  const index count = part_begin(total, part + 1, parts) - first;
  auto read = [&]<Real T>() -> AnyMatrix {
    Matrix<T> m = Matrix<T>::uninitialized(rows, count);
    if (m.size() == 0) return m;
    const auto item = static_cast<std::int64_t>(sizeof(T));
    if (h.fortran_order) {  // the part's columns lie together
      in.seek(h.data_offset + first * rows * item);
      read_exact(in, h, m.data(), m.size());
    } else {  // row i's part lies at (i total + first)
      std::vector<T> row(static_cast<std::size_t>(count));
      for (index i = 0; i < rows; ++i) {
        in.seek(h.data_offset + (i * total + first) * item);
        read_exact(in, h, row.data(), count);
        for (index j = 0; j < count; ++j) m(i, j) = row[static_cast<std::size_t>(j)];
      }
    }
    return m;
  };
  return {h.element == Element::f4 ? read.operator()<float>() : read.operator()<double>(), first, total};
}

Image read_npy_image(const std::string& path) {
  InputFile in(path);
  const Header h = read_header(in, true);
  const std::vector<index>& d = h.shape;
  if (d.size() < 2)
    throw ParseError(path, h.shape_offset, -1,
                     fmt::format("shape {} is not an image: linv reads height x width or height x width x channels",
                                 shape_text(d)));
  if (d.size() == 3 && (d[2] < 1 || d[2] > 4))
    throw ParseError(path, h.shape_offset, -1,
                     fmt::format("shape {} has {} channels; an image has 1 to 4 (grey, grey and alpha, RGB, RGBA)",
                                 shape_text(d), d[2]));
  const index height = d[0], width = d[1], channels = d.size() == 3 ? d[2] : 1;
  // Samples are converted as they are placed, so the whole array is read first (no larger than the result).
  const std::vector<unsigned char> bytes = with_data(in, h, [&h](auto& source) {
    std::vector<unsigned char> all(static_cast<std::size_t>(h.data_bytes));
    if (source.read_some(all.data(), all.size()) < all.size())
      throw data_size_error(source.path(), h, source.offset() - h.data_offset);
    expect_end(source, h);
    return all;
  });
  Image image{Matrix<double>::uninitialized(height, width * channels), static_cast<int>(channels)};
  if (image.pixels.size() == 0) return image;  // rows without columns (or none): no loop over them
  double* out = image.pixels.data();
  const std::size_t item = static_cast<std::size_t>(item_bytes(h.element));
  const unsigned char* p = bytes.data();
  // Sample (i, j, k) belongs at pixels(i, j + k * width), offset i + height * (j + width * k): where Fortran
  // order stores it. C order stores the axes the other way round, k fastest.
  if (h.fortran_order) {
    for (index s = 0; s < image.pixels.size(); ++s, p += item) out[s] = sample(p, h.element);
  } else {
    for (index i = 0; i < height; ++i)
      for (index j = 0; j < width; ++j)
        for (index k = 0; k < channels; ++k, p += item) out[i + height * (j + width * k)] = sample(p, h.element);
  }
  return image;
}

void write_npy_image(const std::string& path, ConstMatrixView<double> pixels, int channels) {
  AtomicFile out(path);
  const index width = pixels.cols() / channels;
  // In Fortran order (height, width, channels) is the channel-blocked matrix's own column-major layout.
  out.write(channels == 1 ? header<double>(true, {pixels.rows(), width})
                          : header<double>(true, {pixels.rows(), width, index{channels}}));
  write_columns(out, pixels);
  out.commit();
}

template <Scalar T>
void write_npy(const std::string& path, ConstMatrixView<T> A, bool vector) {
  AtomicFile out(path);
  out.write(header<T>(true, vector ? std::vector<index>{A.rows()} : std::vector<index>{A.rows(), A.cols()}));
  write_columns(out, A);
  out.commit();
}

template <Real T>
void write_npy_stack(const std::string& path, const MatrixStack<T>& stack) {
  AtomicFile out(path);
  out.write(header<T>(false, {stack.count, stack.rows, stack.cols}));
  if (stack.rows * stack.cols > 0)  // empty matrices write nothing, however many
    for (index b = 0; b < stack.count; ++b) write_rows(out, stack[b]);
  out.commit();
}

#ifdef LINV_HAVE_ZLIB
namespace {

void put(std::string& out, std::uint64_t value, int bytes) {  // little endian
  for (int b = 0; b < bytes; ++b) out.push_back(static_cast<char>((value >> (8 * b)) & 0xff));
}

}  // namespace
#endif

template <Scalar T>
void write_npz(const std::string& path, const std::vector<std::pair<std::string, ConstMatrixView<T>>>& arrays,
               bool vectors) {
#ifndef LINV_HAVE_ZLIB
  (void)arrays;
  (void)vectors;
  throw InvalidArgument(fmt::format("{}: linv was built without zlib, so it cannot write .npz files (use .npy)", path));
#else
  AtomicFile out(path);
  std::string directory;
  std::uint64_t offset = 0;
  for (const auto& [name, A] : arrays) {
    // the member: a .npy file in memory
    std::string npy = header<T>(true, vectors ? std::vector<index>{A.rows()} : std::vector<index>{A.rows(), A.cols()});
    for (index j = 0; j < A.cols(); ++j)
      npy.append(reinterpret_cast<const char*>(&A(0, j)), static_cast<std::size_t>(A.rows()) * sizeof(T));
    if (npy.size() >= 0xffffffffu || offset >= 0xffffffffu)
      out.fail(fmt::format("member '{}' needs ZIP64 (over 4 GiB), which linv does not write", name));
    const std::string file = name + ".npy";
    const std::uint32_t crc = static_cast<std::uint32_t>(
        crc32(0L, reinterpret_cast<const Bytef*>(npy.data()), static_cast<uInt>(npy.size())));
    auto common = [&](std::string& h) {  // version needed, flags, stored, time, date 1980-01-01, crc, sizes
      put(h, 20, 2), put(h, 0, 2), put(h, 0, 2), put(h, 0, 2), put(h, 0x21, 2);
      put(h, crc, 4), put(h, npy.size(), 4), put(h, npy.size(), 4), put(h, file.size(), 2), put(h, 0, 2);
    };
    std::string local;
    put(local, 0x04034b50, 4);
    common(local);
    local += file;
    put(directory, 0x02014b50, 4);
    put(directory, 20, 2);  // made by
    common(directory);
    put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 4), put(directory, offset, 4);
    directory += file;
    out.write(local);
    out.write(npy);
    offset += local.size() + npy.size();
  }
  std::string end;
  put(end, 0x06054b50, 4), put(end, 0, 2), put(end, 0, 2), put(end, arrays.size(), 2), put(end, arrays.size(), 2);
  put(end, directory.size(), 4), put(end, offset, 4), put(end, 0, 2);
  out.write(directory);
  out.write(end);
  out.commit();
#endif
}

template void write_npz<float>(const std::string&, const std::vector<std::pair<std::string, ConstMatrixView<float>>>&,
                                 bool);
template void write_npz<double>(const std::string&, const std::vector<std::pair<std::string, ConstMatrixView<double>>>&,
                                 bool);
template void write_npz<std::complex<float>>(
    const std::string&, const std::vector<std::pair<std::string, ConstMatrixView<std::complex<float>>>>&, bool);
template void write_npz<std::complex<double>>(
    const std::string&, const std::vector<std::pair<std::string, ConstMatrixView<std::complex<double>>>>&, bool);
template void write_npy<float>(const std::string&, ConstMatrixView<float>, bool);
template void write_npy<double>(const std::string&, ConstMatrixView<double>, bool);
template void write_npy<std::complex<float>>(const std::string&, ConstMatrixView<std::complex<float>>, bool);
template void write_npy<std::complex<double>>(const std::string&, ConstMatrixView<std::complex<double>>, bool);
template void write_npy_stack<float>(const std::string&, const MatrixStack<float>&);
template void write_npy_stack<double>(const std::string&, const MatrixStack<double>&);

}  // namespace linv::io::detail
