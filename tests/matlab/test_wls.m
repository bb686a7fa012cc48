function test_wls()
% linv_wls against the normal equations solved by Octave, (A D^2 A') \ (A D^2 b), in double: within
% m eps cond(A D^2 A') of each other, for every storage, weighting and precision.
  m = 40;
  n = 120;
  A = randn(m, n);
  d = 0.5 + rand(n, 1);  % D's diagonal
  b = randn(n, 1);
  C = A * diag(d .^ 2) * A';
  reference = C \ (A * (d .^ 2 .* b));
  bound = 2 * m * eps * cond(C, 1);
  check_close(linv_wls(A, d .^ 2, b), reference, bound, 'squared weights');
  check_close(linv_wls(A, d, b, 'weights', 'plain'), reference, bound, 'plain weights');
  check_close(linv_wls(A, d .^ 2, b', 'storage', 'packed'), reference, bound, 'packed storage, b a row');
  [x, report] = linv_wls(A, d .^ 2, b, 'precision', 'mixed');
  check_close(x, reference, bound, 'mixed');
  check_true(strcmp(report.operation, 'wls'), 'the report is not a wls''s');
  xs = linv_wls(single(A), single(d .^ 2), single(b));
  check_true(isa(xs, 'single'), 'single data gave %s', class(xs));
  check_close(xs, reference, 2 * m * eps('single') * cond(C, 1), 'single');
end
