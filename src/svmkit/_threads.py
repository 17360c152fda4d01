"""Thread limits for compiled work that runs side by side on the cores: each task's small
parallel loops would only contend with the others', and OpenBLAS's idle threads spin after
every call on the cores the compiled loops need."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def numba_threads(n):
    """Numba's parallel loops on at most `n` threads in the calling thread (None: as they are)."""
    if n is None:
        yield
        return
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n, before)))
    try:
        yield
    finally:
        numba.set_num_threads(before)


def one_blas_thread():
    """BLAS on one thread in the whole process while the context lasts."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")
