// Labelled montages (include/linv/montage.hpp): tiles enlarged by whole factors into a grid, captions and
// column titles drawn with an embedded 5x8 bitmap font.
#include "linv/montage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

#include "linv/errors.hpp"

namespace linv::io {
namespace {

constexpr int kGlyphWidth = 5, kGlyphHeight = 8;
constexpr index kAdvance = 6;      // a glyph and one column of space
constexpr index kLineHeight = 11;  // one row above the glyph, two below, so descenders clear the tiles
constexpr char kBox = 0x7F;        // the code drawn for characters the font lacks

// Glyphs for ASCII 32..126, then the box, each as 8 rows from the top with bit 4 the leftmost column.
// Letters stand on row 6; row 7 holds descenders, and g, j, p, q, y raise their bowls a row to fit.
// The glyphs were drawn for linv, not copied from any existing font.
constexpr std::array<std::array<std::uint8_t, kGlyphHeight>, 96> kFont = {{
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},  // ' '
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04, 0x00},  // !
    {0x0A, 0x0A, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00},  // "
    {0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A, 0x00},  // #
    {0x04, 0x0F, 0x14, 0x0E, 0x05, 0x1E, 0x04, 0x00},  // $
    {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03, 0x00},  // %
    {0x0C, 0x12, 0x14, 0x08, 0x15, 0x12, 0x0D, 0x00},  // &
    {0x04, 0x04, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00},  // '
    {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02, 0x00},  // (
    {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08, 0x00},  // )
    {0x00, 0x04, 0x15, 0x0E, 0x15, 0x04, 0x00, 0x00},  // *
    {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00, 0x00},  // +
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08},  // ,
    {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00, 0x00},  // -
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C, 0x00},  // .
    {0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10, 0x00},  // /
    {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E, 0x00},  // 0
    {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E, 0x00},  // 1
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F, 0x00},  // 2
    {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E, 0x00},  // 3
    {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02, 0x00},  // 4
    {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E, 0x00},  // 5
    {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E, 0x00},  // 6
    {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08, 0x00},  // 7
    {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E, 0x00},  // 8
    {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C, 0x00},  // 9
    {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00, 0x00},  // :
    {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x04, 0x08, 0x00},  // ;
    {0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02, 0x00},  // <
    {0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00, 0x00},  // =
    {0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08, 0x00},  // >
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04, 0x00},  // ?
    {0x0E, 0x11, 0x01, 0x0D, 0x15, 0x15, 0x0E, 0x00},  // @
    {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11, 0x00},  // A
    {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E, 0x00},  // B
    {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E, 0x00},  // C
    {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C, 0x00},  // D
    {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F, 0x00},  // E
    {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10, 0x00},  // F
    {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F, 0x00},  // G
    {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11, 0x00},  // H
    {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E, 0x00},  // I
    {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C, 0x00},  // J
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11, 0x00},  // K
    {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F, 0x00},  // L
    {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11, 0x00},  // M
    {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11, 0x00},  // N
    {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E, 0x00},  // O
    {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10, 0x00},  // P
    {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D, 0x00},  // Q
    {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11, 0x00},  // R
    {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E, 0x00},  // S
    {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x00},  // T
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E, 0x00},  // U
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04, 0x00},  // V
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A, 0x00},  // W
    {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11, 0x00},  // X
    {0x11, 0x11, 0x0A, 0x04, 0x04, 0x04, 0x04, 0x00},  // Y
    {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F, 0x00},  // Z
    {0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E, 0x00},  // [
    {0x10, 0x10, 0x08, 0x04, 0x02, 0x01, 0x01, 0x00},  // backslash
    {0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E, 0x00},  // ]
    {0x04, 0x0A, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00},  // ^
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F},  // _
    {0x08, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},  // `
    {0x00, 0x00, 0x0E, 0x01, 0x0F, 0x11, 0x0F, 0x00},  // a
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1E, 0x00},  // b
    {0x00, 0x00, 0x0E, 0x10, 0x10, 0x11, 0x0E, 0x00},  // c
    {0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F, 0x00},  // d
    {0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E, 0x00},  // e
    {0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08, 0x00},  // f
    {0x00, 0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x0E},  // g
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11, 0x00},  // h
    {0x04, 0x00, 0x0C, 0x04, 0x04, 0x04, 0x0E, 0x00},  // i
    {0x02, 0x00, 0x06, 0x02, 0x02, 0x02, 0x12, 0x0C},  // j
    {0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12, 0x00},  // k
    {0x0C, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E, 0x00},  // l
    {0x00, 0x00, 0x1A, 0x15, 0x15, 0x11, 0x11, 0x00},  // m
    {0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11, 0x00},  // n
    {0x00, 0x00, 0x0E, 0x11, 0x11, 0x11, 0x0E, 0x00},  // o
    {0x00, 0x00, 0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10},  // p
    {0x00, 0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x01},  // q
    {0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10, 0x00},  // r
    {0x00, 0x00, 0x0F, 0x10, 0x0E, 0x01, 0x1E, 0x00},  // s
    {0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06, 0x00},  // t
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0D, 0x00},  // u
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x0A, 0x04, 0x00},  // v
    {0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0A, 0x00},  // w
    {0x00, 0x00, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x00},  // x
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x0F, 0x01, 0x0E},  // y
    {0x00, 0x00, 0x1F, 0x02, 0x04, 0x08, 0x1F, 0x00},  // z
    {0x02, 0x04, 0x04, 0x08, 0x04, 0x04, 0x02, 0x00},  // {
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x00},  // |
    {0x08, 0x04, 0x04, 0x02, 0x04, 0x04, 0x08, 0x00},  // }
    {0x00, 0x00, 0x08, 0x15, 0x02, 0x00, 0x00, 0x00},  // ~
    {0x1F, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1F, 0x00},  // box
}};

