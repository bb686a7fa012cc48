// Helpers shared by linv's tests: a fresh seed per run (or LINV_TEST_SEED), temporary directories.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

namespace linv::testing {

// The run's base seed: LINV_TEST_SEED if set, otherwise fresh from the OS. Stable within one process.
inline std::uint64_t run_seed() {
  static const std::uint64_t seed = [] {
    if (const char* s = std::getenv("LINV_TEST_SEED")) return static_cast<std::uint64_t>(std::strtoull(s, nullptr, 10));
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  return seed;
}

// A seed for one case, derived from the run seed and a per-case salt.
inline std::uint64_t case_seed(std::uint64_t salt) {
  std::uint64_t z = run_seed() + 0x9E3779B97F4A7C15ull * (salt + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Under LINV_TEST_REDUCED (set for compute-sanitizer runs, which slow kernels 10-100x) the tests that take
// large sizes take smaller ones: the same code paths, fewer blocks.
inline bool reduced_sizes() {
  static const bool reduced = std::getenv("LINV_TEST_REDUCED") != nullptr;
  return reduced;
}
template <class Sizes>
Sizes sizes(Sizes full, Sizes reduced) {
  return reduced_sizes() ? reduced : full;
}

// EXPECT_TRUE(contains(message, "pivot 3")) prints both strings when it fails.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    std::mt19937_64 rng(std::random_device{}());
    path_ = std::filesystem::temp_directory_path() / ("linv-test-" + std::to_string(rng()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace linv::testing

// Adds the run seed to the failure message of the enclosing scope.
#define LINV_TRACE_SEED(seed) SCOPED_TRACE(::testing::Message() << "seed " << (seed) << " (run seed " \
                                                                   << ::linv::testing::run_seed() << ")")
