// Thread safety of the CUDA backend (docs/design.md, "Threads"): each thread that uses a GPU holds a context
// of its own there (streams, library handles, scratch), handed back for reuse when the thread ends; 4
// threads run independent GPU calls of every kind at once, several rounds, while another waits on the
// whole device, and each result must match the same call run alone. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "linv/adl.hpp"
#include "linv/batched.hpp"
#include "linv/dense.hpp"
#include "linv/fmri.hpp"
#include "linv/generate.hpp"
#include "linv/imaging.hpp"
#include "linv/parafac2.hpp"
#include "linv/slam.hpp"
#include "linv/wls.hpp"
#include "support/gpu.hpp"
#include "support/testing.hpp"
#ifdef LINV_HAVE_CUDA
#include "cuda/context.hpp"
#endif

namespace linv {
namespace {

constexpr int kThreads = 4;

// A call's results, copied to the host, as one list of numbers.
using Fingerprint = std::vector<double>;

template <Real T>
void append(Fingerprint& f, const Matrix<T>& A) {
  const Matrix<T> host = A.to(Device::cpu());
  for (index k = 0; k < host.size(); ++k) f.push_back(static_cast<double>(host.data()[k]));
}

// max |a - b| / max |b|
double difference(const Fingerprint& a, const Fingerprint& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return scale > 0 ? worst / scale : worst;
}

template <Real T>
Matrix<T> on_gpu(const Matrix<T>& A) {
  return A.to(Device::cuda(0));
}

// A diagonally dominant n x n matrix: well conditioned, so no call refuses it.
Matrix<double> dominant(index n, std::uint64_t seed) {
  Matrix<double> A = random_uniform<double>(n, n, seed);
  for (index i = 0; i < n; ++i) A(i, i) += static_cast<double>(n);
  return A;
}

Fingerprint dense_calls(std::uint64_t seed) {
  const Matrix<double> A = on_gpu(dominant(160, seed)), B = on_gpu(random_uniform<double>(160, 3, seed + 1));
  const Matrix<double> spd = on_gpu(generate<double>(MatrixKind::SPD, 96, {.seed = seed}));
  Fingerprint f;
  for (Method method : {Method::LU, Method::GaussJordan}) append(f, inv<double>(A.view(), {.method = method}).x);
  append(f, inv<double>(spd.view(), {.method = Method::Cholesky}).x);
  append(f, solve<double>(A.view(), B.view()).x);  // few right-hand sides: linv's own triangular solves
  append(f, solve<double>(A.view(), B.view(), {.precision = Precision::Mixed}).x);
  const LU<double> lu(A.view());
  append(f, lu.solve(B.view()));
  f.push_back(lu.rcond());
  const Cholesky<double> chol(spd.view());
  append(f, chol.inverse());
  return f;
}

Fingerprint batched_and_wls(std::uint64_t seed) {
  constexpr index n = 12, count = 300;
  Matrix<double> batch = random_uniform<double>(n, n * count, seed);
  for (index k = 0; k < count; ++k)
    for (index i = 0; i < n; ++i) batch(i, k * n + i) += n;
  Fingerprint f;
  append(f, batched::inv<double>(on_gpu(batch).view()).x);
  const Matrix<double> A = on_gpu(random_uniform<double>(40, 120, seed + 1));
  const Matrix<double> d = on_gpu(random_uniform<double>(120, 1, seed + 2, 0.5, 2.0));
  const Matrix<double> b = on_gpu(random_uniform<double>(120, 2, seed + 3));
  append(f, wls<double>(A.view(), d.view(), b.view()).x);
  append(f, wls<double>(A.view(), d.view(), b.view(), {.storage = Storage::Packed}).x);
  return f;
}

// cuFFT plans, made and destroyed by every call, on both paths.
Fingerprint deblurring(std::uint64_t seed) {
  const Matrix<double> image = random_uniform<double>(64, 72, seed, 0.0, 1.0);
  const imaging::Psf psf = imaging::parse_psf("gaussian:size=5,sigma=1");
  const imaging::Psf motion = imaging::parse_psf("motion:len=5,angle=30");
  const Matrix<double> g = on_gpu(imaging::convolve(image.view(), psf.kernel.view(), imaging::Boundary::Reflexive));
  Fingerprint f;
  using imaging::DeblurPath;
  // the Tikhonov prior: one linear solve, whose result is the same to rounding however the threads interleave
  const imaging::Prior tikhonov = imaging::Prior::Tikhonov;
  append(f, imaging::deblur(g.view(), psf, {.lambda = 1e-3, .path = DeblurPath::Spectral, .prior = tikhonov}).image);
  append(f, imaging::deblur(g.view(), motion, {.lambda = 1e-3, .path = DeblurPath::MatrixFree, .prior = tikhonov}).image);
  return f;
}

Fingerprint fmri_calls(std::uint64_t seed) {
  const Matrix<double> X = on_gpu(random_uniform<double>(30, 1500, seed));
  Fingerprint f;
  const fmri::KsvdResult<double> k =
      fmri::ksvd<double>(X.view(), {.atoms = 12, .sparsity = 3, .iterations = 1, .seed = seed});
  f.insert(f.end(), k.rmse.begin(), k.rmse.end());
  const fmri::AdlResult<double> a = fmri::adl<double>(
      X.view(), {.atoms = 8, .max_iterations = 3, .coefficient_steps = 5, .dictionary_steps = 5, .seed = seed});
  f.insert(f.end(), a.objective.begin(), a.objective.end());
  append(f, a.dictionary);
  std::vector<Matrix<double>> slabs;
  std::vector<ConstMatrixView<double>> views;
  for (index s = 0; s < 3; ++s)
    slabs.push_back(on_gpu(random_uniform<double>(12, 200 + s, seed + 1 + static_cast<std::uint64_t>(s))));
  for (const Matrix<double>& s : slabs) views.push_back(s.view());
  const fmri::Parafac2Result<double> p = fmri::parafac2<double>(views, {.rank = 2, .max_iterations = 10, .seed = seed});
  f.insert(f.end(), p.loss_history.begin(), p.loss_history.end());
  return f;
}

Fingerprint bordered_jacobian(std::uint64_t seed) {
  const slam::BorderedJacobian<double> J = slam::random_bordered_jacobian<double>(600, 40, seed).to(Device::cuda(0));
  const Matrix<double> d = on_gpu(random_uniform<double>(600, 2, seed + 1));
  Fingerprint f;
  append(f, slam::pinv_apply(J, d.view(), 1e-3).x);
  return f;
}

struct Job {
  const char* name;
  Fingerprint (*run)(std::uint64_t seed);
  // How far a concurrent result may be from the lone one: rounding only, where the GPU's own order of
  // summation (atomics) varies from run to run, amplified mildly by iterations.
  double tolerance;
};
constexpr Job kJobs[] = {
    {"inv, solve, LU and Cholesky objects", dense_calls, 1e-12},
    {"batched inv, wls", batched_and_wls, 1e-12},
    {"deblur (spectral, matrix-free)", deblurring, 1e-8},  // CG may stop an iteration apart
    {"k-SVD, ADL, PARAFAC2", fmri_calls, 1e-9},
    {"bordered pseudoinverse", bordered_jacobian, 1e-10},
};
constexpr int kJobCount = static_cast<int>(std::size(kJobs));

std::uint64_t seed_of(int job, int thread) {
  return testing::case_seed(static_cast<std::uint64_t>(700 + 10 * job + thread));
}

TEST(ThreadsGpu, ConcurrentCallsMatchCallsRunAlone) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  std::vector<std::vector<Fingerprint>> alone(kThreads, std::vector<Fingerprint>(kJobCount));
  for (int t = 0; t < kThreads; ++t)
    for (int j = 0; j < kJobCount; ++j) alone[t][j] = kJobs[j].run(seed_of(j, t));

