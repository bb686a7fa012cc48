// The communicator of jobs started by mpirun: MPI_COMM_WORLD (built when MPI is found; mpi_unavailable.cpp
// otherwise).
#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>

#include "dist/communicator.hpp"
#include "linv/errors.hpp"

namespace linv::dist::detail {
namespace {

void check(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw DeviceError(fmt::format("MPI {} failed: {}", what, std::string(text, static_cast<std::size_t>(length))));
}

// MPI counts are int: larger messages go in pieces.
constexpr std::size_t kPiece = std::size_t{1} << 30;

MPI_Op op_of(Reduction op) {
  switch (op) {
    case Reduction::sum: return MPI_SUM;
    case Reduction::max: return MPI_MAX;
    case Reduction::min: return MPI_MIN;
  }
  return MPI_SUM;
}

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

class MpiWorld final : public Communicator {
 public:
  MpiWorld() {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    MPI_Comm host;  // the processes sharing this host's memory
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host), "host split");
    check(MPI_Comm_rank(host, &local_rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(host, &local_size_), "MPI_Comm_size");
    MPI_Comm_free(&host);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    name_ = std::string(version, static_cast<std::size_t>(length));
    name_ = name_.substr(0, name_.find_first_of(",\n"));  // "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4"
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  std::string name() const override { return name_; }
  bool is_mpi_world() const override { return true; }

  void barrier() const override { check(MPI_Barrier(MPI_COMM_WORLD), "barrier"); }
  void all_reduce(double* values, std::size_t count, Reduction op) const override {
    check(MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE, op_of(op), MPI_COMM_WORLD),
          "reduction");
  }
  void all_reduce(long long* values, std::size_t count, Reduction op) const override {
    check(MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_LONG_LONG, op_of(op), MPI_COMM_WORLD),
          "reduction");
  }
  void broadcast(void* data, std::size_t bytes, int root) const override {
    auto* p = static_cast<char*>(data);
    for (std::size_t done = 0; done < bytes; done += kPiece)
      check(MPI_Bcast(p + done, static_cast<int>(std::min(kPiece, bytes - done)), MPI_BYTE, root, MPI_COMM_WORLD),
            "broadcast");
  }
  void send(int to, const void* data, std::size_t bytes) const override {
    const auto* p = static_cast<const char*>(data);
    for (std::size_t done = 0; done < bytes; done += kPiece)
      check(MPI_Send(p + done, static_cast<int>(std::min(kPiece, bytes - done)), MPI_BYTE, to, 0, MPI_COMM_WORLD),
            "send");
  }
  void receive(int from, void* data, std::size_t bytes) const override {
    auto* p = static_cast<char*>(data);
    for (std::size_t done = 0; done < bytes; done += kPiece)
      check(MPI_Recv(p + done, static_cast<int>(std::min(kPiece, bytes - done)), MPI_BYTE, from, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE),
            "receive");
  }

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string name_;
};

}  // namespace

std::shared_ptr<const Communicator> mpi_world() {
  static std::mutex mutex;
  static std::shared_ptr<const Communicator> world;
  const std::lock_guard<std::mutex> lock(mutex);
  if (world) return world;
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  if (!initialized) {
    int provided = 0;
    // linv's own threads (OpenBLAS, std::thread pools) make no MPI calls: the calling thread does them all.
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "initialisation");
    std::atexit(finalize_at_exit);
  }
  world = std::make_shared<MpiWorld>();
  return world;
}

}  // namespace linv::dist::detail
