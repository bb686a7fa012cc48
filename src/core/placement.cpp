// Where an operation runs when the caller leaves it to linv (include/linv/operation.hpp). In linv_lib,
// not linv_core: the backends say what they run (kernels::Dense::runs), and only the library has them.
#include "linv/operation.hpp"

#include <optional>

#include "kernels/backend.hpp"

namespace linv {
namespace {

// The dense method an operation cannot do without, if a backend may lack it.
std::optional<kernels::Optional> needs(Operation op, Method method) {
  if (method == Method::GaussSeidel) return kernels::Optional::GaussSeidel;
  switch (op) {
    case Operation::LeastSquares: return kernels::Optional::LeastSquares;
    case Operation::Pseudoinverse: return kernels::Optional::Svd;
    default: return std::nullopt;
  }
}

}  // namespace

Device auto_device(Operation op, index size, Method method) {
  const Device best = Device::best();
  if (const auto method_needed = needs(op, method); method_needed && !kernels::dense<double>(best).runs(*method_needed))
    return Device::cpu();
  index worthwhile = 512;  // matrix order: below it a one-shot call spends longer starting the GPU than computing
  switch (op) {
    // one pass over J, which its transfer to the GPU costs already: the GPU pays in loops that keep J there
    case Operation::SlamStep:
    case Operation::SlamPseudoinverse: return Device::cpu();
    case Operation::BatchedInverse:
    case Operation::BatchedSolve: worthwhile = index{1} << 20; break;  // elements of the batch
    case Operation::SparseCoding:
    case Operation::Ksvd:
    case Operation::Adl:
    case Operation::Parafac2: worthwhile = 16384; break;  // signals (voxels)
    default: break;
  }
  return size >= worthwhile ? best : Device::cpu();
}

Device choose_device(std::string_view spec, Operation op, index size, Method method) {
  // a missing GPU or CUDA build is reported by parse
  return spec == "auto" ? auto_device(op, size, method) : Device::parse(spec);
}

}  // namespace linv
