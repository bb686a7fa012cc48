// Thread safety of the CPU backend (docs/design.md, "Threads"): 8 threads run independent calls of every
// kind at once, several rounds, and each result must be bit for bit the result of the same call run
// alone. Every call here is deterministic for a given input (its threads split the work the same way and
// sum in a fixed order), so any difference is a race: two calls sharing state, a planner or a buffer.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "linv/adl.hpp"
#include "linv/batched.hpp"
#include "linv/dense.hpp"
#include "linv/device.hpp"
#include "linv/errors.hpp"
#include "linv/fmri.hpp"
#include "linv/generate.hpp"
#include "linv/imaging.hpp"
#include "linv/io.hpp"
#include "linv/parafac2.hpp"
#include "linv/slam.hpp"
#include "linv/wls.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 3;

// A call's results as one list of numbers (results and the diagnostics that depend on them), compared bit
// for bit.
using Fingerprint = std::vector<double>;

template <Real T>
void append(Fingerprint& f, ConstMatrixView<T> A) {
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < A.rows(); ++i) f.push_back(static_cast<double>(A(i, j)));
}

template <Real T>
Matrix<T> random(index rows, index cols, std::uint64_t seed) {
  return random_uniform<T>(rows, cols, seed);
}

// A diagonally dominant n x n matrix: well conditioned, so no call refuses it.
template <Real T>
Matrix<T> dominant(index n, std::uint64_t seed) {
  Matrix<T> A = random<T>(n, n, seed);
  for (index i = 0; i < n; ++i) A(i, i) += static_cast<T>(n);
  return A;
}

Fingerprint dense_inverse(std::uint64_t seed) {
  const Matrix<double> A = dominant<double>(96, seed);
  Fingerprint f;
  for (Method method : {Method::LU, Method::GaussJordan}) {
    const Solution<double> s = inv<double>(A.view(), {.method = method, .compute_residual = true});
    append<double>(f, s.x.view());
    f.insert(f.end(), {s.report.rcond, s.report.scaled_residual});
  }
  return f;
}

Fingerprint dense_solve(std::uint64_t seed) {
  const Matrix<float> A = dominant<float>(80, seed);
  const Matrix<float> B = random<float>(80, 3, seed + 1);
  const Matrix<double> A64 = A.cast<double>(), B64 = B.cast<double>();
  Fingerprint f;
  append<float>(f, solve<float>(A.view(), B.view()).x.view());
  append<double>(f, solve<double>(A64.view(), B64.view(), {.precision = Precision::Mixed}).x.view());
  append<double>(f, lstsq<double>(random<double>(60, 20, seed + 2).view(), B64.block(0, 0, 60, 3)).x.view());
  append<double>(f, pinv<double>(random<double>(30, 20, seed + 3).view()).x.view());
  return f;
}

Fingerprint decompositions(std::uint64_t seed) {
  const Matrix<double> A = dominant<double>(64, seed);
  const Matrix<double> B = random<double>(64, 2, seed + 1);
  Fingerprint f;
  const LU<double> lu(A.view());
  append<double>(f, lu.solve(B.view()).view());
  append<double>(f, lu.inverse().view());
  f.insert(f.end(), {lu.rcond(), lu.determinant().log_abs});
  const Matrix<double> spd = generate<double>(MatrixKind::SPD, 64, {.seed = seed});
  const Cholesky<double> chol(spd.view());
  append<double>(f, chol.solve(B.view()).view());
  append<double>(f, chol.inverse().view());
  f.push_back(chol.rcond());
  return f;
}

Fingerprint weighted_least_squares(std::uint64_t seed) {
  const Matrix<double> A = random<double>(30, 80, seed);
  const Matrix<double> d = random_uniform<double>(80, 1, seed + 1, 0.5, 2.0);
  const Matrix<double> b = random<double>(80, 2, seed + 2);
  Fingerprint f;
  append<double>(f, wls<double>(A.view(), d.view(), b.view()).x.view());
  append<double>(f, wls<double>(A.view(), d.view(), b.view(), {.precision = Precision::Mixed}).x.view());
  WeightedLeastSquares<double> system(A.view(), {.storage = Storage::Packed});
  system.factor(d.view());
  append<double>(f, system.solve(b.view()).x.view());
  return f;
}

