// Images: grey PGM and PNG round trips at 8 and 16 bits, ASCII PGM, colour PNG of 1 to 4 channels, .npy
// images (C and Fortran order, float and unsigned samples), colour read as grey, and malformed files naming
// the byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "linv/errors.hpp"
#include "linv/io.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

Matrix<double> gradient(index h, index w) {
  Matrix<double> m(h, w);
  for (index c = 0; c < w; ++c)
    for (index r = 0; r < h; ++r) m(r, c) = static_cast<double>(r * w + c) / static_cast<double>(h * w - 1);
  return m;
}

TEST(Images, RoundTripsAtEightAndSixteenBits) {
  testing::TempDir dir;
  const Matrix<double> image = gradient(7, 5);
  std::vector<std::string> names = {"a.pgm"};
  if (io::have_png_support()) names.push_back("a.png");
  for (const std::string& name : names)
    for (int bits : {8, 16}) {
      const std::string path = dir.file(name);
      io::write_image(path, image.view(), bits);
      const Matrix<double> back = io::read_image(path);
      ASSERT_EQ(back.rows(), 7);
      ASSERT_EQ(back.cols(), 5);
      const double step = bits == 8 ? 1.0 / 255 : 1.0 / 65535;
      for (index k = 0; k < image.size(); ++k) EXPECT_NEAR(back.data()[k], image.data()[k], step / 2 + 1e-12) << name;
    }
}

TEST(Images, AsciiPgmAndMalformedFiles) {
  testing::TempDir dir;
  {
    std::ofstream(dir.file("ascii.pgm")) << "P2\n# a comment\n3 2\n4\n0 1 2\n3 4 4\n";
  }
  const Matrix<double> m = io::read_image(dir.file("ascii.pgm"));
  EXPECT_EQ(m.rows(), 2);
  EXPECT_EQ(m.cols(), 3);
  EXPECT_DOUBLE_EQ(m(1, 0), 0.75);
  {
    std::ofstream(dir.file("short.pgm"), std::ios::binary) << "P5\n4 4\n255\n" << std::string(10, 'x');
    std::ofstream(dir.file("bad.pgm")) << "P2\n2 2\n4\n0 1 9 2\n";
    std::ofstream(dir.file("text.png")) << "not a png";
  }
  try {
    (void)io::read_image(dir.file("short.pgm"));
    FAIL() << "a truncated file should be refused";
  } catch (const ParseError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "end early"));
  }
  try {
    (void)io::read_image(dir.file("bad.pgm"));
    FAIL() << "a value above the maximum should be refused";
  } catch (const ParseError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "exceeds the maximum 4"));
    EXPECT_EQ(e.line(), 4);
  }
  if (io::have_png_support()) {
    EXPECT_THROW((void)io::read_image(dir.file("text.png")), ParseError);
  }
  EXPECT_THROW((void)io::read_image(dir.file("missing.pgm")), InputError);
  EXPECT_THROW((void)io::read_image(dir.file("a.bmp")), InvalidArgument);  // a format linv does not read
}

// ---- colour ----

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A version 1.0 .npy file with the given header dict and data, laid out as np.save does; `data_offset`
// receives where the data starts.
std::string npy(const std::string& dict, const std::string& data, std::size_t* data_offset = nullptr) {
  std::string header = dict;
  header.append((10 + header.size() + 1 + 63) / 64 * 64 - (10 + header.size() + 1), ' ');
  header.push_back('\n');
  if (data_offset) *data_offset = 10 + header.size();
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xff) +
         static_cast<char>(header.size() >> 8) + header + data;
}

