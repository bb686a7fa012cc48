// libFuzzer target: the .npy reader, as a matrix, as a stack of matrices and as an image (which also takes
// uint8 and uint16 samples).
#include "fuzz.hpp"
#include "linv/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = linv::fuzz::write_input("input.npy", data, size);
  linv::fuzz::expect_linv_errors([&] { linv::io::read_matrix(path); });
  linv::fuzz::expect_linv_errors([&] { linv::io::read_stack(path); });
  linv::fuzz::expect_linv_errors([&] { linv::io::read_image_channels(path); });
  return 0;
}
