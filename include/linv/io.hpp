// Reading and writing matrices. The format follows the file name:
//   .npy            NumPy (float32/float64, C or Fortran order, 2-D; 3-D as a stack of matrices)
//   .mtx            Matrix Market (array or coordinate; real/integer/pattern; general/symmetric/skew)
//   .mat[:name]     MATLAB (through matio, when linv was built with it); `name` picks the variable
// Malformed files raise ParseError naming the file and the byte offset or line of the fault; missing or
// unreadable files raise InputError. Every writer writes a temporary file beside the target and
// renames it into place, so an interrupted or failed write never leaves a partial output.
#pragma once

#include <string>
#include <variant>
#include <utility>
#include <vector>

#include "linv/matrix.hpp"

namespace linv::io {

enum class DType { Float32, Float64 };
const char* to_string(DType t);

// A matrix as stored in the file: its element type is the file's.
using AnyMatrix = std::variant<Matrix<float>, Matrix<double>>;

// `count` matrices of rows x cols, each column-major, stored one after another.
template <Real T>
struct MatrixStack {
  index count = 0, rows = 0, cols = 0;
  std::vector<T> data;
  MatrixView<T> operator[](index k) { return {data.data() + k * rows * cols, rows, cols, rows > 0 ? rows : 1}; }
  ConstMatrixView<T> operator[](index k) const {
    return {data.data() + k * rows * cols, rows, cols, rows > 0 ? rows : 1};
  }
};
using AnyStack = std::variant<MatrixStack<float>, MatrixStack<double>>;

// A 2-D matrix from `spec` (a path, or path.mat:variable).
AnyMatrix read_matrix(const std::string& spec);
// A 3-D array (B x rows x cols in NumPy's C order) as B matrices; a 2-D file is a stack of one.
AnyStack read_stack(const std::string& spec);

template <Real T>
void write_matrix(const std::string& spec, ConstMatrixView<T> A);
template <Real T>
void write_stack(const std::string& spec, const MatrixStack<T>& stack);

// NumPy's .npz: each named matrix as <name>.npy in an uncompressed zip archive (what numpy.savez writes),
// written atomically. Members over 4 GiB (which need ZIP64) are refused.
template <Real T>
void write_npz(const std::string& path, const std::vector<std::pair<std::string, ConstMatrixView<T>>>& arrays);

// Writes `text` to `path` atomically (temporary file + rename).
void write_text(const std::string& path, const std::string& text);

// Whether this build can write .npz files (it needs zlib).
bool have_npz_support();

// Whether this build can read and write `.mat` files.
bool have_mat_support();

// Grey images from .png (8 or 16 bits; colour is converted to grey) or .pgm (P2/P5, 8 or 16 bits), values
// scaled to [0, 1]; height x width. Malformed files raise ParseError naming the byte; a build without
// libpng refuses .png with InputError saying so.
Matrix<double> read_image(const std::string& path);
// Writes values clipped to [0, 1] with `bits` (8 or 16) per pixel, atomically.
void write_image(const std::string& path, ConstMatrixView<double> image, int bits = 16);
bool have_png_support();

// Converts an AnyMatrix to element type T. Widening is exact; narrowing float64 to float32 happens only
// with allow_narrowing (the caller asked for single precision), otherwise InvalidArgument.
template <Real T>
Matrix<T> convert(AnyMatrix&& m, bool allow_narrowing);

}  // namespace linv::io