template <typename T>
std::string raw(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// height x (width * channels) samples in [0, 1], with a few outside it to exercise clipping.
io::Image random_image(index height, index width, int channels, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  io::Image image{Matrix<double>(height, width * channels), channels};
  for (index k = 0; k < image.pixels.size(); ++k) image.pixels.data()[k] = uniform(rng);
  image.pixels(0, 0) = -0.25;
  image.pixels(height - 1, width * channels - 1) = 1.5;
  return image;
}

TEST(ImageChannels, RoundTripThroughPngAtEightAndSixteenBits) {
  if (!io::have_png_support()) GTEST_SKIP() << "built without libpng";
  testing::TempDir dir;
  const std::uint64_t seed = testing::case_seed(1);
  LINV_TRACE_SEED(seed);
  for (int channels = 1; channels <= 4; ++channels)
    for (int bits : {8, 16}) {
      SCOPED_TRACE(::testing::Message() << channels << " channels, " << bits << " bits");
      const io::Image image = random_image(6, 9, channels, seed + static_cast<std::uint64_t>(channels));
      const std::string path = dir.file("c.png");
      io::write_image_channels(path, image, bits);
      const io::Image back = io::read_image_channels(path);
      ASSERT_EQ(back.channels, channels);
      ASSERT_EQ(back.height(), 6);
      ASSERT_EQ(back.width(), 9);
      const double step = bits == 8 ? 1.0 / 255 : 1.0 / 65535;
      for (index k = 0; k < image.pixels.size(); ++k)
        EXPECT_NEAR(back.pixels.data()[k], std::clamp(image.pixels.data()[k], 0.0, 1.0), step / 2 + 1e-12) << k;
    }
}

// A 2 x 2 palette PNG of 2 bits per index whose tRNS chunk makes entry 1 half transparent: palette indices
// 0 1 / 2 3 for red, green, blue, white.
constexpr char kPalettePng[] =
    "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x02\x00\x00\x00\x02"
    "\x02\x03\x00\x00\x00\x0f\xd8\xe5\xb7\x00\x00\x00\x0c\x50\x4c\x54\x45\xff\x00\x00\x00\xff\x00\x00"
    "\x00\xff\xff\xff\xff\xfb\x00\x60\xf6\x00\x00\x00\x02\x74\x52\x4e\x53\xff\x80\x08\x0f\xb3\x6a\x00"
    "\x00\x00\x0c\x49\x44\x41\x54\x78\xda\x63\x10\x60\xd8\x00\x00\x00\xe4\x00\xc1\x19\x55\x3b\xfb\x00"
    "\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82";

TEST(ImageChannels, ExpandsPalettesAndTransparency) {
  if (!io::have_png_support()) GTEST_SKIP() << "built without libpng";
  testing::TempDir dir;
  const std::string path = dir.file("palette.png");
  write_bytes(path, std::string(kPalettePng, sizeof kPalettePng - 1));
  const io::Image image = io::read_image_channels(path);
  ASSERT_EQ(image.channels, 4);
  ASSERT_EQ(image.height(), 2);
  ASSERT_EQ(image.width(), 2);
  EXPECT_TRUE(image.has_alpha());
  const double rgba[2][2][4] = {{{1, 0, 0, 1}, {0, 1, 0, 128.0 / 255}}, {{0, 0, 1, 1}, {1, 1, 1, 1}}};
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c)
      for (int k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(image.channel(k)(r, c), rgba[r][c][k]) << r << ", " << c << ", " << k;
  // As grey: BT.709 luma of the colours, alpha dropped.
  const Matrix<double> grey = io::read_image(path);
  EXPECT_NEAR(grey(0, 0), 0.2126, 1e-12);
  EXPECT_NEAR(grey(0, 1), 0.7152, 1e-12);
  EXPECT_NEAR(grey(1, 0), 0.0722, 1e-12);
  EXPECT_NEAR(grey(1, 1), 1.0, 1e-12);
}

TEST(ImageChannels, ColourIsReadAsGrey) {
  testing::TempDir dir;
  const std::uint64_t seed = testing::case_seed(2);
  LINV_TRACE_SEED(seed);
  std::vector<std::string> names = {"c.npy"};
  if (io::have_png_support()) names.push_back("c.png");
  for (const std::string& name : names)
    for (int channels = 2; channels <= 4; ++channels) {
      SCOPED_TRACE(::testing::Message() << name << ", " << channels << " channels");
      io::Image image = random_image(4, 5, channels, seed + static_cast<std::uint64_t>(channels));
      image.pixels(0, 0) = 0.25;  // the .npy keeps values outside [0, 1]; this test is about the weights
      image.pixels(3, 5 * channels - 1) = 0.75;
      const std::string path = dir.file(name);
      io::write_image_channels(path, image);
      const Matrix<double> grey = io::read_image(path);
      ASSERT_EQ(grey.rows(), 4);
      ASSERT_EQ(grey.cols(), 5);
      // 16-bit PNG samples are within half a step of the values, and the weights sum to 1.
      const double tolerance = name == "c.png" ? 0.5 / 65535 + 1e-12 : 1e-15;
      for (index c = 0; c < 5; ++c)
        for (index r = 0; r < 4; ++r) {
          const double expected = channels == 2 ? image.channel(0)(r, c)
                                                : 0.2126 * image.channel(0)(r, c) + 0.7152 * image.channel(1)(r, c) +
                                                      0.0722 * image.channel(2)(r, c);
          EXPECT_NEAR(grey(r, c), expected, tolerance) << r << ", " << c;
        }
    }
}

TEST(ImageChannels, RoundTripThroughNpyExactly) {
  testing::TempDir dir;
  const std::uint64_t seed = testing::case_seed(3);
  LINV_TRACE_SEED(seed);
  for (int channels = 1; channels <= 4; ++channels) {
    SCOPED_TRACE(::testing::Message() << channels << " channels");
    const io::Image image = random_image(3, 7, channels, seed + static_cast<std::uint64_t>(channels));
    const std::string path = dir.file("c.npy");
    io::write_image_channels(path, image, 8);  // bits do not apply to float64
    // height x width for one channel, height x width x channels otherwise, Fortran order
    const io::AnyStack stack = io::read_stack(path);
    const auto& s = std::get<io::MatrixStack<double>>(stack);
    EXPECT_EQ(s.count, channels == 1 ? 1 : 3);
    const io::Image back = io::read_image_channels(path);
    ASSERT_EQ(back.channels, channels);
    ASSERT_EQ(back.height(), 3);
    ASSERT_EQ(back.width(), 7);
    for (index k = 0; k < image.pixels.size(); ++k) EXPECT_EQ(back.pixels.data()[k], image.pixels.data()[k]) << k;
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1) << "temporary files left behind";
  // The grey functions read and write .npy too: a 2-D float64 array, values as they are.
  Matrix<double> grey = Matrix<double>::from_rows({{0.5, -1.0, 2.0}, {0.25, 1.0, 0.0}});
  io::write_image(dir.file("g.npy"), grey.view());
  const Matrix<double> matrix = io::convert<double>(io::read_matrix(dir.file("g.npy")), false);
  const Matrix<double> back = io::read_image(dir.file("g.npy"));
  ASSERT_EQ(back.rows(), 2);
  ASSERT_EQ(back.cols(), 3);
  for (index k = 0; k < grey.size(); ++k) {
    EXPECT_EQ(matrix.data()[k], grey.data()[k]);
    EXPECT_EQ(back.data()[k], grey.data()[k]);
  }
}

TEST(ImageChannels, ReadsNpyInCAndFortranOrder) {
  testing::TempDir dir;
  // Sample (i, j, k) of a 2 x 3 x 2 image is 100 i + 10 j + k: values far outside [0, 1], kept as they are.
  std::vector<double> c_order, f_order;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) c_order.push_back(100 * i + 10 * j + k);
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) f_order.push_back(100 * i + 10 * j + k);
  for (const auto& [name, fortran, data] : {std::tuple{"c.npy", "False", raw(c_order)}, {"f.npy", "True", raw(f_order)}}) {
    SCOPED_TRACE(name);
    const std::string path = dir.file(name);
    write_bytes(path, npy(std::string("{'descr': '<f8', 'fortran_order': ") + fortran + ", 'shape': (2, 3, 2), }", data));
    const io::Image image = io::read_image_channels(path);
    ASSERT_EQ(image.channels, 2);
    ASSERT_EQ(image.height(), 2);
    ASSERT_EQ(image.width(), 3);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 2; ++k) EXPECT_EQ(image.channel(k)(i, j), 100 * i + 10 * j + k);
  }
  // float32, 2-D, C order: one channel.
  const std::string path = dir.file("f4.npy");
  write_bytes(path, npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                        raw(std::vector<float>{0.5f, -0.25f, 1.25f, 0.125f})));
  const io::Image image = io::read_image_channels(path);
  ASSERT_EQ(image.channels, 1);
  EXPECT_EQ(image.pixels(0, 1), -0.25);
  EXPECT_EQ(image.pixels(1, 0), 1.25);
}

