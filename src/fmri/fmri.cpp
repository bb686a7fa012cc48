// Sparse coding for fMRI factorisation (include/linv/fmri.hpp): Batch-OMP's checks and inputs, and the
// k-SVD loop (atom order, replacement, clearing) for every backend, over the fMRI family of the device X
// lives on (src/kernels/fmri.hpp).
#include "linv/fmri.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
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

namespace rules {
void require_sparsity(index atoms, index sparsity, const char* what) {
  if (sparsity < 1 || sparsity > atoms)
    throw InvalidArgument(fmt::format("{}: the sparsity must be between 1 and the {} atoms; got {}", what, atoms, sparsity));
}

ColumnShare column_share(const dist::Grid& grid, index rows, index cols, Device device, const char* what,
                         const char* item) {
  const auto processes = static_cast<std::size_t>(grid.size()), rank = static_cast<std::size_t>(grid.rank());
  std::vector<double> shapes(2 * processes, 0.0);
  shapes[rank] = static_cast<double>(rows);
  shapes[processes + rank] = static_cast<double>(cols);
  grid.sum(shapes.data(), shapes.size());
  ColumnShare share;
  grid.together([&] {
    for (std::size_t r = 0; r < processes; ++r) {
      if (shapes[processes + r] < 1)
        throw InvalidArgument(fmt::format("{} over {} processes: process {} holds no {}; every process needs at least "
                                          "one",
                                          what, processes, r, item));
      if (shapes[r] != shapes[0])
        throw InvalidArgument(fmt::format("{}: process {} holds {} time points, process 0 {}; every process needs "
                                          "all of them",
                                          what, r, shapes[r], shapes[0]));
      if (r < rank) share.first += static_cast<index>(shapes[processes + r]);
      share.total += static_cast<index>(shapes[processes + r]);
    }
    if (device != grid.device())
      throw InvalidArgument(fmt::format("{}: process {} computes on {} but its {}s are on {}", what, grid.rank(),
                                        grid.device().name(), item, device.name()));
  });
  return share;
}
}  // namespace rules

template <Real T>
Matrix<T> SparseCodes<T>::to_dense() const {
  Matrix<T> out(atoms, signals);
  for (index j = 0; j < signals; ++j)
    for (index t = 0; t < count[static_cast<std::size_t>(j)]; ++t) {
      const std::size_t slot = static_cast<std::size_t>(t + j * sparsity);
      out(atom[slot], j) = value[slot];
    }
  return out;
}

template <Real T>
SparseCodes<T> batch_omp_gram(ConstMatrixView<T> G, ConstMatrixView<T> DtX, const std::vector<double>& norms_squared,
                              const OmpOptions& options) {
  const index K = G.rows(), N = DtX.cols();
  if (G.cols() != K) throw InvalidArgument(fmt::format("Batch-OMP: G must be square, got {}", shape_string(K, G.cols())));
  if (DtX.rows() != K) throw ShapeMismatch("Batch-OMP: G and D^T X", K, K, DtX.rows(), N);
  if (G.device() != DtX.device())
    throw InvalidArgument(fmt::format("Batch-OMP: G is on {} but D^T X is on {}; move one with .to()",
                                      G.device().name(), DtX.device().name()));
  rules::require_sparsity(K, options.sparsity, "Batch-OMP");
  if (options.tolerance > 0 && static_cast<index>(norms_squared.size()) != N)
    throw InvalidArgument(fmt::format("Batch-OMP: a tolerance needs the {} signals' squared norms; got {}", N,
                                      norms_squared.size()));
  Matrix<double> norms(options.tolerance > 0 ? N : 0, 1);
  std::copy(norms_squared.begin(), norms_squared.end(), norms.data());
  return kernels::fmri<T>(G.device()).batch_omp(G, DtX, norms.to(G.device()).view(), options);
}

// The codes of data that were scaled by 2^-e for the fit, scaled back: a code that does not fit T is a
// numerical failure, never Inf.
template <Real T>
void scale_codes_back(SparseCodes<T>& codes, int e, const char* what) {
  if (e == 0) return;
  for (T& v : codes.value) {
    v = std::ldexp(v, e);
    if (!std::isfinite(v))
      throw NumericalError(fmt::format("{}: the codes overflow {} once scaled back to the data's scale", what,
                                       type_name<T>()));
  }
}

