function test_omp()
% linv_omp against OMP written out in Octave (omp_reference): the same atoms, and coefficients within
% T eps cond(D_S)^2 of each other for each signal's support S (Batch-OMP solves through the Gram matrix
% D_S' D_S, whose condition is cond(D_S)^2); in both classes.
  T = 64;
  K = 128;
  N = 50;
  T0 = 5;
  [X, D] = sparse_model(T, K, N, T0, 1e-3);  % a residual left at T0 atoms: every signal takes all T0
  reference = omp_reference(D, X, T0);
  for cls = {'double', 'single'}
    c = cls{1};
    [G, report] = linv_omp(cast(D, c), cast(X, c), T0);
    check_true(issparse(G) && isequal(size(G), [K N]), '%s: G is not a %dx%d sparse matrix', c, K, N);
    check_true(strcmp(report.method, 'batch-omp'), '%s: method %s', c, report.method);
    for j = 1:N
      support = find(reference(:, j));
      check_true(isequal(find(G(:, j)), support), '%s: signal %d took other atoms than the reference', c, j);
      check_close(full(G(support, j)), reference(support, j), 2 * T * eps(c) * cond(D(:, support)) ^ 2, ...
                  sprintf('%s signal %d', c, j));
    end
  end
end
