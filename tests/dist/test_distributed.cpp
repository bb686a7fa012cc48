// Distributed matrices and solvers, run as every process of a job (tests/dist/job_main.cpp): ctest runs it
// under mpiexec with 1, 2 and 4 processes (ScaLAPACK), as a job of 3 CPU processes started by linv's local
// launcher (Grid::local, no MPI: the layout, file, grid, PARAFAC2, ADL and k-SVD tests, since ScaLAPACK
// needs MPI), and as a local job on two GPUs (cuSOLVERMp; skipped where there are fewer). Every result is
// gathered to the root and checked against the single-process linv (LAPACK, the oracle) with LAPACK-style
// bounds; every process checks the errors it raises. A check that fails on one process never stops it from
// taking part in the next collective call: the checks come after the collective steps.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "dist/communicator.hpp"
#include "dist/layout.hpp"
#include "linv/distributed.hpp"
#include "linv/generate.hpp"
#include "support/dense_checks.hpp"
#include "support/fmri_checks.hpp"
#include "support/parafac2_checks.hpp"
#include "support/parafac2_synthetic.hpp"
#include "support/testing.hpp"

namespace linv::testing {
const dist::Grid& job_grid();  // tests/dist/job_main.cpp
namespace {

using dist::DistMatrix;
using dist::Grid;

const Grid& grid() { return job_grid(); }

// A directory every process of the job sees: the root makes it, everyone learns its name.
class SharedDir {
 public:
  SharedDir() {
    std::string path;
    if (grid().is_root()) {
      dir_.emplace();
      path = dir_->path().string();
    }
    grid().broadcast(path, 0);
    path_ = path;
  }
  ~SharedDir() { grid().barrier(); }  // nobody still reads when the root removes it
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::optional<TempDir> dir_;
  std::string path_;
};

// The grids, tile sizes and shapes the layout tests sweep: tiles of 1, tiles larger than the matrix,
// shapes smaller than the grid, rectangular shapes.
struct Shape {
  index rows, cols, block;
};
const Shape kShapes[] = {{1, 1, 4}, {7, 3, 2}, {3, 7, 1}, {64, 64, 16}, {100, 37, 8}, {37, 100, 128}, {129, 130, 32}};

template <Real T>
Matrix<T> numbered(index rows, index cols) {
  Matrix<T> m = Matrix<T>::uninitialized(rows, cols);
  for (index j = 0; j < cols; ++j)
    for (index i = 0; i < rows; ++i) m(i, j) = static_cast<T>(1 + i + 1000 * j);
  return m;
}

template <Real T>
void expect_equal_on_root(const Matrix<T>& got, const Matrix<T>& want, const std::string& what) {
  if (!grid().is_root()) return;
  ASSERT_EQ(got.rows(), want.rows()) << what;
  ASSERT_EQ(got.cols(), want.cols()) << what;
  for (index j = 0; j < want.cols(); ++j)
    for (index i = 0; i < want.rows(); ++i) ASSERT_EQ(got(i, j), want(i, j)) << what << " at (" << i << ", " << j << ")";
}

TEST(DistLayout, EveryEntryHasOneOwnerAndComesBack) {
  for (index n : {0, 1, 5, 64, 129})
    for (index nb : {1, 3, 64, 200})
      for (int procs : {1, 2, 3, 4}) {
        index total = 0;
        for (int p = 0; p < procs; ++p) {
          const index count = dist::layout::local_count(n, nb, p, procs);
          total += count;
          for (index i = 0; i < count; ++i) {
            const index g = dist::layout::global_index(i, nb, p, procs);
            ASSERT_LT(g, n);
            ASSERT_EQ(dist::layout::owner(g, nb, procs), p);
            ASSERT_EQ(dist::layout::local_index(g, nb, procs), i);
          }
        }
        ASSERT_EQ(total, n) << "n " << n << ", nb " << nb << ", " << procs << " processes";
      }
}

TEST(DistMatrixTest, ScatterGatherRoundTrip) {
  for (const Shape& s : kShapes) {
    const Matrix<double> m = numbered<double>(s.rows, s.cols);
    const DistMatrix<double> d =
        DistMatrix<double>::scatter(grid(), grid().is_root() ? m.view() : ConstMatrixView<double>(), s.rows, s.cols,
                                    s.block);
    EXPECT_EQ(d.local().rows(), dist::layout::local_count(s.rows, s.block, grid().row(), grid().rows()));
    expect_equal_on_root(d.gather(), m, fmt::format("{}x{} in tiles of {}", s.rows, s.cols, s.block));
  }
}

TEST(DistMatrixTest, RandomUniformIsTheSingleProcessMatrix) {
  for (const Shape& s : kShapes) {
    const std::uint64_t seed = case_seed(static_cast<std::uint64_t>(s.rows * 131 + s.cols));
    const DistMatrix<float> d = DistMatrix<float>::random_uniform(grid(), s.rows, s.cols, seed, -2.0f, 3.0f, s.block);
    expect_equal_on_root(d.gather(), random_uniform<float>(s.rows, s.cols, seed, -2.0f, 3.0f), "random_uniform");
  }
}

// A .npy file of m in C order (rows contiguous), as NumPy writes by default.
void write_c_order(const std::string& path, const Matrix<double>& m) {
  std::string dict = fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}", m.rows(), m.cols());
  dict.append(63 - (10 + dict.size()) % 64, ' ');
  dict.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char length[2] = {static_cast<char>(dict.size() & 0xff), static_cast<char>(dict.size() >> 8)};
  out.write(length, 2);
  out << dict;
  for (index i = 0; i < m.rows(); ++i)
    for (index j = 0; j < m.cols(); ++j) out.write(reinterpret_cast<const char*>(&m(i, j)), sizeof(double));
}

TEST(DistMatrixTest, NpyFilesReadAndWrittenByEveryProcess) {
  const SharedDir dir;
  for (const Shape& s : kShapes) {
    const Matrix<double> m = numbered<double>(s.rows, s.cols);
    const std::string fortran = dir.file("fortran.npy"), c = dir.file("c.npy"), out = dir.file("out.npy");
    if (grid().is_root()) {
      io::write_matrix<double>(fortran, m.view());
      write_c_order(c, m);
    }
    grid().barrier();
    const std::string what = fmt::format("{}x{} in tiles of {}", s.rows, s.cols, s.block);
    expect_equal_on_root(DistMatrix<double>::read(grid(), c, s.block).gather(), m, "C order, " + what);
    const DistMatrix<double> d = DistMatrix<double>::read(grid(), fortran, s.block);
    expect_equal_on_root(d.gather(), m, "Fortran order, " + what);
    d.write(out);
    if (grid().is_root()) expect_equal_on_root(io::convert<double>(io::read_matrix(out), false), m, "written, " + what);
    grid().barrier();
  }
}

TEST(DistMatrixTest, BadFilesAreRefusedOnEveryProcess) {
  const SharedDir dir;
  const std::string f32 = dir.file("f32.npy"), truncated = dir.file("truncated.npy"), stack = dir.file("stack.npy");
  if (grid().is_root()) {
    io::write_matrix<float>(f32, numbered<float>(4, 4).view());
    io::write_matrix<double>(truncated, numbered<double>(40, 40).view());
    std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) - 8);
    io::write_stack<double>(stack, io::MatrixStack<double>{2, 3, 3, std::vector<double>(18, 1.0)});
  }
  grid().barrier();
  EXPECT_EQ(dist::npy_dtype(f32), io::DType::Float32);
  try {
    (void)DistMatrix<double>::read(grid(), f32);
    ADD_FAILURE() << "a float32 file was read as float64";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "float32"));
  }
  EXPECT_THROW((void)DistMatrix<double>::read(grid(), truncated), InputError);
  EXPECT_THROW((void)DistMatrix<double>::read(grid(), stack), InputError);
  EXPECT_THROW((void)DistMatrix<double>::read(grid(), dir.file("missing.npy")), InputError);
  try {
    (void)DistMatrix<double>::read(grid(), dir.file("A.mtx"));
    ADD_FAILURE() << "a .mtx file was read";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), ".npy"));
  }
}

