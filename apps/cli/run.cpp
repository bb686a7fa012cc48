// The linv command-line tool. Exit codes (also in README.md):
//   0 success, 2 usage (bad flags, shapes that do not fit), 3 unreadable or malformed input or an output
//   that cannot be written, 4 numerical failure (singular, not positive definite, no convergence), 5 device
//   failure or out of memory, 130 interrupted (Ctrl-C: see signals.cpp), 1 internal error (a bug: please
//   report it).
#include "run.hpp"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "linv/io.hpp"

namespace linv::cli {

namespace {

// Levenshtein distance, for suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The candidate closest to `word`, if it is close enough to be what was meant: within a third of its
// length in edits (at least 1), or a prefix of it.
std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(1, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = c.starts_with(word) && word.size() >= 2 ? 0 : edit_distance(word, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  return best;
}

// Mistyped commands and long options, named with a suggestion before anything else is said about the
// command line (CLI11 would say "A subcommand is required" for `linv inve`, and report a missing
// --output before an unknown --methd). Returns the message, or nothing where every word is known.
std::string unknown_words(CLI::App& app, int argc, char** argv) {
  CLI::App* command = &app;
  std::string path = "linv";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;  // what follows is positional
    if (word.starts_with("--")) {
      const std::string name = word.substr(2, word.find('=') - 2);
      std::vector<std::string> names;
      bool known = false;
      for (const CLI::App* level = command; level != nullptr && !known; level = level->get_parent())
        for (const CLI::Option* o : level->get_options()) {
          for (const std::string& long_name : o->get_lnames()) {
            known = known || long_name == name;
            names.push_back(long_name);
          }
        }
      if (known) {
        // a top-level option's value (linv --threads 4 solve ...) is not a command
        if (command == &app && word.find('=') == std::string::npos && i + 1 < argc) {
          const CLI::Option* o = app.get_option_no_throw("--" + name);
          if (o != nullptr && o->get_expected_min() > 0) ++i;
        }
        continue;
      }
      const std::string guess = closest(name, names);
      return fmt::format("unknown option '--{}' for '{}'{}", name, path,
                         guess.empty() ? "" : fmt::format("; did you mean '--{}'?", guess));
    }
    if (word.starts_with("-")) continue;  // a short option, or a negative number as a value
    const std::vector<CLI::App*> subcommands = command->get_subcommands({});
    if (subcommands.empty()) continue;  // a positional argument (or an option's value)
    bool found = false;
    std::vector<std::string> names;
    for (CLI::App* sub : subcommands) {
      names.push_back(sub->get_name());
      if (sub->get_name() == word) {
        command = sub, path += " " + word, found = true;
        break;
      }
    }
    if (found) continue;
    if (command != &app) continue;  // an option's value or a positional of a command with subcommands
    const std::string guess = closest(word, names);
    return fmt::format("unknown command '{}'{} (linv --help lists them)", word,
                       guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess));
  }
  return {};
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"linv: fast linear inverse problems on GPUs, correct everywhere (CPU backend on LAPACK)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", linv::build_info().version);
  // Accepted before or after the command (every command falls through to it); applied before any command
  // runs, in every process of a distributed job.
  app.fallthrough();
  app.add_option_function<int>(
         "--threads", [](int threads) { set_cpu_threads(threads); },
         "CPU threads for linv's host work and OpenBLAS (default: OMP_NUM_THREADS, else the CPUs this process may "
         "use, container limits included)");
  app.footer(
      "Exit codes: 0 success, 2 usage, 3 unreadable or malformed input or unwritable output, 4 numerical "
      "failure (singular, not positive definite, no convergence), 5 device failure or out of memory, "
      "130 interrupted (Ctrl-C).");
  const auto tables = {dense_commands(),    misc_commands(), bench_commands(), wls_commands(),
                       imaging_commands(), fmri_commands(), adl_commands(),   parafac2_commands()};
  forget_file_options();  // the options registered below are this command line's
  for (bool top_level : {true, false})  // the parents first, then their subcommands
    for (std::span<const Command> table : tables)
      for (const Command& c : table)
        if (std::string(c.parent).empty() == top_level) {
          CLI::App& parent = top_level ? app : *app.get_subcommand(c.parent);
          c.define(*parent.add_subcommand(c.name, c.description));
        }
  // after every option is read, before any command runs: outputs that would destroy data
  app.parse_complete_callback(check_distinct_files);
  if (const std::string unknown = unknown_words(app, argc, argv); !unknown.empty()) {
    std::fprintf(stderr, "linv: error: %s\n", unknown.c_str());
    return static_cast<int>(ExitCode::usage);
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
    if (!errors_silenced()) std::fprintf(stderr, "linv: error: %s\n", e.what());
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
