// main for the tests that run as every process of a job (test_distributed): an MPI job under mpiexec, or,
// with LINV_TEST_LOCAL_JOB=<devices> ("cpu,cpu,cpu", "cuda:0,cuda:1"), a job of one process per device that
// linv starts itself (Grid::local: the other processes run this program again). A job on more GPUs than
// this machine has is skipped, saying so. One random seed for the whole job (the root's, or
// LINV_TEST_SEED), the root's GoogleTest output, and every other process's failures, each prefixed with its
// rank. The job fails when any process does.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "linv/distributed.hpp"
#include "support/testing.hpp"

namespace linv::testing {
namespace {
std::optional<dist::Grid> the_grid;
}
const dist::Grid& job_grid() { return *the_grid; }
}  // namespace linv::testing

namespace {

class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[process %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.summary());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  if (const char* local = std::getenv("LINV_TEST_LOCAL_JOB")) {
    std::vector<linv::Device> devices;
    try {
      for (std::string list = local; !list.empty();) {
        const std::size_t comma = list.find(',');
        devices.push_back(linv::Device::parse(list.substr(0, comma)));
        list = comma == std::string::npos ? "" : list.substr(comma + 1);
      }
    } catch (const linv::DeviceError& e) {
      std::printf("linv tests: SKIPPED, a job on %s needs devices this machine lacks: %s\n", local, e.what());
      return 0;
    }
    linv::testing::the_grid = linv::dist::Grid::local(devices);
  } else {
    linv::testing::the_grid = linv::dist::Grid::world();
  }
  const linv::dist::Grid& grid = *linv::testing::the_grid;
  unsigned long long seed = grid.is_root() ? linv::testing::run_seed() : 0;
  grid.broadcast(&seed, sizeof seed, 0);
  setenv("LINV_TEST_SEED", std::to_string(seed).c_str(), /*overwrite=*/1);  // before anyone else asks
  ::testing::InitGoogleTest(&argc, argv);
  if (grid.is_root()) {
    std::printf("linv tests: %s, random seed %llu (replay with LINV_TEST_SEED=%llu)\n", grid.describe().c_str(),
                static_cast<unsigned long long>(linv::testing::run_seed()),
                static_cast<unsigned long long>(linv::testing::run_seed()));
  } else {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(grid.rank()));
  }
  const int result = RUN_ALL_TESTS();
  return grid.max(result != 0 ? 1.0 : 0.0) != 0 ? 1 : 0;
}
