"""Inner products of sparse rows with every row of a sparse matrix, in the compiled core.

For a CSR row a and a matrix B held column-wise (CSC), <a, b_s> for all s is a scatter:
for each nonzero a_j, add a_j · B[s, j] over the nonzeros of column j. The work is
nnz(a) × (nonzeros per column of B), far below a dense product's d × n_B when both sides are
sparse, as on text-like data (a9a, w8a).
"""

from svmkit._arrays import as_float64, as_indices
from svmkit._core import kernels as _kernels


def sparse_inner_rows(a_indptr, a_indices, a_data, rows, b_indptr, b_indices, b_data, out):
    """out[r, s] += <A[rows[r]], B[s]> (float64), with A in CSR and B in CSC parts."""
    _kernels.sparse_inner_rows(as_indices(a_indptr), as_indices(a_indices), as_float64(a_data), as_indices(rows),
                               as_indices(b_indptr), as_indices(b_indices), as_float64(b_data), out)
