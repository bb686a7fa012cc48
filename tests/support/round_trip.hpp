// What the format tests (tests/io) share: the element types they run over, and the round trip every
// matrix writer must pass.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "linv/io.hpp"
#include "linv/matrix.hpp"
#include "support/files.hpp"
#include "support/testing.hpp"

namespace linv::testing {

using RealTypes = ::testing::Types<float, double>;

// Writes a random matrix of each shape that catches an edge (empty either way, 1x1, odd, wider than a block)
// to `name` in a fresh directory, and hands the path and the matrix to check(path, A), which reads the file
// back and compares. `salt` keeps each format's seeds apart. The write must leave no temporary file behind.
template <Real T, class Check>
void round_trip_shapes(const std::string& name, std::uint64_t salt, Check&& check) {
  TempDir dir;
  const std::pair<index, index> shapes[] = {{0, 0}, {1, 1}, {3, 0}, {0, 3}, {5, 7}, {64, 33}};
  for (std::size_t s = 0; s < std::size(shapes); ++s) {
    const auto [rows, cols] = shapes[s];
    const std::uint64_t seed = case_seed(salt + s);
    LINV_TRACE_SEED(seed);
    SCOPED_TRACE(shape_string(rows, cols));
    const Matrix<T> A = random_matrix<T>(rows, cols, seed);
    const std::string path = dir.file(name);
    io::write_matrix<T>(path, A.view());
    check(path, A);
    if (::testing::Test::HasFatalFailure()) return;  // as an ASSERT in the loop itself would
    EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{name}) << "temporary files left behind";
  }
}

}  // namespace linv::testing
