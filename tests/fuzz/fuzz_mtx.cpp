// libFuzzer target: the Matrix Market reader, as a matrix and as a stack of one.
#include "fuzz.hpp"
#include "linv/io.hpp"

namespace {
// 32 MiB of float64: far more than any input of a few kilobytes needs to reach every branch.
constexpr double kMaxCoordinateElements = 1 << 22;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (linv::fuzz::declared_coordinate_elements(text) > kMaxCoordinateElements) return -1;  // not worth its memory
  const std::string path = linv::fuzz::write_input("input.mtx", data, size);
  linv::fuzz::expect_linv_errors([&] { linv::io::read_matrix(path); });
  linv::fuzz::expect_linv_errors([&] { linv::io::read_stack(path); });
  return 0;
}
