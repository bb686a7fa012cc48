// The CUDA dense routines against the CPU backend (the oracle): every method on every matrix kind,
// sizes that are not multiples of any block size, float and double. Device memory starts as NaN
// (LINV_POISON_DEVICE_MEMORY, set by the test main), so unwritten output shows. Skips without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "kernels/backend.hpp"
#include "linv/accuracy.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "linv/generate.hpp"
#include "support/adversarial.hpp"
#include "support/dense_checks.hpp"
#include "support/gpu.hpp"
#include "support/plu_checks.hpp"
#include "support/testing.hpp"

namespace linv {
namespace {

using testing::eps;
using testing::kForwardThreshold;
using testing::kResidualThreshold;

template <Real T>
double difference(ConstMatrixView<T> x, ConstMatrixView<T> ref) {
  return testing::relative_difference<T, T>(x, ref);
}


// What a run produced: a host copy of the result, or the error it raised.
template <Real T>
struct Outcome {
  std::optional<Matrix<T>> x;
  std::optional<Solution<T>> solution;  // report and all
  std::string error_type;               // "" on success
  std::string message;
  index pivot = 0;                       // SingularMatrix / NotPositiveDefinite
  bool exact = false;                    // SingularMatrix with an exactly zero pivot
};

template <Real T>
Outcome<T> capture(const std::function<Solution<T>()>& run) {
  Outcome<T> o;
  try {
    Solution<T> s = run();
    o.x = s.x.to(Device::cpu());
    o.solution = std::move(s);
  } catch (const SingularMatrix& e) {
    o.error_type = "SingularMatrix";
    o.pivot = e.pivot();
    o.exact = e.rcond() == 0;
    o.message = e.what();
  } catch (const NotPositiveDefinite& e) {
    o.error_type = "NotPositiveDefinite";
    o.pivot = e.minor();
    o.message = e.what();
  } catch (const NumericalError& e) {
    o.error_type = "NumericalError";
    o.message = e.what();
  }
  return o;
}

constexpr MatrixKind kKinds[] = {MatrixKind::Random, MatrixKind::SPD,      MatrixKind::Band,    MatrixKind::Hollow,
                                 MatrixKind::Sparse, MatrixKind::Identity, MatrixKind::IllCond, MatrixKind::Singular};
constexpr Method kMethods[] = {Method::Auto,        Method::LU,          Method::CALU,
                               Method::Cholesky,    Method::GaussJordan, Method::CholeskyGETS};

// Runs `method` on A on both devices and checks that they agree: the same error (and, for exactly zero
// pivots in LU, the same pivot), or results within the scaled forward bound of each other with a small
// GPU residual.
template <Real T>
void compare_inverse(const Matrix<T>& A, Method method, const std::string& what) {
  SCOPED_TRACE(what + " method " + std::string(to_string(method)));
  const index n = A.rows();
  const Matrix<T> gpu_a = A.to(Device::cuda(0));
  Outcome<T> cpu = capture<T>([&] { return inv<T>(A.view(), {.method = method}); });
  Outcome<T> gpu = capture<T>([&] { return inv<T>(gpu_a.view(), {.method = method, .compute_residual = true}); });
  // Within a factor 100 of singular to working precision either answer is right.
  double cond = std::numeric_limits<double>::infinity();
  if (cpu.x) cond = 1.0 / cpu.solution->report.rcond;
  const bool borderline = cond * eps<T>() > 0.01 && cond * eps<T>() < 100;
  if (borderline && cpu.error_type != gpu.error_type) return;
  ASSERT_EQ(gpu.error_type, cpu.error_type) << "cpu: " << cpu.message << "\ngpu: " << gpu.message;
  if (!cpu.x) {
    if (cpu.error_type == "NotPositiveDefinite") {
      EXPECT_EQ(gpu.pivot, cpu.pivot);
    }
    if (method == Method::LU && cpu.exact && gpu.exact) {
      EXPECT_EQ(gpu.pivot, cpu.pivot);
    }
    return;
  }
  if (method != Method::Auto) {  // Auto may choose differently on the GPU (faster there), never worse
    EXPECT_EQ(gpu.solution->report.method, cpu.solution->report.method);
  }
  EXPECT_EQ(gpu.solution->report.device, Device::cuda(0));
  ASSERT_TRUE(testing::all_finite<T>(gpu.x->view())) << "unwritten (NaN) or overflowed output";
  const double residual = std::min(gpu.solution->report.scaled_residual,
                                   scaled_left_residual_inverse<T>(A.view(), gpu.x->view(), eps<T>()));
  EXPECT_LE(residual, kResidualThreshold);
  EXPECT_LE(difference<T>(gpu.x->view(), cpu.x->view()),
            2 * kForwardThreshold * static_cast<double>(n) * eps<T>() * cond);
}

template <Real T>
class CudaDense : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaDense, Types);

void inverse_sweep(const std::vector<index>& sizes, std::uint64_t salt0, auto type_tag) {
  using T = decltype(type_tag);
  std::uint64_t salt = salt0;
  for (MatrixKind kind : kKinds)
    for (index n : sizes) {
      const auto seed = testing::case_seed(salt++);
      LINV_TRACE_SEED(seed);
      const Matrix<T> A = generate<T>(kind, n, {.seed = seed});
      for (Method method : kMethods)
        compare_inverse<T>(A, method, std::string(to_string(kind)) + " n=" + std::to_string(n) + " " + type_name<T>());
    }
}

TYPED_TEST(CudaDense, SmallInverseEveryKindEveryMethod) {
  REQUIRE_GPU();
  inverse_sweep({1, 2, 7, 33}, 10, TypeParam{});
}

TYPED_TEST(CudaDense, InverseEveryKindEveryMethod) {
  REQUIRE_GPU();
  inverse_sweep(testing::sizes<std::vector<index>>({130, 300, 1000}, {130, 300}), 100, TypeParam{});
}

// The panel width as LINV_GJ_BLOCK sets it, for one scope.
class PanelWidth {
 public:
  explicit PanelWidth(index block) { setenv("LINV_GJ_BLOCK", std::to_string(block).c_str(), 1); }
  ~PanelWidth() { unsetenv("LINV_GJ_BLOCK"); }
  PanelWidth(const PanelWidth&) = delete;
  PanelWidth& operator=(const PanelWidth&) = delete;
};

TYPED_TEST(CudaDense, GaussJordanManyPanelsAndLookAhead) {
  REQUIRE_GPU();
  using T = TypeParam;
  const SolveOptions gauss_jordan{.method = Method::GaussJordan, .allow_ill_conditioned = true};
  for (index n : {64, 100, 517}) {
    for (index block : {16, 32, 100}) {
      const auto seed = testing::case_seed(200 + n + block);
      LINV_TRACE_SEED(seed);
      SCOPED_TRACE("n=" + std::to_string(n) + " block=" + std::to_string(block));
      const Matrix<T> A = generate<T>(MatrixKind::Random, n, {.seed = seed});
      const PanelWidth width(block);
      const Matrix<T> x = inv<T>(A.to(Device::cuda(0)).view(), gauss_jordan).x.to(Device::cpu());
      ASSERT_TRUE(testing::all_finite<T>(x.view()));
      const Matrix<T> ref = LU<T>(A.view()).inverse();
      const double cond = norm1<T>(A.view()) * norm1<T>(ref.view());
      EXPECT_LE(std::min(scaled_residual_inverse<T>(A.view(), x.view(), eps<T>()),
                         scaled_left_residual_inverse<T>(A.view(), x.view(), eps<T>())),
                kResidualThreshold);
      EXPECT_LE(difference<T>(x.view(), ref.view()),
                2 * kForwardThreshold * static_cast<double>(n) * eps<T>() * cond);
    }
  }
  // a zero column: the first exactly zero pivot, from whichever panel holds it
  Matrix<T> Z = generate<T>(MatrixKind::Random, 90, {.seed = testing::case_seed(299)});
  for (index i = 0; i < 90; ++i) Z(i, 70) = T(0);
  const PanelWidth width(32);
  try {
    (void)inv<T>(Z.to(Device::cuda(0)).view(), gauss_jordan);
    FAIL() << "a matrix with a zero column should be refused";
  } catch (const SingularMatrix& e) {
    EXPECT_EQ(e.pivot(), 71);
  }
}

// The GPU's tournament plays the CPU's games (same shape, same arithmetic in each elimination), so on
// random matrices both pick the same pivots, through one, two and three rounds (1000 and 2100 rows: 4
// and 9 leaves); the factors solve as accurately as partial pivoting's.
TYPED_TEST(CudaDense, TournamentPivotsAreTheCpusAndSolveAccurately) {
  REQUIRE_GPU();
  using T = TypeParam;
  for (index n : testing::sizes<std::vector<index>>({200, 1000, 2100}, {200, 1000})) {
    const auto seed = testing::case_seed(700 + n);
    LINV_TRACE_SEED(seed);
    SCOPED_TRACE("n=" + std::to_string(n));
    const Matrix<T> A = random_uniform<T>(n, n, seed);
    const Matrix<T> B = random_uniform<T>(n, 2, seed + 1);
    const Matrix<T> gA = A.to(Device::cuda(0));
    const LU<T> cpu(A.view(), Pivoting::Tournament), gpu(gA.view(), Pivoting::Tournament);
    ASSERT_EQ(gpu.pivoting(), Pivoting::Tournament) << gpu.fallback_reason();
    // the first panel is the same data on both: the same pivots; later panels come from updates that
    // cuBLAS and OpenBLAS round differently, which in float32 can reorder a near tie
    const std::vector<int>& g = gpu.pivots();
    const std::vector<int>& c = cpu.pivots();
    EXPECT_TRUE(std::equal(g.begin(), g.begin() + 32, c.begin()));
    if constexpr (std::is_same_v<T, double>) {
      EXPECT_EQ(g, c);
    }
    // the same pivots give the same growth; float32's may differ past the first panel, within a factor 2
    const double growth_tolerance = std::is_same_v<T, double> ? 1e-3 : 0.7;
    EXPECT_NEAR(std::log(gpu.growth()), std::log(cpu.growth()), growth_tolerance);
    const Matrix<T> x = gpu.solve(B.to(Device::cuda(0)).view()).to(Device::cpu());
    EXPECT_LE(scaled_residual_solve<T>(A.view(), x.view(), B.view(), eps<T>()), kResidualThreshold);
    // a random float32 matrix of order 2100 can be singular to working precision (rcond < eps): the
    // inverse is still backward stable, which is what is checked
    const Solution<T> s =
        inv<T>(gA.view(), {.method = Method::CALU, .compute_residual = true, .allow_ill_conditioned = true});
    EXPECT_EQ(s.report.method, Method::CALU);
    EXPECT_EQ(s.report.growth, gpu.growth());
    EXPECT_LE(std::min(s.report.scaled_residual,
                       scaled_left_residual_inverse<T>(A.view(), s.x.to(Device::cpu()).view(), eps<T>())),
              kResidualThreshold);
  }
  // Wilkinson's growth matrix: partial pivoting again, said; a zero column: its pivot named
  const index n = 40;
  Matrix<T> W(n, n);
  for (index j = 0; j < n; ++j)
    for (index i = 0; i < n; ++i) W(i, j) = i == j || j == n - 1 ? T(1) : i > j ? T(-1) : T(0);
  const LU<T> wilkinson(W.to(Device::cuda(0)).view(), Pivoting::Tournament);
  EXPECT_EQ(wilkinson.pivoting(), Pivoting::Partial);
  EXPECT_FALSE(wilkinson.fallback_reason().empty());
  Matrix<T> Z = random_uniform<T>(300, 300, testing::case_seed(799));
  for (index i = 0; i < 300; ++i) Z(i, 270) = T(0);
  try {
    (void)inv<T>(Z.to(Device::cuda(0)).view(), {.method = Method::CALU});
    FAIL() << "a matrix with a zero column should be refused";
  } catch (const SingularMatrix& e) {
    EXPECT_EQ(e.pivot(), 271);
  }
}

// The GPU's butterflies are the CPU's, both ways round and from both sides, through one pass of both levels
// (orders divisible by 4) or a pass per level (the others).
// The one-pass scan behind every input check (the first NaN or Inf in column order, the largest finite
// magnitude) agrees with the CPU's on views with and without gaps between columns: a batch's few-row
// right-hand sides (8 x 2^17 + 5) and single rows or columns take the flat kernel, a view with ld > rows the
// 2-D one; the bad entries sit at the first, a middle and the last entry, and at scales 2^+-(range - 2).
TYPED_TEST(CudaDense, MagnitudeAgreesWithTheCpuOnEveryShape) {
  REQUIRE_GPU();
  using T = TypeParam;
  const kernels::Dense<T>& cpu = kernels::dense<T>(Device::cpu());
  const kernels::Dense<T>& gpu = kernels::dense<T>(Device::cuda(0));
  const int far = std::numeric_limits<T>::max_exponent - 2;
  struct Shape { index rows, cols, ld; };
  std::uint64_t seed = testing::case_seed(1950);
  for (const Shape& s : {Shape{1, 100003, 1}, Shape{3, 70001, 3}, Shape{8, (index{1} << 17) + 5, 8},
                         Shape{100003, 1, 100003}, Shape{37, 41, 37}, Shape{37, 41, 40}, Shape{1, 1, 1}}) {
    SCOPED_TRACE(fmt::format("{} x {} (ld {})", s.rows, s.cols, s.ld));
    Matrix<T> whole = random_uniform<T>(s.ld, s.cols, ++seed, T(-1), T(1));
    const MatrixView<T> a = whole.view().block(0, 0, s.rows, s.cols);
    const index size = s.rows * s.cols;
    for (int scale : {0, far, -far}) {
      for (index k = 0; k < size; ++k) a(k % s.rows, k / s.rows) = std::ldexp(a(k % s.rows, k / s.rows), scale);
      const Matrix<T> on_gpu = whole.to(Device::cuda(0));
      const kernels::Magnitude want = cpu.magnitude(ConstMatrixView<T>(a));
      const kernels::Magnitude got = gpu.magnitude(on_gpu.view().block(0, 0, s.rows, s.cols));
      EXPECT_EQ(got.max_abs, want.max_abs) << "scale 2^" << scale;
      EXPECT_FALSE(got.first_non_finite.has_value());
      for (index k = 0; k < size; ++k) a(k % s.rows, k / s.rows) = std::ldexp(a(k % s.rows, k / s.rows), -scale);
    }
    for (index bad : {size - 1, size / 2, index{0}}) {  // each earlier than the last: the first must win
      a(bad % s.rows, bad / s.rows) = bad == size / 2 ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
      const kernels::Magnitude want = cpu.magnitude(ConstMatrixView<T>(a));
      const kernels::Magnitude got = gpu.magnitude(whole.to(Device::cuda(0)).view().block(0, 0, s.rows, s.cols));
      ASSERT_TRUE(got.first_non_finite.has_value());
      EXPECT_EQ(*got.first_non_finite, *want.first_non_finite);
      EXPECT_EQ(*got.first_non_finite, std::make_pair(bad % s.rows, bad / s.rows));
      EXPECT_EQ(got.max_abs, want.max_abs);
    }
  }
}

TYPED_TEST(CudaDense, ButterfliesAreTheCpus) {
  REQUIRE_GPU();
  using T = TypeParam;
  const kernels::Dense<T>& cpu = kernels::dense<T>(Device::cpu());
  const kernels::Dense<T>& gpu = kernels::dense<T>(Device::cuda(0));
  for (index n : {4, 6, 101, 1000, 1002}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    Matrix<T> r = random_uniform<T>(n, kernels::kButterflyDepth, testing::case_seed(800 + n));
    for (index j = 0; j < r.cols(); ++j)
      for (index i = 0; i < n; ++i) r(i, j) += T(1.5);  // positive, as the factorization's are
    const Matrix<T> gr = r.to(Device::cuda(0));
    for (Side side : {Side::Left, Side::Right})
      for (Op op : {Op::None, Op::Transpose}) {
        Matrix<T> x = side == Side::Left ? random_uniform<T>(n, 5, testing::case_seed(810 + n))
                                         : random_uniform<T>(5, n, testing::case_seed(820 + n));
        Matrix<T> gx = x.to(Device::cuda(0));
        cpu.butterflies(r.view(), side, op, x.view());
        gpu.butterflies(gr.view(), side, op, gx.view());
        EXPECT_LE(difference<T>(gx.to(Device::cpu()).view(), x.view()), 8 * eps<T>());
      }
  }
}

// The randomized LU on the GPU: the CPU's butterflies (one seed) and the same decision; solutions and
// inverses within the bound, the determinant's sign and a comparable rcond; `auto` takes it for solves
// from order 1024 and says how many refinement steps it took; a singular matrix is still refused.
TYPED_TEST(CudaDense, RandomizedLUAgreesWithCpu) {
  REQUIRE_GPU();
  using T = TypeParam;
  for (index n : testing::sizes<std::vector<index>>({3, 37, 1001, 2050}, {3, 37, 1001})) {
    const auto seed = testing::case_seed(720 + n);
    LINV_TRACE_SEED(seed);
    SCOPED_TRACE("n=" + std::to_string(n));
    const Matrix<T> A = random_uniform<T>(n, n, seed);
    const Matrix<T> B = random_uniform<T>(n, 2, seed + 1);
    const Matrix<T> gA = A.to(Device::cuda(0)), gB = B.to(Device::cuda(0));
    const LU<T> cpu(A.view(), Pivoting::Randomized), gpu(gA.view(), Pivoting::Randomized), partial(A.view());
    ASSERT_EQ(gpu.pivoting(), Pivoting::Randomized) << gpu.fallback_reason();
    ASSERT_EQ(cpu.pivoting(), Pivoting::Randomized) << cpu.fallback_reason();
    // the same butterflies make the same A_r; the factors then differ by rounding alone, which in float32
    // can move the small pivots that no pivoting leaves in place, and the growth with them (measured: 3.2e3
    // on the GPU against 4.3e4 on the CPU at order 2050)
    if constexpr (std::is_same_v<T, double>) {
      EXPECT_NEAR(std::log(gpu.growth()), std::log(cpu.growth()), 1e-3);
    }
    try {  // refinement reaches partial pivoting's backward error, or says it could not (float32)
      const Matrix<T> x = gpu.solve(gB.view()).to(Device::cpu());
      EXPECT_LE(scaled_residual_solve<T>(A.view(), x.view(), B.view(), eps<T>()), kResidualThreshold);
    } catch (const NumericalError& e) {
      EXPECT_NE(std::string(e.what()).find("refinement stalled"), std::string::npos) << e.what();
    }
    const Solution<T> s = inv<T>(gA.view(), {.method = Method::RBT, .allow_ill_conditioned = true});
    const Matrix<T> inverse = s.x.to(Device::cpu());
    EXPECT_LE(std::min(scaled_residual_inverse<T>(A.view(), inverse.view(), eps<T>()),
                       scaled_left_residual_inverse<T>(A.view(), inverse.view(), eps<T>())),
              kResidualThreshold)
        << "growth " << gpu.growth();
    if constexpr (std::is_same_v<T, double>) {  // float32's refinement may stall and fall back, said
      EXPECT_EQ(s.report.method, Method::RBT) << s.report.to_json();
    }
    if (10 * n * eps<T>() * std::max(1.0, gpu.growth()) / partial.rcond() < 0.1) {  // a sign that is known
      EXPECT_EQ(gpu.determinant().sign, partial.determinant().sign);
    }
    const LU<T> fresh(gA.view(), Pivoting::Randomized);  // the estimate, not inverse()'s exact value
    // comparable where the factors carry digits: growth eps well below rcond (float32 at order 2050 has
    // rcond 3e-7 and growth 4e4, and its estimate came out 10x low)
    if (partial.rcond() > 1e3 * eps<T>() * fresh.growth()) {
      EXPECT_LE(fresh.rcond(), 10 * partial.rcond());
      EXPECT_GE(fresh.rcond(), partial.rcond() / 10);
    }
  }
  const index n = 1100;
  const Matrix<T> A = random_uniform<T>(n, n, testing::case_seed(790));
  const Matrix<T> B = random_uniform<T>(n, 1, testing::case_seed(791));
  const Solution<T> s = solve<T>(A.to(Device::cuda(0)).view(), B.to(Device::cuda(0)).view(),
                                 {.compute_residual = true, .allow_ill_conditioned = true});
  EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
  if constexpr (std::is_same_v<T, double>) {  // auto's randomized solve, refined
    EXPECT_EQ(s.report.method, Method::RBT) << s.report.to_json();
    bool said = false;
    for (const std::string& note : s.report.notes) said = said || note.find("refined in") != std::string::npos;
    EXPECT_TRUE(said) << s.report.to_json();
  } else {  // float32's could not be refined (eps growth above rcond): auto runs partial pivoting
    EXPECT_EQ(s.report.method, Method::LU) << s.report.to_json();
  }
  Matrix<T> Z = random_uniform<T>(300, 300, testing::case_seed(792));
  for (index i = 0; i < 300; ++i) Z(i, 270) = T(0);
  const Matrix<T> b300 = Matrix<T>::copy_of(B.block(0, 0, 300, 1)).to(Device::cuda(0));
  EXPECT_THROW((void)solve<T>(Z.to(Device::cuda(0)).view(), b300.view(),
                              {.method = Method::RBT}),
               SingularMatrix);
}

// The matrices that stress pivoting, randomized on the GPU: every result within the residual bound, or
// partial pivoting again with a note, or the matrix refused as singular to working precision.
TYPED_TEST(CudaDense, RandomizedLUOnAdversarialMatrices) {
  REQUIRE_GPU();
  using T = TypeParam;
  testing::for_each_adversary<T>(490, [](const testing::Adversary&, index, const Matrix<T>& a, const Matrix<T>& b) {
    std::optional<Solution<T>> solution;
    try {
      solution = solve<T>(a.to(Device::cuda(0)).view(), b.to(Device::cuda(0)).view(),
                          {.method = Method::RBT, .compute_residual = true});
    } catch (const SingularMatrix&) {
      EXPECT_LT(LU<T>(a.view()).rcond(), 100 * eps<T>());
      return;
    }
    const Solution<T>& s = *solution;
    EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    if (s.report.method == Method::LU) {
      bool said = false;
      for (const std::string& note : s.report.notes) said = said || note.find("partial pivoting") != std::string::npos;
      EXPECT_TRUE(said);
    } else {
      EXPECT_EQ(s.report.method, Method::RBT);
    }
  });
}

// Issue 40's false refusal: a zero-diagonal, permutation-like matrix of cond 1e10 at order 1024 was called
// singular (rcond 2.1e-18) by the randomized inverse that `auto` picks, where partial pivoting and NumPy
// invert it. The neighbourhood: every order around auto's range for the randomized LU, cond 1e8 to 1e12,
// exactly permutation-like and with noise, for inv and solve under auto: each is inverted or solved within
// the bound, the CPU's partial pivoting agreeing on the verdict.
TYPED_TEST(CudaDense, RandomizedLUNeverRefusesWhatPartialPivotingInverts) {
  REQUIRE_GPU();
  using T = TypeParam;
  if (std::is_same_v<T, float>) GTEST_SKIP() << "cond 1e8 and above is singular to float32's working precision";
  std::uint64_t salt = 700;
  for (index n : testing::sizes<std::vector<index>>({255, 256, 512, 1024, 2048, 4096, 4097}, {256, 512, 1024}))
    for (double cond : {1e8, 1e10, 1e12})
      for (double noise : {0.0, 1e-3 / cond}) {  // noise below the smallest entry: the condition stays
        const auto seed = testing::case_seed(salt++);
        LINV_TRACE_SEED(seed);
        SCOPED_TRACE(fmt::format("n {} cond {:g} noise {:g}", n, cond, noise));
        const Matrix<T> A = testing::permutation_like<T>(n, cond, noise, seed);
        const Matrix<T> gA = A.to(Device::cuda(0));
        const double rcond = LU<T>(A.view()).rcond();
        ASSERT_GE(rcond, 100 * eps<T>()) << "the matrix is meant to be invertible";
        Solution<T> s = inv<T>(gA.view(), {.compute_residual = true});
        EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
        EXPECT_GE(s.report.rcond, rcond / 30) << "the GPU's rcond against the CPU's " << rcond;
        const Matrix<T> b = random_uniform<T>(n, 1, seed + 2);
        Solution<T> x = solve<T>(gA.view(), b.to(Device::cuda(0)).view(), {.compute_residual = true});
        EXPECT_LE(x.report.scaled_residual, kResidualThreshold);
      }
}

TYPED_TEST(CudaDense, SmallSolveAgreesWithCpu) {
  REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t salt = 400;
  for (MatrixKind kind : {MatrixKind::Random, MatrixKind::SPD, MatrixKind::Band, MatrixKind::Singular})
    for (index n : {1, 7, 129}) {
      const auto seed = testing::case_seed(salt++);
      LINV_TRACE_SEED(seed);
      const Matrix<T> A = generate<T>(kind, n, {.seed = seed});
      const Matrix<T> B = random_uniform<T>(n, 3, seed + 1);
      const Matrix<T> gA = A.to(Device::cuda(0)), gB = B.to(Device::cuda(0));
      for (Method method : kMethods) {
        SCOPED_TRACE(std::string(to_string(kind)) + " n=" + std::to_string(n) + " " + std::string(to_string(method)));
        Outcome<T> cpu = capture<T>([&] { return solve<T>(A.view(), B.view(), {.method = method}); });
        Outcome<T> gpu =
            capture<T>([&] { return solve<T>(gA.view(), gB.view(), {.method = method, .compute_residual = true}); });
        ASSERT_EQ(gpu.error_type, cpu.error_type) << "cpu: " << cpu.message << "\ngpu: " << gpu.message;
        if (!cpu.x) continue;
        ASSERT_TRUE(testing::all_finite<T>(gpu.x->view()));
        if (method != Method::GaussJordan) {  // through an explicit inverse: forward stable only
          EXPECT_LE(gpu.solution->report.scaled_residual, kResidualThreshold);
        }
        const double cond = 1.0 / LU<T>(A.view()).rcond();
        EXPECT_LE(difference<T>(gpu.x->view(), cpu.x->view()),
                  2 * kForwardThreshold * static_cast<double>(n) * eps<T>() * cond);
      }
    }
}

// Solves with 1 to 17 right-hand sides (up to 16 go through linv's one-launch triangular solves, 17
// through cuSOLVER) at sizes around the 64-row tiles, with LU and Cholesky factors, and the condition
// estimates built on the transposed solves, against the CPU.
TYPED_TEST(CudaDense, FewRightHandSidesAndConditionEstimates) {
  REQUIRE_GPU();
  using T = TypeParam;
  std::uint64_t salt = 450;
  // reduced (for the sanitizers): up to five tiles, the chain of waits in few_rhs_kernel included
  for (index n : testing::sizes<std::vector<index>>({1, 2, 63, 64, 65, 130, 1000, 2049}, {1, 2, 63, 64, 65, 130, 260})) {
    const auto seed = testing::case_seed(salt++);
    LINV_TRACE_SEED(seed);
    const Matrix<T> A = generate<T>(MatrixKind::Random, n, {.seed = seed});
    const Matrix<T> S = generate<T>(MatrixKind::SPD, n, {.cond = 1e3, .seed = seed + 1});
    const Matrix<T> G = generate<T>(MatrixKind::IllCond, n, {.cond = 0.01 / eps<T>(), .seed = seed + 2});
    const LU<T> cpu_lu(A.view()), gpu_lu(A.to(Device::cuda(0)).view());
    const Cholesky<T> cpu_ch(S.view()), gpu_ch(S.to(Device::cuda(0)).view());
    const LU<T> cpu_ill(G.view()), gpu_ill(G.to(Device::cuda(0)).view());
    SCOPED_TRACE("n=" + std::to_string(n));
    for (index k : {1, 2, 5, 16, 17}) {
      SCOPED_TRACE("k=" + std::to_string(k));
      const Matrix<T> B = random_uniform<T>(n, k, seed + 3);
      const Matrix<T> gB = B.to(Device::cuda(0));
      const Matrix<T> x = gpu_lu.solve(gB.view()).to(Device::cpu());
      ASSERT_TRUE(testing::all_finite<T>(x.view()));
      EXPECT_LE(scaled_residual_solve<T>(A.view(), x.view(), B.view(), eps<T>()), kResidualThreshold);
      EXPECT_LE(difference<T>(x.view(), cpu_lu.solve(B.view()).view()),
                2 * kForwardThreshold * static_cast<double>(n) * eps<T>() / cpu_lu.rcond());
      const Matrix<T> y = gpu_ch.solve(gB.view()).to(Device::cpu());
      ASSERT_TRUE(testing::all_finite<T>(y.view()));
      EXPECT_LE(scaled_residual_solve<T>(S.view(), y.view(), B.view(), eps<T>()), kResidualThreshold);
      const Matrix<T> z = gpu_ill.solve(gB.view()).to(Device::cpu());
      EXPECT_LE(scaled_residual_solve<T>(G.view(), z.view(), B.view(), eps<T>()), kResidualThreshold);
    }
    // Estimates of the same number from two estimators (LAPACK's lacn2, Higham and Tisseur's block one):
    // both are lower bounds, typically exact.
    EXPECT_NEAR(std::log10(gpu_lu.rcond()), std::log10(cpu_lu.rcond()), 0.5);
    EXPECT_NEAR(std::log10(gpu_ch.rcond()), std::log10(cpu_ch.rcond()), 0.5);
    EXPECT_NEAR(std::log10(gpu_ill.rcond()), std::log10(cpu_ill.rcond()), 0.5);
    const Matrix<T> L = cpu_ch.L();
    Matrix<T> U(n, n);
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) U(i, j) = L(j, i);
    for (const Matrix<T>* tri : {&L, static_cast<const Matrix<T>*>(&U)}) {
      const auto cpu_r = inv<T>(tri->view(), {.method = Method::Triangular}).report.rcond;
      const auto gpu_r = inv<T>(tri->to(Device::cuda(0)).view(), {.method = Method::Triangular}).report.rcond;
      EXPECT_NEAR(std::log10(gpu_r), std::log10(cpu_r), 0.5);
    }
  }
}

