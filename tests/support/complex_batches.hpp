// Shared by the CPU and GPU tests of complex stacks (tests/cpu/test_complex.cpp, tests/cuda/test_complex_gpu.cpp):
// linv::batched::inv and solve of complex64/complex128 stacks on a device, each regular member to the
// single-matrix residual bound, singular members (a zero column: a zero first pivot; a zero last row: a
// zero pivot found last, after elimination has run over it) named and left NaN, over orders around the batched kernels' limits
// (32, 64, and 65, which goes matrix by matrix), and NaN input named by its matrix and entry.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <string>

#include "linv/accuracy.hpp"
#include "linv/batched.hpp"
#include "linv/errors.hpp"
#include "support/complex_matrices.hpp"
#include "support/dense_checks.hpp"
#include "support/testing.hpp"

namespace linv::testing {

template <Complex T>
void expect_complex_batches(Device device, std::uint64_t salt) {
  const double e = std::numeric_limits<real_t<T>>::epsilon();
  for (index n : {1, 2, 3, 7, 16, 31, 32, 33, 64, 65})
    for (index count : {1, 5, 37}) {
      const auto seed = case_seed(salt++);
      LINV_TRACE_SEED(seed);
      SCOPED_TRACE("n = " + std::to_string(n) + ", count = " + std::to_string(count));
      std::mt19937_64 g(seed);
      Matrix<T> a = random_complex<T>(n, n * count, g);
      for (index k = 0; k < count; ++k)
        for (index i = 0; i < n; ++i) a(i, k * n + i) += T(static_cast<real_t<T>>(n));  // well conditioned
      const bool zero = count > 1, dependent = count > 2 && n > 1;
      if (zero)  // matrix 1: its first column zero, an exactly zero first pivot
        for (index i = 0; i < n; ++i) a(i, n) = T(0);
      if (dependent)  // matrix 2: its last row zero (multipliers of zero keep it exactly zero)
        for (index j = 0; j < n; ++j) a(n - 1, 2 * n + j) = T(0);
      const index nrhs = 2;
      const Matrix<T> b = random_complex<T>(n, nrhs * count, g);
      const batched::Result<T> inverse = batched::inv<T>(a.to(device).view());
      const batched::Result<T> solved = batched::solve<T>(a.to(device).view(), b.to(device).view());
      const Matrix<T> x = inverse.x.to(Device::cpu()), y = solved.x.to(Device::cpu());
      for (const batched::Status* status : {&inverse.status, &solved.status}) {
        std::vector<index> listed;
        for (const batched::Singular& s : status->singular) listed.push_back(s.matrix);
        std::vector<index> expected;
        if (zero) expected.push_back(1);
        if (dependent) expected.push_back(2);
        EXPECT_EQ(listed, expected);
        if (zero && !status->singular.empty()) {
          EXPECT_EQ(status->singular.front().pivot, 1);
        }
      }
      for (index k = 0; k < count; ++k) {
        SCOPED_TRACE("matrix " + std::to_string(k));
        const ConstMatrixView<T> ak = a.view().block(0, k * n, n, n);
        const ConstMatrixView<T> xk = x.view().block(0, k * n, n, n), yk = y.view().block(0, k * nrhs, n, nrhs);
        if ((zero && k == 1) || (dependent && k == 2)) {
          EXPECT_TRUE(std::isnan(xk(0, 0).real()) && std::isnan(yk(0, 0).real())) << "a refused member is NaN";
          continue;
        }
        EXPECT_LE(scaled_residual_inverse<T>(ak, xk, e), kResidualThreshold);
        EXPECT_LE(scaled_residual_solve<T>(ak, yk, b.view().block(0, k * nrhs, n, nrhs), e), kResidualThreshold);
      }
    }
  // NaN in a member: refused, naming the matrix (from 0) and the entry
  std::mt19937_64 g(case_seed(salt));
  Matrix<T> a = random_complex<T>(3, 12, g);
  a(2, 7) = T(0, std::numeric_limits<real_t<T>>::quiet_NaN());
  try {
    (void)batched::inv<T>(a.to(device).view());
    ADD_FAILURE() << "NaN inverted";
  } catch (const NonFiniteInput& error) {
    EXPECT_TRUE(contains(error.what(), "matrix 2 of the stack")) << error.what();
  }
}

}  // namespace linv::testing
