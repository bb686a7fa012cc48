// LU with tournament pivoting (communication-avoiding LU, CALU) on the host: the reference the CUDA
// backend's version (src/cuda/calu.cu) follows round for round, with the same tournament shape
// (kernels::Tournament) and the same arithmetic in each elimination (a fused multiply-add per entry), so
// that both choose the same pivots from the same panel.
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/lapack.hpp"
#include "cpu/algorithms.hpp"

namespace linv::cpu {
namespace {

using Shape = kernels::Tournament;

// One game of the tournament: Gaussian elimination with partial pivoting on the panel rows listed in
// `entries` (offsets into the panel; -1 is an empty slot), which puts forward out[c], c < w, the row that
// pivoted column c (the first of equal candidates in entry order, NaN counting as 0); -1 where no row was
// left.
template <Real T>
void play(ConstMatrixView<T> panel, int w, const int* entries, int count, int* out) {
  std::vector<T> rows(static_cast<std::size_t>(count) * Shape::kPanel, T(0));
  std::vector<char> alive(static_cast<std::size_t>(count), 0);
  for (int e = 0; e < count; ++e) {
    if (entries[e] < 0) continue;
    alive[e] = 1;
    for (int c = 0; c < w; ++c) rows[e * Shape::kPanel + c] = panel(entries[e], c);
  }
  for (int c = 0; c < Shape::kPanel; ++c) out[c] = -1;
  for (int c = 0; c < w; ++c) {
    int best = -1;
    T key = T(-1);
    for (int e = 0; e < count; ++e) {
      if (!alive[e]) continue;
      T a = std::abs(rows[e * Shape::kPanel + c]);
      if (std::isnan(a)) a = T(0);  // as the GPU's games count it
      if (a > key) key = a, best = e;
    }
    if (best < 0) return;
    alive[best] = 0;
    out[c] = entries[best];
    const T* pivot = &rows[best * Shape::kPanel];
    const T reciprocal = pivot[c] != T(0) ? T(1) / pivot[c] : T(0);  // multipliers as LAPACK's getf2 forms them
    for (int e = 0; e < count; ++e) {
      if (!alive[e]) continue;
      T* v = &rows[e * Shape::kPanel];
      const T l = v[c] * reciprocal;
      for (int k = c + 1; k < w; ++k) v[k] = std::fma(-l, pivot[k], v[k]);
    }
  }
}

// The panel's w pivot rows (offsets into the panel), in the order the last game chose them.
template <Real T>
std::vector<int> tournament(ConstMatrixView<T> panel, int w) {
  const int rows = static_cast<int>(panel.rows());
  std::vector<int> entries(static_cast<std::size_t>(rows));
  for (int i = 0; i < rows; ++i) entries[i] = i;
  // leaves: tiles of kTile rows; later rounds: kTile entries (kTile / kPanel candidate sets) per game
  for (;;) {
    const int count = static_cast<int>(entries.size());
    const int games = (count + Shape::kTile - 1) / Shape::kTile;
    std::vector<int> next(static_cast<std::size_t>(games) * Shape::kPanel);
    for (int g = 0; g < games; ++g)
      play(panel, w, entries.data() + g * Shape::kTile, std::min(Shape::kTile, count - g * Shape::kTile),
           next.data() + g * Shape::kPanel);
    entries = std::move(next);
    if (games == 1) break;
  }
  entries.resize(static_cast<std::size_t>(w));
  return entries;
}

void swap_rows_everywhere(auto A, index a, index b) {
  if (a == b) return;
  for (index j = 0; j < A.cols(); ++j) std::swap(A(a, j), A(b, j));
}

}  // namespace

template <Scalar T>
double max_abs_entry(ConstMatrixView<T> A, bool upper_only) {
  double m = 0;
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < (upper_only ? std::min(j + 1, A.rows()) : A.rows()); ++i)
      m = std::max(m, static_cast<double>(std::abs(A(i, j))));
  return m;
}

