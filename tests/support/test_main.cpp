// Shared main for linv's GoogleTest executables: prints the random seed of the run, so a failure can be
// replayed with LINV_TEST_SEED=<seed>.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "support/testing.hpp"

int main(int argc, char** argv) {
  // New device allocations start as NaN, so GPU routines that leave part of an output unwritten fail.
  setenv("LINV_POISON_DEVICE_MEMORY", "1", /*overwrite=*/0);
  testing::InitGoogleTest(&argc, argv);
  std::printf("linv tests: random seed %llu (replay with LINV_TEST_SEED=%llu)\n",
              static_cast<unsigned long long>(linv::testing::run_seed()),
              static_cast<unsigned long long>(linv::testing::run_seed()));
  return RUN_ALL_TESTS();
}
