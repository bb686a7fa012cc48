// What linv's libFuzzer targets share: the input bytes as a file (the readers take paths; matio and
// nifti_clib open files themselves), and the rule every target checks: whatever the bytes, a reader returns
// or raises a linv::Error. Anything else (another exception, a crash, a sanitizer report, a leak, a hang, an
// allocation beyond libFuzzer's -malloc_limit_mb) is a finding.
#pragma once

#include <unistd.h>
#include <zlib.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "linv/errors.hpp"

namespace linv::fuzz {

// A directory of this process's own, in memory where /dev/shm exists (the fuzzers write a file per input),
// removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    const std::filesystem::path base =
        std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : (tmp != nullptr ? tmp : "/tmp");
    path_ = base / ("linv-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline const ScratchDir& scratch() {
  static const ScratchDir dir;
  return dir;
}

// Writes the bytes to `name` in the scratch directory and returns its path.
inline std::string write_input(const std::string& name, const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch().file(name);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                static_cast<std::streamsize>(size));
  return path;
}

// Runs f: returning and raising a linv::Error are both fine; any other exception aborts, which libFuzzer
// reports as a crash with this input.
template <class F>
void expect_linv_errors(F&& f) {
  try {
    f();
  } catch (const linv::Error&) {
    // a refused input, reported the way linv promises
  } catch (const std::exception& e) {
    std::fprintf(stderr, "linv fuzz: an exception that is not a linv::Error escaped: %s: %s\n", typeid(e).name(),
                 e.what());
    std::abort();
  }
}

// The dense matrix a Matrix Market coordinate file declares on its size line, in elements, or 0 when the
// bytes are not such a file. A coordinate file of a few bytes may rightly declare any size (linv makes the
// matrix dense, refusing only what exceeds the machine's memory), so the targets skip declarations beyond
// what one fuzzing input should cost; array files must hold every entry and are never skipped.
inline double declared_coordinate_elements(std::string_view text) {
  const std::size_t banner_end = text.find('\n');
  if (banner_end == std::string_view::npos) return 0;
  std::string banner(text.substr(0, banner_end));
  for (char& c : banner) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (banner.find("coordinate") == std::string::npos) return 0;
  for (std::size_t at = banner_end + 1; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string line(text.substr(at, end - at));
    at = end + 1;
    if (line.find_first_not_of(" \t\r\v\f") == std::string::npos || line[line.find_first_not_of(" \t\r\v\f")] == '%')
      continue;
    double rows = 0, cols = 0;
    if (std::sscanf(line.c_str(), "%lf %lf", &rows, &cols) != 2) return 0;
    return rows * cols;
  }
  return 0;
}

// Sets every chunk's CRC of a PNG file right. libpng refuses a chunk whose CRC does not match, and mutations
// rarely keep one, so without this the fuzzer would explore little beyond the CRC check. Chunks follow the
// 8-byte signature as length (4 bytes, big-endian), type (4), data (length) and the CRC of type and data (4);
// a chunk running past the end is left as it is.
inline void fix_png_crcs(std::vector<std::uint8_t>& png) {
  const auto big_endian = [&png](std::size_t at) {
    return std::uint32_t{png[at]} << 24 | std::uint32_t{png[at + 1]} << 16 | std::uint32_t{png[at + 2]} << 8 |
           std::uint32_t{png[at + 3]};
  };
  for (std::size_t at = 8; at + 12 <= png.size();) {
    const std::size_t length = big_endian(at);
    if (length > png.size() - at - 12) return;
    const auto crc = static_cast<std::uint32_t>(crc32(0, &png[at + 4], static_cast<uInt>(length + 4)));
    for (std::size_t b = 0; b < 4; ++b) png[at + 8 + length + b] = static_cast<std::uint8_t>(crc >> (24 - 8 * b));
    at += length + 12;
  }
}

}  // namespace linv::fuzz