// Every deblurring path makes and destroys FFTW plans (the matrix-free one twice: the convolution and its
// spectral preconditioner), which FFTW's planner does not allow from two threads at once.
Fingerprint deblurring(std::uint64_t seed) {
  const Matrix<double> image = random_uniform<double>(40, 48, seed, 0.0, 1.0);
  const imaging::Psf psf = imaging::parse_psf("gaussian:size=5,sigma=1");
  const imaging::Psf motion = imaging::parse_psf("motion:len=5,angle=30");
  const Matrix<double> g = imaging::convolve(image.view(), psf.kernel.view(), imaging::Boundary::Reflexive);
  const Matrix<double> h = imaging::convolve(image.view(), motion.kernel.view(), imaging::Boundary::Periodic);
  Fingerprint f;
  using imaging::DeblurPath;
  const imaging::Prior tikhonov = imaging::Prior::Tikhonov;
  append<double>(f, imaging::deblur(g.view(), psf, {.lambda = 1e-3, .path = DeblurPath::Spectral, .prior = tikhonov})
                        .image.view());
  const imaging::DeblurOptions periodic{
      .lambda = 1e-3, .boundary = imaging::Boundary::Periodic, .path = DeblurPath::Spectral, .prior = tikhonov};
  append<double>(f, imaging::deblur(h.view(), motion, periodic).image.view());
  const imaging::DeblurResult free = imaging::deblur(g.view(), motion, {.path = DeblurPath::MatrixFree, .prior = tikhonov});
  append<double>(f, free.image.view());
  f.insert(f.end(), {free.lambda, static_cast<double>(free.report.iterations)});
  for (index size = 8; size < 40; size += 3) {  // many plans, of many sizes, made and destroyed
    const imaging::Convolution blur(size, size + 1, psf.kernel.view(), imaging::Boundary::Zero);
    append<double>(f, blur.apply_adjoint(blur.apply(image.block(0, 0, size, size + 1)).view()).view());
  }
  return f;
}

Fingerprint batched_inverse(std::uint64_t seed) {
  constexpr index n = 8, count = 200;
  Matrix<double> A = random<double>(n, n * count, seed);
  for (index k = 0; k < count; ++k)
    for (index i = 0; i < n; ++i) A(i, k * n + i) += n;
  const Matrix<double> B = random<double>(n, count, seed + 1);
  Fingerprint f;
  append<double>(f, batched::inv<double>(A.view()).x.view());
  append<double>(f, batched::solve<double>(A.view(), B.view()).x.view());
  return f;
}

Fingerprint sparse_coding(std::uint64_t seed) {
  const Matrix<double> X = random<double>(24, 300, seed);
  Matrix<double> D = random<double>(24, 48, seed + 1);
  for (index j = 0; j < D.cols(); ++j) {  // unit-norm atoms
    double norm = 0;
    for (index i = 0; i < D.rows(); ++i) norm += D(i, j) * D(i, j);
    for (index i = 0; i < D.rows(); ++i) D(i, j) /= std::sqrt(norm);
  }
  Fingerprint f;
  append<double>(f, fmri::batch_omp<double>(D.view(), X.view(), {.sparsity = 4}).to_dense().view());
  // The approximate update: the exact one's small eigenproblems (syevr) make a call to OpenBLAS's threaded
  // symv per column, and 8 threads queueing for OpenBLAS's thread pool spin (docs/design.md, "Threads"),
  // which made this test 20 times slower on 2 cores while proving nothing more about linv.
  const fmri::KsvdResult<double> k =
      fmri::ksvd<double>(X.view(), {.atoms = 16, .sparsity = 3, .iterations = 3, .exact = false, .seed = seed});
  append<double>(f, k.dictionary.view());
  append<double>(f, k.codes.to_dense().view());
  f.insert(f.end(), k.rmse.begin(), k.rmse.end());
  return f;
}