TEST(DistGrid, AnErrorOnOneProcessIsRaisedOnAll) {
  const int failing = grid().size() - 1;
  try {
    grid().together([&] {
      if (grid().rank() == failing) throw SingularMatrix(3, 0.0);
    });
    ADD_FAILURE() << "no error";
  } catch (const NumericalError& e) {
    EXPECT_TRUE(contains(e.what(), "pivot 3"));
  }
  if (grid().communicator().is_mpi_world()) {
    EXPECT_THROW(Grid::world(grid().size() + 1, 1), InvalidArgument);
  }
  EXPECT_NO_THROW(grid().together([] {}));
  // Collectives agree on every process.
  EXPECT_EQ(grid().sum(grid().rank() + 1.0), grid().size() * (grid().size() + 1) / 2.0);
  EXPECT_EQ(grid().max(grid().rank()), grid().size() - 1.0);
  EXPECT_EQ(grid().min(grid().rank()), 0.0);
  std::string word = grid().rank() == grid().size() - 1 ? "from the last" : "";
  grid().broadcast(word, grid().size() - 1);
  EXPECT_EQ(word, "from the last");
}

// The distributed inverse and solve against the single-process ones on the root: the same method, results
// within the forward-error bound n eps cond (both are backward stable), scaled residuals within LAPACK's
// threshold.
template <Real T>
void check_against_single_process(MatrixKind kind, index n, index block, std::uint64_t salt) {
  const std::uint64_t seed = case_seed(salt);
  LINV_TRACE_SEED(seed);
  const Matrix<T> a = generate<T>(kind, n, {.cond = kind == MatrixKind::IllCond ? 1e6 : 0, .seed = seed});
  const Matrix<T> b = random_uniform<T>(n, 3, seed + 1);
  const auto A = DistMatrix<T>::scatter(grid(), a.view(), n, n, block);
  const auto B = DistMatrix<T>::scatter(grid(), b.view(), n, 3, block);
  const SolveOptions options{.compute_residual = true};
  const dist::Solution<T> inverse = dist::inv<T>(A, options);
  const dist::Solution<T> solution = dist::solve<T>(A, B, options);
  const Matrix<T> x_inverse = inverse.x.gather(), x_solve = solution.x.gather();
  if (!grid().is_root()) return;
  const std::string what = fmt::format("{} of order {} in tiles of {} on {}", to_string(kind), n, block, grid().describe());
  const Solution<T> want_inverse = linv::inv<T>(a.view(), {.method = inverse.report.method == Method::Cholesky
                                                                         ? Method::Cholesky
                                                                         : Method::LU});
  const Solution<T> want_solve = linv::solve<T>(a.view(), b.view(), {.method = Method::LU});
  const double want_rcond = 1.0 / (norm1<T>(a.view()) * norm1<T>(want_inverse.x.view()));  // exact
  const double cond = 1.0 / want_rcond;
  const double forward_bound = kForwardThreshold * static_cast<double>(n) * eps<T>() * cond;
  EXPECT_LE((relative_difference<T, T>(x_inverse.view(), want_inverse.x.view())), forward_bound) << what;
  EXPECT_LE((relative_difference<T, T>(x_solve.view(), want_solve.x.view())), forward_bound) << what;
  EXPECT_LE(inverse.report.scaled_residual, kResidualThreshold) << what;
  EXPECT_LE(solution.report.scaled_residual, kResidualThreshold) << what;
  EXPECT_LE(scaled_residual_inverse<T>(a.view(), x_inverse.view(), eps<T>()), kResidualThreshold) << what;
  EXPECT_LE(scaled_residual_solve<T>(a.view(), x_solve.view(), b.view(), eps<T>()), kResidualThreshold) << what;
  // rcond: exact for the inverse, LAPACK's estimate (within a factor 10 either way of the truth) for the solve
  EXPECT_NEAR(std::log10(inverse.report.rcond), std::log10(want_rcond), 0.01) << what;
  EXPECT_NEAR(std::log10(solution.report.rcond), std::log10(want_rcond), 1.0) << what;
  EXPECT_FALSE(inverse.report.notes.empty()) << what;  // the engine and the grid
}

