function G = omp_reference(D, X, T0)
% OMP_REFERENCE  Orthogonal matching pursuit written out in Octave, the reference for linv_omp and the
% codes of linv_ksvd: for each column x of X, T0 times, the atom most correlated with the residual joins
% the support (atoms of unit norm), and the coefficients are the least-squares fit of x on the support.
  K = size(D, 2);
  N = size(X, 2);
  G = zeros(K, N);
  for j = 1:N
    x = double(X(:, j));
    support = [];
    r = x;
    for t = 1:T0
      [~, k] = max(abs(double(D)' * r));
      support(end + 1) = k;
      g = double(D(:, support)) \ x;
      r = x - double(D(:, support)) * g;
    end
    G(support, j) = g;
  end
end
