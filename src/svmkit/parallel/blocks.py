"""Work on Dask collections block of rows by block: prediction, and sums over the blocks
reduced on the cluster."""

from __future__ import annotations

import numpy as np

from svmkit.parallel.dask import is_dask, map_rows, require_dask


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


def _add_pairs(a, b):
    return tuple(x + y for x, y in zip(a, b))


def sum_row_blocks(func, *arrays):
    """Σ func(*blocks, start) over the blocks of rows of the Dask `arrays`, computed: `blocks`
    are each array's block from row `start`, and func returns a tuple of arrays, summed term
    by term. The arrays' rows are chunked alike and their columns not at all. The sums are
    taken pairwise on the workers (a tree ⌈log₂ blocks⌉ deep), so only func's results travel."""
    import dask

    starts = np.r_[0, np.cumsum(arrays[0].chunks[0])[:-1]]
    parts = [dask.delayed(func)(*blocks, int(s))
             for *blocks, s in zip(*(a.to_delayed().ravel() for a in arrays), starts)]
    while len(parts) > 1:
        parts = [dask.delayed(_add_pairs)(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return dask.compute(parts[0])[0]
