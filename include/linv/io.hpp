// Reading and writing matrices. The format follows the file name:
//   .npy            NumPy (float32/float64, C or Fortran order, 2-D; 3-D as a stack of matrices; complex64 and
//                   complex128 matrices through read_dense)
//   .npz[:name]     NumPy archives (numpy.savez, savez_compressed): the array `name`, or the only one;
//                   written with one array (named `name`, else arr_0); needs zlib
//   .mtx            Matrix Market (array or coordinate; real/integer/pattern; general/symmetric/skew; complex
//                   fields, hermitian too, through read_dense)
//   .mat[:name]     MATLAB (through matio, when linv was built with it); `name` picks the variable
//   .nii, .nii.gz   NIfTI-1/2 fMRI images (through nifti_clib's nifti2_io, when linv was built with it), read
//                   as a time points x voxels matrix by read_fmri and written back by write_volumes below
// Malformed files raise ParseError naming the file and the byte offset or line of the fault; missing or
// unreadable files raise InputError. Every writer writes a temporary file beside the target and
// renames it into place, so an interrupted or failed write never leaves a partial output.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
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
// The same, complex matrices included: what the dense commands (inv, solve, lstsq) read.
using AnyDense = std::variant<Matrix<float>, Matrix<double>, Matrix<std::complex<float>>, Matrix<std::complex<double>>>;

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

// A 2-D matrix from `spec` (a path, or path.mat:variable). A complex array is a ParseError: read it with
// read_dense.
AnyMatrix read_matrix(const std::string& spec);
// A 2-D matrix as read_matrix reads it, or a complex one: complex64 ('<c8') and complex128 ('<c16') arrays of
// .npy and .npz files, Matrix Market complex fields as complex128, and complex .mat variables (single as
// complex64, double and integer classes as complex128). Every format writes complex matrices too.
AnyDense read_dense(const std::string& spec);
// A 3-D array (B x rows x cols in NumPy's C order) as B matrices; a 2-D file is a stack of one.
AnyStack read_stack(const std::string& spec);

// A sparse matrix from `spec`, in compressed rows: a Matrix Market coordinate file is read straight into them,
// never as a dense matrix (parsed by fast_matrix_market on cpu_threads() threads; entries at one place
// summed, the other half of a symmetric or skew-symmetric file added); any other matrix file is read as
// read_matrix reads it and its nonzeros kept, in the file's element type (float64 for Matrix Market). Errors
// as read_matrix; a sparse matrix larger than this machine's memory is a ParseError saying how much it needs.
using AnySparse = std::variant<SparseMatrix<float>, SparseMatrix<double>>;
AnySparse read_sparse(const std::string& spec);

// Matrices first .. first + stack.count - 1 of a stack of `total`.
struct StackPart {
  AnyStack stack;
  index first = 0, total = 0;
};
// Part `part` of `parts` of the stack in `spec` (contiguous parts whose sizes differ by at most one, part p
// from total * p / parts): what one process of a distributed job reads. A C-order float .npy file (what
// np.save writes) is read from its part's bytes only; other files are read whole and the rest dropped.
StackPart read_stack_part(const std::string& spec, int part, int parts);

// Columns first .. first + matrix's columns - 1 of a matrix of `total` columns.
struct ColumnPart {
  AnyMatrix matrix;
  index first = 0, total = 0;
};
// Part `part` of `parts` of the columns of the matrix in `spec` (contiguous, sizes differing by at most one,
// part p from total * p / parts): one process's voxels of a distributed job. A float .npy file in a regular
// file is read from its part's bytes only (one range in Fortran order, one per row in C order); other files
// are read whole and the rest dropped.
ColumnPart read_matrix_columns(const std::string& spec, int part, int parts);

// Complex matrices are written to .npy and .npz only (InvalidArgument elsewhere).
template <Scalar T>
void write_matrix(const std::string& spec, ConstMatrixView<T> A);
template <Real T>
void write_stack(const std::string& spec, const MatrixStack<T>& stack);

// S as a sparse matrix: a Matrix Market coordinate file for .mtx whatever its density (scipy.io.mmread reads
// it as a sparse matrix, MATLAB's mmread as sparse()); dense in the formats without sparse matrices.
template <Real T>
void write_sparse(const std::string& spec, const SparseMatrix<T>& S);

