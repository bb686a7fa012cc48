// Atom-assisted dictionary learning by block majorisation-minimisation (include/linv/adl.hpp), CPU.
//
// The iteration is written against a few steps so that a GPU port can supply the same ones: the BLAS
// products (D^T D, D^T X, G S, S S^T, X S^T, D H), the largest eigenvalue of a K x K matrix, and two
// fused passes, one over S (update, soft threshold and the objective's terms in one read and write of
// S) and one over D (update, projection and the objective's terms). Everything else is K x K scalars.
#include "linv/adl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "core/parallel.hpp"
#include "kernels/dense.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"

namespace linv::fmri {
namespace {

namespace k = kernels::cpu;

// Columns per block of a pass over S or X. Each block's sums are kept apart and added in block order,
// so that f does not depend on how many threads ran.
constexpr index kColumnsPerBlock = 2048;
constexpr index kBlocksPerThread = 2;

// Runs block(first, last) -> Sums over [0, N) in column blocks across threads and returns the sums
// added in block order. Sums needs operator+=.
template <class Sums, class Block>
Sums blockwise(index N, const Block& block) {
  const index blocks = (N + kColumnsPerBlock - 1) / kColumnsPerBlock;
  std::vector<Sums> partial(static_cast<std::size_t>(blocks));
  detail::in_parallel(blocks, kBlocksPerThread, [&](index first, index last) {
    for (index b = first; b < last; ++b)
      partial[static_cast<std::size_t>(b)] = block(b * kColumnsPerBlock, std::min(N, (b + 1) * kColumnsPerBlock));
  });
  Sums total{};
  for (const Sums& s : partial) total += s;
  return total;
}

struct Sum {
  double value = 0;
  Sum& operator+=(const Sum& o) {
    value += o.value;
    return *this;
  }
};

// The objective's terms for the S a coefficient pass reads, and ||S||_1 of the S it writes.
struct CoefficientSums {
  double xs = 0;      // <D^T X, S>
  double sgs = 0;     // <S, D^T D S>
  double l1 = 0;      // ||S||_1
  double l1_new = 0;  // ||S_new||_1
  CoefficientSums& operator+=(const CoefficientSums& o) {
    xs += o.xs, sgs += o.sgs, l1 += o.l1, l1_new += o.l1_new;
    return *this;
  }
};

// One coefficient step, given W = G S: S := soft(S + (DtX - W) * inv_c, tau), in place, one pass.
template <Real T>
CoefficientSums coefficient_pass(ConstMatrixView<T> DtX, ConstMatrixView<T> W, MatrixView<T> S, T inv_c, T tau) {
  const index K = S.rows();
  return blockwise<CoefficientSums>(S.cols(), [&](index first, index last) {
    CoefficientSums sums;
    for (index j = first; j < last; ++j)
      for (index r = 0; r < K; ++r) {
        const T s = S(r, j), w = W(r, j), x = DtX(r, j);
        sums.xs += static_cast<double>(x) * s;
        sums.sgs += static_cast<double>(s) * w;
        sums.l1 += std::abs(static_cast<double>(s));
        const T a = s + (x - w) * inv_c, excess = std::abs(a) - tau;
        const T updated = excess > 0 ? std::copysign(excess, a) : T(0);
        S(r, j) = updated;
        sums.l1_new += std::abs(static_cast<double>(updated));
      }
    return sums;
  });
}

// Projects a column of length n onto the ball of squared radius r2 around `centre` (nullptr: around 0).
template <Real T>
void project(T* d, const T* centre, index n, double r2) {
  double dist2 = 0;
  for (index i = 0; i < n; ++i) {
    const double e = static_cast<double>(d[i]) - (centre ? static_cast<double>(centre[i]) : 0.0);
    dist2 += e * e;
  }
  if (dist2 <= r2) return;
  const double scale = std::sqrt(r2 / dist2);
  for (index i = 0; i < n; ++i) {
    const double c = centre ? static_cast<double>(centre[i]) : 0.0;
    d[i] = static_cast<T>(c + (static_cast<double>(d[i]) - c) * scale);
  }
}

// Every column of D onto its constraint set: the first task.cols() around the task's columns.
template <Real T>
void project_all(MatrixView<T> D, ConstMatrixView<T> task, double c, double c_d) {
  for (index j = 0; j < D.cols(); ++j) {
    const bool assisted = j < task.cols();
    project<T>(&D(0, j), assisted ? &task(0, j) : nullptr, D.rows(), assisted ? c : c_d);
  }
}

// The objective's terms for the D a dictionary pass reads.
struct DictionarySums {
  double dp = 0;  // <D, X S^T>
  double dv = 0;  // <D, D S S^T>
};

// One dictionary step, given P = X S^T and V = D H (H = S S^T): D := proj(D + (P - V) * inv_c), in place.
template <Real T>
DictionarySums dictionary_pass(ConstMatrixView<T> P, ConstMatrixView<T> V, MatrixView<T> D, T inv_c,
                               ConstMatrixView<T> task, double c, double c_d) {
  DictionarySums sums;
  for (index j = 0; j < D.cols(); ++j)
    for (index i = 0; i < D.rows(); ++i) {
      const T d = D(i, j), p = P(i, j), v = V(i, j);
      sums.dp += static_cast<double>(d) * p;
      sums.dv += static_cast<double>(d) * v;
      D(i, j) = d + (p - v) * inv_c;
    }
  project_all<T>(D, task, c, c_d);
  return sums;
}

// out := A^T A (op Transpose) or A A^T (op None): syrk's lower triangle, mirrored to the upper one (the
// products below read both).
template <Real T>
void gram(Op op, ConstMatrixView<T> A, Matrix<T>& out) {
  k::syrk<T>(Uplo::Lower, op, T(1), A, T(0), out.view());
  symmetrize_from_lower<T>(out.view());
}

// ||A||_2 of the symmetric positive semidefinite A: its largest eigenvalue (LAPACK syevr on a copy).
template <Real T>
double largest_eigenvalue(const Matrix<T>& A, const char* what, int iteration) {
  Matrix<T> scratch = A.clone();
  std::vector<T> vector(static_cast<std::size_t>(A.rows()));
  T value = 0;
  if (k::largest_eigenpair<T>(scratch.view(), value, vector.data()) != 0)
    throw NoConvergence("ADL's step constant (LAPACK syevr)", iteration, 0.0, 0.0,
                        fmt::format("the largest eigenvalue of {} did not converge", what));
  return static_cast<double>(value);
}

template <Real T>
double dot(ConstMatrixView<T> A, ConstMatrixView<T> B) {
  double s = 0;
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < A.rows(); ++i) s += static_cast<double>(A(i, j)) * B(i, j);
  return s;
}

void require_positive(double v, const char* name) {
  if (!(v > 0) || !std::isfinite(v))
    throw InvalidArgument(fmt::format("ADL: {} must be positive and finite; got {}", name, v));
}

}  // namespace