Fingerprint dictionary_learning(std::uint64_t seed) {
  const Matrix<double> X = random<double>(20, 120, seed);
  const fmri::AdlResult<double> r =
      fmri::adl<double>(X.view(), {.atoms = 6, .max_iterations = 5, .coefficient_steps = 5, .dictionary_steps = 5,
                                   .seed = seed});
  Fingerprint f;
  append<double>(f, r.dictionary.view());
  append<double>(f, r.codes.view());
  f.insert(f.end(), r.objective.begin(), r.objective.end());
  return f;
}

Fingerprint parafac2_model(std::uint64_t seed) {
  std::vector<Matrix<double>> slabs;
  std::vector<ConstMatrixView<double>> views;
  for (index k = 0; k < 4; ++k) slabs.push_back(random<double>(10, 30 + k, seed + static_cast<std::uint64_t>(k)));
  for (const Matrix<double>& s : slabs) views.push_back(s.view());
  const fmri::Parafac2Result<double> r = fmri::parafac2<double>(views, {.rank = 2, .max_iterations = 30, .seed = seed});
  Fingerprint f;
  append<double>(f, r.A.view());
  append<double>(f, r.H.view());
  append<double>(f, r.C.view());
  for (const Matrix<double>& p : r.P) append<double>(f, p.view());
  f.push_back(r.loss);
  return f;
}

Fingerprint bordered_jacobian(std::uint64_t seed) {
  const slam::BorderedJacobian<double> J = slam::random_bordered_jacobian<double>(200, 20, seed);
  const Matrix<double> d = random<double>(200, 1, seed + 1);
  Fingerprint f;
  append<double>(f, slam::pinv_apply(J, d.view(), 1e-3).x.view());
  append<double>(f, slam::normal_inverse(J).view());
  return f;
}

// Writes go through the process-wide table of temporary files (src/io/temporary_files.hpp).
Fingerprint file_round_trip(std::uint64_t seed) {
  const testing::TempDir dir;
  const Matrix<double> A = random<double>(70, 50, seed);
  Fingerprint f;
  for (const char* name : {"a.npy", "a.mtx"}) {
    io::write_matrix<double>(dir.file(name), A.view());
    append<double>(f, io::convert<double>(io::read_matrix(dir.file(name)), false).view());
  }
  return f;
}

struct Job {
  const char* name;
  Fingerprint (*run)(std::uint64_t seed);
};
constexpr Job kJobs[] = {
    {"inv (LU, Gauss-Jordan)", dense_inverse},
    {"solve, mixed solve, lstsq, pinv", dense_solve},
    {"LU and Cholesky objects", decompositions},
    {"wls (full, mixed, packed object)", weighted_least_squares},
    {"deblur (spectral DCT and DFT, matrix-free)", deblurring},
    {"batched inv and solve", batched_inverse},
    {"Batch-OMP and k-SVD", sparse_coding},
    {"ADL", dictionary_learning},
    {"PARAFAC2", parafac2_model},
    {"bordered pseudoinverse", bordered_jacobian},
    {".npy and .mtx written and read back", file_round_trip},
};
constexpr int kJobCount = static_cast<int>(std::size(kJobs));

std::uint64_t seed_of(int job, int thread) {
  return testing::case_seed(static_cast<std::uint64_t>(100 * job + thread));
}

// The index of the first entry that differs in its bits, or -1 when the two are identical.
std::int64_t first_difference(const Fingerprint& a, const Fingerprint& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return static_cast<std::int64_t>(i);
  return -1;
}

