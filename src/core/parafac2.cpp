// PARAFAC2 by alternating least squares on the CPU (include/linv/parafac2.hpp).
//
// Where the time goes. An iteration needs each slab only through Z_k = X_k X_k^T M_k, with
// M_k = A diag(c_k) H^T (I x F): the P-step's polar factor of Q_k = X_k^T M_k is P_k = Q_k S_k^(-1/2)
// with S_k = Q_k^T Q_k = M_k^T Z_k (F x F), and the projected slab is Y_k = X_k P_k = Z_k S_k^(-1/2). So a
// slab wider than it is tall (J_k > I, fMRI's voxels against time points) is reduced once to its Gram
// matrix G_k = X_k X_k^T (I x I, no larger than the slab) and the iterations never touch the data again:
// an iteration costs O(K I^2 F) instead of the O(I J F) of the two products X_k^T M_k and X_k P_k per
// slab. Narrower slabs keep those two products. P_k itself is formed once, after the last iteration.
//
// Accuracy. Taking the polar factor from S_k = Q_k^T Q_k squares Q_k's condition number; a thin SVD of
// Q_k would not, but needs the data. So G_k, S_k and everything else in the iterations are float64, also
// for float32 data (whose float64 products are exact): the squaring then costs eps_64 kappa^2, below
// float32's own eps_32 kappa for any kappa < 1e8, and below 1e-8 for float64 data with kappa < 1e4. The
// loss is first-order insensitive to errors in P_k (P_k minimises it), and the returned P_k come from a
// thin SVD of Q_k (LAPACK gesdd), orthonormal to working precision whatever Q_k's conditioning.
#include "linv/parafac2.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>

#include "kernels/dense.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"

namespace linv::fmri {
namespace {

namespace kc = kernels::cpu;

constexpr double kEps = std::numeric_limits<double>::epsilon();

// One slab as the iterations use it, in float64: its Gram matrix when the slab is wider than tall,
// otherwise the slab itself.
struct Slab {
  Matrix<double> gram;           // X_k X_k^T (I x I), or empty
  Matrix<double> converted;      // a float32 slab in float64 when it is used directly
  ConstMatrixView<double> data;  // X_k in float64 when gram is empty

