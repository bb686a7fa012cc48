// Weighted least squares through A D^2 A^T (include/linv/wls.hpp): the algorithm, written once against
// the WLS, vector and mixed families of the device the system lives on (src/kernels/wls.hpp).
#include "linv/wls.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/stopwatch.hpp"
#include "kernels/backend.hpp"
#include "linv/accuracy.hpp"
#include "linv/errors.hpp"

namespace linv {
namespace {

// c = A D^2 b and friends, on the device the system lives on.
template <Real T>
void scale_rows(const Matrix<double>& d, MatrixView<T> X) {
  kernels::vectors<T>(X.device()).scale_rows(d.view(), X);
}

double norm2(ConstMatrixView<double> x) { return kernels::vectors<double>(x.device()).norm2(x); }

// C = A D^2 A^T in type U on A's device, lower triangle (full) or RFP (packed), factored by Cholesky.
template <Real U>
class Factor {
 public:
  Factor(index m, index n, Storage storage, Device device, bool forms = true)
      : storage_(storage), m_(m), scaled_(forms ? m : 0, forms ? n : 0, device),
        c_(storage == Storage::Packed ? m * (m + 1) / 2 : m, storage == Storage::Packed ? 1 : m, device),
        kernels_(kernels::wls<U>(device)) {}

  // Forms C from A (m x n) and w, the diagonal of D (n x 1, on A's device).
  void form(ConstMatrixView<U> A, const Matrix<double>& w) {
    scale_ = kernels_.form(A, w.view(), scaled_.view(), c_.view(), storage_);
  }

  // C := `formed`'s C rounded to float (same storage; formed not yet factored).
  void round_from(const Factor<double>& formed)
    requires std::is_same_v<U, float>
  {
    scale_ = formed.scale();
    kernels::mixed(c_.device()).round_to_float(formed.c().view(), c_.view());
  }

  index factor() { return kernels_.cholesky(c_.view(), m_, storage_); }  // in place; LAPACK's info
  void solve(MatrixView<U> B) const { kernels_.solve(c_.view(), m_, storage_, B); }  // B := C^-1 B

  const Matrix<U>& c() const { return c_; }
  // ||A D||_F^2, an upper bound of ||C||_2 within a factor of rank: the scale of C.
  double scale() const { return scale_; }