// LU and Gauss-Jordan inverses large enough for many getri blocks, panels and row chunks of the column
// interchanges: too large for a CPU reference, so judged by the residual computed on the GPU (under the
// sanitizers, fewer of each).
TYPED_TEST(CudaDense, LargeInversesByTheirResidual) {
  REQUIRE_GPU();
  using T = TypeParam;
  for (index n : testing::sizes<std::vector<index>>({8191, 8200}, {2049})) {
    const auto seed = testing::case_seed(470 + n);
    LINV_TRACE_SEED(seed);
    SCOPED_TRACE("n=" + std::to_string(n));
    const Matrix<T> A = random_uniform<T>(n, n, seed).to(Device::cuda(0));
    for (Method method : {Method::LU, Method::GaussJordan}) {
      const Solution<T> s = inv<T>(A.view(), {.method = method, .compute_residual = true,
                                              .allow_ill_conditioned = true});
      EXPECT_EQ(s.report.method, method);
      EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
      EXPECT_TRUE(testing::all_finite<T>(s.x.to(Device::cpu()).view()));
    }
  }
}

// The matrices that stress pivoting, on the GPU: the same decision as the CPU (keep the tournament's
// pivots or give way to partial pivoting), and every kept result within the residual bound.
TYPED_TEST(CudaDense, TournamentOnAdversarialMatrices) {
  REQUIRE_GPU();
  using T = TypeParam;
  testing::for_each_adversary<T>(480, [](const testing::Adversary&, index n, const Matrix<T>& a, const Matrix<T>& b) {
    const Matrix<T> ga = a.to(Device::cuda(0)), gb = b.to(Device::cuda(0));
    const LU<T> cpu(a.view(), Pivoting::Tournament), gpu(ga.view(), Pivoting::Tournament);
    EXPECT_EQ(gpu.pivoting(), cpu.pivoting());
    std::optional<Solution<T>> solution;
    try {
      solution = solve<T>(ga.view(), gb.view(), {.method = Method::CALU, .compute_residual = true});
    } catch (const SingularMatrix&) {
      // singular to working precision (Kahan's), as on the CPU; or factors ruined by growth (Foster's in
      // float32, growth 4e17), from which neither device's estimate means anything
      EXPECT_TRUE(cpu.rcond() < 100 * eps<T>() || gpu.pivoting() == Pivoting::Partial) << cpu.rcond();
      return;
    }
    const Solution<T>& s = *solution;
    if (gpu.pivoting() == Pivoting::Tournament) {
      EXPECT_LE(gpu.growth(), lu_growth_limit(n));
      EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    } else {
      EXPECT_FALSE(gpu.fallback_reason().empty());
      // partial pivoting, or Householder QR where its growth was past trusting too
      EXPECT_TRUE(s.report.method == Method::LU || s.report.method == Method::QR) << to_string(s.report.method);
      EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    }
  });
}

