// PARAFAC2 by alternating least squares (include/linv/parafac2.hpp): the iteration on the small factors,
// for every backend. The passes over the slabs (the P-step's projections and the products with the
// projected slabs) are the backend's (src/kernels/fmri.hpp: src/cpu/parafac2.cpp, src/cuda/parafac2.cpp),
// so both take the same steps; everything here is float64 on the host.
#include "linv/parafac2.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>

#include "common/stopwatch.hpp"
#include "core/scaling.hpp"
#include "kernels/backend.hpp"
#include "kernels/distributed.hpp"
#include "linv/dense.hpp"
#include "linv/distributed.hpp"
#include "linv/errors.hpp"

namespace linv::fmri {
namespace {

// The factors are small and live on the host: the host's dense family for them.
const kernels::Dense<double>& host() { return kernels::dense<double>(Device::cpu()); }

constexpr double kEps = std::numeric_limits<double>::epsilon();

Matrix<double> cross(ConstMatrixView<double> X) {  // X^T X
  Matrix<double> G(X.cols(), X.cols());
  host().gemm(Op::Transpose, Op::None, 1.0, X, X, 0.0, G.view());
  return G;
}

Matrix<double> hadamard(const Matrix<double>& a, const Matrix<double>& b) {
  Matrix<double> out = Matrix<double>::uninitialized(a.rows(), a.cols());
  for (index e = 0; e < a.size(); ++e) out.data()[e] = a.data()[e] * b.data()[e];
  return out;
}

// X := X V^-1 for the symmetric positive semidefinite V (F x F): Cholesky, or, when V is singular (a
// component collapsed to zero), the minimum-norm least-squares solution, as parafac2.m's pinv gives.
void solve_right(MatrixView<double> X, const Matrix<double>& V) {
  Matrix<double> L = V.clone();
  if (host().cholesky_factor(L.view()) == 0) {
    host().trsm(Side::Right, Uplo::Lower, Op::Transpose, Diag::NonUnit, 1.0, L.view(), X);
    host().trsm(Side::Right, Uplo::Lower, Op::None, Diag::NonUnit, 1.0, L.view(), X);
    return;
  }
  const index F = V.rows(), n = X.rows();
  Matrix<double> B(F, n);  // V X^T = R^T
  for (index i = 0; i < n; ++i)
    for (index f = 0; f < F; ++f) B(f, i) = X(i, f);
  Matrix<double> A = V.clone();
  host().least_squares(A.view(), B.view(), static_cast<double>(F) * kEps);
  for (index i = 0; i < n; ++i)
    for (index f = 0; f < F; ++f) X(i, f) = B(f, i);
}

struct Factors {
  Matrix<double> A, H, C;  // I x F, F x F, K x F
};

// B := [diag(c_1) H^T ... diag(c_K) H^T] (F x F K), so that slab k's model is A B_k P_k^T.
Matrix<double> slab_blocks(const Factors& f) {
  const index F = f.H.rows(), K = f.C.rows();
  Matrix<double> B = Matrix<double>::uninitialized(F, F * K);
  for (index k = 0; k < K; ++k)
    for (index c = 0; c < F; ++c)
      for (index r = 0; r < F; ++r) B(r, k * F + c) = f.C(k, r) * f.H(c, r);
  return B;
}

// One CP-ALS sweep on the projected slabs Y = [Y_1 ... Y_K] (I x F K, the backend's), updating A, then H,
// then C (the order of parafac2.m). Returns ||X||^2 - 2 <Y, model> + ||model||^2, which is
// ||X - model||^2 because every P_k has orthonormal columns (<X_k, M_k P_k^T> = <Y_k, M_k> and
// ||M_k P_k^T|| = ||M_k||).
template <Real T>
double als_sweep(kernels::Parafac2Steps<T>& steps, Factors& f, double norm_squared, int iteration) {
  const index F = f.H.rows(), K = f.C.rows();
  // A = [sum_k Y_k H diag(c_k)] ((H^T H) * (C^T C))^-1 = Y (kr ((H^T H) * (C^T C))^-1), kr the
  // Khatri-Rao product of C and H; the backend also returns W = Y^T A, all that H's and C's updates need
  // of Y (every Y_k^T A, F x F blocks)
  Matrix<double> kr(F * K, F);
  for (index c = 0; c < F; ++c)
    for (index k = 0; k < K; ++k)
      for (index g = 0; g < F; ++g) kr(g + k * F, c) = f.H(g, c) * f.C(k, c);
  solve_right(kr.view(), hadamard(cross(f.H.view()), cross(f.C.view())));
  Matrix<double> A(f.A.rows(), F), W(F * K, F);
  steps.iterate(f.A, slab_blocks(f), kr, A, W, iteration);
  f.A = std::move(A);
  const Matrix<double> AtA = cross(f.A.view());
  // H = [sum_k Y_k^T A diag(c_k)] ((A^T A) * (C^T C))^-1
  for (index c = 0; c < F; ++c)
    for (index g = 0; g < F; ++g) {
      double t = 0;
      for (index k = 0; k < K; ++k) t += W(g + k * F, c) * f.C(k, c);
      f.H(g, c) = t;
    }
  solve_right(f.H.view(), hadamard(AtA, cross(f.C.view())));
  // C(k, :) = diag(A^T Y_k H)^T ((A^T A) * (H^T H))^-1
  Matrix<double> D(K, F);
  for (index c = 0; c < F; ++c)
    for (index k = 0; k < K; ++k) {
      double t = 0;
      for (index g = 0; g < F; ++g) t += W(g + k * F, c) * f.H(g, c);
      D(k, c) = t;
    }
  const Matrix<double> V = hadamard(AtA, cross(f.H.view()));
  f.C = D.clone();
  solve_right(f.C.view(), V);
  // <Y, model> = sum C .* D, ||model||^2 = sum V .* (C^T C)
  const Matrix<double> CtC = cross(f.C.view());
  double inner = 0, model = 0;
  for (index e = 0; e < D.size(); ++e) inner += f.C.data()[e] * D.data()[e];
  for (index e = 0; e < V.size(); ++e) model += V.data()[e] * CtC.data()[e];
  return std::max(0.0, norm_squared - 2 * inner + model);
}

// parafac2.m's scaling and signs: A's and C's columns to unit norm, each with at least as many positive
// as negative entries, H's columns absorbing both. The model is unchanged.
void normalise(Factors& f) {
  const index F = f.H.rows();
  auto column_scale = [](Matrix<double>& X, index c) {
    double norm = 0, sign = 0;
    for (index i = 0; i < X.rows(); ++i) {
      norm += X(i, c) * X(i, c);
      sign += X(i, c) > 0 ? 1 : (X(i, c) < 0 ? -1 : 0);
    }
    norm = std::sqrt(norm);
    const double s = norm > 0 ? (sign >= 0 ? 1 : -1) / norm : 1;
    for (index i = 0; i < X.rows(); ++i) X(i, c) *= s;
    return 1 / s;
  };
  for (index c = 0; c < F; ++c) {
    const double moved = column_scale(f.A, c) * column_scale(f.C, c);
    for (index g = 0; g < F; ++g) f.H(g, c) *= moved;
  }
}

// Components by ||h_f||, largest first.
void sort_components(Factors& f) {
  const index F = f.H.rows();
  std::vector<double> size(static_cast<std::size_t>(F), 0.0);
  for (index c = 0; c < F; ++c)
    for (index g = 0; g < F; ++g) size[static_cast<std::size_t>(c)] += f.H(g, c) * f.H(g, c);
  std::vector<index> order(static_cast<std::size_t>(F));
  std::iota(order.begin(), order.end(), index{0});
  std::stable_sort(order.begin(), order.end(), [&](index a, index b) {
    return size[static_cast<std::size_t>(a)] > size[static_cast<std::size_t>(b)];
  });
  auto permute = [&](Matrix<double>& X) {
    Matrix<double> out = Matrix<double>::uninitialized(X.rows(), X.cols());
    for (index c = 0; c < F; ++c)
      for (index i = 0; i < X.rows(); ++i) out(i, c) = X(i, order[static_cast<std::size_t>(c)]);
    X = std::move(out);
  };
  permute(f.A);
  permute(f.H);
  permute(f.C);
}

// The checks of this process's slabs (first .. first + slabs.size() - 1 of `total`).
template <Real T>
void validate(const std::vector<ConstMatrixView<T>>& slabs, index first, index total, const Parafac2Options& o,
              const Parafac2Init<T>* init) {
  if (slabs.empty()) throw InvalidArgument("PARAFAC2: no slabs given");
  const index K = static_cast<index>(slabs.size()), I = slabs[0].rows(), F = o.rank;
  if (I < 1) throw InvalidArgument(fmt::format("PARAFAC2: slab 0 is {}: it needs at least one row", shape_string(I, slabs[0].cols())));
  if (F < 1) throw InvalidArgument(fmt::format("PARAFAC2: the rank must be at least 1; got {}", F));
  // P_k's polar factor is unique only when Q_k = X_k^T A diag(c_k) H^T (J_k x F, rank <= I) can have rank F
  if (F > I)
    throw InvalidArgument(fmt::format("PARAFAC2: rank {} exceeds the slabs' {} rows; the rank can be at most "
                                      "min(I, J_k)",
                                      F, I));
  for (index k = 0; k < K; ++k) {
    const ConstMatrixView<T>& X = slabs[static_cast<std::size_t>(k)];
    if (X.rows() != I)
      throw ShapeMismatch(fmt::format("PARAFAC2: slab {} against slab {} (every slab needs the same rows)", first + k,
                                      first),
                          X.rows(), X.cols(), I, slabs[0].cols());
    if (X.cols() < F)
      throw InvalidArgument(fmt::format("PARAFAC2: slab {} is {}, with fewer columns than the rank {}: its P_k "
                                        "cannot have {} orthonormal columns",
                                        first + k, shape_string(X.rows(), X.cols()), F, F));
    if (X.device() != slabs[0].device())
      throw InvalidArgument(fmt::format("PARAFAC2: slab {} is on {} but slab {} on {}: put every slab on one device",
                                        first + k, X.device().name(), first, slabs[0].device().name()));
    require_finite(X, fmt::format("slab {}", first + k).c_str());
  }
  if (o.max_iterations < 0) throw InvalidArgument("PARAFAC2: the iteration count cannot be negative");
  if (!(o.tolerance >= 0)) throw InvalidArgument(fmt::format("PARAFAC2: the tolerance must be >= 0; got {}", o.tolerance));
  if (init) {
    const std::pair<const char*, ConstMatrixView<T>> given[] = {{"A", init->A}, {"H", init->H}, {"C", init->C}};
    const index rows[] = {I, F, total};
    for (std::size_t m = 0; m < 3; ++m) {
      const auto& [name, X] = given[m];
      if (X.rows() != rows[m] || X.cols() != F)
        throw ShapeMismatch(fmt::format("PARAFAC2: the initial {} against {} (A: I x F, H: F x F, C: K x F)", name,
                                        shape_string(rows[m], F)),
                            X.rows(), X.cols(), rows[m], F);
      require_host(X.device(), "PARAFAC2's starting factors");
      require_finite(X, fmt::format("the initial {}", name).c_str());
    }
  }
}

// The fit over this process's slabs (first .. first + slabs.size() - 1 of `total`); with a grid, the
// other processes hold the others and call this alike.
template <Real T>
Parafac2Result<T> fit(const std::vector<ConstMatrixView<T>>& slabs, index first, index total, const Parafac2Options& o,
                      const Parafac2Init<T>* init, const dist::Grid* grid) {
  // The slabs near 1 by one power of two (the same on every process): A, C and the P_k do not depend on the
  // data's scale, H and the losses scale with it; at 1e-200 the Gram matrices underflowed and A, C and H came
  // back zero with exit 0.
  double largest = 0;
  for (const ConstMatrixView<T>& X : slabs) largest = std::max(largest, scaling::max_abs(X));
  if (const int e = scaling::agreed_exponent(largest, grid); e != 0) {
    std::vector<Matrix<T>> scaled;
    std::vector<ConstMatrixView<T>> views;
    for (const ConstMatrixView<T>& X : slabs) {
      scaled.push_back(scaling::normalized_copy(X, e));
      views.push_back(scaled.back().view());
    }
    Matrix<T> h;
    Parafac2Init<T> start;
    if (init) {  // the starting H at the scaled data's scale
      h = scaling::normalized_copy(init->H, e);
      start = {init->A, h.view(), init->C};
    }
    Parafac2Result<T> out = fit<T>(views, first, total, o, init ? &start : nullptr, grid);
    scaling::scale_back(out.H, e, "H");
    for (double& l : out.loss_history) l = std::ldexp(l, 2 * e);
    out.loss = std::ldexp(out.loss, 2 * e);
    out.norm_squared = std::ldexp(out.norm_squared, 2 * e);
    out.report.notes.push_back(fmt::format("the slabs were scaled by 2^{} (exactly) for the fit; H and the losses are "
                                           "the data's",
                                           -e));
    return out;
  }
  const Stopwatch clock;
  const index K = total, I = slabs[0].rows(), F = o.rank;
  const std::unique_ptr<kernels::GridSum> sum = grid ? kernels::grid_sum(*grid) : nullptr;
  std::unique_ptr<kernels::Parafac2Steps<T>> steps;
  // what can fail on one process alone (the slabs' Gram matrices: memory) fails on all
  const auto alike = [&](auto&& body) { grid ? grid->together(body) : body(); };
  alike([&] {
    steps = kernels::fmri<T>(slabs[0].device()).parafac2_steps(slabs, {first, total, sum.get()});
  });
  Matrix<double> gram = steps->gram_sum();  // sum_k X_k X_k^T
  const double prepared = clock.seconds();
  double norm_squared = 0;
  for (index i = 0; i < I; ++i) norm_squared += gram(i, i);

  Factors f{Matrix<double>(I, F), Matrix<double>::identity(F), Matrix<double>(K, F)};
  std::mt19937_64 rng(o.seed);
  if (init) {
    const auto to_double = [](ConstMatrixView<T> X) { return Matrix<T>::copy_of(X).template cast<double>(); };
    f = {to_double(init->A), to_double(init->H), to_double(init->C)};
  } else if (o.start == Parafac2Start::Random) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (index e = 0; e < f.A.size(); ++e) f.A.data()[e] = unit(rng);
    for (index e = 0; e < f.C.size(); ++e) f.C.data()[e] = unit(rng);
  } else {
    // A: the leading left singular vectors of [X_1 ... X_K], from sum_k X_k X_k^T (the same on every
    // process: the same LAPACK on the same summed matrix)
    Matrix<double> U(I, I), VT(I, I);
    std::vector<double> sv(static_cast<std::size_t>(I));
    if (host().svd(gram.view(), sv.data(), U.view(), VT.view()) != 0)
      throw NoConvergence("PARAFAC2's SVD start (LAPACK gesdd)", 0, 0.0, 0.0,
                          "the SVD of sum_k X_k X_k^T did not converge");
    for (index c = 0; c < F; ++c)
      for (index i = 0; i < I; ++i) f.A(i, c) = U(i, c);
    std::normal_distribution<double> noise(0.0, 0.1);
    for (index e = 0; e < f.C.size(); ++e) f.C.data()[e] = 1.0 + noise(rng);
  }

