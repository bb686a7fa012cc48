// Reductions across a warp and across a block, for the kernels of this backend: one atomic per warp where a
// kernel would otherwise make one per thread on a single address (tens of millions for a matrix of order
// 8192, serialized). The sums add in a fixed order, so a kernel's result does not change from run to run.
// Included by .cu files only.
#pragma once

namespace linv::cuda {

// The sum of v over the warp, lane 0's result broadcast: every lane gets the same bits, so branches on it
// stay uniform (a butterfly would sum in a different order on each lane).
template <class V>
__device__ V warp_sum(V v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  return __shfl_sync(0xffffffffu, v, 0);
}

// The largest (smallest) v over the warp, in lane 0 (order does not matter to them). Every lane must call it.
template <class V>
__device__ V warp_max(V v) {
  for (int o = 16; o > 0; o /= 2) v = max(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}
template <class V>
__device__ V warp_min(V v) {
  for (int o = 16; o > 0; o /= 2) v = min(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}

// Whether this thread is lane 0 of its warp, for a block of any shape (threads numbered x fastest).
__device__ inline bool first_lane() { return (threadIdx.x + threadIdx.y * blockDim.x) % 32 == 0; }

// The sum of v over the block (blockDim.x a multiple of 32), in every thread; `shared` holds a value per
// warp. Every thread of the block must call it.
template <class V>
__device__ V block_sum(V v, V* shared) {
  v = warp_sum(v);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  V total = 0;
  for (int w = 0; w < static_cast<int>(blockDim.x) / 32; ++w) total += shared[w];
  return total;
}

}  // namespace linv::cuda
