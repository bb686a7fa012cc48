// _linv: fMRI factorisations (linv::fmri: Batch-OMP, k-SVD, ADL, PARAFAC2). Each returns a tuple of NumPy
// arrays and a report dict; linv/fmri.py makes them small result classes.
#include "linv/fmri.hpp"

#include <nanobind/stl/optional.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "linv/adl.hpp"
#include "linv/parafac2.hpp"

namespace linv_py {
namespace {

using linv::index;
namespace fm = linv::fmri;

// A column-major copy of an optional array, or an empty matrix.
template <class T>
linv::Matrix<T> optional_matrix(const std::optional<Input<T>>& a) {
  if (!a) return {};
  linv::Matrix<T> copy;
  const linv::ConstMatrixView<T> v = column_major(*a, copy);
  return linv::Matrix<T>::copy_of(v);
}

fm::OmpOptions omp_options(index sparsity, double tolerance, const std::string& kernel) {
  fm::OmpOptions o;
  o.sparsity = sparsity;
  o.tolerance = tolerance;
  if (kernel == "auto") o.gpu_kernel = fm::OmpGpuKernel::Auto;
  else if (kernel == "thread") o.gpu_kernel = fm::OmpGpuKernel::Thread;
  else if (kernel == "warp") o.gpu_kernel = fm::OmpGpuKernel::Warp;
  else throw linv::InvalidArgument("kernel is 'auto', 'thread' or 'warp', not '" + kernel + "'");
  return o;
}

// Batch-OMP's dense K x N codes, the atoms each signal used and the wall time of f (which runs batch_omp).
template <class T>
struct OmpRun {
  linv::Matrix<T> codes;
  std::vector<index> count;
  double seconds = 0;
};

template <class T, class F>
OmpRun<T> timed_omp(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  const fm::SparseCodes<T> c = f();
  OmpRun<T> r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.codes = c.to_dense();
  r.count = c.count;
  return r;
}

// linv::fmri::batch_omp returns no Report, so this one says what ran, where, and the wall time of the call.
// out: where the codes go (Host or Gpu).
template <class T, class Out>
nb::tuple omp_result(const Out& out, OmpRun<T>&& run, linv::Device dev, const char* timed) {
  linv::Report r;
  r.operation = linv::Operation::SparseCoding;
  r.method = linv::Method::BatchOMP;
  r.device = dev;
  r.precision = linv::type_name<T>();
  r.seconds = run.seconds;
  r.notes.push_back(timed);
  return nb::make_tuple(out.template array<T>(std::move(run.codes)), vector_to_numpy<index>(run.count), report_dict(r));
}

template <class T>
nb::tuple omp(const Input<T>& d, const Input<T>& x, index sparsity, double tolerance, const std::string& kernel,
              const std::string& device) {
  linv::Matrix<T> d_copy, x_copy;
  const linv::ConstMatrixView<T> D = column_major(d, d_copy), X = column_major(x, x_copy);
  const fm::OmpOptions o = omp_options(sparsity, tolerance, kernel);
  const linv::Device dev = linv::choose_device(device, linv::Operation::SparseCoding, X.cols());
  OmpRun<T> run;
  {
    nb::gil_scoped_release released;
    linv::Matrix<T> gd, gx;
    run = timed_omp<T>([&] { return fm::batch_omp<T>(placed(D, dev, gd), placed(X, dev, gx), o); });
  }
  return omp_result<T>(Host{}, std::move(run), dev, "seconds: the whole call, transfers included");
}

// GPU arrays (linv_py::Gpu): d and x column-major on one GPU; the codes come back there.
template <class T>
nb::tuple omp_gpu(const GpuInput<T>& d, const GpuInput<T>& x, index sparsity, double tolerance,
                  const std::string& kernel, const std::string& framework) {
  const Gpu gpu(x, framework);
  const linv::ConstMatrixView<T> D = gpu.view<T>(d, "dictionary"), X = gpu.view<T>(x, "x");
  const fm::OmpOptions o = omp_options(sparsity, tolerance, kernel);
  OmpRun<T> run = gpu.run([&] { return timed_omp<T>([&] { return fm::batch_omp<T>(D, X, o); }); });
  return omp_result<T>(gpu, std::move(run), gpu.device(),
                       "seconds: the whole call, the codes' copy to the host included");
}

fm::KsvdOptions ksvd_options(index atoms, index sparsity, int iterations, bool exact, std::uint64_t seed, bool clear,
                             double coherence, index min_use, bool keep_better_codes) {
  fm::KsvdOptions o;
  o.atoms = atoms;
  o.sparsity = sparsity;
  o.iterations = iterations;
  o.exact = exact;
  o.seed = seed;
  o.clear = clear;
  o.coherence = coherence;
  o.min_use = min_use;
  o.keep_better_codes = keep_better_codes;
  o.progress = linv_py::interruptible();
  o.checkpoint = linv_py::raise_pending_signals;  // an iteration can outlast the one-second promise
  return o;
}

// k-SVD's result (the codes made dense by the caller) placed by `out`.
template <class T, class Out>
nb::tuple ksvd_result(const Out& out, fm::KsvdResult<T>&& r, linv::Matrix<T>&& codes) {
  return nb::make_tuple(out.template array<T>(std::move(r.dictionary)), out.template array<T>(std::move(codes)),
                        vector_to_numpy<double>(r.rmse), static_cast<long long>(r.replaced), report_dict(r.report));
}

template <class T>
nb::tuple ksvd(const Input<T>& x, index atoms, index sparsity, int iterations, bool exact, std::uint64_t seed,
               bool clear, double coherence, index min_use, bool keep_better_codes,
               const std::optional<Input<T>>& initial, const std::string& device) {
  linv::Matrix<T> x_copy;
  const linv::ConstMatrixView<T> X = column_major(x, x_copy);
  const linv::Matrix<T> init = optional_matrix(initial);
  const fm::KsvdOptions o =
      ksvd_options(atoms, sparsity, iterations, exact, seed, clear, coherence, min_use, keep_better_codes);
  const linv::Device dev = linv::choose_device(device, linv::Operation::Ksvd, X.cols());
  fm::KsvdResult<T> r;
  linv::Matrix<T> codes;
  {
    nb::gil_scoped_release released;
    linv::Matrix<T> gx;
    r = fm::ksvd<T>(placed(X, dev, gx), o, initial ? &init : nullptr);
    codes = r.codes.to_dense();
  }
  return ksvd_result<T>(Host{}, std::move(r), std::move(codes));
}

template <class T>
nb::tuple ksvd_gpu(const GpuInput<T>& x, index atoms, index sparsity, int iterations, bool exact, std::uint64_t seed,
                   bool clear, double coherence, index min_use, bool keep_better_codes,
                   const std::optional<GpuInput<T>>& initial, const std::string& framework) {
  const Gpu gpu(x, framework);
  const linv::ConstMatrixView<T> X = gpu.view<T>(x, "x");
  const fm::KsvdOptions o =
      ksvd_options(atoms, sparsity, iterations, exact, seed, clear, coherence, min_use, keep_better_codes);
  linv::Matrix<T> init, codes;
  fm::KsvdResult<T> r = gpu.run([&] {
    if (initial) init = gpu.host<T>(gpu.view<T>(*initial, "initial"));  // k-SVD starts from a host copy anyway
    fm::KsvdResult<T> out = fm::ksvd<T>(X, o, initial ? &init : nullptr);
    codes = out.codes.to_dense();
    return out;
  });
  return ksvd_result<T>(gpu, std::move(r), std::move(codes));
}

fm::AdlOptions adl_options(index atoms, double lambda, int max_iterations, int coefficient_steps,
                           int dictionary_steps, double c, double c_d, double tolerance, std::uint64_t seed) {
  fm::AdlOptions o;
  o.atoms = atoms;
  o.lambda = lambda;
  o.max_iterations = max_iterations;
  o.coefficient_steps = coefficient_steps;
  o.dictionary_steps = dictionary_steps;
  o.c = c;
  o.c_d = c_d;
  o.tolerance = tolerance;
  o.seed = seed;
  o.progress = linv_py::interruptible();
  return o;
}

template <class T, class Out>
nb::tuple adl_result(const Out& out, fm::AdlResult<T>&& r) {
  return nb::make_tuple(out.template array<T>(std::move(r.dictionary)), out.template array<T>(std::move(r.codes)),
                        vector_to_numpy<double>(r.objective), vector_to_numpy<double>(r.inner_objective), r.lambda,
                        report_dict(r.report));
}

// ADL reads the task and the initial dictionary in host memory (include/linv/adl.hpp): they stay there
// wherever X goes.
template <class T>
nb::tuple adl(const Input<T>& x, index atoms, const std::optional<Input<T>>& task, double lambda, int max_iterations,
              int coefficient_steps, int dictionary_steps, double c, double c_d, double tolerance, std::uint64_t seed,
              const std::optional<Input<T>>& initial, const std::string& device) {
  linv::Matrix<T> x_copy;
  const linv::ConstMatrixView<T> X = column_major(x, x_copy);
  const linv::Matrix<T> t = optional_matrix(task), init = optional_matrix(initial);
  const fm::AdlOptions o =
      adl_options(atoms, lambda, max_iterations, coefficient_steps, dictionary_steps, c, c_d, tolerance, seed);
  const linv::Device dev = linv::choose_device(device, linv::Operation::Adl, X.cols());
  fm::AdlResult<T> r;
  {
    nb::gil_scoped_release released;
    linv::Matrix<T> gx;
    r = fm::adl<T>(placed(X, dev, gx), o, task ? t.view() : linv::ConstMatrixView<T>{}, initial ? &init : nullptr);
  }
  return adl_result<T>(Host{}, std::move(r));
}

template <class T>
nb::tuple adl_gpu(const GpuInput<T>& x, index atoms, const std::optional<GpuInput<T>>& task, double lambda,
                  int max_iterations, int coefficient_steps, int dictionary_steps, double c, double c_d,
                  double tolerance, std::uint64_t seed, const std::optional<GpuInput<T>>& initial,
                  const std::string& framework) {
  const Gpu gpu(x, framework);
  const linv::ConstMatrixView<T> X = gpu.view<T>(x, "x");
  const fm::AdlOptions o =
      adl_options(atoms, lambda, max_iterations, coefficient_steps, dictionary_steps, c, c_d, tolerance, seed);
  linv::Matrix<T> t, init;
  fm::AdlResult<T> r = gpu.run([&] {
    if (task) t = gpu.host<T>(gpu.view<T>(*task, "task"));
    if (initial) init = gpu.host<T>(gpu.view<T>(*initial, "initial"));
    return fm::adl<T>(X, o, task ? t.view() : linv::ConstMatrixView<T>{}, initial ? &init : nullptr);
  });
  return adl_result<T>(gpu, std::move(r));
}

fm::Parafac2Options parafac2_options(index rank, int max_iterations, double tolerance, const std::string& start,
                                     std::uint64_t seed) {
  fm::Parafac2Options o;
  o.rank = rank;
  o.max_iterations = max_iterations;
  o.tolerance = tolerance;
  if (start == "svd") o.start = fm::Parafac2Start::Svd;
  else if (start == "random") o.start = fm::Parafac2Start::Random;
  else throw linv::InvalidArgument("start is 'svd' or 'random', not '" + start + "'");
  o.seed = seed;
  o.progress = linv_py::interruptible();
  return o;
}

template <class T, class Out>
nb::tuple parafac2_result(const Out& out, fm::Parafac2Result<T>&& r) {
  nb::list P;
  for (linv::Matrix<T>& p : r.P) P.append(out.template array<T>(std::move(p)));
  nb::dict extra;
  extra["loss"] = r.loss;
  extra["norm_squared"] = r.norm_squared;
  extra["variance_explained"] = r.variance_explained;
  return nb::make_tuple(out.template array<T>(std::move(r.A)), out.template array<T>(std::move(r.H)),
                        out.template array<T>(std::move(r.C)), P, vector_to_numpy<double>(r.loss_history), extra,
                        report_dict(r.report));
}

// PARAFAC2 reads its starting factors in host memory (include/linv/parafac2.hpp): they stay there.
template <class T>
nb::tuple parafac2(const std::vector<Input<T>>& slabs, index rank, int max_iterations, double tolerance,
                   const std::string& start, std::uint64_t seed, const std::optional<Input<T>>& a0,
                   const std::optional<Input<T>>& h0, const std::optional<Input<T>>& c0, const std::string& device) {
  std::vector<linv::Matrix<T>> copies(slabs.size());
  std::vector<linv::ConstMatrixView<T>> views;
  index voxels = 0;
  for (std::size_t k = 0; k < slabs.size(); ++k) {
    views.push_back(column_major(slabs[k], copies[k]));
    voxels += views.back().cols();
  }
  const fm::Parafac2Options o = parafac2_options(rank, max_iterations, tolerance, start, seed);
  const linv::Matrix<T> A0 = optional_matrix(a0), H0 = optional_matrix(h0), C0 = optional_matrix(c0);
  const bool given = a0.has_value();
  const fm::Parafac2Init<T> init{A0.view(), H0.view(), C0.view()};
  const linv::Device dev = linv::choose_device(device, linv::Operation::Parafac2, voxels);
  fm::Parafac2Result<T> r;
  {
    nb::gil_scoped_release released;
    std::vector<linv::Matrix<T>> on_device;
    std::vector<linv::ConstMatrixView<T>> placed_views = views;
    if (!dev.is_cpu()) {
      placed_views.clear();
      for (const auto& v : views) {
        on_device.push_back(linv::Matrix<T>::copy_of(v).to(dev));
        placed_views.push_back(on_device.back().view());
      }
    }
    r = fm::parafac2<T>(placed_views, o, given ? &init : nullptr);
  }
  return parafac2_result<T>(Host{}, std::move(r));
}

template <class T>
nb::tuple parafac2_gpu(const std::vector<GpuInput<T>>& slabs, index rank, int max_iterations, double tolerance,
                       const std::string& start, std::uint64_t seed, const std::optional<GpuInput<T>>& a0,
                       const std::optional<GpuInput<T>>& h0, const std::optional<GpuInput<T>>& c0,
                       const std::string& framework) {
  if (slabs.empty()) throw linv::InvalidArgument("parafac2 needs at least one slab");
  const Gpu gpu(slabs[0], framework);
  std::vector<linv::ConstMatrixView<T>> views;
  for (std::size_t k = 0; k < slabs.size(); ++k)
    views.push_back(gpu.view<T>(slabs[k], ("slab " + std::to_string(k)).c_str()));
  const fm::Parafac2Options o = parafac2_options(rank, max_iterations, tolerance, start, seed);
  const bool given = a0.has_value() && h0.has_value() && c0.has_value();
  linv::Matrix<T> A0, H0, C0;
  fm::Parafac2Result<T> r = gpu.run([&] {
    if (given) {
      A0 = gpu.host<T>(gpu.view<T>(*a0, "init A"));
      H0 = gpu.host<T>(gpu.view<T>(*h0, "init H"));
      C0 = gpu.host<T>(gpu.view<T>(*c0, "init C"));
    }
    const fm::Parafac2Init<T> init{A0.view(), H0.view(), C0.view()};
    return fm::parafac2<T>(views, o, given ? &init : nullptr);
  });
  return parafac2_result<T>(gpu, std::move(r));
}

template <class T>
void bind_typed(nb::module_& m) {
  m.def("omp", &omp<T>, nb::arg("d"), nb::arg("x"), nb::arg("sparsity"), nb::arg("tolerance"), nb::arg("kernel"),
        nb::arg("device"));
  m.def("ksvd", &ksvd<T>, nb::arg("x"), nb::arg("atoms"), nb::arg("sparsity"), nb::arg("iterations"), nb::arg("exact"),
        nb::arg("seed"), nb::arg("clear"), nb::arg("coherence"), nb::arg("min_use"), nb::arg("keep_better_codes"),
        nb::arg("initial").none(), nb::arg("device"));
  m.def("adl", &adl<T>, nb::arg("x"), nb::arg("atoms"), nb::arg("task").none(), nb::arg("lam"),
        nb::arg("max_iterations"), nb::arg("coefficient_steps"), nb::arg("dictionary_steps"), nb::arg("c"),
        nb::arg("c_d"), nb::arg("tolerance"), nb::arg("seed"), nb::arg("initial").none(), nb::arg("device"));
  m.def("parafac2", &parafac2<T>, nb::arg("slabs"), nb::arg("rank"), nb::arg("max_iterations"), nb::arg("tolerance"),
        nb::arg("start"), nb::arg("seed"), nb::arg("a0").none(), nb::arg("h0").none(), nb::arg("c0").none(),
        nb::arg("device"));
  m.def("omp_gpu", &omp_gpu<T>, nb::arg("d"), nb::arg("x"), nb::arg("sparsity"), nb::arg("tolerance"),
        nb::arg("kernel"), nb::arg("framework"));
  m.def("ksvd_gpu", &ksvd_gpu<T>, nb::arg("x"), nb::arg("atoms"), nb::arg("sparsity"), nb::arg("iterations"),
        nb::arg("exact"), nb::arg("seed"), nb::arg("clear"), nb::arg("coherence"), nb::arg("min_use"),
        nb::arg("keep_better_codes"), nb::arg("initial").none(), nb::arg("framework"));
  m.def("adl_gpu", &adl_gpu<T>, nb::arg("x"), nb::arg("atoms"), nb::arg("task").none(), nb::arg("lam"),
        nb::arg("max_iterations"), nb::arg("coefficient_steps"), nb::arg("dictionary_steps"), nb::arg("c"),
        nb::arg("c_d"), nb::arg("tolerance"), nb::arg("seed"), nb::arg("initial").none(), nb::arg("framework"));
  m.def("parafac2_gpu", &parafac2_gpu<T>, nb::arg("slabs"), nb::arg("rank"), nb::arg("max_iterations"),
        nb::arg("tolerance"), nb::arg("start"), nb::arg("seed"), nb::arg("a0").none(), nb::arg("h0").none(),
        nb::arg("c0").none(), nb::arg("framework"));
}

}  // namespace

void bind_fmri(nb::module_& m) {
  bind_typed<double>(m);
  bind_typed<float>(m);
}

}  // namespace linv_py
