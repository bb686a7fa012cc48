// Helpers for tests that read and write files: raw bytes in and out, directory listings, random
// matrices, exact comparison, and the check that a parser fault is reported the documented way.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "linv/errors.hpp"
#include "linv/matrix.hpp"
#include "support/testing.hpp"

namespace linv::testing {

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<std::string> dir_entries(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

template <Real T>
Matrix<T> random_matrix(index rows, index cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<T> dist(-1, 1);
  Matrix<T> m = Matrix<T>::uninitialized(rows, cols);
  for (index k = 0; k < m.size(); ++k) m.data()[k] = dist(rng);
  return m;
}

// Bit-for-bit equality (NaN matches NaN): what a lossless round trip must give.
template <Real T>
void expect_same(const Matrix<T>& got, const Matrix<T>& want) {
  ASSERT_EQ(got.rows(), want.rows());
  ASSERT_EQ(got.cols(), want.cols());
  for (index j = 0; j < want.cols(); ++j)
    for (index i = 0; i < want.rows(); ++i) {
      if (std::isnan(want(i, j)))
        ASSERT_TRUE(std::isnan(got(i, j))) << "at (" << i << ", " << j << ")";
      else
        ASSERT_EQ(got(i, j), want(i, j)) << "at (" << i << ", " << j << ")";
    }
}

// Runs `f`, which must raise a ParseError naming `path` and containing `fault`, with exit code 3.
template <class F>
std::optional<ParseError> expect_parse_error(F&& f, const std::string& path, const std::string& fault) {
  try {
    f();
  } catch (const ParseError& e) {
    EXPECT_TRUE(contains(e.what(), path));
    EXPECT_TRUE(contains(e.what(), fault));
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    return e;
  }
  ADD_FAILURE() << "no ParseError; expected one about: " << fault;
  return std::nullopt;
}

}  // namespace linv::testing
