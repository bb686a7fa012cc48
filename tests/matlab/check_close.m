function check_close(X, reference, bound, what)
% CHECK_CLOSE  Fails unless norm(X - reference, 1) <= bound * norm(reference, 1), naming `what`. The
% bound is the caller's: n eps cond for the quantities compared, never a fixed tolerance.
  if ~isequal(size(X), size(reference))
    error('linv_test:shape', '%s: size %s, expected %s', what, mat2str(size(X)), mat2str(size(reference)));
  end
  X = double(X);
  reference = double(reference);
  scale = max(norm(reference, 1), realmin);
  difference = norm(X - reference, 1) / scale;
  if ~(difference <= bound)
    error('linv_test:accuracy', '%s: relative difference %.3g exceeds the bound %.3g', what, difference, bound);
  end
end
