// The README's C++ example, built and run by the tests so it stays true.
#include <linv/linv.hpp>

#include <cstdio>
#include <string>

int main() {
  auto A = linv::generate<double>(linv::MatrixKind::SPD, 500, {.seed = 42});
  auto b = linv::random_uniform<double>(500, 1, 7);

  auto lu = linv::LU<double>(A);  // factor once ...
  auto x = lu.solve(b);           // ... reuse
  double logdet = lu.determinant().log_abs;

  auto [Ai, report] = linv::inv<double>(A, {.method = linv::Method::Auto, .compute_residual = true});
  std::printf("log det %.3f, x[0] %.6f, method %s (%s), scaled residual %.2f, rcond %.2e\n", logdet, x(0, 0),
              std::string(linv::to_string(report.method)).c_str(), report.method_reason.c_str(), report.scaled_residual,
              report.rcond);

  try {
    linv::Cholesky<double> chol(linv::Matrix<double>::from_rows({{1, 2}, {2, 1}}));
  } catch (const linv::NotPositiveDefinite& e) {
    std::printf("not positive definite at minor %lld: %s\n", static_cast<long long>(e.minor()), e.what());
  }
  return report.method == linv::Method::Cholesky ? 0 : 1;
}