// The accuracy promise on the GPU: every method's result on the matrices that stress pivoting is within
// the residual bound or refused as singular to working precision; where partial pivoting's growth
// explodes, Householder QR (cuSOLVER geqrf, ormqr) solves and the report says so. Wilkinson's growth
// matrix of order 2048 and 3000 (columns scaled in [0.5, 2]) once hung `solve` on an H100 and was called
// singular by partial pivoting: every method now answers within the bound, in bounded time.
TYPED_TEST(CudaDense, InverseAndSolveKeepTheResidualPromise) {
  REQUIRE_GPU();
  using T = TypeParam;
  const Device gpu = Device::cuda(0);
  testing::for_each_adversary<T>(495, [&](const testing::Adversary& adv, index, const Matrix<T>& a, const Matrix<T>& b) {
    const Matrix<T> ga = a.to(gpu), gb = b.to(gpu);
    for (Method m : {Method::Auto, Method::LU, Method::RBT, Method::GaussJordan})
      for (bool inverse : {false, true}) {
        SCOPED_TRACE(std::string(to_string(m)) + (inverse ? " inverse" : " solve"));
        const SolveOptions o{.method = m, .compute_residual = true};
        std::optional<Solution<T>> s;
        try {
          s = inverse ? inv<T>(ga.view(), o) : solve<T>(ga.view(), gb.view(), o);
        } catch (const SingularMatrix&) {
          EXPECT_LT(LU<T>(a.view()).rcond(), 100 * eps<T>()) << "refused although well conditioned";
          continue;
        }
        EXPECT_LE(s->report.scaled_residual, kResidualThreshold);
        if (adv.growth_explodes && (m == Method::Auto || m == Method::LU)) {
          EXPECT_TRUE(s->report.method == Method::QR || s->report.method == Method::RBT) << to_string(s->report.method);
        }
      }
  });
  for (index n : testing::sizes<std::vector<index>>({2048, 3000}, {600})) {
    SCOPED_TRACE("wilkinson n=" + std::to_string(n));
    Matrix<T> a = testing::adversary<T>("wilkinson", n, 0);
    const Matrix<T> scale = random_uniform<T>(1, n, testing::case_seed(496), T(0.5), T(2));
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) a(i, j) *= scale(0, j);
    const Matrix<T> ga = a.to(gpu), gb = random_uniform<T>(n, 1, testing::case_seed(497)).to(gpu);
    for (Method m : {Method::Auto, Method::LU}) {
      const Solution<T> s = solve<T>(ga.view(), gb.view(), {.method = m, .compute_residual = true});
      EXPECT_LE(s.report.scaled_residual, kResidualThreshold) << to_string(m);
      EXPECT_GT(s.report.rcond, 1e-6) << to_string(m);  // cond(A) is a few thousand
    }
  }
}

