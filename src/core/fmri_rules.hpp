// What Batch-OMP and k-SVD decide the same way on every device: the CPU (src/core/fmri.cpp) and the GPU
// (src/cuda/fmri.cpp) both call these, so their runs take the same turns.
#pragma once

#include <algorithm>
#include <cmath>

#include "linv/fmri.hpp"
#include "linv/matrix.hpp"

#if defined(__CUDACC__)
#define LINV_OMP_RULE __host__ __device__
#else
#define LINV_OMP_RULE
#endif

namespace linv::fmri::rules {

// Batch-OMP's two early stops, relative to the data's own scale (scikit-learn and Rubinstein's ompbox
// use the same tests against absolute thresholds, right for unit-scale data only). They run in float64
// on values computed from G and D^T X of element type T, whose rounding is about eps_T of the inputs:
// - no correlation left: the best |alpha|^2 <= eps_T * (the first atom's alpha)^2. A signal that its
//   first atoms fit to rounding (a signal that is itself an atom, as k-SVD's initial atoms are) stops
//   there instead of collecting atoms chosen by rounding noise, with coefficients near eps. Those atoms
//   differ from one BLAS to the next, and in k-SVD they would make the signal a user of an arbitrary
//   atom: the exact update then moved that atom by up to 1e-4 when X changed by one rounding.
// - dependent atom: the new Cholesky pivot d <= eps_T * G(best, best).
template <class T>
LINV_OMP_RULE constexpr double omp_eps() {
  return sizeof(T) == 4 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
}
template <class T>
LINV_OMP_RULE inline bool omp_correlations_exhausted(double top, double first) {
  return top * top <= omp_eps<T>() * first * first;
}
template <class T>
LINV_OMP_RULE inline bool omp_atom_dependent(double pivot, double g_best) {
  return pivot <= omp_eps<T>() * g_best;
}

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
