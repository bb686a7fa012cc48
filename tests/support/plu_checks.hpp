// Shared by the CPU and GPU tests of plu and plu_solve (tests/cpu/test_plu.cpp, tests/cuda/test_dense_gpu.cpp):
// factors made on a device solve op(A) X = B there to a backward-stable residual, for both ops, over sizes
// around cuSOLVER's and the few-right-hand-side kernels' block sizes; an exactly zero pivot is named, bad
// pivots, shapes and NaN are refused.
#pragma once

#include <gtest/gtest.h>

#include <complex>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "linv/accuracy.hpp"
#include "linv/dense.hpp"
#include "linv/errors.hpp"
#include "support/dense_checks.hpp"
#include "support/testing.hpp"

namespace linv::testing {

template <Scalar T>
Matrix<T> random_scalars(index m, index n, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  Matrix<T> a(m, n);
  for (index e = 0; e < a.size(); ++e) {
    if constexpr (Complex<T>)
      a.data()[e] = T(static_cast<real_t<T>>(u(g)), static_cast<real_t<T>>(u(g)));
    else
      a.data()[e] = static_cast<T>(u(g));
  }
  return a;
}

// A^H (A^T for real T): what Op::Transpose solves with.
template <Scalar T>
Matrix<T> adjoint_of(ConstMatrixView<T> A) {
  Matrix<T> h(A.cols(), A.rows());
  for (index j = 0; j < A.cols(); ++j)
    for (index i = 0; i < A.rows(); ++i) {
      if constexpr (Complex<T>)
        h(j, i) = std::conj(A(i, j));
      else
        h(j, i) = A(i, j);
    }
  return h;
}

template <Scalar T>
void expect_plu_solves(Device device, std::uint64_t salt) {
  const double e = std::numeric_limits<real_t<T>>::epsilon();
  for (index n : {1, 2, 7, 31, 32, 33, 65, 257})
    for (index k : {1, 3, 40}) {
      const auto seed = case_seed(salt++);
      LINV_TRACE_SEED(seed);
      SCOPED_TRACE("n = " + std::to_string(n) + ", k = " + std::to_string(k));
      std::mt19937_64 g(seed);
      const Matrix<T> a = random_scalars<T>(n, n, g), b = random_scalars<T>(n, k, g);
      const PluFactors<T> f = plu<T>(a.to(device).view());
      ASSERT_EQ(f.lu.device(), device);
      ASSERT_EQ(std::ssize(f.pivots), n);
      EXPECT_EQ(f.zero_pivot, 0);
      const Matrix<T> on = b.to(device);
      for (const Op op : {Op::None, Op::Transpose}) {
        const Matrix<T> x = plu_solve<T>(f.lu.view(), f.pivots, on.view(), op).to(Device::cpu());
        const Matrix<T> system = op == Op::None ? Matrix<T>::copy_of(a.view()) : adjoint_of<T>(a.view());
        EXPECT_LE(scaled_residual_solve<T>(system.view(), x.view(), b.view(), e), kResidualThreshold)
            << (op == Op::None ? "A X = B" : "A^H X = B");
      }
    }
  // A zero column: U's second pivot is exactly zero, named by plu and refused by plu_solve.
  std::mt19937_64 g(case_seed(salt));
  Matrix<T> z = random_scalars<T>(4, 4, g);
  for (index i = 0; i < 4; ++i) z(i, 1) = T(0);
  const PluFactors<T> f = plu<T>(z.to(device).view());
  EXPECT_EQ(f.zero_pivot, 2);
  const Matrix<T> b = random_scalars<T>(4, 2, g).to(device);
  try {
    (void)plu_solve<T>(f.lu.view(), f.pivots, b.view());
    ADD_FAILURE() << "a zero pivot solved";
  } catch (const SingularMatrix& error) {
    EXPECT_EQ(error.pivot(), 2);
  }
  const PluFactors<T> good = plu<T>(random_scalars<T>(4, 4, g).to(device).view());
  std::vector<int> bad = good.pivots;
  bad[3] = 5;
  EXPECT_THROW((void)plu_solve<T>(good.lu.view(), bad, b.view()), InvalidArgument);
  bad.pop_back();
  EXPECT_THROW((void)plu_solve<T>(good.lu.view(), bad, b.view()), InvalidArgument);
  const Matrix<T> wrong = random_scalars<T>(3, 2, g).to(device);
  EXPECT_THROW((void)plu_solve<T>(good.lu.view(), good.pivots, wrong.view()), InvalidArgument);
  Matrix<T> nan = random_scalars<T>(4, 2, g);
  nan(2, 1) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
  EXPECT_THROW((void)plu_solve<T>(good.lu.view(), good.pivots, nan.to(device).view()), NonFiniteInput);
}

}  // namespace linv::testing