template <Real T>
AdlResult<T> adl(ConstMatrixView<T> X, const AdlOptions& o, ConstMatrixView<T> task, const Matrix<T>* initial) {
  const index n = X.rows(), N = X.cols(), K = o.atoms, M = task.empty() ? 0 : task.cols();
  require_host(X.device(), "ADL");
  if (X.empty()) throw InvalidArgument(fmt::format("ADL: X must have time points and voxels; got {}", shape_string(n, N)));
  if (K < 1) throw InvalidArgument(fmt::format("ADL: give at least one atom; got K = {}", K));
  if (M > K)
    throw InvalidArgument(fmt::format("ADL: the task has {} time courses ({}) but there are only K = {} atoms", M,
                                      shape_string(task.rows(), M), K));
  if (M > 0) {
    require_host(task.device(), "ADL");
    if (task.rows() != n) throw ShapeMismatch("ADL: the task's time courses against X (time points)", task.rows(), M, n, N);
    require_finite(task, "task");
    require_positive(o.c, "c (the assisted atoms' squared radius)");
  }
  if (M < K) require_positive(o.c_d, "c_d (the free atoms' squared radius)");
  if (o.lambda < 0 || std::isinf(o.lambda))
    throw InvalidArgument(fmt::format("ADL: lambda must be non-negative and finite (NaN for the default); got {}", o.lambda));
  if (o.iterations < 0) throw InvalidArgument("ADL: the iteration count cannot be negative");
  if (o.coefficient_steps < 1 || o.dictionary_steps < 1)
    throw InvalidArgument(fmt::format("ADL: give at least one coefficient and one dictionary step per iteration; got {} and {}",
                                      o.coefficient_steps, o.dictionary_steps));
  if (!(o.tolerance >= 0)) throw InvalidArgument("ADL: the tolerance cannot be negative");

  // ||X||_F^2 in double; a NaN or Inf anywhere makes it non-finite, and only then is X searched for it
  const double xx = blockwise<Sum>(N, [&](index first, index last) {
                      Sum s;
                      for (index j = first; j < last; ++j)
                        for (index i = 0; i < n; ++i) s.value += static_cast<double>(X(i, j)) * X(i, j);
                      return s;
                    }).value;
  if (!std::isfinite(xx)) {
    require_finite(X, "X");
    throw InvalidArgument("ADL: X's entries are too large: ||X||_F^2 overflows; scale X down");
  }

  AdlResult<T> out;
  out.lambda = std::isnan(o.lambda) ? 0.5 * std::sqrt(xx / (static_cast<double>(n) * static_cast<double>(N))) : o.lambda;
  const double lambda = out.lambda;

  Matrix<T>& D = out.dictionary;
  if (initial) {
    if (initial->rows() != n || initial->cols() != K)
      throw ShapeMismatch("ADL: the initial dictionary against X's time points and K", initial->rows(), initial->cols(),
                          n, K);
    require_host(initial->device(), "ADL");
    require_finite(initial->view(), "initial dictionary");
    D = Matrix<T>::copy_of(initial->view());
  } else {
    std::mt19937_64 rng(o.seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    D = Matrix<T>::uninitialized(n, K);
    for (index e = 0; e < D.size(); ++e) D.data()[e] = static_cast<T>(normal(rng));
  }
  project_all<T>(D.view(), task, o.c, o.c_d);

  Matrix<T>& S = out.codes;
  S = Matrix<T>(K, N);
  Matrix<T> DtX = Matrix<T>::uninitialized(K, N), W = Matrix<T>::uninitialized(K, N);
  Matrix<T> G(K, K), H(K, K), P(n, K), V(n, K);
  out.objective.push_back(xx);  // S = 0
  out.stop_reason = "iteration limit";
  const auto f_of = [&](double cross, double quadratic, double l1) { return xx - 2 * cross + quadratic + lambda * l1; };

  for (int it = 1; it <= o.iterations; ++it) {
    // coefficients: c_S = ||D^T D||_2. D = 0 (c_S = 0) leaves X unexplained whatever S is, so the
    // minimiser is S = 0: an infinite threshold gives exactly that.
    gram<T>(Op::Transpose, D.view(), G);
    const double c_s = largest_eigenvalue<T>(G, "D^T D", it);
    const T inv_cs = c_s > 0 ? static_cast<T>(1 / c_s) : T(0);
    const T tau = c_s > 0 ? static_cast<T>(lambda / (2 * c_s)) : std::numeric_limits<T>::infinity();
    k::gemm<T>(Op::Transpose, Op::None, T(1), D.view(), X, T(0), DtX.view());
    double l1 = 0;
    for (int step = 0; step < o.coefficient_steps; ++step) {
      k::gemm<T>(Op::None, Op::None, T(1), G.view(), S.view(), T(0), W.view());
      const CoefficientSums sums = coefficient_pass<T>(DtX.view(), W.view(), S.view(), inv_cs, tau);
      if (step > 0) out.inner_objective.push_back(f_of(sums.xs, sums.sgs, sums.l1));  // after step `step`
      l1 = sums.l1_new;
    }
    // dictionary: c_D = ||S S^T||_2. S = 0 (c_D = 0) makes f independent of D: D stays.
    gram<T>(Op::None, S.view(), H);
    const double c_dict = largest_eigenvalue<T>(H, "S S^T", it);
    const T inv_cd = c_dict > 0 ? static_cast<T>(1 / c_dict) : T(0);
    k::gemm<T>(Op::None, Op::Transpose, T(1), X, S.view(), T(0), P.view());
    for (int step = 0; step < o.dictionary_steps; ++step) {
      k::gemm<T>(Op::None, Op::None, T(1), D.view(), H.view(), T(0), V.view());
      const DictionarySums sums = dictionary_pass<T>(P.view(), V.view(), D.view(), inv_cd, task, o.c, o.c_d);
      // step 0 reads the D of the coefficient steps: f after the last of them
      out.inner_objective.push_back(f_of(sums.dp, sums.dv, l1));
    }
    k::gemm<T>(Op::None, Op::None, T(1), D.view(), H.view(), T(0), V.view());
    const double f = f_of(dot<T>(D.view(), P.view()), dot<T>(D.view(), V.view()), l1);
    out.inner_objective.push_back(f);
    const double previous = out.objective.back();
    out.objective.push_back(f);
    out.iterations = it;
    if (o.progress) o.progress(it, f);
    if (o.tolerance > 0 && previous - f <= o.tolerance * previous) {
      out.stop_reason = fmt::format("f decreased by at most {:g} of itself in an iteration", o.tolerance);
      break;
    }
  }
  return out;
}

template AdlResult<float> adl<float>(ConstMatrixView<float>, const AdlOptions&, ConstMatrixView<float>,
                                     const Matrix<float>*);
template AdlResult<double> adl<double>(ConstMatrixView<double>, const AdlOptions&, ConstMatrixView<double>,
                                       const Matrix<double>*);

}  // namespace linv::fmri