TEST(ImageChannels, ScalesUnsignedNpySamples) {
  testing::TempDir dir;
  const std::string u1 = dir.file("u1.npy"), u2 = dir.file("u2.npy");
  write_bytes(u1, npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }", std::string("\x00\x33\xff\x80", 4)));
  const io::Image a = io::read_image_channels(u1);
  ASSERT_EQ(a.channels, 1);
  EXPECT_DOUBLE_EQ(a.pixels(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(a.pixels(0, 1), 0.2);
  EXPECT_DOUBLE_EQ(a.pixels(1, 0), 1.0);
  EXPECT_DOUBLE_EQ(a.pixels(1, 1), 128.0 / 255);
  // 1 x 2 pixels of grey and alpha, C order: (0, 65535), (13107, 1000).
  write_bytes(u2, npy("{'descr': '<u2', 'fortran_order': False, 'shape': (1, 2, 2), }",
                      raw(std::vector<std::uint16_t>{0, 65535, 13107, 1000})));
  const io::Image b = io::read_image_channels(u2);
  ASSERT_EQ(b.channels, 2);
  ASSERT_EQ(b.width(), 2);
  EXPECT_DOUBLE_EQ(b.channel(0)(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(b.channel(1)(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(b.channel(0)(0, 1), 0.2);
  EXPECT_DOUBLE_EQ(b.channel(1)(0, 1), 1000.0 / 65535);
  const Matrix<double> grey = io::read_image(u2);  // alpha dropped
  EXPECT_DOUBLE_EQ(grey(0, 1), 0.2);
  // Read as a matrix, the same integers are values, not samples: unscaled, and said.
  (void)io::take_input_notes();
  const Matrix<double> values = std::get<Matrix<double>>(io::read_matrix(u1));
  EXPECT_EQ(values(0, 1), 0x33);
  EXPECT_EQ(values(1, 0), 255);
  const std::vector<std::string> notes = io::take_input_notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(testing::contains(notes[0], "uint8 values read as float64 (exactly)")) << notes[0];
}

// A header may announce any size: the pixels must be in the file before the image is allocated (PNG's
// compressed ones able to inflate to what the header announces). Refusals, never allocations of terabytes.
TEST(Images, HeadersAnnouncingMoreThanTheFileHoldsAreRefused) {
  testing::TempDir dir;
  // A grey 8-bit PNG header announcing 10^6 x 10^6 pixels, then an IDAT of 64 zero bytes deflated and IEND.
  const unsigned char png[] = {
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x0f,
      0x42, 0x40, 0x00, 0x0f, 0x42, 0x40, 0x08, 0x00, 0x00, 0x00, 0x00, 0x79, 0x06, 0x67, 0xa1, 0x00, 0x00, 0x00,
      0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0xa0, 0x0c, 0x00, 0x00, 0x00, 0x40, 0x00, 0x01, 0xb7,
      0x34, 0x7c, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
  struct Case {
    const char* name;
    std::string bytes;
    const char* fault;
  };
  const Case cases[] = {
      {"binary.pgm", std::string("P5\n100000 100000\n255\n\x00\x01", 23),
       "the header announces 100000x100000 pixels, 10000000000 bytes, but 2 follow it"},
      {"ascii.pgm", "P2\n100000 100000\n255\n0 1\n", "at least 19999999999 bytes, but 5 follow it"},
      {"header-only.pgm", "P5 2 2 255", "the pixels end early: the header announces 2x2 pixels, 4 bytes, but 0"},
      {"huge.png", std::string(reinterpret_cast<const char*>(png), sizeof png),
       "announces 1000000x1000000 pixels, 1000000000000 bytes of samples"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    if (std::string(c.name).ends_with(".png") && !io::have_png_support()) continue;
    const std::string path = dir.file(c.name);
    write_bytes(path, c.bytes);
    try {
      (void)io::read_image(path);
      ADD_FAILURE() << "should be refused";
    } catch (const ParseError& e) {
      EXPECT_TRUE(testing::contains(e.what(), c.fault)) << e.what();
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    }
  }
  // Rows without columns hold no pixel, however many rows there are: nothing to read, and no loop over them
  // (10^12 rows would take hours).
  write_bytes(dir.file("no-columns.pgm"), "P2 0 1000000000000 10\n");
  EXPECT_EQ(io::read_image(dir.file("no-columns.pgm")).cols(), 0);
  write_bytes(dir.file("no-columns.npy"),
              npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 0), }", ""));
  EXPECT_EQ(io::read_image(dir.file("no-columns.npy")).cols(), 0);
}

TEST(ImageChannels, RefusesWhatIsNotAnImage) {
  testing::TempDir dir;
  const io::Image rgb = random_image(2, 3, 3, 7);
  const std::string pgm = dir.file("rgb.pgm");
  try {
    io::write_image_channels(pgm, rgb);
    FAIL() << "PGM should refuse colour";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(testing::contains(e.what(), "3 channels"));
  }
  EXPECT_FALSE(std::filesystem::exists(pgm));
  EXPECT_THROW(io::write_image_channels(dir.file("rgb.npy"), rgb, 12), InvalidArgument);
  EXPECT_THROW(io::write_image_channels(dir.file("x.npy"), io::Image{Matrix<double>(2, 5), 5}), InvalidArgument);
  EXPECT_THROW(io::write_image_channels(dir.file("x.npy"), io::Image{Matrix<double>(2, 5), 2}), InvalidArgument);
  if (!io::have_png_support()) {
    EXPECT_THROW(io::write_image_channels(dir.file("rgb.png"), rgb), InputError);
    EXPECT_THROW((void)io::read_image_channels(dir.file("rgb.png")), InputError);
  }
  struct Case {
    const char* dict;
    std::string data;
    const char* fault;
  };
  const Case cases[] = {
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", raw(std::vector<double>(4)), "is not an image"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 5), }", raw(std::vector<double>(5)), "has 5 channels"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (1, 1), }", std::string(4, '\0'),
       "'<i4' is not supported: linv reads images of"},
      {"{'descr': '>u2', 'fortran_order': False, 'shape': (1, 1), }", std::string(2, '\0'), "big-endian"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dict);
    const std::string path = dir.file("bad.npy");
    write_bytes(path, npy(c.dict, c.data));
    try {
      (void)io::read_image_channels(path);
      ADD_FAILURE() << "should be refused";
    } catch (const ParseError& e) {
      EXPECT_TRUE(testing::contains(e.what(), c.fault));
      EXPECT_EQ(e.file(), path);
      EXPECT_GT(e.offset(), 0);
    }
  }
}

TEST(ImageChannels, TruncatedFilesNameTheByte) {
  testing::TempDir dir;
  {
    std::size_t data_offset = 0;
    const std::string path = dir.file("short.npy");
    write_bytes(path, npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4, 4, 3), }", std::string(40, '\x7f'),
                          &data_offset));
    try {
      (void)io::read_image_channels(path);
      FAIL() << "a truncated .npy should be refused";
    } catch (const ParseError& e) {
      EXPECT_TRUE(testing::contains(e.what(), "needs 48 bytes, but 40 follow the header"));
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.offset(), static_cast<std::int64_t>(data_offset));
    }
  }
  if (io::have_png_support()) {
    const std::string path = dir.file("short.png");
    io::write_image_channels(path, random_image(16, 16, 3, 11));  // noise does not compress: a long IDAT
    const auto size = static_cast<std::int64_t>(std::filesystem::file_size(path));
    std::filesystem::resize_file(path, static_cast<std::uintmax_t>(size / 2));
    try {
      (void)io::read_image_channels(path);
      FAIL() << "a truncated PNG should be refused";
    } catch (const ParseError& e) {
      EXPECT_TRUE(testing::contains(e.what(), "ends early"));
      EXPECT_EQ(e.file(), path);
      EXPECT_GT(e.offset(), 8);
      EXPECT_LE(e.offset(), size / 2);
    }
    EXPECT_THROW((void)io::read_image(path), ParseError);
  }
}

}  // namespace
}  // namespace linv
