"""Array helpers every layer shares: a device array or sparse matrix as a plain host array, and a
digest of array values."""

from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import _num_samples


def to_host(a):
    """A CuPy array (or CuPy sparse matrix) copied to the host; anything else unchanged."""
    if hasattr(a, "__cuda_array_interface__") or type(a).__module__.startswith("cupyx"):
        return a.get()
    return a


def as_indices(a) -> np.ndarray:
    """`a` as the compiled core takes indices: C-contiguous int64 (itself when it is one)."""
    return np.ascontiguousarray(a, dtype=np.int64)


def as_float64(a) -> np.ndarray:
    """`a` as the compiled core takes values: C-contiguous float64 (itself when it is one)."""
    return np.ascontiguousarray(a, dtype=np.float64)


def densify(a):
    """A SciPy sparse matrix as a dense array; anything else unchanged."""
    return a.toarray() if sp.issparse(a) else a


def stack_rows(top, bottom):
    """The rows of `top` then those of `bottom`: CSR when `top` is sparse, else a dense array."""
    if sp.issparse(top):
        return sp.vstack([top, bottom], format="csr")
    return np.concatenate([np.asarray(top), np.asarray(bottom)])


def _kind(dtype) -> str:
    """The kind letter of a NumPy dtype or a pandas extension dtype, which np.dtype cannot
    interpret: Int64, boolean, Sparse[float] give their values' kind, a categorical its
    categories', the string dtype 'O'."""
    categories = getattr(dtype, "categories", None)
    return getattr(categories.dtype if categories is not None else dtype, "kind", "O")


def holds_float32(X) -> bool:
    """Whether every value of X (an array, a sparse matrix, a DataFrame's columns) is float32:
    scikit-learn's KernelRidge keeps float32 through a fit and a prediction."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and not hasattr(X, "dtype"):
        return len(dtypes) > 0 and all(isinstance(t, np.dtype) and t == np.float32 for t in dtypes)
    return getattr(X, "dtype", None) == np.float32


def holds_numbers(X) -> bool:
    """Whether X is numbers in an array: a SciPy sparse matrix, an array of a numeric dtype, or
    a DataFrame whose every column is numeric (not a list, strings or objects)."""
    if sp.issparse(X):
        return True
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and not hasattr(X, "dtype"):
        return all(_kind(t) in "biuf" for t in dtypes)
    return _kind(getattr(X, "dtype", np.dtype(object))) in "biuf"


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


class RawRows:
    """Rows of data handed to a callable kernel as the user gave them (a list of strings, of
    sequences, a DataFrame, an array), as scikit-learn's SVMs hand them: rows are taken by index
    or slice without converting the data, and `shape` is (n_samples,)."""

    def __init__(self, data):
        self.data = data
        self.shape = (_num_samples(data),)

    def __getitem__(self, rows):
        if isinstance(rows, slice):
            rows = np.arange(self.shape[0])[rows]
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        data = self.data
        if hasattr(data, "iloc"):
            return RawRows(data.iloc[rows])
        if isinstance(data, np.ndarray) or sp.issparse(data):
            return RawRows(data[rows])
        return RawRows([data[int(i)] for i in rows])

    def __len__(self):
        return self.shape[0]


def raw_data(X):
    """The data a callable kernel is given: a RawRows' rows as the user gave them, else X."""
    return X.data if isinstance(X, RawRows) else X
