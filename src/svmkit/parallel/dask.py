"""Everything Dask: requiring the extra, mapping a function over
a 2-D Dask array's blocks of rows, and running tasks on a cluster. Dask is imported only when
one is used."""

from __future__ import annotations

import importlib.util

import numpy as np

from svmkit._validation import is_dask

#: Seconds allowed to reach a scheduler.
CONNECT_TIMEOUT = 10


def require_dask():
    if importlib.util.find_spec("dask") is None or importlib.util.find_spec("distributed") is None:
        raise ImportError("backend='dask' and svmkit.parallel need Dask: pip install 'svmkit[dask]'")


def as_dask_array(name, value):
    """A Dask array of a Dask array, dataframe or series (rows counted, which reads the
    partitions' lengths only), or of an in-memory array (None stays None)."""
    import dask.array as da

    if value is None:
        return None
    if is_dask(value):
        if hasattr(value, "to_dask_array"):
            return value.to_dask_array(lengths=True)
        if not isinstance(value, da.Array):
            raise ValueError(f"{name} must be a Dask array, dataframe or series, got {type(value).__name__}")
        return value
    return np.asarray(value)


def row_blocks(X):
    """A 2-D Dask array (of a Dask array or dataframe) with every column in each block (rows
    chunked only); raises naming X otherwise."""
    require_dask()
    import dask.array as da

    X = as_dask_array("X", X)
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise ValueError(f"X must be a 2-D Dask array or a Dask dataframe, got {type(X).__name__}")
    return X.rechunk({1: -1})


def map_rows(func, X):
    """func over each block of rows of the 2-D Dask array X, lazily (a Dask array of func's
    1-D or 2-D results, rows in X's blocks)."""
    X = row_blocks(X)
    sample = np.asarray(func(np.zeros((1, X.shape[1]))))
    if sample.ndim == 1:
        return X.map_blocks(lambda block: np.asarray(func(block)), drop_axis=1, dtype=sample.dtype)
    return X.map_blocks(lambda block: np.asarray(func(block)), chunks=(X.chunks[0], (sample.shape[1],)),
                        dtype=sample.dtype)
