function test_solve()
% linv_solve against Octave's backslash (in double), both classes: X is within n eps cond(A) of the
% true solution in each, so the two differ by at most twice that (relative to X).
  for cls = {'double', 'single'}
    c = cls{1};
    for n = [1 5 100 400]
      A = cast(randn(n), c);
      for k = [1 3]
        B = cast(randn(n, k), c);
        [X, report] = linv_solve(A, B);
        what = sprintf('%s n=%d k=%d', c, n, k);
        check_true(isa(X, c) && isequal(size(X), [n k]), '%s: X is %s %s', what, class(X), mat2str(size(X)));
        check_close(X, double(A) \ double(B), 2 * n * eps(c) * cond(double(A), 1), what);
        check_true(strcmp(report.operation, 'solve'), '%s: the report is not a solve''s', what);
      end
    end
  end
  A = randn(300);
  b = randn(300, 1);
  check_close(linv_solve(A, b, 'precision', 'mixed'), A \ b, 2 * 300 * eps * cond(A, 1), 'mixed');
  check_close(linv_solve(A, b, 'method', 'calu'), A \ b, 2 * 300 * eps * cond(A, 1), 'calu');
  % an option's name in any case, as MATLAB's own functions take them
  check_close(linv_solve(A, b, 'METHOD', 'lu', 'Device', 'cpu'), A \ b, 2 * 300 * eps * cond(A, 1), 'case');
end
