// _linv: imaging (linv::imaging: PSFs, the forward model, regularised deblurring) and SLAM (linv::slam:
// bordered Jacobians, their pseudoinverse and the Gauss-Newton step). Imaging is float64 in linv; the
// Python layer converts float32 images and converts the results back.
#include "linv/imaging.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "common.hpp"
#include "linv/slam.hpp"

namespace linv_py {
namespace {

using linv::index;
namespace im = linv::imaging;

nb::tuple psf(const std::string& spec) {
  im::Psf p = im::parse_psf(spec);
  const bool symmetric = p.symmetric();
  return nb::make_tuple(numpy_object<double>(std::move(p.kernel)), p.spec, symmetric);
}

nb::object convolve(const Input<double>& f, const Input<double>& kernel, const std::string& boundary, bool adjoint) {
  linv::Matrix<double> f_copy, k_copy;
  const linv::ConstMatrixView<double> F = column_major(f, f_copy), K = column_major(kernel, k_copy);
  const im::Boundary b = im::parse_boundary(boundary);
  linv::Matrix<double> g;
  {
    nb::gil_scoped_release released;
    g = adjoint ? im::convolve_adjoint(F, K, b) : im::convolve(F, K, b);
  }
  return numpy_object<double>(std::move(g));
}

nb::object add_noise(const Input<double>& image, const std::string& spec, std::uint64_t seed) {
  linv::Matrix<double> copy;
  const linv::ConstMatrixView<double> I = column_major(image, copy);
  linv::Matrix<double> g;
  {
    nb::gil_scoped_release released;
    g = im::add_noise(I, spec, seed);
  }
  return numpy_object<double>(std::move(g));
}

nb::object shepp_logan(index n) {
  linv::Matrix<double> p;
  {
    nb::gil_scoped_release released;
    p = im::shepp_logan(n);
  }
  return numpy_object<double>(std::move(p));
}

nb::object system_matrix(index height, index width, const Input<double>& kernel, const std::string& boundary) {
  linv::Matrix<double> k_copy;
  const linv::ConstMatrixView<double> K = column_major(kernel, k_copy);
  const im::Boundary b = im::parse_boundary(boundary);
  linv::Matrix<double> h;
  {
    nb::gil_scoped_release released;
    h = im::system_matrix(height, width, K, b);
  }
  return numpy_object<double>(std::move(h));
}

double estimate_noise(const Input<double>& g, int channels) {
  linv::Matrix<double> copy;
  const linv::ConstMatrixView<double> G = column_major(g, copy);
  nb::gil_scoped_release released;
  return im::estimate_noise(G, channels);
}

nb::dict estimate_poisson(const Input<double>& g, int channels) {
  linv::Matrix<double> copy;
  const linv::ConstMatrixView<double> G = column_major(g, copy);
  im::PoissonFit fit;
  {
    nb::gil_scoped_release released;
    fit = im::estimate_poisson(G, channels);
  }
  nb::dict d;
  d["peak"] = fit.peak;
  d["floor"] = fit.floor;
  d["signal_share"] = fit.signal_share;
  d["mean"] = fit.mean;
  d["blocks"] = fit.blocks;
  return d;
}

im::DeblurOptions deblur_options(double lambda, const std::string& rule, const std::string& boundary,
                                 const std::string& regularizer, const std::string& robust, const std::string& path,
                                 int channels, int max_iterations, double tolerance, const std::string& prior,
                                 double tv_weight, const std::string& noise_model, double photon_peak) {
  im::DeblurOptions o;
  o.prior = im::parse_prior(prior);
  o.tv_weight = tv_weight;
  o.noise_model = im::parse_noise_model(noise_model);
  o.photon_peak = photon_peak;
  o.lambda = lambda;
  o.rule = im::parse_lambda_rule(rule);
  o.boundary = im::parse_boundary(boundary);
  o.regularizer = im::parse_regularizer(regularizer);
  // robust is True, False or "auto" in Python (linv/imaging.py maps the booleans to on and off)
  if (robust == "auto") o.robust = im::Robust::Auto;
  else if (robust == "on") o.robust = im::Robust::On;
  else if (robust == "off") o.robust = im::Robust::Off;
  else throw linv::InvalidArgument("robust is 'auto', True or False, not '" + robust + "'");
  o.path = im::parse_deblur_path(path);
  o.channels = channels;
  o.max_iterations = max_iterations;
  o.tolerance = tolerance;
  return o;
}

// The report of a deblur, with what it chose.
nb::dict deblur_report(const im::DeblurResult& r) {
  nb::dict rep = report_dict(r.report);
  rep["lambda"] = r.lambda;
  rep["lambda_from"] = r.lambda_from;
  rep["noise_sigma"] = r.noise_sigma;
  rep["robust"] = r.robust;
  rep["tv_weight"] = r.tv_weight;
  rep["tv_weight_from"] = r.tv_weight_from;
  rep["prior"] = std::string(im::to_string(r.prior));
  rep["prior_from"] = r.prior_from;
  rep["nonlocal_share"] = r.nonlocal_share;
  rep["noise_model"] = std::string(im::to_string(r.noise_model));
  rep["noise_model_from"] = r.noise_model_from;
  rep["photon_peak"] = r.photon_peak;
  rep["nonlocal_lambda"] = r.nonlocal_lambda;
  rep["nonlocal_h"] = r.nonlocal_h;
  return rep;
}

// g: height x (width * channels), the channels side by side; kernel: the PSF (psf_from checks it).
nb::tuple deblur(const Input<double>& g, const Input<double>& kernel, const std::string& psf_name, double lambda,
                 const std::string& rule, const std::string& boundary, const std::string& regularizer,
                 const std::string& robust, const std::string& path, int channels, int max_iterations,
                 double tolerance, const std::string& prior, double tv_weight, const std::string& noise_model,
                 double photon_peak, const std::string& device) {
  linv::Matrix<double> g_copy, k_copy;
  const linv::ConstMatrixView<double> G = column_major(g, g_copy), K = column_major(kernel, k_copy);
  const im::Psf p = im::psf_from(K, psf_name);
  const im::DeblurOptions o =
      deblur_options(lambda, rule, boundary, regularizer, robust, path, channels, max_iterations, tolerance, prior,
                     tv_weight, noise_model, photon_peak);
  const linv::Device d = linv::choose_device(device, linv::Operation::Deblur, G.rows() * G.cols());
  im::DeblurResult r;
  {
    nb::gil_scoped_release released;
    linv::Matrix<double> on;
    r = im::deblur(placed(G, d, on), p, o);
    if (!r.image.device().is_cpu()) r.image = r.image.to(linv::Device::cpu());
  }
  nb::dict rep = deblur_report(r);
  return nb::make_tuple(numpy_object<double>(std::move(r.image)), rep);
}

// The same for a column-major g on a GPU (linv_py::Gpu), deblurred there; the kernel stays in host memory.
nb::tuple deblur_gpu(const GpuInput<double>& g, const Input<double>& kernel, const std::string& psf_name, double lambda,
                     const std::string& rule, const std::string& boundary, const std::string& regularizer,
                     const std::string& robust, const std::string& path, int channels, int max_iterations,
                     double tolerance, const std::string& prior, double tv_weight,
                     const std::string& noise_model, double photon_peak, const std::string& framework) {
  const Gpu gpu(g, framework);
  const linv::ConstMatrixView<double> G = gpu.view<double>(g, "g");
  linv::Matrix<double> k_copy;
  const im::Psf p = im::psf_from(column_major(kernel, k_copy), psf_name);
  const im::DeblurOptions o =
      deblur_options(lambda, rule, boundary, regularizer, robust, path, channels, max_iterations, tolerance, prior,
                     tv_weight, noise_model, photon_peak);
  im::DeblurResult r = gpu.run([&] { return im::deblur(G, p, o); });
  nb::dict rep = deblur_report(r);
  return nb::make_tuple(gpu.array<double>(std::move(r.image)), rep);
}

// ---- SLAM ----

template <class T>
struct Bordered {
  linv::slam::BorderedJacobian<T> J;