template <Real T>
SparseCodes<T> batch_omp(ConstMatrixView<T> D, ConstMatrixView<T> X, const OmpOptions& options) {
  if (D.rows() != X.rows()) throw ShapeMismatch("Batch-OMP: D and X (time points)", D.rows(), D.cols(), X.rows(), X.cols());
  if (D.device() != X.device())
    throw InvalidArgument(fmt::format("Batch-OMP: D is on {} but X is on {}; move one with .to()", D.device().name(),
                                      X.device().name()));
  require_finite(D, "D");
  require_finite(X, "X");
  // X and D near 1 (exactly: powers of two): G and D^T X square their entries, and at 1e200 or 1e-200 the
  // codes came back all zero with exit 0. X = D gamma gives gamma 2^(eX - eD) times the scaled one's.
  const int ex = scaling::exponent_for(scaling::max_abs(X)), ed = scaling::exponent_for(scaling::max_abs(D));
  if (ex != 0 || ed != 0) {
    const Matrix<T> xs = scaling::normalized_copy(X, ex), ds = scaling::normalized_copy(D, ed);
    OmpOptions scaled = options;
    scaled.tolerance = std::ldexp(options.tolerance, -2 * ex);  // a squared residual norm
    SparseCodes<T> codes = batch_omp<T>(ds.view(), xs.view(), scaled);
    scale_codes_back(codes, ex - ed, "Batch-OMP");
    return codes;
  }
  const index K = D.cols(), N = X.cols();
  rules::require_sparsity(K, options.sparsity, "Batch-OMP");
  const Device device = X.device();
  const kernels::Fmri<T>& fmri = kernels::fmri<T>(device);
  Matrix<T> G = Matrix<T>::uninitialized(K, K, device), DtX = Matrix<T>::uninitialized(K, N, device);
  fmri.gram_and_correlations(D, X, G.view(), DtX.view());
  Matrix<double> norms(options.tolerance > 0 ? N : 0, 1, device);  // ||x||^2, only for the tolerance
  if (!norms.empty()) kernels::vectors<T>(device).column_norms_squared(X, norms.view());
  return fmri.batch_omp(G.view(), DtX.view(), norms.view(), options);
}

// ---- k-SVD -------------------------------------------------------------------------------------

