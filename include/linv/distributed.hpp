// Dense matrices distributed over processes, and the solvers that work on them in place: for problems
// larger than one machine's (or one GPU's) memory, or faster on several. The layout is ScaLAPACK's: a
// rows x cols grid of processes holds a matrix in block x block tiles dealt out cyclically, tile (I, J) to
// the process at (I mod rows, J mod cols). No process holds the whole matrix, files included: each reads
// and writes its own tiles.
//
//   // mpirun -np 4 ./program
//   auto grid = linv::dist::Grid::world();                   // 2 x 2, tiles in host memory
//   auto A = linv::dist::DistMatrix<double>::read(grid, "A.npy");
//   auto result = linv::dist::inv(A);                        // ScaLAPACK
//   result.x.write("Ainv.npy");
//   if (grid.is_root()) std::puts(result.report.to_json().c_str());
//
// Every function here is collective: every process of the grid calls it, in the same order, with the same
// arguments, and gets the same report. An error on any process is raised on all of them, with the same
// message and exit code (the process where it arose raises the original), so that no process waits forever
// for another. The engine is chosen by where the grid keeps its tiles, in one place
// (src/dispatch/registry.cpp): host memory means ScaLAPACK, over an MPI job (mpirun); GPU memory means
// cuSOLVERMp, over an MPI job or a job linv starts itself on one machine (Grid::local). `linv info` says
// what this build has; a build without MPI raises DeviceError from Grid::world().
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "linv/adl.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/fmri.hpp"
#include "linv/io.hpp"
#include "linv/matrix.hpp"
#include "linv/parafac2.hpp"
#include "linv/report.hpp"

namespace linv::dist {

namespace detail {
class Communicator;  // how the processes talk (src/dist/communicator.hpp)
}

// The processes of a job on a rows x cols grid, rank r at (r / cols, r mod cols) (BLACS' row-major order).
// Copies share the job's communicator.
class Grid {
 public:
  // Every process of the MPI job this program runs in (started by mpirun or mpiexec; a program started
  // without them is a job of one process), on a rows x cols grid: the most nearly square one with
  // rows <= cols unless both are given. MPI is initialised here when the program has not done it, and then
  // finalised at exit. With place = cuda, each process keeps its tiles on a GPU of its host, the one of its
  // rank among the job's processes there. InvalidArgument when rows x cols is not the number of processes;
  // DeviceError when this linv was built without MPI.
  static Grid world(int rows = 0, int cols = 0, Device::Kind place = Device::Kind::cpu);
  // One process per device on this machine, no MPI needed: the calling program is process 0 and keeps
  // its tiles on devices[0]; it starts the others by running its own executable again with the same
  // arguments and environment, and in those this call returns their grid (process r keeps its tiles on
  // devices[r]). So call it early in main, before anything the other processes must not repeat, with the
  // same devices in every process (the command-line tool's --devices does). The job ends with the
  // program; the other processes are stopped if process 0 dies.
  static Grid local(const std::vector<Device>& devices, int rows = 0, int cols = 0);

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return rows_ * cols_; }
  int rows() const noexcept { return rows_; }
  int cols() const noexcept { return cols_; }
  int row() const noexcept { return rank_ / cols_; }  // this process's place in the grid
  int col() const noexcept { return rank_ % cols_; }
  bool is_root() const noexcept { return rank_ == 0; }
  // Where this process keeps its tiles and computes.
  Device device() const noexcept { return device_; }
  std::string describe() const;  // "2 processes (1 x 2 grid), Open MPI 4.1.4"

  // Collectives over the grid's processes.
  void barrier() const;
  double max(double value) const;
  double min(double value) const;
  double sum(double value) const;
  void sum(double* values, std::size_t count) const;  // in place, elementwise
  void broadcast(void* data, std::size_t bytes, int root = 0) const;
  void broadcast(std::string& text, int root = 0) const;

  // Runs `body` on every process; if it throws on any of them, every process throws (see the header's
  // comment), after every process has finished its own body. For steps that can fail on one process
  // alone (allocation, reading a file) before the collective steps that follow them.
  template <class Body>
  void together(Body&& body) const {
    try {
      body();
    } catch (const Error& e) {
      agree(static_cast<int>(e.exit_code()), e.what());
      throw;
    } catch (const std::bad_alloc&) {
      agree(static_cast<int>(ExitCode::device), "out of host memory (an allocation failed)");
      throw;
    } catch (const std::exception& e) {
      agree(static_cast<int>(ExitCode::device), e.what());
      throw;
    }
    agree(0, {});
  }

  const detail::Communicator& communicator() const noexcept { return *comm_; }

