// Labelled montages: the layout's size, whole-factor nearest-neighbour enlargement, text only in its bands,
// colour in and out, wrapping, characters the font lacks, and refused input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "linv/errors.hpp"
#include "linv/montage.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

// Text geometry the header promises: a line of text is 11 * scale pixels tall, a character 6 * scale wide.
constexpr index kLine = 11 * 2;

io::Image grey(index h, index w, double value) {
  io::Image image{Matrix<double>(h, w), 1};
  for (index k = 0; k < image.pixels.size(); ++k) image.pixels.data()[k] = value;
  return image;
}

// Each channel c holds values[c] everywhere.
io::Image flat(index h, index w, const std::vector<double>& values) {
  const int channels = static_cast<int>(values.size());
  io::Image image{Matrix<double>(h, w * channels), channels};
  for (int c = 0; c < channels; ++c)
    for (index j = 0; j < w; ++j)
      for (index i = 0; i < h; ++i) image.channel(c)(i, j) = values[static_cast<std::size_t>(c)];
  return image;
}

// Whether every pixel of the rectangle, in every channel, is `value`.
::testing::AssertionResult all_equal(const io::Image& image, index top, index left, index h, index w, double value) {
  for (int c = 0; c < image.channels; ++c)
    for (index j = left; j < left + w; ++j)
      for (index i = top; i < top + h; ++i)
        if (image.channel(c)(i, j) != value)
          return ::testing::AssertionFailure() << "channel " << c << " pixel (" << i << ", " << j << ") is "
                                               << image.channel(c)(i, j) << ", not " << value;
  return ::testing::AssertionSuccess();
}

index dark_pixels(const io::Image& image, index top, index left, index h, index w) {
  index n = 0;
  for (index j = left; j < left + w; ++j)
    for (index i = top; i < top + h; ++i) n += image.channel(0)(i, j) < 0.5 ? 1 : 0;
  return n;
}

TEST(Montage, SizeFollowsTilesGapsAndText) {
  // Factors: 64 -> 3 (192x192), 32x48 -> 4 (128x192), 20x10 -> 10 (200x100), 300x200 stays (never reduced).
  std::vector<io::MontageRow> rows(2);
  rows[0].tiles.push_back(grey(64, 64, 0.5));
  rows[0].tiles.push_back(grey(64, 64, 0.5));
  rows[0].tiles.push_back(grey(300, 200, 0.5));
  rows[1].tiles.push_back(grey(32, 48, 0.5));
  rows[1].tiles.push_back(grey(20, 10, 0.5));
  io::Image plain = io::montage(rows);
  EXPECT_EQ(plain.channels, 1);
  EXPECT_EQ(plain.width(), 8 + 192 + 8 + 192 + 8 + 200 + 8);
  EXPECT_EQ(plain.height(), 8 + 300 + 8 + 200 + 8);

  rows[1].caption = "one line";
  const io::Image captioned = io::montage(rows, {.column_titles = {"truth", "degraded"}, .gap = 4});
  EXPECT_EQ(captioned.width(), 4 + 192 + 4 + 192 + 4 + 200 + 4);
  EXPECT_EQ(captioned.height(), 4 + (kLine + 4) + 300 + 4 + kLine + 200 + 4);

  const io::Image small = io::montage(rows, {.min_tile = 0, .gap = 0, .text_scale = 1});
  EXPECT_EQ(small.width(), 64 + 64 + 200);
  EXPECT_EQ(small.height(), 300 + 11 + 32);
}

TEST(Montage, EnlargesByWholeFactorsIntoSolidBlocks) {
  io::Image tile{Matrix<double>::from_rows({{0.1, 0.2}, {0.3, 0.4}, {0.5, 0.6}}), 1};
  for (const index min_tile : {6, 7, 9}) {
    const index f = (min_tile + 2) / 3;  // the smallest whole factor bringing 3 rows to min_tile
    std::vector<io::MontageRow> rows(1);
    rows[0].tiles.push_back(io::Image{tile.pixels.clone(), 1});
    const io::Image out = io::montage(rows, {.min_tile = min_tile, .gap = 2});
    ASSERT_EQ(out.height(), 3 * f + 4) << min_tile;
    ASSERT_EQ(out.width(), 2 * f + 4) << min_tile;
    for (index i = 0; i < 3; ++i)
      for (index j = 0; j < 2; ++j) EXPECT_TRUE(all_equal(out, 2 + i * f, 2 + j * f, f, f, tile.pixels(i, j)));
    EXPECT_TRUE(all_equal(out, 0, 0, 2, out.width(), 1.0));  // the edge is background
  }
}

