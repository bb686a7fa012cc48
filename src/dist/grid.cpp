// Process grids: the communicator's ranks on rows x cols, the collectives linv needs, and agreeing on
// errors (include/linv/distributed.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "dist/communicator.hpp"
#include "kernels/distributed.hpp"
#include "linv/distributed.hpp"

namespace linv::dist {

Grid::Grid(std::shared_ptr<const detail::Communicator> comm, int rows, int cols, Device device)
    : comm_(std::move(comm)), rank_(comm_ ? comm_->rank() : 0), rows_(rows), cols_(cols), device_(device) {}

namespace {

// rows x cols for `size` processes: as given, or the most nearly square grid with rows <= cols.
std::pair<int, int> grid_shape(int size, int rows, int cols, const std::string& launch) {
  if (rows < 0 || cols < 0 || (rows == 0) != (cols == 0))
    throw InvalidArgument(fmt::format("a process grid needs both its rows and its columns (got {} x {})", rows, cols));
  if (rows == 0) {  // the most nearly square grid, rows <= cols
    rows = static_cast<int>(std::sqrt(static_cast<double>(size)));
    while (size % rows != 0) --rows;
    cols = size / rows;
  }
  if (static_cast<long long>(rows) * cols != size)
    throw InvalidArgument(fmt::format("a {} x {} process grid needs {} processes; this job has {} ({})", rows, cols,
                                      static_cast<long long>(rows) * cols, size, launch));
  return {rows, cols};
}

}  // namespace

Grid Grid::world(int rows, int cols, Device::Kind place) {
  std::shared_ptr<const detail::Communicator> comm = detail::mpi_world();
  const auto [r, c] = grid_shape(comm->size(), rows, cols, fmt::format("mpirun -np {}", comm->size()));
  Device device = Device::cpu();
  if (place == Device::Kind::cuda) {
    const GpuList gpus = cuda_devices();
    if (gpus.gpus.empty()) throw DeviceError(fmt::format("no GPU for process {}: {}", comm->rank(), gpus.why_none));
    device = Device::cuda(comm->local_rank() % static_cast<int>(gpus.gpus.size()));
  }
  Grid grid(std::move(comm), r, c, device);
  kernels::start_job(grid);
  return grid;
}

Grid Grid::local(const std::vector<Device>& devices, int rows, int cols) {
  if (devices.empty()) throw InvalidArgument("a local job needs at least one device");
  const auto [r, c] = grid_shape(static_cast<int>(devices.size()), rows, cols, fmt::format("one per device of {}", devices.size()));
  std::shared_ptr<const detail::Communicator> comm = detail::local_job(static_cast<int>(devices.size()));
  const Device device = devices[static_cast<std::size_t>(comm->rank())];
  Grid grid(std::move(comm), r, c, device);
  kernels::start_job(grid);
  return grid;
}

index default_block(const Grid& grid) { return grid.device().is_cpu() ? 128 : 1024; }

std::string Grid::describe() const {
  return fmt::format("{} process{} ({} x {} grid), {}", size(), size() == 1 ? "" : "es", rows_, cols_,
                     comm_ ? comm_->name() : "no communicator");
}

void Grid::barrier() const { comm_->barrier(); }

double Grid::max(double value) const {
  comm_->all_reduce(&value, 1, detail::Reduction::max);
  return value;
}

double Grid::min(double value) const {
  comm_->all_reduce(&value, 1, detail::Reduction::min);
  return value;
}

void Grid::sum(double* values, std::size_t count) const { comm_->all_reduce(values, count, detail::Reduction::sum); }

double Grid::sum(double value) const {
  comm_->all_reduce(&value, 1, detail::Reduction::sum);
  return value;
}

void Grid::broadcast(void* data, std::size_t bytes, int root) const { comm_->broadcast(data, bytes, root); }

void Grid::broadcast(std::string& text, int root) const {
  long long length = static_cast<long long>(text.size());
  comm_->broadcast(&length, sizeof length, root);
  text.resize(static_cast<std::size_t>(length));
  comm_->broadcast(text.data(), text.size(), root);
}

void Grid::agree(int code, const std::string& message) const {
  // The lowest failing rank speaks for all: its exit code and message go to every process.
  long long first = code != 0 ? rank_ : INT_MAX;
  comm_->all_reduce(&first, 1, detail::Reduction::min);
  if (first == INT_MAX) return;
  const int speaker = static_cast<int>(first);
  int shared_code = code;
  comm_->broadcast(&shared_code, sizeof shared_code, speaker);
  std::string text = message;
  broadcast(text, speaker);
  if (code != 0) return;  // this process throws its own error
  const std::string what = fmt::format("{} (on process {} of {})", text, speaker, size());
  switch (static_cast<ExitCode>(shared_code)) {
    case ExitCode::usage: throw InvalidArgument(what);
    case ExitCode::bad_input: throw InputError(what);
    case ExitCode::numerical: throw NumericalError(what);
    default: throw DeviceError(what);
  }
}

namespace detail {
namespace {

class HostSum final : public kernels::GridSum {
 public:
  explicit HostSum(const Grid& grid) : grid_(grid) {}
  void sum(double* values, std::size_t count, void*) const override {
    grid_.communicator().all_reduce(values, count, Reduction::sum);
  }
  void sum(float* values, std::size_t count, void*) const override {  // added in float64, rounded once
    std::vector<double> wide(values, values + count);
    grid_.communicator().all_reduce(wide.data(), count, Reduction::sum);
    std::copy(wide.begin(), wide.end(), values);
  }
  std::string name() const override { return grid_.communicator().name(); }

 private:
  Grid grid_;
};

}  // namespace

std::unique_ptr<kernels::GridSum> host_sum(const Grid& grid) { return std::make_unique<HostSum>(grid); }

}  // namespace detail

template <Real T>
Matrix<T> gather_columns(const Grid& grid, ConstMatrixView<T> mine) {
  Matrix<T> here = Matrix<T>::uninitialized(mine.rows(), mine.cols());
  copy<T>(mine, here.view());
  std::vector<double> counts(static_cast<std::size_t>(grid.size()), 0.0);
  counts[static_cast<std::size_t>(grid.rank())] = static_cast<double>(here.cols());
  grid.sum(counts.data(), counts.size());
  const double rows = grid.max(static_cast<double>(here.rows()));
  if (grid.min(static_cast<double>(here.rows())) != rows)
    throw InvalidArgument("gather_columns: the processes hold columns of different lengths");
  const detail::Communicator& comm = grid.communicator();
  if (!grid.is_root()) {
    if (here.size() > 0) comm.send(0, here.data(), here.bytes());
    return {};
  }
  index total = 0;
  for (double c : counts) total += static_cast<index>(c);
  Matrix<T> all = Matrix<T>::uninitialized(static_cast<index>(rows), total);
  std::copy_n(here.data(), here.size(), all.data());
  index at = here.cols();
  for (int r = 1; r < grid.size(); ++r) {
    const auto cols = static_cast<index>(counts[static_cast<std::size_t>(r)]);
    if (cols > 0 && rows > 0) comm.receive(r, all.data() + at * all.rows(), static_cast<std::size_t>(cols * all.rows()) * sizeof(T));
    at += cols;
  }
  return all;
}

template Matrix<float> gather_columns<float>(const Grid&, ConstMatrixView<float>);
template Matrix<double> gather_columns<double>(const Grid&, ConstMatrixView<double>);

}  // namespace linv::dist

