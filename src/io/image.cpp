// Images: PGM (grey, P2/P5, 8 or 16 bits) and .npy always, PNG (grey, grey and alpha, RGB, RGBA) through
// libpng, JPEG (grey or colour) through libjpeg and TIFF (1 to 4 samples of 8 or 16 bits or float32 per
// pixel; anything else through libtiff's RGBA reader, 8 bits) through libtiff, when linv was built with
// them (reading only: JPEG loses what it stores, and TIFF's variety is for reading). Integer samples are scaled to [0, 1] on reading; writing clips to
// [0, 1] and rounds to 8 or 16 bits, except .npy, which keeps float64 values as they are. Colour is read
// by one reader per format and made grey in one place (to_grey), whatever the format.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csetjmp>
#include <cstdarg>
#include <memory>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "io/formats.hpp"
#include "linv/errors.hpp"

#ifdef LINV_HAVE_PNG
#include <png.h>
#endif
#ifdef LINV_HAVE_JPEG
#include <cstdio>  // jpeglib.h needs FILE declared
#include <jpeglib.h>
#endif
#ifdef LINV_HAVE_TIFF
#include <tiffio.h>
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

// A format this build was made without: InputError naming the library to install, and what to do instead.
[[maybe_unused]] [[noreturn]] void not_built(const std::string& path, const char* format, const char* library,
                                             const char* instead) {
  throw InputError(fmt::format("{}: this linv was built without {} support ({}); {}, or install {}-dev and rebuild",
                               path, format, library, instead, library));
}

// ---- PGM ----

