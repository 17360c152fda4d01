"""Model selection's tasks on a Dask cluster: an in-process LocalCluster by default, or the
scheduler at a given address. The data is scattered to the workers once; each task computes
its kernel rows there."""

from __future__ import annotations

from svmkit._dask_support import require_dask

#: Seconds allowed to reach a scheduler.
CONNECT_TIMEOUT = 10


def run_tasks(func, data, task_args, extra, scheduler_address=None, on_task=None):
    """[func(*data, *args, *extra) for args in task_args], on the cluster, in order.

    `data` is scattered once to every worker. A worker lost mid-search makes Dask run its
    tasks elsewhere; if they cannot finish, the search fails with an error naming the cause."""
    require_dask()
    from distributed import Client, LocalCluster, as_completed

    if scheduler_address is None:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        cluster = None
        try:
            client = Client(scheduler_address, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as err:
            raise ConnectionError(f"no Dask scheduler answered at {scheduler_address!r} within "
                                  f"{CONNECT_TIMEOUT} s: {err}") from None
    try:
        shared = [None if x is None else client.scatter(x, broadcast=True) for x in data]
        futures = [client.submit(func, *shared, *args, *extra, pure=False) for args in task_args]
        index = {f.key: k for k, f in enumerate(futures)}
        results = [None] * len(futures)
        for done, future in enumerate(as_completed(futures), start=1):
            try:
                results[index[future.key]] = future.result()
            except Exception as err:
                if type(err).__name__ == "KilledWorker":
                    raise RuntimeError(f"a Dask worker died running a search task and the task could not be "
                                       f"finished elsewhere ({err}); the search is incomplete") from err
                raise
            if on_task is not None:
                on_task(done, len(futures))
        return results
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
