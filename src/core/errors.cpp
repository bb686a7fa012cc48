#include "linv/errors.hpp"

#include <fmt/format.h>

#include <cmath>

namespace linv {

ShapeMismatch::ShapeMismatch(const std::string& what, std::int64_t a_rows, std::int64_t a_cols,
                             std::int64_t b_rows, std::int64_t b_cols)
    : InvalidArgument(fmt::format("{}: shapes {}x{} and {}x{} do not fit", what, a_rows, a_cols, b_rows, b_cols)) {}

static std::string parse_message(const std::string& file, std::int64_t offset, std::int64_t line,
                                 const std::string& what) {
  if (line >= 0) return fmt::format("{}:{}: {}", file, line, what);
  if (offset >= 0) return fmt::format("{}: byte {}: {}", file, offset, what);
  return fmt::format("{}: {}", file, what);
}

ParseError::ParseError(const std::string& file, std::int64_t offset, std::int64_t line, const std::string& what)
    : InputError(parse_message(file, offset, line, what)), file_(file), offset_(offset), line_(line) {}

static const char* non_finite_name(double value) { return std::isnan(value) ? "NaN" : (value > 0 ? "+Inf" : "-Inf"); }

NonFiniteInput::NonFiniteInput(const std::string& name, std::int64_t row, std::int64_t col, double value)
    : InputError(fmt::format("{} holds {} at row {}, column {} (1-based); linv needs finite input", name,
                             non_finite_name(value), row + 1, col + 1)) {}

NonFiniteInput::NonFiniteInput(const std::string& name, const std::string& place, double value)
    : InputError(fmt::format("{} holds {} at {} (1-based); linv needs finite input", name, non_finite_name(value),
                             place)) {}

static std::string singular_message(std::int64_t pivot, double rcond, const std::string& detail,
                                    const std::string& threshold) {
  // pivot 0: no pivot to name (the matrix was judged by other means)
  std::string m = std::isnan(rcond) ? fmt::format("matrix is singular: its condition estimate is not a number{}",
                                                  pivot > 0 ? fmt::format(" (smallest pivot: {})", pivot) : "")
                  : rcond == 0 ? (pivot > 0 ? fmt::format("matrix is singular: pivot {} is exactly zero", pivot)
                                            : std::string("matrix is singular"))
                               : fmt::format("matrix is singular to working precision: reciprocal condition number {:.3g} "
                                    "is below {}{}",
                                    rcond, threshold, pivot > 0 ? fmt::format(" (smallest pivot: {})", pivot) : "");
  if (!detail.empty()) m += " (" + detail + ")";
  return m;
}

SingularMatrix::SingularMatrix(std::int64_t pivot, double rcond, const std::string& detail, const std::string& threshold)
    : NumericalError(singular_message(pivot, rcond, detail, threshold)), pivot_(pivot), rcond_(rcond) {}

NotPositiveDefinite::NotPositiveDefinite(std::int64_t minor, const std::string& detail)
    : NumericalError(fmt::format("matrix is not positive definite: the leading minor of order {} is not positive{}",
                                 minor, detail.empty() ? "" : " (" + detail + ")")),
      minor_(minor) {}

NoConvergence::NoConvergence(const std::string& method, int iterations, double achieved, double tolerance,
                             const std::string& reason)
    : NumericalError(fmt::format("{} did not converge: {} after {} iterations (backward error {:.3g}, tolerance {:.3g})",
                                 method, reason, iterations, achieved, tolerance)),
      iterations_(iterations),
      achieved_(achieved) {}

OutOfDeviceMemory::OutOfDeviceMemory(const std::string& device, std::uint64_t needed_bytes, std::uint64_t free_bytes)
    : DeviceError(fmt::format("out of memory on {}: needed {:.1f} MiB, {:.1f} MiB free", device,
                              static_cast<double>(needed_bytes) / (1 << 20), static_cast<double>(free_bytes) / (1 << 20))),
      needed_(needed_bytes),
      free_(free_bytes) {}

}  // namespace linv
