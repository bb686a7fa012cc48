function test_errors()
% Every error identifier linv's MEX functions raise, each with a message that names what is wrong.
  A = randn(4);
  check_error(@() linv_inv(ones(3)), 'linv:singular', 'pivot');
  check_error(@() linv_solve(ones(3), ones(3, 1)), 'linv:singular', 'pivot');
  check_error(@() linv_inv([1 1; 1 1 + 2 * eps]), 'linv:singular', 'reciprocal condition');
  check_error(@() linv_inv(-eye(3), 'method', 'cholesky'), 'linv:notPositiveDefinite', 'minor of order 1');
  check_error(@() linv_wls(zeros(2, 5), ones(5, 1), ones(5, 1)), 'linv:notPositiveDefinite', 'minor');
  check_error(@() linv_solve(eye(3), ones(4, 1)), 'linv:shapeMismatch', '3x3', '4x1');
  check_error(@() linv_wls(randn(2, 5), ones(4, 1), ones(5, 1)), 'linv:shapeMismatch');
  check_error(@() linv_omp(randn(5, 8), randn(6, 3), 2), 'linv:shapeMismatch');
  check_error(@() linv_inv([1 NaN; 0 1]), 'linv:nonFinite', 'row 1, column 2');
  check_error(@() linv_solve(A, ones(4, 1), 'method', 'gauss-seidel', 'maxIterations', 2), ...
              'linv:noConvergence', 'gauss-seidel');
  J = zeros(20, 3);
  J(:, 1) = randn(20, 1);
  J(1:20, 3) = randn(20, 1);
  check_error(@() linv_pinv_bordered(J), 'linv:singular', 'column 2 of J');
  % misuse: wrong arguments, classes and options
  check_error(@() linv_inv(), 'linv:invalidArgument', 'at least 1 input');
  check_error(@() linv_solve(A), 'linv:invalidArgument', 'at least 2 inputs');
  check_error(@() linv_inv(int32(A)), 'linv:invalidArgument', 'int32', 'double(A)');
  check_error(@() linv_omp(randn(5, 8) + 1i, randn(5, 3), 2), 'linv:invalidArgument', 'complex');
  check_error(@() linv_inv(sparse(A)), 'linv:invalidArgument', 'full(A)');
  check_error(@() linv_solve(A, single(ones(4, 1))), 'linv:invalidArgument', 'one class');
  check_error(@() linv_inv(A, 'foo', 1), 'linv:invalidArgument', 'no option ''foo''', 'method');
  check_error(@() linv_inv(A, 'method'), 'linv:invalidArgument', 'name-value pairs');
  check_error(@() linv_inv(A, 'method', 'magic'), 'linv:invalidArgument', 'magic', 'gauss-jordan');
  check_error(@() linv_inv(A, 'method', 3), 'linv:invalidArgument', 'must be text');
  check_error(@() linv_inv(A, 'precision', 'half'), 'linv:invalidArgument', 'mixed');
  check_error(@() linv_inv(randn(2, 2, 2)), 'linv:invalidArgument', '2x2x2');
  check_error(@() linv_ksvd(randn(5, 20), 4.5, 2), 'linv:invalidArgument', 'K must be a whole');
  check_error(@() linv_deblur(rand(8), 'blur:size=3'), 'linv:invalidArgument', 'blur');
  check_error(@() linv_deblur(rand(8), ones(3), 'boundary', 'mirror'), 'linv:invalidArgument', 'reflexive');
  check_error(@() linv_parafac2({}, 2), 'linv:invalidArgument', 'empty cell');
  check_error(@() linv_pinv_bordered(sparse(logical(J))), 'linv:invalidArgument', 'sparse double');
  check_error(@() three_outputs(), 'linv:invalidArgument', 'at most 2 outputs');
  % a GPU asked for where there is none
  if ~gpu_present()
    check_error(@() linv_inv(A, 'device', 'cuda'), 'linv:device');
  end
end

function three_outputs()
  [~, ~, ~] = linv_inv(eye(2));
end

function present = gpu_present()
  [status, ~] = system('nvidia-smi -L > /dev/null 2>&1');
  present = status == 0;
end
