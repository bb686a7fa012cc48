// f = linv_deblur(g, psf, name, value, ...)   [f, report] = linv_deblur(...)
// The regularised reconstruction of a blurred image g (height x width, or height x width x channels for
// colour: one lambda for all), values in [0, 1], double or single (computed in double, returned in g's
// class). psf: a kernel (a matrix whose centre is entry (floor(rows/2)+1, floor(cols/2)+1): fspecial's
// odd-sized kernels as they come) or a spec such as 'gaussian:size=5,sigma=1', 'motion:len=9,angle=30', 'disk:radius=3'.
// Options: 'lambda' (a non-negative number, or 'auto', 'gcv', 'discrepancy'), 'boundary' ('reflexive',
// 'zero', 'periodic'), 'regularizer' ('laplacian', 'gradient', 'identity'), 'robust' ('auto', 'on',
// 'off'), 'path' ('auto', 'spectral', 'dense', 'matrix-free'), 'maxIterations', 'tolerance', 'device',
// 'prior' ('auto', 'tikhonov', 'tv': isotropic total variation from the Tikhonov solution, or 'nonlocal': a
// sharper inverse averaged over pixels whose patches look alike in the tv result), 'tvWeight' (tv's
// weight; left out: 0.12 times the noise level), 'noiseModel' ('auto', 'gaussian', 'poisson': photon counts)
// and 'photonPeak' (Poisson: counts per unit of g; left out: estimated).
#include <fmt/format.h>

#include <cmath>

#include "gateway.hpp"
#include "linv/errors.hpp"
#include "linv/imaging.hpp"

