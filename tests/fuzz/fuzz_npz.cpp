// libFuzzer target: the .npz reader (the zip archive's directory, local headers, ZIP64 fields, inflation and
// CRC-32), and the .npy reader on the member it hands over: the only member, a named one, and as a stack.
#include "fuzz.hpp"
#include "linv/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = linv::fuzz::write_input("input.npz", data, size);
  linv::fuzz::expect_linv_errors([&] { linv::io::read_matrix(path); });
  linv::fuzz::expect_linv_errors([&] { linv::io::read_matrix(path + ":A"); });
  linv::fuzz::expect_linv_errors([&] { linv::io::read_stack(path + ":b"); });
  return 0;
}
