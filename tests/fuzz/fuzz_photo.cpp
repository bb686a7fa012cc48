// libFuzzer target: the JPEG and TIFF readers (libjpeg and libtiff, then linv's conversion of their samples),
// chosen by the input's first bytes: TIFF's byte-order mark, anything else as JPEG.
#include "fuzz.hpp"
#include "linv/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const bool tiff = size >= 2 && ((data[0] == 'I' && data[1] == 'I') || (data[0] == 'M' && data[1] == 'M'));
  if (tiff && !linv::io::have_tiff_support()) return -1;
  if (!tiff && !linv::io::have_jpeg_support()) return -1;
  const std::string path = linv::fuzz::write_input(tiff ? "input.tif" : "input.jpg", data, size);
  linv::fuzz::expect_linv_errors([&] { linv::io::read_image_channels(path); });
  return 0;
}