// Whether the array in `spec` is one-dimensional as stored (a 1-D .npy file or .npz member: NumPy's
// vector), which read_matrix gives as one column, so that a result can be written back the same way.
// Other formats hold matrices only. Errors as read_matrix.
bool is_vector(const std::string& spec);
// A one-column matrix written as a vector: one-dimensional in .npy and .npz (what np.save writes for a
// vector), an n x 1 matrix in the formats without vectors. InvalidArgument for more than one column.
template <Scalar T>
void write_vector(const std::string& spec, ConstMatrixView<T> v);

// NumPy's .npz: each named matrix as <name>.npy in an uncompressed zip archive (what numpy.savez writes),
// written atomically. Members over 4 GiB (which need ZIP64) are refused.
template <Real T>
void write_npz(const std::string& path, const std::vector<std::pair<std::string, ConstMatrixView<T>>>& arrays);

// Writes `text` to `path` atomically (temporary file + rename).
void write_text(const std::string& path, const std::string& text);

// What a command will write where, checked before it computes anything (the command-line tool does it as
// it reads its options), so that an output linv would refuse afterwards is refused at once: a matrix
// (.npy, .npz[:name], .mtx, .mat[:name]), an image (.png, .pgm, .npy), a NIfTI image, a text file (a report),
// or a directory (created if missing). A format linv does not write there, or this build cannot write,
// raises InvalidArgument; a directory that does not exist or cannot be written into raises InputError
// naming it.
enum class OutputKind { matrix, image, nifti, text, directory };
void check_output(const std::string& spec, OutputKind kind);
// A spec of "-" is standard input (a .npy stream, read whole once, so that it can be read again) or standard
// output (a matrix or image as .npy, or a text file such as a report): check_output accepts it for those.
// A "-" output is written to a temporary file like any other and copied to standard output when it is
// placed, so a failed command writes nothing there. claim_standard_output sets the process's standard
// output aside for it: whatever the program prints afterwards goes to standard error. InvalidArgument when
// called twice (one output at most can be "-").
void claim_standard_output();
// Whether two specs (file names, with a .mat or .npz ":NAME" or without) read or write the same file: the
// same path once directories, ".." and symbolic links at its end are resolved as writing resolves them (a
// link is written through to its target), or hard links of one file. "-" (standard input or output) is no
// file, and is never the same as anything.
bool same_file(const std::string& a, const std::string& b);
// Makes the directory `path` and its missing parents; InputError naming it when that fails.
void make_directory(const std::string& path);

// Several outputs written as one: while an OutputTransaction lives on a thread, each file that thread writes
// through linv::io is written in full under its temporary name and left there; commit() then renames them
// all into place, in the order written. Destroyed without commit() (an exception, a later output that could
// not be written), it removes them, and every target keeps what it held before. The renames themselves are
// not one atomic step: if one of them fails, commit() throws naming it, the files renamed before it stay
// and the rest are removed. Transactions do not nest.
class OutputTransaction {
 public:
  OutputTransaction();
  ~OutputTransaction();
  OutputTransaction(const OutputTransaction&) = delete;
  OutputTransaction& operator=(const OutputTransaction&) = delete;
  void commit();

 private:
  struct Pending {
    std::string temp, target;
    int listed;  // the entry in the table of temporary files
  };
  void rename_pending();
  std::vector<Pending> pending_;
  friend struct OutputTransactionAccess;  // the writers' and commit_outputs_so_far's way in (src/io/io.cpp)
};
// Renames into place what this thread's OutputTransaction holds so far, leaving it open (nothing to do
// without one): for outputs that are complete although the command goes on to report a failure, such as
// a batch whose singular members are NaN in its result.
void commit_outputs_so_far();

// ---- .npy files mapped in place (a distributed matrix reads and writes its own tiles) ----
// Where a 1-D or 2-D float32/float64 .npy array lies in its file: a malformed file, or any other shape or
// type, raises ParseError naming the byte.
struct NpyLayout {
  DType dtype = DType::Float64;
  bool fortran_order = true;  // column-major (a 1-D array counts as one column); else rows are contiguous
  index rows = 0, cols = 0;
  std::int64_t data_offset = 0;  // bytes before the first entry
};
NpyLayout npy_layout(const std::string& path);

