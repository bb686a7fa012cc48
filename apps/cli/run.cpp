// The linv command-line tool. Exit codes (also in README.md):
//   0 success, 2 usage (bad flags, shapes that do not fit), 3 unreadable or malformed input or an output
//   that cannot be written, 4 numerical failure (singular, not positive definite, no convergence), 5 device
//   failure or out of memory, 130 interrupted (Ctrl-C: see signals.cpp), 1 internal error (a bug: please
//   report it).
#include "run.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <new>
#include <string>

#include "common.hpp"
#include "linv/io.hpp"

namespace linv::cli {

int run(int argc, char** argv) {
  CLI::App app{"linv: fast linear inverse problems on GPUs, correct everywhere (CPU backend on LAPACK)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", linv::build_info().version);
  app.footer(
      "Exit codes: 0 success, 2 usage, 3 unreadable or malformed input or unwritable output, 4 numerical "
      "failure (singular, not positive definite, no convergence), 5 device failure or out of memory, "
      "130 interrupted (Ctrl-C).");
  const auto tables = {dense_commands(),    misc_commands(), bench_commands(), wls_commands(),
                       imaging_commands(), fmri_commands(), adl_commands(),   parafac2_commands()};
  for (bool top_level : {true, false})  // the parents first, then their subcommands
    for (std::span<const Command> table : tables)
      for (const Command& c : table)
        if (std::string(c.parent).empty() == top_level) {
          CLI::App& parent = top_level ? app : *app.get_subcommand(c.parent);
          c.define(*parent.add_subcommand(c.name, c.description));
        }
  try {
    // A command's outputs are renamed into place together once it has succeeded; a failure part-way
    // (a numerical error, an output that cannot be written) leaves every earlier target as it was.
    io::OutputTransaction outputs;
    app.parse(argc, argv);
    outputs.commit();
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::usage);
  } catch (const Error& e) {
    std::fprintf(stderr, "linv: error: %s\n", e.what());
    return static_cast<int>(e.exit_code());
  } catch (const std::bad_alloc&) {
    // Matrices name the bytes they needed (OutOfDeviceMemory); this is any other allocation.
    std::fprintf(stderr, "linv: error: out of host memory (an allocation failed)\n");
    return static_cast<int>(ExitCode::device);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "linv: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace linv::cli
