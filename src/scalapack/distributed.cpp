// The distributed family on ScaLAPACK (PBLAS, BLACS over MPI), for grids whose tiles live in host memory.
// ScaLAPACK's interface takes 32-bit integers: global orders and local leading dimensions must fit them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/counter_random.hpp"
#include "dist/communicator.hpp"
#include "dist/layout.hpp"
#include "kernels/backend.hpp"
#include "kernels/distributed.hpp"
#include "linv/device.hpp"
#include "scalapack/scalapack.hpp"

namespace linv::scalapack {
namespace {

using dist::DistMatrix;
using dist::Grid;

int checked_int(index value, const char* what) {
  if (value > std::numeric_limits<int>::max())
    throw InvalidArgument(fmt::format("{} {} is beyond ScaLAPACK's 32-bit integers", what, value));
  return static_cast<int>(value);
}

void require_success(int info, const char* routine) {
  if (info < 0) throw DeviceError(fmt::format("ScaLAPACK {} rejected its argument {}", routine, -info));
}

// The BLACS context of a grid shape, made on first use (every process reaches it in the same call, as
// every call here is collective) and kept for the process's life.
int context(const Grid& grid) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, int> contexts;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!grid.communicator().is_mpi_world())
    throw DeviceError("ScaLAPACK needs the processes of an MPI job (mpirun); this grid was not made by Grid::world");
  const auto key = std::make_pair(grid.rows(), grid.cols());
  if (auto found = contexts.find(key); found != contexts.end()) return found->second;
  if (contexts.empty()) {
    // Each process's BLAS shares the host's cores with the job's other processes on it (and keeps within
    // what it may use: its binding, a container's quota, --threads).
    const int share = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) /
                                      grid.communicator().local_size());
    set_cpu_threads(std::min(cpu_threads(), share));
  }
  int ctxt = 0;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", grid.rows(), grid.cols());
  int rows = 0, cols = 0, row = -1, col = -1;
  Cblacs_gridinfo(ctxt, &rows, &cols, &row, &col);
  if (row != grid.row() || col != grid.col())
    throw DeviceError(fmt::format("BLACS placed process {} at ({}, {}) instead of ({}, {})", grid.rank(), row, col,
                                  grid.row(), grid.col()));
  contexts.emplace(key, ctxt);
  return ctxt;
}

// ScaLAPACK's array descriptor of a distributed matrix.
struct Desc {
  int d[9];
  template <Real T>
  explicit Desc(const DistMatrix<T>& A) {
    const int m = checked_int(A.rows(), "a matrix order"), n = checked_int(A.cols(), "a matrix order");
    const int nb = checked_int(A.block(), "a tile size"), zero = 0, ctxt = context(A.grid());
    const int lld = checked_int(std::max<index>(1, A.local().rows()), "a local leading dimension");
    int info = 0;
    descinit_(d, &m, &n, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
    require_success(info, "descinit");
  }
  const int* operator*() const { return d; }
};


template <Real T>
T* data(DistMatrix<T>& A) {
  return A.local().data();
}
template <Real T>
const T* data(const DistMatrix<T>& A) {
  return A.local().data();
}

std::vector<int>& ipiv(const kernels::DistAside& p) { return *static_cast<std::vector<int>*>(p.data.get()); }
template <Real T>
std::vector<T>& tau_of(const kernels::DistAside& p) {
  return *static_cast<std::vector<T>*>(p.data.get());
}

template <Real T>
class ScalapackFamily final : public kernels::Distributed<T> {
 public:
  std::string name(const Grid&) const override {
    return fmt::format("ScaLAPACK {}", LINV_SCALAPACK_VERSION);
  }

  double norm1(const DistMatrix<T>& A) const override {
    if (A.empty()) return 0;
    const Desc d(A);
    const int m = static_cast<int>(A.rows()), n = static_cast<int>(A.cols());
    std::vector<T> work(static_cast<std::size_t>(A.local().cols() + A.block()));
    return static_cast<double>(plange("1", m, n, data(A), *d, work.data()));
  }

  double max_abs(const DistMatrix<T>& A, bool upper_only) const override {
    double m = 0;
    const Matrix<T>& a = A.local();
    for (index lj = 0; lj < a.cols(); ++lj) {
      const index gj = A.global_col(lj);
      for (index li = 0; li < a.rows(); ++li)
        if (!upper_only || A.global_row(li) <= gj) m = std::max(m, static_cast<double>(std::abs(a(li, lj))));
    }
    return A.grid().max(m);
  }