TYPED_TEST(CudaDense, SmallDecompositionObjects) {
  REQUIRE_GPU();
  using T = TypeParam;
  const auto seed = testing::case_seed(500);
  LINV_TRACE_SEED(seed);
  const Matrix<T> A = generate<T>(MatrixKind::Random, 50, {.seed = seed});
  const Matrix<T> S = generate<T>(MatrixKind::SPD, 50, {.cond = 100, .seed = seed});
  const LU<T> cpu_lu(A.view()), gpu_lu(A.to(Device::cuda(0)).view());
  EXPECT_EQ(gpu_lu.determinant().sign, cpu_lu.determinant().sign);
  EXPECT_NEAR(gpu_lu.determinant().log_abs, cpu_lu.determinant().log_abs, 1e3 * eps<T>() * 50);
  EXPECT_NEAR(std::log10(gpu_lu.rcond()), std::log10(cpu_lu.rcond()), 0.5);  // estimates of the same number
  const Cholesky<T> cpu_ch(S.view()), gpu_ch(S.to(Device::cuda(0)).view());
  EXPECT_NEAR(gpu_ch.determinant().log_abs, cpu_ch.determinant().log_abs, 1e3 * eps<T>() * 50);
  EXPECT_NEAR(std::log10(gpu_ch.rcond()), std::log10(cpu_ch.rcond()), 0.5);
  const Matrix<T> l = gpu_ch.L().to(Device::cpu());
  EXPECT_LE(scaled_residual_cholesky<T>(S.view(), l.view(), eps<T>()), kResidualThreshold);
  for (index j = 1; j < 50; ++j) EXPECT_EQ(l(0, j), T(0));
}