Matrix<double> read_pgm(const std::string& path) {
  const std::vector<unsigned char> b = slurp(path);
  std::size_t at = 0;
  auto line_of = [&](std::size_t offset) {
    const auto end = b.begin() + static_cast<std::ptrdiff_t>(std::min(offset, b.size()));
    return 1 + static_cast<std::int64_t>(std::count(b.begin(), end, '\n'));
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
  if (binary && at < b.size()) ++at;  // the single whitespace after the maximum value
  // A header of a few bytes may announce any size: the pixels must be in the file before the image is
  // allocated. Binary pixels take 1 or 2 bytes each, ASCII ones at least a digit and a separator.
  const int bytes = maxval < 256 ? 1 : 2;
  const double pixels = static_cast<double>(width) * static_cast<double>(height);
  const double need = binary ? pixels * bytes : std::max(2 * pixels - 1, 0.0);
  const std::size_t present = b.size() - std::min(b.size(), at);
  if (need > static_cast<double>(present))
    throw fail(fmt::format("the pixels end early: the header announces {}x{} pixels, {}{:.0f} bytes, but {} follow it",
                           width, height, binary ? "" : "at least ", need, present));
  Matrix<double> image(height, width);
  if (image.size() == 0) return image;  // rows without columns (or none): nothing to read, however many
  if (binary) {
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

Image read_png(const std::string& path) {
  const std::vector<unsigned char> bytes = slurp(path);
  if (bytes.size() < 8 || png_sig_cmp(bytes.data(), 0, 8) != 0)
    throw ParseError(path, 0, -1, "not a PNG file (no PNG signature)");
  PngErrors errors;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &errors, png_fail, png_warn);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  struct Reader {
    const std::vector<unsigned char>* bytes;
    std::size_t at;
  } reader{&bytes, 0};
  // Everything with a destructor exists before setjmp: longjmp must not skip one.
  Image image;
  std::vector<unsigned char> samples;
  std::vector<png_bytep> rows;
  if (setjmp(errors.jump)) {
    png_destroy_read_struct(&png, &info, nullptr);
    throw ParseError(path, static_cast<std::int64_t>(reader.at), -1, "libpng: " + errors.message);
  }
  if (!info) png_error(png, "out of memory");
  png_set_read_fn(png, &reader, [](png_structp p, png_bytep out, png_size_t n) {
    auto* r = static_cast<Reader*>(png_get_io_ptr(p));
    if (r->at + n > r->bytes->size()) png_error(p, "the file ends early");
    std::copy_n(r->bytes->data() + r->at, n, out);
    r->at += n;
  });
  png_read_info(png, info);
  // A header may announce any size: the compressed data after it must be able to hold the samples before
  // they are allocated.
  const double announced = static_cast<double>(png_get_image_width(png, info)) * png_get_image_height(png, info) *
                           png_get_channels(png, info) * png_get_bit_depth(png, info) / 8;
  const std::size_t rest = bytes.size() - reader.at;
  if (announced > static_cast<double>(detail::kMaxDeflateRatio) * static_cast<double>(rest)) {
    const std::string what = fmt::format(
        "the header announces {}x{} pixels, {:.0f} bytes of samples, but the {} bytes after it inflate to at most "
        "{} times as many",
        png_get_image_width(png, info), png_get_image_height(png, info), announced, rest, detail::kMaxDeflateRatio);
    png_destroy_read_struct(&png, &info, nullptr);
    throw ParseError(path, static_cast<std::int64_t>(reader.at), -1, what);
  }
  // Palettes become RGB, grey below 8 bits becomes 8 bits, and a tRNS chunk becomes an alpha channel, so
  // every file arrives as 1 to 4 channels of 8 or 16 bits.
  png_set_expand(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  const int depth = png_get_bit_depth(png, info), channels = png_get_channels(png, info);
  const std::size_t stride = png_get_rowbytes(png, info);
  samples.resize(stride * height);
  rows.resize(height);
  for (png_uint_32 r = 0; r < height; ++r) rows[r] = samples.data() + r * stride;
  png_read_image(png, rows.data());
  png_destroy_read_struct(&png, &info, nullptr);
  image = Image{Matrix<double>::uninitialized(height, index{width} * channels), channels};
  const double maxval = depth == 16 ? 65535.0 : 255.0;
  for (int k = 0; k < channels; ++k) {
    MatrixView<double> channel = image.channel(k);
    for (png_uint_32 r = 0; r < height; ++r)
      for (png_uint_32 c = 0; c < width; ++c) {
        const std::size_t at = static_cast<std::size_t>(c) * channels + k;  // samples interleaved by pixel
        const unsigned char* p = rows[r] + (depth == 16 ? 2 * at : at);
        channel(r, c) = (depth == 16 ? ((p[0] << 8) | p[1]) : p[0]) / maxval;  // 16-bit PNG is big-endian
      }
  }
  return image;
}

// `pixels` is height x (width * channels), channel-blocked as in Image.
void write_png(const std::string& path, ConstMatrixView<double> pixels, int channels, int bits) {
  static constexpr int kColourTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                         PNG_COLOR_TYPE_RGB_ALPHA};
  PngErrors errors;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &errors, png_fail, png_warn);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  std::vector<unsigned char> out, samples;
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
  const index width = pixels.cols() / channels;
  const auto height = static_cast<png_uint_32>(pixels.rows());
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), height, bits, kColourTypes[channels - 1],
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  const std::size_t stride = static_cast<std::size_t>(width) * channels * (bits / 8);
  samples.resize(stride * height);
  rows.resize(height);
  const unsigned maxval = bits == 8 ? 255u : 65535u;
  for (png_uint_32 r = 0; r < height; ++r) rows[r] = samples.data() + r * stride;
  for (int k = 0; k < channels; ++k)
    for (index c = 0; c < width; ++c)
      for (png_uint_32 r = 0; r < height; ++r) {
        const unsigned v = quantise(pixels(r, k * width + c), maxval);
        const std::size_t at = static_cast<std::size_t>(c) * channels + k;  // samples interleaved by pixel
        if (bits == 8) {
          rows[r][at] = static_cast<unsigned char>(v);
        } else {
          rows[r][2 * at] = static_cast<unsigned char>(v >> 8);
          rows[r][2 * at + 1] = static_cast<unsigned char>(v & 0xff);
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
Image read_png(const std::string& path) { not_built(path, "PNG", "libpng", "use .pgm"); }
void write_png(const std::string& path, ConstMatrixView<double>, int, int) {
  not_built(path, "PNG", "libpng", "use .pgm");
}
#endif

#if defined(LINV_HAVE_JPEG) || defined(LINV_HAVE_TIFF)
// A file whose header announces more pixels than this machine's memory holds as float64 is refused before
// anything is allocated (compressed formats have no useful bound on their expansion: a progressive JPEG's
// runs of empty blocks cost a few bits for thousands of blocks).
void check_announced(const std::string& path, double height, double width, double channels) {
  const double bytes = height * width * channels * sizeof(double);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGESIZE);
  const double memory = static_cast<double>(pages) * static_cast<double>(page_size);
  if (pages > 0 && page_size > 0 && bytes > memory)
    throw ParseError(path, 0, -1,
                     fmt::format("the header announces {:.0f}x{:.0f} pixels of {:.0f} channels, {:.1f} GiB as float64, "
                                 "more than this machine's {:.1f} GiB of memory",
                                 height, width, channels, bytes / (1 << 30), memory / (1 << 30)));
}
#endif

// ---- JPEG ----

#ifdef LINV_HAVE_JPEG
struct JpegErrors {
  jpeg_error_mgr manager;  // first: libjpeg hands back a pointer to it
  std::jmp_buf jump;
  std::string message;
};

Image read_jpeg(const std::string& path) {
  const std::vector<unsigned char> bytes = slurp(path);
  jpeg_decompress_struct jpeg{};
  JpegErrors errors;
  jpeg.err = jpeg_std_error(&errors.manager);
  errors.manager.error_exit = [](j_common_ptr c) {
    auto* e = reinterpret_cast<JpegErrors*>(c->err);
    char text[JMSG_LENGTH_MAX];
    (*c->err->format_message)(c, text);
    e->message = text;
    std::longjmp(e->jump, 1);
  };
  // libjpeg's warnings are damaged data (a truncated file, corrupt entropy codes) that it would decode as grey
  // or noise: refused, as any malformed file is
  errors.manager.emit_message = [](j_common_ptr c, int level) {
    if (level < 0) c->err->error_exit(c);
  };
  // Everything with a destructor exists before setjmp: longjmp must not skip one.
  Image image;
  std::vector<unsigned char> samples;
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&jpeg);
    throw ParseError(path, -1, -1, "libjpeg: " + errors.message);
  }
  jpeg_create_decompress(&jpeg);
  jpeg_mem_src(&jpeg, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&jpeg, TRUE);
  try {
    if (jpeg.num_components != 1 && jpeg.num_components != 3)
      throw ParseError(path, 0, -1,
                       fmt::format("JPEG images of {} components (CMYK) are not read: convert it to RGB",
                                   jpeg.num_components));
    check_announced(path, jpeg.image_height, jpeg.image_width, jpeg.num_components);
  } catch (...) {
    jpeg_destroy_decompress(&jpeg);
    throw;
  }
  jpeg.out_color_space = jpeg.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&jpeg);
  // The rows are gathered as they decode and the image made only once all have: a header may announce far
  // more than the data holds, and libjpeg's complaint about the missing data (refused above) ends it first.
  const int channels = jpeg.output_components;
  const std::size_t width = jpeg.output_width, stride = width * static_cast<std::size_t>(channels);
  while (jpeg.output_scanline < jpeg.output_height) {
    samples.resize(samples.size() + stride);
    JSAMPROW rows[1] = {samples.data() + samples.size() - stride};
    jpeg_read_scanlines(&jpeg, rows, 1);
  }
  jpeg_finish_decompress(&jpeg);
  const index height = jpeg.output_height;
  jpeg_destroy_decompress(&jpeg);
  image = Image{Matrix<double>::uninitialized(height, static_cast<index>(stride)), channels};
  for (index r = 0; r < height; ++r)
    for (int k = 0; k < channels; ++k)
      for (std::size_t c = 0; c < width; ++c)
        image.pixels(r, k * static_cast<index>(width) + static_cast<index>(c)) =
            samples[static_cast<std::size_t>(r) * stride + c * static_cast<std::size_t>(channels) + k] / 255.0;
  return image;
}
#else
Image read_jpeg(const std::string& path) { not_built(path, "JPEG", "libjpeg", "convert the image to .png"); }
#endif

