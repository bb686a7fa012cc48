// Weighted least squares through A D^2 A^T (include/linv/wls.hpp): the algorithm, written once against
// the WLS, vector and mixed families of the device the system lives on (src/kernels/wls.hpp).
#include "linv/wls.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/names.hpp"
#include "common/norm_estimate.hpp"
#include "common/stopwatch.hpp"
#include "core/policy.hpp"
#include "core/scaling.hpp"
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
  // Vectors per pass of the condition estimate (Higham and Tisseur's t).
  static constexpr int kEstimateColumns = 2;
  // ||C^-1||_1 estimated through the factor's solves (C^-1 is symmetric), after factor().
  double inverse_norm1(Device device) const {
    return cpu::block_norm1_estimate<U>(m_, kEstimateColumns, [&](std::vector<U>& X, bool) {
      Matrix<U> block(m_, static_cast<index>(X.size()) / m_);
      std::copy(X.begin(), X.end(), block.data());
      Matrix<U> y = block.to(device);
      solve(y.view());
      const Matrix<U> back = y.to(Device::cpu());
      std::copy(back.data(), back.data() + X.size(), X.begin());
    });
  }
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
  Matrix<T> A;             // 2^-a_exponent times the caller's A (src/core/scaling.hpp)
  int a_exponent = 0;
  WlsOptions options;
  index m, n;
  double c_norm = 0;       // ||C||_1 for the current weights (estimated)
  double rcond = std::numeric_limits<double>::quiet_NaN();  // of C, from the factor that solved
  std::vector<std::string> notes;  // what the scaling and the conditioning decided, for every report
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
                                      "A D^2 A^T x = A D^2 b with x of length m); for a design matrix with one row "
                                      "per observation, as statsmodels and SciPy take it, use the statsmodels form",
                                      shape_string(A.rows(), A.cols())));
  if (options.precision == Precision::Mixed && !std::is_same_v<T, double>)
    throw InvalidArgument("mixed precision refines to float64: give float64 data");
  if (!(options.tolerance >= 0) || std::isinf(options.tolerance))
    throw InvalidArgument(fmt::format("wls: the tolerance must be a finite number >= 0 (0: float64's level); got {}",
                                      options.tolerance));
  if (options.max_iterations < 0)
    throw InvalidArgument(fmt::format("wls: max_iterations must be at least 0; got {}", options.max_iterations));
  const kernels::Magnitude magnitude = kernels::dense<T>(A.device()).magnitude(A);
  if (options.check_finite && magnitude.first_non_finite) require_finite(A, "A");
  state_ = std::make_shared<State>(A, options);
  state_->a_exponent = scaling::exponent_for(magnitude.max_abs);
  if (state_->a_exponent != 0) {
    scaling::scale_by_power_of_two<T>(state_->A.view(), -state_->a_exponent);
    state_->notes.push_back(fmt::format("A was scaled by 2^{} (exactly) for the computation: its entries lie far "
                                        "from 1, where C's would over- or underflow",
                                        -state_->a_exponent));
  }
}

