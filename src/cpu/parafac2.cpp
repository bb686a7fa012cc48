// PARAFAC2's passes on the CPU (src/kernels/fmri.hpp), on OpenBLAS and LAPACK.
//
// Where the time goes. An iteration needs each slab only through Z_k = X_k X_k^T M_k: the P-step's polar
// factor of Q_k = X_k^T M_k is P_k = Q_k S_k^(-1/2) with S_k = Q_k^T Q_k = M_k^T Z_k (F x F), and the
// projected slab is Y_k = X_k P_k = Z_k S_k^(-1/2). So a slab wider than it is tall (J_k > I, fMRI's
// voxels against time points) is reduced once to its Gram matrix G_k = X_k X_k^T (I x I, no larger than
// the slab) and the iterations never touch the data again: an iteration costs O(K I^2 F) instead of the
// O(I J F) of the two products X_k^T M_k and X_k P_k per slab. Narrower slabs keep those two products.
// P_k itself is formed once, after the last iteration.
//
// Accuracy. Taking the polar factor from S_k = Q_k^T Q_k squares Q_k's condition number; a thin SVD of
// Q_k would not, but needs the data. So G_k, S_k and everything else in the iterations are float64, also
// for float32 data (whose float64 products are exact): the squaring then costs eps_64 kappa^2, below
// float32's own eps_32 kappa for any kappa < 1e8, and below 1e-8 for float64 data with kappa < 1e4. The
// loss is first-order insensitive to errors in P_k (P_k minimises it), and the returned P_k come from a
// thin SVD of Q_k (LAPACK gesdd), orthonormal to working precision whatever Q_k's conditioning.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "common/lapack.hpp"
#include "cpu/backend.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"

namespace linv::cpu {
namespace {

// One slab as the iterations use it, in float64: its Gram matrix when the slab is wider than tall,
// otherwise the slab itself.
struct Slab {
  Matrix<double> gram;           // X_k X_k^T (I x I), or empty
  Matrix<double> converted;      // a float32 slab in float64 when it is used directly
  ConstMatrixView<double> data;  // X_k in float64 when gram is empty

  // Z := X_k X_k^T M; `scratch` holds at least J_k x F.
  void apply(ConstMatrixView<double> M, MatrixView<double> Z, Matrix<double>& scratch) const {
    if (!gram.empty()) {
      lapack::gemm<double>(Op::None, Op::None, 1.0, gram.view(), M, 0.0, Z);
      return;
    }
    MatrixView<double> XtM = scratch.block(0, 0, data.cols(), M.cols());
    lapack::gemm<double>(Op::Transpose, Op::None, 1.0, data, M, 0.0, XtM);
    lapack::gemm<double>(Op::None, Op::None, 1.0, data, XtM, 0.0, Z);
  }
};

// X X^T in float64, both triangles.
template <Real T>
Matrix<double> gram_of(ConstMatrixView<T> X) {
  const index I = X.rows(), J = X.cols();
  Matrix<double> G(I, I);
  if constexpr (std::is_same_v<T, double>) {
    lapack::syrk<double>(Uplo::Lower, Op::None, 1.0, X, 0.0, G.view());
  } else {
    // float32 columns converted a block at a time (about 32 MiB), so the data is never copied whole
    const index chunk = std::max<index>(1, (index{1} << 22) / I);
    Matrix<double> block = Matrix<double>::uninitialized(I, std::min(chunk, J));
    for (index j0 = 0; j0 < J; j0 += chunk) {
      const index n = std::min(chunk, J - j0);
      for (index j = 0; j < n; ++j)
        for (index i = 0; i < I; ++i) block(i, j) = X(i, j0 + j);
      lapack::syrk<double>(Uplo::Lower, Op::None, 1.0, block.block(0, 0, I, n), j0 == 0 ? 0.0 : 1.0, G.view());
    }
  }
  symmetrize_from_lower<double>(G.view());
  return G;
}

template <Real T>
class CpuParafac2 final : public kernels::Parafac2Steps<T> {
 public:
  CpuParafac2(const std::vector<ConstMatrixView<T>>& slabs, const kernels::SlabShare& share)
      : slabs_(slabs), share_(share), I_(slabs[0].rows()) {
    index widest_direct = 0;
    for (const ConstMatrixView<T>& X : slabs) {
      Slab s;
      if (X.cols() > I_) {
        s.gram = gram_of<T>(X);
      } else {
        if constexpr (std::is_same_v<T, double>) {
          s.data = X;
        } else {
          s.converted = Matrix<T>::copy_of(X).template cast<double>();
          s.data = s.converted.view();
        }
        widest_direct = std::max(widest_direct, X.cols());
      }
      slab_.push_back(std::move(s));
    }
    widest_direct_ = widest_direct;
  }

  Matrix<double> gram_sum() override {
    Matrix<double> total(I_, I_);
    for (const Slab& s : slab_) {
      if (!s.gram.empty()) {
        for (index e = 0; e < total.size(); ++e) total.data()[e] += s.gram.data()[e];
      } else {
        lapack::syrk<double>(Uplo::Lower, Op::None, 1.0, s.data, 1.0, total.view());
      }
    }
    // the direct slabs added to the lower triangle only: mirror it (the Grams are symmetric)
    symmetrize_from_lower<double>(total.view());
    sum(total.data(), total.size());
    return total;
  }