TEST(Montage, SmallerTilesAreCentredInTheirCell) {
  std::vector<io::MontageRow> rows(1);
  rows[0].tiles.push_back(grey(10, 4, 0.25));
  rows[0].tiles.push_back(grey(6, 6, 0.75));
  const io::Image out = io::montage(rows, {.min_tile = 0, .gap = 1});
  ASSERT_EQ(out.height(), 12);
  EXPECT_TRUE(all_equal(out, 1, 1, 10, 4, 0.25));
  EXPECT_TRUE(all_equal(out, 3, 6, 6, 6, 0.75));
  EXPECT_TRUE(all_equal(out, 1, 6, 2, 6, 1.0));
  EXPECT_TRUE(all_equal(out, 9, 6, 2, 6, 1.0));
}

TEST(Montage, TextStaysInItsBands) {
  std::vector<io::MontageRow> rows(2);
  rows[0].caption = "blur + gaussian noise   PSNR 24.1 -> 31.7 dB";
  rows[1].caption = "motion blur, |{gjpqy}|";
  for (io::MontageRow& row : rows)
    for (int k = 0; k < 3; ++k) row.tiles.push_back(grey(64, 64, 0.7));
  const io::Image out = io::montage(rows, {.column_titles = {"truth", "degraded", "recovered"}});
  const index gap = 8, tile = 192;
  ASSERT_EQ(out.width(), 4 * gap + 3 * tile);
  ASSERT_EQ(out.height(), gap + (kLine + gap) + 2 * (kLine + tile) + gap + gap);

  const index header_top = gap, row0_caption = gap + kLine + gap, row0_tiles = row0_caption + kLine;
  const index row1_caption = row0_tiles + tile + gap, row1_tiles = row1_caption + kLine;
  for (int k = 0; k < 3; ++k) {  // each title is drawn over its own column
    EXPECT_GT(dark_pixels(out, header_top, gap + k * (tile + gap), kLine, tile), 0) << "title " << k;
    EXPECT_TRUE(all_equal(out, row0_tiles, gap + k * (tile + gap), tile, tile, 0.7)) << "tile 0," << k;
    EXPECT_TRUE(all_equal(out, row1_tiles, gap + k * (tile + gap), tile, tile, 0.7)) << "tile 1," << k;
  }
  EXPECT_GT(dark_pixels(out, row0_caption, gap, kLine, out.width() - 2 * gap), 0);
  EXPECT_GT(dark_pixels(out, row1_caption, gap, kLine, out.width() - 2 * gap), 0);
  // Every dark pixel lies in a text band, inside the edges.
  const index dark = dark_pixels(out, 0, 0, out.height(), out.width());
  EXPECT_EQ(dark, dark_pixels(out, header_top, gap, kLine, out.width() - 2 * gap) +
                      dark_pixels(out, row0_caption, gap, kLine, out.width() - 2 * gap) +
                      dark_pixels(out, row1_caption, gap, kLine, out.width() - 2 * gap));
  EXPECT_TRUE(all_equal(out, 0, 0, gap, out.width(), 1.0));
  EXPECT_TRUE(all_equal(out, out.height() - gap, 0, gap, out.width(), 1.0));
}

TEST(Montage, LongCaptionsWrapAtSpaces) {
  // A 192-pixel row holds 16 characters at scale 2: (192 + 2) / 12.
  std::vector<io::MontageRow> rows(1);
  rows[0].tiles.push_back(grey(64, 64, 0.7));
  rows[0].caption = "aaaa bbbb cccc dddd eeee";
  EXPECT_EQ(io::montage(rows).height(), 8 + 2 * kLine + 192 + 8);
  rows[0].caption = "aaaa bbbb cccc d";  // exactly 16 fit on one line
  EXPECT_EQ(io::montage(rows).height(), 8 + kLine + 192 + 8);
  rows[0].caption = std::string(40, 'x');  // one word is broken: 16 + 16 + 8
  EXPECT_EQ(io::montage(rows).height(), 8 + 3 * kLine + 192 + 8);
  rows[0].caption = "first\n\nthird";
  EXPECT_EQ(io::montage(rows).height(), 8 + 3 * kLine + 192 + 8);
}