 private:
  template <Real T>
  friend class DistMatrix;
  Grid() = default;  // a default-constructed DistMatrix's: no processes to talk to
  Grid(std::shared_ptr<const detail::Communicator> comm, int rows, int cols, Device device);
  // Every process learns whether any failed (code != 0: the failure's ExitCode); those that did not throw
  // the lowest failing rank's error, as the class of its exit code with its message.
  void agree(int code, const std::string& message) const;
  std::shared_ptr<const detail::Communicator> comm_;
  int rank_ = 0, rows_ = 1, cols_ = 1;
  Device device_ = Device::cpu();
};

// The tile size a grid's matrices take unless told (block = 0 below): 128 in host memory (ScaLAPACK's
// updates reach their rate from 64 to 256), 1024 on GPUs (cuSOLVERMp's tiles must be large for its
// products to run at the GPU's rate).
index default_block(const Grid& grid);

// A rows x cols matrix of T in block x block tiles over a grid: this process's tiles in local(), a
// column-major matrix of local_rows x local_cols on grid.device() (ScaLAPACK's local array). Move-only,
// like Matrix; clone() copies.
template <Real T>
class DistMatrix {
 public:
  DistMatrix() = default;
  // Uninitialised (every process allocates its part; an allocation that fails on one fails on all).
  DistMatrix(const Grid& grid, index rows, index cols, index block = 0);
  // Reads a 2-D .npy file of T (either order), each process its own tiles. A file of the other float type
  // is refused, not converted (npy_dtype tells which to read); a malformed or short file raises
  // ParseError naming the byte.
  static DistMatrix read(const Grid& grid, const std::string& path, index block = 0);
  // A's tiles dealt out from the root, which holds A (the others pass an empty view); rows and cols are A's
  // shape on every process.
  static DistMatrix scatter(const Grid& grid, ConstMatrixView<T> A, index rows, index cols,
                            index block = 0);
  // A that every process holds alike (a few right-hand sides, say), each keeping only its own tiles.
  static DistMatrix from_replicated(const Grid& grid, ConstMatrixView<T> A, index block = 0);
  // Entries uniform in [lo, hi), made where the tiles live: the same matrix as linv::random_uniform(rows,
  // cols, seed) (entry (i, j) depends only on the seed and its place), whatever the grid, for problems too
  // large for one process to make or to keep as a file.
  static DistMatrix random_uniform(const Grid& grid, index rows, index cols, std::uint64_t seed, T lo = T(-1),
                                   T hi = T(1), index block = 0);
  // Writes a .npy file (Fortran order), each process its own tiles, atomically: a temporary file beside
  // `path`, renamed by the root once every process has written (into the root's io::OutputTransaction when
  // one is open, as every linv output). With `vector`, a one-column matrix is written as a 1-D array (what
  // np.save writes for a vector); InvalidArgument for more columns.
  void write(const std::string& path, bool vector = false) const;
  // The whole matrix on the root, in host memory; an empty matrix elsewhere.
  Matrix<T> gather() const;
  // The whole matrix on every process, in host memory (for few columns: every process gets all of it).
  Matrix<T> replicated() const;

  const Grid& grid() const noexcept { return grid_; }
  index rows() const noexcept { return rows_; }
  index cols() const noexcept { return cols_; }
  index block() const noexcept { return block_; }
  bool empty() const noexcept { return rows_ == 0 || cols_ == 0; }
  Matrix<T>& local() noexcept { return local_; }
  const Matrix<T>& local() const noexcept { return local_; }
  // The global row (column) of local row (column) i.
  index global_row(index i) const noexcept;
  index global_col(index j) const noexcept;
  DistMatrix clone() const;

 private:
  Grid grid_;
  index rows_ = 0, cols_ = 0, block_ = 1;
  Matrix<T> local_;
};

// The element type of a 2-D float32 or float64 .npy file, from its header (anything else is refused,
// naming it), to pick DistMatrix<float> or DistMatrix<double> before reading.
io::DType npy_dtype(const std::string& path);

// The engine that distributes this grid's work ("ScaLAPACK 2.2.1 (Open MPI v4.1.4)").
std::string engine(const Grid& grid);
// What this build can distribute with, without starting anything: "ScaLAPACK 2.2.1 over MPI", or why
// nothing.
std::string engines();

template <Real T>
struct Solution {
  DistMatrix<T> x;
  Report report;  // the same on every process
};