 private:
  Storage storage_;
  index m_;
  Matrix<U> scaled_;  // A D
  Matrix<U> c_;       // m x m, or the RFP array as a column
  const kernels::Wls<U>& kernels_;
  double scale_ = 0;
};

}  // namespace

template <Real T>
struct WeightedLeastSquares<T>::State {
  State(ConstMatrixView<T> a, const WlsOptions& o)
      : A(Matrix<T>::copy_of(a)), options(o), m(a.rows()), n(a.cols()) {}
  Matrix<T> A;
  WlsOptions options;
  index m, n;
  Matrix<double> d2, w;  // the diagonals of D^2 and D (n x 1, on A's device)
  // Native: C and its factor in T. Mixed: C formed in float64 (high), rounded to float32 and factored
  // there (low); high is factored in place only if refinement fails.
  std::unique_ptr<Factor<T>> native;
  std::unique_ptr<Factor<float>> low;
  std::unique_ptr<Factor<double>> high;
  bool high_factored = false;
  bool factored = false;
};

template <Real T>
WeightedLeastSquares<T>::WeightedLeastSquares(ConstMatrixView<T> A, const WlsOptions& options) {
  if (A.rows() > A.cols())
    throw InvalidArgument(fmt::format("wls needs A with no more rows than columns (m <= n); got {} (the system is "
                                      "A D^2 A^T x = A D^2 b with x of length m)",
                                      shape_string(A.rows(), A.cols())));
  if (options.precision == Precision::Mixed && !std::is_same_v<T, double>)
    throw InvalidArgument("mixed precision refines to float64: give float64 data");
  if (options.check_finite) require_finite(A, "A");
  state_ = std::make_shared<State>(A, options);
}

template <Real T>
void WeightedLeastSquares<T>::factor(ConstMatrixView<T> d) {
  State& s = *state_;
  if (d.rows() * d.cols() != s.n || (d.rows() != 1 && d.cols() != 1))
    throw ShapeMismatch(fmt::format("wls: the weights must be a vector of length n = {}", s.n), s.m, s.n, d.rows(),
                        d.cols());
  if (d.device() != s.A.device())
    throw InvalidArgument(fmt::format("wls: A is on {} but d is on {}", s.A.device().name(), d.device().name()));
  if (s.options.check_finite) require_finite(d, "d");
  const Matrix<T> dh = Matrix<T>::copy_of(d).to(Device::cpu());  // n values, checked on the host
  Matrix<double> d2(s.n, 1), w(s.n, 1);
  for (index i = 0; i < s.n; ++i) {
    const double v = static_cast<double>(dh.data()[i]);
    if (s.options.weights == Weights::Squared && v < 0)
      throw InvalidArgument(fmt::format("wls: weight {} is negative ({}); d holds the diagonal of D^2 (use "
                                        "--weights d for the diagonal of D)",
                                        i + 1, v));
    d2(i, 0) = s.options.weights == Weights::Squared ? v : v * v;
    w(i, 0) = std::sqrt(d2(i, 0));
  }
  s.d2 = d2.to(s.A.device());
  s.w = w.to(s.A.device());
  const Device device = s.A.device();
  index info = 0;
  if (s.options.precision == Precision::Mixed) {
    if constexpr (std::is_same_v<T, double>) {
      // C formed in float64 and rounded once: a better float32 factor than one accumulated in float32, at
      // the price of a float64 rank-n update (no dearer than float32 on GPUs with float64 tensor cores).
      if (!s.high) s.high = std::make_unique<Factor<double>>(s.m, s.n, s.options.storage, device);
      if (!s.low) s.low = std::make_unique<Factor<float>>(s.m, s.n, s.options.storage, device, /*forms=*/false);
      s.high->form(s.A.view(), s.w);
      s.high_factored = false;
      s.low->round_from(*s.high);
      info = s.low->factor();
    }
  } else {
    if (!s.native) s.native = std::make_unique<Factor<T>>(s.m, s.n, s.options.storage, device);
    s.native->form(s.A.view(), s.w);
    info = s.native->factor();
  }
  s.factored = false;
  if (info > 0)
    throw NotPositiveDefinite(info, fmt::format("A D^2 A^T is singular to the factorization: A is rank deficient or "
                                                "the weights vanish where they matter (Cholesky{})",
                                                s.options.precision == Precision::Mixed ? ", float32" : ""));
  s.factored = true;
}

template <Real T>
Solution<T> WeightedLeastSquares<T>::solve(ConstMatrixView<T> b) {
  State& s = *state_;
  if (!s.factored) throw InvalidArgument("wls: factor(d) must succeed before solve(b)");
  if (b.rows() != s.n) throw ShapeMismatch("wls: A and b", s.m, s.n, b.rows(), b.cols());
  if (b.device() != s.A.device())
    throw InvalidArgument(fmt::format("wls: A is on {} but b is on {}", s.A.device().name(), b.device().name()));
  if (s.options.check_finite) require_finite(b, "b");
  const Stopwatch clock;
  const index m = s.m, n = s.n, k = b.cols();
  const Device device = s.A.device();
  Solution<T> out;
  Report& r = out.report;
  r.operation = Operation::WeightedLeastSquares;
  r.method = Method::NormalEquations;
  r.notes.push_back(fmt::format("A D^2 A^T by Cholesky in {} storage",
                                s.options.storage == Storage::Full ? "full" : "rectangular full packed"));
  r.device = device;
  r.precision = s.options.precision == Precision::Mixed ? "mixed (float32 factorization, float64 refinement)"
                                                        : std::string(type_name<T>());
  // c = A D^2 b
  Matrix<T> db = Matrix<T>::copy_of(b);
  scale_rows<T>(s.d2, db.view());
  Matrix<T> c = Matrix<T>::uninitialized(m, k, device);
  gemm<T>(Op::None, Op::None, T(1), s.A.view(), db.view(), T(0), c.view());

  if (s.options.precision != Precision::Mixed) {
    out.x = std::move(c);
    s.native->solve(out.x.view());
  } else if constexpr (std::is_same_v<T, double>) {
    // The paper's Algorithm 1, column by column of b.
    const kernels::Mixed& mixed = kernels::mixed(device);
    out.x = Matrix<double>(m, k, device);
    Matrix<float> x32(m, 1, device);
    Matrix<double> t(n, 1, device), rcol(m, 1, device);
    // float64's own level: the rounding error of computing r, eps (m ||A D||_F^2 ||x|| + n ||A D||_F ||D b||),
    // over ||x|| (the second term matters where n >> m: b - A^T x is a least-squares residual, not small)
    const double eps = std::numeric_limits<double>::epsilon(), scale = std::max(s.low->scale(), 1e-300);
    int worst_iterations = 0;
    double worst_error = 0, worst_tolerance = 0;
    bool all_converged = true;
    for (index j = 0; j < k; ++j) {
      MatrixView<double> x = out.x.view().block(0, j, m, 1);
      copy<double>(b.block(0, j, n, 1), t.view());
      scale_rows<double>(s.w, t.view());
      const double weighted_b = norm2(t.view());
      mixed.round_to_float(c.view().block(0, j, m, 1), x32.view());
      s.low->solve(x32.view());
      mixed.add_correction(x32.view(), x);
      int it = 0;
      double error = 0, tolerance = 0, previous = std::numeric_limits<double>::infinity();
      for (;; ++it) {
        // r = A D^2 b - A D^2 A^T x, in float64 from A: t = D^2 (b - A^T x), r = A t
        copy<double>(b.block(0, j, n, 1), t.view());
        gemm<double>(Op::Transpose, Op::None, -1.0, s.A.view(), x, 1.0, t.view());
        scale_rows<double>(s.d2, t.view());
        gemm<double>(Op::None, Op::None, 1.0, s.A.view(), t.view(), 0.0, rcol.view());
        const double xn = norm2(x), rn = norm2(rcol.view());
        error = xn > 0 ? rn / xn : rn;
        tolerance = s.options.tolerance > 0
                        ? s.options.tolerance
                        : eps * (static_cast<double>(m) * scale +
                                 static_cast<double>(n) * std::sqrt(scale) * weighted_b / std::max(xn, 1e-300));
        // Done once the residual is under float64's level and has stopped halving: the level bounds the
        // rounding of r from above, often by 100x, and stopping as soon as r was under it left forward
        // errors 1000x the float64 path's at cond(A D^2 A^T) = 7e6. Refinement stops improving x where r
        // stops shrinking, and then x is as accurate as the float64 factorization's.
        const bool stalled = error == 0 || error > previous / 2;
        previous = error;
        if ((error <= tolerance && stalled) || it == s.options.max_iterations) break;
        mixed.round_to_float(rcol.view(), x32.view());
        s.low->solve(x32.view());
        mixed.add_correction(x32.view(), x);
      }
      worst_iterations = std::max(worst_iterations, it);
      worst_error = std::max(worst_error, error);
      worst_tolerance = std::max(worst_tolerance, tolerance);
      all_converged = all_converged && error <= tolerance;
    }
    r.iterations = worst_iterations;
    r.notes.push_back(fmt::format("final ||r|| / ||x|| {:.3g} (tolerance {:.3g})", worst_error, worst_tolerance));
    if (all_converged) {
      r.stop = StopReason::Converged;
    } else {
      // float64 instead, said in the report
      r.stop = StopReason::FellBack;
      r.notes.push_back(fmt::format("float32 refinement did not reach the tolerance in {} iterations: solved with a "
                                    "float64 factorization instead",
                                    s.options.max_iterations));
      if (!s.high_factored) {
        const index info = s.high->factor();
        if (info > 0) throw NotPositiveDefinite(info, "A D^2 A^T is singular to the float64 factorization (Cholesky)");
        s.high_factored = true;
      }
      out.x = std::move(c);
      s.high->solve(out.x.view());
    }
  }
  r.seconds = clock.seconds();
  if (s.options.compute_residual) {
    // the least-squares test on the scaled problem min || D (b - A^T x) ||: A_w = (A D)^T, b_w = D b,
    // computed on the host
    const Matrix<T> a = s.A.to(Device::cpu()), bh = Matrix<T>::copy_of(b).to(Device::cpu());
    const Matrix<T> x = out.x.to(Device::cpu());
    const Matrix<double> w = s.w.to(Device::cpu());
    Matrix<T> aw(n, m), bw(n, k);
    for (index i = 0; i < n; ++i) {
      for (index p = 0; p < m; ++p) aw(i, p) = static_cast<T>(a(p, i) * w(i, 0));
      for (index j = 0; j < k; ++j) bw(i, j) = static_cast<T>(bh(i, j) * w(i, 0));
    }
    r.scaled_residual = scaled_residual_lstsq<T>(aw.view(), x.view(), bw.view(),
                                                 s.options.precision == Precision::Mixed
                                                     ? std::numeric_limits<double>::epsilon()
                                                     : std::numeric_limits<T>::epsilon());
  }
  return out;
}

template <Real T>
Solution<T> wls(ConstMatrixView<T> A, ConstMatrixView<T> d, ConstMatrixView<T> b, const WlsOptions& options) {
  WeightedLeastSquares<T> system(A, options);
  system.factor(d);
  return system.solve(b);
}

template class WeightedLeastSquares<float>;
template class WeightedLeastSquares<double>;
template Solution<float> wls<float>(ConstMatrixView<float>, ConstMatrixView<float>, ConstMatrixView<float>,
                                    const WlsOptions&);
template Solution<double> wls<double>(ConstMatrixView<double>, ConstMatrixView<double>, ConstMatrixView<double>,
                                      const WlsOptions&);

}  // namespace linv
