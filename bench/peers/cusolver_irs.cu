// A GPU peer for the mixed-precision solve benchmark: cuSOLVER's own iterative-refinement solver,
// cusolverDnIRSXgesv, called directly, and the plain float64 cuSOLVER solve (getrf + getrs) for scale.
// It links no linv code, so it measures what a user calling cuSOLVER by hand gets.
//
// Matrix and right-hand side: entries uniform in [-1, 1] (cuRAND, on the GPU; never zeros). For each n and
// each lowest precision (32F: float32 LU; TF32, 16BF, 16F: float32 storage with tensor-core updates in
// that format) IRS runs with the given refinement (classical, or classical with GMRES inside), float64
// in and out, the default tolerance (LAPACK's ||r||_inf <= sqrt(n) ||x||_inf ||A||_inf eps), fallback to
// float64 disabled so that a failure shows as a negative iteration count. Each case: one warm-up, then
// --repeats runs timed with CUDA events, median. A is restored before every run. The scaled residual
// ||b - A x||_1 / (n eps ||A||_1 ||x||_1) is computed on the GPU in float64.
//
//   cusolver_irs [--sizes 4096,16384] [--lowest 32F,TF32,16BF,16F] [--refinement classical|gmres]
//                [--repeats 5] [--json OUT.json]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

#define CHECK(call)                                                                                    \
  do {                                                                                                 \
    const auto status_ = (call);                                                                       \
    if (static_cast<int>(status_) != 0)                                                                \
      throw std::runtime_error(std::string(#call) + " failed with status " +                           \
                               std::to_string(static_cast<int>(status_)) + " at line " +              \
                               std::to_string(__LINE__));                                              \
  } while (0)

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

__global__ void affine(double* x, std::size_t count) {  // uniform (0, 1] -> [-1, 1)
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < count) x[i] = 2 * x[i] - 1;
}

// Column sums of |A| (n x n) into sums.
__global__ void column_abs_sums(const double* a, int n, double* sums) {
  const int j = blockIdx.x;
  double s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += fabs(a[static_cast<std::size_t>(j) * n + i]);
  __shared__ double part[256];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[j] = part[0];
}

struct Gpu {
  cusolverDnHandle_t solver{};
  cublasHandle_t blas{};
  cusolverDnParams_t params{};
  cudaEvent_t start{}, stop{};
  Gpu() {
    CHECK(cusolverDnCreate(&solver));
    CHECK(cublasCreate(&blas));
    CHECK(cusolverDnCreateParams(&params));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
  }
  ~Gpu() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cusolverDnDestroyParams(params);
    cublasDestroy(blas);
    cusolverDnDestroy(solver);
  }
};

// ||b - A x||_1 / (n eps ||A||_1 ||x||_1), in float64 on the GPU.
double scaled_residual(Gpu& g, const double* a, const double* b, const double* x, int n) {
  double *r = nullptr, *sums = nullptr;
  CHECK(cudaMalloc(&r, n * sizeof(double)));
  CHECK(cudaMalloc(&sums, n * sizeof(double)));
  CHECK(cudaMemcpy(r, b, n * sizeof(double), cudaMemcpyDeviceToDevice));
  const double minus_one = -1, one = 1;
  CHECK(cublasDgemv(g.blas, CUBLAS_OP_N, n, n, &minus_one, a, n, x, 1, &one, r, 1));
  column_abs_sums<<<n, 256>>>(a, n, sums);
  std::vector<double> host(n);
  CHECK(cudaMemcpy(host.data(), sums, n * sizeof(double), cudaMemcpyDeviceToHost));
  const double anorm = *std::max_element(host.begin(), host.end());
  double rnorm = 0, xnorm = 0;
  CHECK(cublasDasum(g.blas, n, r, 1, &rnorm));
  CHECK(cublasDasum(g.blas, n, x, 1, &xnorm));
  CHECK(cudaFree(r));
  CHECK(cudaFree(sums));
  return rnorm / (n * 0x1p-52 * anorm * xnorm);
}

struct Result {
  double median = NAN;
  std::vector<double> all;
  int iterations = 0;
  double residual = NAN;
};

// Times `run` (which works on a fresh copy of A made by `restore`) with CUDA events.
template <class Restore, class Run>
Result time_runs(Gpu& g, int repeats, Restore&& restore, Run&& run) {
  Result out;
  restore();
  run();  // warm-up
  for (int k = 0; k < repeats; ++k) {
    restore();
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventRecord(g.start));
    out.iterations = run();
    CHECK(cudaEventRecord(g.stop));
    CHECK(cudaEventSynchronize(g.stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, g.start, g.stop));
    out.all.push_back(ms / 1e3);
  }
  std::vector<double> sorted = out.all;
  std::sort(sorted.begin(), sorted.end());
  out.median = sorted[sorted.size() / 2];
  return out;
}

