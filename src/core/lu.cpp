// LU factorization with partial, tournament or randomized pivoting (the LU class, the butterflies of the
// randomized one), and factor_lu and judgeable, the LU steps inv and solve share (dense_steps.hpp).
#include "linv/dense.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <string>

#include "common/norm_estimate.hpp"
#include "core/dense_steps.hpp"
#include "core/scaling.hpp"
#include "kernels/backend.hpp"
#include "linv/accuracy.hpp"
#include "linv/errors.hpp"

namespace linv {

using namespace dense_steps;

std::string_view to_string(Pivoting p) {
  switch (p) {
    case Pivoting::Partial: return "partial";
    case Pivoting::Tournament: return "tournament";
    case Pivoting::Randomized: return "randomized";
  }
  return "?";
}

double lu_growth_limit(index n) { return std::max(64.0, 8.0 * std::pow(static_cast<double>(n), 2.0 / 3.0)); }

namespace {

// The butterflies' factors r = exp(rho / 10), rho uniform in [-1/2, 1/2] (Parker's choice, MAGMA's and
// SLATE's): well conditioned (each level's condition number in the 1-norm is at most 2 e^0.1), yet random
// enough to make every leading minor nonsingular with probability 1. A fixed seed makes the factorization
// reproducible.
template <Scalar T>
Matrix<T> random_butterflies(index n, Device device) {
  Matrix<T> r(n, 2 * kernels::kButterflyDepth);
  std::mt19937_64 generator(0x6275747465726679ULL);  // "butterfly"
  std::uniform_real_distribution<double> rho(-0.5, 0.5);
  for (index j = 0; j < r.cols(); ++j)
    for (index i = 0; i < n; ++i) r(i, j) = static_cast<T>(std::exp(rho(generator) / 10));
  return r.to(device);
}

// (-1)^sign and log|det W| of the butterflies W of r: each pair's 2 x 2 block [r_i r_j; r_i -r_j] / sqrt2
// has determinant -r_i r_j, an odd block's last entry r.
template <Scalar T>
Determinant butterfly_determinant(ConstMatrixView<T> r) {
  const Matrix<T> host = Matrix<T>::copy_of(r).to(Device::cpu());
  const index n = r.rows();
  Determinant d{1, 0.0};
  for (index level = 0; level < r.cols(); ++level) {
    const index blocks = index{1} << level;
    for (index b = 0; b < blocks; ++b) {
      const index h = ((b + 1) * n / blocks - b * n / blocks) / 2;
      if (h % 2 != 0) d.sign = -d.sign;
    }
    for (index i = 0; i < n; ++i) d.log_abs += std::log(static_cast<double>(std::real(host(i, level))));
  }
  return d;
}

}  // namespace

template <Scalar T>
LU<T>::LU(ConstMatrixView<T> A, Pivoting pivoting, bool check_finite) : pivoting_(pivoting) {
  require_square(A, "LU");
  if constexpr (Complex<T>)
    if (pivoting != Pivoting::Partial)
      throw InvalidArgument(fmt::format("{} matrices are factored with partial pivoting in this version, not {}",
                                        type_name<T>(), to_string(pivoting)));
  const kernels::Dense<T>& dense = dense_of(A);
  const kernels::Magnitude magnitude = dense.magnitude(A);
  if (check_finite && magnitude.first_non_finite) throw_non_finite<T>(A, *magnitude.first_non_finite, "A");
  exponent_ = scaling::exponent_for(magnitude.max_abs);
  // A as factored: scaled into the band; reloaded where a factorization gives way to partial pivoting
  const auto load = [&] {
    copy<T>(A, factors_.view());
    if (exponent_ != 0) scaling::scale_by_power_of_two<T>(factors_.view(), -exponent_);
  };
  factors_ = Matrix<T>::uninitialized(A.rows(), A.cols(), A.device());
  load();
  anorm_ = norm1<T>(factors_);
  if (pivoting == Pivoting::Randomized) {  // A_r = U^T A V
    butterflies_ = random_butterflies<T>(A.rows(), A.device());
    const index d = kernels::kButterflyDepth;
    dense.butterflies(butterflies_.block(0, 0, A.rows(), d), Side::Left, Op::Transpose, factors_.view());
    dense.butterflies(butterflies_.block(0, d, A.rows(), d), Side::Right, Op::None, factors_.view());
  }
  kernels::LuOutcome o = dense.lu_factor(factors_.view(), pivots_, pivoting);
  if (pivoting == Pivoting::Randomized) {
    // A zero pivot of A_r says nothing of A (a leading minor vanished): partial pivoting decides.
    if (o.zero_pivot > 0 || !std::isfinite(o.growth)) {
      fallback_ = o.zero_pivot > 0 ? fmt::format("the randomized factorization met a zero pivot at column {}", o.zero_pivot)
                                   : std::string("the randomized factorization overflowed");
      load();
      o = dense.lu_factor(factors_.view(), pivots_, Pivoting::Partial);
      pivoting_ = Pivoting::Partial;
      butterflies_ = Matrix<T>();
    } else {
      original_ = Matrix<T>::uninitialized(A.rows(), A.cols(), A.device());  // the scaled A, for the refinement
      copy<T>(A, original_.view());
      if (exponent_ != 0) scaling::scale_by_power_of_two<T>(original_.view(), -exponent_);
    }
  }
  if (pivoting == Pivoting::Tournament) {
    // A zero pivot may be the tournament's (a row left out of the final round held the column's only
    // nonzero) and large growth costs digits: partial pivoting decides both.
    const double limit = lu_growth_limit(A.rows());
    if (o.zero_pivot > 0 || !(o.growth <= limit)) {
      fallback_ = o.zero_pivot > 0 ? fmt::format("tournament pivoting met a zero pivot at column {}", o.zero_pivot)
                                   : fmt::format("tournament pivoting grew the entries {:.3g}-fold (limit {:.3g})",
                                                 o.growth, limit);
      load();
      o = dense.lu_factor(factors_.view(), pivots_, Pivoting::Partial);
      pivoting_ = Pivoting::Partial;
    }
  }
  zero_pivot_ = o.zero_pivot;
  growth_ = o.growth;
}

// inv and solve's steps with an LU, described where dense_steps.hpp declares them.
namespace dense_steps {

template <Scalar T>
LU<T> factor_lu(ConstMatrixView<T> A, Method method, Report& r) {
  LU<T> lu(A,
           method == Method::CALU ? Pivoting::Tournament :
           method == Method::RBT  ? Pivoting::Randomized : Pivoting::Partial,
           /*check_finite=*/false);
  r.growth = lu.growth();
  if (!lu.fallback_reason().empty()) {
    r.method = Method::LU;
    r.notes.push_back(lu.fallback_reason() + ": factored again with partial pivoting");
  }
  return lu;
}

template <Scalar T>
LU<T> judgeable(LU<T> lu, ConstMatrixView<T> A, Report& r) {
  if (lu.pivoting() != Pivoting::Randomized) return lu;
  const double floor = eps<T>() * std::max(1.0, lu.growth());
  if (lu.rcond() >= floor) return lu;
  r.notes.push_back(fmt::format("the randomized factorization cannot judge this matrix (rcond estimate {:.3g} below "
                                "eps growth = {:.3g}): factored again with partial pivoting",
                                lu.rcond(), floor));
  r.method = Method::LU;
  return factor_lu(A, Method::LU, r);
}

}  // namespace dense_steps

template <Scalar T>
Matrix<T> LU<T>::apply_inverse(ConstMatrixView<T> B, Op op) const {
  const kernels::Dense<T>& dense = dense_of<T>(factors_);
  Matrix<T> x = Matrix<T>::copy_of(B);
  if (pivoting_ != Pivoting::Randomized) {
    dense.lu_solve(factors_, pivots_, x.view(), op);
    return x;
  }
  // A^-1 = V A_r^-1 U^T and A^-T = U A_r^-T V^T
  const index n = size(), d = kernels::kButterflyDepth;
  const ConstMatrixView<T> u = butterflies_.block(0, 0, n, d), v = butterflies_.block(0, d, n, d);
  dense.butterflies(op == Op::None ? u : v, Side::Left, Op::Transpose, x.view());
  dense.lu_solve(factors_, pivots_, x.view(), op);
  dense.butterflies(op == Op::None ? v : u, Side::Left, Op::None, x.view());
  return x;
}

template <Scalar T>
double LU<T>::rcond() const {
  if (rcond_ >= 0) return rcond_;
  if (zero_pivot_ > 0) return rcond_ = 0.0;
  if (pivoting_ != Pivoting::Randomized) return rcond_ = dense_of<T>(factors_).lu_rcond(factors_, pivots_, anorm_);
  // ||A^-1||_1 through the butterflies (A_r's estimate could be off by their condition numbers, up to 24)
  if constexpr (Complex<T>) {
    throw std::logic_error("internal error: a randomized LU of a complex matrix");
  } else {
    const index n = size();
    if (n == 0 || anorm_ == 0) return rcond_ = n == 0 ? 1.0 : 0.0;
    constexpr int kColumns = 2;
    const double est = cpu::block_norm1_estimate<T>(n, kColumns, [&](std::vector<T>& X, bool transpose) {
      Matrix<T> block(n, static_cast<index>(X.size()) / n);
      std::copy(X.begin(), X.end(), block.data());
      const Matrix<T> y = apply_inverse(block.to(factors_.device()).view(), transpose ? Op::Transpose : Op::None)
                              .to(Device::cpu());
      std::copy(y.data(), y.data() + X.size(), X.begin());
    });
    return rcond_ = est > 0 ? 1.0 / (anorm_ * est) : 0.0;
  }
}

template <Scalar T>
Determinant LU<T>::determinant() const {
  if (zero_pivot_ > 0) return {0, -std::numeric_limits<double>::infinity()};
  Determinant d{1, 0.0};
  if (pivoting_ == Pivoting::Randomized) {  // det A = det A_r / (det U det V)
    const index d_levels = kernels::kButterflyDepth;
    for (index side = 0; side < 2; ++side) {
      const Determinant w = butterfly_determinant<T>(butterflies_.block(0, side * d_levels, size(), d_levels));
      d.sign *= w.sign;
      d.log_abs -= w.log_abs;
    }
  }
  const std::vector<T> u = dense_of<T>(factors_).diagonal(factors_);
  for (std::size_t i = 0; i < u.size(); ++i) {
    if (pivots_[i] != static_cast<int>(i) + 1) d.sign = -d.sign;
    const wide_t<T> pivot = u[i];
    if constexpr (Complex<T>)
      d.phase += std::arg(pivot);
    else if (pivot < 0)
      d.sign = -d.sign;
    d.log_abs += std::log(std::abs(pivot));
  }
  if constexpr (Complex<T>) {  // the interchanges' sign joins the phase, brought back to (-pi, pi]
    if (d.sign < 0) d.phase += std::numbers::pi;
    d.sign = 1;
    d.phase = std::remainder(d.phase, 2 * std::numbers::pi);
    if (d.phase <= -std::numbers::pi) d.phase += 2 * std::numbers::pi;
  }
  d.log_abs += static_cast<double>(size()) * exponent_ * std::numbers::ln2;  // det(2^e A_s) = 2^(n e) det A_s
  return d;
}

template <Scalar T>
Matrix<T> LU<T>::solve(ConstMatrixView<T> B) const {
  require_same_device<T>(factors_, B, "LU::solve");
  if (B.rows() != size()) throw ShapeMismatch("LU::solve: A and B", size(), size(), B.rows(), B.cols());
  if (zero_pivot_ > 0) throw SingularMatrix(zero_pivot_, 0.0, "LU solve");
  refinement_steps_ = 0;
  Matrix<T> x = apply_inverse(B, Op::None);  // of the scaled A: A^-1 B is 2^-e times it
  if (pivoting_ != Pivoting::Randomized || B.empty()) {
    scaling::scale_back(x, -exponent_, "solution");
    return x;
  }
  // Refinement in working precision (LAPACK's gerfs criteria): r = B - A x until the normwise backward
  // error ||r|| / (||A|| ||x|| + ||B||) reaches eps or stops halving.
  const double bnorm = norm1(B), epsilon = eps<T>();
  double previous = std::numeric_limits<double>::infinity(), berr = 0;
  Matrix<T> r(B.rows(), B.cols(), B.device());
  for (;;) {
    copy<T>(B, r.view());
    gemm<T>(Op::None, Op::None, T(-1), original_, x, T(1), r.view());
    berr = norm1<T>(r) / (anorm_ * norm1<T>(x) + bnorm);
    if (!std::isfinite(berr))
      throw NumericalError("randomized LU solve: the refinement's residual is not finite (growth " +
                           fmt::format("{:.3g}", growth_) + "); factor with partial pivoting");
    if (berr <= epsilon || berr > previous / 2 || refinement_steps_ == kMaxRefinementSteps) break;
    const Matrix<T> correction = apply_inverse(r, Op::None);
    kernels::vectors<T>(x.device()).axpy(T(1), correction, x.view());
    previous = berr;
    ++refinement_steps_;
  }
  const double bound = static_cast<double>(size()) * epsilon;
  if (!(berr <= bound))
    throw NumericalError(fmt::format("randomized LU solve: refinement stalled at backward error {:.3g} after {} steps "
                                     "(partial pivoting reaches {:.3g}); factor with partial pivoting",
                                     berr, refinement_steps_, bound));
  scaling::scale_back(x, -exponent_, "solution");
  return x;
}

// A^-1 = V A_r^-1 U^T from the factors of A_r, then Newton-Schulz steps X := X + X (I - A X) in working
// precision. Without pivoting the factors' backward error is eps times a growth of 1e4-6e5 on random
// matrices, so the first X's residual is 100-1000x partial pivoting's; each step squares ||I - A X||
// and adds only the products' rounding (n eps ||A|| ||X||), so one step reaches getri's accuracy once
// ||I - A X||^2 is below that level. Two n^3 products a step: cheaper than the refined solve against
// the identity (an n-column solve and a product per step). Throws NumericalError when ||I - A X|| >= 1
// (the step would diverge) or after kMaxRefinementSteps steps.
template <Scalar T>
Matrix<T> LU<T>::refined_randomized_inverse() const {
  const index n = size(), d = kernels::kButterflyDepth;
  const kernels::Dense<T>& dense = dense_of<T>(factors_);
  Matrix<T> x = factors_.clone();
  dense.lu_inverse(x.view(), pivots_);  // the pivots are the identity: A_r^-1
  dense.butterflies(butterflies_.block(0, d, n, d), Side::Left, Op::None, x.view());
  dense.butterflies(butterflies_.block(0, 0, n, d), Side::Right, Op::Transpose, x.view());
  const double level = 0.1 * static_cast<double>(n) * eps<T>() * anorm_;  // times ||X||: the products' rounding
  const Matrix<T> eye = identity<T>(n, factors_.device());
  Matrix<T> r(n, n, factors_.device());
  for (refinement_steps_ = 1;; ++refinement_steps_) {
    copy<T>(eye, r.view());
    gemm<T>(Op::None, Op::None, T(-1), original_, x, T(1), r.view());  // I - A X
    const double rnorm = norm1<T>(r), xnorm = norm1<T>(x);
    if (!(rnorm < 1))
      throw NumericalError(fmt::format("randomized LU inverse: ||I - A X||_1 = {:.3g} (growth {:.3g}), too far for "
                                       "Newton steps; factor with partial pivoting",
                                       rnorm, growth_));
    Matrix<T> next = x.clone();
    gemm<T>(Op::None, Op::None, T(1), x, r, T(1), next.view());  // X + X (I - A X)
    x = std::move(next);
    if (rnorm * rnorm <= level * xnorm) return x;
    if (refinement_steps_ == kMaxRefinementSteps)
      throw NumericalError(fmt::format("randomized LU inverse: ||I - A X||_1 still {:.3g} after {} Newton steps "
                                       "(growth {:.3g}); factor with partial pivoting",
                                       rnorm, refinement_steps_, growth_));
  }
}

template <Scalar T>
Matrix<T> LU<T>::inverse() const {
  if (zero_pivot_ > 0) throw SingularMatrix(zero_pivot_, 0.0, "LU inverse");
  Matrix<T> x;
  if (pivoting_ == Pivoting::Randomized) {
    x = refined_randomized_inverse();
  } else {
    x = factors_.clone();
    dense_of<T>(x).lu_inverse(x.view(), pivots_);
  }
  rcond_ = size() > 0 ? 1.0 / (anorm_ * norm1<T>(x)) : 1.0;
  require_finite_rcond(rcond_, smallest_diagonal<T>(factors_), "LU inverse overflowed");
  scaling::scale_back(x, -exponent_, "inverse");
  return x;
}

template <Scalar T>
PluFactors<T> plu(ConstMatrixView<T> A) {
  if (!A.device().is_cpu() && A.rows() != A.cols())
    throw InvalidArgument(fmt::format("plu: a rectangular LU runs on the CPU in this version; A is {} on {}: move "
                                      "it with .to(Device::cpu())",
                                      shape_string(A.rows(), A.cols()), A.device().name()));
  require_finite(A, "A");
  PluFactors<T> f{Matrix<T>::copy_of(A), {}, 0};
  // the CPU family's getrf takes m x n too (kernels/dense.hpp)
  f.zero_pivot = dense_of<T>(f.lu).lu_factor(f.lu.view(), f.pivots, Pivoting::Partial).zero_pivot;
  f.pivots.resize(static_cast<std::size_t>(std::min(A.rows(), A.cols())));
  return f;
}

template <Scalar T>
Matrix<T> plu_solve(ConstMatrixView<T> lu, const std::vector<int>& pivots, ConstMatrixView<T> B, Op op) {
  const index n = lu.rows();
  if (lu.cols() != n || B.rows() != n)
    throw InvalidArgument(fmt::format("plu_solve: the factors are {} and B is {}: they must be n x n and n x k",
                                      shape_string(lu.rows(), lu.cols()), shape_string(B.rows(), B.cols())));
  dense_steps::require_same_device(lu, B, "plu_solve");
  if (std::ssize(pivots) != n)
    throw InvalidArgument(fmt::format("plu_solve: {} pivots for factors of order {}", pivots.size(), n));
  for (std::size_t i = 0; i < pivots.size(); ++i)
    if (pivots[i] < 1 || pivots[i] > n)
      throw InvalidArgument(fmt::format("plu_solve: pivot {} (1-based) is {}, outside 1..{}", i + 1, pivots[i], n));
  require_finite(B, "B");
  const kernels::Dense<T>& dense = dense_of<T>(lu);
  const std::vector<T> diagonal = dense.diagonal(lu);
  for (std::size_t i = 0; i < diagonal.size(); ++i)
    if (diagonal[i] == T(0)) throw SingularMatrix(static_cast<index>(i) + 1, 0.0, "plu_solve: U");
  Matrix<T> x = Matrix<T>::copy_of(B);
  dense.lu_solve(lu, pivots, x.view(), op);
  return x;
}

#define LINV_INSTANTIATE(T)                                                                                  \
  template PluFactors<T> plu<T>(ConstMatrixView<T>);                                                         \
  template Matrix<T> plu_solve<T>(ConstMatrixView<T>, const std::vector<int>&, ConstMatrixView<T>, Op);         \
  template class LU<T>;                                                                                      \
  template LU<T> dense_steps::factor_lu<T>(ConstMatrixView<T>, Method, Report&);                             \
  template LU<T> dense_steps::judgeable<T>(LU<T>, ConstMatrixView<T>, Report&);
LINV_INSTANTIATE(float)
LINV_INSTANTIATE(double)
LINV_INSTANTIATE(std::complex<float>)
LINV_INSTANTIATE(std::complex<double>)
#undef LINV_INSTANTIATE

}  // namespace linv
