"""Independent tasks run on this process's threads, on joblib's threads or processes, or on a
Dask cluster, and a side task run beside the main work, under the thread limits that compiled
loops side by side need."""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from svmkit._threads import compiled_threads, one_blas_thread
from svmkit.parallel.cluster import on_cluster


def run_tasks(work, tasks, *, backend="threads", n_jobs=None, shared=(), limit_threads=False, on_task=None,
              label=None, scheduler_address=None) -> list:
    """[work(*shared, *args) for args in tasks], each task an argument tuple.

    backend 'threads': min(n_jobs or the cores, the tasks) threads of this process, or the
    tasks in turn in this thread where that is one; with `limit_threads`, each task's compiled
    loops on one thread, and BLAS on one in the process, while the threads run. 'threading',
    'loky': joblib's threads or processes, n_jobs as joblib reads it, BLAS on one thread.
    'dask': `cluster.on_cluster` at `scheduler_address`, `shared` sent once. With
    `limit_threads` on these, each task's compiled loops run on one thread (tasks side by side,
    whose small parallel loops would only contend for the cores with the others').
    `on_task(n_done, n_tasks)` is called as tasks finish; `label` prints "[label] task k/n
    done" then."""
    if limit_threads and backend != "threads":
        work = partial(_one_thread, work)
    if backend == "dask":
        finished = on_cluster(work, shared, tasks, scheduler_address)
    elif backend == "threads":
        finished = _on_threads(work, shared, tasks, n_jobs, limit_threads)
    else:
        finished = _on_joblib(work, shared, tasks, backend, n_jobs)
    results = [None] * len(tasks)
    with contextlib.closing(finished):
        for done, (k, result) in enumerate(finished, start=1):
            results[k] = result
            if on_task is not None:
                on_task(done, len(tasks))
            if label is not None:
                print(f"[{label}] task {done}/{len(tasks)} done")
    return results


def _one_thread(work, *args):
    """work(*args), its compiled loops on one thread."""
    with compiled_threads(1):
        return work(*args)


def _on_threads(work, shared, tasks, n_jobs, limit_threads):
    workers = min(len(tasks), n_jobs or os.cpu_count() or 1)
    if workers < 2:
        yield from ((k, work(*shared, *args)) for k, args in enumerate(tasks))
        return

    def call(args):
        with compiled_threads(1 if limit_threads else None):
            return work(*shared, *args)

    with ThreadPoolExecutor(workers) as pool, one_blas_thread() if limit_threads else contextlib.nullcontext():
        yield from enumerate(pool.map(call, tasks))


def _on_joblib(work, shared, tasks, backend, n_jobs):
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator")
    # the tasks' BLAS calls are small, and OpenBLAS's idle threads spin after each on the cores
    # the compiled loops need; joblib's processes get the same limit from joblib itself
    with one_blas_thread():
        yield from enumerate(parallel(delayed(work)(*shared, *args) for args in tasks))


@contextlib.contextmanager
def beside(func, *args):
    """func(*args) on a thread of its own while the body runs here, this thread's compiled loops
    on one thread and BLAS on one as `run_tasks`' limit_threads sets them; the body gets a
    function returning func's result. An error of the body comes first; func's is raised when
    the body ends without one."""
    with ThreadPoolExecutor(1) as pool, one_blas_thread(), compiled_threads(1):
        side = pool.submit(func, *args)
        yield side.result
        side.result()