template <Real T>
kernels::LuOutcome tournament_lu(MatrixView<T> A, std::vector<int>& pivots) {
  const index n = A.rows();
  pivots.assign(static_cast<std::size_t>(n), 0);
  const double a_max = max_abs_entry(ConstMatrixView<T>(A), false);
  kernels::LuOutcome outcome;
  for (index k = 0; k < n; k += Shape::kBlock) {
    const index block_end = std::min(n, k + Shape::kBlock);
    for (index j = k; j < block_end; j += Shape::kPanel) {
      const int w = static_cast<int>(std::min<index>(Shape::kPanel, block_end - j));
      // choose the panel's pivot rows and move them to its top, as LAPACK's interchanges
      std::vector<int> chosen = tournament(ConstMatrixView<T>(A.block(j, j, n - j, w)), w);
      for (int i = 0; i < w; ++i) {
        const int s = chosen[i];
        pivots[static_cast<std::size_t>(j + i)] = static_cast<int>(j + s + 1);
        swap_rows_everywhere(A, j + i, j + s);
        for (int l = i + 1; l < w; ++l)
          if (chosen[l] == i) chosen[l] = s;  // the row that sat at i is now at s
      }
      // the panel without pivoting: L11 \ U11 on top, then L21 = A21 U11^-1
      for (int c = 0; c < w; ++c) {
        const T pivot = A(j + c, j + c);
        if (pivot == T(0) && outcome.zero_pivot == 0) outcome.zero_pivot = j + c + 1;
        const T reciprocal = T(1) / pivot;  // as the games form their multipliers
        for (int r = c + 1; r < w; ++r) {
          const T l = A(j + r, j + c) * reciprocal;
          A(j + r, j + c) = l;
          for (int q = c + 1; q < w; ++q) A(j + r, j + q) = std::fma(-l, A(j + c, j + q), A(j + r, j + q));
        }
      }
      const index below = n - j - w, right = block_end - j - w;
      const auto U11 = ConstMatrixView<T>(A.block(j, j, w, w));
      if (below > 0) lapack::trsm<T>(Side::Right, Uplo::Upper, Op::None, Diag::NonUnit, T(1), U11, A.block(j + w, j, below, w));
      if (right > 0) {
        lapack::trsm<T>(Side::Left, Uplo::Lower, Op::None, Diag::Unit, T(1), U11, A.block(j, j + w, w, right));
        if (below > 0)
          lapack::gemm<T>(Op::None, Op::None, T(-1), A.block(j + w, j, below, w), A.block(j, j + w, w, right), T(1),
                          A.block(j + w, j + w, below, right));
      }
    }
    const index width = block_end - k, rest = n - block_end;
    if (rest > 0) {
      lapack::trsm<T>(Side::Left, Uplo::Lower, Op::None, Diag::Unit, T(1), A.block(k, k, width, width),
                      A.block(k, block_end, width, rest));
      lapack::gemm<T>(Op::None, Op::None, T(-1), A.block(block_end, k, rest, width), A.block(k, block_end, width, rest),
                      T(1), A.block(block_end, block_end, rest, rest));
    }
  }
  const double u_max = max_abs_entry(ConstMatrixView<T>(A), true);
  outcome.growth = a_max > 0 ? u_max / a_max : 0.0;
  return outcome;
}

#define LINV_INSTANTIATE(T)                                                                  \
  template kernels::LuOutcome tournament_lu<T>(MatrixView<T>, std::vector<int>&);           \
  template double max_abs_entry<T>(ConstMatrixView<T>, bool);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
#undef LINV_INSTANTIATE
template double max_abs_entry<std::complex<float>>(ConstMatrixView<std::complex<float>>, bool);
template double max_abs_entry<std::complex<double>>(ConstMatrixView<std::complex<double>>, bool);

}  // namespace linv::cpu
