function test_complex()
% Complex matrices through linv_inv and linv_solve against Octave's inv and backslash (in double), both
% classes, sizes around 1 and beyond 64: each result within 2 n eps cond(A) of Octave's; a real B with a
% complex A (and the reverse) computed in complex numbers, as MATLAB does; the method names for Hermitian
% and triangular matrices; mixed precision for complex doubles; what complex matrices are refused.
  for cls = {'double', 'single'}
    c = cls{1};
    for n = [1 2 7 65 200]
      A = randn(n) + 1i * randn(n);
      general = cast(A, c);
      hpd = cast(A' * A + n * eye(n), c);
      lower = cast(tril(A) + n * eye(n), c);
      cases = {general, 'lu'; hpd, 'cholesky'; lower, 'triangular'};
      for k = 1:size(cases, 1)
        M = cases{k, 1};
        what = sprintf('complex %s %s n=%d', c, cases{k, 2}, n);
        [X, report] = linv_inv(M);
        % (Octave narrows an array whose imaginary parts are all zero to a real one, as A' * A of 1 x 1)
        check_true(isa(X, c) && isreal(X) == isreal(M), '%s: the inverse is %s (real: %d)', what, class(X), isreal(X));
        check_close(X, inv(double(M)), 2 * n * eps(c) * cond(double(M), 1), what);
        check_true(n == 1 || strcmp(report.method, cases{k, 2}), '%s: method %s', what, report.method);
        B = cast(randn(n, 3) + 1i * randn(n, 3), c);
        check_close(linv_solve(M, B), double(M) \ double(B), 2 * n * eps(c) * cond(double(M), 1), [what ' solve']);
      end
      % one real operand: complex arithmetic, in the class of both
      Br = cast(randn(n, 2), c);
      X = linv_solve(general, Br);
      check_true(isa(X, c) && ~isreal(X), 'complex A, real B (%s): X is %s', c, class(X));
      check_close(X, double(general) \ double(Br), 2 * n * eps(c) * cond(double(general), 1), 'complex A, real B');
      Ar = cast(randn(n) + n * eye(n), c);
      Bc = cast(randn(n, 2) + 1i * randn(n, 2), c);
      check_close(linv_solve(Ar, Bc), double(Ar) \ double(Bc), 2 * n * eps(c) * cond(double(Ar), 1), 'real A, complex B');
    end
  end
  % 'precision', 'mixed': complex single factors refined to complex double, Octave's answer to n eps cond
  A = randn(60) + 1i * randn(60) + 8 * eye(60);
  B = randn(60, 2) + 1i * randn(60, 2);
  [X, report] = linv_solve(A, B, 'precision', 'mixed');
  check_close(X, A \ B, 2 * 60 * eps * cond(A, 1), 'complex mixed solve');
  check_true(~isempty(strfind(report.precision, 'complex64')), 'complex mixed: the report says %s', report.precision);
  check_error(@() linv_inv(single(A), 'precision', 'mixed'), 'linv:invalidArgument', 'complex128');
  check_error(@() linv_inv([1 1i; 1 1i]), 'linv:singular', 'pivot');
  check_error(@() linv_inv([1 NaN * 1i; 0 1]), 'linv:nonFinite', 'row 1, column 2');
  check_error(@() linv_inv(randn(3) + 1i, 'method', 'gauss-jordan'), 'linv:invalidArgument', 'auto, lu, cholesky');
  check_error(@() linv_solve(randn(3) + 1i, single(ones(3, 1))), 'linv:invalidArgument', 'one class');
  check_error(@() linv_wls(randn(2, 5) + 1i, ones(5, 1), ones(5, 1)), 'linv:invalidArgument', 'linv_inv and linv_solve');
end
