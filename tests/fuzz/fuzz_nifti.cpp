// libFuzzer target: the NIfTI-1/2 reader. The first byte picks the file name, .nii or .nii.gz (nifti_clib
// reads either kind of bytes through zlib, which passes uncompressed data through, so both names see both
// kinds of content), and whether the image is also its own mask; the rest is the file.
#include "fuzz.hpp"
#include "linv/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return -1;
  const bool gz = (data[0] & 1) != 0, masked = (data[0] & 2) != 0;
  const std::string path = linv::fuzz::write_input(gz ? "input.nii.gz" : "input.nii", data + 1, size - 1);
  linv::fuzz::expect_linv_errors([&] { linv::io::read_fmri(path, masked ? path : std::string()); });
  return 0;
}
