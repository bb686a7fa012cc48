// LINV_HOST_DEVICE: a function nvcc compiles for the GPU too, for definitions the host and the GPU kernels
// share (src/common/stencil.hpp, counter_random.hpp).
#pragma once

#ifdef __CUDACC__
#define LINV_HOST_DEVICE __host__ __device__
#else
#define LINV_HOST_DEVICE
#endif
