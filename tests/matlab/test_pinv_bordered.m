function test_pinv_bordered()
% linv_pinv_bordered against Octave's pinv (SVD) on a bordered SLAM Jacobian, full and sparse: the
% normal equations' result is within rows eps cond(J)^2 of the pseudoinverse.
  rows = 60;
  J = zeros(rows, 7);
  J(:, 1) = randn(rows, 1);  % the dense (motion) column
  for s = 1:6
    J((s - 1) * 10 + (1:10), 1 + s) = randn(10, 1);  % one segment column per run of 10 rows
  end
  reference = pinv(J);
  bound = 2 * rows * eps * cond(J) ^ 2;
  [P, report] = linv_pinv_bordered(J);
  check_close(P, reference, bound, 'full J');
  check_true(strcmp(report.method, 'bordered-schur'), 'method %s', report.method);
  check_close(linv_pinv_bordered(sparse(J)), reference, bound, 'sparse J');
  d = randn(rows, 2);
  check_close(linv_pinv_bordered(sparse(J), 'apply', d), reference * d, bound, 'apply');
  Ps = linv_pinv_bordered(single(J));
  check_true(isa(Ps, 'single'), 'single J gave %s', class(Ps));
  check_close(Ps, reference, 2 * rows * eps('single') * cond(J) ^ 2, 'single J');
  % Levenberg-Marquardt damping: (J'J + damping diag(J'J))^-1 J'
  N = J' * J;
  damped = (N + 0.1 * diag(diag(N))) \ J';
  check_close(linv_pinv_bordered(J, 'damping', 0.1), damped, 2 * rows * eps * cond(N, 1), 'damping');
  % two dense columns
  J2 = [randn(rows, 1), J];
  check_close(linv_pinv_bordered(J2, 'denseCols', 2), pinv(J2), 2 * rows * eps * cond(J2) ^ 2, 'denseCols 2');
end