namespace {

// ||C||_1 of C = A D^2 A^T (A m x n scaled, d2 on A's device), estimated through products A (D^2 (A^T v)):
// no C is formed for it, in either storage.
template <Real T>
double normal_norm1(ConstMatrixView<T> A, const Matrix<double>& d2) {
  const index m = A.rows(), n = A.cols();
  return cpu::block_norm1_estimate<T>(m, 2, [&](std::vector<T>& X, bool) {
    const index t = static_cast<index>(X.size()) / m;
    Matrix<T> v(m, t);
    std::copy(X.begin(), X.end(), v.data());
    const Matrix<T> on = v.to(A.device());
    Matrix<T> w = Matrix<T>::uninitialized(n, t, A.device()), y = Matrix<T>::uninitialized(m, t, A.device());
    gemm<T>(Op::Transpose, Op::None, T(1), A, on.view(), T(0), w.view());
    scale_rows<T>(d2, w.view());
    gemm<T>(Op::None, Op::None, T(1), A, w.view(), T(0), y.view());
    const Matrix<T> back = y.to(Device::cpu());
    std::copy(back.data(), back.data() + X.size(), X.begin());
  });
}

// C's rcond from `factor`, judged as the one-shot dense functions judge theirs (policy.hpp), against
// sqrt(n) eps of the factor's type: C's entries are sums of n products, rounded to about sqrt(n) eps.
template <Real U>
double judged_rcond(const Factor<U>& factor, double c_norm, index n, Device device, bool allow,
                    std::vector<std::string>& notes) {
  const double inverse = factor.inverse_norm1(device);
  const double rcond = c_norm > 0 && inverse > 0 ? 1.0 / (c_norm * inverse) : 0.0;
  const double floor = std::sqrt(static_cast<double>(std::max<index>(n, 1))) * std::numeric_limits<U>::epsilon();
  if (!(rcond >= floor) && !(allow && rcond > 0))
    throw SingularMatrix(0, rcond,
                         fmt::format("A D^2 A^T: A is rank deficient, or its weights vanish where they matter or "
                                     "span more than {} can hold",
                                     type_name<U>()),
                         fmt::format("sqrt(n) eps = {:.3g} ({})", floor, type_name<U>()));
  if (rcond < floor)
    notes.push_back(fmt::format("A D^2 A^T is singular to working precision: rcond {:.3g} is below sqrt(n) eps = "
                                "{:.3g}, so x may have no correct digits (allowed by the caller)",
                                rcond, floor));
  return rcond;
}

}  // namespace

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
  // x does not depend on D's scale, so D is brought by a power of two (exactly), before it is squared, to
  // where the largest weighted column of A D has magnitude near 1: one weight of 1e155 squared to 1e310 made
  // every entry of x NaN, and scaling D by its own largest entry let a tiny column under a huge weight (the
  // one that made C) underflow in float32. D's largest entry stays where its square fits T.
  const bool squared = s.options.weights == Weights::Squared;
  Matrix<double> column_norms(s.n, 1, s.A.device());
  kernels::vectors<T>(s.A.device()).column_norms_squared(s.A.view(), column_norms.view());
  const Matrix<double> norms = column_norms.to(Device::cpu());
  double weighted = 0, largest = 0;  // max_j ||A(:, j)|| |D_j|, max_j |D_j|
  for (index i = 0; i < s.n; ++i) {
    const double v = std::abs(static_cast<double>(dh.data()[i])), D = squared ? std::sqrt(v) : v;
    weighted = std::max(weighted, std::sqrt(norms(i, 0)) * D);
    largest = std::max(largest, D);
  }
  constexpr int kRoom = std::numeric_limits<T>::max_exponent / 2 - 2;
  const int d_exponent = weighted > 0 ? std::max(scaling::exponent_for(weighted), scaling::exponent_for(largest) - kRoom)
                                      : scaling::exponent_for(largest);
  const double unit = std::ldexp(1.0, squared ? 2 * d_exponent : d_exponent);
  Matrix<double> d2(s.n, 1), w(s.n, 1);
  for (index i = 0; i < s.n; ++i) {
    const double v = static_cast<double>(dh.data()[i]);
    if (s.options.weights == Weights::Squared && v < 0)
      throw InvalidArgument(fmt::format("wls: weight {} is negative ({}); d holds the diagonal of D^2 (use "
                                        "--weights d for the diagonal of D)",
                                        i + 1, v));
    d2(i, 0) = s.options.weights == Weights::Squared ? v / unit : (v / unit) * (v / unit);
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
  if (info > 0 && s.options.precision == Precision::Mixed) {
    if constexpr (std::is_same_v<T, double>) {  // C32 may be singular where C is not: float64 decides
      info = s.high->factor();
      s.high_factored = true;
    }
  }
  if (info > 0)
    throw NotPositiveDefinite(info, "A D^2 A^T is singular to the factorization: A is rank deficient or the weights "
                                    "vanish where they matter (Cholesky)");
  s.c_norm = normal_norm1<T>(s.A.view(), s.d2);
  s.notes.clear();
  if (s.a_exponent != 0)
    s.notes.push_back(fmt::format("A was scaled by 2^{} (exactly) for the computation: its entries lie far from 1, "
                                  "where C's would over- or underflow",
                                  -s.a_exponent));
  if (unit != 1) s.notes.push_back(fmt::format("D was scaled by 2^{} (x does not depend on its scale)", -d_exponent));
  if (s.options.precision != Precision::Mixed) {
    s.rcond = judged_rcond(*s.native, s.c_norm, s.n, device, s.options.allow_ill_conditioned, s.notes);
  } else if constexpr (std::is_same_v<T, double>) {
    if (s.high_factored) {
      s.rcond = judged_rcond(*s.high, s.c_norm, s.n, device, s.options.allow_ill_conditioned, s.notes);
    } else {
      // Refinement from C32 converges where C32's rcond is above float32's level; below it float64 factors
      // and judges at once (refinement would stall, or "converge" to an x growing without bound).
      const double low = 1.0 / (s.c_norm * s.low->inverse_norm1(device));
      const double floor = std::sqrt(static_cast<double>(s.n)) * std::numeric_limits<float>::epsilon();
      if (!(low >= floor)) {
        s.notes.push_back(fmt::format("A D^2 A^T's rcond in float32, {:.3g}, is below float32's sqrt(n) eps "
                                      "({:.3g}): factored in float64 instead",
                                      low, floor));
        if (const index high_info = s.high->factor(); high_info > 0)
          throw NotPositiveDefinite(high_info, "A D^2 A^T is singular to the factorization: A is rank deficient or "
                                               "the weights vanish where they matter (Cholesky)");
        s.high_factored = true;
        s.rcond = judged_rcond(*s.high, s.c_norm, s.n, device, s.options.allow_ill_conditioned, s.notes);
      } else {
        s.rcond = low;
      }
    }
  }
  s.factored = true;
}