  void iterate(const Matrix<double>& A, const Matrix<double>& B, const Matrix<double>& krv, Matrix<double>& A_new,
               Matrix<double>& W, int iteration) override {
    const index F = A.cols(), K = static_cast<index>(slab_.size()), first = share_.first * F;
    if (Y_.empty()) {
      Y_ = Matrix<double>(I_, F * K);
      M_ = Matrix<double>(I_, F), Z_ = Matrix<double>(I_, F), S_ = Matrix<double>(F, F), root_ = Matrix<double>(F, F);
      scratch_ = Matrix<double>(widest_direct_, F);
      W_failed_ = Matrix<double>(W.size() + 1, 1);
    }
    // P-step, implicitly: Y_k = X_k P_k = Z_k S_k^(-1/2). A failure is counted, not thrown, so that every
    // process still takes part in the sums below and raises it alike.
    double failed = 0;
    for (index k = 0; k < K; ++k) {
      lapack::gemm<double>(Op::None, Op::None, 1.0, A.view(), B.view().block(0, first + k * F, F, F), 0.0, M_.view());
      slab_[static_cast<std::size_t>(k)].apply(M_.view(), Z_.view(), scratch_);
      lapack::gemm<double>(Op::Transpose, Op::None, 1.0, M_.view(), Z_.view(), 0.0, S_.view());
      if (!lapack::inverse_root(S_, root_.view())) ++failed;
      lapack::gemm<double>(Op::None, Op::None, 1.0, Z_.view(), root_.view(), 0.0, Y_.block(0, k * F, I_, F));
    }
    // A_new = Y krv over every process's slabs; W's rows of the other processes' slabs are zero here, so
    // the sum assembles W exactly
    lapack::gemm<double>(Op::None, Op::None, 1.0, Y_.view(), krv.view().block(first, 0, F * K, F), 0.0, A_new.view());
    sum(A_new.data(), A_new.size());
    std::fill_n(W_failed_.data(), W.size(), 0.0);
    MatrixView<double> all(W_failed_.data(), W.rows(), F, W.rows());
    lapack::gemm<double>(Op::Transpose, Op::None, 1.0, Y_.view(), A_new.view(), 0.0, all.block(first, 0, F * K, F));
    W_failed_.data()[W.size()] = failed;
    sum(W_failed_.data(), W_failed_.size());
    if (W_failed_.data()[W.size()] > 0) throw kernels::parafac2_p_step_failure("LAPACK gesdd", iteration, W_failed_.data()[W.size()]);
    std::copy_n(W_failed_.data(), W.size(), W.data());
  }

  std::vector<Matrix<T>> polar_factors(const Matrix<double>& A, const Matrix<double>& B, double& nuclear) override {
    // P_k = the polar factor of Q_k = X_k^T M_k by a thin SVD Q_k = U s V^T: P_k = U V^T
    const index F = A.cols();
    Matrix<double> M(I_, F);
    Matrix<T> Mt = Matrix<T>::uninitialized(I_, F);
    std::vector<Matrix<T>> P;
    nuclear = 0;
    for (std::size_t k = 0; k < slabs_.size(); ++k) {
      const ConstMatrixView<T>& X = slabs_[k];
      const index J = X.cols();
      lapack::gemm<double>(Op::None, Op::None, 1.0, A.view(),
                           B.view().block(0, (share_.first + static_cast<index>(k)) * F, F, F), 0.0, M.view());
      for (index e = 0; e < M.size(); ++e) Mt.data()[e] = static_cast<T>(M.data()[e]);
      Matrix<T> Q = Matrix<T>::uninitialized(J, F), U = Matrix<T>::uninitialized(J, F), VT = Matrix<T>::uninitialized(F, F);
      lapack::gemm<T>(Op::Transpose, Op::None, T(1), X, Mt.view(), T(0), Q.view());
      std::vector<T> s(static_cast<std::size_t>(F));
      if (lapack::gesdd<T>(Q.view(), s.data(), U.view(), VT.view()) != 0)
        throw NoConvergence("PARAFAC2's final P-step (LAPACK gesdd)", 0, 0.0, 0.0,
                            fmt::format("the SVD of X_{}^T A diag(c_{}) H^T did not converge", k, k));
      for (T v : s) nuclear += static_cast<double>(v);
      Matrix<T> Pk = Matrix<T>::uninitialized(J, F);
      lapack::gemm<T>(Op::None, Op::None, T(1), U.view(), VT.view(), T(0), Pk.view());
      P.push_back(std::move(Pk));
    }
    return P;
  }

 private:
  // values := their sum over the share's processes.
  void sum(double* values, index count) const {
    if (share_.sum) share_.sum->sum(values, static_cast<std::size_t>(count), nullptr);
  }

  std::vector<ConstMatrixView<T>> slabs_;
  kernels::SlabShare share_;
  index I_, widest_direct_ = 0;
  std::vector<Slab> slab_;
  Matrix<double> Y_, M_, Z_, S_, root_, scratch_, W_failed_;  // W_failed_: W, then the failures
};

}  // namespace

template <Real T>
std::unique_ptr<kernels::Parafac2Steps<T>> parafac2_steps(const std::vector<ConstMatrixView<T>>& slabs,
                                                          const kernels::SlabShare& share) {
  return std::make_unique<CpuParafac2<T>>(slabs, share);
}

template std::unique_ptr<kernels::Parafac2Steps<float>> parafac2_steps<float>(const std::vector<ConstMatrixView<float>>&,
                                                                              const kernels::SlabShare&);
template std::unique_ptr<kernels::Parafac2Steps<double>> parafac2_steps<double>(
    const std::vector<ConstMatrixView<double>>&, const kernels::SlabShare&);

}  // namespace linv::cpu