// A Fortran-order rows x cols .npy array of T (with `vector`, 1-D of rows entries) made whole under a
// temporary name beside `path`, header written and size set, for processes to fill its entries in place
// (mapping temp_path() past header_bytes()); commit() renames it over `path`. Destroyed uncommitted, it removes
// the temporary file: `path` keeps what it held.
template <Real T>
class NpyInPlace {
 public:
  NpyInPlace(const std::string& path, index rows, index cols, bool vector = false);
  ~NpyInPlace();
  NpyInPlace(const NpyInPlace&) = delete;
  NpyInPlace& operator=(const NpyInPlace&) = delete;
  const std::string& temp_path() const noexcept;
  // Where the entries begin: header_bytes of this shape, which every process can compute alike.
  static std::int64_t header_bytes(index rows, index cols, bool vector = false);
  void commit();

 private:
  struct File;
  std::unique_ptr<File> file_;
};

// For a handler of a fatal signal (Ctrl-C, SIGTERM): removes the temporary files of every write in
// progress in this process, and makes any write that creates its file after this call remove it again.
// Async-signal-safe. Meant for a process that is about to end: the command-line tool calls it, then dies
// by the signal. (At most 64 writes at a time are tracked.)
void remove_temporary_files() noexcept;

// What reading changed about inputs, for the report: e.g. "A.npy: int64 values read as float64 (exactly)".
// Readers on this thread add to the list (the last 32 kept); this returns it and empties it.
std::vector<std::string> take_input_notes();

// Whether this build can read and write .npz files (it needs zlib).
bool have_npz_support();

// Whether this build can read and write `.mat` files.
bool have_mat_support();

// Grey images from .png (8 or 16 bits), .pgm (P2/P5, 8 or 16 bits), .npy, .jpg/.jpeg or .tif/.tiff (as
// read_image_channels reads them), height x width, integer samples scaled to [0, 1]. Colour becomes grey by ITU-R BT.709's weights
// (0.2126 R + 0.7152 G + 0.0722 B) and alpha is dropped, the same for every format. Malformed files raise
// ParseError naming the byte; a build without libpng (libjpeg, libtiff) refuses .png (.jpg, .tif) with
// InputError saying so.
Matrix<double> read_image(const std::string& path);
// Writes a grey image atomically: .png or .pgm with values clipped to [0, 1] and `bits` (8 or 16) per
// pixel, .npy as a height x width float64 array of the values as they are.
void write_image(const std::string& path, ConstMatrixView<double> image, int bits = 16);
bool have_png_support();
bool have_jpeg_support();  // reading .jpg/.jpeg (libjpeg)
bool have_tiff_support();  // reading .tif/.tiff (libtiff)

// An image of 1 (grey), 2 (grey and alpha), 3 (RGB) or 4 (RGBA) channels as one height x (width * channels)
// matrix, channel c in columns [c * width, (c + 1) * width) (the layout of linv's batches), values in [0, 1].
struct Image {
  Matrix<double> pixels;
  int channels = 1;
  index height() const noexcept { return pixels.rows(); }
  index width() const noexcept { return channels > 0 ? pixels.cols() / channels : 0; }
  bool has_alpha() const noexcept { return channels == 2 || channels == 4; }
  ConstMatrixView<double> channel(int c) const { return pixels.block(0, c * width(), height(), width()); }
  MatrixView<double> channel(int c) { return pixels.block(0, c * width(), height(), width()); }
};
// Every channel of a .png (grey, grey and alpha, RGB, RGBA; 8 or 16 bits; palettes expanded), a .pgm (grey)
// or a .npy (height x width, or height x width x channels with 1 to 4 channels, in NumPy's C or Fortran
// order; float32 or float64 taken as they are, uint8 and uint16 scaled to [0, 1]), a .jpg/.jpeg (grey or
// RGB, 8 bits) or a .tif/.tiff (1 to 4 samples of 8 or 16 bits, scaled, or float32, kept; other layouts as
// libtiff's RGBA, 8 bits). A header announcing more pixels than memory holds is refused before anything is
// allocated. Errors as read_image.
Image read_image_channels(const std::string& path);
// Writes every channel atomically: .png with values clipped to [0, 1] and `bits` (8 or 16) per sample, .pgm
// likewise (grey only: more channels are refused with InvalidArgument), .npy as float64 values as they are
// (height x width for one channel, height x width x channels otherwise, Fortran order).
void write_image_channels(const std::string& path, const Image& image, int bits = 16);