  const int rounds = testing::sizes(3, 1);  // one under the sanitizers, which serialise the threads' kernels anyway
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::vector<Fingerprint>> together(kThreads, std::vector<Fingerprint>(kJobCount));
    std::vector<std::string> errors(kThreads + 1);
    std::atomic<int> running{kThreads};
    {
      std::vector<std::jthread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          try {
            for (int step = 0; step < kJobCount; ++step) {
              const int j = (t + step + round) % kJobCount;
              together[t][j] = kJobs[j].run(seed_of(j, t));
            }
          } catch (const std::exception& e) {
            errors[t] = e.what();
          }
          --running;
        });
      // Meanwhile another thread waits on the whole device again and again: linv::synchronize covers
      // every thread's streams and must neither fail nor disturb them.
      threads.emplace_back([&] {
        try {
          while (running > 0) synchronize(gpu);
        } catch (const std::exception& e) {
          errors[kThreads] = e.what();
        }
      });
    }
    for (int t = 0; t <= kThreads; ++t) ASSERT_EQ(errors[t], "") << "thread " << t << ", round " << round;
    for (int t = 0; t < kThreads; ++t)
      for (int j = 0; j < kJobCount; ++j)
        EXPECT_LE(difference(together[t][j], alone[t][j]), kJobs[j].tolerance)
            << kJobs[j].name << ": thread " << t << ", round " << round;
  }
}

#ifdef LINV_HAVE_CUDA
// What each of `count` threads, alive at the same time, gets as its context of GPU 0 (and that asking
// again on the same thread gives the same one).
std::vector<const cuda::Context*> contexts_of_threads(int count) {
  std::vector<const cuda::Context*> seen(static_cast<std::size_t>(count));
  std::vector<int> stable(static_cast<std::size_t>(count));  // not vector<bool>: threads write its elements
  std::barrier all_alive(count);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < count; ++t)
      threads.emplace_back([&, t] {
        const cuda::Context& first = cuda::Context::get(0);
        stable[static_cast<std::size_t>(t)] = &cuda::Context::get(0) == &first;
        seen[static_cast<std::size_t>(t)] = &first;
        all_alive.arrive_and_wait();  // none ends (handing its context back) before all have one
      });
  }
  for (int t = 0; t < count; ++t) EXPECT_TRUE(stable[static_cast<std::size_t>(t)]) << "thread " << t;
  return seen;
}

TEST(ThreadsGpu, EachThreadHoldsItsOwnContextAndHandsItBack) {
  REQUIRE_GPU();
  const cuda::Context& mine = cuda::Context::get(0);
  const std::vector<const cuda::Context*> first = contexts_of_threads(kThreads);
  std::set<const cuda::Context*> distinct(first.begin(), first.end());
  distinct.insert(&mine);
  EXPECT_EQ(distinct.size(), static_cast<std::size_t>(kThreads) + 1) << "threads alive together shared a context";
  std::set<cudaStream_t> streams;
  for (const cuda::Context* c : distinct) streams.insert({c->main().stream, c->side().stream});
  EXPECT_EQ(streams.size(), 2 * distinct.size()) << "contexts shared a stream";

  // The contexts of ended threads are reused: many short-lived threads make no more than ran at once.
  for (int wave = 0; wave < 3; ++wave) {
    const std::vector<const cuda::Context*> next = contexts_of_threads(kThreads);
    for (const cuda::Context* c : next)
      EXPECT_TRUE(std::find(first.begin(), first.end(), c) != first.end()) << "wave " << wave << ": a new context";
  }
  EXPECT_EQ(&cuda::Context::get(0), &mine);
}
#endif

}  // namespace
}  // namespace linv
