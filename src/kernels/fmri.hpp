// The fMRI kernel family: Batch-OMP, and the passes over the data that k-SVD's, ADL's and PARAFAC2's
// iterations are made of, declared once here and provided by each backend (src/cpu/fmri.cpp, adl.cpp,
// parafac2.cpp; src/cuda/fmri.cpp, adl.cpp, parafac2.cpp), so that one loop in src/core/ (atom order,
// step constants, objective, factor updates, stopping) drives every backend and they take the same steps.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "linv/errors.hpp"
#include "linv/fmri.hpp"
#include "linv/matrix.hpp"

namespace linv::kernels {

// Where the signals an atom's update reads are, in a job whose processes each hold some of them: `total`
// users of the atom in the whole job, `before` of them on the processes ranked before this one (their
// signals come first). A backend alone (no GridSum) counts its own users and ignores this.
struct AtomUsers {
  index total = 0, before = 0;
};

// The signal a replaced atom becomes: this process's worst represented one (error 0 when none is left).
struct WorstSignal {
  double error = 0;
  index signal = -1;
};

// k-SVD's passes (include/linv/fmri.hpp): X, the dictionary D and the codes where X lives, and the
// signals' current squared representation errors ||x_s - D gamma_s||^2. In a job whose processes each hold
// some of the signals (dist::ksvd), X is this process's share and the sums an atom's update needs over its
// users (E E^T, E itself, E gamma^T) are added over the job by the GridSum the steps were made with, so that
// every process keeps the same D; everything else is this process's own, and src/fmri/fmri.cpp adds it up.
template <Real T>
class KsvdSteps {
 public:
  virtual ~KsvdSteps() = default;
  // Batch-OMP of X against the current dictionary; with keep_previous, a signal whose codes from the last
  // updates represent it better keeps them. The errors become those of the new codes. Returns the sum of
  // the errors.
  virtual double code(bool keep_previous) = 0;
  // Per atom, the signals whose coefficient for it exceeds `threshold` in magnitude.
  virtual std::vector<index> users(T threshold) = 0;
  // Atom j and its users' coefficients (nonzero since the last coding) replaced by the best rank-1
  // approximation of their error without the atom: its leading singular pair (exact) or one power step
  // from the current coefficients. `iteration` (from 0) names the iteration in errors.
  virtual void update_atom(index j, AtomUsers users, bool exact, int iteration) = 0;
  // This process's worst represented signal not yet used as an atom.
  virtual WorstSignal worst_signal() = 0;
  // Signal s as it is in X, in float64; its error counts as 0 until the next coding, refreshed or not, so
  // that it replaces one atom at most in an iteration (Rubinstein's unused_sigs: two atoms made of one
  // signal would tie in every later OMP).
  virtual std::vector<double> claim_signal(index s) = 0;
  // d_j := atom (n values).
  virtual void set_atom(index j, const std::vector<double>& atom) = 0;
  // The errors recomputed for the current dictionary and codes (the claimed signals' still 0).
  virtual void refresh_errors() = 0;
  virtual Matrix<T> dictionary() = 0;       // a copy in host memory
  virtual Matrix<T> take_dictionary() = 0;  // on X's device; the steps are spent afterwards
  virtual fmri::SparseCodes<T> take_codes() = 0;  // in host memory
};

// The objective's terms a coefficient step reads and writes (include/linv/adl.hpp): for the S it reads,
// <D^T X, S>, <S, D^T D S> and ||S||_1; for the S it writes, ||S||_1. All accumulated in float64.
struct AdlCoefficientSums {
  double xs = 0, sgs = 0, l1 = 0, l1_new = 0;
};
// <D, X S^T> and <D, D S S^T> for the D a dictionary step reads.
struct AdlDictionarySums {
  double dp = 0, dv = 0;
};

// One backend's state for ADL: X, the dictionary D (T x K), the codes S (K x N) and the products of the
// current outer iteration, where X lives. The small K x K matrices the step constants come from are
// returned in host memory. In a job whose processes each hold some of the voxels (dist::adl), every
// result that adds over voxels (||X||^2, the coefficient steps' sums, H = S S^T and X S^T) is summed over
// the job by the GridSum the steps were made with, so every process keeps the same D; S stays this
// process's columns.
template <Real T>
class AdlSteps {
 public:
  virtual ~AdlSteps() = default;
  // ||X||_F^2 in float64 (not finite when X holds NaN or Inf, or overflows).
  virtual double norm_squared() = 0;
  // G := D^T D of the current dictionary (both triangles). Starts an outer iteration: a backend may
  // begin the products that need only D (D^T X) before returning.
  virtual void gram(Matrix<T>& G) = 0;
  // `steps` coefficient steps with D fixed, S := soft(S + (D^T X - G S) * inv_c, tau) each (G from the
  // last gram()); sums gets one entry per step. Then H := S S^T (both triangles) of the new S, and the
  // product X S^T that the dictionary steps need.
  virtual void coefficient_steps(T inv_c, T tau, int steps, std::vector<AdlCoefficientSums>& sums, Matrix<T>& H) = 0;
  // `steps` dictionary steps with S fixed, D := proj(D + (X S^T - D H) * inv_c) each (H from the last
  // coefficient_steps()); sums gets one entry per step (for the D it reads), then one for the final D.
  virtual void dictionary_steps(T inv_c, int steps, std::vector<AdlDictionarySums>& sums) = 0;
  // The results, on X's device (the backend is spent afterwards).
  virtual Matrix<T> take_dictionary() = 0;
  virtual Matrix<T> take_codes() = 0;
};

// The constraint sets: the first task.cols() atoms within sqrt(c) of the task's columns, the others of
// norm at most sqrt(c_d). task in host memory.
struct AdlConstraints {
  double c = 0, c_d = 1;
};

// Sums float64 arrays over the processes of a distributed job, in the memory where the job computes: on
// GPUs over NCCL, so that the arrays never leave the GPUs; in host memory over the job's own communicator
// (MPI, or linv's launcher). kernels::grid_sum(grid) (src/dispatch/registry.cpp) picks it.
class GridSum {
 public:
  virtual ~GridSum() = default;
  // values := the elementwise sum of every process's values (count float64). On a GPU the sum is queued
  // on `stream` (a cudaStream_t of the grid's device) and may still run when this returns; on the host
  // `stream` is ignored and the sum is complete.
  virtual void sum(double* values, std::size_t count, void* stream) const = 0;
  virtual void sum(float* values, std::size_t count, void* stream) const = 0;
  virtual std::string name() const = 0;  // "NCCL 2.28.9"
};

// Which slabs of a PARAFAC2 fit of K = total slabs a process holds (first .. first + slabs.size() - 1),
// and how its sums are completed over the processes that hold the others (subject-parallel PARAFAC2,
// dist::parafac2). One process alone: first = 0, total = slabs.size(), sum = nullptr.
struct SlabShare {
  index first = 0, total = 0;
  const GridSum* sum = nullptr;
};

// PARAFAC2's passes over the slabs X_k (I x J_k; include/linv/parafac2.hpp). The factors are small
// (A: I x F, H: F x F, C: K x F) and stay on the host in float64, alike on every process; a backend keeps
// what it derives from its own slabs. B is F x F K with block k = diag(c_k) H^T, so that the model of slab
// k is M_k P_k^T with M_k = A B_k. Every result is over all K slabs, summed over the share's processes, so
// that each process gets the same; a failure on one process's slabs is raised on all of them.
template <Real T>
class Parafac2Steps {
 public:
  virtual ~Parafac2Steps() = default;
  // sum_k X_k X_k^T (I x I, float64, both triangles); its trace is ||X||^2.
  virtual Matrix<double> gram_sum() = 0;
  // One iteration's passes: the P-step's projected slabs Y_k = X_k P_k with P_k the polar factor of
  // X_k^T M_k, then A_new := Y krv (I x F, Y = [Y_1 ... Y_K]) and W := Y^T A_new (F K x F). NoConvergence
  // when the P-step's eigenproblem of some slab did not converge.
  virtual void iterate(const Matrix<double>& A, const Matrix<double>& B, const Matrix<double>& krv,
                       Matrix<double>& A_new, Matrix<double>& W, int iteration) = 0;
  // The polar factors P_k (J_k x F, in T, on the slabs' device) of X_k^T M_k by thin SVDs, for this
  // process's slabs, and the sum of their singular values (the nuclear norms) over this process's slabs.
  virtual std::vector<Matrix<T>> polar_factors(const Matrix<double>& A, const Matrix<double>& B, double& nuclear) = 0;
};

// The P-step's failure, the same on every process: the eigenproblems (or SVDs) of `failed` slabs' F x F
// cross-products did not converge.
inline NoConvergence parafac2_p_step_failure(const std::string& solver, int iteration, double failed) {
  return NoConvergence("PARAFAC2's P-step (" + solver + ")", iteration, 0.0, 0.0,
                       "the F x F cross-products of " + std::to_string(static_cast<long long>(failed)) +
                           " slab(s) have no converged eigendecomposition");
}

template <Real T>
class Fmri {
 public:
  virtual ~Fmri() = default;
  // G = D^T D (K x K, both triangles, exactly symmetric) and DtX = D^T X (K x N): what Batch-OMP works from.
  // All on the backend's device. On a GPU the work is queued and the call returns at once, so that
  // batch_omp's allocations overlap it (synchronising here cost Batch-OMP 0.3 ms of 2.6 at 900 x 125000).
  virtual void gram_and_correlations(ConstMatrixView<T> D, ConstMatrixView<T> X, MatrixView<T> G,
                                     MatrixView<T> DtX) const = 0;
  // Batch-OMP from G = D^T D (K x K) and DtX = D^T X (K x N) on the backend's device, with the signals'
  // squared norms (N x 1, float64, same device) when options.tolerance > 0 (an empty view otherwise).
  // The codes come back in host memory.
  virtual fmri::SparseCodes<T> batch_omp(ConstMatrixView<T> G, ConstMatrixView<T> DtX, ConstMatrixView<double> norms,
                                         const fmri::OmpOptions& options) const = 0;
  // X on the backend's device; D0 the unit-norm initial dictionary (T x K, host). With `sum`, X is this
  // process's share of a job's signals (columns).
  virtual std::unique_ptr<KsvdSteps<T>> ksvd_steps(ConstMatrixView<T> X, Matrix<T> D0, const fmri::KsvdOptions& options,
                                                   const GridSum* sum) const = 0;
  // X on the backend's device; D0 the projected initial dictionary (T x K) and the task (T x M) in host memory.
  // With `sum`, X is this process's share of a job's voxels (columns): what adds over voxels is summed.
  virtual std::unique_ptr<AdlSteps<T>> adl_steps(ConstMatrixView<T> X, Matrix<T> D0, ConstMatrixView<T> task,
                                                 AdlConstraints constraints, const GridSum* sum) const = 0;
  // Every slab on the backend's device, all of I rows; `share` says which of the fit's slabs they are.
  virtual std::unique_ptr<Parafac2Steps<T>> parafac2_steps(const std::vector<ConstMatrixView<T>>& slabs,
                                                           const SlabShare& share) const = 0;
};

}  // namespace linv::kernels
