// Weighted least squares through A D^2 A^T (include/linv/wls.hpp). CPU only in this version.
#include "linv/wls.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/dense.hpp"
#include "linv/accuracy.hpp"
#include "linv/errors.hpp"

namespace linv {
namespace {

namespace k = kernels::cpu;

// C = A D^2 A^T in type U, lower triangle (full) or RFP (packed), factored by Cholesky.
template <class U>
class Factor {
 public:
  Factor(index m, index n, Storage storage, bool forms = true)
      : storage_(storage), m_(m), scaled_(forms ? m : 0, forms ? n : 0) {
    if (storage == Storage::Full)
      full_ = Matrix<U>(m, m);
    else
      packed_.resize(static_cast<std::size_t>(m * (m + 1) / 2));
  }

  // Forms C from A (m x n, any type) and the diagonal of D^2.
  template <class V>
  void form(ConstMatrixView<V> A, const std::vector<double>& d2) {
    // C = (A D)(A D)^T: one symmetric rank-n update of a single triangle
    for (index j = 0; j < A.cols(); ++j) {
      const double w = std::sqrt(d2[static_cast<std::size_t>(j)]);
      for (index i = 0; i < m_; ++i) scaled_(i, j) = static_cast<U>(static_cast<double>(A(i, j)) * w);
    }
    scale_ = 0;
    for (index j = 0; j < A.cols(); ++j)
      for (index i = 0; i < m_; ++i) scale_ += static_cast<double>(scaled_(i, j)) * static_cast<double>(scaled_(i, j));
    if (storage_ == Storage::Full)
      k::syrk<U>(Uplo::Lower, Op::None, U(1), scaled_.view(), U(0), full_.view());
    else
      k::sfrk<U>(U(1), scaled_.view(), U(0), packed_.data());
  }

  // C := `formed`'s C rounded to U (same storage; formed not yet factored).
  template <class W>
  void round_from(const Factor<W>& formed) {
    scale_ = formed.scale();
    if (storage_ == Storage::Full) {
      for (index j = 0; j < m_; ++j)
        for (index i = j; i < m_; ++i) full_(i, j) = static_cast<U>(formed.full()(i, j));
    } else {
      for (std::size_t t = 0; t < packed_.size(); ++t) packed_[t] = static_cast<U>(formed.packed()[t]);
    }
  }

  // Cholesky in place; LAPACK's info.
  int factor() {
    return storage_ == Storage::Full ? k::potrf<U>(Uplo::Lower, full_.view()) : k::pftrf<U>(m_, packed_.data());
  }

  const Matrix<U>& full() const { return full_; }
  const std::vector<U>& packed() const { return packed_; }

  // B := C^-1 B
  void solve(MatrixView<U> B) const {
    if (storage_ == Storage::Full)
      k::potrs<U>(Uplo::Lower, full_.view(), B);
    else
      k::pftrs<U>(m_, packed_.data(), B);
  }

  // ||A D||_F^2, an upper bound of ||C||_2 within a factor of rank: the scale of C.
  double scale() const { return scale_; }