// A^-1, by LU with partial pivoting (the engine's getrf and getri) or, for a symmetric positive definite
// A, Cholesky (potrf, potri): Method::Auto tries Cholesky on an exactly symmetric A with a positive
// diagonal and falls back to LU, saying so, as linv::inv does. linv::inv's policy holds: rcond exact
// (1 / (||A||_1 ||X||_1)); a matrix singular to working precision refused, naming its smallest pivot,
// unless allowed; partial pivoting whose growth passes lu_growth_limit(n) replaced by Householder QR; and
// with options.compute_residual the scaled residual ||A X - I|| / (n eps ||A|| ||X||) is kept within 30 by
// Newton steps, then QR, or NumericalError. Of the options, method (Auto, LU, Cholesky),
// allow_ill_conditioned, compute_residual and check_finite apply; Precision::Mixed is refused.
template <Real T>
Solution<T> inv(const DistMatrix<T>& A, const SolveOptions& options = {});
// The same, with A's memory taken for the factors and then the inverse, so that A and A^-1 need 2 n^2
// entries rather than 3: for the largest problems. A is gone afterwards, so what needs it is refused:
// options.compute_residual (InvalidArgument; check the result against a regenerated A instead, as
// `linv bench distributed` does), and the fallbacks: an indefinite A under Method::Auto and partial
// pivoting past its growth limit raise NumericalError instead of going to LU or Householder QR.
template <Real T>
Solution<T> inv(DistMatrix<T>&& A, const SolveOptions& options = {});

// X with A X = B (getrf and getrs, or potrf and potrs), with the same policy: rcond from the engine's
// condition estimate, refinement in working precision before QR.
template <Real T>
Solution<T> solve(const DistMatrix<T>& A, const DistMatrix<T>& B, const SolveOptions& options = {});

// C := alpha A B + beta C, and ||A||_1, for checking results (all three laid out alike).
template <Real T>
void gemm(T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta, DistMatrix<T>& C);
template <Real T>
double norm1(const DistMatrix<T>& A);

// Subject-parallel PARAFAC2 (include/linv/parafac2.hpp): the K slabs (subjects, or slices) dealt out over
// the grid's processes, each holding consecutive slabs, at least one, on grid.device(): process r passes
// slabs first_r .. first_r + slabs.size() - 1, with first_0 = 0 and each next process's first where the
// previous one's end (io::read_stack_part deals a stack out this way). Every process gets the same A, H, C
// (all K rows), loss and report; P holds this process's own P_k. An iteration's sums over the slabs
// (I x F and K F x F numbers) are added over NCCL between GPUs and over the grid's communicator between CPU
// processes, so the fit equals a one-process fit of all K slabs up to the rounding of adding in another
// order. The tiles' grid shape plays no part. Errors as fmri::parafac2, raised on every process.
template <Real T>
fmri::Parafac2Result<T> parafac2(const Grid& grid, const std::vector<ConstMatrixView<T>>& slabs, index first,
                                 const fmri::Parafac2Options& options, const fmri::Parafac2Init<T>* init = nullptr);

// Voxel-parallel ADL (include/linv/adl.hpp): X's voxels (columns) dealt out over the grid's processes,
// each passing its own consecutive columns (at least one, all T time points) on grid.device(). Every
// process gets the same dictionary, objective history, lambda and report, and the codes of its own voxels
// (K x its columns). What adds over voxels (||X||^2, the coefficient steps' sums, S S^T and X S^T) is summed
// over the job, over NCCL between GPUs, so the fit equals the one-process fit of all voxels up to the order
// of those sums. The task and the initial dictionary are given alike on every process. Errors as
// fmri::adl, raised on every process.
template <Real T>
fmri::AdlResult<T> adl(const Grid& grid, ConstMatrixView<T> X, const fmri::AdlOptions& options,
                       ConstMatrixView<T> task = {}, const Matrix<T>* initial_dictionary = nullptr);

// Signal-parallel k-SVD (include/linv/fmri.hpp), for voxels: X's signals (columns) dealt out over the
// grid's processes as for dist::adl, each coding and updating with its own on grid.device(). Every process
// gets the same dictionary, RMSE history, replacement count and report, and the codes of its own signals.
// An atom update's sums over its users (E E^T, or E itself when it has fewer users than time points, or
// the power step's E gamma^T) are added over NCCL between GPUs; the initial dictionary (K random signals of
// all N, the same as one process picks), the user counts, the errors and the choice of the worst
// represented signal go through the grid. So the fit is the one-process fit of all signals up to the
// order of those sums, while no near-tie in OMP or clearing sends the two different ways. Errors as
// fmri::ksvd, raised on every process.
template <Real T>
fmri::KsvdResult<T> ksvd(const Grid& grid, ConstMatrixView<T> X, const fmri::KsvdOptions& options,
                         const Matrix<T>* initial = nullptr);

// The columns each process holds (consecutive parts in rank order, the same rows on every process) side by
// side on the root, in host memory; an empty matrix elsewhere. For the codes of a voxel-parallel fit.
template <Real T>
Matrix<T> gather_columns(const Grid& grid, ConstMatrixView<T> mine);

}  // namespace linv::dist