  nb::tuple step(const Input<T>& d, double damping) const {
    linv::Matrix<T> copy;
    const linv::ConstMatrixView<T> D = column_major(d, copy);
    if (D.rows() != J.rows())
      throw linv::ShapeMismatch("slam step: d needs one row per row of J", J.rows(), J.cols(), D.rows(), D.cols());
    linv::Solution<T> s;
    {
      nb::gil_scoped_release released;
      linv::Matrix<T> on;
      s = linv::slam::pinv_apply(J, placed(D, J.device(), on), damping);
      if (!s.x.device().is_cpu()) s.x = s.x.to(linv::Device::cpu());
    }
    return nb::make_tuple(numpy_object<T>(std::move(s.x)), report_dict(s.report));
  }
  nb::tuple pinv(double damping) const {
    linv::Solution<T> s;
    {
      nb::gil_scoped_release released;
      s = linv::slam::pinv(J, damping);
      if (!s.x.device().is_cpu()) s.x = s.x.to(linv::Device::cpu());
    }
    return nb::make_tuple(numpy_object<T>(std::move(s.x)), report_dict(s.report));
  }
  nb::object normal_inverse(double damping) const {
    linv::Matrix<T> m;
    {
      nb::gil_scoped_release released;
      m = linv::slam::normal_inverse(J, damping);
    }
    return numpy_object<T>(std::move(m));
  }
  nb::object to_dense() const { return numpy_object<T>(J.to_dense()); }
};

template <class T>
Bordered<T>* make_bordered(const Input<T>& j, index k, const std::string& device) {
  linv::Matrix<T> copy;
  const linv::ConstMatrixView<T> J = column_major(j, copy);
  const linv::Device d = linv::choose_device(device, linv::Operation::SlamStep, J.rows() * (k + 1));
  nb::gil_scoped_release released;
  auto host = linv::slam::BorderedJacobian<T>::from_dense(J, k);
  if (d.is_cpu()) return new Bordered<T>{std::move(host)};
  return new Bordered<T>{host.to(d)};
}

// The least-squares step argmin ||J x - d|| by CGLS for a J in compressed rows, on the device asked for.
template <class T>
nb::tuple cgls_step(const linv::SparseMatrix<T>& J, const Input<T>& d, double tolerance, int max_iterations,
                    const std::string& device) {
  linv::Matrix<T> d_copy;
  const linv::ConstMatrixView<T> D = column_major(d, d_copy);
  if (D.rows() != J.rows)
    throw linv::ShapeMismatch("slam sparse step: d needs one row per row of J", J.rows, J.cols, D.rows(), D.cols());
  const linv::Device dev = linv::choose_device(device, linv::Operation::SlamStep, J.rows * J.cols);
  linv::Solution<T> s;
  {
    nb::gil_scoped_release released;
    linv::slam::CglsOptions o;
    o.tolerance = tolerance;
    o.max_iterations = max_iterations;
    linv::Matrix<T> on;
    s = linv::slam::cgls_apply(J, placed(D, dev, on), o);
    if (!s.x.device().is_cpu()) s.x = s.x.to(linv::Device::cpu());
  }
  return nb::make_tuple(numpy_object<T>(std::move(s.x)), report_dict(s.report));
}

// The step for a J given densely (without the bordered structure): its nonzeros, then CGLS.
template <class T>
nb::tuple sparse_step(const Input<T>& j, const Input<T>& d, double tolerance, int max_iterations,
                      const std::string& device) {
  linv::Matrix<T> j_copy;
  const linv::ConstMatrixView<T> J = column_major(j, j_copy);
  linv::SparseMatrix<T> sparse;
  {
    nb::gil_scoped_release released;
    sparse = linv::SparseMatrix<T>::from_dense(J);
  }
  return cgls_step(sparse, d, tolerance, max_iterations, device);
}

// The step from SciPy's compressed rows (indptr, indices, data), checked, never made dense.
using Indices = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::device::cpu>;

template <class T>
nb::tuple sparse_step_csr(linv::index rows, linv::index cols, const Indices& indptr, const Indices& indices,
                          const nb::ndarray<const T, nb::ndim<1>, nb::device::cpu>& data, const Input<T>& d,
                          double tolerance, int max_iterations, const std::string& device) {
  linv::SparseMatrix<T> J{rows, cols, {}, {}, {}};
  const auto at = [](const auto& a, std::size_t k) { return a.data()[k * static_cast<std::size_t>(a.stride(0))]; };
  if (indptr.shape(0) != static_cast<std::size_t>(rows + 1) || indices.shape(0) != data.shape(0) ||
      at(indptr, 0) != 0 || at(indptr, static_cast<std::size_t>(rows)) != static_cast<std::int64_t>(data.shape(0)))
    throw linv::InvalidArgument("slam sparse step: a malformed compressed-row matrix (indptr, indices, data)");
  for (std::size_t k = 0; k <= static_cast<std::size_t>(rows); ++k) J.row_start.push_back(at(indptr, k));
  for (std::size_t k = 0; k < data.shape(0); ++k) {
    J.column.push_back(at(indices, k));
    J.value.push_back(at(data, k));
    if (J.column.back() < 0 || J.column.back() >= cols)
      throw linv::InvalidArgument(fmt::format("slam sparse step: entry {} has column {}, outside 0..{}", k,
                                              J.column.back(), cols - 1));
  }
  for (linv::index r = 0; r < rows; ++r)
    if (J.row_start[r + 1] < J.row_start[r])
      throw linv::InvalidArgument("slam sparse step: indptr decreases at row " + std::to_string(r));
  return cgls_step(J, d, tolerance, max_iterations, device);
}

template <class T>
void bind_slam_typed(nb::module_& m, const char* suffix) {
  nb::class_<Bordered<T>>(m, (std::string("BorderedJacobian") + suffix).c_str())
      .def("step", &Bordered<T>::step, nb::arg("d"), nb::arg("damping"))
      .def("pinv", &Bordered<T>::pinv, nb::arg("damping"))
      .def("normal_inverse", &Bordered<T>::normal_inverse, nb::arg("damping"))
      .def("to_dense", &Bordered<T>::to_dense)
      .def_prop_ro("device", [](const Bordered<T>& b) { return b.J.device().name(); })
      .def_prop_ro("shape", [](const Bordered<T>& b) { return nb::make_tuple(b.J.rows(), b.J.cols()); })
      .def_prop_ro("dense_cols", [](const Bordered<T>& b) { return b.J.dense_cols(); })
      .def_prop_ro("starts", [](const Bordered<T>& b) { return b.J.starts(); })
      .def_prop_ro("lengths", [](const Bordered<T>& b) { return b.J.lengths(); });
  m.def("bordered_jacobian", &make_bordered<T>, nb::arg("j"), nb::arg("k"), nb::arg("device"));
  m.def("slam_sparse_step", &sparse_step<T>, nb::arg("j"), nb::arg("d"), nb::arg("tolerance"),
        nb::arg("max_iterations"), nb::arg("device"));
  m.def("slam_sparse_step_csr", &sparse_step_csr<T>, nb::arg("rows"), nb::arg("cols"), nb::arg("indptr"),
        nb::arg("indices"), nb::arg("data"), nb::arg("d"), nb::arg("tolerance"), nb::arg("max_iterations"),
        nb::arg("device"));
}

}  // namespace

void bind_imaging(nb::module_& m) {
  m.def("psf", &psf, nb::arg("spec"));
  m.def("convolve", &convolve, nb::arg("f"), nb::arg("kernel"), nb::arg("boundary"), nb::arg("adjoint"));
  m.def("add_noise", &add_noise, nb::arg("image"), nb::arg("spec"), nb::arg("seed"));
  m.def("shepp_logan", &shepp_logan, nb::arg("n"));
  m.def("system_matrix", &system_matrix, nb::arg("height"), nb::arg("width"), nb::arg("kernel"), nb::arg("boundary"));
  m.def("estimate_noise", &estimate_noise, nb::arg("g"), nb::arg("channels"));
  m.def("estimate_poisson", &estimate_poisson, nb::arg("g"), nb::arg("channels"));
  m.def("deblur", &deblur, nb::arg("g"), nb::arg("kernel"), nb::arg("psf_name"), nb::arg("lam"), nb::arg("rule"),
        nb::arg("boundary"), nb::arg("regularizer"), nb::arg("robust"), nb::arg("path"), nb::arg("channels"),
        nb::arg("max_iterations"), nb::arg("tolerance"), nb::arg("prior"), nb::arg("tv_weight"),
        nb::arg("noise_model"), nb::arg("photon_peak"), nb::arg("device"));
  m.def("deblur_gpu", &deblur_gpu, nb::arg("g"), nb::arg("kernel"), nb::arg("psf_name"), nb::arg("lam"),
        nb::arg("rule"), nb::arg("boundary"), nb::arg("regularizer"), nb::arg("robust"), nb::arg("path"),
        nb::arg("channels"), nb::arg("max_iterations"), nb::arg("tolerance"), nb::arg("prior"), nb::arg("tv_weight"),
        nb::arg("noise_model"), nb::arg("photon_peak"), nb::arg("framework"));
  m.attr("have_fft") = im::Convolution::have_fft();
}

void bind_slam(nb::module_& m) {
  bind_slam_typed<double>(m, "64");
  bind_slam_typed<float>(m, "32");
}

}  // namespace linv_py
