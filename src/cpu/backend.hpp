// The CPU backend: every kernel family on host memory, OpenBLAS/LAPACK and plain C++ (the oracle the
// other backends are tested against). src/dispatch/registry.cpp and runtime.cpp hand it out; the families
// below are defined one per file, and the registry makes one kernels::Backend of them.
#pragma once

#include "kernels/backend.hpp"
#include "kernels/runtime.hpp"

namespace linv::cpu {

const kernels::Runtime& runtime();  // runtime.cpp, in linv_core

LINV_KERNEL_FAMILY_ACCESSORS;  // one per family file: dense.cpp (and mixed), vectors.cpp, ..., imaging.cpp

}  // namespace linv::cpu