  // Z := X_k X_k^T M; `scratch` holds at least J_k x F.
  void apply(ConstMatrixView<double> M, MatrixView<double> Z, Matrix<double>& scratch) const {
    if (!gram.empty()) {
      kc::gemm<double>(Op::None, Op::None, 1.0, gram.view(), M, 0.0, Z);
      return;
    }
    MatrixView<double> XtM = scratch.block(0, 0, data.cols(), M.cols());
    kc::gemm<double>(Op::Transpose, Op::None, 1.0, data, M, 0.0, XtM);
    kc::gemm<double>(Op::None, Op::None, 1.0, data, XtM, 0.0, Z);
  }
};

// X X^T in float64, both triangles.
template <Real T>
Matrix<double> gram_of(ConstMatrixView<T> X) {
  const index I = X.rows(), J = X.cols();
  Matrix<double> G(I, I);
  if constexpr (std::is_same_v<T, double>) {
    kc::syrk<double>(Uplo::Lower, Op::None, 1.0, X, 0.0, G.view());
  } else {
    // float32 columns converted a block at a time (about 32 MiB), so the data is never copied whole
    const index chunk = std::max<index>(1, (index{1} << 22) / I);
    Matrix<double> block = Matrix<double>::uninitialized(I, std::min(chunk, J));
    for (index j0 = 0; j0 < J; j0 += chunk) {
      const index n = std::min(chunk, J - j0);
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < I; ++i) block(i, j) = X(i, j0 + j);
      kc::syrk<double>(Uplo::Lower, Op::None, 1.0, block.block(0, 0, I, n), j0 == 0 ? 0.0 : 1.0, G.view());
    }
  }
  symmetrize_from_lower<double>(G.view());
  return G;
}

Matrix<double> cross(ConstMatrixView<double> X) {  // X^T X
  Matrix<double> G(X.cols(), X.cols());
  kc::gemm<double>(Op::Transpose, Op::None, 1.0, X, X, 0.0, G.view());
  return G;
}

Matrix<double> hadamard(const Matrix<double>& a, const Matrix<double>& b) {
  Matrix<double> out = Matrix<double>::uninitialized(a.rows(), a.cols());
  for (index e = 0; e < a.size(); ++e) out.data()[e] = a.data()[e] * b.data()[e];
  return out;
}

// X := X V^-1 for the symmetric positive semidefinite V (F x F): Cholesky, or, when V is singular (a
// component collapsed to zero), the minimum-norm least-squares solution, as parafac2.m's pinv gives.
void solve_right(MatrixView<double> X, const Matrix<double>& V) {
  Matrix<double> L = V.clone();
  if (kc::potrf<double>(Uplo::Lower, L.view()) == 0) {
    kc::trsm<double>(kc::Side::Right, Uplo::Lower, Op::Transpose, Diag::NonUnit, 1.0, L.view(), X);
    kc::trsm<double>(kc::Side::Right, Uplo::Lower, Op::None, Diag::NonUnit, 1.0, L.view(), X);
    return;
  }
  const index F = V.rows(), n = X.rows();
  Matrix<double> B(F, n);  // V X^T = R^T
  for (index i = 0; i < n; ++i)
    for (index f = 0; f < F; ++f) B(f, i) = X(i, f);
  Matrix<double> A = V.clone();
  kc::gelsy<double>(A.view(), B.view(), static_cast<double>(F) * kEps);
  for (index i = 0; i < n; ++i)
    for (index f = 0; f < F; ++f) X(i, f) = B(f, i);
}

// W := S^(-1/2) for the symmetric positive semidefinite S (F x F) by its SVD, with singular values
// below F eps s_1 left out (a pseudo-inverse root, as parafac2.m's psqrt).
void inverse_root(const Matrix<double>& S, Matrix<double>& W, int iteration) {
  const index F = S.rows();
  Matrix<double> a = S.clone(), U(F, F), VT(F, F);
  std::vector<double> s(static_cast<std::size_t>(F));
  if (kc::gesdd<double>(a.view(), s.data(), U.view(), VT.view()) != 0)
    throw NoConvergence("PARAFAC2's P-step (LAPACK gesdd)", iteration, 0.0, 0.0,
                        "the SVD of an F x F cross-product did not converge");
  const double floor = static_cast<double>(F) * kEps * s[0];
  for (index c = 0; c < F; ++c)
    for (index r = 0; r < F; ++r) {
      double t = 0;
      for (index j = 0; j < F; ++j)
        if (s[static_cast<std::size_t>(j)] > floor) t += VT(j, r) * U(c, j) / std::sqrt(s[static_cast<std::size_t>(j)]);
      W(r, c) = t;
    }
}

struct Factors {
  Matrix<double> A, H, C;  // I x F, F x F, K x F
};

// M := A diag(C(k, :)) H^T, using `scaled` (I x F) as scratch.
void slab_model(const Factors& f, index k, Matrix<double>& scaled, MatrixView<double> M) {
  for (index c = 0; c < f.A.cols(); ++c)
    for (index i = 0; i < f.A.rows(); ++i) scaled(i, c) = f.A(i, c) * f.C(k, c);
  kc::gemm<double>(Op::None, Op::Transpose, 1.0, scaled.view(), f.H.view(), 0.0, M);
}

// One CP-ALS sweep on the projected slabs Y = [Y_1 ... Y_K] (I x F K), updating A, then H, then C (the
// order of parafac2.m). Returns ||X||^2 - 2 <Y, model> + ||model||^2, which is ||X - model||^2 because
// every P_k has orthonormal columns (<X_k, M_k P_k^T> = <Y_k, M_k> and ||M_k P_k^T|| = ||M_k||).
double als_sweep(const Matrix<double>& Y, Factors& f, double norm_squared) {
  const index F = f.H.rows(), K = f.C.rows();
  // A = [sum_k Y_k H diag(c_k)] ((H^T H) * (C^T C))^-1, the sum as Y times the Khatri-Rao product of C and H
  Matrix<double> kr(F * K, F);
  for (index c = 0; c < F; ++c)
    for (index k = 0; k < K; ++k)
      for (index g = 0; g < F; ++g) kr(g + k * F, c) = f.H(g, c) * f.C(k, c);
  kc::gemm<double>(Op::None, Op::None, 1.0, Y.view(), kr.view(), 0.0, f.A.view());
  solve_right(f.A.view(), hadamard(cross(f.H.view()), cross(f.C.view())));
  // W = Y^T A holds every Y_k^T A (F x F blocks), all that H's and C's updates need of Y
  Matrix<double> W(F * K, F);
  kc::gemm<double>(Op::Transpose, Op::None, 1.0, Y.view(), f.A.view(), 0.0, W.view());
  const Matrix<double> AtA = cross(f.A.view());
  // H = [sum_k Y_k^T A diag(c_k)] ((A^T A) * (C^T C))^-1
  for (index c = 0; c < F; ++c)
    for (index g = 0; g < F; ++g) {
      double t = 0;
      for (index k = 0; k < K; ++k) t += W(g + k * F, c) * f.C(k, c);
      f.H(g, c) = t;
    }
  solve_right(f.H.view(), hadamard(AtA, cross(f.C.view())));
  // C(k, :) = diag(A^T Y_k H)^T ((A^T A) * (H^T H))^-1
  Matrix<double> D(K, F);
  for (index c = 0; c < F; ++c)
    for (index k = 0; k < K; ++k) {
      double t = 0;
      for (index g = 0; g < F; ++g) t += W(g + k * F, c) * f.H(g, c);
      D(k, c) = t;
    }
  const Matrix<double> V = hadamard(AtA, cross(f.H.view()));
  f.C = D.clone();
  solve_right(f.C.view(), V);
  // <Y, model> = sum C .* D, ||model||^2 = sum V .* (C^T C)
  const Matrix<double> CtC = cross(f.C.view());
  double inner = 0, model = 0;
  for (index e = 0; e < D.size(); ++e) inner += f.C.data()[e] * D.data()[e];
  for (index e = 0; e < V.size(); ++e) model += V.data()[e] * CtC.data()[e];
  return std::max(0.0, norm_squared - 2 * inner + model);
}

// parafac2.m's scaling and signs: A's and C's columns to unit norm, each with at least as many positive
// as negative entries, H's columns absorbing both. The model is unchanged.
void normalise(Factors& f) {
  const index F = f.H.rows();
  auto column_scale = [](Matrix<double>& X, index c) {
    double norm = 0, sign = 0;
    for (index i = 0; i < X.rows(); ++i) {
      norm += X(i, c) * X(i, c);
      sign += X(i, c) > 0 ? 1 : (X(i, c) < 0 ? -1 : 0);
    }
    norm = std::sqrt(norm);
    const double s = norm > 0 ? (sign >= 0 ? 1 : -1) / norm : 1;
    for (index i = 0; i < X.rows(); ++i) X(i, c) *= s;
    return 1 / s;
  };
  for (index c = 0; c < F; ++c) {
    const double moved = column_scale(f.A, c) * column_scale(f.C, c);
    for (index g = 0; g < F; ++g) f.H(g, c) *= moved;
  }
}

// Components by ||h_f||, largest first.
void sort_components(Factors& f) {
  const index F = f.H.rows();
  std::vector<double> size(static_cast<std::size_t>(F), 0.0);
  for (index c = 0; c < F; ++c)
    for (index g = 0; g < F; ++g) size[static_cast<std::size_t>(c)] += f.H(g, c) * f.H(g, c);
  std::vector<index> order(static_cast<std::size_t>(F));
  std::iota(order.begin(), order.end(), index{0});
  std::stable_sort(order.begin(), order.end(), [&](index a, index b) {
    return size[static_cast<std::size_t>(a)] > size[static_cast<std::size_t>(b)];
  });
  auto permute = [&](Matrix<double>& X) {
    Matrix<double> out = Matrix<double>::uninitialized(X.rows(), X.cols());
    for (index c = 0; c < F; ++c)
      for (index i = 0; i < X.rows(); ++i) out(i, c) = X(i, order[static_cast<std::size_t>(c)]);
    X = std::move(out);
  };
  permute(f.A);
  permute(f.H);
  permute(f.C);
}

template <Real T>
Matrix<double> to_double(ConstMatrixView<T> X) {
  Matrix<double> out = Matrix<double>::uninitialized(X.rows(), X.cols());
  for (index c = 0; c < X.cols(); ++c)
    for (index r = 0; r < X.rows(); ++r) out(r, c) = static_cast<double>(X(r, c));
  return out;
}

template <Real T>
void validate(const std::vector<ConstMatrixView<T>>& slabs, const Parafac2Options& o, const Parafac2Init<T>* init) {
  if (slabs.empty()) throw InvalidArgument("PARAFAC2: no slabs given");
  const index K = static_cast<index>(slabs.size()), I = slabs[0].rows(), F = o.rank;
  if (I < 1) throw InvalidArgument(fmt::format("PARAFAC2: slab 0 is {}: it needs at least one row", shape_string(I, slabs[0].cols())));
  if (F < 1) throw InvalidArgument(fmt::format("PARAFAC2: the rank must be at least 1; got {}", F));
  // P_k's polar factor is unique only when Q_k = X_k^T A diag(c_k) H^T (J_k x F, rank <= I) can have rank F
  if (F > I)
    throw InvalidArgument(fmt::format("PARAFAC2: rank {} exceeds the slabs' {} rows; the rank can be at most "
                                      "min(I, J_k)",
                                      F, I));
  for (index k = 0; k < K; ++k) {
    const ConstMatrixView<T>& X = slabs[static_cast<std::size_t>(k)];
    if (X.rows() != I)
      throw ShapeMismatch(fmt::format("PARAFAC2: slab {} against slab 0 (every slab needs the same rows)", k), X.rows(),
                          X.cols(), I, slabs[0].cols());
    if (X.cols() < F)
      throw InvalidArgument(fmt::format("PARAFAC2: slab {} is {}, with fewer columns than the rank {}: its P_k "
                                        "cannot have {} orthonormal columns",
                                        k, shape_string(X.rows(), X.cols()), F, F));
    require_host(X.device(), "PARAFAC2");
    require_finite(X, fmt::format("slab {}", k).c_str());
  }
  if (o.max_iterations < 0) throw InvalidArgument("PARAFAC2: the iteration count cannot be negative");
  if (!(o.tolerance >= 0)) throw InvalidArgument(fmt::format("PARAFAC2: the tolerance must be >= 0; got {}", o.tolerance));
  if (init) {
    const std::pair<const char*, ConstMatrixView<T>> given[] = {{"A", init->A}, {"H", init->H}, {"C", init->C}};
    const index rows[] = {I, F, K};
    for (std::size_t m = 0; m < 3; ++m) {
      const auto& [name, X] = given[m];
      if (X.rows() != rows[m] || X.cols() != F)
        throw ShapeMismatch(fmt::format("PARAFAC2: the initial {} against {} (A: I x F, H: F x F, C: K x F)", name,
                                        shape_string(rows[m], F)),
                            X.rows(), X.cols(), rows[m], F);
      require_host(X.device(), "PARAFAC2");
      require_finite(X, fmt::format("the initial {}", name).c_str());
    }
  }
}

}  // namespace

