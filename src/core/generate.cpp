// Test matrices. Generated in float64 and rounded to the requested type, so a float32 matrix of a kind
// is the float64 one rounded; the same seed gives the same matrix on every platform (mt19937_64 is
// fully specified, and the conversion to [0, 1) below is ours, not the library's distribution).
#include "linv/generate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "common/names.hpp"
#include "kernels/backend.hpp"
#include "linv/errors.hpp"

namespace linv {
namespace {

// The host's dense family: these matrices are made in host memory.
const kernels::Dense<double>& host() { return kernels::dense<double>(Device::cpu()); }

class Uniform {
 public:
  explicit Uniform(std::uint64_t seed) : rng_(seed) {}
  double operator()() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }  // [0, 1)
  double between(double lo, double hi) { return lo + (hi - lo) * (*this)(); }
  std::uint64_t integer(std::uint64_t bound) { return rng_() % bound; }

 private:
  std::mt19937_64 rng_;
};


Matrix<double> uniform(index rows, index cols, Uniform& u, double lo, double hi) {
  Matrix<double> m = Matrix<double>::uninitialized(rows, cols);
  for (index j = 0; j < cols; ++j)
    for (index i = 0; i < rows; ++i) m(i, j) = u.between(lo, hi);
  return m;
}

Matrix<double> random_orthogonal(index n, Uniform& u) {
  Matrix<double> q = uniform(n, n, u, -1, 1);
  host().orthonormalize(q.view());
  return q;
}

// Geometric spread from 1 down to 1/cond.
double spread(index i, index n, double cond) {
  return n > 1 ? std::pow(cond, -static_cast<double>(i) / static_cast<double>(n - 1)) : 1.0;
}

// Every row's diagonal entry larger than the sum of the others' magnitudes: strictly dominant.
void make_dominant(Matrix<double>& a) {
  for (index i = 0; i < a.rows(); ++i) {
    double s = 0;
    for (index j = 0; j < a.cols(); ++j)
      if (j != i) s += std::abs(a(i, j));
    a(i, i) = s + 1.0;
  }
}

Matrix<double> generate_double(MatrixKind kind, index n, const GenerateOptions& o) {
  Uniform u(o.seed);
  switch (kind) {
    case MatrixKind::Random:
      return uniform(n, n, u, -1, 1);
    case MatrixKind::Identity:
      return Matrix<double>::identity(n);
    case MatrixKind::Hollow: {
      Matrix<double> a = uniform(n, n, u, -1, 1);
      for (index i = 0; i < n; ++i) a(i, i) = 0;
      return a;
    }
    case MatrixKind::Band: {
      constexpr index kHalfBand = 3;
      Matrix<double> a(n, n);
      for (index j = 0; j < n; ++j)
        for (index i = std::max<index>(0, j - kHalfBand); i <= std::min(n - 1, j + kHalfBand); ++i)
          a(i, j) = u.between(-1, 1);
      make_dominant(a);
      return a;
    }
    case MatrixKind::Sparse: {
      Matrix<double> a(n, n);
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < n; ++i)
          if (u() < 0.05) a(i, j) = u.between(-1, 1);
      make_dominant(a);
      return a;
    }
    case MatrixKind::SPD: {
      const double cond = o.cond > 0 ? o.cond : 1e3;
      Matrix<double> w = random_orthogonal(n, u);  // Q diag(sqrt(lambda)), then A = W W^T
      for (index j = 0; j < n; ++j) {
        const double s = std::sqrt(spread(j, n, cond));
        for (index i = 0; i < n; ++i) w(i, j) *= s;
      }
      Matrix<double> a(n, n);
      host().syrk(Uplo::Lower, Op::None, 1.0, w.view(), 0.0, a.view());
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < j; ++i) a(i, j) = a(j, i);  // exactly symmetric
      return a;
    }
    case MatrixKind::IllCond: {
      const double cond = o.cond > 0 ? o.cond : 1e12;
      Matrix<double> uq = random_orthogonal(n, u), v = random_orthogonal(n, u);
      for (index j = 0; j < n; ++j) {
        const double s = spread(j, n, cond);
        for (index i = 0; i < n; ++i) uq(i, j) *= s;
      }
      Matrix<double> a(n, n);
      host().gemm(Op::None, Op::Transpose, 1.0, uq.view(), v.view(), 0.0, a.view());
      return a;
    }
    case MatrixKind::Singular: {
      // Rank n-1: one row repeats another exactly. Elimination turns the copy into an exact zero row,
      // so the failure is reported at a definite pivot instead of being lost in rounding.
      Matrix<double> a = uniform(n, n, u, -1, 1);
      if (n >= 2) {
        const index src = static_cast<index>(u.integer(static_cast<std::uint64_t>(n)));
        index dst = static_cast<index>(u.integer(static_cast<std::uint64_t>(n - 1)));
        if (dst >= src) ++dst;
        for (index j = 0; j < n; ++j) a(dst, j) = a(src, j);
      } else if (n == 1) {
        a(0, 0) = 0;
      }
      return a;
    }
  }
  throw InvalidArgument("unknown matrix kind");
}

}  // namespace

std::string_view to_string(MatrixKind kind) {
  switch (kind) {
    case MatrixKind::Random: return "random";
    case MatrixKind::SPD: return "spd";
    case MatrixKind::Band: return "band";
    case MatrixKind::Hollow: return "hollow";
    case MatrixKind::Sparse: return "sparse";
    case MatrixKind::Identity: return "identity";
    case MatrixKind::IllCond: return "illcond";
    case MatrixKind::Singular: return "singular";
  }
  return "?";
}

MatrixKind parse_matrix_kind(std::string_view name) {
  return parse_name(name, "matrix kind",
                    {MatrixKind::Random, MatrixKind::SPD, MatrixKind::Band, MatrixKind::Hollow, MatrixKind::Sparse,
                     MatrixKind::Identity, MatrixKind::IllCond, MatrixKind::Singular});
}

template <Real T>
Matrix<T> generate(MatrixKind kind, index n, const GenerateOptions& options) {
  if (n < 0) throw InvalidArgument(fmt::format("matrix size must be >= 0, got {}", n));
  if (options.cond < 0 || (options.cond > 0 && options.cond < 1))
    throw InvalidArgument(fmt::format("condition number must be >= 1, got {}", options.cond));
  Matrix<double> a = generate_double(kind, n, options);
  if constexpr (std::is_same_v<T, double>)
    return a;
  else
    return a.cast<T>();
}

template <Real T>
Matrix<T> random_uniform(index rows, index cols, std::uint64_t seed, T lo, T hi, Device device) {
  Matrix<T> m = Matrix<T>::uninitialized(rows, cols, device);
  kernels::vectors<T>(device).fill_uniform(m.view(), seed, lo, hi);
  return m;
}

template Matrix<float> generate<float>(MatrixKind, index, const GenerateOptions&);
template Matrix<double> generate<double>(MatrixKind, index, const GenerateOptions&);
template Matrix<float> random_uniform<float>(index, index, std::uint64_t, float, float, Device);
template Matrix<double> random_uniform<double>(index, index, std::uint64_t, double, double, Device);

}  // namespace linv
