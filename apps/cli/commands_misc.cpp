// linv gen | info | demo
#include <fmt/format.h>

#include <cstdio>
#include <limits>
#include <memory>

#include "common.hpp"

namespace linv::cli {
namespace {

struct GenArgs {
  std::string kind = "random", dtype = "f64", output;
  index n = 0;
  double cond = 0;
  std::uint64_t seed = 0;
};

void run_gen(const GenArgs& a) {
  const MatrixKind kind = parse_matrix_kind(a.kind);
  const GenerateOptions options{.cond = a.cond, .seed = a.seed};
  if (a.dtype == "f32")
    io::write_matrix<float>(a.output, generate<float>(kind, a.n, options).view());
  else
    io::write_matrix<double>(a.output, generate<double>(kind, a.n, options).view());
}

void run_info() {
  const BuildInfo b = build_info();
  std::printf("linv %s\n", b.version.c_str());
  std::printf("  BLAS/LAPACK: %s\n", b.blas.c_str());
  std::printf("  CUDA backend: %s\n", b.cuda ? fmt::format("built (CUDA runtime {})", b.cuda_runtime).c_str() : "not built");
  std::printf("  MATLAB .mat files: %s\n", b.matio ? "yes (matio)" : "no (built without matio)");
  const GpuList list = cuda_devices();
  if (list.gpus.empty()) std::printf("  GPUs: none (%s)\n", list.why_none.c_str());
  for (const GpuInfo& g : list.gpus)
    std::printf("  cuda:%d  %s, compute capability %d.%d, %d SMs, %.1f GiB (%.1f GiB free)\n", g.index, g.name.c_str(),
                g.compute_major, g.compute_minor, g.multiprocessors, static_cast<double>(g.total_memory) / (1 << 30),
                static_cast<double>(g.free_memory) / (1 << 30));
}

struct DemoArgs {
  index n = 1000;
  std::uint64_t seed = 1;
  std::string dtype = "f64";
};

template <Real T>
void demo_typed(const DemoArgs& a) {
  const BuildInfo b = build_info();
  std::printf("linv demo: inverting %lldx%lld %s matrices on the CPU (%s)\n\n", static_cast<long long>(a.n),
              static_cast<long long>(a.n), type_name<T>(), b.blas.c_str());
  std::printf("%-10s %-14s %10s %16s %11s %s\n", "matrix", "method", "seconds", "scaled residual", "rcond", "iterations");
  struct Case {
    MatrixKind kind;
    Method method;
  };
  const Case cases[] = {{MatrixKind::Random, Method::Auto},        {MatrixKind::Random, Method::LU},
                        {MatrixKind::Random, Method::GaussJordan}, {MatrixKind::SPD, Method::Auto},
                        {MatrixKind::SPD, Method::Cholesky},       {MatrixKind::SPD, Method::CholeskyGETS},
                        {MatrixKind::Band, Method::GaussSeidel},   {MatrixKind::Band, Method::LU}};
  for (const Case& c : cases) {
    const Matrix<T> A = generate<T>(c.kind, a.n, {.seed = a.seed});
    const Solution<T> s = inv<T>(A.view(), {.method = c.method, .compute_residual = true});
    std::string method(to_string(c.method));
    if (c.method == Method::Auto) method = "auto: " + s.report.method;
    std::printf("%-10s %-14s %10.4f %16.3g %11.2e %s\n", std::string(to_string(c.kind)).c_str(), method.c_str(),
                s.report.seconds, s.report.scaled_residual, s.report.rcond,
                s.report.iterations > 0 ? std::to_string(s.report.iterations).c_str() : "-");
  }
  std::printf("\nscaled residual = ||A X - I||_1 / (n eps ||A||_1 ||X||_1): values of order 1-10 are as accurate\n"
              "as %s arithmetic allows. Try: linv gen --kind spd -n 2000 -o A.npy && linv inv A.npy -o X.npy\n",
              type_name<T>());
}

}  // namespace

void register_misc_commands(CLI::App& app) {
  {
    auto a = std::make_shared<GenArgs>();
    CLI::App* cmd = app.add_subcommand("gen", "Generate a test matrix of a given kind");
    cmd->add_option("--kind", a->kind,
                    "random, spd, band, hollow, sparse, identity, illcond or singular")
        ->capture_default_str();
    cmd->add_option("-n", a->n, "Size (n x n)")->required()->check(CLI::NonNegativeNumber);
    cmd->add_option("--cond", a->cond, "Condition number for spd (default 1e3) and illcond (default 1e12)");
    cmd->add_option("--seed", a->seed, "Random seed (the same seed gives the same matrix)")->capture_default_str();
    cmd->add_option("--dtype", a->dtype, "f32 or f64")->capture_default_str()->check(CLI::IsMember({"f32", "f64"}));
    cmd->add_option("-o,--output", a->output, "Where to write the matrix (.npy, .mtx, .mat[:variable])")->required();
    cmd->callback([a] { run_gen(*a); });
  }
  {
    CLI::App* cmd = app.add_subcommand("info", "Show the build (BLAS, CUDA, formats) and the GPUs linv can use");
    cmd->callback([] { run_info(); });
  }
  {
    auto a = std::make_shared<DemoArgs>();
    CLI::App* cmd = app.add_subcommand("demo", "Invert test matrices with every method and print time and accuracy");
    cmd->add_option("-n", a->n, "Matrix size")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--seed", a->seed, "Random seed")->capture_default_str();
    cmd->add_option("--dtype", a->dtype, "f32 or f64")->capture_default_str()->check(CLI::IsMember({"f32", "f64"}));
    cmd->callback([a] {
      if (a->dtype == "f32")
        demo_typed<float>(*a);
      else
        demo_typed<double>(*a);
    });
  }
}

}  // namespace linv::cli
