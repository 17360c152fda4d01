"""Inner products of sparse rows with every row of a sparse matrix, in the compiled core.

For a CSR row a and a matrix B held column-wise (CSC), <a, b_s> for all s is a scatter:
for each nonzero a_j, add a_j · B[s, j] over the nonzeros of column j. The work is
nnz(a) × (nonzeros per column of B), far below a dense product's d × n_B when both sides are
sparse, as on text-like data (a9a, w8a).
"""

import numpy as np

from svmkit._core import kernels as _kernels


def _index(a):
    return np.ascontiguousarray(a, dtype=np.int64)


def _values(a):
    return np.ascontiguousarray(a, dtype=np.float64)


def sparse_inner_rows(a_indptr, a_indices, a_data, rows, b_indptr, b_indices, b_data, out):
    """out[r, s] += <A[rows[r]], B[s]> (float64), with A in CSR and B in CSC parts."""
    _kernels.sparse_inner_rows(_index(a_indptr), _index(a_indices), _values(a_data), _index(rows), _index(b_indptr),
                               _index(b_indices), _values(b_data), out)
