// cuBLAS's and cuSOLVER's view of linv's complex types, for the complex families (complex_dense.cpp,
// complex_batched.cpp): std::complex<float/double> as cuComplex/cuDoubleComplex (the same layout), and the
// single- or double-precision routine of a pair.
#pragma once

#include <cuComplex.h>

#include <complex>
#include <type_traits>

#include "linv/matrix.hpp"

namespace linv::cuda {

template <Complex T>
constexpr bool kSingle = std::is_same_v<T, std::complex<float>>;

// cuBLAS's types of T (layout-compatible with std::complex).
template <Complex T>
using Cu = std::conditional_t<kSingle<T>, cuComplex, cuDoubleComplex>;

template <Complex T>
Cu<T>* cu(T* p) {
  return reinterpret_cast<Cu<T>*>(p);
}
template <Complex T>
const Cu<T>* cu(const T* p) {
  return reinterpret_cast<const Cu<T>*>(p);
}
template <Complex T>
Cu<T>* cu_mutable(const T* p) {  // cuSOLVER's const-incorrect signatures
  return reinterpret_cast<Cu<T>*>(const_cast<T*>(p));
}

// The single- or double-precision routine of a cuBLAS/cuSOLVER pair, for T.
template <Complex T, class C, class Z>
constexpr auto pick(C single, Z twin) {
  if constexpr (kSingle<T>)
    return single;
  else
    return twin;
}

}  // namespace linv::cuda
