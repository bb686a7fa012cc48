// The cuSOLVERMp engine (src/cusolvermp/distributed.cpp), for src/kernels/registry.cpp.
#pragma once

#include <string>

#include "kernels/distributed.hpp"

namespace linv::cusolvermp {

template <Real T>
const kernels::Distributed<T>& distributed();
std::string version();  // "cuSOLVERMp 0.9.1"

}  // namespace linv::cusolvermp
