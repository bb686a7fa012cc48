// Labelled montages: images laid out in captioned rows under optional column titles, for a person to read
// (the demo's truth | degraded | recovered comparisons). Text is drawn with a small built-in bitmap font, so
// a montage needs no font library and looks the same on every machine.
#pragma once

#include <string>
#include <vector>

#include "linv/io.hpp"

namespace linv::io {

// One row of a montage: a caption drawn across the montage above the row, then the row's tiles left to right.
// Tiles may be grey, grey and alpha, RGB or RGBA, of any sizes; they are scaled as MontageOptions says.
struct MontageRow {
  std::string caption;  // e.g. "blur + gaussian noise   PSNR 24.1 -> 31.7 dB"; empty: no caption band
  std::vector<Image> tiles;
};

struct MontageOptions {
  // Each tile is enlarged by the smallest whole factor that brings its longer side to at least min_tile
  // pixels, nearest neighbour (every pixel a solid block: no smoothing to hide what a method did). Tiles are
  // never reduced; 0 keeps every tile at its own size.
  index min_tile = 192;
  // Titles centred over the columns in a header band at the top; at most one per column (the longest row's
  // tile count), fewer leave the remaining columns untitled; empty: no header band.
  std::vector<std::string> column_titles{};  // {}: designated initializers may leave it out without a warning
  // Pixels between columns, between rows, between the header and the first row, and around the edge.
  index gap = 8;
  // Each font pixel becomes text_scale x text_scale pixels: a character is 6 * text_scale pixels wide and a
  // line of text 11 * text_scale tall (2 reads comfortably beside 192-pixel tiles).
  int text_scale = 2;
  double background = 1.0;  // grey level of the gaps and bands
  double ink = 0.0;         // grey level of the text
};

// The montage: RGB when any tile has colour (grey tiles are repeated in the three channels), grey otherwise;
// alpha is dropped and values are clipped to [0, 1] (NaN shows as 0).
//
// Layout, top to bottom: gap; the header band (if column_titles is not empty: its tallest title, then gap);
// each row as its caption band (caption lines x the line height) and its tiles, rows separated by gap;
// gap. A column is as wide as its widest scaled tile, a row as tall as its tallest; a tile smaller than
// its cell is centred in it. The width is the columns and the gaps between and around them.
//
// Text wraps, never widens the montage: a caption at the spaces to the montage's width less its edges,
// a title to its column's width; a word longer than a line is broken. '\n' starts a new line. Printable
// ASCII is drawn as it is; any other character (a UTF-8 sequence counts as one) is drawn as a box.
//
// Throws InvalidArgument for no rows, a row without tiles, a tile with no pixels, with a channel count
// outside 1..4 or with columns that do not divide into its channels, a tile not in host memory, more
// column titles than columns, a negative min_tile or gap, or a text_scale below 1.
Image montage(const std::vector<MontageRow>& rows, const MontageOptions& options = {});

}  // namespace linv::io
