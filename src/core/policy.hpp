// The numerical policy that every dense inverse and solve follows, one device or many (src/core/inv.cpp,
// solve.cpp and dense_steps.hpp; src/distributed/distributed.cpp; docs/design.md, "Numerical policy").
#pragma once

#include <fmt/format.h>

#include <cmath>

#include "kernels/backend.hpp"
#include "linv/errors.hpp"
#include "linv/matrix.hpp"
#include "linv/report.hpp"

namespace linv::policy {

// A result whose scaled residual (linv/accuracy.hpp) exceeds kResidualBound is never returned as a plain
// success: the method's own solver refines it, then Householder QR solves instead, and if neither gets
// below the bound, NumericalError gives the residual reached. The bound is LAPACK's test threshold:
// backward-stable methods stay far below it on every matrix.
inline constexpr double kResidualBound = 30;
inline constexpr int kRefinementSteps = 3;

// The one-shot functions' policy (inv, solve, tri_inv): a matrix singular to working precision (rcond
// below machine epsilon, LAPACK's definition) gives results without a single guaranteed correct digit,
// so it is refused, naming its smallest pivot, unless the caller allows ill-conditioned results: those
// come back with a note in the report. A NaN rcond (an inverse that overflowed) is always refused.
// The decomposition objects apply no policy beyond exactly zero pivots: their callers read rcond().
inline void apply_conditioning_policy(double rcond, double epsilon, index smallest_pivot, bool allow, Report* report,
                                      const char* detail) {
  if (std::isnan(rcond) || (rcond < epsilon && !allow))
    throw SingularMatrix(smallest_pivot, rcond > 0 ? rcond : 1e-300, detail);
  if (rcond < epsilon && report != nullptr)
    report->notes.push_back(fmt::format("singular to working precision: rcond {:.3g} is below machine epsilon {:.3g}, "
                                        "so the result may have no correct digits (allowed by the caller)",
                                        rcond, epsilon));
}

// No result holding a NaN or Inf is returned: finite inputs that over- or underflow on the way are a
// numerical failure (exit 4), named here with the first such entry of `what`.
template <Scalar T>
void require_finite_result(ConstMatrixView<T> X, const char* what) {
  if (const auto at = kernels::dense<T>(X.device()).magnitude(X).first_non_finite)
    throw NumericalError(fmt::format("{} holds a NaN or Inf at row {}, column {} (1-based): the computation over- or "
                                     "underflowed, and no result is returned",
                                     what, at->first + 1, at->second + 1));
}

// The 1-based index of the entry of smallest magnitude (the smallest pivot of a factor's diagonal).
template <class Values>
index smallest_entry(const Values& d) {
  index best = 0;
  for (std::size_t i = 1; i < d.size(); ++i)
    if (std::abs(d[i]) < std::abs(d[static_cast<std::size_t>(best)])) best = static_cast<index>(i);
  return d.empty() ? 0 : best + 1;
}

}  // namespace linv::policy