  std::optional<kernels::DistEntry> first_nonfinite(const DistMatrix<T>& A) const override {
    const Matrix<T>& a = A.local();
    long long first = std::numeric_limits<long long>::max();
    double value = 0;
    for (index lj = 0; lj < a.cols(); ++lj)
      for (index li = 0; li < a.rows(); ++li)
        if (!std::isfinite(a(li, lj))) {
          const long long at = A.global_row(li) + A.global_col(lj) * A.rows();
          if (at < first) first = at, value = static_cast<double>(a(li, lj));
        }
    long long global = first;
    A.grid().communicator().all_reduce(&global, 1, dist::detail::Reduction::min);
    if (global == std::numeric_limits<long long>::max()) return std::nullopt;
    // The owner's value, everyone else adding nothing (0 + NaN is NaN, 0 + inf is inf).
    double shared = global == first ? value : 0.0;
    A.grid().communicator().all_reduce(&shared, 1, dist::detail::Reduction::sum);
    return kernels::DistEntry{global % A.rows(), global / A.rows(), shared};
  }

  bool symmetric(const DistMatrix<T>& A) const override {
    DistMatrix<T> t = transposed(A);
    const Matrix<T>& a = A.local();
    double same = 1;
    for (index k = 0; k < a.size(); ++k)
      if (a.data()[k] != t.local().data()[k]) same = 0;
    return A.grid().min(same) == 1;
  }

  std::vector<T> diagonal(const DistMatrix<T>& A) const override {
    std::vector<double> d(static_cast<std::size_t>(A.rows()), 0.0);
    const Matrix<T>& a = A.local();
    for (index lj = 0; lj < a.cols(); ++lj) {
      const index g = A.global_col(lj);
      if (dist::layout::owner(g, A.block(), A.grid().rows()) != A.grid().row()) continue;
      d[static_cast<std::size_t>(g)] = static_cast<double>(a(dist::layout::local_index(g, A.block(), A.grid().rows()), lj));
    }
    A.grid().communicator().all_reduce(d.data(), d.size(), dist::detail::Reduction::sum);
    return std::vector<T>(d.begin(), d.end());
  }

  void gemm(T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta, DistMatrix<T>& C) const override {
    const Desc da(A), db(B), dc(C);
    const int m = static_cast<int>(C.rows()), n = static_cast<int>(C.cols()), k = static_cast<int>(A.cols());
    pgemm("N", "N", m, n, k, alpha, data(A), *da, data(B), *db, beta, data(C), *dc);
  }

  void axpy(T alpha, const DistMatrix<T>& X, DistMatrix<T>& Y) const override {
    kernels::vectors<T>(Device::cpu()).axpy(alpha, X.local().view(), Y.local().view());
  }

  void set_identity(DistMatrix<T>& A) const override {
    const Desc d(A);
    plaset("A", static_cast<int>(A.rows()), static_cast<int>(A.cols()), T(0), T(1), data(A), *d);
  }

  void fill_uniform(DistMatrix<T>& A, std::uint64_t seed, T lo, T hi) const override {
    Matrix<T>& a = A.local();
    for (index lj = 0; lj < a.cols(); ++lj) {
      const auto column = static_cast<std::uint64_t>(A.global_col(lj) * A.rows());
      for (index li = 0; li < a.rows(); ++li)
        a(li, lj) = static_cast<T>(kernels::uniform_between(lo, hi, kernels::counter_uniform(seed, column + A.global_row(li))));
    }
  }

  void lu_factor(DistMatrix<T>& A, kernels::DistAside& pivots) const override {
    const Desc d(A);
    auto p = std::make_shared<std::vector<int>>(static_cast<std::size_t>(A.local().rows() + A.block()));
    int info = 0;
    const int n = static_cast<int>(A.rows());
    pgetrf(n, n, data(A), *d, p->data(), &info);  // info > 0: a zero pivot, which the caller reads from U
    require_success(info, "getrf");
    pivots.data = p;
  }

  void lu_inverse(DistMatrix<T>& LU, const kernels::DistAside& pivots) const override {
    const Desc d(LU);
    const int n = static_cast<int>(LU.rows());
    T query = 0;
    int iquery = 0, info = 0;
    pgetri(n, data(LU), *d, ipiv(pivots).data(), &query, -1, &iquery, -1, &info);
    std::vector<T> work(static_cast<std::size_t>(query) + 1);
    std::vector<int> iwork(static_cast<std::size_t>(iquery) + 1);
    pgetri(n, data(LU), *d, ipiv(pivots).data(), work.data(), static_cast<int>(work.size()), iwork.data(),
           static_cast<int>(iwork.size()), &info);
    require_success(info, "getri");
  }

