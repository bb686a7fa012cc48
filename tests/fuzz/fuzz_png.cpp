// libFuzzer target: the PNG reader (libpng, then linv's conversion to grey), with every chunk's CRC set right
// first (fix_png_crcs says why).
#include "fuzz.hpp"
#include "linv/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> png(data, data + size);
  linv::fuzz::fix_png_crcs(png);
  const std::string path = linv::fuzz::write_input("input.png", png.data(), png.size());
  linv::fuzz::expect_linv_errors([&] { linv::io::read_image(path); });
  return 0;
}
