// Sparse coding for fMRI factorisation. The data X is T x N (time points x voxels); a dictionary D is
// T x K (time courses, one atom per column); codes Gamma are K x N with at most T0 nonzeros per column
// (spatial maps), so that X ~ D Gamma.
//
// Batch-OMP (Rubinstein, Zibulevsky and Elad, 2008): orthogonal matching pursuit for many signals at
// once from G = D^T D and D^T X, each signal's least-squares coefficients kept by a Cholesky factor of
// G restricted to its support and grown by one row per selected atom. The atom chosen at each step is
// the first of largest |correlation| with the residual, as scikit-learn's orthogonal_mp_gram chooses.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "linv/matrix.hpp"
#include "linv/report.hpp"

namespace linv::fmri {

// The codes of N signals: for signal j, count[j] (at most `sparsity`) atoms atom(t, j) with
// coefficients value(t, j), t < count[j], in the order they were selected.
template <Real T>
struct SparseCodes {
  index atoms = 0, signals = 0, sparsity = 0;
  std::vector<index> count;  // signals
  std::vector<index> atom;   // sparsity x signals, column by signal
  std::vector<T> value;      // sparsity x signals
  Matrix<T> to_dense() const;  // atoms x signals
};

// How the GPU spreads Batch-OMP's signals: one thread per signal (its state in registers and local
// memory; K <= 16 and T0 <= 8), one warp per signal (any K and T0, the atoms spread over the lanes), or
// Auto: the thread kernel where it fits, the faster one there (measured: docs/gpu-performance-notes.md).
enum class OmpGpuKernel { Auto, Thread, Warp };

struct OmpOptions {
  index sparsity = 0;     // T0, the atoms per signal at most (>= 1)
  double tolerance = 0;   // also stop once ||x - D gamma||_2^2 <= tolerance (0: only at T0 atoms)
  OmpGpuKernel gpu_kernel = OmpGpuKernel::Auto;
};

// Batch-OMP of each column of X (T x N) over D's atoms (T x K; the atoms need not be normalised), on
// the device where X and D live (the codes are returned in host memory either way).
// Throws ShapeMismatch when D and X have different time points, InvalidArgument for sparsity < 1 or
// above K, NonFiniteInput for NaN or Inf. A signal stops early once no atom correlates with its residual
// beyond rounding (|alpha|^2 <= eps |alpha_first|^2, eps that of T) or when its next atom depends on the
// chosen ones (the new Cholesky pivot <= eps G(a, a)): the tests of scikit-learn, relative to the data's
// scale (src/common/fmri_rules.hpp).
template <Real T>
SparseCodes<T> batch_omp(ConstMatrixView<T> D, ConstMatrixView<T> X, const OmpOptions& options);

// The same from G = D^T D (K x K) and DtX = D^T X (K x N), with the signals' squared norms when a
// tolerance is given: what k-SVD reuses between its steps.
template <Real T>
SparseCodes<T> batch_omp_gram(ConstMatrixView<T> G, ConstMatrixView<T> DtX, const std::vector<double>& norms_squared,
                              const OmpOptions& options);

// k-SVD (Aharon, Elad and Bruckstein; the details of Rubinstein's ksvd.m): alternate Batch-OMP sparse
// coding with an atom-by-atom dictionary update in a random order: for atom j and the signals using it,
// the error without it, E = X_w - D Gamma_w + d_j gamma_j, is replaced by its best rank-1 approximation
// (exact: E's leading singular pair; approximate: one power step, d_j = E gamma_j^T / ||.||, then
// gamma_j = d_j^T E). An atom no signal uses becomes the worst-represented signal. After each update,
// atoms too coherent with another (|d_i^T d_j| > coherence) or used by fewer than min_use signals are
// replaced the same way ("clearing"; not after the last update). OMP is greedy, so a new sparse coding
// can represent a signal slightly worse than its updated old code: with keep_better_codes the better
// one is kept, and without clearing the exact variant's error then never grows; it explores less
// (on Aharon et al.'s synthetic test it recovered fewer atoms), so it is off by default.
struct KsvdOptions {
  index atoms = 0;        // K
  index sparsity = 0;     // T0
  int iterations = 10;
  bool exact = true;      // exact rank-1 SVD, or the approximate power step
  std::uint64_t seed = 0; // the initial dictionary (K distinct signals) and the atom orders
  bool clear = true;
  double coherence = 0.8;
  index min_use = 4;
  bool keep_better_codes = false;
  // Called after each iteration's sparse coding with the iteration (from 1) and its RMSE, e.g. to show
  // progress on long runs.
  std::function<void(int, double)> progress = {};
  // Called before each atom update (K times an iteration), e.g. to let an interrupt stop a run whose
  // iterations are long: whatever it throws propagates, and the run is abandoned.
  std::function<void()> checkpoint = {};
};

template <Real T>
struct KsvdResult {
  Matrix<T> dictionary;       // T x K, unit-norm atoms
  SparseCodes<T> codes;       // Batch-OMP against the final dictionary
  // sqrt(||X - D Gamma||_F^2 / (T N)) after each iteration's sparse coding, then after the final one
  // (iterations + 1 entries)
  std::vector<double> rmse;
  index replaced = 0;         // atoms replaced (unused or cleared), over all iterations
  Report report;              // iterations, device, seconds
};

// Runs where X lives; the dictionary is returned on that device, the codes in host memory. On a GPU the
// codes are held as a dense K x N matrix, so an atom's update is two passes over X.
// initial: a T x K dictionary to start from (its atoms are normalised), or nullptr for K distinct random
// signals. Throws InvalidArgument for K > N (without an initial dictionary), T0 > K or T0 < 1.
template <Real T>
KsvdResult<T> ksvd(ConstMatrixView<T> X, const KsvdOptions& options, const Matrix<T>* initial = nullptr);

// Synthetic fMRI with a known answer, so that recovery can be tested (nothing is downloaded): K source
// time courses, block designs (even sources) and event designs (odd ones) convolved with SPM's canonical
// haemodynamic response sampled every `tr` seconds, centred and of unit norm; K spatial maps, each a
// Gaussian blob of random centre and radius in the volume, cut to zero below 5 % of its peak (sparse and
// smooth); data = timecourses * maps plus Gaussian noise at `snr_db` (signal power over noise power in
// decibels; infinity: no noise). Same seed, same data.
struct SyntheticOptions {
  index time_points = 0;
  index nx = 0, ny = 1, nz = 1;  // the volume; voxels = nx ny nz, in column-major order
  index sources = 0;
  double snr_db = 10;
  double tr = 2.0;
  std::uint64_t seed = 0;
};
struct SyntheticFmri {
  Matrix<double> data;         // T x N
  Matrix<double> timecourses;  // T x K
  Matrix<double> maps;         // K x N
};
SyntheticFmri synthetic_fmri(const SyntheticOptions& options);

}  // namespace linv::fmri
