"""Everything Dask: recognising its collections, requiring the extra, mapping a function over
a 2-D Dask array's blocks of rows, and running tasks on a cluster. Dask is imported only when
one is used."""

from __future__ import annotations

import importlib.util

import numpy as np

#: Seconds allowed to reach a scheduler.
CONNECT_TIMEOUT = 10


def require_dask():
    if importlib.util.find_spec("dask") is None or importlib.util.find_spec("distributed") is None:
        raise ImportError("backend='dask' and svmkit.parallel need Dask: pip install 'svmkit[dask]'")


def is_dask(X) -> bool:
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr")


def route(X, in_memory, on_dask):
    """The function that takes X: `on_dask` for a Dask collection, else `in_memory`."""
    return on_dask if is_dask(X) else in_memory


def row_blocks(X):
    """A 2-D Dask array with every column in each block (rows chunked only); raises naming X
    otherwise."""
    require_dask()
    import dask.array as da

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


def on_cluster(work, shared, tasks, scheduler_address=None):
    """(k, work(*shared, *tasks[k])) for every task, as they finish on a Dask cluster: the one
    `cluster.open_cluster` gives (the scheduler at `scheduler_address`, else the active client,
    else a LocalCluster started for the run).

    `shared` is scattered once to every worker. A worker lost mid-run makes Dask run its tasks
    elsewhere (a task is idempotent, and one that raised is retried); if they cannot finish,
    the run fails with an error naming the cause."""
    from distributed import as_completed

    from svmkit.parallel.cluster import TASK_RETRIES, open_cluster

    with open_cluster(scheduler_address) as cluster:
        client = cluster.client
        scattered = [None if x is None else client.scatter(x, broadcast=True) for x in shared]
        futures = [client.submit(work, *scattered, *args, pure=False, retries=TASK_RETRIES) for args in tasks]
        index = {f.key: k for k, f in enumerate(futures)}
        for future in as_completed(futures):
            try:
                result = future.result()
            except Exception as err:
                if type(err).__name__ == "KilledWorker":
                    raise RuntimeError(f"a Dask worker died running a task and the task could not be finished "
                                       f"elsewhere ({err}); the run is incomplete") from err
                raise
            yield index[future.key], result