  Parafac2Result<T> out;
  Report& report = out.report;
  report.operation = Operation::Parafac2;
  report.method = Method::PARAFAC2;
  report.device = slabs[0].device();
  report.precision = fmt::format("{} data, float64 factors", type_name<T>());
  report.stop = StopReason::IterationLimit;
  if (grid)
    report.notes.push_back(fmt::format("slabs dealt out over {} processes on {}, each iteration's sums added over {}",
                                       grid->size(), slabs[0].device().is_cuda() ? "GPUs" : "CPUs", sum->name()));
  out.norm_squared = norm_squared;
  const double rounding = static_cast<double>(F) * kEps * norm_squared;
  double previous = 0;
  for (int it = 1; it <= o.max_iterations; ++it) {
    const double loss = als_sweep<T>(*steps, f, norm_squared, it);
    if (!std::isfinite(loss))  // NaN would neither converge nor stop: every later sweep would carry it
      throw NumericalError(fmt::format("PARAFAC2: the loss became {} at iteration {}", loss, it));
    normalise(f);
    out.loss_history.push_back(loss);
    report.iterations = it;
    if (o.progress) o.progress(it, loss);
    if (o.tolerance > 0 && it > 1 && std::abs(previous - loss) <= std::max(o.tolerance * previous, rounding)) {
      report.stop = StopReason::Converged;
      break;
    }
    previous = loss;
  }
  normalise(f);  // a no-op after an iteration; the starting factors' convention when there was none
  sort_components(f);
  const double iterated = clock.seconds();

