#include "linv/operation.hpp"

#include <fmt/format.h>

#include <span>

#include "common/names.hpp"
#include "linv/errors.hpp"

namespace linv {

std::string_view to_string(Operation op) {
  switch (op) {
    case Operation::Inverse: return "inv";
    case Operation::Solve: return "solve";
    case Operation::LeastSquares: return "lstsq";
    case Operation::Pseudoinverse: return "pinv";
    case Operation::Cholesky: return "chol";
    case Operation::BatchedInverse: return "batched-inv";
    case Operation::BatchedSolve: return "batched-solve";
    case Operation::WeightedLeastSquares: return "wls";
    case Operation::Deblur: return "deblur";
    case Operation::SlamStep: return "slam-step";
    case Operation::SlamPseudoinverse: return "slam-pinv";
    case Operation::SparseCoding: return "omp";
    case Operation::Ksvd: return "ksvd";
    case Operation::Adl: return "adl";
    case Operation::Parafac2: return "parafac2";
  }
  return "?";
}

std::string describe_auto_method() {
  const GpuAutoOrders& o = kGpuAutoOrders;
  return fmt::format("auto picks triangular for triangular input, cholesky for symmetric positive definite input, "
                     "and otherwise lu, except on a GPU: rbt for float64 solves of order {} to {}, for float64 inverses "
                     "of order {} to {} and float32 ones of {} to {} (where float64 runs at float32's rate), and gauss-jordan for float64 inverses from "
                     "order {}",
                     o.randomized_solve_from, o.randomized_solve_to - 1, o.randomized_inverse_from_float64, o.randomized_inverse_to - 1,
                     o.randomized_inverse_from_float32, o.randomized_inverse_to - 1, o.gauss_jordan_from_float64);
}

std::string_view to_string(Method m) {
  switch (m) {
    case Method::Auto: return "auto";
    case Method::LU: return "lu";
    case Method::CALU: return "calu";
    case Method::RBT: return "rbt";
    case Method::Cholesky: return "cholesky";
    case Method::GaussJordan: return "gauss-jordan";
    case Method::CholeskyGETS: return "cholesky-gets";
    case Method::GaussSeidel: return "gauss-seidel";
    case Method::Triangular: return "triangular";
    case Method::QR: return "qr";
    case Method::NormalEquations: return "normal-equations";
    case Method::SVD: return "svd";
    case Method::Spectral: return "spectral";
    case Method::ConjugateGradients: return "cg";
    case Method::ADMM: return "admm";
    case Method::BorderedSchur: return "bordered-schur";
    case Method::CGLS: return "cgls";
    case Method::BatchedGaussJordan: return "batched-gauss-jordan";
    case Method::BatchedLU: return "batched-lu";
    case Method::BatchOMP: return "batch-omp";
    case Method::KSVD: return "ksvd";
    case Method::ADL: return "adl";
    case Method::PARAFAC2: return "parafac2";
  }
  return "?";
}

Method parse_method(std::string_view name) {
  return parse_name(name, "method", std::span<const Method>(kSolveMethods));
}

std::string_view to_string(StopReason s) {
  switch (s) {
    case StopReason::None: return "none";
    case StopReason::Converged: return "converged";
    case StopReason::IterationLimit: return "iteration limit";
    case StopReason::FellBack: return "fell back to float64";
  }
  return "?";
}

}  // namespace linv