TYPED_TEST(CudaDense, SmallTriangularAndProducts) {
  REQUIRE_GPU();
  using T = TypeParam;
  const auto seed = testing::case_seed(600);
  LINV_TRACE_SEED(seed);
  for (index n : {1, 40, 600}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const Matrix<T> lower = Cholesky<T>(generate<T>(MatrixKind::SPD, n, {.cond = 100, .seed = seed}).view()).L();
    Matrix<T> upper(n, n);
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) upper(i, j) = lower(j, i);
    for (auto how : {TriangularInverse::Lapack, TriangularInverse::GETS})
      for (const Matrix<T>* tri : {&lower, static_cast<const Matrix<T>*>(&upper)}) {
        const Uplo uplo = tri == &lower ? Uplo::Lower : Uplo::Upper;
        const Matrix<T> x = tri_inv<T>(tri->to(Device::cuda(0)).view(), uplo, how).to(Device::cpu());
        ASSERT_TRUE(testing::all_finite<T>(x.view()));
        EXPECT_LE(scaled_residual_inverse<T>(tri->view(), x.view(), eps<T>()), kResidualThreshold);
      }
    const Matrix<T> a = random_uniform<T>(n, n + 3, seed + 1), b = random_uniform<T>(n + 3, 5, seed + 2);
    const Matrix<T> c_cpu = matmul<T>(a.view(), b.view());
    const Matrix<T> c_gpu = matmul<T>(a.to(Device::cuda(0)).view(), b.to(Device::cuda(0)).view()).to(Device::cpu());
    EXPECT_LE(difference<T>(c_gpu.view(), c_cpu.view()), 10 * (n + 3) * eps<T>());
    Matrix<T> g = Matrix<T>::uninitialized(n + 3, n + 3, Device::cuda(0));  // poisoned: syrk must write it all
    syrk<T>(Uplo::Lower, Op::Transpose, T(1), a.to(Device::cuda(0)).view(), T(0), g.view());
    const Matrix<T> gh = g.to(Device::cpu());
    for (index j = 0; j < n + 3; ++j)
      for (index i = j; i < n + 3; ++i) ASSERT_FALSE(std::isnan(gh(i, j)));
  }
}

