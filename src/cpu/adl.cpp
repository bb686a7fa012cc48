// ADL's passes on the CPU (src/kernels/fmri.hpp): the products by OpenBLAS, and one fused pass over S
// per coefficient step (update, soft threshold and the objective's terms in one read and write of S).
#include <algorithm>
#include <cmath>

#include "common/fmri_rules.hpp"
#include "common/lapack.hpp"
#include "common/parallel.hpp"
#include "cpu/backend.hpp"
#include "linv/dense.hpp"

namespace linv::cpu {
namespace {

// Columns per block of a pass over S or X. Each block's sums are kept apart and added in block order,
// so that the objective does not depend on how many threads ran.
constexpr index kColumnsPerBlock = 2048;
constexpr index kBlocksPerThread = 2;

// Runs block(first, last) -> Sums over [0, N) in column blocks across threads and returns the sums
// added in block order. Sums needs operator+=.
template <class Sums, class Block>
Sums blockwise(index N, const Block& block) {
  const index blocks = (N + kColumnsPerBlock - 1) / kColumnsPerBlock;
  std::vector<Sums> partial(static_cast<std::size_t>(blocks));
  detail::in_parallel(blocks, kBlocksPerThread, [&](index first, index last) {
    for (index b = first; b < last; ++b)
      partial[static_cast<std::size_t>(b)] = block(b * kColumnsPerBlock, std::min(N, (b + 1) * kColumnsPerBlock));
  });
  Sums total{};
  for (const Sums& s : partial) total += s;
  return total;
}

struct Sum {
  double value = 0;
  Sum& operator+=(const Sum& o) {
    value += o.value;
    return *this;
  }
};

struct CoefficientSums : kernels::AdlCoefficientSums {
  CoefficientSums& operator+=(const CoefficientSums& o) {
    xs += o.xs, sgs += o.sgs, l1 += o.l1, l1_new += o.l1_new;
    return *this;
  }
};

// One coefficient step, given W = G S: S := soft(S + (DtX - W) * inv_c, tau), in place, one pass.
template <Real T>
kernels::AdlCoefficientSums coefficient_pass(ConstMatrixView<T> DtX, ConstMatrixView<T> W, MatrixView<T> S, T inv_c, T tau) {
  const index K = S.rows();
  return blockwise<CoefficientSums>(S.cols(), [&](index first, index last) {
    CoefficientSums sums;
    for (index j = first; j < last; ++j)
      for (index r = 0; r < K; ++r) {
        const T s = S(r, j), w = W(r, j), x = DtX(r, j);
        sums.xs += static_cast<double>(x) * s;
        sums.sgs += static_cast<double>(s) * w;
        sums.l1 += std::abs(static_cast<double>(s));
        const T a = s + (x - w) * inv_c, excess = std::abs(a) - tau;
        const T updated = excess > 0 ? std::copysign(excess, a) : T(0);
        S(r, j) = updated;
        sums.l1_new += std::abs(static_cast<double>(updated));
      }
    return sums;
  });
}


template <Real T>
double dot(ConstMatrixView<T> A, ConstMatrixView<T> B) {
  double s = 0;
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < A.rows(); ++i) s += static_cast<double>(A(i, j)) * B(i, j);
  return s;
}

// out := A^T A (op Transpose) or A A^T (op None): syrk's lower triangle, mirrored to the upper one (the
// products read both).
template <Real T>
void gram_of(Op op, ConstMatrixView<T> A, Matrix<T>& out) {
  lapack::syrk<T>(Uplo::Lower, op, T(1), A, T(0), out.view());
  symmetrize_from_lower<T>(out.view());
}

template <Real T>
class CpuAdl final : public kernels::AdlSteps<T> {
 public:
  CpuAdl(ConstMatrixView<T> X, Matrix<T> D0, ConstMatrixView<T> task, kernels::AdlConstraints constraints,
         const kernels::GridSum* sum)
      : X_(X), task_(task), constraints_(constraints), sum_(sum), D_(std::move(D0)), S_(D_.cols(), X.cols()),
        DtX_(Matrix<T>::uninitialized(D_.cols(), X.cols())), W_(Matrix<T>::uninitialized(D_.cols(), X.cols())),
        G_(D_.cols(), D_.cols()), H_(D_.cols(), D_.cols()), P_(X.rows(), D_.cols()), V_(X.rows(), D_.cols()) {}

