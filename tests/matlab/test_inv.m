function test_inv()
% linv_inv against Octave's inv (computed in double) for every method on the matrices it suits, in both
% classes: each inverse is within n eps cond(A) of the true one, so the two differ by at most twice that.
  for cls = {'double', 'single'}
    c = cls{1};
    for n = [1 2 7 64 300]
      A = randn(n);
      general = cast(A, c);
      spd = cast(A' * A + n * eye(n), c);
      upper = cast(triu(A) + n * eye(n), c);
      dominant = cast(A + 2 * n * eye(n), c);
      cases = {general, 'auto'; general, 'lu'; general, 'calu'; general, 'rbt'; general, 'gauss-jordan';
               spd, 'cholesky'; spd, 'cholesky-gets'; upper, 'triangular'; dominant, 'gauss-seidel'};
      for k = 1:size(cases, 1)
        M = cases{k, 1};
        [X, report] = linv_inv(M, 'method', cases{k, 2});
        what = sprintf('%s %s n=%d', c, cases{k, 2}, n);
        check_true(isa(X, c), '%s: the inverse is %s', what, class(X));
        % Gauss-Seidel stops at a backward error of max(n, 16) eps, its tolerance, rather than n eps
        order = n;
        if strcmp(cases{k, 2}, 'gauss-seidel'), order = max(n, 16); end
        check_close(X, inv(double(M)), 2 * order * eps(c) * cond(double(M), 1), what);
        check_true(strcmp(report.operation, 'inv') && isfinite(report.scaled_residual), ...
                   '%s: the report is not an inverse''s', what);
      end
    end
  end
  % mixed precision: a double result from a lower-precision factorization, as accurate as double's
  A = randn(200);
  [X, report] = linv_inv(A, 'precision', 'mixed');
  check_close(X, inv(A), 2 * 200 * eps * cond(A, 1), 'mixed');
  check_true(~isempty(strfind(report.precision, 'mixed')), 'mixed: the report says %s', report.precision);
  % a matrix singular to working precision is refused unless allowed, then comes back with a note
  S = [1 1; 1 1 + 2 * eps];  % rcond about eps / 2: singular to working precision, no zero pivot
  [X, report] = linv_inv(S, 'allowIllConditioned', true);
  check_true(all(size(X) == [2 2]) && ~isempty(report.notes), 'allowIllConditioned: no note in the report');
end
