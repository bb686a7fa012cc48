// libFuzzer target: the MATLAB .mat reader (linv's structure check, then matio), taking the file's only
// numeric variable or the one named A, as a matrix and as a stack.
#include "fuzz.hpp"
#include "linv/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = linv::fuzz::write_input("input.mat", data, size);
  linv::fuzz::expect_linv_errors([&] { linv::io::read_matrix(path); });
  linv::fuzz::expect_linv_errors([&] { linv::io::read_stack(path + ":A"); });
  return 0;
}
