// The table behind io::remove_temporary_files(): see src/io/temporary_files.hpp.
#include "io/temporary_files.hpp"

#include <limits.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "linv/io.hpp"

namespace linv::io {
namespace {

// Each entry moves free -> filling (its owner copies the path) -> listed -> free when the owner is done;
// the handler takes listed entries to removing and keeps them (the process is about to end), so an owner
// never reuses an entry whose path the handler may still be reading.
enum State : int { kFree, kFilling, kListed, kRemoving };

struct Entry {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
// Signal handlers may use lock-free atomics only.
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

// More writes at once than this in one process are possible but not listed.
constexpr int kEntries = 64;
// Zero-initialised static storage: nothing to construct, nothing allocated when a signal arrives.
Entry entries[kEntries];
std::atomic<bool> removed{false};

}  // namespace

namespace detail {

int list_temporary(const std::string& path) noexcept {
  if (path.size() >= sizeof(Entry::path)) return -1;
  for (int i = 0; i < kEntries; ++i) {
    int expected = kFree;
    if (!entries[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(entries[i].path, path.c_str(), path.size() + 1);
    entries[i].state.store(kListed);  // publishes the whole path to the handler
    return i;
  }
  return -1;
}

void forget_temporary(int entry) noexcept {
  if (entry < 0) return;
  // Fails only when the handler holds the entry, which it never gives back: the process is ending.
  int expected = kListed;
  entries[entry].state.compare_exchange_strong(expected, kFree);
}

bool temporary_files_removed() noexcept { return removed.load(); }

}  // namespace detail

void remove_temporary_files() noexcept {
  // First, so that a file whose creation this scan misses is removed by its own thread (AtomicFile checks
  // temporary_files_removed() after creating it).
  removed.store(true);
  for (Entry& e : entries) {
    int expected = kListed;
    if (e.state.compare_exchange_strong(expected, kRemoving)) ::unlink(e.path);
  }
}

}  // namespace linv::io
