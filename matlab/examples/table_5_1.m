function rows = table_5_1(sizes, repeats, json_file, linv_version)
% TABLE_5_1  The source thesis's Table 5.1 workflow in Octave or MATLAB: the inverse of a random n x n
% double matrix by linv_inv against the language's own inv, on the CPU, for each n in `sizes` (default
% [1024 2048]). Each is timed as the median of `repeats` (default 5) calls after one warm-up, linv_inv
% with 'check', false (inv computes no residual either); then both results' scaled residuals
% ||A X - I||_1 / (n eps ||A||_1 ||X||_1) are computed the same way, outside the timing. Prints the table,
% and writes the rows in the schema of linv's benchmark results (BENCHMARKS.md) to json_file when given,
% with linv_version (e.g. the git commit) among the versions.
%
%   addpath('<build>/matlab'); addpath('<linv>/matlab/examples');
%   table_5_1([1024 2048], 5, 'octave-inverse.json', 'a402867')
  if nargin < 1 || isempty(sizes), sizes = [1024 2048]; end
  if nargin < 2 || isempty(repeats), repeats = 5; end
  if nargin < 4, linv_version = 'unknown'; end
  rows = struct('case', {}, 'n', {}, 'batch', {}, 'linv_s', {}, 'peer', {}, 'peer_s', {}, 'ratio', {}, ...
                'linv_error', {}, 'peer_error', {});
  if exist('OCTAVE_VERSION', 'builtin')
    language = 'Octave';
  else
    language = 'MATLAB';
  end
  fprintf('%6s  %12s  %12s  %7s  %12s  %12s\n', 'n', 'linv_inv (s)', [language ' inv (s)'], 'ratio', ...
          'linv error', 'inv error');
  for n = sizes
    A = randn(n);
    linv_s = median_time(@() linv_inv(A, 'check', false), repeats);
    peer_s = median_time(@() inv(A), repeats);
    rows(end + 1) = struct('case', 'inverse fp64', 'n', n, 'batch', 1, 'linv_s', linv_s, ...
                           'peer', [language ' ' version() ' inv'], 'peer_s', peer_s, 'ratio', peer_s / linv_s, ...
                           'linv_error', scaled_residual(A, linv_inv(A, 'check', false)), ...
                           'peer_error', scaled_residual(A, inv(A)));
    r = rows(end);
    fprintf('%6d  %12.4f  %12.4f  %6.2fx  %12.3g  %12.3g\n', n, r.linv_s, r.peer_s, r.ratio, r.linv_error, ...
            r.peer_error);
  end
  if nargin >= 3 && ~isempty(json_file)
    [~, host] = system('nproc');
    result = struct('benchmark', 'octave-inverse', 'device', sprintf('cpu (%s cores)', strtrim(host)), ...
                    'date', datestr(now, 'yyyy-mm-dd'), ...
                    'versions', struct('linv', linv_version, 'language', [language ' ' version()]), ...
                    'command', sprintf('table_5_1(%s, %d)', mat2str(sizes), repeats), 'rows', rows);
    fid = fopen(json_file, 'w');
    fprintf(fid, '%s\n', jsonencode(result));
    fclose(fid);
  end
end

function seconds = median_time(f, repeats)
  f();  % warm-up: threads started, pages touched
  t = zeros(repeats, 1);
  for k = 1:repeats
    start = tic;
    f();
    t(k) = toc(start);
  end
  seconds = median(t);
end

function e = scaled_residual(A, X)
  n = size(A, 1);
  e = norm(A * X - eye(n), 1) / (n * eps * norm(A, 1) * norm(X, 1));
end
