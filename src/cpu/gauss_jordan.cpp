// Blocked Gauss-Jordan elimination with partial pivoting (the source documents' inversion algorithm,
// done so that it runs near matrix-product speed).
//
// One step of Gauss-Jordan on a block column [A01; A11; A21] of width b turns it into the block's
// transformation [-A01 A11^-1; A11^-1; -A21 A11^-1]; every other column x then takes
//     [A0x; A2x] += [A01; A21]_new A1x,   A1x := A11^-1 A1x,
// which is one matrix product once the block row A1x is copied out and zeroed. Panels are factored
// recursively (halves, down to 16 columns eliminated one at a time) so that even the panel work is
// mostly matrix products. Row interchanges are applied lazily per column range, as LAPACK's getrf does.
#include <cmath>
#include <vector>

#include "common/lapack.hpp"
#include "cpu/algorithms.hpp"
#include "linv/errors.hpp"

namespace linv::cpu {
namespace {

namespace k = lapack;

constexpr index kLeafColumns = 16;   // eliminated one column at a time (rank-1 updates)
constexpr index kPanelColumns = 192; // top-level panel width: large enough for an efficient product

template <Real T>
class GaussJordan {
 public:
  explicit GaussJordan(MatrixView<T> W)
      : W_(W), n_(W.rows()), pivots_(static_cast<std::size_t>(n_)),
        pivot_size_(static_cast<std::size_t>(n_)), column_(static_cast<std::size_t>(n_)),
        work_(static_cast<std::size_t>(std::min(kPanelColumns, n_) * W.cols())) {}

  void run() {
    for (index k0 = 0; k0 < n_; k0 += kPanelColumns) {
      const index b = std::min(kPanelColumns, n_ - k0);
      factor(k0, b);
      swap_rows(k0, k0 + b, 0, k0);
      update(k0, b, 0, k0);
      swap_rows(k0, k0 + b, k0 + b, n_);
      update(k0, b, k0 + b, n_ - k0 - b);
    }
    // We computed (P A)^-1 = A^-1 P^T, so A^-1 is that with its columns interchanged back, last first.
    for (index j = n_ - 1; j >= 0; --j) {
      const index p = pivots_[j];
      if (p != j)
        for (index i = 0; i < n_; ++i) std::swap(W_(i, j), W_(i, p));
    }
  }

  index smallest_pivot() const {
    index best = 0;
    for (index j = 1; j < n_; ++j)
      if (pivot_size_[j] < pivot_size_[best]) best = j;
    return n_ > 0 ? best + 1 : 0;
  }

 private:
  // Gauss-Jordan on columns [c0, c0 + w) only (all rows), choosing pivots from rows c0 onwards.
  void factor(index c0, index w) {
    if (w <= kLeafColumns) {
      eliminate_columns(c0, w);
      return;
    }
    const index h = std::max(kLeafColumns, (w / 2) / kLeafColumns * kLeafColumns);
    factor(c0, h);
    swap_rows(c0, c0 + h, c0 + h, c0 + w);
    update(c0, h, c0 + h, w - h);
    factor(c0 + h, w - h);
    swap_rows(c0 + h, c0 + w, c0, c0 + h);
    update(c0 + h, w - h, c0, h);
  }

  // Unblocked Gauss-Jordan on columns [c0, c0 + w): one rank-1 update per column.
  void eliminate_columns(index c0, index w) {
    const index ld = W_.ld();
    for (index j = c0; j < c0 + w; ++j) {
      T* col = &W_(0, j);
      index p = j;
      for (index i = j + 1; i < n_; ++i)
        if (std::abs(col[i]) > std::abs(col[p])) p = i;
      const T d = col[p];
      if (std::isnan(d))
        throw NumericalError("Gauss-Jordan elimination overflowed (NaN pivot at step " + std::to_string(j + 1) +
                             "): the matrix is too badly scaled for this precision");
      if (d == T(0)) throw SingularMatrix(j + 1, 0.0, "Gauss-Jordan elimination");
      pivots_[j] = p;
      pivot_size_[j] = std::abs(d);
      if (p != j)
        for (index c = c0; c < c0 + w; ++c) std::swap(W_(j, c), W_(p, c));
      // Save the column (the multipliers), make it e_j, scale the pivot row, subtract the rank-1 update:
      // column j then holds -a_ij / d off the diagonal and 1 / d on it.
      for (index i = 0; i < n_; ++i) column_[i] = col[i];
      column_[j] = T(0);
      for (index i = 0; i < n_; ++i) col[i] = T(0);
      col[j] = T(1);
      const T scale = T(1) / d;
      for (index c = c0; c < c0 + w; ++c) W_(j, c) *= scale;
      k::ger<T>(T(-1), column_.data(), &W_(j, c0), ld, W_.block(0, c0, n_, w));
    }
  }

  // Applies the interchanges chosen for pivots [j0, j1) to columns [c0, c1).
  void swap_rows(index j0, index j1, index c0, index c1) {
    for (index j = j0; j < j1; ++j) {
      const index p = pivots_[j];
      if (p != j)
        for (index c = c0; c < c1; ++c) std::swap(W_(j, c), W_(p, c));
    }
  }

  // Applies the transformation held in panel columns [c0, c0 + w) to columns [r0, r0 + rc):
  // copy the block row out, zero it, and add panel * block row (one matrix product).
  void update(index c0, index w, index r0, index rc) {
    if (rc <= 0 || w <= 0) return;
    MatrixView<T> row_block(work_.data(), w, rc, w);
    for (index c = 0; c < rc; ++c)
      for (index i = 0; i < w; ++i) {
        row_block(i, c) = W_(c0 + i, r0 + c);
        W_(c0 + i, r0 + c) = T(0);
      }
    k::gemm<T>(Op::None, Op::None, T(1), W_.block(0, c0, n_, w), row_block, T(1), W_.block(0, r0, n_, rc));
  }

  MatrixView<T> W_;
  index n_;
  std::vector<index> pivots_;
  std::vector<T> pivot_size_;
  std::vector<T> column_;
  std::vector<T> work_;
};

}  // namespace

template <Real T>
index gauss_jordan_inverse(MatrixView<T> A) {
  if (A.empty()) return 0;
  GaussJordan<T> gj(A);
  gj.run();
  return gj.smallest_pivot();
}

template index gauss_jordan_inverse<float>(MatrixView<float>);
template index gauss_jordan_inverse<double>(MatrixView<double>);

}  // namespace linv::cpu
