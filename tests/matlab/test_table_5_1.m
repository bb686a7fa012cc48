function test_table_5_1()
% The Table 5.1 workflow (matlab/examples/table_5_1.m) runs at the thesis's sizes, and both inverses
% it times are accurate: scaled residuals of order one (a backward-stable inverse's are at most n).
  rows = table_5_1([1024 2048], 3, [tempname() '.json']);
  for r = rows
    check_true(r.linv_error <= r.n && r.peer_error <= r.n, 'n=%d: scaled residuals %.3g (linv), %.3g (inv)', ...
               r.n, r.linv_error, r.peer_error);
    check_true(r.linv_s > 0 && r.peer_s > 0, 'n=%d: no time measured', r.n);
  end
end
