// The distributed family: what an engine does in place on block-cyclic matrices spread over a process grid
// (include/linv/distributed.hpp). ScaLAPACK implements it for grids whose tiles live in host memory
// (src/scalapack/). src/distributed/distributed.cpp holds the algorithms over it (method choice, conditioning
// policy, reports, the accuracy promise) and src/dispatch/registry.cpp is the one place that picks the
// engine, by where the grid keeps its tiles. Every method is collective: every process of the grid calls
// it with the same arguments, and every result is the same on all of them. Condition estimates are not
// here: core estimates ||A^-1||_1 from the solves (Higham and Tisseur's block estimator), the same way for
// every engine (ScaLAPACK 2.2.1's pdgecon was measured 100 times off on random matrices of order 500).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/fmri.hpp"
#include "linv/distributed.hpp"

namespace linv::kernels {

// What a factorization keeps beside its factors, in the engine's own form: LU's row interchanges, QR's
// Householder scalars (ScaLAPACK: this process's part of IPIV or TAU).
struct DistAside {
  std::shared_ptr<void> data;
};

// A non-finite entry: its global place and value.
struct DistEntry {
  index row = 0, col = 0;
  double value = 0;
};

template <Real T>
class Distributed {
 public:
  virtual ~Distributed() = default;
  virtual std::string name(const dist::Grid& grid) const = 0;  // "ScaLAPACK 2.2.1"

  // ---- inspection (float64 results) ----
  virtual double norm1(const dist::DistMatrix<T>& A) const = 0;
  // max |a_ij| over A, or over its upper triangle (i <= j).
  virtual double max_abs(const dist::DistMatrix<T>& A, bool upper_only) const = 0;
  // The first NaN or infinity in column-major order.
  virtual std::optional<DistEntry> first_nonfinite(const dist::DistMatrix<T>& A) const = 0;
  // Exactly symmetric (square A).
  virtual bool symmetric(const dist::DistMatrix<T>& A) const = 0;
  // The diagonal of a square A, on every process.
  virtual std::vector<T> diagonal(const dist::DistMatrix<T>& A) const = 0;

  // ---- products and fills ----
  // C := alpha A B + beta C.
  virtual void gemm(T alpha, const dist::DistMatrix<T>& A, const dist::DistMatrix<T>& B, T beta,
                    dist::DistMatrix<T>& C) const = 0;
  // Y := alpha X + Y (same shape and layout).
  virtual void axpy(T alpha, const dist::DistMatrix<T>& X, dist::DistMatrix<T>& Y) const = 0;
  virtual void set_identity(dist::DistMatrix<T>& A) const = 0;
  // A(i, j) := lo + (hi - lo) counter_uniform(seed, j * rows + i) (src/common/counter_random.hpp).
  virtual void fill_uniform(dist::DistMatrix<T>& A, std::uint64_t seed, T lo, T hi) const = 0;

  // ---- LU with partial pivoting, in place (a zero pivot is U's first zero diagonal entry) ----
  virtual void lu_factor(dist::DistMatrix<T>& A, DistAside& pivots) const = 0;
  virtual void lu_inverse(dist::DistMatrix<T>& LU, const DistAside& pivots) const = 0;
  // B := op(A)^-1 B.
  virtual void lu_solve(const dist::DistMatrix<T>& LU, const DistAside& pivots, dist::DistMatrix<T>& B,
                        Op op) const = 0;

  // ---- Cholesky A = L L^T, in place (L in the lower triangle) ----
  // Returns 0, or the 1-based order of the first leading minor that is not positive definite.
  virtual index cholesky_factor(dist::DistMatrix<T>& A) const = 0;
  // A^-1 from L, both triangles.
  virtual void cholesky_inverse(dist::DistMatrix<T>& L) const = 0;
  virtual void cholesky_solve(const dist::DistMatrix<T>& L, dist::DistMatrix<T>& B) const = 0;

  // ---- Householder QR, A = Q R in place ----
  virtual void qr_factor(dist::DistMatrix<T>& A, DistAside& tau) const = 0;
  // B := op(A)^-1 B: R^-1 Q^T B, or Q R^-T B.
  virtual void qr_solve(const dist::DistMatrix<T>& QR, const DistAside& tau, dist::DistMatrix<T>& B, Op op) const = 0;
};

// The engine for this grid. Throws DeviceError when this linv was built without it.
template <Real T>
const Distributed<T>& distributed(const dist::Grid& grid);
// Called collectively once a grid is made: starts what its engine needs for every job (NCCL's
// communicator between GPUs, which takes a second to make, in the background). Nothing for CPU processes.
void start_job(const dist::Grid& grid);
// Sums over this grid's processes where they compute: NCCL between GPUs, the grid's communicator between
// CPU processes. Throws DeviceError when this linv was built without NCCL's headers.
std::unique_ptr<GridSum> grid_sum(const dist::Grid& grid);
// The engines this build has, in words (dist::engines()).
std::string distributed_engines();

}  // namespace linv::kernels
