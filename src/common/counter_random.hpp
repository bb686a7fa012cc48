// The counter-based generator behind linv::random_uniform: entry (i, j) of a rows x cols matrix is
// counter_uniform(seed, j * rows + i), so a seed gives the same matrix on every device and however the
// matrix is split over processes. SplitMix64's finaliser of (seed * golden ratio + position), 53 bits into
// [0, 1). Compiled for the host and, in .cu files, for the GPU too.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace linv::kernels {

LINV_HOST_DEVICE inline double counter_uniform(std::uint64_t seed, std::uint64_t position) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + position;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// lo + (hi - lo) u, rounded the same way on the host and on the GPU (whose compiler would otherwise fuse
// the multiply and add, and the matrices would differ in their last bits).
LINV_HOST_DEVICE inline double uniform_between(double lo, double hi, double u) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(lo, __dmul_rn(__dadd_rn(hi, -lo), u));
#else
  return lo + (hi - lo) * u;
#endif
}

}  // namespace linv::kernels
