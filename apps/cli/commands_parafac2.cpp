// linv parafac2 and linv bench parafac2: PARAFAC2 of fMRI slabs (time points x voxels, one slab per slice).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <variant>

#include "common.hpp"

namespace linv::cli {
namespace {

struct Parafac2Args {
  std::vector<std::string> inputs;
  std::string out, start = "svd", initial;
  std::string layout = "linv";  // linv: slabs I x J_k (shared rows); tensorly: J_k x I, TensorLy's slices
  index rank = 0;
  int iterations = 1000;
  double tolerance = 1e-7;
  std::uint64_t seed = 0;
  bool distributed = false;  // one process of an MPI job, holding some of the slabs
  std::string devices;       // "cuda:0,cuda:1": a job of one process per device, started by linv
  CommonOptions common;
};

// With LINV_PROFILE set, each process says on stderr when each phase of the command ended, counted from
// the command's start: where an end-to-end run's time goes.
class Phases {
 public:
  void mark(const char* phase, const dist::Grid* grid) const {
    if (!enabled_) return;
    std::fprintf(stderr, "parafac2 [process %d] %s done at %.3f s\n", grid ? grid->rank() : 0, phase,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  bool enabled_ = std::getenv("LINV_PROFILE") != nullptr;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The slabs in element type T: a stack read from one file (kept whole, as read) or one matrix per file.
template <Real T>
struct Slabs {
  io::MatrixStack<T> stack;
  std::vector<Matrix<T>> matrices;
  std::vector<ConstMatrixView<T>> views;
  index first = 0;  // the first slab's place among all, for a process of a distributed job
};

// One process's run: all slabs, or with a grid this process's share of them.
template <Real T>
void parafac2_typed(const Parafac2Args& a, Slabs<T>& x, Compute c, const dist::Grid* grid, const Phases& phases) {
  std::vector<ConstMatrixView<T>> host;
  if (x.matrices.empty())
    for (index k = 0; k < x.stack.count; ++k) host.push_back(x.stack[k]);
  else
    for (const Matrix<T>& m : x.matrices) host.push_back(m.view());
  const index I = host[0].rows();
  index voxels = 0;
  for (const ConstMatrixView<T>& v : host) voxels += v.cols();
  const Device device = grid ? grid->device() : device_for(a.common, Operation::Parafac2, voxels);
  if (grid) voxels = static_cast<index>(grid->sum(static_cast<double>(voxels)));

  // The factors' files: linv's A (I x F), H and C (K x F); under TensorLy's layout its names for the same
  // factors, slice k = P_k B diag(A[k]) C^T: A the per-slab weights (linv's C), B the blueprint (H), C
  // the shared mode (linv's A).
  const bool tensorly = a.layout == "tensorly";
  const char* const a_file = tensorly ? "C.npy" : "A.npy";
  const char* const h_file = tensorly ? "B.npy" : "H.npy";
  const char* const c_file = tensorly ? "A.npy" : "C.npy";
  std::optional<Matrix<T>> A0, H0, C0;
  fmri::Parafac2Init<T> init;
  if (!a.initial.empty()) {
    auto load = [&](const char* name) {
      return as<T>(io::read_matrix((std::filesystem::path(a.initial) / name).string()), c);
    };
    A0 = load(a_file), H0 = load(h_file), C0 = load(c_file);
    init = {A0->view(), H0->view(), C0->view()};
  }

  std::vector<Matrix<T>> on_device;  // the slabs' copies on a GPU
  const auto upload = [&] {
    if (device.is_cpu()) {
      x.views = host;
      return;
    }
    for (const ConstMatrixView<T>& v : host) {  // straight from the host slabs: no host copy first
      on_device.push_back(Matrix<T>::uninitialized(v.rows(), v.cols(), device));
      copy<T>(v, on_device.back().view());
      x.views.push_back(on_device.back().view());
    }
  };
  grid ? grid->together(upload) : upload();
  phases.mark("upload", grid);
  const bool root = !grid || grid->is_root();
  const fmri::Parafac2Options options{
      .rank = a.rank,
      .max_iterations = a.iterations,
      .tolerance = a.tolerance,
      .start = a.start == "random" ? fmri::Parafac2Start::Random : fmri::Parafac2Start::Svd,
      .seed = a.seed,
      .progress = root ? progress_line(a.common, "parafac2", "loss", a.iterations) : nullptr};
  const fmri::Parafac2Init<T>* start = a.initial.empty() ? nullptr : &init;
  const fmri::Parafac2Result<T> r = grid ? dist::parafac2<T>(*grid, x.views, x.first, options, start)
                                         : fmri::parafac2<T>(x.views, options, start);
  const index K = r.C.rows();
  phases.mark("fit", grid);

  // the root writes the factors and the report, each process its own P_k
  const std::filesystem::path dir(a.out);
  auto file = [&](const std::string& name) { return (dir / name).string(); };
  std::vector<double> columns(static_cast<std::size_t>(K), 0);  // every slab's, for the report
  const auto write = [&] {
    if (root) {
      io::make_directory(dir.string());
      io::write_matrix<T>(file(a_file), r.A.view());
      io::write_matrix<T>(file(h_file), r.H.view());
      io::write_matrix<T>(file(c_file), r.C.view());
    }
    if (grid) grid->barrier();  // the directory exists
    for (std::size_t k = 0; k < r.P.size(); ++k) {
      const index global = x.first + static_cast<index>(k);
      io::write_matrix<T>(file(fmt::format("P_{}.npy", global)), r.P[k].to(Device::cpu()).view());
      columns[static_cast<std::size_t>(global)] = static_cast<double>(x.views[k].cols());
    }
  };
  grid ? grid->together(write) : write();
  phases.mark("write", grid);
  if (grid) grid->sum(columns.data(), columns.size());
  const std::vector<long long> column_counts(columns.begin(), columns.end());
  const bool one_shape = std::all_of(column_counts.begin(), column_counts.end(),
                                     [&](long long n) { return n == column_counts.front(); });
  if (!root) return;
  nlohmann::json report = report_json("parafac2", r.report, {}, a.out, I, voxels);
  report.update({{"inputs", a.inputs}, {"rows", I}, {"slabs", K}, {"columns", column_counts}, {"rank", a.rank},
                 {"init", a.initial.empty() ? a.start : "given: " + a.initial}, {"seed", a.seed},
                 {"tolerance", a.tolerance}, {"max_iterations", a.iterations}, {"loss", r.loss},
                 {"loss_history", r.loss_history}, {"norm_squared", r.norm_squared},
                 {"variance_explained", r.variance_explained}, {"layout", a.layout},
                 {"factors", {{"shared", a_file}, {"blueprint", h_file}, {"weights", c_file}}}});
  if (grid) report["distributed"] = {{"processes", grid->size()}, {"job", grid->describe()}};
  io::write_text(file("report.json"), report.dump(2) + "\n");
  write_report(a.common, report);
  if (!a.common.quiet)
    std::printf("parafac2: %lld slabs of %lld rows, rank %lld, %s on %s | %.4f %% of the variance explained, loss "
                "%.6g, %d iterations (%s) | %.3f s -> %s\n",
                static_cast<long long>(K), static_cast<long long>(I), static_cast<long long>(a.rank), type_name<T>(),
                grid ? fmt::format("{} processes on {}", grid->size(), device.is_cuda() ? "GPUs" : "CPUs").c_str()
                     : device.name().c_str(),
                100 * r.variance_explained, r.loss, r.report.iterations, std::string(to_string(r.report.stop)).c_str(),
                r.report.seconds, a.out.c_str());
  // Slabs of one shape may be meant the other way round (TensorLy's slices vary in their rows): a poor fit
  // says so, since the two layouts fit different models of the same numbers.
  if (!a.common.quiet && r.variance_explained < 0.9 && one_shape)
    std::fprintf(stderr,
                 "parafac2: hint: %.1f %% of the variance explained. PARAFAC2 shares the %s of the slabs; if what "
                 "is shared is their %s (as in TensorLy's slices, J_k x I), run again with --layout %s\n",
                 100 * r.variance_explained, tensorly ? "columns" : "rows", tensorly ? "rows" : "columns",
                 tensorly ? "linv" : "tensorly");
}

template <Real T>
void run_typed(const Parafac2Args& a, std::variant<io::AnyStack, std::vector<io::AnyMatrix>>&& data, Compute c,
               index first, const dist::Grid* grid, const Phases& phases) {
  Slabs<T> x;
  x.first = first;
  if (auto* stack = std::get_if<io::AnyStack>(&data)) {
    x.stack = as<T>(std::move(*stack), c);
  } else {
    for (io::AnyMatrix& m : std::get<std::vector<io::AnyMatrix>>(data)) x.matrices.push_back(as<T>(std::move(m), c));
  }
  if (a.layout == "tensorly") {  // TensorLy's slices are J_k x I: fit their transposes
    if (x.matrices.empty()) {
      io::MatrixStack<T> t{x.stack.count, x.stack.cols, x.stack.rows, std::vector<T>(x.stack.data.size())};
      for (index k = 0; k < t.count; ++k)
        for (index j = 0; j < t.cols; ++j)
          for (index i = 0; i < t.rows; ++i) t[k](i, j) = x.stack[k](j, i);
      x.stack = std::move(t);
    } else {
      for (Matrix<T>& m : x.matrices) {
        Matrix<T> t = Matrix<T>::uninitialized(m.cols(), m.rows());
        for (index j = 0; j < t.cols(); ++j)
          for (index i = 0; i < t.rows(); ++i) t(i, j) = m(j, i);
        m = std::move(t);
      }
    }
  }
  phases.mark("convert", grid);
  parafac2_typed<T>(a, x, c, grid, phases);
}

void run_parafac2(const Parafac2Args& a) {
  const Phases phases;
  const std::optional<dist::Grid> grid = optional_job({a.distributed, a.devices, "", a.common.device}, "parafac2");
  const int part = grid ? grid->rank() : 0, parts = grid ? grid->size() : 1;
  // each process reads its own slabs: its part of one stack, or its part of the files
  std::variant<io::AnyStack, std::vector<io::AnyMatrix>> data;
  std::vector<io::DType> types;
  index first = 0, mine = 0;  // this process's first slab and its number of slabs
  const auto read = [&] {
    if (a.inputs.size() == 1) {
      io::StackPart s = io::read_stack_part(a.inputs[0], part, parts);
      first = s.first;
      mine = std::visit([](const auto& stack) { return stack.count; }, s.stack);
      types.push_back(dtype_of(s.stack));
      data = std::move(s.stack);
    } else {
      const auto files = static_cast<index>(a.inputs.size());
      first = files * part / parts;
      std::vector<io::AnyMatrix> matrices;
      for (index k = first; k < files * (part + 1) / parts; ++k) {
        matrices.push_back(io::read_matrix(a.inputs[static_cast<std::size_t>(k)]));
        types.push_back(dtype_of(matrices.back()));
      }
      mine = static_cast<index>(matrices.size());
      data = std::move(matrices);
    }
  };
  const auto read_share = [&] {
    const auto total = static_cast<index>(a.inputs.size());
    if (total > 1 && total < parts)
      throw InvalidArgument(fmt::format("parafac2: {} slabs over {} processes: every process needs at least one, so "
                                        "use at most {} processes",
                                        total, parts, total));
    read();
    if (mine == 0)
      throw InvalidArgument(fmt::format("parafac2: the stack in {} has fewer slabs than the job's {} processes; every "
                                        "process needs at least one",
                                        a.inputs[0], parts));
  };
  grid ? grid->together(read_share) : read();
  phases.mark("read", grid ? &*grid : nullptr);
  Compute c = compute_type(a.common.precision, types);
  refuse_mixed(c, "parafac2");
  // one element type for the job: float64 when any process read float64
  if (grid && grid->max(c == Compute::f64 ? 1.0 : 0.0) > 0) c = Compute::f64;
  with_type(c, [&]<Real T>() { run_typed<T>(a, std::move(data), c, first, grid ? &*grid : nullptr, phases); });
}

struct Parafac2BenchArgs {
  BenchOptions bench{"cpu", 3, ""};
  std::string sizes = "200x7200x3";  // I x J x K: time points x voxels per slab x slabs
  index rank = 8;
  int iterations = 100;
  std::string precision = "double";
  bool distributed = false;
  std::string devices;
};

// Times linv::fmri::parafac2 (the Gram matrices, the SVD start and the final P_k included) for exactly
// --iters iterations (tolerance 0) on random data uniform in [-1, 1], slab k made where it is used with seed
// I K + k, so that a job of several processes fits the same slabs as one process. The call returns when
// the result is complete. With a grid, each process makes and fits its share of the slabs (dist::parafac2)
// and process 0 reports.
template <Real T>
void bench_parafac2_typed(const Parafac2BenchArgs& a, Device device, const dist::Grid* grid) {
  const bool root = !grid || grid->is_root();
  nlohmann::json out = bench_output(device);
  for (const std::string& size : split(a.sizes)) {
    const std::vector<index> dims = parse_dims(size, "IxJxK");
    const index I = dims[0], J = dims[1], K = dims[2];
    const int part = grid ? grid->rank() : 0, parts = grid ? grid->size() : 1;
    const index first = K * part / parts, end = K * (part + 1) / parts;
    std::vector<Matrix<T>> data;
    std::vector<ConstMatrixView<T>> slabs;
    const auto make = [&] {
      for (index k = first; k < end; ++k) {
        data.push_back(random_uniform<T>(I, J, static_cast<std::uint64_t>(I * K + k), T(-1), T(1), device));
        slabs.push_back(data.back().view());
      }
    };
    grid ? grid->together(make) : make();
    const fmri::Parafac2Options options{.rank = a.rank, .max_iterations = a.iterations, .tolerance = 0};
    fmri::Parafac2Result<T> r;
    const Timing t = time_repeats(a.bench.repeats, r, [&] {
      return grid ? dist::parafac2<T>(*grid, slabs, first, options) : fmri::parafac2<T>(slabs, options);
    });
    nlohmann::json row = {{"rows", I}, {"columns", J}, {"slabs", K}, {"rank", a.rank}, {"precision", type_name<T>()},
                          {"iterations", r.report.iterations}, {"loss", r.loss}, {"norm_squared", r.norm_squared},
                          {"processes", parts}, {"seconds", t.median}, {"seconds_all", t.all}};
    out["rows"].push_back(row);
    if (root)
      std::printf("parafac2 %s%s %s %lldx%lldx%lld F=%lld %d iterations %9.4f s (%.4f %% of the variance explained)\n",
                  device.name().c_str(), grid ? fmt::format(" x {} processes", parts).c_str() : "", type_name<T>(),
                  static_cast<long long>(I), static_cast<long long>(J), static_cast<long long>(K),
                  static_cast<long long>(a.rank), r.report.iterations, t.median, 100 * r.variance_explained);
  }
  if (root) write_bench(a.bench, out);
}

const Command kCommands[] = {
    {"", "parafac2",
     "PARAFAC2 by alternating least squares: slabs X_k (I x J_k) ~ A diag(c_k) (P_k H)^T with P_k orthonormal "
     "(Kiers, ten Berge and Bro 1999). Writes OUT/A.npy (I x F), H.npy (F x F), C.npy (K x F, row k = c_k), "
     "P_<k>.npy (J_k x F, k from 0 in input order) and report.json (loss history, variance explained). A and C have "
     "unit-norm columns with more positive than negative entries, the scale and signs in H; components are ordered "
     "largest first",
     [](CLI::App& cmd) {
       auto a = std::make_shared<Parafac2Args>();
       input(cmd.add_option("X", a->inputs,
                      "One 3-D array of all slabs: a .npy of shape K x I x J (slab k is X[k]; for a time x voxel x "
                      "slice array T, save np.moveaxis(T, 2, 0)) or a .mat of I x J x K (X(:,:,k)); or one I x J_k "
                      "matrix per slab, in order (J_k may differ)"))
           ->required();
       cmd.add_option("-F,--rank", a->rank, "F, the number of components (at most I and every J_k)")
           ->required()
           ->check(whole(1));
       output(cmd.add_option("-o,--output,--out", a->out, "Directory for the results (created if missing)"),
              io::OutputKind::directory)->required();
       cmd.add_option("--max-iter,--iters", a->iterations, "Iterations at most")
           ->capture_default_str()
           ->check(whole(0));
       cmd.add_option("--tol", a->tolerance,
                      "Stop once the loss ||X - model||^2 changes by at most this fraction of itself (0: run all "
                      "--iters)")
           ->capture_default_str()
           ->check(at_least(0));
       CLI::Option* start = cmd.add_option("--init", a->start,
                                           "Starting factors: svd (A from the leading left singular vectors of "
                                           "[X_1 ... X_K], C = 1 + N(0, 0.01) noise, H = I) or random (A and C uniform "
                                           "in [0, 1), H = I)")
                                ->capture_default_str()
                                ->check(CLI::IsMember({"svd", "random"}));
       input(cmd.add_option("--initial", a->initial,
                      "A directory with A.npy, H.npy and C.npy (under --layout tensorly: C.npy, B.npy and A.npy) to "
                      "start from instead"))
           ->excludes(start);
       cmd.add_option("--layout", a->layout,
                      "linv: each slab is I x J_k, the I rows shared (time points x voxels), the results A (I x F), "
                      "H and C (K x F); tensorly: each slab is J_k x I as TensorLy's parafac2 takes its slices, the "
                      "results under TensorLy's names, A (K x F, per slab), B (the blueprint) and C (I x F, "
                      "shared), with slab k = P_k B diag(A[k]) C^T")
           ->capture_default_str()
           ->check(CLI::IsMember({"linv", "tensorly"}));
       cmd.add_option("--seed", a->seed, "Seed of the random start, or of the noise on C of the SVD start")
           ->capture_default_str();
       cmd.add_flag("--distributed", a->distributed,
                    "Run as one process of an MPI job (mpirun -np N linv parafac2 ... --distributed [--device cuda]): "
                    "the slabs are dealt out in consecutive parts, each process reads only its own (its part of one "
                    ".npy stack, or its part of the files) and writes its own P_k; each iteration's sums are added "
                    "over the processes (NCCL between GPUs); process 0 writes A, H, C and the report");
       cmd.add_option("--devices", a->devices,
                      "Deal the slabs out over these devices of this machine, one process each, started by linv (no "
                      "MPI needed): e.g. cuda:0,cuda:1");
       add_common_options(cmd, a->common);
       cmd.callback([a] { run_parafac2(*a); });
     }},
    {"bench", "parafac2",
     "Time PARAFAC2 on random data for a fixed number of iterations (median of repeats after a warm-up)",
     [](CLI::App& cmd) {
       auto b = std::make_shared<Parafac2BenchArgs>();
       add_bench_options(cmd, b->bench);
       cmd.add_option("--sizes", b->sizes, "Comma-separated IxJxK (rows x columns per slab x slabs)")
           ->capture_default_str();
       cmd.add_option("--rank", b->rank, "F")->capture_default_str()->check(whole(1));
       cmd.add_option("--iters", b->iterations, "Iterations (all of them are run)")
           ->capture_default_str()
           ->check(whole(0));
       cmd.add_option("--precision", b->precision, "single or double")
           ->capture_default_str()
           ->check(CLI::IsMember({"single", "double"}));
       cmd.add_flag("--distributed", b->distributed,
                    "Run as one process of an MPI job (mpirun -np N linv bench parafac2 --distributed): the slabs "
                    "dealt out over the processes, each on --device (cpu or cuda)");
       cmd.add_option("--devices", b->devices,
                      "Deal the slabs out over these devices of this machine, one process each, started by linv: "
                      "e.g. cuda:0,cuda:1");
       cmd.callback([b] {
         const std::optional<dist::Grid> grid =
             optional_job({b->distributed, b->devices, "", b->distributed ? b->bench.device : "auto"}, "bench parafac2");
         const Device device = grid ? grid->device() : Device::parse(b->bench.device);
         with_type_named(b->precision,
                         [&]<Real T>() { bench_parafac2_typed<T>(*b, device, grid ? &*grid : nullptr); });
       });
     }},
};

}  // namespace

std::span<const Command> parafac2_commands() { return kCommands; }

}  // namespace linv::cli
