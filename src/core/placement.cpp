// Where an operation runs when the caller leaves it to linv (include/linv/operation.hpp). In linv_lib,
// not linv_core: the backends say what they run (kernels::Dense::runs), and only the library has them.
#include "linv/operation.hpp"

#include <optional>
#include <string>
#include <vector>

#include "kernels/backend.hpp"

namespace linv {
namespace {

// The dense method an operation cannot do without, if a backend may lack it (kUserFacing lists them all
// by the names users call them).
std::optional<kernels::Optional> needs(Operation op, Method method) {
  if (method == Method::GaussSeidel) return kernels::Optional::GaussSeidel;
  switch (op) {
    case Operation::LeastSquares: return kernels::Optional::LeastSquares;
    case Operation::Pseudoinverse: return kernels::Optional::Svd;
    default: return std::nullopt;
  }
}

struct UserFacing {
  Operation operation;
  Method method;
  const char* name;
};
constexpr UserFacing kUserFacing[] = {
    {Operation::LeastSquares, Method::Auto, "lstsq"},
    {Operation::Pseudoinverse, Method::Auto, "pinv"},
    {Operation::Solve, Method::GaussSeidel, "--method gauss-seidel"},
};

bool runs_there(Device device, Operation op, Method method) {
  const auto method_needed = needs(op, method);
  return !method_needed || kernels::dense<double>(device).runs(*method_needed);
}

}  // namespace

std::vector<std::string> cpu_only_on(Device device) {
  std::vector<std::string> names;
  for (const UserFacing& u : kUserFacing)
    if (!runs_there(device, u.operation, u.method)) names.emplace_back(u.name);
  return names;
}

Device auto_device(Operation op, index size, Method method) {
  const Device best = Device::best();
  if (!runs_there(best, op, method)) return Device::cpu();
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