namespace {

// The image's pixels in double, channels side by side (height x (width channels)): MATLAB's layout of a
// height x width x channels array already, so a double image is used in place.
linv::ConstMatrixView<double> pixels(const mxArray* g, linv::Matrix<double>& widened, int& channels) {
  const linv_mex::Class c = linv_mex::real_class(g, "g");
  const mwSize rank = mxGetNumberOfDimensions(g);
  const mwSize* dims = mxGetDimensions(g);
  if (rank > 3) throw linv::InvalidArgument("g has more than 3 dimensions: an image is height x width x channels");
  channels = rank == 3 ? static_cast<int>(dims[2]) : 1;
  const auto rows = static_cast<linv::index>(dims[0]), cols = static_cast<linv::index>(dims[1]) * channels;
  const linv::index ld = std::max<linv::index>(rows, 1);
  if (c == linv_mex::Class::Double) return {static_cast<const double*>(mxGetData(g)), rows, cols, ld};
  const linv::ConstMatrixView<float> single{static_cast<const float*>(mxGetData(g)), rows, cols, ld};
  widened = linv::Matrix<float>::copy_of(single).cast<double>();
  return widened.view();
}

linv::imaging::Psf psf_of(const mxArray* psf) {
  if (mxIsChar(psf)) {
    char* spec = mxArrayToString(psf);
    std::string text(spec != nullptr ? spec : "");
    mxFree(spec);
    return linv::imaging::parse_psf(text);
  }
  linv::Matrix<double> widened;  // psf_from copies the kernel: a double one is passed in place
  const linv::ConstMatrixView<double> kernel =
      linv_mex::real_class(psf, "psf") == linv_mex::Class::Double
          ? linv_mex::view<double>(psf, "psf")
          : (widened = linv::Matrix<float>::copy_of(linv_mex::view<float>(psf, "psf")).cast<double>()).view();
  return linv::imaging::psf_from(kernel, fmt::format("a {}x{} kernel", kernel.rows(), kernel.cols()));
}

linv::imaging::DeblurOptions deblur_options(const linv_mex::Options& o, int channels) {
  linv::imaging::DeblurOptions d;
  if (const mxArray* lambda = o.array("lambda"); lambda != nullptr && !mxIsChar(lambda)) {
    d.lambda = *o.number("lambda");
    if (!(d.lambda >= 0))
      throw linv::InvalidArgument(fmt::format("'lambda' must be non-negative (or 'auto', 'gcv', 'discrepancy'); "
                                              "got {}",
                                              d.lambda));
  } else {
    d.rule = linv::imaging::parse_lambda_rule(o.text("lambda").value_or("auto"));
  }
  d.boundary = linv::imaging::parse_boundary(o.text("boundary").value_or("reflexive"));
  d.regularizer = linv::imaging::parse_regularizer(o.text("regularizer").value_or("laplacian"));
  d.robust = linv::imaging::parse_robust(o.text("robust").value_or("auto"));
  d.path = linv::imaging::parse_deblur_path(o.text("path").value_or("auto"));
  if (const auto m = o.number("maxIterations")) d.max_iterations = static_cast<int>(*m);
  if (const auto t = o.number("tolerance")) d.tolerance = *t;
  d.prior = linv::imaging::parse_prior(o.text("prior").value_or("auto"));
  d.noise_model = linv::imaging::parse_noise_model(o.text("noiseModel").value_or("auto"));
  if (const auto peak = o.number("photonPeak")) {
    d.photon_peak = *peak;
    if (!(d.photon_peak > 0) || !std::isfinite(d.photon_peak))
      throw linv::InvalidArgument(fmt::format("'photonPeak' must be a positive finite number; got {}", d.photon_peak));
  }
  if (const auto w = o.number("tvWeight")) {
    d.tv_weight = *w;
    if (!(d.tv_weight >= 0))
      throw linv::InvalidArgument(fmt::format("'tvWeight' must be non-negative; got {}", d.tv_weight));
  }
  d.channels = channels;
  return d;
}

void call(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::check_counts("linv_deblur", nrhs, 2, nlhs, 2, "[f, report] = linv_deblur(g, psf, name, value, ...)");
  const linv_mex::Options o("linv_deblur", prhs + 2, nrhs - 2,
                            {"lambda", "boundary", "regularizer", "robust", "path", "maxIterations", "tolerance",
                             "device", "prior", "tvWeight", "noiseModel", "photonPeak"});
  const linv::imaging::Psf psf = psf_of(prhs[1]);  // a bad PSF or option before any work
  linv::Matrix<double> widened, g_copy;
  int channels = 1;
  const linv::ConstMatrixView<double> g = pixels(prhs[0], widened, channels);
  const linv::imaging::DeblurOptions options = deblur_options(o, channels);
  const linv::Device device = o.device(linv::Operation::Deblur, g.rows() * g.cols());
  const linv::imaging::DeblurResult r = linv::imaging::deblur(linv_mex::placed(g, device, g_copy), psf, options);
  const linv::Matrix<double> f = r.image.to(linv::Device::cpu());

  // f in g's shape and class
  const bool single = mxIsSingle(prhs[0]);
  mxArray* out = mxCreateNumericArray(mxGetNumberOfDimensions(prhs[0]), mxGetDimensions(prhs[0]),
                                      single ? mxSINGLE_CLASS : mxDOUBLE_CLASS, mxREAL);
  const std::size_t count = static_cast<std::size_t>(f.rows() * f.cols());
  if (single)
    std::copy_n(f.data(), count, static_cast<float*>(mxGetData(out)));
  else
    std::copy_n(f.data(), count, static_cast<double*>(mxGetData(out)));
  plhs[0] = out;
  if (nlhs > 1) {
    nlohmann::json j = linv_mex::report_json(r.report);
    j.update({{"psf", psf.spec},
              {"channels", channels},
              {"lambda", r.lambda},
              {"lambda_from", r.lambda_from},
              {"noise_sigma", r.noise_sigma},
              {"robust", r.robust},
              {"prior", std::string(linv::imaging::to_string(r.prior))},
              {"prior_from", r.prior_from},
              {"nonlocal_share", r.nonlocal_share},
              {"tv_weight", r.tv_weight},
              {"noise_model", std::string(linv::imaging::to_string(r.noise_model))},
              {"photon_peak", r.photon_peak},
              {"nonlocal_lambda", r.nonlocal_lambda},
              {"nonlocal_h", r.nonlocal_h}});
    plhs[1] = linv_mex::to_mx(j);
  }
}

}  // namespace

void mexFunction(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  linv_mex::run(nlhs, plhs, nrhs, prhs, call);
}
