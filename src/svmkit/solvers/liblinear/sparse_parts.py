"""X with its constant feature as the plain arrays of one sparse layout, the one signature of
the compiled coordinate-descent loops that walk rows (Crammer–Singer) or columns (the
L1-regularised SVM): float64 values, int64 positions, fresh writable C-ordered arrays whatever
the input's dtypes, order, index width or write protection."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def with_constant(X, bias: float, layout: str):
    """(values, positions, pointers) of [X, bias·1] (no constant column when bias is 0) as
    'csr' (a row per sample: positions are columns) or 'csc' (a column per feature: positions
    are rows)."""
    M = sp.csr_matrix(X) if sp.issparse(X) else sp.csr_matrix(np.asarray(X, dtype=np.float64))
    if bias != 0.0:
        M = sp.hstack([M, np.full((M.shape[0], 1), bias)], format="csr")
    M = M.asformat(layout)
    M.sum_duplicates()
    return (np.array(M.data, dtype=np.float64), np.array(M.indices, dtype=np.int64),
            np.array(M.indptr, dtype=np.int64))
