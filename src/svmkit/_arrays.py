"""Array helpers every layer shares: a device array or sparse matrix as a plain host array, and a
digest of array values."""

from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp


def to_host(a):
    """A CuPy array (or CuPy sparse matrix) copied to the host; anything else unchanged."""
    if hasattr(a, "__cuda_array_interface__") or type(a).__module__.startswith("cupyx"):
        return a.get()
    return a


def densify(a):
    """A SciPy sparse matrix as a dense array; anything else unchanged."""
    return a.toarray() if sp.issparse(a) else a


def holds_float32(X) -> bool:
    """Whether every value of X (an array, a sparse matrix, a DataFrame's columns) is float32:
    scikit-learn's KernelRidge keeps float32 through a fit and a prediction."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and not hasattr(X, "dtype"):
        return len(dtypes) > 0 and all(np.dtype(t) == np.float32 for t in dtypes)
    return getattr(X, "dtype", None) == np.float32


def data_fingerprint(*arrays) -> str:
    """A digest of the arrays' values (CSR: its three arrays): equal for the same data."""
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        parts = (a.data, a.indices, a.indptr) if sp.issparse(a) else (a,)
        for part in parts:
            part = np.ascontiguousarray(part)
            h.update(str((part.dtype, part.shape)).encode())
            h.update(part.view(np.uint8).ravel())
    return h.hexdigest()
