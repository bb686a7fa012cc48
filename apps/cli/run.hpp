// The linv command-line tool as a function: main() calls it once, the CLI's fuzz target (tests/fuzz) many
// times in one process.
#pragma once

namespace linv::cli {

// Parses the command line, runs the command and returns the exit code (linv::ExitCode; 0 on success). Every
// failure, CLI11's own parse errors included, comes back as a code with its message on stderr: nothing here
// calls exit().
int run(int argc, char** argv);

}  // namespace linv::cli