template <Real T>
Solution<T> WeightedLeastSquares<T>::solve(ConstMatrixView<T> b) {
  State& s = *state_;
  if (!s.factored) throw InvalidArgument("wls: factor(d) must succeed before solve(b)");
  if (b.rows() != s.n) throw ShapeMismatch("wls: A and b", s.m, s.n, b.rows(), b.cols());
  if (b.device() != s.A.device())
    throw InvalidArgument(fmt::format("wls: A is on {} but b is on {}", s.A.device().name(), b.device().name()));
  const kernels::Magnitude magnitude = kernels::dense<T>(b.device()).magnitude(b);
  if (s.options.check_finite && magnitude.first_non_finite) require_finite(b, "b");
  // b near 1 too (x scales with it): b of 1e308 overflowed A D^2 b
  const int b_exponent = scaling::exponent_for(magnitude.max_abs);
  const Matrix<T> b_scaled = b_exponent != 0 ? scaling::normalized_copy<T>(b, b_exponent) : Matrix<T>();
  if (b_exponent != 0) b = b_scaled.view();
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
  r.rcond = s.rcond;
  r.notes.insert(r.notes.end(), s.notes.begin(), s.notes.end());
  if (b_exponent != 0)
    r.notes.push_back(fmt::format("b was scaled by 2^{} (exactly) for the computation", -b_exponent));
  // c = A D^2 b
  Matrix<T> db = Matrix<T>::copy_of(b);
  scale_rows<T>(s.d2, db.view());
  Matrix<T> c = Matrix<T>::uninitialized(m, k, device);
  gemm<T>(Op::None, Op::None, T(1), s.A.view(), db.view(), T(0), c.view());

  if (s.options.precision != Precision::Mixed) {
    out.x = std::move(c);
    s.native->solve(out.x.view());
  } else if (s.high_factored) {  // factor() judged C32 too ill-conditioned to refine from
    if constexpr (std::is_same_v<T, double>) {
      out.x = std::move(c);
      s.high->solve(out.x.view());
      r.stop = StopReason::FellBack;
    }
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
      const index info = s.high->factor();
      if (info > 0) throw NotPositiveDefinite(info, "A D^2 A^T is singular to the float64 factorization (Cholesky)");
      s.high_factored = true;
      std::vector<std::string> notes;
      s.rcond = r.rcond = judged_rcond(*s.high, s.c_norm, n, device, s.options.allow_ill_conditioned, notes);
      r.notes.insert(r.notes.end(), notes.begin(), notes.end());
      out.x = std::move(c);
      s.high->solve(out.x.view());
    }
  }
  policy::require_finite_result<T>(out.x.view(), "wls: x");
  r.seconds = clock.seconds();
  if (s.options.compute_residual) {
    // the least-squares test on the weighted problem min || D (b - A^T x) ||: A_w = (A D)^T, b_w = D b,
    // computed on the host; above lstsq's bound the backward-stable method, QR on that problem, solves
    // instead, and if it too misses the bound no x is returned
    const Matrix<T> a = s.A.to(Device::cpu()), bh = Matrix<T>::copy_of(b).to(Device::cpu());
    const Matrix<double> w = s.w.to(Device::cpu());
    Matrix<T> aw(n, m), bw(n, k);
    for (index i = 0; i < n; ++i) {
      for (index p = 0; p < m; ++p) aw(i, p) = static_cast<T>(a(p, i) * w(i, 0));
      for (index j = 0; j < k; ++j) bw(i, j) = static_cast<T>(bh(i, j) * w(i, 0));
    }
    const double e = s.options.precision == Precision::Mixed ? std::numeric_limits<double>::epsilon()
                                                              : std::numeric_limits<T>::epsilon();
    r.scaled_residual = scaled_residual_lstsq<T>(aw.view(), out.x.to(Device::cpu()).view(), bw.view(), e);
    if (!(r.scaled_residual <= policy::kResidualBound)) {
      const double first = r.scaled_residual;
      Solution<T> qr = lstsq<T>(aw.view(), bw.view(), {.compute_residual = true});
      r.scaled_residual = qr.report.scaled_residual;
      if (!(r.scaled_residual <= policy::kResidualBound))
        throw NumericalError(fmt::format("wls: the scaled residual {:.3g} exceeds linv's bound {:g} for the normal "
                                         "equations and {:.3g} for QR on the weighted problem; no result is returned",
                                         first, policy::kResidualBound, r.scaled_residual));
      r.method = Method::QR;
      r.notes.push_back(fmt::format("scaled residual {:.3g} above the bound {:g}: solved by QR on the weighted "
                                    "problem instead",
                                    first, policy::kResidualBound));
      out.x = qr.x.to(device);
    }
  }
  scaling::scale_back(out.x, b_exponent - s.a_exponent, "solution x");  // x of 2^e A is 2^-e x
  return out;
}

