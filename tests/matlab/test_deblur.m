function test_deblur()
% linv_deblur against the regularised normal equations solved by Octave, (H'H + lambda I) \ (H' g), with
% H the blur of conv2(f, psf, 'same') (a zero boundary) built column by column: within
% pixels eps cond(H'H + lambda I) of each other. A PSF given as a spec is the kernel given as a matrix,
% a colour image is its channels deblurred with one lambda, and single images come back single.
  h = 16;
  w = 14;
  [x, y] = meshgrid(-2:2);
  psf = exp(-(x .^ 2 + y .^ 2) / 2);
  psf = psf / sum(psf(:));  % fspecial('gaussian', 5, 1)
  f = rand(h, w);
  g = conv2(f, psf, 'same') + 0.01 * randn(h, w);
  pixels = h * w;
  H = zeros(pixels);
  for p = 1:pixels
    e = zeros(h, w);
    e(p) = 1;
    H(:, p) = reshape(conv2(e, psf, 'same'), [], 1);
  end
  lambda = 0.01;
  M = H' * H + lambda * eye(pixels);
  reference = reshape(M \ (H' * g(:)), h, w);
  bound = 2 * pixels * eps * cond(M, 1);
  options = {'lambda', lambda, 'boundary', 'zero', 'regularizer', 'identity', 'prior', 'tikhonov'};
  [r, report] = linv_deblur(g, psf, options{:}, 'path', 'dense');
  check_close(r, reference, bound, 'dense path');
  check_true(report.lambda == lambda && strcmp(report.lambda_from, 'given'), 'report: lambda %g from %s', ...
             report.lambda, report.lambda_from);
  check_close(linv_deblur(g, psf, options{:}, 'path', 'matrix-free', 'tolerance', 1e-13), reference, ...
              bound + 1e-13 * cond(M, 1), 'matrix-free path');
  check_close(linv_deblur(g, 'gaussian:size=5,sigma=1', options{:}), reference, bound, 'PSF spec');
  rgb = cat(3, g, 2 * g, g / 2);
  colour = linv_deblur(rgb, psf, options{:});
  check_true(isequal(size(colour), size(rgb)), 'colour: size %s', mat2str(size(colour)));
  check_close(colour(:, :, 2), 2 * reference, bound, 'colour channel 2');
  s = linv_deblur(single(g), psf, options{:});
  check_true(isa(s, 'single'), 'a single image came back %s', class(s));
  check_close(s, reference, bound + 2 * eps('single'), 'single image');
  % lambda chosen from the data: a result, and the rule that chose it
  [~, report] = linv_deblur(g, psf, 'boundary', 'reflexive');
  check_true(report.lambda > 0 && ~isempty(report.lambda_from), 'auto lambda: %g', report.lambda);
  % prior auto: the nonlocal prior under a blur, and why
  check_true(strcmp(report.prior, 'nonlocal') && report.nonlocal_share == 1 && ~isempty(report.prior_from), ...
             'auto prior: %s (%g) from %s', report.prior, report.nonlocal_share, report.prior_from);
  % total variation: ADMM from the Tikhonov solution, the weight as given, g's shape and class
  [t, report] = linv_deblur(g, psf, 'boundary', 'reflexive', 'prior', 'tv', 'tvWeight', 0.01);
  check_true(strcmp(report.method, 'admm') && report.tv_weight == 0.01 && strcmp(report.prior, 'tv'), ...
             'tv: method %s, weight %g', report.method, report.tv_weight);
  check_true(isequal(size(t), size(g)) && all(isfinite(t(:))), 'tv: size %s', mat2str(size(t)));
  % the nonlocal prior: its inverse's lambda a tenth of the Tikhonov one, g's shape
  [q, report] = linv_deblur(g, psf, 'boundary', 'reflexive', 'prior', 'nonlocal');
  check_true(strcmp(report.prior, 'nonlocal') && abs(report.nonlocal_lambda - 0.1 * report.lambda) <= ...
             1e-12 * report.lambda, 'nonlocal: prior %s, lambda %g', report.prior, report.nonlocal_lambda);
  check_true(isequal(size(q), size(g)) && all(isfinite(q(:))), 'nonlocal: size %s', mat2str(size(q)));
  % photon counts: the Poisson data term with total variation, the peak as given
  counts = max(g, 0) + 0.05;
  [p, report] = linv_deblur(counts, psf, 'boundary', 'reflexive', 'noiseModel', 'poisson', 'photonPeak', 40);
  check_true(strcmp(report.noise_model, 'poisson') && report.photon_peak == 40 && strcmp(report.prior, 'tv') && ...
             strcmp(report.method, 'admm'), 'poisson: model %s, peak %g', report.noise_model, report.photon_peak);
  check_true(isequal(size(p), size(g)) && all(isfinite(p(:))), 'poisson: size %s', mat2str(size(p)));
end
