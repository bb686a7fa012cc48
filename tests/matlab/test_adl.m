function test_adl()
% linv_adl: the objective Octave computes from D and S, ||X - D S||_F^2 + lambda ||S||_1, is the report's
% last one to rounding (T N eps ||X||^2 relative); the atoms keep to their balls; assisted atoms stay
% within sqrt(c) of the task's time courses.
  T = 30;
  N = 200;
  K = 6;
  X = randn(T, N);
  for cls = {'double', 'single'}
    c = cls{1};
    [D, S, report] = linv_adl(cast(X, c), K, 'maxIterations', 15, 'seed', 1);
    check_true(isa(D, c) && isequal(size(D), [T K]) && isequal(size(S), [K N]), '%s: shapes', c);
    f = norm(X - double(D) * double(S), 'fro') ^ 2 + report.lambda * sum(abs(double(S(:))));
    check_close(report.objective(end), f, 2 * T * K * eps(c) * norm(X, 'fro') ^ 2 / f, [c ' objective']);
    check_true(all(diff(report.objective) <= 2 * T * K * eps(c) * norm(X, 'fro') ^ 2), '%s: f increased', c);
    check_true(all(sqrt(sum(double(D) .^ 2)) <= 1 + 2 * T * eps(c)), '%s: a free atom left its ball', c);
  end
  task = randn(T, 2);
  D = linv_adl(X, K, 'task', task, 'c', 0.25, 'maxIterations', 10);
  check_true(all(sqrt(sum((D(:, 1:2) - task) .^ 2)) <= 0.5 * (1 + 2 * T * eps)), 'an assisted atom left its ball');
end