std::string_view to_string(WlsForm f) {
  switch (f) {
    case WlsForm::Normal: return "normal";
    case WlsForm::Design: return "statsmodels";
  }
  return "?";
}

WlsForm parse_wls_form(std::string_view name) {
  return parse_name(name, "wls form", {WlsForm::Normal, WlsForm::Design});
}

namespace {

// The design form's X, w and y checked in the caller's names, then X^T: A of the normal form, on X's device.
template <Real T>
Matrix<T> design_as_a(ConstMatrixView<T> X, ConstMatrixView<T> w, ConstMatrixView<T> y, const WlsOptions& o) {
  if (o.weights != Weights::Squared)
    throw InvalidArgument("wls, statsmodels form: w holds the weights of the squared residuals, as statsmodels "
                          "takes them (Weights::Squared); plain weights belong to the normal form");
  if (X.rows() < X.cols())
    throw InvalidArgument(fmt::format("wls, statsmodels form: X ({}) has fewer observations (rows) than parameters "
                                      "(columns); for A m x n with m <= n use the normal form",
                                      shape_string(X.rows(), X.cols())));
  if (w.rows() * w.cols() != X.rows() || (w.rows() != 1 && w.cols() != 1))
    throw ShapeMismatch("wls, statsmodels form: X and w (one weight per observation, a row of X)", X.rows(), X.cols(),
                        w.rows(), w.cols());
  if (y.rows() != X.rows())
    throw ShapeMismatch("wls, statsmodels form: X and y (one row of y per observation, a row of X)", X.rows(),
                        X.cols(), y.rows(), y.cols());
  Matrix<T> A = Matrix<T>::uninitialized(X.cols(), X.rows(), X.device());
  kernels::vectors<T>(X.device()).transpose(X, A.view());
  return A;
}

}  // namespace

template <Real T>
Solution<T> wls(ConstMatrixView<T> A, ConstMatrixView<T> d, ConstMatrixView<T> b, const WlsOptions& options) {
  const bool design = options.form == WlsForm::Design;
  // every input checked before any work: a NaN in b is named even where the weights make C singular
  if (options.check_finite) require_finite(b, design ? "y" : "b");
  Matrix<T> X_transposed;  // the design form's A
  if (design) {
    if (options.check_finite) require_finite(A, "X");
    X_transposed = design_as_a(A, d, b, options);
    A = X_transposed.view();
  }
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
