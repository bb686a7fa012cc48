// Grey images: PGM (P2/P5, 8 or 16 bits) always, PNG through libpng when linv was built with it. Values
// are scaled to [0, 1] on reading; writing rounds to 8 or 16 bits.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csetjmp>
#include <string>
#include <vector>

#include "io/formats.hpp"
#include "linv/errors.hpp"

#ifdef LINV_HAVE_PNG
#include <png.h>
#endif

namespace linv::io {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

std::vector<unsigned char> slurp(const std::string& path) {
  detail::InputFile in(path);
  std::vector<unsigned char> bytes;
  unsigned char buffer[1 << 16];
  for (std::size_t got; (got = in.read_some(buffer, sizeof buffer)) > 0;) bytes.insert(bytes.end(), buffer, buffer + got);
  return bytes;
}

// ---- PGM ----

Matrix<double> read_pgm(const std::string& path) {
  const std::vector<unsigned char> b = slurp(path);
  std::size_t at = 0;
  auto line_of = [&](std::size_t offset) {
    return 1 + static_cast<std::int64_t>(std::count(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
  };
  auto fail = [&](const std::string& what) -> ParseError {
    return ParseError(path, static_cast<std::int64_t>(at), line_of(at), what);
  };
  auto skip_space = [&] {  // whitespace and # comments
    while (at < b.size()) {
      if (b[at] == '#')
        while (at < b.size() && b[at] != '\n') ++at;
      else if (std::isspace(b[at]))
        ++at;
      else
        break;
    }
  };
  auto number = [&](const char* what) {
    skip_space();
    if (at >= b.size() || !std::isdigit(b[at])) throw fail(fmt::format("expected the {} (a number)", what));
    long long v = 0;
    while (at < b.size() && std::isdigit(b[at])) {
      v = v * 10 + (b[at++] - '0');
      if (v > (1LL << 40)) throw fail(fmt::format("the {} is too large", what));
    }
    return v;
  };
  if (b.size() < 2 || b[0] != 'P' || (b[1] != '2' && b[1] != '5'))
    throw fail("not a grey PGM file (it should start with P2 or P5)");
  const bool binary = b[1] == '5';
  at = 2;
  const long long width = number("width"), height = number("height"), maxval = number("maximum value");
  if (maxval < 1 || maxval > 65535) throw fail(fmt::format("maximum value {} is outside 1..65535", maxval));
  Matrix<double> image(height, width);
  if (binary) {
    ++at;  // the single whitespace after the maximum value
    const int bytes = maxval < 256 ? 1 : 2;
    const auto need = static_cast<std::size_t>(width * height * bytes);
    if (b.size() < at + need)
      throw fail(fmt::format("the pixels end early: {} bytes for {}x{} at {} bytes each, {} present", need, width,
                             height, bytes, b.size() - std::min(b.size(), at)));
    for (long long r = 0; r < height; ++r)
      for (long long c = 0; c < width; ++c) {
        const std::size_t k = at + static_cast<std::size_t>((r * width + c) * bytes);
        const int v = bytes == 1 ? b[k] : (b[k] << 8) | b[k + 1];  // 16-bit PGM is big-endian
        if (v > maxval) {
          at = k;
          throw fail(fmt::format("pixel value {} exceeds the maximum {}", v, maxval));
        }
        image(r, c) = static_cast<double>(v) / static_cast<double>(maxval);
      }
  } else {
    for (long long r = 0; r < height; ++r)
      for (long long c = 0; c < width; ++c) {
        const long long v = number("next pixel value");
        if (v > maxval) throw fail(fmt::format("pixel value {} exceeds the maximum {}", v, maxval));
        image(r, c) = static_cast<double>(v) / static_cast<double>(maxval);
      }
  }
  return image;
}

unsigned quantise(double v, unsigned maxval) {
  const double clipped = std::clamp(std::isnan(v) ? 0.0 : v, 0.0, 1.0);
  return static_cast<unsigned>(std::lround(clipped * maxval));
}

void write_pgm(const std::string& path, ConstMatrixView<double> image, int bits) {
  const unsigned maxval = bits == 8 ? 255u : 65535u;
  std::string out = fmt::format("P5\n{} {}\n{}\n", image.cols(), image.rows(), maxval);
  for (index r = 0; r < image.rows(); ++r)
    for (index c = 0; c < image.cols(); ++c) {
      const unsigned v = quantise(image(r, c), maxval);
      if (bits == 16) out.push_back(static_cast<char>(v >> 8));
      out.push_back(static_cast<char>(v & 0xff));
    }
  detail::AtomicFile file(path);
  file.write(out);
  file.commit();
}

// ---- PNG ----

#ifdef LINV_HAVE_PNG
struct PngErrors {
  std::jmp_buf jump;
  std::string message;
};

void png_fail(png_structp png, png_const_charp message) {
  auto* e = static_cast<PngErrors*>(png_get_error_ptr(png));
  e->message = message;
  std::longjmp(e->jump, 1);
}
void png_warn(png_structp, png_const_charp) {}

Matrix<double> read_png(const std::string& path) {
  const std::vector<unsigned char> bytes = slurp(path);
  if (bytes.size() < 8 || png_sig_cmp(bytes.data(), 0, 8) != 0) throw ParseError(path, 0, 1, "not a PNG file");
  PngErrors errors;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &errors, png_fail, png_warn);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  struct Reader {
    const std::vector<unsigned char>* bytes;
    std::size_t at;
  } reader{&bytes, 0};
  Matrix<double> image;
  std::vector<unsigned char> pixels;
  std::vector<png_bytep> rows;
  if (setjmp(errors.jump)) {
    png_destroy_read_struct(&png, &info, nullptr);
    throw ParseError(path, static_cast<std::int64_t>(reader.at), 0, "libpng: " + errors.message);
  }
  if (!info) png_error(png, "out of memory");
  png_set_read_fn(png, &reader, [](png_structp p, png_bytep out, png_size_t n) {
    auto* r = static_cast<Reader*>(png_get_io_ptr(p));
    if (r->at + n > r->bytes->size()) png_error(p, "the file ends early");
    std::copy_n(r->bytes->data() + r->at, n, out);
    r->at += n;
  });
  png_read_info(png, info);
  const png_byte type = png_get_color_type(png, info);
  if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (type == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (type & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
  if (type == PNG_COLOR_TYPE_RGB || type == PNG_COLOR_TYPE_RGB_ALPHA || type == PNG_COLOR_TYPE_PALETTE)
    png_set_rgb_to_gray_fixed(png, 1, -1, -1);  // colour images become grey (ITU-R BT.709 weights)
  png_read_update_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  const int depth = png_get_bit_depth(png, info);
  const std::size_t stride = png_get_rowbytes(png, info);
  pixels.resize(stride * height);
  rows.resize(height);
  for (png_uint_32 r = 0; r < height; ++r) rows[r] = pixels.data() + r * stride;
  png_read_image(png, rows.data());
  png_destroy_read_struct(&png, &info, nullptr);
  image = Matrix<double>(height, width);
  const double maxval = depth == 16 ? 65535.0 : 255.0;
  for (png_uint_32 r = 0; r < height; ++r)
    for (png_uint_32 c = 0; c < width; ++c) {
      const unsigned char* p = rows[r] + (depth == 16 ? 2 * c : c);
      image(r, c) = (depth == 16 ? ((p[0] << 8) | p[1]) : p[0]) / maxval;
    }
  return image;
}

void write_png(const std::string& path, ConstMatrixView<double> image, int bits) {
  PngErrors errors;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &errors, png_fail, png_warn);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  std::vector<unsigned char> out, pixels;
  std::vector<png_bytep> rows;
  if (setjmp(errors.jump)) {
    png_destroy_write_struct(&png, &info);
    throw InputError(fmt::format("could not write {}: libpng: {}", path, errors.message));
  }
  if (!info) png_error(png, "out of memory");
  png_set_write_fn(
      png, &out,
      [](png_structp p, png_bytep data, png_size_t n) {
        auto* o = static_cast<std::vector<unsigned char>*>(png_get_io_ptr(p));
        o->insert(o->end(), data, data + n);
      },
      nullptr);
  const auto width = static_cast<png_uint_32>(image.cols()), height = static_cast<png_uint_32>(image.rows());
  png_set_IHDR(png, info, width, height, bits, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  const std::size_t stride = static_cast<std::size_t>(width) * (bits / 8);
  pixels.resize(stride * height);
  rows.resize(height);
  const unsigned maxval = bits == 8 ? 255u : 65535u;
  for (png_uint_32 r = 0; r < height; ++r) {
    rows[r] = pixels.data() + r * stride;
    for (png_uint_32 c = 0; c < width; ++c) {
      const unsigned v = quantise(image(r, c), maxval);
      if (bits == 8) {
        rows[r][c] = static_cast<unsigned char>(v);
      } else {
        rows[r][2 * c] = static_cast<unsigned char>(v >> 8);
        rows[r][2 * c + 1] = static_cast<unsigned char>(v & 0xff);
      }
    }
  }
  png_set_rows(png, info, rows.data());
  png_write_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
  png_destroy_write_struct(&png, &info);
  detail::AtomicFile file(path);
  file.write(out.data(), out.size());
  file.commit();
}
#else
[[noreturn]] void no_png(const std::string& path) {
  throw InputError(fmt::format("{}: this linv was built without PNG support (libpng); use .pgm, or install "
                               "libpng-dev and rebuild",
                               path));
}
Matrix<double> read_png(const std::string& path) { no_png(path); }
void write_png(const std::string& path, ConstMatrixView<double>, int) { no_png(path); }
#endif

}  // namespace

Matrix<double> read_image(const std::string& path) {
  if (ends_with(path, ".png")) return read_png(path);
  if (ends_with(path, ".pgm")) return read_pgm(path);
  throw InvalidArgument(fmt::format("{}: images are read from .png or .pgm files", path));
}

void write_image(const std::string& path, ConstMatrixView<double> image, int bits) {
  if (bits != 8 && bits != 16) throw InvalidArgument(fmt::format("images are written with 8 or 16 bits, not {}", bits));
  if (ends_with(path, ".png")) return write_png(path, image, bits);
  if (ends_with(path, ".pgm")) return write_pgm(path, image, bits);
  throw InvalidArgument(fmt::format("{}: images are written to .png or .pgm files", path));
}

bool have_png_support() {
#ifdef LINV_HAVE_PNG
  return true;
#else
  return false;
#endif
}

}  // namespace linv::io