TEST(Montage, CharactersOutsideTheFontAreOneBoxEach) {
  std::vector<io::MontageRow> rows(1);
  rows[0].tiles.push_back(grey(8, 8, 0.7));
  auto draw = [&](const std::string& caption) {
    rows[0].caption = caption;
    return io::montage(rows);
  };
  const io::Image utf8 = draw("\xCE\xBB = 0.5");  // lambda, two bytes in UTF-8
  const io::Image control = draw("\x01 = 0.5");
  const io::Image question = draw("? = 0.5");
  ASSERT_EQ(utf8.height(), control.height());
  ASSERT_EQ(utf8.width(), control.width());
  index differ_control = 0, differ_question = 0;
  for (index k = 0; k < utf8.pixels.size(); ++k) {
    differ_control += utf8.pixels.data()[k] != control.pixels.data()[k] ? 1 : 0;
    differ_question += utf8.pixels.data()[k] != question.pixels.data()[k] ? 1 : 0;
  }
  EXPECT_EQ(differ_control, 0);
  EXPECT_GT(differ_question, 0);
}

TEST(Montage, ColourInGivesRgbOutAndAlphaIsDropped) {
  std::vector<io::MontageRow> rows(1);
  rows[0].tiles.push_back(flat(4, 4, {0.2, 0.9}));  // grey and alpha
  rows[0].tiles.push_back(grey(4, 4, 0.6));
  const io::Image grey_out = io::montage(rows, {.min_tile = 0, .gap = 1});
  EXPECT_EQ(grey_out.channels, 1);
  EXPECT_EQ(grey_out.pixels.cols(), 11);
  EXPECT_TRUE(all_equal(grey_out, 1, 1, 4, 4, 0.2));

  rows[0].tiles.push_back(flat(4, 4, {0.1, 0.5, 0.8, 0.3}));  // RGBA
  const io::Image rgb = io::montage(rows, {.min_tile = 0, .gap = 1});
  ASSERT_EQ(rgb.channels, 3);
  ASSERT_EQ(rgb.width(), 16);
  EXPECT_EQ(rgb.pixels.cols(), 48);
  EXPECT_TRUE(all_equal(rgb, 1, 1, 4, 4, 0.2));  // grey tiles repeated in every channel
  EXPECT_TRUE(all_equal(rgb, 1, 6, 4, 4, 0.6));
  const double expected[3] = {0.1, 0.5, 0.8};
  for (int c = 0; c < 3; ++c)
    for (index j = 11; j < 15; ++j)
      for (index i = 1; i < 5; ++i) EXPECT_EQ(rgb.channel(c)(i, j), expected[c]) << c;
}

TEST(Montage, ValuesAreClippedToTheUnitInterval) {
  io::Image tile{Matrix<double>::from_rows({{-0.5, 1.5, std::nan("")}}), 1};
  std::vector<io::MontageRow> rows(1);
  rows[0].tiles.push_back(std::move(tile));
  const io::Image out = io::montage(rows, {.min_tile = 0, .gap = 0});
  EXPECT_EQ(out.pixels(0, 0), 0.0);
  EXPECT_EQ(out.pixels(0, 1), 1.0);
  EXPECT_EQ(out.pixels(0, 2), 0.0);
}

TEST(Montage, RefusesBadInput) {
  auto refuses = [](const std::vector<io::MontageRow>& rows, const io::MontageOptions& options,
                    const std::string& says) {
    try {
      (void)io::montage(rows, options);
      ADD_FAILURE() << "expected InvalidArgument saying '" << says << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_TRUE(testing::contains(e.what(), says));
    }
  };
  refuses({}, {}, "no rows");
  std::vector<io::MontageRow> rows(2);
  rows[0].tiles.push_back(grey(4, 4, 0.5));
  refuses(rows, {}, "rows[1] has no tiles");
  rows[1].tiles.push_back(grey(4, 4, 0.5));
  rows[1].tiles.push_back(io::Image{});
  refuses(rows, {}, "rows[1].tiles[1] is empty (0x0 pixels)");
  rows[1].tiles[1] = io::Image{Matrix<double>(4, 4), 0};
  refuses(rows, {}, "rows[1].tiles[1] has 0 channels");
  rows[1].tiles[1] = io::Image{Matrix<double>(4, 4), 5};
  refuses(rows, {}, "has 5 channels");
  rows[1].tiles[1] = io::Image{Matrix<double>(4, 7), 3};
  refuses(rows, {}, "7 columns, which do not divide into its 3 channels");
  rows[1].tiles[1] = grey(4, 4, 0.5);
  refuses(rows, {.column_titles = {"a", "b", "c"}}, "3 column titles for 2 columns");
  refuses(rows, {.min_tile = -1}, "min_tile is -1");
  refuses(rows, {.gap = -2}, "gap is -2");
  refuses(rows, {.text_scale = 0}, "text_scale is 0");
  EXPECT_NO_THROW((void)io::montage(rows, {.column_titles = {"a", "b"}}));
}

}  // namespace
}  // namespace linv
