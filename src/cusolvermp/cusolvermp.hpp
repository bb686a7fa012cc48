// The cuSOLVERMp engine (src/cusolvermp/distributed.cpp), for src/dispatch/registry.cpp.
#pragma once

#include <memory>
#include <string>

#include "kernels/distributed.hpp"

namespace linv::cusolvermp {

template <Real T>
const kernels::Distributed<T>& distributed();
std::string version();  // "cuSOLVERMp 0.9.1"
// Starts what every job of GPUs needs (a stream and an NCCL communicator per process), collectively; the
// communicator is made in the background.
void start_job(const dist::Grid& grid);
// Sums over the grid's GPUs by NCCL.
std::unique_ptr<kernels::GridSum> grid_sum(const dist::Grid& grid);

}  // namespace linv::cusolvermp
