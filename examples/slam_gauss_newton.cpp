// A Gauss-Newton loop with a bordered Jacobian, as in direct visual SLAM: one global motion parameter
// theta (updated additively) and one inverse depth per image patch rho_s (updated multiplicatively,
// rho <- rho exp(delta), so it stays positive). Each residual row belongs to one patch, so the
// Jacobian has one dense column and one segment column per patch, and each step is
// delta = -J^+ r computed by linv::slam::pinv_apply without forming J^+.
//
// The synthetic model: r_i = y_i - (sin(theta a_i) + rho_s b_i + theta rho_s c_i), with y made from
// known true parameters, so the loop must recover them. Built and run by the tests.
#include <linv/linv.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

int main() {
  using linv::index;
  const index rows = 60000, patches = 400;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  // patch s covers rows [s rows / patches, (s + 1) rows / patches)
  std::vector<index> starts, lengths;
  for (index s = 0; s < patches; ++s) {
    starts.push_back(s * rows / patches);
    lengths.push_back((s + 1) * rows / patches - s * rows / patches);
  }
  std::vector<double> a(rows), b(rows), c(rows), y(rows), rho_true(patches), rho(patches);
  const double theta_true = 0.7;
  for (index s = 0; s < patches; ++s) rho_true[s] = 0.5 + 0.5 * (uniform(rng) + 1);
  for (index i = 0, s = 0; i < rows; ++i) {
    if (s + 1 < patches && i == starts[s + 1]) ++s;
    a[i] = uniform(rng);
    b[i] = uniform(rng);
    c[i] = uniform(rng);
    y[i] = std::sin(theta_true * a[i]) + rho_true[s] * b[i] + theta_true * rho_true[s] * c[i];
  }
  // a start near the truth
  double theta = 0.5;
  for (index s = 0; s < patches; ++s) rho[s] = rho_true[s] * (1 + 0.2 * uniform(rng));

  double total_seconds = 0;
  int iteration = 0;
  double norm = 0;
  for (; iteration < 20; ++iteration) {
    linv::Matrix<double> dense(rows, 1), r(rows, 1);
    std::vector<double> values(rows);
    norm = 0;
    for (index i = 0, s = 0; i < rows; ++i) {
      if (s + 1 < patches && i == starts[s + 1]) ++s;
      r(i, 0) = y[i] - (std::sin(theta * a[i]) + rho[s] * b[i] + theta * rho[s] * c[i]);
      norm += r(i, 0) * r(i, 0);
      // derivatives of the model (minus those of r): d/dtheta, and d/d(log rho) = rho d/drho
      dense(i, 0) = a[i] * std::cos(theta * a[i]) + rho[s] * c[i];
      values[i] = rho[s] * (b[i] + theta * c[i]);
    }
    norm = std::sqrt(norm);
    if (norm < 1e-10) break;
    const auto start = std::chrono::steady_clock::now();
    const linv::slam::BorderedJacobian<double> J(std::move(dense), starts, lengths, values);
    // model Jacobian J and residual r = y - model: the Gauss-Newton step is J^+ r
    const linv::Matrix<double> delta = linv::slam::pinv_apply<double>(J, r.view()).x;
    total_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    theta += delta(0, 0);                                             // additive
    for (index s = 0; s < patches; ++s) rho[s] *= std::exp(delta(1 + s, 0));  // multiplicative
  }
  double worst = std::abs(theta - theta_true);
  for (index s = 0; s < patches; ++s) worst = std::max(worst, std::abs(rho[s] - rho_true[s]) / rho_true[s]);
  std::printf("Gauss-Newton on %lld residuals, %lld parameters: %d iterations, ||r|| %.2e, largest relative "
              "parameter error %.2e, %.3f ms per step (form J, J^+ r)\n",
              static_cast<long long>(rows), static_cast<long long>(patches + 1), iteration, norm, worst,
              1e3 * total_seconds / std::max(iteration, 1));
  return worst < 1e-8 ? 0 : 1;
}