TEST(Threads, ConcurrentCallsGiveTheResultsOfCallsRunAlone) {
  const auto start = std::chrono::steady_clock::now();
  // Each thread's inputs are its own (its seeds), so the threads run different problems of each kind.
  std::vector<std::vector<Fingerprint>> alone(kThreads, std::vector<Fingerprint>(kJobCount));
  for (int t = 0; t < kThreads; ++t)
    for (int j = 0; j < kJobCount; ++j) alone[t][j] = kJobs[j].run(seed_of(j, t));
  const double alone_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::vector<Fingerprint>> together(kThreads, std::vector<Fingerprint>(kJobCount));
    std::vector<std::string> errors(kThreads);
    {
      std::vector<std::jthread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          try {
            // Each thread starts at another job, so different kinds of calls overlap.
            for (int step = 0; step < kJobCount; ++step) {
              const int j = (t + step + round) % kJobCount;
              together[t][j] = kJobs[j].run(seed_of(j, t));
            }
          } catch (const std::exception& e) {
            errors[t] = e.what();
          }
        });
    }
    for (int t = 0; t < kThreads; ++t) {
      ASSERT_EQ(errors[t], "") << "thread " << t << ", round " << round;
      for (int j = 0; j < kJobCount; ++j) {
        const std::int64_t at = first_difference(together[t][j], alone[t][j]);
        EXPECT_EQ(at, -1) << kJobs[j].name << ": thread " << t << ", round " << round << ": "
                          << together[t][j].size() << " numbers against " << alone[t][j].size()
                          << " alone, first difference at " << at;
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << kThreads << " threads x " << kJobCount << " kinds of calls: alone " << alone_seconds << " s, "
            << kRounds << " concurrent rounds " << seconds - alone_seconds << " s\n";
}

// FFTW's planner, from 8 threads at once and nothing else. Without the planner's lock
// (src/common/fftw_planner.hpp) this crashed in every one of six runs, the mixed rounds above in one of five.
TEST(Threads, FftPlansMadeAtOnce) {
  const Matrix<double> image = random_uniform<double>(40, 41, testing::case_seed(900), 0.0, 1.0);
  const imaging::Psf psf = imaging::parse_psf("disk:radius=2");
  const auto convolutions = [&] {
    Fingerprint f;
    for (index size = 4; size <= 40; ++size) {
      const imaging::Convolution h(size, size + 1, psf.kernel.view(), imaging::Boundary::Periodic);
      append<double>(f, h.apply(image.block(0, 0, size, size + 1)).view());
    }
    return f;
  };
  const Fingerprint alone = convolutions();
  std::vector<Fingerprint> together(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int repeat = 0; repeat < 10; ++repeat) together[t] = convolutions();
      });
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(first_difference(together[t], alone), -1) << "thread " << t;
}

// The CPU thread count: set for every later call (OpenBLAS told too), zero refused, and a call's result
// on one thread the same as on several, to rounding.
TEST(Threads, CpuThreadsAreSetForLaterCallsAndZeroIsRefused) {
  const int before = cpu_threads();
  ASSERT_GE(before, 1);
  const Matrix<double> A = random_uniform<double>(200, 200, testing::case_seed(40));
  const Matrix<double> several = inv<double>(A.view()).x;
  set_cpu_threads(1);
  EXPECT_EQ(cpu_threads(), 1);
  EXPECT_NE(build_info().blas.find("(1 threads)"), std::string::npos) << build_info().blas;
  const Matrix<double> one = inv<double>(A.view()).x;
  EXPECT_THROW(set_cpu_threads(0), InvalidArgument);
  EXPECT_EQ(cpu_threads(), 1);
  set_cpu_threads(before);
  // both are A^-1 to n eps cond(A) relative (LAPACK's bound): so is their difference
  const auto norm1 = [](const Matrix<double>& M) {
    double best = 0;
    for (index j = 0; j < M.cols(); ++j) {
      double column = 0;
      for (index i = 0; i < M.rows(); ++i) column += std::abs(M(i, j));
      best = std::max(best, column);
    }
    return best;
  };
  Matrix<double> difference = Matrix<double>::copy_of(several.view());
  for (index e = 0; e < A.size(); ++e) difference.data()[e] -= one.data()[e];
  const double cond = norm1(A) * norm1(several), eps = std::numeric_limits<double>::epsilon();
  EXPECT_LE(norm1(difference) / norm1(several), 30.0 * 200 * eps * cond);
}

}  // namespace
}  // namespace linv