TEST(DistSolvers, FollowTheSingleProcessSolversOnEveryKind) {
  std::uint64_t salt = 100;
  for (MatrixKind kind : {MatrixKind::Random, MatrixKind::SPD, MatrixKind::Hollow, MatrixKind::Band,
                          MatrixKind::IllCond, MatrixKind::Identity})
    for (index block : {8, 64}) {
      check_against_single_process<double>(kind, 150, block, ++salt);
      check_against_single_process<float>(kind == MatrixKind::IllCond ? MatrixKind::Random : kind, 97, block, ++salt);
    }
}

TEST(DistSolvers, AutoChoosesCholeskyForPositiveDefiniteAndLuOtherwise) {
  const index n = 120;
  const Matrix<double> spd = generate<double>(MatrixKind::SPD, n, {.seed = case_seed(1)});
  // Symmetric with a positive diagonal, but indefinite: a 2 x 2 principal minor made negative.
  Matrix<double> indefinite = spd.clone();
  const index i = n / 2, j = n / 2 + 1;
  indefinite(i, j) = indefinite(j, i) = 2 * std::sqrt(spd(i, i) * spd(j, j));
  const auto S = DistMatrix<double>::scatter(grid(), spd.view(), n, n, 16);
  EXPECT_EQ(dist::inv<double>(S).report.method, Method::Cholesky);
  const auto I = DistMatrix<double>::scatter(grid(), indefinite.view(), n, n, 16);
  const dist::Solution<double> fallback = dist::inv<double>(I, {.compute_residual = true});
  EXPECT_EQ(fallback.report.method, Method::LU);
  EXPECT_TRUE(contains(fallback.report.method_reason, "not positive definite"));
  EXPECT_LE(fallback.report.scaled_residual, kResidualThreshold);
  // Asked for Cholesky, the failing minor is named, as LAPACK's potrf names it.
  index minor = 0;
  try {
    (void)linv::cholesky<double>(indefinite.view());
  } catch (const NotPositiveDefinite& e) {
    minor = e.minor();
  }
  try {
    (void)dist::inv<double>(I, {.method = Method::Cholesky});
    ADD_FAILURE() << "an indefinite matrix was inverted by Cholesky";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.minor(), minor);
  }
}

