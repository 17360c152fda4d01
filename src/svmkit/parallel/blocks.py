"""Prediction on Dask collections, one block of rows at a time on the cluster."""

from __future__ import annotations

import numpy as np

from svmkit._dask_support import is_dask, map_rows, require_dask


def predict(est, X):
    """`est.predict` over a Dask array (rows in blocks, all columns in each) or a Dask
    dataframe (per partition), lazily: the result is a Dask array to `.compute()`. A NumPy
    array or SciPy matrix is predicted directly."""
    if not is_dask(X):
        return est.predict(X)
    require_dask()
    if hasattr(X, "map_partitions") and hasattr(X, "columns"):  # a dataframe (needs pandas)
        return X.map_partitions(lambda part: np.asarray(est.predict(part.to_numpy())), meta=(None, "f8")).to_dask_array()
    return map_rows(est.predict, X)
