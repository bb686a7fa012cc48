function check_error(f, identifier, varargin)
% CHECK_ERROR  Fails unless calling f raises the error `identifier` whose message holds every text given
% after it.
  try
    f();
  catch err
    if ~strcmp(err.identifier, identifier)
      error('linv_test:identifier', 'expected %s, got %s: %s', identifier, err.identifier, err.message);
    end
    for k = 1:numel(varargin)
      if isempty(strfind(err.message, varargin{k}))
        error('linv_test:message', '%s: the message "%s" does not mention "%s"', identifier, err.message, varargin{k});
      end
    end
    return;
  end
  error('linv_test:no_error', 'expected the error %s, but the call succeeded', identifier);
end
