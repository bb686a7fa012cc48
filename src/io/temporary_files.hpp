// The temporary files of the writes in progress (AtomicFile), listed where a signal handler can find
// them: a fixed table of paths claimed and released with lock-free atomic operations only, so that
// io::remove_temporary_files() (include/linv/io.hpp) may run inside a handler of a fatal signal.
#pragma once

#include <string>

namespace linv::io::detail {

// Lists `path` (absolute, so that a change of directory does not matter) before the file is created, so
// no moment exists where it is on disk but unknown to the handler. Returns the entry to pass to
// forget_temporary, or -1 when the table is full or the path too long: that file is then left behind by a
// fatal signal, nothing worse.
int list_temporary(const std::string& path) noexcept;

// Drops the entry once its file has been renamed into place or removed; -1 is ignored.
void forget_temporary(int entry) noexcept;

// Whether remove_temporary_files() has run: a file created after it started must be removed by the
// thread that created it (the process is ending).
bool temporary_files_removed() noexcept;

}  // namespace linv::io::detail
