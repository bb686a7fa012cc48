// What Batch-OMP and k-SVD decide the same way on every device: the CPU (src/core/fmri.cpp) and the GPU
// (src/cuda/fmri.cpp) both call these, so their runs take the same turns.
#pragma once

#include <algorithm>
#include <cmath>

#include "linv/fmri.hpp"
#include "linv/matrix.hpp"

namespace linv::fmri::rules {

// InvalidArgument unless 1 <= sparsity <= atoms; `what` names the routine in the message.
void require_sparsity(index atoms, index sparsity, const char* what);

// Rubinstein's cleardict rule for atom j of the dictionary D (host memory): replace it when another atom
// is more coherent with it than o.coherence (|d_i^T d_j|, in float64) or fewer than o.min_use signals
// use it.
template <Real T>
bool should_clear(const Matrix<T>& D, index j, index use, const KsvdOptions& o) {
  double worst = 0;
  for (index a = 0; a < D.cols(); ++a) {
    if (a == j) continue;
    double g = 0;
    for (index i = 0; i < D.rows(); ++i) g += static_cast<double>(D(i, a)) * D(i, j);
    worst = std::max(worst, std::abs(g));
  }
  return worst > o.coherence || use < o.min_use;
}

}  // namespace linv::fmri::rules
