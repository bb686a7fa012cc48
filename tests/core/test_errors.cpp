#include <gtest/gtest.h>

#include "linv/errors.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

using testing::contains;

TEST(Errors, EachKindMapsToItsExitCode) {
  EXPECT_EQ(InvalidArgument("x").exit_code(), ExitCode::usage);
  EXPECT_EQ(ShapeMismatch("solve", 3, 3, 4, 1).exit_code(), ExitCode::usage);
  EXPECT_EQ(InputError("x").exit_code(), ExitCode::bad_input);
  EXPECT_EQ(ParseError("a.npy", 10, -1, "bad").exit_code(), ExitCode::bad_input);
  EXPECT_EQ(NonFiniteInput("A", 0, 0, 1.0 / 0.0).exit_code(), ExitCode::bad_input);
  EXPECT_EQ(SingularMatrix(3, 0).exit_code(), ExitCode::numerical);
  EXPECT_EQ(NotPositiveDefinite(2).exit_code(), ExitCode::numerical);
  EXPECT_EQ(NoConvergence("gs", 10, 1e-3, 1e-12, "limit").exit_code(), ExitCode::numerical);
  EXPECT_EQ(DeviceError("x").exit_code(), ExitCode::device);
  EXPECT_EQ(OutOfDeviceMemory("cuda:0", 1 << 30, 1 << 20).exit_code(), ExitCode::device);
}

TEST(Errors, MessagesNameTheFault) {
  EXPECT_TRUE(contains(ShapeMismatch("solve: A and B", 3, 3, 4, 1).what(), "3x3 and 4x1"));
  EXPECT_TRUE(contains(ParseError("a.npy", 10, -1, "bad magic").what(), "a.npy: byte 10: bad magic"));
  EXPECT_TRUE(contains(ParseError("a.mtx", -1, 7, "bad entry").what(), "a.mtx:7: bad entry"));
  EXPECT_TRUE(contains(SingularMatrix(3, 0).what(), "pivot 3 is exactly zero"));
  EXPECT_TRUE(contains(SingularMatrix(5, 1e-20).what(), "working precision"));
  EXPECT_TRUE(contains(NotPositiveDefinite(2).what(), "order 2"));
  EXPECT_TRUE(contains(NonFiniteInput("A", 1, 2, 0.0 / 0.0).what(), "NaN at row 2, column 3"));
  const OutOfDeviceMemory oom("cuda:0", 3ull << 30, 1ull << 30);
  EXPECT_TRUE(contains(oom.what(), "3072.0 MiB")) << oom.what();
  EXPECT_EQ(oom.needed(), 3ull << 30);
}

}  // namespace
}  // namespace linv