// Mixed precision on the GPU reaches float64's backward error, or falls back to a float64
// factorization and says so; it never returns a lower-precision answer as if it were float64.
// From order 512 a GPU solve of a general matrix is the randomized LU's; mixed precision keeps it where the
// device factors in float64 anyway, and a named lower-precision factor is LU with partial pivoting, said.
TEST(CudaMixed, LargeGeneralMatricesKeepTheRandomizedSolve) {
  REQUIRE_GPU();
  const index n = 600;
  const Matrix<double> A = generate<double>(MatrixKind::Band, n, {.seed = testing::case_seed(1500)});
  const Matrix<double> B = random_uniform<double>(n, 2, testing::case_seed(1501));
  const Matrix<double> gA = A.to(Device::cuda(0)), gB = B.to(Device::cuda(0));
  const Solution<double> native = solve<double>(gA.view(), gB.view(), {.compute_residual = true});
  EXPECT_EQ(native.report.method, Method::RBT) << native.report.to_json();
  const Solution<double> mixed =
      solve<double>(gA.view(), gB.view(), {.precision = Precision::Mixed, .compute_residual = true});
  EXPECT_LE(mixed.report.scaled_residual, kResidualThreshold);
  const bool float64_here = !kernels::mixed(Device::cuda(0)).float64_is_as_fast(Device::cuda(0)).empty();
  EXPECT_EQ(mixed.report.method, float64_here ? Method::RBT : Method::LU) << mixed.report.to_json();
  const Solution<double> tf32 = solve<double>(
      gA.view(), gB.view(),
      {.precision = Precision::Mixed, .factor_precision = FactorPrecision::TF32, .compute_residual = true});
  EXPECT_LE(tf32.report.scaled_residual, kResidualThreshold);
  EXPECT_EQ(tf32.report.method, Method::LU) << tf32.report.to_json();
  EXPECT_TRUE(testing::contains(tf32.report.method_reason, "partial pivoting")) << tf32.report.method_reason;
}

// Where float64 runs at float32's rate, a float32 inverse of a general matrix goes through float64's
// randomized LU and is rounded: the float64 inverse rounded to float32 (forward error eps_32 plus float64's
// n eps_64 cond), and float32's conditioning policy still holds, naming the pivot from float32's own
// partial pivoting. On other GPUs it is float32's LU.
TEST(CudaMixed, Float32InversesThroughFloat64WhereItIsAsFast) {
  REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  const bool float64_here = !kernels::mixed(gpu).float64_is_as_fast(gpu).empty();
  const index n = 600;  // in the range where the device asks for the randomized inverse
  const std::uint64_t seed = testing::case_seed(1600);
  LINV_TRACE_SEED(seed);
  const Matrix<float> A = random_uniform<float>(n, n, seed);
  const Solution<float> s = inv<float>(A.to(gpu).view(), {.compute_residual = true});
  EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
  EXPECT_EQ(s.report.method, float64_here ? Method::RBT : Method::LU) << s.report.to_json();
  if (float64_here) {
    EXPECT_TRUE(testing::contains(s.report.method_reason, "in float64")) << s.report.method_reason;
    EXPECT_TRUE(std::any_of(s.report.notes.begin(), s.report.notes.end(),
                            [](const std::string& note) { return testing::contains(note, "rounded to float32"); }))
        << s.report.to_json();
    const Solution<double> reference = inv<double>(A.cast<double>().view());
    const double cond = 1 / reference.report.rcond;
    EXPECT_LE((testing::relative_difference<float, double>(s.x.to(Device::cpu()).view(), reference.x.view())),
              2 * eps<float>() + kForwardThreshold * static_cast<double>(n) * eps<double>() * cond);
  }
  // condition 1e9: singular to float32's working precision, refused unless allowed
  const Matrix<float> ill = generate<float>(MatrixKind::IllCond, n, {.cond = 1e9, .seed = seed + 1});
  try {
    (void)inv<float>(ill.to(gpu).view());
    ADD_FAILURE() << "a matrix of condition 1e9 passed float32's policy";
  } catch (const SingularMatrix& e) {
    EXPECT_GE(e.pivot(), 1);
    EXPECT_LE(e.pivot(), n);
  }
  const Solution<float> allowed = inv<float>(ill.to(gpu).view(), {.allow_ill_conditioned = true});
  EXPECT_LT(allowed.report.rcond, eps<float>());
  EXPECT_TRUE(std::any_of(allowed.report.notes.begin(), allowed.report.notes.end(),
                          [](const std::string& note) { return testing::contains(note, "machine epsilon"); }))
      << allowed.report.to_json();
}