  void lu_solve(const DistMatrix<T>& LU, const kernels::DistAside& pivots, DistMatrix<T>& B, Op op) const override {
    const Desc da(LU), db(B);
    int info = 0;
    pgetrs(op == Op::None ? "N" : "T", static_cast<int>(LU.rows()), static_cast<int>(B.cols()), data(LU), *da, ipiv(pivots).data(), data(B),
           *db, &info);
    require_success(info, "getrs");
  }

  index cholesky_factor(DistMatrix<T>& A) const override {
    const Desc d(A);
    int info = 0;
    ppotrf("L", static_cast<int>(A.rows()), data(A), *d, &info);
    require_success(info, "potrf");
    return info;
  }

  void cholesky_inverse(DistMatrix<T>& L) const override {
    const Desc d(L);
    int info = 0;
    ppotri("L", static_cast<int>(L.rows()), data(L), *d, &info);
    require_success(info, "potri");
    // potri leaves the inverse in the lower triangle: the upper one from its transpose.
    const DistMatrix<T> t = transposed(L);
    Matrix<T>& a = L.local();
    for (index lj = 0; lj < a.cols(); ++lj) {
      const index gj = L.global_col(lj);
      for (index li = 0; li < a.rows(); ++li)
        if (L.global_row(li) < gj) a(li, lj) = t.local()(li, lj);
    }
  }

  void cholesky_solve(const DistMatrix<T>& L, DistMatrix<T>& B) const override {
    const Desc da(L), db(B);
    int info = 0;
    ppotrs("L", static_cast<int>(L.rows()), static_cast<int>(B.cols()), data(L), *da, data(B), *db, &info);
    require_success(info, "potrs");
  }

  void qr_factor(DistMatrix<T>& A, kernels::DistAside& aside) const override {
    const Desc d(A);
    const int n = static_cast<int>(A.rows());
    auto tau = std::make_shared<std::vector<T>>(static_cast<std::size_t>(A.local().cols() + A.block()));
    T query = 0;
    int info = 0;
    pgeqrf(n, n, data(A), *d, tau->data(), &query, -1, &info);
    std::vector<T> work(static_cast<std::size_t>(query) + 1);
    pgeqrf(n, n, data(A), *d, tau->data(), work.data(), static_cast<int>(work.size()), &info);
    require_success(info, "geqrf");
    aside.data = tau;
  }

  void qr_solve(const DistMatrix<T>& QR, const kernels::DistAside& aside, DistMatrix<T>& B, Op op) const override {
    const Desc da(QR), db(B);
    const int n = static_cast<int>(QR.rows()), k = static_cast<int>(B.cols());
    const char* q_op = op == Op::None ? "T" : "N";
    auto apply_q = [&] {
      T query = 0;
      int info = 0;
      pormqr("L", q_op, n, k, n, data(QR), *da, tau_of<T>(aside).data(), data(B), *db, &query, -1, &info);
      std::vector<T> work(static_cast<std::size_t>(query) + 1);
      pormqr("L", q_op, n, k, n, data(QR), *da, tau_of<T>(aside).data(), data(B), *db, work.data(),
             static_cast<int>(work.size()), &info);
      require_success(info, "ormqr");
    };
    auto solve_r = [&] {
      int info = 0;
      ptrtrs("U", op == Op::None ? "N" : "T", "N", n, k, data(QR), *da, data(B), *db, &info);
      require_success(info, "trtrs");
    };
    if (op == Op::None) {
      apply_q();
      solve_r();
    } else {
      solve_r();
      apply_q();
    }
  }

 private:
  // A^T, as a new matrix of A's layout (square A).
  static DistMatrix<T> transposed(const DistMatrix<T>& A) {
    DistMatrix<T> t(A.grid(), A.cols(), A.rows(), A.block());
    const Desc da(A), dt(t);
    ptran(static_cast<int>(A.cols()), static_cast<int>(A.rows()), T(1), data(A), *da, T(0), data(t), *dt);
    return t;
  }
};

}  // namespace

template <Real T>
const kernels::Distributed<T>& distributed() {
  return kernels::instance<ScalapackFamily<T>>();
}
template const kernels::Distributed<float>& distributed<float>();
template const kernels::Distributed<double>& distributed<double>();

}  // namespace linv::scalapack