TEST(DistSolvers, SingularMatricesNameTheirPivot) {
  const index n = 90;
  Matrix<double> a = random_uniform<double>(n, n, case_seed(2));
  for (index i = 0; i < n; ++i) a(i, 40) = 0;  // exactly singular: column 41
  const auto A = DistMatrix<double>::scatter(grid(), a.view(), n, n, 8);
  try {
    (void)dist::inv<double>(A);
    ADD_FAILURE() << "a singular matrix was inverted";
  } catch (const SingularMatrix& e) {
    EXPECT_EQ(e.pivot(), 41);
  }
  // Singular to working precision: refused, or returned with a note when allowed.
  Matrix<double> b = random_uniform<double>(n, n, case_seed(3));
  for (index i = 0; i < n; ++i) b(i, 7) = b(i, 3) + 0.5 * b(i, 5);
  const auto B = DistMatrix<double>::scatter(grid(), b.view(), n, n, 8);
  EXPECT_THROW((void)dist::inv<double>(B), SingularMatrix);
  const dist::Solution<double> allowed = dist::inv<double>(B, {.allow_ill_conditioned = true});
  bool noted = false;
  for (const std::string& note : allowed.report.notes) noted = noted || contains(note, "singular to working precision");
  EXPECT_TRUE(noted);
}

TEST(DistSolvers, GrowthPastTheLimitGoesToHouseholderQr) {
  // Wilkinson's growth matrix: partial pivoting grows its entries 2^(n-1)-fold.
  const index n = 200;
  Matrix<double> w(n, n);
  for (index i = 0; i < n; ++i) {
    w(i, i) = 1;
    w(i, n - 1) = 1;
    for (index j = 0; j < i; ++j) w(i, j) = -1;
  }
  const auto W = DistMatrix<double>::scatter(grid(), w.view(), n, n, 16);
  const dist::Solution<double> s = dist::inv<double>(W, {.compute_residual = true});
  EXPECT_EQ(s.report.method, Method::QR);
  EXPECT_GT(s.report.growth, lu_growth_limit(n));
  EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
  const Matrix<double> x = s.x.gather();
  if (grid().is_root()) {
    EXPECT_LE(scaled_residual_inverse<double>(w.view(), x.view(), eps<double>()), kResidualThreshold);
  }
}