// Mixed precision with float32 factors is "float64 accuracy": its forward error is within 10x of the
// float64 solve's at every condition number (cuSOLVER's IRS, which stops at LAPACK's backward test, was
// 30-60x worse at cond 1e2 to 1e6 on an H100); beyond plain refinement's reach it factors in float64.
TEST(CudaMixed, Float32FactorsReachTheFloat64ForwardError) {
  REQUIRE_GPU();
  const index n = testing::sizes<index>(1500, 300);
  const Device gpu = Device::cuda(0);
  for (MatrixKind kind : {MatrixKind::IllCond, MatrixKind::SPD})
    for (double cond : {1e2, 1e4, 1e6, 1e8}) {
      const auto seed = testing::case_seed(990 + static_cast<std::uint64_t>(std::log10(cond)));
      LINV_TRACE_SEED(seed);
      SCOPED_TRACE(std::string(to_string(kind)) + " cond " + std::to_string(cond));
      const Matrix<double> a = generate<double>(kind, n, {.cond = cond, .seed = seed}).to(gpu);
      const Matrix<double> x = random_uniform<double>(n, 2, seed + 1).to(gpu);
      const Matrix<double> b = matmul<double>(a.view(), x.view());
      const Matrix<double> native = solve<double>(a.view(), b.view(), {.allow_ill_conditioned = true}).x;
      const Solution<double> mixed = solve<double>(
          a.view(), b.view(),
          {.precision = Precision::Mixed, .factor_precision = FactorPrecision::Float32, .allow_ill_conditioned = true});
      const double native_error = difference<double>(native.to(Device::cpu()).view(), x.to(Device::cpu()).view());
      const double mixed_error = difference<double>(mixed.x.to(Device::cpu()).view(), x.to(Device::cpu()).view());
      EXPECT_LE(mixed_error, 10 * std::max(native_error, n * eps<double>())) << mixed.report.to_json();
    }
}

TEST(CudaMixed, RefinesToDoubleOrFallsBackVisibly) {
  REQUIRE_GPU();
  enum class Expect { Converges, FallsBack, Either };
  struct Case {
    MatrixKind kind;
    index n, nrhs;
    double cond;
    FactorPrecision low;
    Expect expect;
  };
  const FactorPrecision f32 = FactorPrecision::Float32;
  for (const Case& c : {Case{MatrixKind::Random, 300, 3, 0, f32, Expect::Converges},
                        Case{MatrixKind::SPD, 257, 3, 1e4, f32, Expect::Converges},
                        Case{MatrixKind::IllCond, 200, 3, 1e5, f32, Expect::Converges},
                        // singular to float32's working precision: float32 factors cannot judge it
                        // (kernels::float32_cannot_judge), float64 factors, judges and solves
                        Case{MatrixKind::IllCond, 200, 3, 1e12, f32, Expect::FallsBack},
                        Case{MatrixKind::IllCond, 200, 1, 1e9, f32, Expect::FallsBack},
                        // tensor-core factorizations: fine on a diagonally dominant matrix ...
                        Case{MatrixKind::Band, 300, 1, 0, FactorPrecision::TF32, Expect::Converges},
                        Case{MatrixKind::Band, 300, 2, 0, FactorPrecision::BFloat16, Expect::Converges},
                        Case{MatrixKind::Band, 300, 1, 0, FactorPrecision::Float16, Expect::Converges},
                        // ... and out of their depth at cond 1e12
                        Case{MatrixKind::IllCond, 200, 1, 1e12, FactorPrecision::BFloat16, Expect::FallsBack}}) {
    const auto seed = testing::case_seed(1000 + c.n + static_cast<std::uint64_t>(c.kind));
    LINV_TRACE_SEED(seed);
    SCOPED_TRACE(std::string(to_string(c.kind)) + " cond " + std::to_string(c.cond) + " factor " +
                 std::string(to_string(c.low)) + " nrhs " + std::to_string(c.nrhs));
    const Matrix<double> A = generate<double>(c.kind, c.n, {.cond = c.cond, .seed = seed});
    const Matrix<double> B = random_uniform<double>(c.n, c.nrhs, seed + 1);
    const SolveOptions options{.precision = Precision::Mixed, .factor_precision = c.low, .compute_residual = true};
    const Solution<double> gpu = solve<double>(A.to(Device::cuda(0)).view(), B.to(Device::cuda(0)).view(), options);
    const Solution<double> cpu = solve<double>(A.view(), B.view(), {.precision = Precision::Mixed, .compute_residual = true});
    EXPECT_LE(gpu.report.scaled_residual, kResidualThreshold);
    EXPECT_TRUE(testing::contains(gpu.report.precision, std::string(to_string(c.low)))) << gpu.report.precision;
    const bool fell_back = gpu.report.stop == StopReason::FellBack;
    if (c.expect == Expect::FallsBack) {
      EXPECT_TRUE(fell_back) << "refinement cannot converge here";
    }
    if (c.expect == Expect::Converges) {
      EXPECT_FALSE(fell_back) << (gpu.report.notes.empty() ? "" : gpu.report.notes[0]);
    }
    if (fell_back) {
      ASSERT_FALSE(gpu.report.notes.empty());
      EXPECT_TRUE(testing::contains(gpu.report.notes[0], "solved with a float64 factorization instead"));
    } else {
      EXPECT_EQ(gpu.report.stop, StopReason::Converged);
      EXPECT_LE(gpu.report.backward_error, std::sqrt(static_cast<double>(c.n)) * eps<double>());
    }
    EXPECT_LE(cpu.report.scaled_residual, kResidualThreshold);
    const Matrix<double> x = gpu.x.to(Device::cpu());
    const double cond = norm1<double>(A.view()) * norm1<double>(LU<double>(A.view()).inverse().view());
    EXPECT_LE(difference<double>(x.view(), cpu.x.view()), 2 * kForwardThreshold * c.n * eps<double>() * cond);
  }
  // The default (auto) factor: float32 refinement where the GPU factors float32 faster, else float64 itself,
  // said in the report; float64's accuracy either way.
  {
    const Matrix<double> A = generate<double>(MatrixKind::Random, 300, {.seed = testing::case_seed(1400)});
    const Matrix<double> B = random_uniform<double>(300, 2, testing::case_seed(1401));
    const Solution<double> s = solve<double>(A.to(Device::cuda(0)).view(), B.to(Device::cuda(0)).view(),
                                             {.precision = Precision::Mixed, .compute_residual = true});
    EXPECT_LE(s.report.scaled_residual, kResidualThreshold);
    const std::string why = kernels::mixed(Device::cuda(0)).float64_is_as_fast(Device::cuda(0));
    std::cout << "mixed precision's default factor on this GPU: " << (why.empty() ? "float32" : why) << "\n";
    if (why.empty()) {
      EXPECT_EQ(s.report.stop, StopReason::Converged);
      EXPECT_TRUE(testing::contains(s.report.precision, "float32")) << s.report.precision;
    } else {
      EXPECT_EQ(s.report.stop, StopReason::None);
      EXPECT_TRUE(testing::contains(s.report.precision, "float64 factorization")) << s.report.precision;
      ASSERT_FALSE(s.report.notes.empty());
      EXPECT_TRUE(testing::contains(s.report.notes[0], "no faster")) << s.report.notes[0];
    }
  }
  // tensor-core factorizations are LU on a GPU only, and only under mixed precision
  const Matrix<double> spd = generate<double>(MatrixKind::SPD, 40, {.seed = 7});
  const Matrix<double> b = random_uniform<double>(40, 1, 8);
  const SolveOptions tf32{.precision = Precision::Mixed, .factor_precision = FactorPrecision::TF32};
  EXPECT_THROW((void)solve<double>(spd.view(), b.view(), tf32), InvalidArgument);  // CPU
  SolveOptions cholesky_tf32 = tf32;
  cholesky_tf32.method = Method::Cholesky;
  EXPECT_THROW((void)solve<double>(spd.to(Device::cuda(0)).view(), b.to(Device::cuda(0)).view(), cholesky_tf32),
               InvalidArgument);
  SolveOptions native_tf32 = tf32;
  native_tf32.precision = Precision::Native;
  EXPECT_THROW((void)solve<double>(spd.to(Device::cuda(0)).view(), b.to(Device::cuda(0)).view(), native_tf32),
               InvalidArgument);
}