const char* to_string(Parafac2Stop stop) {
  return stop == Parafac2Stop::Converged ? "converged" : "iteration limit";
}

template <Real T>
Parafac2Result<T> parafac2(const std::vector<ConstMatrixView<T>>& slabs, const Parafac2Options& o,
                           const Parafac2Init<T>* init) {
  validate(slabs, o, init);
  const index K = static_cast<index>(slabs.size()), I = slabs[0].rows(), F = o.rank;

  std::vector<Slab> slab(static_cast<std::size_t>(K));
  double norm_squared = 0;
  index widest_direct = 0;
  for (index k = 0; k < K; ++k) {
    const ConstMatrixView<T>& X = slabs[static_cast<std::size_t>(k)];
    Slab& s = slab[static_cast<std::size_t>(k)];
    if (X.cols() > I) {
      s.gram = gram_of<T>(X);
      for (index i = 0; i < I; ++i) norm_squared += s.gram(i, i);
      continue;
    }
    if constexpr (std::is_same_v<T, double>) {
      s.data = X;
    } else {
      s.converted = to_double<T>(X);
      s.data = s.converted.view();
    }
    for (index c = 0; c < X.cols(); ++c)
      for (index r = 0; r < I; ++r) norm_squared += s.data(r, c) * s.data(r, c);
    widest_direct = std::max(widest_direct, X.cols());
  }

  Factors f{Matrix<double>(I, F), Matrix<double>::identity(F), Matrix<double>(K, F)};
  std::mt19937_64 rng(o.seed);
  if (init) {
    f = {to_double<T>(init->A), to_double<T>(init->H), to_double<T>(init->C)};
  } else if (o.start == Parafac2Start::Random) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (index e = 0; e < f.A.size(); ++e) f.A.data()[e] = unit(rng);
    for (index e = 0; e < f.C.size(); ++e) f.C.data()[e] = unit(rng);
  } else {
    // A: the leading left singular vectors of [X_1 ... X_K], from sum_k X_k X_k^T
    Matrix<double> total(I, I);
    for (const Slab& s : slab) {
      if (!s.gram.empty()) {
        for (index e = 0; e < total.size(); ++e) total.data()[e] += s.gram.data()[e];
      } else {
        kc::syrk<double>(Uplo::Lower, Op::None, 1.0, s.data, 1.0, total.view());
      }
    }
    symmetrize_from_lower<double>(total.view());  // syrk updates only the lower triangle
    Matrix<double> U(I, I), VT(I, I);
    std::vector<double> sv(static_cast<std::size_t>(I));
    if (kc::gesdd<double>(total.view(), sv.data(), U.view(), VT.view()) != 0)
      throw NoConvergence("PARAFAC2's SVD start (LAPACK gesdd)", 0, 0.0, 0.0,
                          "the SVD of sum_k X_k X_k^T did not converge");
    for (index c = 0; c < F; ++c)
      for (index i = 0; i < I; ++i) f.A(i, c) = U(i, c);
    std::normal_distribution<double> noise(0.0, 0.1);
    for (index e = 0; e < f.C.size(); ++e) f.C.data()[e] = 1.0 + noise(rng);
  }

  Parafac2Result<T> out;
  out.norm_squared = norm_squared;
  Matrix<double> Y(I, F * K), M(I, F), Z(I, F), scaled(I, F), S(F, F), W(F, F), scratch(widest_direct, F);
  const double rounding = static_cast<double>(F) * kEps * norm_squared;
  double previous = 0;
  for (int it = 1; it <= o.max_iterations; ++it) {
    // P-step, implicitly: Y_k = X_k P_k = Z_k S_k^(-1/2)
    for (index k = 0; k < K; ++k) {
      slab_model(f, k, scaled, M.view());
      slab[static_cast<std::size_t>(k)].apply(M.view(), Z.view(), scratch);
      kc::gemm<double>(Op::Transpose, Op::None, 1.0, M.view(), Z.view(), 0.0, S.view());
      inverse_root(S, W, it);
      kc::gemm<double>(Op::None, Op::None, 1.0, Z.view(), W.view(), 0.0, Y.block(0, k * F, I, F));
    }
    const double loss = als_sweep(Y, f, norm_squared);
    normalise(f);
    out.loss_history.push_back(loss);
    out.iterations = it;
    if (o.progress) o.progress(it, loss);
    if (o.tolerance > 0 && it > 1 && std::abs(previous - loss) <= std::max(o.tolerance * previous, rounding)) {
      out.stop = Parafac2Stop::Converged;
      break;
    }
    previous = loss;
  }
  normalise(f);  // a no-op after an iteration; the starting factors' convention when there was none
  sort_components(f);

  // P_k = the polar factor of Q_k = X_k^T M_k by a thin SVD Q_k = U s V^T: P_k = U V^T, and
  // ||X_k - M_k P_k^T||^2 = ||X_k||^2 - 2 sum(s) + ||M_k||^2
  double nuclear = 0, model = 0;
  Matrix<T> Mt = Matrix<T>::uninitialized(I, F);
  out.P.reserve(static_cast<std::size_t>(K));
  for (index k = 0; k < K; ++k) {
    const ConstMatrixView<T>& X = slabs[static_cast<std::size_t>(k)];
    const index J = X.cols();
    slab_model(f, k, scaled, M.view());
    for (index e = 0; e < M.size(); ++e) {
      model += M.data()[e] * M.data()[e];
      Mt.data()[e] = static_cast<T>(M.data()[e]);
    }
    Matrix<T> Q = Matrix<T>::uninitialized(J, F), U = Matrix<T>::uninitialized(J, F), VT = Matrix<T>::uninitialized(F, F);
    kc::gemm<T>(Op::Transpose, Op::None, T(1), X, Mt.view(), T(0), Q.view());
    std::vector<T> s(static_cast<std::size_t>(F));
    if (kc::gesdd<T>(Q.view(), s.data(), U.view(), VT.view()) != 0)
      throw NoConvergence("PARAFAC2's final P-step (LAPACK gesdd)", out.iterations, 0.0, 0.0,
                          fmt::format("the SVD of X_{}^T A diag(c_{}) H^T did not converge", k, k));
    for (T v : s) nuclear += static_cast<double>(v);
    Matrix<T> P = Matrix<T>::uninitialized(J, F);
    kc::gemm<T>(Op::None, Op::None, T(1), U.view(), VT.view(), T(0), P.view());
    out.P.push_back(std::move(P));
  }
  out.loss = std::max(0.0, norm_squared - 2 * nuclear + model);
  out.variance_explained = norm_squared > 0 ? 1 - out.loss / norm_squared : 1.0;
  out.A = f.A.cast<T>();
  out.H = f.H.cast<T>();
  out.C = f.C.cast<T>();
  return out;
}

template Parafac2Result<float> parafac2<float>(const std::vector<ConstMatrixView<float>>&, const Parafac2Options&,
                                               const Parafac2Init<float>*);
template Parafac2Result<double> parafac2<double>(const std::vector<ConstMatrixView<double>>&, const Parafac2Options&,
                                                 const Parafac2Init<double>*);

}  // namespace linv::fmri
