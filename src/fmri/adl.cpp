// Atom-assisted dictionary learning by block majorisation-minimisation (include/linv/adl.hpp): the
// outer loop (step constants, objective, stopping) for every backend. The passes over the data are the
// backend's (src/kernels/fmri.hpp: the CPU's in src/cpu/adl.cpp, the GPU's in src/cuda/adl.cpp), so both
// take the same steps with the same constants.
#include "linv/adl.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>

#include "common/fmri_rules.hpp"
#include "common/stopwatch.hpp"
#include "core/scaling.hpp"
#include "kernels/backend.hpp"
#include "kernels/distributed.hpp"
#include "linv/dense.hpp"
#include "linv/distributed.hpp"
#include "linv/errors.hpp"

namespace linv::fmri {
namespace {

// ||A||_2 of the symmetric positive semidefinite A (host): its largest eigenvalue (LAPACK syevr).
template <Real T>
double largest_eigenvalue(Matrix<T>& A, const char* what, int iteration) {
  std::vector<T> vector(static_cast<std::size_t>(A.rows()));
  T value = 0;
  if (kernels::dense<T>(Device::cpu()).largest_eigenpair(A.view(), value, vector.data()) != 0)
    throw NoConvergence("ADL's step constant (LAPACK syevr)", iteration, 0.0, 0.0,
                        fmt::format("the largest eigenvalue of {} did not converge", what));
  return static_cast<double>(value);
}

void require_positive(double v, const char* name) {
  if (!(v > 0) || !std::isfinite(v))
    throw InvalidArgument(fmt::format("ADL: {} must be positive and finite; got {}", name, v));
}

// The checks of X (this process's voxels, of N in all), the task, the options and the initial dictionary.
template <Real T>
void validate(ConstMatrixView<T> X, index N, const AdlOptions& o, ConstMatrixView<T> task, const Matrix<T>* initial) {
  const index n = X.rows(), K = o.atoms, M = task.empty() ? 0 : task.cols();
  if (X.empty()) throw InvalidArgument(fmt::format("ADL: X must have time points and voxels; got {}", shape_string(n, X.cols())));
  if (K < 1) throw InvalidArgument(fmt::format("ADL: give at least one atom; got K = {}", K));
  if (M > K)
    throw InvalidArgument(fmt::format("ADL: the task has {} time courses ({}) but there are only K = {} atoms", M,
                                      shape_string(task.rows(), M), K));
  if (M > 0) {
    require_host(task.device(), "ADL's task");
    if (task.rows() != n) throw ShapeMismatch("ADL: the task's time courses against X (time points)", task.rows(), M, n, N);
    require_finite(task, "task");
    require_positive(o.c, "c (the assisted atoms' squared radius)");
  }
  if (M < K) require_positive(o.c_d, "c_d (the free atoms' squared radius)");
  if (o.lambda < 0 || std::isinf(o.lambda))
    throw InvalidArgument(fmt::format("ADL: lambda must be non-negative and finite (NaN for the default); got {}", o.lambda));
  if (o.max_iterations < 0) throw InvalidArgument("ADL: the iteration count cannot be negative");
  if (o.coefficient_steps < 1 || o.dictionary_steps < 1)
    throw InvalidArgument(fmt::format("ADL: give at least one coefficient and one dictionary step per iteration; got {} and {}",
                                      o.coefficient_steps, o.dictionary_steps));
  if (!(o.tolerance >= 0)) throw InvalidArgument("ADL: the tolerance cannot be negative");
  if (initial) {
    if (initial->rows() != n || initial->cols() != K)
      throw ShapeMismatch("ADL: the initial dictionary against X's time points and K", initial->rows(), initial->cols(),
                          n, K);
    require_host(initial->device(), "ADL's initial dictionary");
    require_finite(initial->view(), "initial dictionary");
  }
}

// The fit of X (this process's voxels, of N in all); with a grid, the other processes hold the other
// voxels and call this alike.
template <Real T>
AdlResult<T> fit(ConstMatrixView<T> X, index N, const AdlOptions& o, ConstMatrixView<T> task, const Matrix<T>* initial,
                 const dist::Grid* grid) {
  // X near 1 by a power of two (the same on every process), lambda with it: the problem in 2^-e X and
  // 2^-e lambda has the same D and 2^-e S, so nothing but the scale changes; ||X||^2 overflowed at 1e200.
  if (const int e = scaling::agreed_exponent(scaling::max_abs(X), grid); e != 0) {
    const Matrix<T> scaled = scaling::normalized_copy(X, e);
    AdlOptions o_scaled = o;
    if (!std::isnan(o.lambda)) o_scaled.lambda = std::ldexp(o.lambda, -e);
    AdlResult<T> out = fit<T>(scaled.view(), N, o_scaled, task, initial, grid);
    scaling::scale_back(out.codes, e, "codes S");
    out.lambda = std::ldexp(out.lambda, e);
    for (double& f : out.objective) f = std::ldexp(f, 2 * e);
    for (double& f : out.inner_objective) f = std::ldexp(f, 2 * e);
    out.report.notes.push_back(fmt::format("X was scaled by 2^{} (exactly) for the fit, lambda with it; S, lambda "
                                           "and the objective are X's",
                                           -e));
    return out;
  }
  const Stopwatch clock;
  const index n = X.rows(), K = o.atoms;
  Matrix<T> D;
  if (initial) {
    D = Matrix<T>::copy_of(initial->view());
  } else {
    std::mt19937_64 rng(o.seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    D = Matrix<T>::uninitialized(n, K);
    for (index e = 0; e < D.size(); ++e) D.data()[e] = static_cast<T>(normal(rng));
  }
  rules::project_dictionary<T>(D.view(), task, o.c, o.c_d);
  const std::unique_ptr<kernels::GridSum> sum = grid ? kernels::grid_sum(*grid) : nullptr;
  std::unique_ptr<kernels::AdlSteps<T>> steps;
  // what can fail on one process alone (memory for S and the products) fails on all
  const auto alike = [&](auto&& body) { grid ? grid->together(body) : body(); };
  alike([&] {
    steps = kernels::fmri<T>(X.device()).adl_steps(X, std::move(D), task, {.c = o.c, .c_d = o.c_d}, sum.get());
  });

  // ||X||_F^2 in double; a NaN or Inf anywhere makes it non-finite, and only then is X searched for it
  const double xx = steps->norm_squared();
  if (!std::isfinite(xx)) {
    alike([&] { require_finite(X, "X"); });
    throw InvalidArgument("ADL: X's entries are too large: ||X||_F^2 overflows; scale X down");
  }

  AdlResult<T> out;
  out.lambda = std::isnan(o.lambda) ? 0.5 * std::sqrt(xx / (static_cast<double>(n) * static_cast<double>(N))) : o.lambda;
  const double lambda = out.lambda;
  out.objective.push_back(xx);  // S = 0
  Report& report = out.report;
  report.operation = Operation::Adl;
  report.method = Method::ADL;
  report.device = X.device();
  report.precision = type_name<T>();
  report.stop = StopReason::IterationLimit;
  if (grid)
    report.notes.push_back(fmt::format("voxels dealt out over {} processes on {}, each iteration's sums added over {}",
                                       grid->size(), X.device().is_cuda() ? "GPUs" : "CPUs", sum->name()));
  const auto f_of = [&](double cross, double quadratic, double l1) { return xx - 2 * cross + quadratic + lambda * l1; };

  Matrix<T> G(K, K), H(K, K);
  std::vector<kernels::AdlCoefficientSums> coefficient;
  std::vector<kernels::AdlDictionarySums> dictionary;
  for (int it = 1; it <= o.max_iterations; ++it) {
    // coefficients: c_S = ||D^T D||_2. D = 0 (c_S = 0) leaves X unexplained whatever S is, so the
    // minimiser is S = 0: an infinite threshold gives exactly that.
    steps->gram(G);
    const double c_s = largest_eigenvalue<T>(G, "D^T D", it);
    const T inv_cs = c_s > 0 ? static_cast<T>(1 / c_s) : T(0);
    const T tau = c_s > 0 ? static_cast<T>(lambda / (2 * c_s)) : std::numeric_limits<T>::infinity();
    steps->coefficient_steps(inv_cs, tau, o.coefficient_steps, coefficient, H);
    for (std::size_t step = 1; step < coefficient.size(); ++step)  // f after step `step` (read by the next)
      out.inner_objective.push_back(f_of(coefficient[step].xs, coefficient[step].sgs, coefficient[step].l1));
    const double l1 = coefficient.back().l1_new;
    // dictionary: c_D = ||S S^T||_2. S = 0 (c_D = 0) makes f independent of D: D stays.
    const double c_dict = largest_eigenvalue<T>(H, "S S^T", it);
    const T inv_cd = c_dict > 0 ? static_cast<T>(1 / c_dict) : T(0);
    steps->dictionary_steps(inv_cd, o.dictionary_steps, dictionary);
    // step 0 reads the D of the coefficient steps: f after the last of them; the last entry is the final D
    for (const kernels::AdlDictionarySums& s : dictionary) out.inner_objective.push_back(f_of(s.dp, s.dv, l1));
    const double f = out.inner_objective.back();
    if (!std::isfinite(f))
      throw NumericalError(fmt::format("ADL: the objective became {} at iteration {}", f, it));
    const double previous = out.objective.back();
    out.objective.push_back(f);
    report.iterations = it;
    if (o.progress) o.progress(it, f);
    bool converged = o.tolerance > 0 && previous - f <= o.tolerance * previous;
    // every process stops together, even where their f differ in the last bits (processes whose BLAS
    // differ)
    if (grid) converged = grid->max(converged ? 1.0 : 0.0) > 0;
    if (converged) {
      report.stop = StopReason::Converged;
      report.notes.push_back(fmt::format("f decreased by at most {:g} of itself in an iteration", o.tolerance));
      break;
    }
  }
  out.dictionary = steps->take_dictionary();
  out.codes = steps->take_codes();
  report.seconds = clock.seconds();
  return out;
}

}  // namespace

template <Real T>
AdlResult<T> adl(ConstMatrixView<T> X, const AdlOptions& o, ConstMatrixView<T> task, const Matrix<T>* initial) {
  validate(X, X.cols(), o, task, initial);
  return fit(X, X.cols(), o, task, initial, nullptr);
}

template AdlResult<float> adl<float>(ConstMatrixView<float>, const AdlOptions&, ConstMatrixView<float>,
                                     const Matrix<float>*);
template AdlResult<double> adl<double>(ConstMatrixView<double>, const AdlOptions&, ConstMatrixView<double>,
                                       const Matrix<double>*);

}  // namespace linv::fmri

namespace linv::dist {

template <Real T>
fmri::AdlResult<T> adl(const Grid& grid, ConstMatrixView<T> X, const fmri::AdlOptions& options, ConstMatrixView<T> task,
                       const Matrix<T>* initial) {
  const index N = fmri::rules::column_share(grid, X.rows(), X.cols(), X.device(), "ADL", "voxel").total;
  grid.together([&] { fmri::validate(X, N, options, task, initial); });
  return fmri::fit(X, N, options, task, initial, &grid);
}

template fmri::AdlResult<float> adl<float>(const Grid&, ConstMatrixView<float>, const fmri::AdlOptions&,
                                           ConstMatrixView<float>, const Matrix<float>*);
template fmri::AdlResult<double> adl<double>(const Grid&, ConstMatrixView<double>, const fmri::AdlOptions&,
                                             ConstMatrixView<double>, const Matrix<double>*);

}  // namespace linv::dist

