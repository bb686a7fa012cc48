// What linv does when it is stopped: Ctrl-C (SIGINT), SIGTERM or a closed terminal (SIGHUP) remove the
// temporary files of the outputs being written, then linv dies by the signal, as it would without a
// handler, so that the shell sees it (exit status 128 + the signal's number: 130 for Ctrl-C) and a script
// running linv stops too. SIGKILL cannot be caught: it may leave a temporary file (".NAME.tmp-PID-XXXX"),
// never a partial output.
#include <signal.h>

#include "common.hpp"

namespace linv::cli {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Async-signal-safe throughout: io::remove_temporary_files uses lock-free atomics and unlink.
void remove_temporary_files_and_die(int signal_number) {
  io::remove_temporary_files();
  ::signal(signal_number, SIG_DFL);
  // Blocked while this handler runs, the signal stays pending and ends the process, by the default
  // action, as the handler returns.
  ::raise(signal_number);
}

}  // namespace

void remove_temporary_files_on_stop_signals() {
  struct sigaction action {};
  action.sa_handler = remove_temporary_files_and_die;
  sigemptyset(&action.sa_mask);
  for (int s : kStopSignals) sigaddset(&action.sa_mask, s);  // one handler at a time
  for (int s : kStopSignals) {
    struct sigaction previous {};
    // A signal ignored by whoever started linv (nohup, a background job of a script) stays ignored.
    if (::sigaction(s, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
    ::sigaction(s, &action, nullptr);
  }
  // Past the file-size limit (ulimit -f) a write then fails with EFBIG, which linv reports, removing the
  // partial file, instead of dying by SIGXFSZ and leaving it behind.
  ::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace linv::cli