namespace {

template <Real T>
void validate(ConstMatrixView<T> X, index N, const KsvdOptions& o, const Matrix<T>* initial) {
  require_finite(X, "X");
  if (o.atoms < 1) throw InvalidArgument("k-SVD: give at least one atom");
  rules::require_sparsity(o.atoms, o.sparsity, "k-SVD");
  if (o.iterations < 0) throw InvalidArgument("k-SVD: the iteration count cannot be negative");
  if (initial) {
    if (initial->rows() != X.rows() || initial->cols() != o.atoms)
      throw ShapeMismatch("k-SVD: the initial dictionary against X's time points and K", X.rows(), o.atoms,
                          initial->rows(), initial->cols());
  } else if (o.atoms > N) {
    throw InvalidArgument(fmt::format("k-SVD: {} atoms from {} signals: give fewer atoms or a dictionary", o.atoms, N));
  }
}

// The fit of X: signals first .. first + X.cols() - 1 of N. With a grid, the other processes hold the
// others (in rank order) and call this alike: what adds over signals is added over the grid, the worst
// represented signal is the job's, and every process takes the same steps.
template <Real T>
KsvdResult<T> fit(ConstMatrixView<T> X, index N, index first, const KsvdOptions& o, const Matrix<T>* initial,
                  const dist::Grid* grid) {
  // X near 1 by a power of two (the same on every process): the atoms are unit vectors whatever X's scale,
  // and the codes and errors scale with X, which at 1e-200 gave codes of zero with exit 0.
  if (const int e = scaling::agreed_exponent(scaling::max_abs(X), grid); e != 0) {
    const Matrix<T> scaled = scaling::normalized_copy(X, e);
    KsvdResult<T> out = fit<T>(scaled.view(), N, first, o, initial, grid);
    scale_codes_back(out.codes, e, "k-SVD");
    for (double& r : out.rmse) r = std::ldexp(r, e);
    out.report.notes.push_back(fmt::format("X was scaled by 2^{} (exactly) for the fit; the codes and errors are X's",
                                           -e));
    return out;
  }
  const Stopwatch clock;
  const index n = X.rows(), K = o.atoms;
  const auto processes = static_cast<std::size_t>(grid ? grid->size() : 1);
  const auto rank = static_cast<std::size_t>(grid ? grid->rank() : 0);
  std::mt19937_64 rng(o.seed);
  Matrix<T> D;
  if (initial) {
    D = initial->to(Device::cpu());
  } else {  // K distinct signals of all N, wherever they are
    std::vector<index> order(static_cast<std::size_t>(N));
    std::iota(order.begin(), order.end(), index{0});
    std::shuffle(order.begin(), order.end(), rng);
    D = Matrix<T>(n, K);
    for (index j = 0; j < K; ++j) {
      const index s = order[static_cast<std::size_t>(j)] - first;
      if (s >= 0 && s < X.cols()) copy<T>(X.block(0, s, n, 1), D.block(0, j, n, 1));  // wherever X lives
    }
    if (grid) {  // one process holds each column: the sum is that column, exactly
      std::vector<double> columns(D.data(), D.data() + D.size());
      grid->sum(columns.data(), columns.size());
      std::copy(columns.begin(), columns.end(), D.data());
    }
  }
  for (index j = 0; j < K; ++j) {  // unit-norm atoms (a zero one becomes the first basis vector)
    double norm = 0;
    for (index i = 0; i < n; ++i) norm += static_cast<double>(D(i, j)) * D(i, j);
    norm = std::sqrt(norm);
    for (index i = 0; i < n; ++i) D(i, j) = norm > 0 ? static_cast<T>(static_cast<double>(D(i, j)) / norm) : T(i == 0);
  }

  const std::unique_ptr<kernels::GridSum> sum = grid ? kernels::grid_sum(*grid) : nullptr;
  std::unique_ptr<kernels::KsvdSteps<T>> steps;
  const auto alike = [&](auto&& body) { grid ? grid->together(body) : body(); };  // allocations fail on all
  alike([&] { steps = kernels::fmri<T>(X.device()).ksvd_steps(X, std::move(D), o, sum.get()); });

  // The job's RMSE from this process's sum of errors; a NaN or Inf means the dictionary overflowed, and
  // going on would hand it to every later step.
  const auto rmse = [&](double errors, int it) {
    const double r = std::sqrt((grid ? grid->sum(errors) : errors) / (static_cast<double>(n) * static_cast<double>(N)));
    if (!std::isfinite(r))
      throw NumericalError(fmt::format("k-SVD: the representation error became {} at iteration {}", r, it));
    return r;
  };
  // Every process's users of every atom (K per process, in rank order): the job's counts, and where each
  // process's users of an atom start.
  const auto users_by_process = [&](T threshold) {
    const std::vector<index> mine = steps->users(threshold);
    std::vector<double> all(processes * static_cast<std::size_t>(K), 0.0);
    std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(rank * static_cast<std::size_t>(K)));
    if (grid) grid->sum(all.data(), all.size());
    return all;
  };
  const auto job_users = [&](const std::vector<double>& all, index j) {
    kernels::AtomUsers u;
    for (std::size_t p = 0; p < processes; ++p) {
      const auto count = static_cast<index>(all[p * static_cast<std::size_t>(K) + static_cast<std::size_t>(j)]);
      u.total += count;
      if (p < rank) u.before += count;
    }
    return u;
  };
  // d_j := the job's worst represented signal not used this way yet, normalised (the first of the
  // lowest-ranked process among equals, as one process would pick); false when none is left.
  const auto replace_with_worst = [&](index j) {
    kernels::WorstSignal worst = steps->worst_signal();
    std::size_t owner = rank;
    if (grid) {
      std::vector<double> errors(processes, 0.0);
      errors[rank] = worst.error;
      grid->sum(errors.data(), errors.size());
      owner = static_cast<std::size_t>(std::max_element(errors.begin(), errors.end()) - errors.begin());
      worst.error = errors[owner];
    }
    if (!(worst.error > 0)) return false;
    std::vector<double> atom(static_cast<std::size_t>(n), 0.0);
    if (owner == rank) atom = steps->claim_signal(worst.signal);
    if (grid) grid->broadcast(atom.data(), atom.size() * sizeof(double), static_cast<int>(owner));
    double norm = 0;
    for (double v : atom) norm += v * v;
    norm = std::sqrt(norm);
    if (!(norm > 0)) return false;
    for (double& v : atom) v /= norm;
    steps->set_atom(j, atom);
    return true;
  };