 private:
  Storage storage_;
  index m_;
  Matrix<U> scaled_;
  Matrix<U> full_;
  std::vector<U> packed_;
  double scale_ = 0;
};

double norm2(const double* x, index n) {
  double s = 0;
  for (index i = 0; i < n; ++i) s += x[i] * x[i];
  return std::sqrt(s);
}

}  // namespace

template <Real T>
struct WeightedLeastSquares<T>::State {
  State(ConstMatrixView<T> a, const WlsOptions& o)
      : A(Matrix<T>::copy_of(a)), options(o), m(a.rows()), n(a.cols()) {}
  Matrix<T> A;
  WlsOptions options;
  index m, n;
  std::vector<double> d2;
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
  if (A.device().is_cuda())
    throw InvalidArgument("weighted least squares runs on the CPU only in this version; the matrix is on " +
                          A.device().name());
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
  if (s.options.check_finite) require_finite(d, "d");
  s.d2.assign(static_cast<std::size_t>(s.n), 0.0);
  const T* w = d.data();
  for (index i = 0; i < s.n; ++i) {
    const double v = static_cast<double>(d.rows() == 1 ? w[i * d.ld()] : w[i]);
    if (s.options.weights == Weights::Squared && v < 0)
      throw InvalidArgument(fmt::format("wls: weight {} is negative ({}); d holds the diagonal of D^2 (use "
                                        "--weights d for the diagonal of D)",
                                        i + 1, v));
    s.d2[static_cast<std::size_t>(i)] = s.options.weights == Weights::Squared ? v : v * v;
  }
  int info = 0;
  if (s.options.precision == Precision::Mixed) {
    // C formed in float64 and rounded once: a better float32 factor than one accumulated in float32, at
    // the price of a float64 rank-n update (no dearer than float32 on GPUs with float64 tensor cores).
    if (!s.high) s.high = std::make_unique<Factor<double>>(s.m, s.n, s.options.storage);
    if (!s.low) s.low = std::make_unique<Factor<float>>(s.m, s.n, s.options.storage, /*forms=*/false);
    s.high->template form<T>(s.A.view(), s.d2);
    s.high_factored = false;
    s.low->round_from(*s.high);
    info = s.low->factor();
  } else {
    if (!s.native) s.native = std::make_unique<Factor<T>>(s.m, s.n, s.options.storage);
    s.native->template form<T>(s.A.view(), s.d2);
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
  if (s.options.check_finite) require_finite(b, "b");
  const auto start = std::chrono::steady_clock::now();
  const index m = s.m, n = s.n, k = b.cols();
  Solution<T> out;
  SolveReport& r = out.report;
  r.operation = "wls";
  r.method = fmt::format("normal equations A D^2 A^T, Cholesky ({} storage)",
                         s.options.storage == Storage::Full ? "full" : "rectangular full packed");
  r.device = "cpu";
  r.precision = s.options.precision == Precision::Mixed ? "mixed (float32 factorization, float64 refinement)"
                                                        : std::string(type_name<T>());
  // c = A D^2 b
  Matrix<T> db(n, k);
  for (index j = 0; j < k; ++j)
    for (index i = 0; i < n; ++i) db(i, j) = static_cast<T>(s.d2[static_cast<std::size_t>(i)] * b(i, j));
  Matrix<T> c(m, k);
  k::gemm<T>(Op::None, Op::None, T(1), s.A.view(), db.view(), T(0), c.view());

  if (s.options.precision != Precision::Mixed) {
    out.x = std::move(c);
    s.native->solve(out.x.view());
  } else if constexpr (std::is_same_v<T, double>) {
    // The paper's Algorithm 1, column by column of b.
    out.x = Matrix<double>(m, k);
    std::vector<float> low(static_cast<std::size_t>(m));
    Matrix<double> t(n, 1), rcol(m, 1);
    const double tolerance = s.options.tolerance > 0 ? s.options.tolerance
                                                      : static_cast<double>(m) * std::numeric_limits<double>::epsilon() *
                                                            std::max(s.low->scale(), 1e-300);
    int worst_iterations = 0;
    double worst_error = 0;
    bool all_converged = true;
    for (index j = 0; j < k; ++j) {
      MatrixView<double> x = out.x.view().block(0, j, m, 1);
      Matrix<float> x32(m, 1);
      for (index i = 0; i < m; ++i) x32(i, 0) = static_cast<float>(c(i, j));
      s.low->solve(x32.view());
      for (index i = 0; i < m; ++i) x(i, 0) = x32(i, 0);
      int it = 0;
      double error = 0;
      for (;; ++it) {
        // r = A D^2 b - A D^2 A^T x, in float64 from A: t = D^2 (b - A^T x), r = A t
        for (index i = 0; i < n; ++i) t(i, 0) = b(i, j);
        k::gemm<double>(Op::Transpose, Op::None, -1.0, s.A.view(), x, 1.0, t.view());
        for (index i = 0; i < n; ++i) t(i, 0) *= s.d2[static_cast<std::size_t>(i)];
        k::gemm<double>(Op::None, Op::None, 1.0, s.A.view(), t.view(), 0.0, rcol.view());
        const double xn = norm2(x.data(), m);
        error = xn > 0 ? norm2(rcol.data(), m) / xn : norm2(rcol.data(), m);
        if (error <= tolerance || it == s.options.max_iterations) break;
        for (index i = 0; i < m; ++i) x32(i, 0) = static_cast<float>(rcol(i, 0));
        s.low->solve(x32.view());
        for (index i = 0; i < m; ++i) x(i, 0) += x32(i, 0);
      }
      worst_iterations = std::max(worst_iterations, it);
      worst_error = std::max(worst_error, error);
      all_converged = all_converged && error <= tolerance;
    }
    r.iterations = worst_iterations;
    r.notes.push_back(fmt::format("final ||r|| / ||x|| {:.3g} (tolerance {:.3g})", worst_error, tolerance));
    if (all_converged) {
      r.stop_reason = "refinement converged";
    } else {
      // float64 instead, said in the report
      r.stop_reason = "fell back to float64";
      r.notes.push_back(fmt::format("float32 refinement did not reach the tolerance in {} iterations: solved with a "
                                    "float64 factorization instead",
                                    s.options.max_iterations));
      if (!s.high_factored) {
        const int info = s.high->factor();
        if (info > 0) throw NotPositiveDefinite(info, "A D^2 A^T is singular to the float64 factorization (Cholesky)");
        s.high_factored = true;
      }
      out.x = std::move(c);
      s.high->solve(out.x.view());
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (s.options.compute_residual) {
    // the least-squares test on the scaled problem min || D (b - A^T x) ||: A_w = (A D)^T, b_w = D b
    Matrix<T> aw(n, m), bw(n, k);
    for (index i = 0; i < n; ++i) {
      const double w = std::sqrt(s.d2[static_cast<std::size_t>(i)]);
      for (index p = 0; p < m; ++p) aw(i, p) = static_cast<T>(s.A(p, i) * w);
      for (index j = 0; j < k; ++j) bw(i, j) = static_cast<T>(b(i, j) * w);
    }
    r.scaled_residual = scaled_residual_lstsq<T>(aw.view(), out.x.view(), bw.view(),
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
