// How the processes of a distributed job talk to each other on the host side: ranks, small collectives and
// point-to-point messages. The engines move their own bulk data (ScaLAPACK over MPI, cuSOLVERMp over
// NCCL); this carries what linv itself needs: agreeing on errors, norms and pivots, moving tiles for
// scatter and gather, and bootstrapping an engine's own communicator.
//
// One implementation per way a job is started: MPI (src/dist/mpi.cpp, for mpirun; a build without MPI has
// none, src/dist/mpi_unavailable.cpp, and Grid::world says so), and linv's own launcher for one machine
// (src/dist/local.cpp, Grid::local), which needs nothing but POSIX.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace linv::dist::detail {

enum class Reduction { sum, max, min };

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This process's rank among the job's processes on its host, and their number: which GPU it takes.
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  virtual std::string name() const = 0;  // "Open MPI 4.1.4"
  // Whether the job is MPI_COMM_WORLD, which ScaLAPACK's BLACS grids are made from.
  virtual bool is_mpi_world() const = 0;

  virtual void barrier() const = 0;
  virtual void all_reduce(double* values, std::size_t count, Reduction op) const = 0;
  virtual void all_reduce(long long* values, std::size_t count, Reduction op) const = 0;
  virtual void broadcast(void* data, std::size_t bytes, int root) const = 0;
  // Matched pairs, in program order. linv's own uses (scatter, gather, agreeing on errors) always have the
  // root at one end, and the local launcher supports only those.
  virtual void send(int to, const void* data, std::size_t bytes) const = 0;
  virtual void receive(int from, void* data, std::size_t bytes) const = 0;
};

// The processes of MPI_COMM_WORLD, initialising MPI when the program has not (and finalising it at exit).
// Throws DeviceError when this linv was built without MPI.
std::shared_ptr<const Communicator> mpi_world();

// A job of `size` processes on this machine: in the calling program (rank 0), the other size - 1 are
// started by running this executable again with the same arguments; in those, this connects to rank 0.
std::shared_ptr<const Communicator> local_job(int size);

}  // namespace linv::dist::detail

namespace linv::kernels {
class GridSum;
}

namespace linv::dist {
class Grid;
namespace detail {
// Sums in host memory over the grid's communicator (kernels::grid_sum for CPU processes).
std::unique_ptr<kernels::GridSum> host_sum(const Grid& grid);
}  // namespace detail
}  // namespace linv::dist

namespace linv::dist::detail {

}  // namespace linv::dist::detail
