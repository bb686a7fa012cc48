// linv's error hierarchy. Every failure linv reports is a linv::Error; the command-line tool maps each
// kind to one documented exit code (see ExitCode) and prints the message on one line.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace linv {

// Exit codes of the `linv` command, also exposed here so that callers embedding linv can reuse them.
enum class ExitCode : int {
  success = 0,
  usage = 2,           // bad flags, or inputs whose shapes do not fit the command
  bad_input = 3,       // unreadable or malformed input file, non-finite input values
  numerical = 4,       // singular, not positive definite, no convergence
  device = 5,          // device failure, CUDA unavailable, out of device or host memory
  // Stopped by Ctrl-C (SIGINT): the command removes its temporary files and dies by the signal, which a
  // shell reports as 128 + 2. (SIGTERM and SIGHUP likewise: 143 and 129.)
  interrupted = 130,
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  virtual ExitCode exit_code() const noexcept = 0;
};

// ---- usage (2) ----
class InvalidArgument : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::usage; }
};

// Two operands whose shapes do not fit together; the message names both shapes.
class ShapeMismatch : public InvalidArgument {
 public:
  ShapeMismatch(const std::string& what, std::int64_t a_rows, std::int64_t a_cols, std::int64_t b_rows,
                std::int64_t b_cols);
};

// ---- input (3) ----
class InputError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::bad_input; }
};

// A malformed file: names the file and the byte offset or line of the fault (whichever applies; -1 if not).
class ParseError : public InputError {
 public:
  ParseError(const std::string& file, std::int64_t offset, std::int64_t line, const std::string& what);
  const std::string& file() const noexcept { return file_; }
  std::int64_t offset() const noexcept { return offset_; }
  std::int64_t line() const noexcept { return line_; }

 private:
  std::string file_;
  std::int64_t offset_;
  std::int64_t line_;
};

// A NaN or infinity in an input matrix; names the matrix and the first offending entry (0-based), or, for
// inputs that are not plain matrices (an image's pixel and channel, a stack's matrix), the place in words.
class NonFiniteInput : public InputError {
 public:
  NonFiniteInput(const std::string& name, std::int64_t row, std::int64_t col, double value);
  NonFiniteInput(const std::string& name, const std::string& place, double value);
};

// ---- numerical (4) ----
class NumericalError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::numerical; }
};

// Exactly singular (a zero pivot) or singular to working precision (reciprocal condition below epsilon, or
// the `threshold` named where another applies). pivot is 1-based, as in LAPACK's info: the elimination step
// whose pivot vanished, or the smallest pivot; 0 where no pivot is to blame.
class SingularMatrix : public NumericalError {
 public:
  SingularMatrix(std::int64_t pivot, double rcond, const std::string& detail = {},
                 const std::string& threshold = "machine epsilon");
  std::int64_t pivot() const noexcept { return pivot_; }
  double rcond() const noexcept { return rcond_; }

 private:
  std::int64_t pivot_;
  double rcond_;
};

// The leading minor of order `minor` (1-based) is not positive definite.
class NotPositiveDefinite : public NumericalError {
 public:
  explicit NotPositiveDefinite(std::int64_t minor, const std::string& detail = {});
  std::int64_t minor() const noexcept { return minor_; }

 private:
  std::int64_t minor_;
};

// An iterative method stopped without meeting its tolerance.
class NoConvergence : public NumericalError {
 public:
  NoConvergence(const std::string& method, int iterations, double achieved, double tolerance,
                const std::string& reason);
  int iterations() const noexcept { return iterations_; }
  double achieved() const noexcept { return achieved_; }

 private:
  int iterations_;
  double achieved_;
};

// ---- device (5) ----
class DeviceError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::device; }
};

// An allocation that did not fit: on a GPU ("cuda:0", free as the driver reports it) or in host memory
// ("the host", free as the system's available memory or an address-space limit, ulimit -v, allows).
class OutOfDeviceMemory : public DeviceError {
 public:
  OutOfDeviceMemory(const std::string& device, std::uint64_t needed_bytes, std::uint64_t free_bytes);
  std::uint64_t needed() const noexcept { return needed_; }
  std::uint64_t free() const noexcept { return free_; }

 private:
  std::uint64_t needed_;
  std::uint64_t free_;
};

}  // namespace linv
