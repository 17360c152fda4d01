"""Thread limits for compiled work that runs side by side on the cores: each task's small
parallel loops would only contend with the others', and OpenBLAS's idle threads spin after
every call on the cores the compiled loops need; and the BLAS threads of LAPACK factorisations."""

from __future__ import annotations

import contextlib
import functools
import importlib
import threading

from threadpoolctl import threadpool_limits


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


@functools.cache
def _blas_controller():
    """The BLAS libraries of the process, SciPy's (which the compiled loops call) loaded first."""
    from threadpoolctl import ThreadpoolController

    importlib.import_module("scipy.linalg.cython_blas")

    return ThreadpoolController()


_blas_lock = threading.Lock()
#: Contexts of `one_blas_thread` open in any thread, and in the main thread.
_blas_users = 0
_blas_main_depth = 0
_blas_limiter = None
_blas_lifted = False


@contextlib.contextmanager
def one_blas_thread():
    """BLAS on one thread in the whole process while the main thread's outermost context
    lasts. The limit is set and restored by the main thread only, where contexts nest:
    OpenBLAS ignores another thread's raise of a count the main thread lowered, so a limit
    restored elsewhere could outlive every context. Contexts of other threads set nothing
    (their work runs inside a main-thread context, as svmkit's own pools do) but are counted,
    so that `all_blas_threads` knows whether BLAS shares the cores."""
    global _blas_users, _blas_main_depth, _blas_limiter, _blas_lifted
    main = threading.current_thread() is threading.main_thread()
    with _blas_lock:
        _blas_users += 1
        if _blas_lifted:  # a large call of the main thread runs: BLAS shares the cores again
            _blas_controller().limit(limits=1, user_api="blas")
            _blas_lifted = False
        if main:
            if _blas_main_depth == 0:
                _blas_limiter = _blas_controller().limit(limits=1, user_api="blas")
            _blas_main_depth += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if main:
                _blas_main_depth -= 1
                if _blas_main_depth == 0:
                    _blas_limiter.restore_original_limits()
                    _blas_limiter, _blas_lifted = None, False


@contextlib.contextmanager
def all_blas_threads():
    """Lift `one_blas_thread`'s limit for one large BLAS call (a GEMM whose threads gain more
    than their spinning afterwards costs) made in the main thread while no other thread holds
    a context: beside other threads' compiled work the limit stays."""
    global _blas_lifted
    main = threading.current_thread() is threading.main_thread()
    with _blas_lock:
        lift = main and 0 < _blas_users == _blas_main_depth and not _blas_lifted
        if lift:
            _blas_limiter.restore_original_limits()
            _blas_lifted = True
    try:
        yield
    finally:
        with _blas_lock:
            if lift and _blas_lifted:
                _blas_controller().limit(limits=1, user_api="blas")
                _blas_lifted = False


@functools.cache
def _blas_shutdowns():
    """Each pthreads OpenBLAS's own ending of its worker threads (`blas_thread_shutdown_`)."""
    ends = []
    for lib in _blas_controller().lib_controllers:
        if lib.internal_api == "openblas" and lib.threading_layer == "pthreads":
            end = getattr(lib.dynlib, "blas_thread_shutdown_", None)
            if end is not None:
                ends.append(end)
    return tuple(ends)


def park_blas_threads():
    """End OpenBLAS's worker threads, as OpenBLAS does itself before a fork; its next threaded
    call starts them again (~0.1 ms). After each threaded call they spin (sched_yield) for about
    0.1 s and, with no spare core, take one from what runs next: the compiled loops, or the
    other OpenBLAS (NumPy's and SciPy's wheels each bundle one). Measured at N = 5,000: the
    float32 factorisation after NumPy's GEMM 0.17 → 0.13 s, the CG steps after it 60 → 50 ms.
    Only while no other Python thread exists, which could be inside a BLAS call."""
    if threading.active_count() != 1:
        return
    with _blas_lock:
        for end in _blas_shutdowns():
            end()


#: Bytes of a matrix from which LAPACK factorisations run on one BLAS thread.
SERIAL_FACTOR_BYTES = 1 << 31
#: Bytes of a matrix from which OpenBLAS's workers are parked around its factorisation.
PARK_MIN_BYTES = 1 << 22


@contextlib.contextmanager
def factor_threads(A):
    """BLAS threads for the factorisation of the array A: one when A has 2 GB or more, where the
    threaded OpenBLAS potrf of the scipy and numpy wheels segfaults once another OpenBLAS has run
    in the process (and, measured at N = 20,000, is no faster than one thread). From 4 MB,
    OpenBLAS's idle workers are parked before it (NumPy's, spinning after the kernel's GEMM) and
    after it (its own, spinning beside the compiled CG steps that follow): `park_blas_threads`."""
    park = A.nbytes >= PARK_MIN_BYTES
    if park:
        park_blas_threads()
    with threadpool_limits(limits=1) if A.nbytes >= SERIAL_FACTOR_BYTES else contextlib.nullcontext():
        yield
    if park:
        park_blas_threads()
