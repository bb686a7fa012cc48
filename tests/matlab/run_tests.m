function failures = run_tests(varargin)
% RUN_TESTS  linv's MEX gateway under Octave (or MATLAB): every test_*.m here, each in its own try,
% against Octave's own results with error bounds scaled by n eps cond. Returns the number of failing
% tests; `octave-cli --eval "exit(run_tests())"` (ctest's `matlab`) exits with it. Names given as
% arguments run only those tests.
  here = fileparts(mfilename('fullpath'));
  if nargin > 0
    names = varargin;
  else
    files = dir(fullfile(here, 'test_*.m'));
    names = sort(cellfun(@(f) f(1:end-2), {files.name}, 'UniformOutput', false));
  end
  rng(20261125);  % each run the same inputs; each test draws its own
  failures = 0;
  for k = 1:numel(names)
    t = tic;
    try
      feval(names{k});
      fprintf('PASS %-24s %6.2f s\n', names{k}, toc(t));
    catch err
      failures = failures + 1;
      fprintf('FAIL %-24s %s: %s\n', names{k}, err.identifier, err.message);
      for s = err.stack(:)'
        fprintf('       at %s line %d\n', s.name, s.line);
      end
    end
  end
  fprintf('%d of %d MEX tests passed\n', numel(names) - failures, numel(names));
end
