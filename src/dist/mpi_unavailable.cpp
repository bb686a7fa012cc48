// A build without MPI: no job of several processes can be formed, and Grid::world says how to get one.
#include "dist/communicator.hpp"
#include "linv/errors.hpp"

namespace linv::dist::detail {

std::shared_ptr<const Communicator> mpi_world() {
  throw DeviceError(
      "this linv was built without MPI, so it cannot distribute a matrix over processes: install Open MPI and "
      "ScaLAPACK (Debian: libopenmpi-dev libscalapack-openmpi-dev) and build again (LINV_MPI=AUTO finds them)");
}

}  // namespace linv::dist::detail