// ---- NIfTI-1/2 fMRI images (.nii, .nii.gz) ----
// Builds without libnifti2 refuse every NIfTI read and write with InputError before touching any file.
bool have_nifti_support();

// The voxel grid and its place in the world: what a volume needs to overlay on the image it came from.
// Voxel (x, y, z) has the linear index x + nx * (y + ny * z) (NIfTI's order, x fastest).
struct NiftiSpace {
  index nx = 1, ny = 1, nz = 1;
  double dx = 1, dy = 1, dz = 1;  // voxel sizes (pixdim[1..3]) in `spatial_units`
  int spatial_units = 0;          // NIfTI xyz units code: 0 unknown, 1 metre, 2 mm, 3 micron
  // Seconds between volumes (pixdim[4], converted from ms or us when the file says so); 0 when the volumes
  // are not a time series (spatial maps), which writes pixdim[4] = 0 and no time unit.
  double tr = 0;
  // qform: rotation as a quaternion (b, c, d), offsets in `spatial_units`, qfac = +-1 (handedness).
  int qform_code = 0;
  double quatern_b = 0, quatern_c = 0, quatern_d = 0, qoffset_x = 0, qoffset_y = 0, qoffset_z = 0, qfac = 1;
  // sform: rows srow_x, srow_y, srow_z of the affine from (x, y, z, 1) to world coordinates.
  int sform_code = 0;
  std::array<std::array<double, 4>, 3> srow{};
  std::string descrip;  // free text, at most 79 characters are written

  index voxels() const noexcept { return nx * ny * nz; }
  // A grid for synthetic data: voxel_mm-sized voxels in mm, qform and sform (both scanner coordinates, code
  // 1) the same axis-aligned scaling with the volume's centre at the origin, `tr` seconds between volumes.
  static NiftiSpace grid(index nx, index ny, index nz, double voxel_mm = 2.0, double tr = 2.0);
};

// An fMRI run as the matrix linv factors: signals is T x N (time points x voxels), column j holding the
// time course of voxel voxels[j] (increasing linear indices: the mask's voxels in the image's order).
struct FmriImage {
  Matrix<double> signals;
  std::vector<index> voxels;
  NiftiSpace space;
};

// Reads a 4-D image (a 3-D image is one time point) of any real NIfTI datatype (integers of 8 to 64 bits,
// float32, float64), applying scl_slope and scl_inter (slope 0: none). With `mask_path`, a 3-D image (or a
// 4-D one of one volume) on the same grid, only voxels where the mask is nonzero are kept (NaN counts as
// outside); without, every voxel. Raises InvalidArgument for a mask on another grid (naming both) or one
// selecting nothing, InputError for missing files and for NaN or Inf inside the mask (naming the voxel and
// the time point), ParseError for malformed or truncated files. The image is streamed a few volumes at a
// time: the only large allocation is `signals`.
FmriImage read_fmri(const std::string& path, const std::string& mask_path = "");

// Writes `values` (V x N: one volume per row, column j at voxel voxels[j], as in FmriImage) as an image of
// nx x ny x nz x V (3-D when V == 1) in `space`, zeros outside the voxels: float32 for float, float64 for
// double. `.nii.gz` is compressed, `.nii` is not. The header is NIfTI-1 unless a dimension exceeds 32767
// (NIfTI-2). Written atomically. For the data of an FmriImage, pass its signals; for k-SVD's codes G
// (K x N), G itself gives one map per atom.
template <Real T>
void write_volumes(const std::string& path, const NiftiSpace& space, const std::vector<index>& voxels,
                   ConstMatrixView<T> values);

// Whether `path` names a NIfTI file (.nii or .nii.gz, any case).
bool is_nifti_path(const std::string& path);

// Converts an AnyMatrix to element type T. Widening is exact; narrowing float64 to float32 happens only
// with allow_narrowing (the caller asked for single precision), otherwise InvalidArgument.
template <Real T>
Matrix<T> convert(AnyMatrix&& m, bool allow_narrowing);

}  // namespace linv::io
