// libFuzzer target: the PGM reader (P2 and P5, 8 and 16 bits).
#include "fuzz.hpp"
#include "linv/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = linv::fuzz::write_input("input.pgm", data, size);
  linv::fuzz::expect_linv_errors([&] { linv::io::read_image(path); });
  return 0;
}
