// lstsq (Householder QR, or the normal equations refined in mixed precision) and pinv (the SVD), each held
// to the least-squares residual promise.
#include "linv/dense.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "common/stopwatch.hpp"
#include "core/dense_steps.hpp"
#include "core/scaling.hpp"
#include "kernels/backend.hpp"
#include "linv/accuracy.hpp"
#include "linv/errors.hpp"

namespace linv {

using namespace dense_steps;

namespace {

// lstsq of operands checked by lstsq() and within the scaling band.
template <Scalar T>
Solution<T> lstsq_as_given(ConstMatrixView<T> A, ConstMatrixView<T> B, const LstsqOptions& options) {
  const index m = A.rows(), n = A.cols(), nrhs = B.cols();
  Solution<T> out;
  out.report.operation = Operation::LeastSquares;
  out.report.method = Method::QR;
  out.report.device = A.device();
  out.report.precision = type_name<T>();
  const double rcond = options.rcond >= 0 ? options.rcond : static_cast<double>(std::max(m, n)) * eps<T>();
  Stopwatch clock;
  if (options.precision == Precision::Mixed) {
    if constexpr (!std::is_same_v<T, double>) {
      throw InvalidArgument(fmt::format("mixed precision refines to float64: give float64 data, not {}", type_name<T>()));
    } else {
      out.report.precision = precision_name(type_name<T>(), Precision::Mixed);
      if (m < n) {
        out.report.notes.push_back("underdetermined (m < n): QR instead of the normal equations");
      } else {
        out.x = Matrix<double>::uninitialized(n, nrhs, A.device());
        const kernels::MixedOutcome r = kernels::mixed(A.device()).least_squares(A, B, out.x.view());
        if (r.failure.empty()) {
          out.report.method = Method::NormalEquations;
          out.report.iterations = r.iterations;
          out.report.stop = StopReason::Converged;
          out.report.rank = n;
          out.report.seconds = clock.seconds();
          if (options.compute_residual) out.report.scaled_residual = scaled_residual_lstsq<T>(A, out.x.view(), B, eps<T>());
          return out;
        }
        out.report.notes.push_back(fmt::format("normal equations not used ({}): QR instead", r.failure));
      }
    }
  }
  Matrix<T> a = Matrix<T>::copy_of(A);
  Matrix<T> b(std::max(m, n), nrhs, A.device());  // X comes back in the first n rows
  copy<T>(B, b.block(0, 0, m, nrhs));
  out.report.rank = dense_of(A).least_squares(a.view(), b.view(), rcond);
  out.x = Matrix<T>::copy_of(b.block(0, 0, n, nrhs));
  out.report.seconds = clock.seconds();
  if (out.report.rank < std::min(m, n))
    out.report.notes.push_back(fmt::format("rank deficient: numerical rank {} of {} (tolerance {:.3g} x largest)",
                                           out.report.rank, std::min(m, n), rcond));
  if (options.compute_residual) out.report.scaled_residual = scaled_residual_lstsq<T>(A, out.x.view(), B, eps<T>());
  return out;
}

// pinv of a matrix checked by pinv() and within the scaling band.
template <Scalar T>
Solution<T> pseudoinverse_as_given(ConstMatrixView<T> A, const LstsqOptions& options) {
  const index m = A.rows(), n = A.cols(), r = std::min(m, n);
  const Device device = A.device();
  Solution<T> out;
  out.report.operation = Operation::Pseudoinverse;
  out.report.method = Method::SVD;
  out.report.device = device;
  out.report.precision = type_name<T>();
  Stopwatch clock;
  Matrix<T> a = Matrix<T>::copy_of(A);
  Matrix<T> u = Matrix<T>::uninitialized(m, r, device), vt = Matrix<T>::uninitialized(r, n, device);
  std::vector<real_t<T>> s(static_cast<std::size_t>(r));
  const int info = dense_of(A).svd(a.view(), s.data(), u.view(), vt.view());
  if (info > 0) throw NoConvergence("SVD (gesdd)", 0, NAN, NAN, fmt::format("{} superdiagonals did not converge", info));
  const double rel = options.rcond >= 0 ? options.rcond : static_cast<double>(std::max(m, n)) * eps<T>();
  const double cutoff = r > 0 ? rel * static_cast<double>(s[0]) : 0.0;
  index rank = 0;
  while (rank < r && static_cast<double>(s[rank]) > cutoff) ++rank;
  // P = V_r diag(1/s_r) U_r^H: scale VT's first `rank` rows, then one product (Op::Transpose conjugates).
  Matrix<double> inverse_s(rank, 1);
  for (index j = 0; j < rank; ++j) inverse_s(j, 0) = 1.0 / static_cast<double>(s[static_cast<std::size_t>(j)]);
  kernels::vectors<T>(device).scale_rows(inverse_s.to(device).view(), vt.block(0, 0, rank, n));
  out.x = Matrix<T>(n, m, device);
  gemm<T>(Op::Transpose, Op::Transpose, T(1), vt.block(0, 0, rank, n), u.block(0, 0, m, rank), T(0), out.x.view());
  out.report.rank = rank;
  out.report.rcond = r > 0 && s[0] > 0 ? static_cast<double>(s[r - 1] / s[0]) : 0.0;
  out.report.seconds = clock.seconds();
  if (rank < r)
    out.report.notes.push_back(fmt::format("rank deficient: numerical rank {} of {} (singular values below {:.3g} dropped)",
                                           rank, r, cutoff));
  if (options.compute_residual) out.report.scaled_residual = scaled_residual_pinv<T>(A, out.x.view(), eps<T>());
  return out;
}

// lstsq and pinv promise their least-squares (Penrose) residual within kResidualBound, as inv and solve
// promise theirs (QR and the SVD are backward stable, so they meet it): loosened by as much as a rank
// tolerance above the default truncates, since the singular values dropped are that residual's own.
template <Scalar T>
void keep_least_squares_promise(const Solution<T>& s, index m, index n, const LstsqOptions& o, const char* what) {
  if (!o.compute_residual) return;
  const double default_rcond = static_cast<double>(std::max(m, n)) * eps<T>();
  const double bound = kResidualBound * std::max(1.0, (o.rcond >= 0 ? o.rcond : default_rcond) / default_rcond);
  if (!(s.report.scaled_residual <= bound))
    throw NumericalError(fmt::format("{}: the scaled residual {:.3g} exceeds linv's bound {:.3g}; no result is returned",
                                     what, s.report.scaled_residual, bound));
}

}  // namespace

template <Scalar T>
Solution<T> lstsq(ConstMatrixView<T> A, ConstMatrixView<T> B, const LstsqOptions& options) {
  require_same_device(A, B, "lstsq");
  require_meaningful(options);
  if (B.rows() != A.rows()) throw ShapeMismatch("lstsq: A and B", A.rows(), A.cols(), B.rows(), B.cols());
  const Scaled<T> a(A, checked_magnitude(A, "A", options.check_finite));
  const Scaled<T> b(B, checked_magnitude(B, "B", options.check_finite));
  Solution<T> s = lstsq_as_given<T>(a.view, b.view, options);
  keep_least_squares_promise(s, A.rows(), A.cols(), options, "lstsq");
  note_scaling<T>(s.report, "A", a.exponent);
  note_scaling<T>(s.report, "B", b.exponent);
  scaling::scale_back(s.x, b.exponent - a.exponent, "least-squares solution");
  return s;
}

template <Scalar T>
Solution<T> pinv(ConstMatrixView<T> A, const LstsqOptions& options) {
  require_meaningful(options);
  const Scaled<T> a(A, checked_magnitude(A, "A", options.check_finite));
  Solution<T> s = pseudoinverse_as_given<T>(a.view, options);
  keep_least_squares_promise(s, A.rows(), A.cols(), options, "pinv");
  note_scaling<T>(s.report, "A", a.exponent);
  scaling::scale_back(s.x, -a.exponent, "pseudoinverse");
  return s;
}

template Solution<float> lstsq<float>(ConstMatrixView<float>, ConstMatrixView<float>, const LstsqOptions&);
template Solution<double> lstsq<double>(ConstMatrixView<double>, ConstMatrixView<double>, const LstsqOptions&);
template Solution<float> pinv<float>(ConstMatrixView<float>, const LstsqOptions&);
template Solution<double> pinv<double>(ConstMatrixView<double>, const LstsqOptions&);
template Solution<std::complex<float>> lstsq<std::complex<float>>(ConstMatrixView<std::complex<float>>,
                                                                  ConstMatrixView<std::complex<float>>,
                                                                  const LstsqOptions&);
template Solution<std::complex<double>> lstsq<std::complex<double>>(ConstMatrixView<std::complex<double>>,
                                                                    ConstMatrixView<std::complex<double>>,
                                                                    const LstsqOptions&);
template Solution<std::complex<float>> pinv<std::complex<float>>(ConstMatrixView<std::complex<float>>,
                                                                 const LstsqOptions&);
template Solution<std::complex<double>> pinv<std::complex<double>>(ConstMatrixView<std::complex<double>>,
                                                                   const LstsqOptions&);

}  // namespace linv