  KsvdResult<T> out;
  std::vector<index> order(static_cast<std::size_t>(K));
  std::iota(order.begin(), order.end(), index{0});
  for (int it = 0; it < o.iterations; ++it) {
    out.rmse.push_back(rmse(steps->code(o.keep_better_codes && it > 0), it + 1));
    if (o.progress) o.progress(it + 1, out.rmse.back());
    const std::vector<double> used = users_by_process(T(0));
    std::vector<bool> replaced(static_cast<std::size_t>(K), false);
    std::shuffle(order.begin(), order.end(), rng);
    for (index j : order) {
      if (o.checkpoint) o.checkpoint();
      const kernels::AtomUsers users = job_users(used, j);
      if (users.total > 0) {
        steps->update_atom(j, users, o.exact, it);
      } else if (replace_with_worst(j)) {  // an atom no signal uses
        replaced[static_cast<std::size_t>(j)] = true;
        ++out.replaced;
      }
    }
    if (o.clear && it + 1 < o.iterations) {  // Rubinstein's cleardict (not after the last update: a fresh
                                              // atom would reach the result without ever being updated)
      steps->refresh_errors();
      const std::vector<double> use = users_by_process(T(1e-7));
      Matrix<T> host_D = steps->dictionary();
      for (index j = 0; j < K; ++j) {
        if (replaced[static_cast<std::size_t>(j)]) continue;
        if (rules::should_clear(host_D, j, job_users(use, j).total, o) && replace_with_worst(j)) {
          ++out.replaced;
          host_D = steps->dictionary();
        }
      }
    }
  }
  out.rmse.push_back(rmse(steps->code(o.keep_better_codes && o.iterations > 0), o.iterations));
  out.dictionary = steps->take_dictionary();
  out.codes = steps->take_codes();
  Report& r = out.report;
  r.operation = Operation::Ksvd;
  r.method = Method::KSVD;
  r.device = X.device();
  r.precision = type_name<T>();
  r.iterations = o.iterations;
  r.notes.push_back(fmt::format("{} atom updates; {} atoms replaced", o.exact ? "exact" : "approximate", out.replaced));
  if (grid)
    r.notes.push_back(fmt::format("signals dealt out over {} processes on {}, each atom update's sums added over {}",
                                  grid->size(), X.device().is_cuda() ? "GPUs" : "CPUs", sum->name()));
  r.seconds = clock.seconds();
  return out;
}

}  // namespace

template <Real T>
KsvdResult<T> ksvd(ConstMatrixView<T> X, const KsvdOptions& o, const Matrix<T>* initial) {
  validate(X, X.cols(), o, initial);
  return fit(X, X.cols(), 0, o, initial, nullptr);
}

// ---- synthetic fMRI ----------------------------------------------------------------------------

