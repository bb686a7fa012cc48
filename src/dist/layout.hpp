// ScaLAPACK's block-cyclic layout with its source process at (0, 0): along one dimension of n entries in
// blocks of nb over p processes, block b belongs to process b mod p and is that process's block b / p.
#pragma once

#include "linv/matrix.hpp"

namespace linv::dist::layout {

// How many of the n entries process `proc` holds (ScaLAPACK's NUMROC).
inline index local_count(index n, index nb, int proc, int procs) {
  const index blocks = n / nb, extra = blocks % procs;
  index count = blocks / procs * nb;
  if (proc < extra)
    count += nb;
  else if (proc == extra)
    count += n % nb;
  return count;
}

// The global index of local entry i of process `proc`.
inline index global_index(index i, index nb, int proc, int procs) { return (i / nb * procs + proc) * nb + i % nb; }

// The process holding global entry g, and its local index there.
inline int owner(index g, index nb, int procs) { return static_cast<int>(g / nb % procs); }
inline index local_index(index g, index nb, int procs) { return g / (nb * procs) * nb + g % nb; }

}  // namespace linv::dist::layout
