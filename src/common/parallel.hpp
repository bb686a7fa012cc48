// Splitting independent work items across the CPU's threads (no library: a few std::jthreads).
#pragma once

#include <algorithm>
#include <thread>
#include <vector>

#include "linv/device.hpp"
#include "linv/matrix.hpp"

namespace linv::detail {

// Runs work(first, last) over [0, count) split across linv's CPU threads (cpu_threads(), this one
// included), each taking at least `minimum` items, or on this thread alone when there are too few to gain.
// `work` must not throw (an exception in another thread would end the process).
template <class Work>
void in_parallel(index count, index minimum, const Work& work) {
  const index threads = std::clamp<index>(count / std::max<index>(minimum, 1), 1, static_cast<index>(cpu_threads()));
  const index per = (count + threads - 1) / threads;
  std::vector<std::jthread> pool;
  for (index t = 1; t < threads; ++t) pool.emplace_back(work, std::min(count, t * per), std::min(count, (t + 1) * per));
  work(0, std::min(count, per));
}

}  // namespace linv::detail