SyntheticFmri synthetic_fmri(const SyntheticOptions& o) {
  const index T = o.time_points, K = o.sources, N = o.nx * o.ny * o.nz;
  if (T < 2 || K < 1 || o.nx < 1 || o.ny < 1 || o.nz < 1)
    throw InvalidArgument(fmt::format("synthetic fMRI: need at least 2 time points, 1 source and 1 voxel; got {} time "
                                      "points, {} sources, a {}x{}x{} volume",
                                      T, K, o.nx, o.ny, o.nz));
  if (!(o.tr > 0)) throw InvalidArgument("synthetic fMRI: the repetition time must be positive");
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  // SPM's canonical HRF: a gamma of shape 6 minus a sixth of one of shape 16, over 32 s
  std::vector<double> hrf;
  for (double t = 0; t <= 32.0; t += o.tr)
    hrf.push_back(std::pow(t, 5) * std::exp(-t) / 120.0 - std::pow(t, 15) * std::exp(-t) / (6.0 * 1307674368000.0));
  SyntheticFmri out{Matrix<double>(T, N), Matrix<double>(T, K), Matrix<double>(K, N)};
  for (index k = 0; k < K; ++k) {
    std::vector<double> design(static_cast<std::size_t>(T), 0.0);
    if (k % 2 == 0) {  // blocks: on and off for `length` volumes, from a random phase
      const index length = 8 + static_cast<index>(unit(rng) * 13), phase = static_cast<index>(unit(rng) * 2 * length);
      for (index t = 0; t < T; ++t) design[static_cast<std::size_t>(t)] = ((t + phase) / length) % 2 == 1 ? 1.0 : 0.0;
    } else {  // events, about one in twelve volumes
      for (index t = 0; t < T; ++t) design[static_cast<std::size_t>(t)] = unit(rng) < 1.0 / 12 ? 1.0 : 0.0;
      design[static_cast<std::size_t>(static_cast<index>(unit(rng) * T))] = 1.0;  // at least one
    }
    double mean = 0;
    for (index t = 0; t < T; ++t) {
      double v = 0;
      for (std::size_t l = 0; l < hrf.size() && static_cast<index>(l) <= t; ++l)
        v += hrf[l] * design[static_cast<std::size_t>(t - static_cast<index>(l))];
      out.timecourses(t, k) = v;
      mean += v / static_cast<double>(T);
    }
    double norm = 0;
    for (index t = 0; t < T; ++t) norm += (out.timecourses(t, k) - mean) * (out.timecourses(t, k) - mean);
    norm = std::sqrt(norm);
    for (index t = 0; t < T; ++t)
      out.timecourses(t, k) = norm > 0 ? (out.timecourses(t, k) - mean) / norm : (t == 0 ? 1.0 : 0.0);
    // a blob: random centre, radius 8 % to 20 % of the volume's largest side
    const double cx = unit(rng) * static_cast<double>(o.nx), cy = unit(rng) * static_cast<double>(o.ny),
                 cz = unit(rng) * static_cast<double>(o.nz);
    const double radius = (0.08 + 0.12 * unit(rng)) * static_cast<double>(std::max({o.nx, o.ny, o.nz}));
    for (index z = 0; z < o.nz; ++z)
      for (index y = 0; y < o.ny; ++y)
        for (index x = 0; x < o.nx; ++x) {
          const double dx = static_cast<double>(x) + 0.5 - cx, dy = o.ny > 1 ? static_cast<double>(y) + 0.5 - cy : 0.0,
                       dz = o.nz > 1 ? static_cast<double>(z) + 0.5 - cz : 0.0;
          const double v = std::exp(-(dx * dx + dy * dy + dz * dz) / (2 * radius * radius));
          out.maps(k, x + o.nx * (y + o.ny * z)) = v >= 0.05 ? v : 0.0;
        }
  }
  gemm<double>(Op::None, Op::None, 1.0, out.timecourses.view(), out.maps.view(), 0.0, out.data.view());
  if (std::isfinite(o.snr_db)) {
    double power = 0;
    for (index e = 0; e < out.data.size(); ++e) power += out.data.data()[e] * out.data.data()[e];
    power /= static_cast<double>(out.data.size());
    std::normal_distribution<double> noise(0.0, std::sqrt(power / std::pow(10.0, o.snr_db / 10)));
    for (index e = 0; e < out.data.size(); ++e) out.data.data()[e] += noise(rng);
  }
  return out;
}

template struct SparseCodes<float>;
template struct SparseCodes<double>;
template SparseCodes<float> batch_omp<float>(ConstMatrixView<float>, ConstMatrixView<float>, const OmpOptions&);
template SparseCodes<double> batch_omp<double>(ConstMatrixView<double>, ConstMatrixView<double>, const OmpOptions&);
template KsvdResult<float> ksvd<float>(ConstMatrixView<float>, const KsvdOptions&, const Matrix<float>*);
template KsvdResult<double> ksvd<double>(ConstMatrixView<double>, const KsvdOptions&, const Matrix<double>*);
template SparseCodes<float> batch_omp_gram<float>(ConstMatrixView<float>, ConstMatrixView<float>,
                                                  const std::vector<double>&, const OmpOptions&);
template SparseCodes<double> batch_omp_gram<double>(ConstMatrixView<double>, ConstMatrixView<double>,
                                                    const std::vector<double>&, const OmpOptions&);

}  // namespace linv::fmri

namespace linv::dist {

template <Real T>
fmri::KsvdResult<T> ksvd(const Grid& grid, ConstMatrixView<T> X, const fmri::KsvdOptions& options,
                         const Matrix<T>* initial) {
  const fmri::rules::ColumnShare share =
      fmri::rules::column_share(grid, X.rows(), X.cols(), X.device(), "k-SVD", "signal");
  grid.together([&] { fmri::validate(X, share.total, options, initial); });
  return fmri::fit(X, share.total, share.first, options, initial, &grid);
}

template fmri::KsvdResult<float> ksvd<float>(const Grid&, ConstMatrixView<float>, const fmri::KsvdOptions&,
                                             const Matrix<float>*);
template fmri::KsvdResult<double> ksvd<double>(const Grid&, ConstMatrixView<double>, const fmri::KsvdOptions&,
                                               const Matrix<double>*);

}  // namespace linv::dist