  // P_k = the polar factor of Q_k = X_k^T M_k (the backend's, by thin SVDs Q_k = U s V^T: P_k = U V^T), and
  // ||X_k - M_k P_k^T||^2 = ||X_k||^2 - 2 sum(s) + ||M_k||^2
  const Matrix<double> B = slab_blocks(f);
  double nuclear = 0, model = 0;
  alike([&] { out.P = steps->polar_factors(f.A, B, nuclear); });
  if (grid) nuclear = grid->sum(nuclear);
  Matrix<double> M(I, F);
  for (index k = 0; k < K; ++k) {
    host().gemm(Op::None, Op::None, 1.0, f.A.view(), B.view().block(0, k * F, F, F), 0.0, M.view());
    for (index e = 0; e < M.size(); ++e) model += M.data()[e] * M.data()[e];
  }
  out.loss = std::max(0.0, norm_squared - 2 * nuclear + model);
  out.variance_explained = norm_squared > 0 ? 1 - out.loss / norm_squared : 1.0;
  out.A = f.A.cast<T>();
  out.H = f.H.cast<T>();
  out.C = f.C.cast<T>();
  report.seconds = clock.seconds();
  report.notes.push_back(fmt::format("time: {:.3f} s to reduce the slabs to their Gram matrices{}, {:.3f} s for {} "
                                     "iterations, {:.3f} s for the P_k",
                                     prepared, grid ? " and sum them" : "", iterated - prepared, report.iterations,
                                     report.seconds - iterated));
  return out;
}

}  // namespace

