// Structured pseudoinverses for visual SLAM Gauss-Newton steps. The Jacobian J (n residual rows x m
// parameters, n >> m) has k dense leading columns (the motion parameters; the source thesis has k = 1)
// and then one column per "segment": its nonzeros are one contiguous run of rows, the runs in order
// and tiling all n rows, so each row has k + 1 nonzeros. J^T J is then an arrowhead (a dense k x k
// corner, a dense border, a diagonal), solved through the Schur complement of the diagonal in O(n k + m k^2
// + k^3) instead of O(m^3).
//
// A BorderedJacobian lives on one device (J.to(device) copies it, as a Gauss-Newton loop keeps it there);
// steps and pseudoinverses run where it lives (on a GPU, up to 32 dense columns).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "linv/dense.hpp"
#include "linv/matrix.hpp"

namespace linv::slam {

// A Jacobian in compressed rows (read from a Matrix Market coordinate file by io::read_sparse).
template <Real T>
using SparseJacobian = SparseMatrix<T>;

template <Real T>
class BorderedJacobian {
 public:
  // J found in other storage: the first k columns dense, then at most one nonzero per row among the
  // others, the segment columns following the rows in order, each on one run of rows (a row without one
  // joins the run before it; a column without one is an empty segment). Anything else throws
  // InvalidArgument naming the row at fault.
  static BorderedJacobian from_dense(ConstMatrixView<T> J, index k);
  static BorderedJacobian from_sparse(const SparseJacobian<T>& J, index k);
  // The source thesis's compact layout: a 2 x n array (row 0: the motion column, so k = 1; row 1: each
  // row's segment value) and the segments' lengths in row order.
  static BorderedJacobian from_compact(ConstMatrixView<T> compact, const std::vector<index>& lengths);

  // dense: n x k, on the device J is to live on; starts/lengths: per segment column, its first row and
  // number of rows (the runs must follow each other without gap or overlap from row 0 to row n; an empty
  // one is a zero column); values: the segment entry of each row (n entries). Invalid segments throw
  // InvalidArgument naming the segment.
  BorderedJacobian(Matrix<T> dense, std::vector<index> starts, std::vector<index> lengths, std::vector<T> values);

  Device device() const noexcept { return dense_.device(); }
  BorderedJacobian to(Device device) const;

  index rows() const noexcept { return dense_.rows(); }
  index dense_cols() const noexcept { return dense_.cols(); }
  index segments() const noexcept { return static_cast<index>(starts_.size()); }
  index cols() const noexcept { return dense_cols() + segments(); }
  const Matrix<T>& dense() const noexcept { return dense_; }  // on device()
  // The segments and values, in host memory wherever J lives.
  const std::vector<index>& starts() const noexcept { return starts_; }
  const std::vector<index>& lengths() const noexcept { return lengths_; }
  const std::vector<T>& values() const noexcept { return values_; }
  // The segment column of row i.
  index segment_of(index row) const;
  Matrix<T> to_dense() const;  // in host memory
  SparseMatrix<T> to_sparse() const;  // in host memory; every stored entry kept, zero or not

  // J's arrays on device(), for the backends: each row's segment value (n), the segments' first rows and
  // then n (segments + 1), each row's segment (n).
  struct Arrays {
    const T* values;
    const index* bounds;
    const index* segment_of;
  };
  Arrays arrays() const noexcept;

 private:
  Matrix<T> dense_;
  std::vector<index> starts_, lengths_, segment_of_row_;
  std::vector<T> values_;
  Matrix<T> device_values_;
  std::unique_ptr<void, detail::Deleter> device_bounds_, device_segment_of_;
};

// A synthetic Jacobian: one dense column uniform in [-1, 1], then cols - 1 segments of random lengths
// (each at least one row), their values of magnitude 0.5 to 2 with random signs. Same seed, same matrix.
template <Real T>
BorderedJacobian<T> random_bordered_jacobian(index rows, index cols, std::uint64_t seed);

// J^T J + damping diag(J^T J) (Levenberg-Marquardt; damping 0: Gauss-Newton) in arrowhead form, for J in
// host memory.
template <Real T>
struct Arrowhead {
  Matrix<T> corner;          // k x k
  Matrix<T> border;          // k x segments: row block of the dense columns against the segment columns
  std::vector<T> diagonal;   // segments
};
template <Real T>
Arrowhead<T> normal_matrix(const BorderedJacobian<T>& J, double damping = 0);

// x = (J^T J + damping diag)^-1 J^T d for each column of d (n x c, on J's device): the Gauss-Newton (or
// LM) step, without forming J^+, on J's device. J^T J (+ damping) must be nonsingular to working precision,
// as one matrix must be for linv::solve; SingularMatrix names the column of J (1-based, the parameter)
// otherwise: a zero segment column (an unobservable parameter), the dense column where the Schur
// complement is not positive definite (zero, or dependent on the columns before it), or, when the rcond of
// J^T J estimated through the Schur complement is below sqrt(n) eps (the rounding of its entries, sums over
// the n rows; its rcond() is then the rcond divided by sqrt(n)), the parameter the data determine worst
// (the largest diagonal entry of (J^T J)^-1). The report carries that rcond.
template <Real T>
Solution<T> pinv_apply(const BorderedJacobian<T>& J, ConstMatrixView<T> d, double damping = 0);

// (J^T J + damping diag)^-1 materialised (m x m) in O(m^2 k) from the Schur complement:
// [S^-1, -S^-1 E^T; -E S^-1, D^-1 + E S^-1 E^T] with E = D^-1 B^T. Same errors as pinv_apply. CPU only in
// this version.
template <Real T>
Matrix<T> normal_inverse(const BorderedJacobian<T>& J, double damping = 0);

// J^+ = (J^T J + damping diag)^-1 J^T, materialised (m x n), on J's device.
template <Real T>
Solution<T> pinv(const BorderedJacobian<T>& J, double damping = 0);

// The general fallback for Jacobians without that structure: a sparse J (compressed rows) and the
// least-squares step x = argmin ||J x - d||_2 by CGLS (conjugate gradients on the normal equations
// without forming J^T J), per column of d, to a relative normal-equation residual of `tolerance`. (J is a
// SparseJacobian, linv's SparseMatrix.)
struct CglsOptions {
  double tolerance = 1e-10;  // on ||J^T (d - J x)|| / ||J^T d||, per column
  int max_iterations = 1000;
};

// Runs where d lives (J's arrays uploaded there), in float64 whatever T is; the result on d's device. The
// report's iterations are the most any column took, and a note gives the largest final relative residual.
// Throws NoConvergence when a column reaches max_iterations first.
template <Real T>
Solution<T> cgls_apply(const SparseJacobian<T>& J, ConstMatrixView<T> d, const CglsOptions& options = {});

}  // namespace linv::slam
