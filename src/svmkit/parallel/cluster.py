"""Fits whose data stays on a Dask cluster: the cluster to use (`open_cluster`), Dask inputs
checked before any work (`row_partitions`), and a `Cluster` that keeps each partition of rows on
a worker and runs tasks on them, only their results travelling. Dask is imported only here
and in `dask`."""

from __future__ import annotations

import contextlib
import os
import time

import numpy as np

from svmkit._threads import blas_libraries, compiled_thread_count
from svmkit.parallel.dask import CONNECT_TIMEOUT, as_dask_array, require_dask

#: Times Dask runs a task again after it raised (a task is idempotent: a rerun gives the same result).
TASK_RETRIES = 2


def check_scheduler_address(value, name="scheduler_address"):
    """None, or a scheduler's address as a string ('tcp://host:port')."""
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be None or a Dask scheduler's address such as 'tcp://host:8786', "
                         f"got {name}={value!r}")
    return value


#: What Dask's nanny writes into this process's environment before it starts each worker process
#: (its `distributed.nanny.pre-spawn-environ`), and leaves there.
SPAWN_ENVIRON = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_")


@contextlib.contextmanager
def threads_kept():
    """This process's threads as they were, around a LocalCluster: its nanny sets
    OMP_NUM_THREADS=1 (and MKL's and OpenBLAS's) here and leaves it, so that a compiled
    library loaded afterwards (the core's OpenMP, SciPy's BLAS) would run every later fit in
    this process on one thread. Both are loaded first, and the environment is put back when
    the cluster closes."""
    compiled_thread_count()
    blas_libraries()
    before = {name: os.environ.get(name) for name in SPAWN_ENVIRON}
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def open_cluster(scheduler_address=None):
    """A `Cluster` on the scheduler at `scheduler_address`; without one, on the active
    `distributed.Client` if there is one, else on a LocalCluster of two worker processes of one
    thread each, started for the call and closed after it. While it is open, its client is
    Dask's default, so that `.compute()` of a collection runs there. A scheduler that does not
    answer within CONNECT_TIMEOUT seconds raises a ConnectionError naming its address."""
    require_dask()
    from distributed import Client, LocalCluster, default_client

    if scheduler_address is None:
        try:
            client = default_client()
        except ValueError:  # no active client
            client = None
        if client is not None:
            yield Cluster(client)
            return
        with threads_kept(), LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None) as local, Client(local) as client:
            yield Cluster(client)
        return
    try:
        client = Client(scheduler_address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as err:
        raise ConnectionError(f"no Dask scheduler answered at {scheduler_address!r} within "
                              f"{CONNECT_TIMEOUT} s: {err}") from None
    with client:
        yield Cluster(client)


def row_partitions(X, *columns, names=("y", "sample_weight")):
    """(X, *columns) as Dask arrays partitioned alike by rows, X 2-D with every column in each
    block, each column 1-D (None stays None; an in-memory column is cut as X's rows are).
    Raises before any work on unknown chunk sizes, a column whose partitions differ from X's,
    or a row count that differs."""
    require_dask()
    import dask.array as da

    X = as_dask_array("X", X)
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise ValueError(f"X must be a 2-D Dask array or a Dask dataframe, got "
                         f"{type(X).__name__} of {getattr(X, 'ndim', '?')} dimensions")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError("X has unknown chunk sizes (rows per partition): compute them first with "
                         "X.compute_chunk_sizes(), or dataframe.to_dask_array(lengths=True)")
    X = X.rechunk({1: -1})
    out = [X]
    for name, col in zip(names, columns):
        col = as_dask_array(name, col)
        if col is None:
            out.append(None)
            continue
        if col.ndim == 2 and col.shape[1] == 1:
            col = col[:, 0]
        if col.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {col.shape}")
        if isinstance(col, da.Array):
            if any(np.isnan(c) for c in col.chunks[0]):
                raise ValueError(f"{name} has unknown chunk sizes: compute them first with "
                                 f"{name}.compute_chunk_sizes()")
            if col.shape[0] != X.shape[0]:
                raise ValueError(f"{name} has {col.shape[0]} rows, X has {X.shape[0]}")
            if col.chunks[0] != X.chunks[0]:
                raise ValueError(f"X and {name} are partitioned differently: X's partitions hold "
                                 f"{_short(X.chunks[0])} rows, {name}'s {_short(col.chunks[0])}; give "
                                 f"{name} X's partitions ({name}.rechunk(X.chunks[0]))")
        else:
            if col.shape[0] != X.shape[0]:
                raise ValueError(f"{name} has {col.shape[0]} rows, X has {X.shape[0]}")
            col = da.from_array(col, chunks=(X.chunks[0],))
        out.append(col)
    return out


def _short(chunks) -> str:
    chunks = tuple(int(c) for c in chunks)
    return str(chunks) if len(chunks) <= 6 else f"({', '.join(map(str, chunks[:5]))}, … {len(chunks)} in all)"


def _part(start, *blocks):
    """One partition as a task result: its global rows and its blocks, X as dense float64."""
    X = np.ascontiguousarray(blocks[0], dtype=np.float64)
    return (np.arange(start, start + X.shape[0], dtype=np.int64), X,
            *(None if b is None else np.asarray(b) for b in blocks[1:]))


def _timed(func, *args):
    """(func(*args), seconds it took on the worker)."""
    t = time.perf_counter()
    out = func(*args)
    return out, time.perf_counter() - t


def _first(pair):
    return pair[0]


def _second(pair):
    return pair[1]


class Cluster:
    """Tasks on a Dask client's workers: `partitions` keeps blocks of rows there, `submit` runs
    a function on futures (Dask moves the inputs to the worker, and reruns the tasks of a lost
    worker from their inputs: every task here is idempotent), `gather` brings results back,
    `threads` counts the workers' threads.
    `timings` records (label, seconds on the worker) of every task submitted with a label."""

    def __init__(self, client):
        self.client = client
        self.timings = []
        self._timed = []

    def partitions(self, X, *columns) -> list:
        """Futures of (global rows, X block, *column blocks) for each partition of rows of the
        Dask arrays of `row_partitions` (a column may be None)."""
        import dask

        starts = np.r_[0, np.cumsum(X.chunks[0])[:-1]]
        blocks = [X.to_delayed().ravel()] + [[None] * len(starts) if c is None else c.to_delayed().ravel()
                                             for c in columns]
        parts = [dask.delayed(_part)(int(s), *b) for s, *b in zip(starts, *blocks)]
        return self.client.compute(parts, retries=TASK_RETRIES)

    def submit(self, func, *args, label=None):
        """A future of func(*args); with `label`, its time on the worker joins `timings` when
        gathered."""
        if label is None:
            return self.client.submit(func, *args, pure=False, retries=TASK_RETRIES)
        pair = self.client.submit(_timed, func, *args, pure=False, retries=TASK_RETRIES)
        self._timed.append((label, self.client.submit(_second, pair, pure=False)))
        return self.client.submit(_first, pair, pure=False, retries=TASK_RETRIES)

    @property
    def threads(self) -> int:
        """The workers' threads, all together."""
        return sum(self.client.nthreads().values())

    def gather(self, futures):
        out = self.client.gather(futures)
        self._collect()
        return out

    def _collect(self):
        """Move the finished labelled tasks' times into `timings`."""
        done = [(label, f) for label, f in self._timed if f.done()]
        self._timed = [(label, f) for label, f in self._timed if not f.done()]
        times = self.client.gather([f for _, f in done])
        self.timings.extend(zip((label for label, _ in done), times))


def on_cluster(work, shared, tasks, scheduler_address=None):
    """(k, work(*shared, *tasks[k])) for every task, as they finish on a Dask cluster: the one
    `open_cluster` gives (the scheduler at `scheduler_address`, else the active client,
    else a LocalCluster started for the run).

    `shared` is scattered once to every worker. A worker lost mid-run makes Dask run its tasks
    elsewhere (a task is idempotent, and one that raised is retried); if they cannot finish,
    the run fails with an error naming the cause."""
    from distributed import as_completed

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
