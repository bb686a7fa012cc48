// The linv command-line tool: linv::cli::run (run.cpp) is all of it.
#include <cstdio>

#include "common.hpp"
#include "run.hpp"

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a line at a time even into a pipe: benchmark drivers read along
  linv::cli::remove_temporary_files_on_stop_signals();
  return linv::cli::run(argc, argv);
}