TEST(CudaErrors, BadInputAndCpuOnlyRoutinesSayWhy) {
  REQUIRE_GPU();
  Matrix<double> a = Matrix<double>::identity(4);
  a(2, 1) = std::numeric_limits<double>::quiet_NaN();
  try {
    (void)inv<double>(a.to(Device::cuda(0)).view());
    FAIL() << "no error";
  } catch (const NonFiniteInput& e) {
    EXPECT_TRUE(testing::contains(e.what(), "NaN at row 3, column 2"));
  }
  const Matrix<double> g = Matrix<double>::identity(4).to(Device::cuda(0));
  EXPECT_THROW((void)lstsq<double>(g.view(), g.view()), InvalidArgument);
  EXPECT_THROW((void)inv<double>(g.view(), {.method = Method::GaussSeidel}), InvalidArgument);
  const Matrix<float> gf = Matrix<float>::identity(4).to(Device::cuda(0));
  EXPECT_THROW((void)inv<float>(gf.view(), {.precision = Precision::Mixed}), InvalidArgument);  // refines to float64
  const Matrix<double> h = Matrix<double>::identity(4);
  EXPECT_THROW((void)solve<double>(g.view(), h.view()), InvalidArgument);  // operands on different devices
  // what the GPU backend refuses it says beforehand (kernels::Dense::runs), and auto_device listens; the CPU,
  // the reference, runs everything
  using kernels::Optional;
  for (Optional method : {Optional::GaussSeidel, Optional::LeastSquares, Optional::Svd, Optional::LargestEigenpair,
                          Optional::Orthonormalize}) {
    EXPECT_FALSE(kernels::dense<double>(Device::cuda(0)).runs(method));
    EXPECT_TRUE(kernels::dense<double>(Device::cpu()).runs(method));
  }
  EXPECT_EQ(auto_device(Operation::LeastSquares, index{1} << 20), Device::cpu());
  EXPECT_EQ(auto_device(Operation::Solve, 4096, Method::GaussSeidel), Device::cpu());
  EXPECT_EQ(auto_device(Operation::Solve, 4096), Device::cuda(0));
  // and the reports say so in users' words
  EXPECT_EQ(cpu_only_on(Device::cuda(0)), (std::vector<std::string>{"lstsq", "pinv", "--method gauss-seidel"}));
  EXPECT_TRUE(cpu_only_on(Device::cpu()).empty());
}

}  // namespace
// The GPU families judge a nearly symmetric (Hermitian) matrix as the CPU family does: the same first entry
// on or below the diagonal past n eps max|a| (column by column), found where the matrix lies, for
// perturbations on both sides of the tolerance, on the diagonal (a complex one's imaginary part) and at
// sizes around the kernels' 32 x 8 tiles.
template <Scalar T>
class CudaSymmetryCheck : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CudaSymmetryCheck, ScalarTypes);

// plu's square factors made on the GPU (cuSOLVER's getrf) solve there (getrs, or the few-right-hand-side
// kernels) as on the CPU.
template <class T>
class CudaPlu : public ::testing::Test {};
TYPED_TEST_SUITE(CudaPlu, ScalarTypes);

TYPED_TEST(CudaPlu, FactorsAndSolvesOnTheGpu) {
  REQUIRE_GPU();
  testing::expect_plu_solves<TypeParam>(Device::cuda(0), 900);
  Matrix<TypeParam> wide(3, 5);
  EXPECT_THROW((void)plu<TypeParam>(wide.to(Device::cuda(0)).view()), InvalidArgument);
}

TYPED_TEST(CudaSymmetryCheck, FirstAsymmetricIsTheCpus) {
  REQUIRE_GPU();
  using T = TypeParam;
  using R = real_t<T>;
  std::uint64_t salt = 700;
  for (index n : {1, 2, 7, 31, 32, 33, 257}) {
    const auto seed = testing::case_seed(salt++);
    LINV_TRACE_SEED(seed);
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::uniform_int_distribution<index> pick(0, n - 1);
    Matrix<T> a(n, n);  // symmetric (Hermitian), exactly
    for (index j = 0; j < n; ++j)
      for (index i = j; i < n; ++i) {
        T v;
        if constexpr (Complex<T>)
          v = T(static_cast<R>(u(g)), i == j ? R(0) : static_cast<R>(u(g)));
        else
          v = static_cast<T>(u(g));
        a(i, j) = v;
        a(j, i) = conjugate(v);
      }
    double largest = 0;
    for (index j = 0; j < n; ++j)
      for (index i = 0; i < n; ++i) largest = std::max(largest, static_cast<double>(std::abs(a(i, j))));
    const double tol = static_cast<double>(n) * std::numeric_limits<R>::epsilon() * largest;
    const auto judged_alike = [&](const Matrix<T>& m, const std::string& what) {
      const auto on_cpu = kernels::dense<T>(Device::cpu()).first_asymmetric(m.view());
      const Matrix<T> on = m.to(Device::cuda(0));
      const auto on_gpu = kernels::dense<T>(on.device()).first_asymmetric(on.view());
      EXPECT_EQ(on_gpu, on_cpu) << what << " n=" << n << " " << type_name<T>();
      return on_cpu;
    };
    EXPECT_EQ(judged_alike(a, "exact"), std::nullopt);
    if (n < 2) continue;
    // two entries below the diagonal moved off their mirrors: by a tenth of the tolerance (passes), then
    // by ten times it (the first of the two, column by column, is named)
    const index i1 = 1 + pick(g) % (n - 1), j1 = pick(g) % i1, i2 = 1 + pick(g) % (n - 1), j2 = pick(g) % i2;
    for (double factor : {0.1, 10.0}) {
      Matrix<T> m = Matrix<T>::copy_of(a.view());
      m(i1, j1) += static_cast<R>(factor * tol);
      m(i2, j2) += static_cast<R>(factor * tol);  // the same entry twice at worst: still apart
      const auto found = judged_alike(m, "factor " + std::to_string(factor));
      if (factor > 1) {
        EXPECT_NE(found, std::nullopt);
      }
    }
    if constexpr (Complex<T>) {  // an imaginary part on the diagonal: 2 |Im a(k, k)| apart from its conjugate
      Matrix<T> m = Matrix<T>::copy_of(a.view());
      const index k = pick(g);
      m(k, k) += T(0, static_cast<R>(4 * tol));
      EXPECT_EQ(judged_alike(m, "diagonal"), (std::optional<std::pair<index, index>>(std::pair{k, k})));
    }
  }
}

}  // namespace linv