TEST(DistSolvers, BadInputIsNamed) {
  const index n = 40;
  Matrix<double> a = random_uniform<double>(n, n, case_seed(4));
  a(12, 33) = std::numeric_limits<double>::infinity();
  const auto A = DistMatrix<double>::scatter(grid(), a.view(), n, n, 8);
  try {
    (void)dist::inv<double>(A);
    ADD_FAILURE() << "an infinite entry was accepted";
  } catch (const NonFiniteInput& e) {
    EXPECT_TRUE(contains(e.what(), "row 13, column 34"));
  }
  const Matrix<double> r = random_uniform<double>(n, n + 1, case_seed(5));
  const auto R = DistMatrix<double>::scatter(grid(), r.view(), n, n + 1, 8);
  EXPECT_THROW((void)dist::inv<double>(R), InvalidArgument);
  const auto B = DistMatrix<double>::scatter(grid(), r.view(), n, n + 1, 16);
  try {
    (void)dist::solve<double>(DistMatrix<double>::random_uniform(grid(), n, n, 1, -1.0, 1.0, 8), B);
    ADD_FAILURE() << "differently laid out operands were accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "laid out alike"));
  }
  const auto S = DistMatrix<double>::random_uniform(grid(), n, n, 2, -1.0, 1.0, 8);
  EXPECT_THROW((void)dist::inv<double>(S, {.method = Method::GaussJordan}), InvalidArgument);
  EXPECT_THROW((void)dist::inv<double>(S, {.precision = Precision::Mixed}), InvalidArgument);
}

}  // namespace
}  // namespace linv::testing

namespace linv::testing {
namespace {

TEST(DistSolvers, AnInverseInAsOwnMemoryIsTheSame) {
  const index n = 130;
  const std::uint64_t seed = case_seed(6);
  const auto A = DistMatrix<double>::random_uniform(grid(), n, n, seed, -1.0, 1.0, 16);
  const dist::Solution<double> copy = dist::inv<double>(A);
  auto consumed = DistMatrix<double>::random_uniform(grid(), n, n, seed, -1.0, 1.0, 16);
  const dist::Solution<double> own = dist::inv<double>(std::move(consumed));
  expect_equal_on_root(own.x.gather(), copy.x.gather(), "the inverse in A's memory");
  // Checked against the matrix made again, as the benchmark does: A X = I.
  DistMatrix<double> residual(grid(), n, n, 16);
  const auto again = DistMatrix<double>::random_uniform(grid(), n, n, seed, -1.0, 1.0, 16);
  const Matrix<double> eye = Matrix<double>::identity(n);
  residual = DistMatrix<double>::scatter(grid(), grid().is_root() ? eye.view() : ConstMatrixView<double>(), n, n, 16);
  dist::gemm(-1.0, again, own.x, 1.0, residual);
  EXPECT_LE(dist::norm1(residual) / (n * eps<double>() * dist::norm1(again) * dist::norm1(own.x)), kResidualThreshold);
  auto gone = DistMatrix<double>::random_uniform(grid(), n, n, seed, -1.0, 1.0, 16);
  EXPECT_THROW((void)dist::inv<double>(std::move(gone), {.compute_residual = true}), InvalidArgument);
}

// Subject-parallel PARAFAC2: each process fits its share of the slabs on its device, and every process
// checks the result against the single-process fit of all slabs on the CPU (the oracle, computed on each
// process alike). Only the order of the sums differs, so the bounds are those of the GPU against the CPU
// (tests/cuda/test_parafac2_gpu.cpp): the loss history to 1e-9, the factors to that times the ALS steps'
// conditioning, P_k to kappa(Q_k) times the factors' difference.
template <Real T>
void check_parafac2_against_one_process(index I, index F, const std::vector<index>& J, std::uint64_t salt) {
  const std::uint64_t seed = case_seed(salt);
  LINV_TRACE_SEED(seed);
  const Synthetic s = synthetic(I, J, F, 0.3, seed);
  const auto K = static_cast<index>(J.size());
  std::vector<Matrix<T>> all;
  std::vector<ConstMatrixView<T>> all_views, mine;
  for (const Matrix<double>& X : s.X) all.push_back(X.cast<T>());
  for (const Matrix<T>& X : all) all_views.push_back(X.view());
  const index first = K * grid().rank() / grid().size(), end = K * (grid().rank() + 1) / grid().size();
  std::vector<Matrix<T>> on_device;
  for (index k = first; k < end; ++k) {
    on_device.push_back(all[static_cast<std::size_t>(k)].to(grid().device()));
    mine.push_back(on_device.back().view());
  }
  const fmri::Parafac2Options o{.rank = F, .max_iterations = 40, .tolerance = 0, .seed = seed + 1};
  const fmri::Parafac2Result<T> got = dist::parafac2<T>(grid(), mine, first, o);
  const fmri::Parafac2Result<T> want = fmri::parafac2<T>(all_views, o);
  const std::string what = fmt::format("I {} F {} K {} on {}", I, F, K, grid().describe());
  ASSERT_EQ(got.loss_history.size(), want.loss_history.size()) << what;
  ASSERT_EQ(got.C.rows(), K) << what;
  ASSERT_EQ(static_cast<index>(got.P.size()), end - first) << what;
  const double bound = 1e-9, factors = (std::is_same_v<T, float> ? 1e-5 : bound) * als_condition(want);
  EXPECT_LE(max_relative_difference(got.loss_history, want.loss_history), bound) << what;
  const double dA = relative_difference<T, T>(got.A.view(), want.A.view()),
               dH = relative_difference<T, T>(got.H.view(), want.H.view()),
               dC = relative_difference<T, T>(got.C.view(), want.C.view());
  EXPECT_LE(dA, factors) << what;
  EXPECT_LE(dH, factors) << what;
  EXPECT_LE(dC, factors) << what;
  const double e = std::numeric_limits<T>::epsilon(), moved = std::max({dA, dH, dC});
  EXPECT_NEAR(got.loss, want.loss, std::max(100 * e * got.norm_squared, bound * std::abs(want.loss))) << what;
  for (std::size_t k = 0; k < got.P.size(); ++k) {
    const index global = first + static_cast<index>(k);
    const Matrix<T> P = got.P[k].to(Device::cpu());
    const double kappa = condition_of_q(want, s.X[static_cast<std::size_t>(global)], global);
    EXPECT_LE((relative_difference<T, T>(P.view(), want.P[static_cast<std::size_t>(global)].view())),
              30 * kappa * (moved + static_cast<double>(I) * e))
        << what << ", P_" << global;
  }
  EXPECT_FALSE(got.report.notes.empty()) << what;  // how the sums were added
}

TEST(DistParafac2, FollowsTheOneProcessFit) {
  // at least as many slabs as the 4 processes of the largest MPI job
  check_parafac2_against_one_process<double>(30, 4, {400, 650, 500, 300, 450}, 700);
  check_parafac2_against_one_process<double>(40, 3, {25, 60, 18, 40, 33}, 701);
  check_parafac2_against_one_process<double>(40, 34, {60, 45, 50, 70}, 702);
  check_parafac2_against_one_process<float>(30, 4, {400, 650, 500, 300, 450}, 703);
}

TEST(DistParafac2, AnErrorOnOneProcessIsRaisedOnAll) {
  const Synthetic s = synthetic(12, {30, 30, 30, 30}, 2, 0.1, case_seed(710));
  const index K = 4, first = K * grid().rank() / grid().size(), end = K * (grid().rank() + 1) / grid().size();
  std::vector<Matrix<double>> on_device;
  std::vector<ConstMatrixView<double>> mine;
  for (index k = first; k < end; ++k) {
    Matrix<double> X = s.X[static_cast<std::size_t>(k)].clone();
    if (k == K - 1) X(3, 5) = std::numeric_limits<double>::quiet_NaN();  // on the last process only
    on_device.push_back(X.to(grid().device()));
    mine.push_back(on_device.back().view());
  }
  const fmri::Parafac2Options o{.rank = 2, .max_iterations = 5};
  try {
    (void)dist::parafac2<double>(grid(), mine, first, o);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "slab 3")) << e.what();
  }
  // a share that does not follow the previous process's is refused on every process
  if (grid().size() > 1) {
    EXPECT_THROW((void)dist::parafac2<double>(grid(), mine, first + (grid().rank() == 1 ? 1 : 0), o), InvalidArgument);
  }
}

