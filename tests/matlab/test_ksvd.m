function test_ksvd()
% linv_ksvd: unit-norm atoms, codes that are OMP's (omp_reference) against the returned dictionary, and
% a report whose last rmse is the residual Octave computes from D and G; in both classes.
  T = 20;
  K = 30;
  N = 400;
  T0 = 3;
  X = sparse_model(T, K, N, T0, 0.01);
  for cls = {'double', 'single'}
    c = cls{1};
    [D, G, report] = linv_ksvd(cast(X, c), K, T0, 'iterations', 5, 'seed', 3);
    check_true(isa(D, c) && isequal(size(D), [T K]) && issparse(G) && isequal(size(G), [K N]), '%s: shapes', c);
    check_close(sqrt(sum(double(D) .^ 2)), ones(1, K), 2 * T * eps(c), [c ' atom norms']);
    check_true(all(sum(G ~= 0) <= T0), '%s: a signal has more than T0 atoms', c);
    reference = omp_reference(D, cast(X, c), T0);
    for j = 1:N
      support = find(reference(:, j));
      check_true(isequal(find(G(:, j)), support), '%s: signal %d took other atoms than OMP', c, j);
      check_close(full(G(support, j)), reference(support, j), 2 * T * eps(c) * cond(double(D(:, support))) ^ 2, ...
                  sprintf('%s codes of signal %d', c, j));
    end
    rmse = sqrt(norm(double(X) - double(D) * G, 'fro') ^ 2 / (T * N));
    check_true(numel(report.rmse) == 6, '%s: %d rmse values for 5 iterations', c, numel(report.rmse));
    check_close(report.rmse(end), rmse, 2 * T0 * T * eps(c) * norm(double(X), 'fro') / (sqrt(T * N) * rmse), ...
                [c ' final rmse']);
  end
end
