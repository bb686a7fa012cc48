// What Batch-OMP, k-SVD and ADL decide the same way on every device: src/core's loops and the backends'
// passes (src/cpu/fmri.cpp, adl.cpp; src/cuda/fmri.cpp, fmri.cu) all call these, so their runs take the
// same turns.
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

namespace linv::dist {
class Grid;
}

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

// Where this process's columns (voxels, signals) stand in a job whose processes each hold consecutive ones
// (dist::adl, dist::ksvd): `total` columns in all, `first` the first of this process's.
struct ColumnShare {
  index total = 0, first = 0;
};
// Collective. Every process learns every process's rows and columns; each must hold at least one column
// (an `item`: "voxel", "signal") and all of the rows, on the grid's device, or every process raises
// InvalidArgument naming the process at fault (`what` names the routine).
ColumnShare column_share(const dist::Grid& grid, index rows, index cols, Device device, const char* what,
                         const char* item);

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

// ADL's constraint sets: a column of length n onto the ball of squared radius r2 around `centre` (nullptr:
// around 0), and each column of D onto its own (the first task.cols() around the task's columns, radius
// sqrt(c); the others around 0, radius sqrt(c_d)). Host memory.
template <Real T>
void project_column(T* d, const T* centre, index n, double r2) {
  double dist2 = 0;
  for (index i = 0; i < n; ++i) {
    const double e = static_cast<double>(d[i]) - (centre ? static_cast<double>(centre[i]) : 0.0);
    dist2 += e * e;
  }
  if (dist2 <= r2) return;
  const double scale = std::sqrt(r2 / dist2);
  for (index i = 0; i < n; ++i) {
    const double c = centre ? static_cast<double>(centre[i]) : 0.0;
    d[i] = static_cast<T>(c + (static_cast<double>(d[i]) - c) * scale);
  }
}
template <Real T>
void project_dictionary(MatrixView<T> D, ConstMatrixView<T> task, double c, double c_d) {
  for (index j = 0; j < D.cols(); ++j) {
    const bool assisted = j < task.cols();
    project_column<T>(&D(0, j), assisted ? &task(0, j) : nullptr, D.rows(), assisted ? c : c_d);
  }
}

}  // namespace linv::fmri::rules
