// linv omp: Batch-OMP sparse coding of fMRI signals (or any signals) over a dictionary.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "common.hpp"

namespace linv::cli {
namespace {

struct OmpArgs {
  std::string x, d, codes;
  index sparsity = 0;
  double tolerance = 0;
  CommonOptions common;
};

template <Real T>
void omp_typed(const OmpArgs& a, const Matrix<T>& X, const Matrix<T>& D) {
  const auto start = std::chrono::steady_clock::now();
  const fmri::SparseCodes<T> codes = fmri::batch_omp<T>(D.view(), X.view(), {.sparsity = a.sparsity, .tolerance = a.tolerance});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  io::write_matrix<T>(a.codes, codes.to_dense().view());  // .mtx: coordinate form, the codes being sparse
  double used = 0;
  for (index c : codes.count) used += static_cast<double>(c);
  const double mean = codes.signals > 0 ? used / static_cast<double>(codes.signals) : 0.0;
  write_report(a.common, {{"command", "omp"},
                          {"inputs", {{"X", a.x}, {"D", a.d}}},
                          {"output", a.codes},
                          {"precision", type_name<T>()},
                          {"sparsity", a.sparsity},
                          {"tolerance", a.tolerance},
                          {"mean_atoms_per_signal", mean},
                          {"seconds", seconds},
                          {"linv_version", build_info().version}});
  if (!a.common.quiet)
    std::printf("omp: %lld signals over %lld atoms, %s | at most %lld atoms each, %.2f on average | %.4f s -> %s\n",
                static_cast<long long>(codes.signals), static_cast<long long>(codes.atoms), type_name<T>(),
                static_cast<long long>(a.sparsity), mean, seconds, a.codes.c_str());
}

void run_omp(const OmpArgs& a) {
  if (a.common.device != "auto" && a.common.device != "cpu")
    throw InvalidArgument("omp runs on the CPU only in this version: use --device cpu (or auto)");
  io::AnyMatrix X = io::read_matrix(a.x), D = io::read_matrix(a.d);
  const Compute c = compute_type(a.common.precision, {dtype_of(X), dtype_of(D)});
  if (c == Compute::mixed) throw InvalidArgument("omp has no mixed-precision variant: use --precision single or double");
  if (c == Compute::f32)
    omp_typed<float>(a, as<float>(std::move(X), c), as<float>(std::move(D), c));
  else
    omp_typed<double>(a, as<double>(std::move(X), c), as<double>(std::move(D), c));
}

}  // namespace

void register_fmri_commands(CLI::App& app) {
  auto a = std::make_shared<OmpArgs>();
  CLI::App* cmd = app.add_subcommand("omp", "Batch-OMP: sparse codes G (K x N, at most T0 nonzeros per column) with X ~ D G");
  cmd->add_option("X", a->x, "Signals, one per column (T x N: time points x voxels)")->required();
  cmd->add_option("D", a->d, "Dictionary, one atom per column (T x K)")->required();
  cmd->add_option("--sparsity", a->sparsity, "T0: atoms per signal at most")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--tol", a->tolerance, "Also stop a signal once its squared residual norm is at most this (0: never)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--codes", a->codes, "Where to write G: dense .npy, or sparse Matrix Market when it ends in .mtx")
      ->required();
  add_common_options(*cmd, a->common);
  cmd->callback([a] { run_omp(*a); });
}

}  // namespace linv::cli