// `text` as font codes: printable ASCII and '\n' as they are, anything else kBox. A UTF-8 sequence is one
// character, so its continuation bytes add nothing to the box its lead byte drew.
std::string to_glyphs(const std::string& text) {
  std::string codes;
  for (const char ch : text) {
    const auto b = static_cast<unsigned char>(ch);
    if (b == '\n' || (b >= 32 && b < 127))
      codes += ch;
    else if ((b & 0xC0) != 0x80)
      codes += kBox;
  }
  return codes;
}

// Lines of at most `per_line` (>= 1) codes. A line breaks at its last space when it has one (the spaces at
// the break are dropped, runs of spaces inside a line are kept: captions use them to separate fields), and
// inside the word otherwise; '\n' always breaks, and an empty paragraph stays an empty line.
std::vector<std::string> wrap(const std::string& codes, std::size_t per_line) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = std::min(codes.find('\n', start), codes.size());
    std::string_view rest(codes.data() + start, end - start);
    do {
      if (rest.size() <= per_line) {
        lines.emplace_back(rest);
        break;
      }
      std::size_t cut = rest.rfind(' ', per_line);
      std::size_t line_end = cut;
      while (line_end != std::string_view::npos && line_end > 0 && rest[line_end - 1] == ' ') --line_end;
      if (cut == std::string_view::npos || line_end == 0) cut = line_end = per_line;
      lines.emplace_back(rest.substr(0, line_end));
      rest.remove_prefix(cut);
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    } while (!rest.empty());
    if (end == codes.size()) return lines;
    start = end + 1;
  }
}

// How many characters fit in `width` pixels: the last needs no space after it. At least one, so that text
// always shows; draw_line clips a character wider than its space.
std::size_t fitting(index width, index scale) {
  return static_cast<std::size_t>(std::max<index>(1, (width + scale) / (kAdvance * scale)));
}

index line_width(std::string_view line, index scale) {
  return line.empty() ? 0 : static_cast<index>(line.size()) * kAdvance * scale - scale;
}

// Clipped to [0, 1]; written so that NaN becomes 0 rather than passing through.
double unit(double v) { return v > 0 ? (v < 1 ? v : 1) : 0; }

// One line of codes in a line box whose top-left corner is (top, left), nothing drawn at column `right` or
// beyond it.
void draw_line(Image& out, std::string_view line, index top, index left, index right, index scale, double ink) {
  for (std::size_t n = 0; n < line.size(); ++n) {
    const auto& glyph = kFont[static_cast<unsigned char>(line[n]) - 32];
    const index x0 = left + static_cast<index>(n) * kAdvance * scale;
    for (int gy = 0; gy < kGlyphHeight; ++gy)
      for (int gx = 0; gx < kGlyphWidth; ++gx) {
        if (((glyph[static_cast<std::size_t>(gy)] >> (kGlyphWidth - 1 - gx)) & 1) == 0) continue;
        const index y = top + (1 + gy) * scale, x = x0 + gx * scale;
        for (int c = 0; c < out.channels; ++c) {
          const MatrixView<double> dst = out.channel(c);
          for (index dx = 0; dx < scale && x + dx < right; ++dx)
            for (index dy = 0; dy < scale; ++dy) dst(y + dy, x + dx) = ink;
        }
      }
  }
}

// `tile` enlarged `factor` times with its top-left corner at (top, left). Grey tiles (with or without alpha)
// fill every output channel, colour ones their own; alpha is never read.
void paste(const Image& tile, index factor, Image& out, index top, index left) {
  const index h = tile.height() * factor, w = tile.width() * factor;
  for (int c = 0; c < out.channels; ++c) {
    const ConstMatrixView<double> src = tile.channel(tile.channels >= 3 ? c : 0);
    const MatrixView<double> dst = out.channel(c);
    for (index j = 0; j < w; ++j)
      for (index i = 0; i < h; ++i) dst(top + i, left + j) = unit(src(i / factor, j / factor));
  }
}