cusolverPrecType_t lowest_type(const std::string& name) {
  if (name == "64F") return CUSOLVER_R_64F;
  if (name == "32F") return CUSOLVER_R_32F;
  if (name == "TF32") return CUSOLVER_R_TF32;
  if (name == "16BF") return CUSOLVER_R_16BF;
  if (name == "16F") return CUSOLVER_R_16F;
  throw std::invalid_argument("unknown lowest precision '" + name + "' (64F, 32F, TF32, 16BF, 16F)");
}

std::string json_number(double v) { return std::isfinite(v) ? std::to_string(v) : "null"; }

std::string json_list(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + json_number(v[i]);
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) try {
  std::string sizes = "4096,16384", lowest = "32F,TF32,16BF,16F", refinement = "classical", json;
  int repeats = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return std::string(argv[++i]);
    };
    if (arg == "--sizes") sizes = value();
    else if (arg == "--lowest") lowest = value();
    else if (arg == "--refinement") refinement = value();
    else if (arg == "--repeats") repeats = std::stoi(value());
    else if (arg == "--json") json = value();
    else if (arg == "--help" || arg == "-h") {
      std::puts("cusolver_irs [--sizes 4096,16384] [--lowest 32F,TF32,16BF,16F] [--refinement classical|gmres] "
                "[--repeats 5] [--json OUT.json]");
      return 0;
    } else throw std::invalid_argument("unknown argument " + arg);
  }
  if (refinement != "classical" && refinement != "gmres")
    throw std::invalid_argument("--refinement must be classical or gmres");
  Gpu g;
  curandGenerator_t rng;
  CHECK(curandCreateGenerator(&rng, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  std::string rows;
  for (const std::string& size : split(sizes)) {
    const int n = std::stoi(size);
    const std::size_t nn = static_cast<std::size_t>(n) * n;
    double *a0 = nullptr, *a = nullptr, *b = nullptr, *x = nullptr;
    CHECK(cudaMalloc(&a0, nn * sizeof(double)));
    CHECK(cudaMalloc(&a, nn * sizeof(double)));
    CHECK(cudaMalloc(&b, n * sizeof(double)));
    CHECK(cudaMalloc(&x, n * sizeof(double)));
    CHECK(curandSetPseudoRandomGeneratorSeed(rng, static_cast<unsigned long long>(n)));
    CHECK(curandGenerateUniformDouble(rng, a0, nn));
    CHECK(curandGenerateUniformDouble(rng, b, n));
    affine<<<static_cast<unsigned>((nn + 255) / 256), 256>>>(a0, nn);
    affine<<<static_cast<unsigned>((n + 255) / 256), 256>>>(b, n);
    auto restore = [&] { CHECK(cudaMemcpy(a, a0, nn * sizeof(double), cudaMemcpyDeviceToDevice)); };
    int* info = nullptr;
    CHECK(cudaMalloc(&info, sizeof(int)));

    // float64 cuSOLVER: getrf + getrs.
    {
      std::int64_t* pivots = nullptr;
      CHECK(cudaMalloc(&pivots, n * sizeof(std::int64_t)));
      std::size_t dev_bytes = 0, host_bytes = 0;
      CHECK(cusolverDnXgetrf_bufferSize(g.solver, g.params, n, n, CUDA_R_64F, a, n, CUDA_R_64F, &dev_bytes,
                                        &host_bytes));
      void* dev_work = nullptr;
      CHECK(cudaMalloc(&dev_work, std::max<std::size_t>(dev_bytes, 1)));
      std::vector<char> host_work(std::max<std::size_t>(host_bytes, 1));
      const Result r = time_runs(g, repeats, restore, [&] {
        CHECK(cudaMemcpy(x, b, n * sizeof(double), cudaMemcpyDeviceToDevice));
        CHECK(cusolverDnXgetrf(g.solver, g.params, n, n, CUDA_R_64F, a, n, pivots, CUDA_R_64F, dev_work, dev_bytes,
                               host_work.data(), host_bytes, info));
        CHECK(cusolverDnXgetrs(g.solver, g.params, CUBLAS_OP_N, n, 1, CUDA_R_64F, a, n, pivots, CUDA_R_64F, x, n,
                               info));
        return 0;
      });
      const double res = scaled_residual(g, a0, b, x, n);
      std::printf("n=%-6d cusolver getrf+getrs float64        %9.4f s  scaled residual %.3g\n", n, r.median, res);
      std::fflush(stdout);
      rows += (rows.empty() ? "" : ",\n") + std::string("    {\"n\": ") + std::to_string(n) +
              ", \"solver\": \"cusolverDnXgetrf+getrs\", \"lowest\": \"64F\", \"seconds\": " +
              std::to_string(r.median) + ", \"seconds_all\": " + json_list(r.all) +
              ", \"iterations\": 0, \"scaled_residual\": " + json_number(res) + "}";
      // the solve phase alone, with the factors just made (what each refinement step or condition
      // estimate step costs)
      const Result s = time_runs(g, repeats, [] {}, [&] {
        CHECK(cudaMemcpy(x, b, n * sizeof(double), cudaMemcpyDeviceToDevice));
        CHECK(cusolverDnXgetrs(g.solver, g.params, CUBLAS_OP_N, n, 1, CUDA_R_64F, a, n, pivots, CUDA_R_64F, x, n,
                               info));
        return 0;
      });
      std::printf("n=%-6d cusolver getrs float64 alone         %9.4f s\n", n, s.median);
      rows += ",\n    {\"n\": " + std::to_string(n) +
              ", \"solver\": \"cusolverDnXgetrs\", \"lowest\": \"64F-getrs\", \"seconds\": " +
              std::to_string(s.median) + ", \"seconds_all\": " + json_list(s.all) +
              ", \"iterations\": 0, \"scaled_residual\": null}";
      CHECK(cudaFree(dev_work));
      CHECK(cudaFree(pivots));
    }

    for (const std::string& low : split(lowest)) {
      cusolverDnIRSParams_t params;
      cusolverDnIRSInfos_t infos;
      CHECK(cusolverDnIRSParamsCreate(&params));
      CHECK(cusolverDnIRSParamsSetSolverPrecisions(params, CUSOLVER_R_64F, lowest_type(low)));
      CHECK(cusolverDnIRSParamsSetRefinementSolver(
          params, refinement == "gmres" ? CUSOLVER_IRS_REFINE_CLASSICAL_GMRES : CUSOLVER_IRS_REFINE_CLASSICAL));
      CHECK(cusolverDnIRSParamsSetMaxIters(params, 50));
      CHECK(cusolverDnIRSParamsDisableFallback(params));
      CHECK(cusolverDnIRSInfosCreate(&infos));
      std::size_t work_bytes = 0;
      CHECK(cusolverDnIRSXgesv_bufferSize(g.solver, params, n, 1, &work_bytes));
      void* work = nullptr;
      CHECK(cudaMalloc(&work, std::max<std::size_t>(work_bytes, 1)));
      const Result r = time_runs(g, repeats, restore, [&] {
        int iterations = 0;
        CHECK(cusolverDnIRSXgesv(g.solver, params, infos, n, 1, a, n, b, n, x, n, work, work_bytes, &iterations,
                                 info));
        return iterations;
      });
      int h_info = 0;
      CHECK(cudaMemcpy(&h_info, info, sizeof(int), cudaMemcpyDeviceToHost));
      const double res = scaled_residual(g, a0, b, x, n);
      std::printf("n=%-6d cusolverDnIRSXgesv lowest %-4s %-9s %9.4f s  iterations %d  info %d  scaled residual %.3g\n",
                  n, low.c_str(), refinement.c_str(), r.median, r.iterations, h_info, res);
      std::fflush(stdout);
      rows += ",\n    {\"n\": " + std::to_string(n) + ", \"solver\": \"cusolverDnIRSXgesv\", \"lowest\": \"" + low +
              "\", \"refinement\": \"" + refinement + "\", \"seconds\": " + std::to_string(r.median) +
              ", \"seconds_all\": " + json_list(r.all) + ", \"iterations\": " + std::to_string(r.iterations) +
              ", \"info\": " + std::to_string(h_info) + ", \"scaled_residual\": " + json_number(res) + "}";
      CHECK(cudaFree(work));
      CHECK(cusolverDnIRSInfosDestroy(infos));
      CHECK(cusolverDnIRSParamsDestroy(params));
    }
    CHECK(cudaFree(info));
    CHECK(cudaFree(x));
    CHECK(cudaFree(b));
    CHECK(cudaFree(a));
    CHECK(cudaFree(a0));
  }
  CHECK(curandDestroyGenerator(rng));
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\n  \"rows\": [\n" << rows << "\n  ]\n}\n";
    if (!out) throw std::runtime_error("cannot write " + json);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "cusolver_irs: %s\n", e.what());
  return 1;
}
