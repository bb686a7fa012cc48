function [X, D] = sparse_model(T, K, N, T0, noise)
% SPARSE_MODEL  Signals X = D G + noise: D of K random unit-norm atoms (T x K), each of the N columns of G
% with T0 nonzeros at random atoms, of magnitude at least 1 (so that OMP finds them through the noise),
% and Gaussian noise of standard deviation `noise`.
  D = randn(T, K);
  D = D ./ sqrt(sum(D .^ 2));
  G = zeros(K, N);
  for j = 1:N
    G(randperm(K, T0), j) = randn(T0, 1) + sign(randn(T0, 1));
  end
  X = D * G + noise * randn(T, N);
end
