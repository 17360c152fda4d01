"""Compiled inner products of sparse rows with every row of a sparse matrix.

For a CSR row a and a matrix B held column-wise (CSC), <a, b_s> for all s is a scatter:
for each nonzero a_j, add a_j · B[s, j] over the nonzeros of column j. The work is
nnz(a) × (nonzeros per column of B), far below a dense product's d × n_B when both sides are
sparse, as on text-like data (a9a, w8a).
"""

from numba import njit, prange


@njit(parallel=True, cache=True, nogil=True)
def sparse_inner_rows(a_indptr, a_indices, a_data, rows, b_indptr, b_indices, b_data, out):
    """out[r, s] += <A[rows[r]], B[s]> (float64), with A in CSR and B in CSC parts."""
    for r in prange(rows.shape[0]):
        acc = out[r]
        i = rows[r]
        for k in range(a_indptr[i], a_indptr[i + 1]):
            j = a_indices[k]
            v = a_data[k]
            for t in range(b_indptr[j], b_indptr[j + 1]):
                acc[b_indices[t]] += v * b_data[t]
