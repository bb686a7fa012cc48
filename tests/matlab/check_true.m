function check_true(condition, varargin)
% CHECK_TRUE  Fails with the message sprintf(varargin{:}) unless condition holds.
  if ~condition
    error('linv_test:check', varargin{:});
  end
end