template <Real T>
Parafac2Result<T> parafac2(const std::vector<ConstMatrixView<T>>& slabs, const Parafac2Options& o,
                           const Parafac2Init<T>* init) {
  const index K = static_cast<index>(slabs.size());
  validate(slabs, 0, K, o, init);
  return fit(slabs, 0, K, o, init, nullptr);
}

template Parafac2Result<float> parafac2<float>(const std::vector<ConstMatrixView<float>>&, const Parafac2Options&,
                                               const Parafac2Init<float>*);
template Parafac2Result<double> parafac2<double>(const std::vector<ConstMatrixView<double>>&, const Parafac2Options&,
                                                 const Parafac2Init<double>*);

}  // namespace linv::fmri

namespace linv::dist {

template <Real T>
fmri::Parafac2Result<T> parafac2(const Grid& grid, const std::vector<ConstMatrixView<T>>& slabs, index first,
                                 const fmri::Parafac2Options& options, const fmri::Parafac2Init<T>* init) {
  // every process learns every process's slab count, to check the shares and the rows before any sum
  const auto processes = static_cast<std::size_t>(grid.size());
  std::vector<double> counts(processes * 3, 0.0);  // counts, firsts, rows (exact in float64)
  counts[static_cast<std::size_t>(grid.rank())] = static_cast<double>(slabs.size());
  counts[processes + static_cast<std::size_t>(grid.rank())] = static_cast<double>(first);
  counts[2 * processes + static_cast<std::size_t>(grid.rank())] =
      slabs.empty() ? -1.0 : static_cast<double>(slabs[0].rows());
  grid.sum(counts.data(), counts.size());
  index total = 0;
  grid.together([&] {
    for (std::size_t r = 0; r < processes; ++r) {
      if (counts[r] < 1)
        throw InvalidArgument(fmt::format("PARAFAC2 over {} processes: process {} holds no slab; every process needs "
                                          "at least one (use at most as many processes as slabs)",
                                          processes, r));
      if (counts[processes + r] != static_cast<double>(total))
        throw InvalidArgument(fmt::format("PARAFAC2 over {} processes: process {} holds slabs from {}, where the "
                                          "previous processes' {} slabs end",
                                          processes, r, counts[processes + r], total));
      if (counts[2 * processes + r] != counts[2 * processes])
        throw InvalidArgument(fmt::format("PARAFAC2: the slabs of process {} have {} rows, those of process 0 {}; "
                                          "every slab needs the same rows",
                                          r, counts[2 * processes + r], counts[2 * processes]));
      total += static_cast<index>(counts[r]);
    }
    for (const ConstMatrixView<T>& X : slabs)
      if (X.device() != grid.device())
        throw InvalidArgument(fmt::format("PARAFAC2: process {} computes on {} but holds a slab on {}", grid.rank(),
                                          grid.device().name(), X.device().name()));
    fmri::validate(slabs, first, total, options, init);
  });
  return fmri::fit(slabs, first, total, options, init, &grid);
}

template fmri::Parafac2Result<float> parafac2<float>(const Grid&, const std::vector<ConstMatrixView<float>>&, index,
                                                     const fmri::Parafac2Options&, const fmri::Parafac2Init<float>*);
template fmri::Parafac2Result<double> parafac2<double>(const Grid&, const std::vector<ConstMatrixView<double>>&, index,
                                                       const fmri::Parafac2Options&,
                                                       const fmri::Parafac2Init<double>*);

}  // namespace linv::dist
