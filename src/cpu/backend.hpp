// The CPU backend: every kernel family on host memory, OpenBLAS/LAPACK and plain C++ (the oracle the
// other backends are tested against). src/dispatch/registry.cpp and runtime.cpp hand it out; the families
// below are defined one per file, and the registry makes one kernels::Backend of them.
#pragma once

#include "kernels/backend.hpp"
#include "kernels/runtime.hpp"

namespace linv::cpu {

const kernels::Runtime& runtime();  // runtime.cpp, in linv_core

template <Real T>
const kernels::Dense<T>& dense();  // dense.cpp
const kernels::Mixed& mixed();     // dense.cpp
template <Real T>
const kernels::Vectors<T>& vectors();  // vectors.cpp
template <Real T>
const kernels::Batched<T>& batched();  // batched.cpp
template <Real T>
const kernels::Wls<T>& wls();  // wls.cpp
template <Real T>
const kernels::Slam<T>& slam();  // slam.cpp
template <Real T>
const kernels::Fmri<T>& fmri();      // fmri.cpp, with the passes of adl.cpp and parafac2.cpp:
template <Real T>
std::unique_ptr<kernels::AdlSteps<T>> adl_steps(ConstMatrixView<T> X, Matrix<T> D0, ConstMatrixView<T> task,
                                                kernels::AdlConstraints constraints,
                                                   const kernels::GridSum* sum);
template <Real T>
std::unique_ptr<kernels::Parafac2Steps<T>> parafac2_steps(const std::vector<ConstMatrixView<T>>& slabs,
                                                          const kernels::SlabShare& share);
const kernels::Imaging& imaging();  // imaging.cpp

}  // namespace linv::cpu