// Voxel-parallel ADL: each process fits its share of X's columns on its device, against the one-process
// CPU fit of all of them (computed on every process alike). Only the order of the sums over voxels
// differs: the bound is the GPU's against the CPU's (tests/cuda/test_adl_gpu.cpp), rounding of order
// (T + N) eps per step, not amplified by the nonexpansive steps.
TEST(DistAdl, FollowsTheOneProcessFit) {
  struct Case {
    index T, N, K, M;
    int Ts, Td;
  };
  for (const Case c : {Case{40, 900, 10, 2, 10, 10}, Case{30, 601, 6, 0, 20, 5}, Case{24, 333, 40, 3, 4, 4}}) {
    const std::uint64_t seed = case_seed(720 + static_cast<std::uint64_t>(c.K));
    LINV_TRACE_SEED(seed);
    Matrix<double> X = random_uniform<double>(c.T, c.N, seed, -1.0, 1.0);
    Matrix<double> task(c.T, c.M);
    for (index j = 0; j < c.M; ++j) {
      double norm = 0;
      for (index i = 0; i < c.T; ++i) norm += X(i, 5 * j) * X(i, 5 * j);
      for (index i = 0; i < c.T; ++i) task(i, j) = X(i, 5 * j) / std::sqrt(norm);
    }
    const fmri::AdlOptions o{.atoms = c.K, .max_iterations = 8, .coefficient_steps = c.Ts, .dictionary_steps = c.Td,
                             .c = 0.3, .seed = seed + 3};
    const ConstMatrixView<double> t = c.M > 0 ? task.view() : ConstMatrixView<double>{};
    const index first = c.N * grid().rank() / grid().size(), end = c.N * (grid().rank() + 1) / grid().size();
    const Matrix<double> mine = Matrix<double>::copy_of(X.view().block(0, first, c.T, end - first)).to(grid().device());
    const fmri::AdlResult<double> got = dist::adl<double>(grid(), mine.view(), o, t);
    const fmri::AdlResult<double> want = fmri::adl<double>(X.view(), o, t);
    const std::string what = fmt::format("T {} N {} K {} on {}", c.T, c.N, c.K, grid().describe());
    ASSERT_EQ(got.objective.size(), want.objective.size()) << what;
    ASSERT_EQ(got.inner_objective.size(), want.inner_objective.size()) << what;
    ASSERT_EQ(got.codes.cols(), end - first) << what;
    EXPECT_NEAR(got.lambda, want.lambda, 1e-14 * want.lambda) << what;
    const double bound = 30.0 * static_cast<double>(c.T + c.N) * eps<double>() * 8 * (c.Ts + c.Td);
    EXPECT_LE(max_relative_difference(got.objective, want.objective), bound) << what;
    EXPECT_LE(max_relative_difference(got.inner_objective, want.inner_objective), bound) << what;
    EXPECT_LE((relative_difference<double, double>(got.dictionary.to(Device::cpu()).view(), want.dictionary.view())),
              bound)
        << what;
    const Matrix<double> want_codes = Matrix<double>::copy_of(want.codes.view().block(0, first, c.K, end - first));
    EXPECT_LE((relative_difference<double, double>(got.codes.to(Device::cpu()).view(), want_codes.view())), bound)
        << what;
    EXPECT_FALSE(got.report.notes.empty()) << what;
  }
}

