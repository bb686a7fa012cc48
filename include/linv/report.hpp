// What an operation did: which operation and method ran where and why, how long it took, how it stopped
// and how accurate the result is. Every result with diagnostics carries one Report.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "linv/device.hpp"
#include "linv/operation.hpp"

namespace linv {

struct Report {
  Operation operation = Operation::Inverse;
  Method method = Method::Auto;  // the method that ran
  std::string method_reason;     // why Method::Auto chose it (empty when the caller chose)
  Device device = Device::cpu();
  std::string precision;         // "float32", "float64" or "mixed (float32 factorization, float64 refinement)"
  double seconds = 0;            // wall time of the computation itself
  int iterations = 0;            // iterative methods and refinement; 0 for direct methods
  StopReason stop = StopReason::None;
  // Scaled residual, e.g. ||A X - I||_1 / (n eps ||A||_1 ||X||_1) for an inverse (see accuracy.hpp).
  // Values of order 1 to 10 mean the result is as accurate as the precision allows. NaN: not computed.
  double scaled_residual = std::numeric_limits<double>::quiet_NaN();
  double rcond = std::numeric_limits<double>::quiet_NaN();  // reciprocal condition estimate (1-norm)
  // Mixed-precision refinement: the largest ||b - A x||_inf / (||A||_inf ||x||_inf) over the right-hand
  // sides when it stopped (float64's bound is about sqrt(n) eps). NaN: not computed.
  double backward_error = std::numeric_limits<double>::quiet_NaN();
  // LU factorizations: the growth factor max|U| / max|A| of the factors used. NaN: not an LU.
  double growth = std::numeric_limits<double>::quiet_NaN();
  long long rank = -1;  // lstsq / pinv: numerical rank
  std::vector<std::string> notes;

  std::string to_json() const;  // one JSON object, enums by name; NaN fields become null
};

}  // namespace linv
