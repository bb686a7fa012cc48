// Grey images: PGM and PNG round trips at 8 and 16 bits, ASCII PGM, and malformed files naming the byte.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

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
  EXPECT_THROW((void)io::read_image(dir.file("a.jpg")), InvalidArgument);
}

}  // namespace
}  // namespace linv
