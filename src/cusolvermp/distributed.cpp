// The distributed family on NVIDIA's cuSOLVERMp (LU, Cholesky, QR) and cuBLASMp (products, triangular
// solves, transposes) over NCCL, for grids whose tiles live on GPUs: one process per GPU, started by
// mpirun or by linv itself (Grid::local). The NCCL communicator is bootstrapped over the grid's own host
// communicator. Local steps (fills, norms, checks) are linv's kernels over the tiles
// (src/cusolvermp/kernels.cu). The libraries are opened at run time (src/cusolvermp/library.hpp).
//
// cuSOLVERMp's getrs and potrs take one right-hand side (its samples say so, and no transposed one), so
// solves are the triangular solves of cuBLASMp, which take any number either way; the row interchanges
// of an LU are applied to few right-hand sides on the host (they are n x k with small k) and to the
// identity, for an inverse, by writing the permutation matrix directly.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

#include "cuda/context.hpp"
#include "cusolvermp/cusolvermp.hpp"
#include "cusolvermp/kernels.hpp"
#include "cusolvermp/library.hpp"
#include "dist/communicator.hpp"
#include "dist/layout.hpp"
#include "kernels/backend.hpp"

namespace linv::cusolvermp {
namespace {

using dist::DistMatrix;
using dist::Grid;

const Library& mp() { return library(); }

void check_nccl(ncclResult_t status, const char* what) {
  if (status != ncclSuccess)
    throw DeviceError(fmt::format("NCCL {} failed: {}", what, nccl().ncclGetErrorString(status)));
}
void check_blasmp(cublasMpStatus_t status, const char* what) {
  if (status != CUBLASMP_STATUS_SUCCESS)
    throw DeviceError(fmt::format("cuBLASMp {} failed (status {})", what, static_cast<int>(status)));
}

// What a job keeps for its life: one stream and NCCL communicator per process, made collectively when
// its grid is made (start_job). Creating the communicator takes NCCL about a second (its bootstrap and
// topology search), so it runs on a thread of its own while the program goes on (reading its inputs,
// uploading them); the first use waits for it.
struct Job {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::shared_future<ncclComm_t> nccl;
  ncclComm_t comm() const { return nccl.get(); }
};

std::mutex jobs_mutex;
std::map<const void*, Job> jobs;  // by communicator

Job& job(const Grid& grid) {
  const std::lock_guard<std::mutex> lock(jobs_mutex);
  const void* key = &grid.communicator();
  if (auto found = jobs.find(key); found != jobs.end()) return found->second;
  Job j;
  j.device = grid.device().index();
  ncclUniqueId id{};
  // What can fail on one process alone fails on all, before the collective steps.
  grid.together([&] {
    (void)nccl();
    cuda::check(cudaSetDevice(j.device), "cudaSetDevice");
    cuda::check(cudaStreamCreateWithFlags(&j.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    if (grid.is_root()) check_nccl(nccl().ncclGetUniqueId(&id), "ncclGetUniqueId");
  });
  grid.broadcast(&id, sizeof id, 0);
  // NCCL's bootstrap has its own sockets: the grid's communicator stays free for the program meanwhile
  j.nccl = std::async(std::launch::async, [device = j.device, size = grid.size(), rank = grid.rank(), id] {
             cuda::check(cudaSetDevice(device), "cudaSetDevice");
             ncclComm_t comm = nullptr;
             check_nccl(nccl().ncclCommInitRank(&comm, size, id, rank), "ncclCommInitRank");
             // NCCL connects the GPUs at their first collective (0.15 s on two H200s): one sum of one number
             // here, on this thread's own stream, so that the first real one finds them connected
             cudaStream_t stream = nullptr;
             cuda::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
             double* one = nullptr;
             cuda::check(cudaMalloc(&one, sizeof(double)), "cudaMalloc");
             check_nccl(nccl().ncclAllReduce(one, one, 1, ncclFloat64, ncclSum, comm, stream), "ncclAllReduce");
             cuda::check(cudaStreamSynchronize(stream), "connecting the GPUs");
             cuda::check(cudaFree(one), "cudaFree");
             cuda::check(cudaStreamDestroy(stream), "cudaStreamDestroy");
             return comm;
           }).share();
  return jobs.emplace(key, std::move(j)).first->second;
}

// What the engine keeps beside the job's: one library handle per process (the libraries allow one handle
// per process and GPU), and a grid per shape; made collectively on first use and kept for the process's
// life.
struct Context {
  int device = 0;
  cudaStream_t stream = nullptr;
  ncclComm_t nccl = nullptr;
  cusolverMpHandle_t solver = nullptr;
  cublasMpHandle_t blas = nullptr;
  cusolverMpGrid_t solver_grid = nullptr;  // this shape's
  cublasMpGrid_t blas_grid = nullptr;
};

Context& context(const Grid& grid) {
  static std::mutex mutex;
  static std::map<const void*, Context> handles;                       // by communicator
  static std::map<std::tuple<const void*, int, int>, Context> shapes;  // by communicator and grid shape
  const Job& base_job = job(grid);
  const std::lock_guard<std::mutex> lock(mutex);
  const void* key_job = &grid.communicator();
  const auto key = std::make_tuple(key_job, grid.rows(), grid.cols());
  if (auto found = shapes.find(key); found != shapes.end()) return found->second;
  auto base = handles.find(key_job);
  if (base == handles.end()) {
    Context c;
    c.device = base_job.device, c.stream = base_job.stream, c.nccl = base_job.comm();
    grid.together([&] { (void)library(); });
    cuda::check(mp().cusolverMpCreate(&c.solver, c.device, c.stream), "cusolverMpCreate");
    check_blasmp(mp().cublasMpCreate(&c.blas, c.stream), "cublasMpCreate");
    base = handles.emplace(key_job, c).first;
  }
  Context c = base->second;
  cuda::check(mp().cusolverMpCreateDeviceGrid(c.solver, &c.solver_grid, c.nccl, grid.rows(), grid.cols(),
                                         CUSOLVERMP_GRID_MAPPING_ROW_MAJOR),
              "cusolverMpCreateDeviceGrid");
  check_blasmp(mp().cublasMpGridCreate(grid.rows(), grid.cols(), CUBLASMP_GRID_LAYOUT_ROW_MAJOR, c.nccl, &c.blas_grid),
               "cublasMpGridCreate");
  return shapes.emplace(key, c).first->second;
}

// Every engine call starts after the work linv queued on the GPU (allocations, copies) and returns once
// its own has finished.
class Call {
 public:
  explicit Call(const Grid& grid) : c_(context(grid)) {
    cuda::check(cudaSetDevice(c_.device), "cudaSetDevice");
    cuda::check(cudaDeviceSynchronize(), "waiting for earlier work");
  }
  ~Call() noexcept(false) {
    if (std::uncaught_exceptions() == 0) cuda::check(cudaStreamSynchronize(c_.stream), "cuSOLVERMp work");
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  const Context& operator*() const { return c_; }
  const Context* operator->() const { return &c_; }

 private:
  Context& c_;
};

template <Real T>
constexpr cudaDataType_t data_type() {
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
}
template <Real T>
constexpr cublasComputeType_t compute_type() {
  return std::is_same_v<T, float> ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
}

template <Real T>
launch::Tiles tiles(const DistMatrix<T>& A) {
  launch::Tiles t;
  t.local_rows = A.local().rows(), t.local_cols = A.local().cols(), t.ld = A.local().ld(), t.nb = A.block();
  t.rows = A.rows(), t.cols = A.cols();
  t.prow = A.grid().row(), t.nprow = A.grid().rows(), t.pcol = A.grid().col(), t.npcol = A.grid().cols();
  return t;
}

// The descriptors of one matrix for both libraries, destroyed with it.
template <Real T>
class Descriptors {
 public:
  Descriptors(const Context& c, const DistMatrix<T>& A) {
    const auto lld = static_cast<std::int64_t>(A.local().ld());
    cuda::check(mp().cusolverMpCreateMatrixDesc(&solver_, c.solver_grid, data_type<T>(), A.rows(), A.cols(), A.block(),
                                           A.block(), 0, 0, lld),
                "cusolverMpCreateMatrixDesc");
    check_blasmp(mp().cublasMpMatrixDescriptorCreate(A.rows(), A.cols(), A.block(), A.block(), 0, 0, lld, data_type<T>(),
                                                c.blas_grid, &blas_),
                 "cublasMpMatrixDescriptorCreate");
  }
  ~Descriptors() {
    mp().cusolverMpDestroyMatrixDesc(solver_);
    mp().cublasMpMatrixDescriptorDestroy(blas_);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  cusolverMpMatrixDescriptor_t solver() const { return solver_; }
  cublasMpMatrixDescriptor_t blas() const { return blas_; }

 private:
  cusolverMpMatrixDescriptor_t solver_ = nullptr;
  cublasMpMatrixDescriptor_t blas_ = nullptr;
};

// Device and host workspace of the sizes a library asked for (device memory through linv's allocator, so
// that running out names the bytes).
struct Workspace {
  Matrix<double> device_part;
  std::vector<char> host_part;
  Workspace(Device device, std::size_t device_bytes, std::size_t host_bytes)
      : device_part(Matrix<double>::uninitialized(static_cast<index>((device_bytes + 7) / 8) + 1, 1, device)),
        host_part(host_bytes + 1) {}
  void* device() { return device_part.data(); }
  std::size_t device_bytes() const { return device_part.bytes(); }
  void* host() { return host_part.data(); }
  std::size_t host_bytes() const { return host_part.size(); }
};

// A few device values, read back after the call's work.
template <class V>
class DeviceValues {
 public:
  DeviceValues(std::size_t count, V initial, cudaStream_t stream) : host_(count, initial), stream_(stream) {
    cuda::check(cudaMallocAsync(reinterpret_cast<void**>(&data_), count * sizeof(V), stream), "cudaMallocAsync");
    cuda::check(cudaMemcpyAsync(data_, host_.data(), count * sizeof(V), cudaMemcpyHostToDevice, stream), "copy");
  }
  ~DeviceValues() { cudaFreeAsync(data_, stream_); }
  DeviceValues(const DeviceValues&) = delete;
  DeviceValues& operator=(const DeviceValues&) = delete;
  V* data() { return data_; }
  const std::vector<V>& read() {
    cuda::check(cudaMemcpyAsync(host_.data(), data_, host_.size() * sizeof(V), cudaMemcpyDeviceToHost, stream_), "copy");
    cuda::check(cudaStreamSynchronize(stream_), "reading back");
    return host_;
  }

 private:
  std::vector<V> host_;
  V* data_ = nullptr;
  cudaStream_t stream_;
};

// An LU's permutation as the rows it brings up (P A = L U with (P A)(i, :) = A(perm[i], :)), on the host
// of every process and on its GPU.
struct Permutation {
  std::vector<std::int64_t> perm;
  Matrix<double> on_device;  // perm's bytes
  const std::int64_t* device() const { return reinterpret_cast<const std::int64_t*>(on_device.data()); }
};

const Permutation& permutation_of(const kernels::DistAside& aside) {
  return *static_cast<const Permutation*>(aside.data.get());
}
template <Real T>
const Matrix<T>& tau_of(const kernels::DistAside& aside) {
  return *static_cast<const Matrix<T>*>(aside.data.get());
}

template <Real T>
class CusolverMpFamily final : public kernels::Distributed<T> {
 public:
  std::string name(const Grid&) const override {
    return fmt::format("cuSOLVERMp {}.{}.{} with cuBLASMp", CUSOLVERMP_VER_MAJOR, CUSOLVERMP_VER_MINOR,
                       CUSOLVERMP_VER_PATCH);
  }

  double norm1(const DistMatrix<T>& A) const override {
    std::vector<double> sums(static_cast<std::size_t>(A.cols()), 0.0);
    {
      const Call call(A.grid());
      DeviceValues<double> local(static_cast<std::size_t>(A.local().cols()), 0.0, call->stream);
      launch::column_abs_sums(A.local().data(), tiles(A), local.data(), call->stream);
      const std::vector<double>& part = local.read();
      for (index lj = 0; lj < A.local().cols(); ++lj) sums[static_cast<std::size_t>(A.global_col(lj))] = part[static_cast<std::size_t>(lj)];
    }
    A.grid().communicator().all_reduce(sums.data(), sums.size(), dist::detail::Reduction::sum);
    return sums.empty() ? 0.0 : *std::max_element(sums.begin(), sums.end());
  }

  double max_abs(const DistMatrix<T>& A, bool upper_only) const override {
    double local = 0;
    {
      const Call call(A.grid());
      DeviceValues<double> best(1, 0.0, call->stream);
      launch::abs_max(A.local().data(), tiles(A), upper_only, best.data(), call->stream);
      local = best.read()[0];
    }
    return A.grid().max(local);
  }

  std::optional<kernels::DistEntry> first_nonfinite(const DistMatrix<T>& A) const override {
    long long first = std::numeric_limits<long long>::max();
    {
      const Call call(A.grid());
      DeviceValues<unsigned long long> at(1, std::numeric_limits<unsigned long long>::max(), call->stream);
      launch::first_nonfinite(A.local().data(), tiles(A), at.data(), call->stream);
      const unsigned long long found = at.read()[0];
      if (found != std::numeric_limits<unsigned long long>::max()) first = static_cast<long long>(found);
    }
    long long global = first;
    A.grid().communicator().all_reduce(&global, 1, dist::detail::Reduction::min);
    if (global == std::numeric_limits<long long>::max()) return std::nullopt;
    // The owner reads its value; everyone else adds nothing (0 + NaN is NaN, 0 + inf is inf).
    double value = 0;
    if (global == first) {
      const index i = global % A.rows(), j = global / A.rows();
      const index li = dist::layout::local_index(i, A.block(), A.grid().rows());
      const index lj = dist::layout::local_index(j, A.block(), A.grid().cols());
      T v{};
      cuda::check(cudaMemcpy(&v, A.local().data() + li + lj * A.local().ld(), sizeof(T), cudaMemcpyDeviceToHost),
                  "reading an entry");
      value = static_cast<double>(v);
    }
    A.grid().communicator().all_reduce(&value, 1, dist::detail::Reduction::sum);
    return kernels::DistEntry{global % A.rows(), global / A.rows(), value};
  }

  // Band by band of block rows: P := (A's band)^T, placed in the process column that holds A's matching
  // column block, then compared there; P takes n x (npcol nb) entries, not another n x n.
  bool symmetric(const DistMatrix<T>& A) const override {
    const Grid& g = A.grid();
    const index n = A.rows(), nb = A.block();
    DistMatrix<T> panel(g, n, nb * g.cols(), nb);
    int differ = 0;
    {
      const Call call(g);
      const Descriptors<T> da(*call, A), dp(*call, panel);
      DeviceValues<int> flag(1, 0, call->stream);
      const T one = 1, zero = 0;
      std::optional<Workspace> w;  // the bands' shapes repeat: asked for again only when one grows
      for (index r0 = 0; r0 < n; r0 += nb) {
        const index width = std::min(nb, n - r0);
        const int pcol = dist::layout::owner(r0, nb, g.cols());
        const std::int64_t jp = pcol * nb + 1;
        std::size_t device_bytes = 0, host_bytes = 0;
        check_blasmp(mp().cublasMpGeadd_bufferSize(call->blas, CUBLAS_OP_T, n, width, &one, A.local().data(), r0 + 1, 1,
                                              da.blas(), &zero, panel.local().data(), 1, jp, dp.blas(), &device_bytes,
                                              &host_bytes),
                     "geadd workspace");
        if (!w || w->device_bytes() < device_bytes || w->host_bytes() < host_bytes)
          w.emplace(g.device(), device_bytes, host_bytes);
        check_blasmp(mp().cublasMpGeadd(call->blas, CUBLAS_OP_T, n, width, &one, A.local().data(), r0 + 1, 1, da.blas(),
                                   &zero, panel.local().data(), 1, jp, dp.blas(), w->device(), w->device_bytes(),
                                   w->host(), w->host_bytes()),
                     "geadd (transpose)");
        if (g.col() == pcol)
          launch::compare_columns(A.local().data(), A.local().ld(), dist::layout::local_index(r0, nb, g.cols()),
                                  panel.local().data(), panel.local().ld(), 0, A.local().rows(), width, flag.data(),
                                  call->stream);
      }
      differ = flag.read()[0];
    }
    return g.max(differ) == 0;
  }

  std::vector<T> diagonal(const DistMatrix<T>& A) const override {
    std::vector<double> d(static_cast<std::size_t>(A.rows()), 0.0);
    {
      const Call call(A.grid());
      DeviceValues<double> on_device(d.size(), 0.0, call->stream);
      launch::diagonal(A.local().data(), tiles(A), on_device.data(), call->stream);
      d = on_device.read();
    }
    A.grid().communicator().all_reduce(d.data(), d.size(), dist::detail::Reduction::sum);
    return std::vector<T>(d.begin(), d.end());
  }

  void gemm(T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta, DistMatrix<T>& C) const override {
    const Call call(A.grid());
    const Descriptors<T> da(*call, A), db(*call, B), dc(*call, C);
    std::size_t device_bytes = 0, host_bytes = 0;
    check_blasmp(mp().cublasMpGemm_bufferSize(call->blas, CUBLAS_OP_N, CUBLAS_OP_N, C.rows(), C.cols(), A.cols(), &alpha,
                                         A.local().data(), 1, 1, da.blas(), B.local().data(), 1, 1, db.blas(), &beta,
                                         C.local().data(), 1, 1, dc.blas(), compute_type<T>(), &device_bytes,
                                         &host_bytes),
                 "gemm workspace");
    Workspace w(A.grid().device(), device_bytes, host_bytes);
    check_blasmp(mp().cublasMpGemm(call->blas, CUBLAS_OP_N, CUBLAS_OP_N, C.rows(), C.cols(), A.cols(), &alpha,
                              A.local().data(), 1, 1, da.blas(), B.local().data(), 1, 1, db.blas(), &beta,
                              C.local().data(), 1, 1, dc.blas(), compute_type<T>(), w.device(), w.device_bytes(),
                              w.host(), w.host_bytes()),
                 "gemm");
  }

  void axpy(T alpha, const DistMatrix<T>& X, DistMatrix<T>& Y) const override {
    kernels::vectors<T>(X.grid().device()).axpy(alpha, X.local().view(), Y.local().view());
  }

  void set_identity(DistMatrix<T>& A) const override {
    const Call call(A.grid());
    launch::fill_permutation(A.local().data(), tiles(A), nullptr, call->stream);
  }

  void fill_uniform(DistMatrix<T>& A, std::uint64_t seed, T lo, T hi) const override {
    const Call call(A.grid());
    launch::fill_uniform(A.local().data(), tiles(A), seed, lo, hi, call->stream);
  }

  void lu_factor(DistMatrix<T>& A, kernels::DistAside& aside) const override {
    const Grid& g = A.grid();
    const index n = A.rows();
    // cuSOLVERMp's pivots, like ScaLAPACK's, lie beside A's first row: one per local column (1-based global
    // rows), the same in every process row.
    Matrix<double> ipiv = Matrix<double>::uninitialized(A.local().cols() + A.block(), 1, g.device());
    std::vector<std::int64_t> pivots(static_cast<std::size_t>(n), 0);
    int info = 0;
    {
      const Call call(g);
      const Descriptors<T> d(*call, A);
      auto* p = reinterpret_cast<std::int64_t*>(ipiv.data());
      std::size_t device_bytes = 0, host_bytes = 0;
      cuda::check(mp().cusolverMpGetrf_bufferSize(call->solver, n, n, A.local().data(), 1, 1, d.solver(), p, data_type<T>(),
                                             &device_bytes, &host_bytes),
                  "getrf workspace");
      Workspace w(g.device(), device_bytes, host_bytes);
      DeviceValues<int> status(1, 0, call->stream);
      cuda::check(mp().cusolverMpGetrf(call->solver, n, n, A.local().data(), 1, 1, d.solver(), p, data_type<T>(), w.device(),
                                  w.device_bytes(), w.host(), w.host_bytes(), status.data()),
                  "getrf");
      info = status.read()[0];
      std::vector<std::int64_t> local(static_cast<std::size_t>(A.local().cols()));
      cuda::check(cudaMemcpy(local.data(), p, local.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost), "pivots");
      if (g.row() == 0)
        for (index lj = 0; lj < A.local().cols(); ++lj) pivots[static_cast<std::size_t>(A.global_col(lj))] = local[static_cast<std::size_t>(lj)];
    }
    if (info < 0) throw DeviceError(fmt::format("cuSOLVERMp getrf rejected its argument {}", -info));
    g.communicator().all_reduce(reinterpret_cast<long long*>(pivots.data()), pivots.size(), dist::detail::Reduction::sum);
    auto perm = std::make_shared<Permutation>();
    perm->perm.resize(static_cast<std::size_t>(n));
    std::iota(perm->perm.begin(), perm->perm.end(), 0);
    for (index j = 0; j < n; ++j) {
      const std::int64_t row = pivots[static_cast<std::size_t>(j)] - 1;
      // Partial pivoting brings up a row at or below the diagonal: anything else means the pivots are not
      // in the form read here, and no result is better than a wrong one.
      if (row < j || row >= n)
        throw DeviceError(fmt::format("cuSOLVERMp getrf returned pivot {} for column {} of {}: not the 1-based row "
                                      "this engine expects",
                                      row + 1, j + 1, n));
      std::swap(perm->perm[static_cast<std::size_t>(j)], perm->perm[static_cast<std::size_t>(row)]);
    }
    perm->on_device = Matrix<double>::uninitialized(std::max<index>(n, 1), 1, g.device());
    cuda::check(cudaMemcpy(perm->on_device.data(), perm->perm.data(), perm->perm.size() * sizeof(std::int64_t),
                           cudaMemcpyHostToDevice),
                "permutation");
    aside.data = perm;
  }

  void lu_inverse(DistMatrix<T>& LU, const kernels::DistAside& aside) const override {
    DistMatrix<T> X(LU.grid(), LU.rows(), LU.cols(), LU.block());
    {
      const Call call(LU.grid());
      launch::fill_permutation(X.local().data(), tiles(X), permutation_of(aside).device(), call->stream);
    }
    trsm(LU, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, X);  // A^-1 = U^-1 L^-1 P
    trsm(LU, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, X);
    LU = std::move(X);
  }

  void lu_solve(const DistMatrix<T>& LU, const kernels::DistAside& aside, DistMatrix<T>& B, Op op) const override {
    const std::vector<std::int64_t>& perm = permutation_of(aside).perm;
    const index n = B.rows(), k = B.cols();
    auto permuted = [&](bool forward) {  // B := P B (forward) or P^T B, on the host: B has few columns
      const Matrix<T> b = B.replicated();
      Matrix<T> out = Matrix<T>::uninitialized(n, k);
      for (index j = 0; j < k; ++j)
        for (index i = 0; i < n; ++i) {
          const index from = perm[static_cast<std::size_t>(i)];
          if (forward)
            out(i, j) = b(from, j);
          else
            out(from, j) = b(i, j);
        }
      B = DistMatrix<T>::from_replicated(B.grid(), out.view(), B.block());
    };
    if (op == Op::None) {  // A^-1 B = U^-1 L^-1 P B
      permuted(true);
      trsm(LU, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, B);
      trsm(LU, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, B);
    } else {  // A^-T B = P^T L^-T U^-T B
      trsm(LU, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, B);
      trsm(LU, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT, B);
      permuted(false);
    }
  }

  index cholesky_factor(DistMatrix<T>& A) const override {
    const Grid& g = A.grid();
    int info = 0;
    cusolverStatus_t failed = CUSOLVER_STATUS_SUCCESS;
    {
      const Call call(g);
      const Descriptors<T> d(*call, A);
      std::size_t device_bytes = 0, host_bytes = 0;
      cuda::check(mp().cusolverMpPotrf_bufferSize(call->solver, CUBLAS_FILL_MODE_LOWER, A.rows(), A.local().data(), 1, 1,
                                             d.solver(), data_type<T>(), &device_bytes, &host_bytes),
                  "potrf workspace");
      Workspace w(g.device(), device_bytes, host_bytes);
      DeviceValues<int> status(1, 0, call->stream);
      failed = mp().cusolverMpPotrf(call->solver, CUBLAS_FILL_MODE_LOWER, A.rows(), A.local().data(), 1, 1, d.solver(),
                                    data_type<T>(), w.device(), w.device_bytes(), w.host(), w.host_bytes(),
                                    status.data());
      cudaStreamSynchronize(call->stream);
      info = status.read()[0];
    }
    if (info < 0) throw DeviceError(fmt::format("cuSOLVERMp potrf rejected its argument {}", -info));
    const auto minor = static_cast<index>(g.max(info));  // wherever it was seen
    if (g.max(failed != CUSOLVER_STATUS_SUCCESS ? 1 : 0) == 0 || minor > 0) return minor;
    // cuSOLVERMp 0.8 answers an indefinite matrix with CUSOLVER_STATUS_INTERNAL_ERROR and no info. Its tiles'
    // potrf leaves the failing pivot as LAPACK's does (the non-positive a_jj, or NaN), so the first such
    // diagonal entry names the minor; without one the error is the library's own.
    const std::vector<T> d = diagonal(A);
    for (std::size_t j = 0; j < d.size(); ++j)
      if (!(d[j] > T(0))) return static_cast<index>(j) + 1;
    throw DeviceError(fmt::format("cuSOLVERMp potrf failed (status {})", static_cast<int>(failed)));
  }

  void cholesky_inverse(DistMatrix<T>& L) const override {
    DistMatrix<T> X(L.grid(), L.rows(), L.cols(), L.block());
    set_identity(X);
    cholesky_solve(L, X);
    L = std::move(X);
  }

  void cholesky_solve(const DistMatrix<T>& L, DistMatrix<T>& B) const override {
    trsm(L, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, B);
    trsm(L, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, B);
  }

  void qr_factor(DistMatrix<T>& A, kernels::DistAside& aside) const override {
    const Grid& g = A.grid();
    auto tau = std::make_shared<Matrix<T>>(Matrix<T>::uninitialized(A.local().cols() + A.block(), 1, g.device()));
    int info = 0;
    {
      const Call call(g);
      const Descriptors<T> d(*call, A);
      std::size_t device_bytes = 0, host_bytes = 0;
      cuda::check(mp().cusolverMpGeqrf_bufferSize(call->solver, A.rows(), A.cols(), A.local().data(), 1, 1, d.solver(),
                                             data_type<T>(), &device_bytes, &host_bytes),
                  "geqrf workspace");
      Workspace w(g.device(), device_bytes, host_bytes);
      DeviceValues<int> status(1, 0, call->stream);
      cuda::check(mp().cusolverMpGeqrf(call->solver, A.rows(), A.cols(), A.local().data(), 1, 1, d.solver(), tau->data(),
                                  data_type<T>(), w.device(), w.device_bytes(), w.host(), w.host_bytes(), status.data()),
                  "geqrf");
      info = status.read()[0];
    }
    if (info < 0) throw DeviceError(fmt::format("cuSOLVERMp geqrf rejected its argument {}", -info));
    aside.data = tau;
  }

  void qr_solve(const DistMatrix<T>& QR, const kernels::DistAside& aside, DistMatrix<T>& B, Op op) const override {
    if (op == Op::None) {  // R^-1 Q^T B
      apply_q(QR, aside, CUBLAS_OP_T, B);
      trsm(QR, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, B);
    } else {  // Q R^-T B
      trsm(QR, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, B);
      apply_q(QR, aside, CUBLAS_OP_N, B);
    }
  }

 private:
  // B := op(A)^-1 B with A's `uplo` triangle.
  static void trsm(const DistMatrix<T>& A, cublasFillMode_t uplo, cublasOperation_t op, cublasDiagType_t diag,
                   DistMatrix<T>& B) {
    if (B.empty()) return;
    const Call call(A.grid());
    const Descriptors<T> da(*call, A), db(*call, B);
    const T one = 1;
    std::size_t device_bytes = 0, host_bytes = 0;
    check_blasmp(mp().cublasMpTrsm_bufferSize(call->blas, CUBLAS_SIDE_LEFT, uplo, op, diag, B.rows(), B.cols(), &one,
                                         A.local().data(), 1, 1, da.blas(), B.local().data(), 1, 1, db.blas(),
                                         compute_type<T>(), &device_bytes, &host_bytes),
                 "trsm workspace");
    Workspace w(A.grid().device(), device_bytes, host_bytes);
    check_blasmp(mp().cublasMpTrsm(call->blas, CUBLAS_SIDE_LEFT, uplo, op, diag, B.rows(), B.cols(), &one, A.local().data(),
                              1, 1, da.blas(), B.local().data(), 1, 1, db.blas(), compute_type<T>(), w.device(),
                              w.device_bytes(), w.host(), w.host_bytes()),
                 "trsm");
  }

  static void apply_q(const DistMatrix<T>& QR, const kernels::DistAside& aside, cublasOperation_t op, DistMatrix<T>& B) {
    const Call call(QR.grid());
    const Descriptors<T> da(*call, QR), db(*call, B);
    const index n = QR.rows();
    std::size_t device_bytes = 0, host_bytes = 0;
    cuda::check(mp().cusolverMpOrmqr_bufferSize(call->solver, CUBLAS_SIDE_LEFT, op, n, B.cols(), n, QR.local().data(), 1, 1,
                                           da.solver(), tau_of<T>(aside).data(), B.local().data(), 1, 1, db.solver(),
                                           data_type<T>(), &device_bytes, &host_bytes),
                "ormqr workspace");
    Workspace w(QR.grid().device(), device_bytes, host_bytes);
    DeviceValues<int> status(1, 0, call->stream);
    cuda::check(mp().cusolverMpOrmqr(call->solver, CUBLAS_SIDE_LEFT, op, n, B.cols(), n, QR.local().data(), 1, 1,
                                da.solver(), tau_of<T>(aside).data(), B.local().data(), 1, 1, db.solver(),
                                data_type<T>(), w.device(), w.device_bytes(), w.host(), w.host_bytes(), status.data()),
                "ormqr");
    if (const int info = status.read()[0]; info < 0)
      throw DeviceError(fmt::format("cuSOLVERMp ormqr rejected its argument {}", -info));
  }
};

// Sums over the job's NCCL communicator on the caller's stream: the values never leave the GPU.
class NcclSum final : public kernels::GridSum {
 public:
  explicit NcclSum(const Grid& grid) : job_(job(grid)) {}
  void sum(double* values, std::size_t count, void* stream) const override {
    check_nccl(nccl().ncclAllReduce(values, values, count, ncclFloat64, ncclSum, job_.comm(),
                                    static_cast<cudaStream_t>(stream)),
               "ncclAllReduce");
  }
  void sum(float* values, std::size_t count, void* stream) const override {
    check_nccl(nccl().ncclAllReduce(values, values, count, ncclFloat32, ncclSum, job_.comm(),
                                    static_cast<cudaStream_t>(stream)),
               "ncclAllReduce");
  }
  std::string name() const override {
    int v = 0;
    check_nccl(nccl().ncclGetVersion(&v), "ncclGetVersion");
    return fmt::format("NCCL {}.{}.{}", v / 10000, v / 100 % 100, v % 100);
  }

 private:
  const Job& job_;
};

}  // namespace

std::unique_ptr<kernels::GridSum> grid_sum(const Grid& grid) { return std::make_unique<NcclSum>(grid); }

void start_job(const Grid& grid) { (void)job(grid); }

template <Real T>
const kernels::Distributed<T>& distributed() {
  return kernels::instance<CusolverMpFamily<T>>();
}
template const kernels::Distributed<float>& distributed<float>();
template const kernels::Distributed<double>& distributed<double>();

std::string version() {
  return fmt::format("cuSOLVERMp {}.{}.{}", CUSOLVERMP_VER_MAJOR, CUSOLVERMP_VER_MINOR, CUSOLVERMP_VER_PATCH);
}

}  // namespace linv::cusolvermp
