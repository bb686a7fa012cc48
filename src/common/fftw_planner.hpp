// FFTW's planner keeps global state: making and destroying plans is not thread-safe, while executing a
// plan is (FFTW manual, "Thread safety"). Every linv file that makes or destroys plans holds this lock.
#pragma once

#include <mutex>

namespace linv::detail {

inline std::mutex& fftw_planner_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace linv::detail