// ---- TIFF ----

#ifdef LINV_HAVE_TIFF
thread_local std::string tiff_message;  // libtiff's last error on this thread

// Closes the TIFF handle however the reader leaves.
struct TiffCloser {
  void operator()(TIFF* t) const noexcept { TIFFClose(t); }
};

Image read_tiff(const std::string& path) {
  // a missing or unreadable file: an InputError naming the reason, as elsewhere
  const std::int64_t file_bytes = detail::InputFile(path).size().value_or(0);
  TIFFSetErrorHandler([](const char*, const char* format, va_list args) {
    char text[512];
    std::vsnprintf(text, sizeof text, format, args);
    tiff_message = text;
  });
  TIFFSetWarningHandler(nullptr);
  tiff_message.clear();
  const std::unique_ptr<TIFF, TiffCloser> tiff(TIFFOpen(path.c_str(), "r"));
  auto fail = [&](const std::string& what) -> ParseError {
    return ParseError(path, -1, -1, tiff_message.empty() ? what : what + " (libtiff: " + tiff_message + ")");
  };
  if (!tiff) throw fail("not a TIFF file libtiff can read");
  std::uint32_t width = 0, height = 0;
  std::uint16_t samples = 1, bits = 8, format = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG;
  TIFFGetField(tiff.get(), TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField(tiff.get(), TIFFTAG_IMAGELENGTH, &height);
  TIFFGetFieldDefaulted(tiff.get(), TIFFTAG_SAMPLESPERPIXEL, &samples);
  TIFFGetFieldDefaulted(tiff.get(), TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(tiff.get(), TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted(tiff.get(), TIFFTAG_PLANARCONFIG, &planar);
  const bool direct = !TIFFIsTiled(tiff.get()) && planar == PLANARCONFIG_CONTIG && samples >= 1 && samples <= 4 &&
                      ((format == SAMPLEFORMAT_UINT && (bits == 8 || bits == 16)) ||
                       (format == SAMPLEFORMAT_IEEEFP && bits == 32));
  const int channels = direct ? samples : 4;
  check_announced(path, height, width, channels);
  // Nothing is sized by the header beyond what the file's bits could decode to at deflate's largest ratio
  // (LZW's is lower), one bit a pixel (bilevel) included: a header of a few bytes may announce anything.
  if (static_cast<double>(width) * height >
      8.0 * static_cast<double>(detail::kMaxDeflateRatio) * static_cast<double>(file_bytes))
    throw fail(fmt::format("the header announces {}x{} pixels, more than the file's {} bytes can hold through any "
                           "compression linv accepts",
                           height, width, file_bytes));
  if (direct) {
    // The rows are gathered as they decode and the image made only once all have: a header may announce far
    // more than the data holds, and the first row missing ends it first. Integer samples are scaled to [0, 1];
    // float samples kept as they are (any range), as .npy images are.
    const std::size_t stride = static_cast<std::size_t>(TIFFScanlineSize(tiff.get()));
    std::vector<unsigned char> rows;
    for (std::uint32_t r = 0; r < height; ++r) {
      rows.resize(rows.size() + stride);
      if (TIFFReadScanline(tiff.get(), rows.data() + rows.size() - stride, r) < 0)
        throw fail(fmt::format("row {} cannot be read", r + 1));
    }
    Image image{Matrix<double>::uninitialized(height, index{width} * channels), channels};
    for (std::uint32_t r = 0; r < height; ++r) {
      const unsigned char* line = rows.data() + static_cast<std::size_t>(r) * stride;
      for (int k = 0; k < channels; ++k)
        for (std::uint32_t c = 0; c < width; ++c) {
          const std::size_t at = static_cast<std::size_t>(c) * channels + k;
          double v;
          if (bits == 8) {
            v = line[at] / 255.0;
          } else if (bits == 16) {
            std::uint16_t s;
            std::memcpy(&s, line + 2 * at, 2);  // libtiff gives samples in the host's byte order
            v = s / 65535.0;
          } else {
            float s;
            std::memcpy(&s, line + 4 * at, 4);
            v = s;
          }
          image.pixels(r, k * index{width} + c) = v;
        }
    }
    return image;
  }
  // Tiles, separate planes, palettes, bilevel, other depths: libtiff's RGBA reader, 8 bits a sample, into a
  // raster it needs whole beforehand.
  Image image{Matrix<double>::uninitialized(height, index{width} * channels), channels};
  {
    std::vector<std::uint32_t> rgba(static_cast<std::size_t>(width) * height);
    if (!TIFFReadRGBAImageOriented(tiff.get(), width, height, rgba.data(), ORIENTATION_TOPLEFT, 0))
      throw fail(fmt::format("a {}-sample, {}-bit TIFF image could not be converted to RGBA", samples, bits));
    for (std::uint32_t r = 0; r < height; ++r)
      for (std::uint32_t c = 0; c < width; ++c) {
        const std::uint32_t p = rgba[static_cast<std::size_t>(r) * width + c];
        const unsigned values[4] = {TIFFGetR(p), TIFFGetG(p), TIFFGetB(p), TIFFGetA(p)};
        for (int k = 0; k < 4; ++k) image.pixels(r, k * index{width} + c) = values[k] / 255.0;
      }
  }
  return image;
}
#else
Image read_tiff(const std::string& path) { not_built(path, "TIFF", "libtiff", "convert the image to .png"); }
#endif

// Grey is ITU-R BT.709 luma, 0.2126 R + 0.7152 G + 0.0722 B (libpng's default weights), taken in double on
// the samples as stored (no gamma decoding, as MATLAB's rgb2gray), so that a colour image gives the same grey
// whichever format holds it; alpha is dropped.
Matrix<double> to_grey(Image image) {
  if (image.channels == 1) return std::move(image.pixels);
  if (image.channels == 2) return Matrix<double>::copy_of(image.channel(0));
  const ConstMatrixView<double> red = image.channel(0), green = image.channel(1), blue = image.channel(2);
  Matrix<double> grey = Matrix<double>::uninitialized(image.height(), image.width());
  for (index c = 0; c < grey.cols(); ++c)
    for (index r = 0; r < grey.rows(); ++r)
      grey(r, c) = 0.2126 * red(r, c) + 0.7152 * green(r, c) + 0.0722 * blue(r, c);
  return grey;
}

// The checks and the choice of format shared by write_image and write_image_channels.
void write_channels(const std::string& path, ConstMatrixView<double> pixels, int channels, int bits) {
  require_host(pixels.device(), "writing an image");
  if (bits != 8 && bits != 16) throw InvalidArgument(fmt::format("images are written with 8 or 16 bits, not {}", bits));
  if (channels < 1 || channels > 4)
    throw InvalidArgument(fmt::format("{}: an image has 1 to 4 channels, not {}", path, channels));
  if (pixels.cols() % channels != 0)
    throw InvalidArgument(fmt::format("{}: {} columns do not split into {} channels of equal width", path,
                                      pixels.cols(), channels));
  if (ends_with(path, ".png")) return write_png(path, pixels, channels, bits);
  if (ends_with(path, ".npy") || path == "-") return detail::write_npy_image(path, pixels, channels);
  if (ends_with(path, ".pgm")) {
    if (channels != 1)
      throw InvalidArgument(fmt::format("{}: PGM images are grey, and this one has {} channels (write .png or .npy)",
                                        path, channels));
    return write_pgm(path, pixels, bits);
  }
  throw InvalidArgument(fmt::format("{}: images are written to .png, .pgm or .npy files", path));
}

}  // namespace

Image read_image_channels(const std::string& path) {
  if (ends_with(path, ".png")) return read_png(path);
  if (ends_with(path, ".npy") || path == "-") return detail::read_npy_image(path);
  if (ends_with(path, ".pgm")) return Image{read_pgm(path), 1};
  if (ends_with(path, ".jpg") || ends_with(path, ".jpeg")) return read_jpeg(path);
  if (ends_with(path, ".tif") || ends_with(path, ".tiff")) return read_tiff(path);
  throw InvalidArgument(
      fmt::format("{}: images are read from .png, .pgm, .npy, .jpg/.jpeg or .tif/.tiff files", path));
}

Matrix<double> read_image(const std::string& path) { return to_grey(read_image_channels(path)); }

void write_image_channels(const std::string& path, const Image& image, int bits) {
  write_channels(path, image.pixels.view(), image.channels, bits);
}

void write_image(const std::string& path, ConstMatrixView<double> image, int bits) {
  write_channels(path, image, 1, bits);
}

bool have_jpeg_support() {
#ifdef LINV_HAVE_JPEG
  return true;
#else
  return false;
#endif
}

bool have_tiff_support() {
#ifdef LINV_HAVE_TIFF
  return true;
#else
  return false;
#endif
}

bool have_png_support() {
#ifdef LINV_HAVE_PNG
  return true;
#else
  return false;
#endif
}

}  // namespace linv::io