void check(const std::vector<MontageRow>& rows, const MontageOptions& options) {
  if (rows.empty()) throw InvalidArgument("montage: no rows to lay out");
  if (options.min_tile < 0)
    throw InvalidArgument(fmt::format("montage: min_tile is {}; it must be 0 or more", options.min_tile));
  if (options.gap < 0) throw InvalidArgument(fmt::format("montage: gap is {}; it must be 0 or more", options.gap));
  if (options.text_scale < 1)
    throw InvalidArgument(fmt::format("montage: text_scale is {}; it must be 1 or more", options.text_scale));
  std::size_t columns = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].tiles.empty()) throw InvalidArgument(fmt::format("montage: rows[{}] has no tiles", r));
    columns = std::max(columns, rows[r].tiles.size());
    for (std::size_t k = 0; k < rows[r].tiles.size(); ++k) {
      const Image& tile = rows[r].tiles[k];
      const std::string name = fmt::format("montage: rows[{}].tiles[{}]", r, k);
      if (tile.channels < 1 || tile.channels > 4)
        throw InvalidArgument(fmt::format(
            "{} has {} channels; an image has 1 (grey), 2 (grey and alpha), 3 (RGB) or 4 (RGBA)", name, tile.channels));
      if (tile.pixels.cols() % tile.channels != 0)
        throw InvalidArgument(fmt::format("{} has {} columns, which do not divide into its {} channels", name,
                                          tile.pixels.cols(), tile.channels));
      if (tile.height() == 0 || tile.width() == 0)
        throw InvalidArgument(fmt::format("{} is empty ({}x{} pixels)", name, tile.height(), tile.width()));
      require_host(tile.pixels.device(), name.c_str());
    }
  }
  if (options.column_titles.size() > columns)
    throw InvalidArgument(
        fmt::format("montage: {} column titles for {} columns", options.column_titles.size(), columns));
}

}  // namespace

Image montage(const std::vector<MontageRow>& rows, const MontageOptions& options) {
  check(rows, options);
  const index gap = options.gap, scale = options.text_scale, line = kLineHeight * scale;

  // The grid: every tile's factor, each column's width and each row's height.
  std::size_t columns = 0;
  bool colour = false;
  std::vector<std::vector<index>> factors(rows.size());
  std::vector<index> row_height(rows.size(), 0);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    columns = std::max(columns, rows[r].tiles.size());
    for (const Image& tile : rows[r].tiles) {
      const index longer = std::max(tile.height(), tile.width());
      factors[r].push_back(longer >= options.min_tile ? 1 : (options.min_tile + longer - 1) / longer);
      row_height[r] = std::max(row_height[r], tile.height() * factors[r].back());
      colour = colour || tile.channels >= 3;
    }
  }
  std::vector<index> column_width(columns, 0), column_left(columns, gap);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t k = 0; k < rows[r].tiles.size(); ++k)
      column_width[k] = std::max(column_width[k], rows[r].tiles[k].width() * factors[r][k]);
  for (std::size_t k = 1; k < columns; ++k) column_left[k] = column_left[k - 1] + column_width[k - 1] + gap;
  const index width = column_left.back() + column_width.back() + gap;

  // The text, wrapped to where it goes, which fixes the bands' heights.
  std::vector<std::vector<std::string>> titles, captions;
  index header = 0;
  for (std::size_t k = 0; k < options.column_titles.size(); ++k) {
    titles.push_back(wrap(to_glyphs(options.column_titles[k]), fitting(column_width[k], scale)));
    header = std::max(header, static_cast<index>(titles.back().size()) * line + gap);
  }
  index height = gap + header;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    captions.push_back(rows[r].caption.empty() ? std::vector<std::string>{}
                                               : wrap(to_glyphs(rows[r].caption), fitting(width - 2 * gap, scale)));
    height += static_cast<index>(captions.back().size()) * line + row_height[r] + gap;
  }

  Image out{Matrix<double>::uninitialized(height, width * (colour ? 3 : 1)), colour ? 3 : 1};
  std::fill(out.pixels.data(), out.pixels.data() + out.pixels.size(), unit(options.background));
  const double ink = unit(options.ink);

  index y = gap;
  for (std::size_t k = 0; k < titles.size(); ++k)
    for (std::size_t n = 0; n < titles[k].size(); ++n) {
      const index left = column_left[k] + std::max<index>(0, (column_width[k] - line_width(titles[k][n], scale)) / 2);
      const index top = y + static_cast<index>(n) * line;
      draw_line(out, titles[k][n], top, left, column_left[k] + column_width[k], scale, ink);
    }
  y += header;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (const std::string& text : captions[r]) {
      draw_line(out, text, y, gap, width - gap, scale, ink);
      y += line;
    }
    for (std::size_t k = 0; k < rows[r].tiles.size(); ++k) {
      const Image& tile = rows[r].tiles[k];
      const index f = factors[r][k];
      paste(tile, f, out, y + (row_height[r] - tile.height() * f) / 2,
            column_left[k] + (column_width[k] - tile.width() * f) / 2);
    }
    y += row_height[r] + gap;
  }
  return out;
}

}  // namespace linv::io
