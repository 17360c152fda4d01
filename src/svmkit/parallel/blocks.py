"""Prediction on Dask collections, one block of rows at a time on the cluster."""

from __future__ import annotations

import numpy as np

from svmkit.parallel.dask import require_dask


def predict(est, X):
    """`est.predict` over a Dask array (rows in blocks, all columns in each) or a Dask
    dataframe (per partition), lazily: the result is a Dask array to `.compute()`. A NumPy
    array or SciPy matrix is predicted directly."""
    if not _is_dask(X):
        return est.predict(X)
    require_dask()
    import dask.array as da

    if hasattr(X, "map_partitions") and hasattr(X, "columns"):  # a dataframe (needs pandas)
        return X.map_partitions(lambda part: np.asarray(est.predict(part.to_numpy())), meta=(None, "f8")).to_dask_array()
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise ValueError(f"X must be a 2-D Dask array or a Dask dataframe, got {type(X).__name__}")
    X = X.rechunk({1: -1})
    dtype = est.predict(np.zeros((1, X.shape[1]))).dtype
    return X.map_blocks(lambda block: est.predict(block), drop_axis=1, dtype=dtype)


def _is_dask(X) -> bool:
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr")