  double norm_squared() override {
    const index n = X_.rows();
    double total = blockwise<Sum>(X_.cols(), [&](index first, index last) {
                     Sum s;
                     for (index j = first; j < last; ++j)
                       for (index i = 0; i < n; ++i) s.value += static_cast<double>(X_(i, j)) * X_(i, j);
                     return s;
                   }).value;
    sum(&total, 1);
    return total;
  }

  void gram(Matrix<T>& G) override {
    gram_of<T>(Op::Transpose, D_.view(), G_);
    std::copy_n(G_.data(), G_.size(), G.data());
  }

  void coefficient_steps(T inv_c, T tau, int steps, std::vector<kernels::AdlCoefficientSums>& sums, Matrix<T>& H) override {
    lapack::gemm<T>(Op::Transpose, Op::None, T(1), D_.view(), X_, T(0), DtX_.view());
    sums.clear();
    for (int step = 0; step < steps; ++step) {
      lapack::gemm<T>(Op::None, Op::None, T(1), G_.view(), S_.view(), T(0), W_.view());
      sums.push_back(coefficient_pass<T>(DtX_.view(), W_.view(), S_.view(), inv_c, tau));
    }
    if (sum_) {  // the steps' sums, packed for one sum over the job
      std::vector<double> packed;
      for (const kernels::AdlCoefficientSums& s : sums) packed.insert(packed.end(), {s.xs, s.sgs, s.l1, s.l1_new});
      sum(packed.data(), packed.size());
      for (std::size_t s = 0; s < sums.size(); ++s)
        sums[s] = {packed[4 * s], packed[4 * s + 1], packed[4 * s + 2], packed[4 * s + 3]};
    }
    lapack::syrk<T>(Uplo::Lower, Op::None, T(1), S_.view(), T(0), H_.view());
    sum(H_.data(), H_.size());
    symmetrize_from_lower<T>(H_.view());  // after the sum: exactly symmetric whatever order it added in
    std::copy_n(H_.data(), H_.size(), H.data());
    lapack::gemm<T>(Op::None, Op::Transpose, T(1), X_, S_.view(), T(0), P_.view());
    sum(P_.data(), P_.size());
  }

  void dictionary_steps(T inv_c, int steps, std::vector<kernels::AdlDictionarySums>& sums) override {
    sums.clear();
    for (int step = 0; step < steps; ++step) {
      lapack::gemm<T>(Op::None, Op::None, T(1), D_.view(), H_.view(), T(0), V_.view());
      kernels::AdlDictionarySums s;
      for (index j = 0; j < D_.cols(); ++j)
        for (index i = 0; i < D_.rows(); ++i) {
          const T d = D_(i, j), p = P_(i, j), v = V_(i, j);
          s.dp += static_cast<double>(d) * p;
          s.dv += static_cast<double>(d) * v;
          D_(i, j) = d + (p - v) * inv_c;
        }
      fmri::rules::project_dictionary<T>(D_.view(), task_, constraints_.c, constraints_.c_d);
      sums.push_back(s);
    }
    lapack::gemm<T>(Op::None, Op::None, T(1), D_.view(), H_.view(), T(0), V_.view());
    sums.push_back({dot<T>(D_.view(), P_.view()), dot<T>(D_.view(), V_.view())});
  }

  Matrix<T> take_dictionary() override { return std::move(D_); }
  Matrix<T> take_codes() override { return std::move(S_); }

 private:
  // values := their sum over the job's processes (nothing alone).
  template <class V>
  void sum(V* values, std::size_t count) const {
    if (sum_) sum_->sum(values, count, nullptr);
  }

  ConstMatrixView<T> X_, task_;
  kernels::AdlConstraints constraints_;
  const kernels::GridSum* sum_;
  Matrix<T> D_, S_, DtX_, W_, G_, H_, P_, V_;
};

}  // namespace


template <Real T>
std::unique_ptr<kernels::AdlSteps<T>> adl_steps(ConstMatrixView<T> X, Matrix<T> D0, ConstMatrixView<T> task,
                                                kernels::AdlConstraints constraints, const kernels::GridSum* sum) {
  return std::make_unique<CpuAdl<T>>(X, std::move(D0), task, constraints, sum);
}

template std::unique_ptr<kernels::AdlSteps<float>> adl_steps<float>(ConstMatrixView<float>, Matrix<float>,
                                                                    ConstMatrixView<float>, kernels::AdlConstraints,
                                                                    const kernels::GridSum*);
template std::unique_ptr<kernels::AdlSteps<double>> adl_steps<double>(ConstMatrixView<double>, Matrix<double>,
                                                                      ConstMatrixView<double>, kernels::AdlConstraints,
                                                                      const kernels::GridSum*);

}  // namespace linv::cpu
