// The linv command-line tool. Exit codes (also in README.md):
//   0 success, 2 usage (bad flags, shapes that do not fit), 3 unreadable or malformed input,
//   4 numerical failure (singular, not positive definite, no convergence), 5 device failure or out of memory,
//   1 internal error (a bug: please report it).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <new>
#include <string>

#include "common.hpp"

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a line at a time even into a pipe: benchmark drivers read along
  CLI::App app{"linv: fast linear inverse problems on GPUs, correct everywhere (CPU backend on LAPACK)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", linv::build_info().version);
  app.footer(
      "Exit codes: 0 success, 2 usage, 3 unreadable or malformed input, 4 numerical failure "
      "(singular, not positive definite, no convergence), 5 device failure or out of memory.");
  namespace cli = linv::cli;
  const auto tables = {cli::dense_commands(), cli::misc_commands(),    cli::bench_commands(), cli::wls_commands(),
                       cli::imaging_commands(), cli::fmri_commands(), cli::adl_commands(),  cli::parafac2_commands()};
  for (bool top_level : {true, false})  // the parents first, then their subcommands
    for (std::span<const cli::Command> table : tables)
      for (const cli::Command& c : table)
        if (std::string(c.parent).empty() == top_level) {
          CLI::App& parent = top_level ? app : *app.get_subcommand(c.parent);
          c.define(*parent.add_subcommand(c.name, c.description));
        }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(linv::ExitCode::usage);
  } catch (const linv::Error& e) {
    std::fprintf(stderr, "linv: error: %s\n", e.what());
    return static_cast<int>(e.exit_code());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "linv: error: out of memory\n");
    return static_cast<int>(linv::ExitCode::device);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "linv: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