TEST(DistAdl, AnErrorOnOneProcessIsRaisedOnAll) {
  Matrix<double> X = random_uniform<double>(12, 40, case_seed(730));
  const index first = 40 * grid().rank() / grid().size(), end = 40 * (grid().rank() + 1) / grid().size();
  Matrix<double> mine = Matrix<double>::copy_of(X.view().block(0, first, 12, end - first));
  if (grid().rank() == grid().size() - 1) mine(3, 0) = std::numeric_limits<double>::infinity();
  const Matrix<double> on_device = mine.to(grid().device());
  try {
    (void)dist::adl<double>(grid(), on_device.view(), {.atoms = 3, .max_iterations = 2});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "X")) << e.what();
  }
}

// Signal-parallel k-SVD against the one-process CPU fit of all signals (computed on every process alike):
// noisy sparse data over a known dictionary, each process coding and updating its share. Started from a
// dictionary with a repeated atom (which OMP never uses, so the job's worst signal replaces it), two
// iterations (the second after clearing) give the one-process dictionary and representations to
// rounding, in both variants and on both Gram paths of the exact update (E E^T: atoms with more users than
// time points; all of E gathered: fewer). An atom's sign is the eigensolver's own, so atoms are compared
// by |d^T d'| and codes by what they represent, D gamma. Started from random signals and run longer, a
// near-tie in OMP or clearing may send the runs different ways, so there the job must learn as well as one
// process.
TEST(DistKsvd, FollowsTheOneProcessFit) {
  struct Case {
    index T, N, K, T0;
  };
  for (const Case c : {Case{30, 1500, 12, 4}, Case{40, 150, 60, 2}}) {
    const std::uint64_t seed = case_seed(740 + static_cast<std::uint64_t>(c.K));
    LINV_TRACE_SEED(seed);
    const Matrix<double> truth = random_dictionary(c.T, c.K, seed);
    Matrix<double> X = matmul<double>(truth.view(), random_uniform<double>(c.K, c.N, seed + 1, -1.0, 1.0).view());
    const Matrix<double> noise = random_uniform<double>(c.T, c.N, seed + 2, -0.05, 0.05);
    for (index e = 0; e < X.size(); ++e) X.data()[e] += noise.data()[e];
    Matrix<double> start = random_dictionary(c.T, c.K, seed + 4);
    for (index i = 0; i < c.T; ++i) start(i, 1) = start(i, 0);
    const index first = c.N * grid().rank() / grid().size(), end = c.N * (grid().rank() + 1) / grid().size();
    const Matrix<double> mine = Matrix<double>::copy_of(X.view().block(0, first, c.T, end - first)).to(grid().device());
    for (const bool exact : {true, false}) {
      const std::string what = fmt::format("T {} N {} K {} {} on {}", c.T, c.N, c.K, exact ? "exact" : "approximate",
                                           grid().describe());
      const fmri::KsvdOptions two{.atoms = c.K, .sparsity = c.T0, .iterations = 2, .exact = exact, .seed = seed + 3};
      const fmri::KsvdResult<double> got = dist::ksvd<double>(grid(), mine.view(), two, &start);
      const fmri::KsvdResult<double> want = fmri::ksvd<double>(X.view(), two, &start);
      ASSERT_EQ(got.rmse.size(), want.rmse.size()) << what;
      EXPECT_LE(max_relative_difference(got.rmse, want.rmse), 1e-10) << what;
      EXPECT_GE(want.replaced, 1) << what;
      EXPECT_EQ(got.replaced, want.replaced) << what;
      const Matrix<double> D = got.dictionary.to(Device::cpu());
      for (index a = 0; a < c.K; ++a) {
        double cosine = 0;
        for (index i = 0; i < c.T; ++i) cosine += D(i, a) * want.dictionary(i, a);
        EXPECT_NEAR(std::abs(cosine), 1.0, 1e-11) << what << ", atom " << a;
      }
      ASSERT_EQ(got.codes.signals, end - first) << what;
      const Matrix<double> represented = matmul<double>(D.view(), got.codes.to_dense().view());
      const Matrix<double> all = matmul<double>(want.dictionary.view(), want.codes.to_dense().view());
      const Matrix<double> expected = Matrix<double>::copy_of(all.view().block(0, first, c.T, end - first));
      EXPECT_LE((relative_difference<double, double>(represented.view(), expected.view())), 1e-10) << what;
      EXPECT_EQ(got.report.notes.size(), 2u) << what;  // the updates, and how the sums were added

      const fmri::KsvdOptions several{
          .atoms = c.K, .sparsity = c.T0, .iterations = 6, .exact = exact, .seed = seed + 3};
      const fmri::KsvdResult<double> got6 = dist::ksvd<double>(grid(), mine.view(), several);
      const fmri::KsvdResult<double> want6 = fmri::ksvd<double>(X.view(), several);
      ASSERT_EQ(got6.rmse.size(), want6.rmse.size()) << what;
      EXPECT_NEAR(got6.rmse.front(), want6.rmse.front(), 1e-12 * want6.rmse.front()) << what;
      EXPECT_LT(got6.rmse.back(), got6.rmse.front()) << what;
      EXPECT_LE(got6.rmse.back(), 1.05 * want6.rmse.back()) << what;
    }
  }
}

TEST(DistKsvd, AnErrorOnOneProcessIsRaisedOnAll) {
  Matrix<double> X = random_uniform<double>(12, 40, case_seed(750));
  const index first = 40 * grid().rank() / grid().size(), end = 40 * (grid().rank() + 1) / grid().size();
  Matrix<double> mine = Matrix<double>::copy_of(X.view().block(0, first, 12, end - first));
  if (grid().rank() == grid().size() - 1) mine(3, 0) = std::numeric_limits<double>::quiet_NaN();
  const Matrix<double> on_device = mine.to(grid().device());
  try {
    (void)dist::ksvd<double>(grid(), on_device.view(), {.atoms = 3, .sparsity = 2, .iterations = 2});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "X")) << e.what();
  }
  // more atoms than the job's signals, without a dictionary to start from
  const Matrix<double> clean = Matrix<double>::copy_of(X.view().block(0, first, 12, end - first)).to(grid().device());
  EXPECT_THROW((void)dist::ksvd<double>(grid(), clean.view(), {.atoms = 41, .sparsity = 2}), InvalidArgument);
}

}  // namespace
}  // namespace linv::testing

