"""Threads of compiled work. Thread limits for work that runs side by side on the cores: each
task's small parallel loops would only contend with the others', and OpenBLAS's idle threads
spin after every call on the cores the compiled loops need; the BLAS threads of LAPACK
factorisations.

And Ctrl-C for compiled loops that run in the main thread without the GIL (`stop_on_ctrl_c`):
Python runs its SIGINT handler only between bytecodes, which a long compiled loop never
reaches. While such a loop runs, Python's signal wake-up file descriptor (written by its
C-level handler at once) is pointed at a socket that a watching thread reads; on SIGINT it sets
the stop flag the loop polls. The loop returns, and Python's own handler then raises
KeyboardInterrupt."""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib
import os
import signal
import socket
import threading

import numpy as np
import threadpoolctl


@contextlib.contextmanager
def compiled_threads(n, *, past_limit=False):
    """The compiled core's parallel loops on at most `n` threads in the calling thread (None: as
    they are): at most as many as they run on now, or with `past_limit` as the cores this
    process may run on (a task alone on its machine in a worker started on one thread)."""
    if n is None:
        yield
        return
    from svmkit import _core

    most = usable_cores() if past_limit else _core.get_num_threads()
    before = _core.set_num_threads(max(1, min(n, most)))
    try:
        yield
    finally:
        _core.set_num_threads(before)


def usable_cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def compiled_thread_count() -> int:
    """Threads the compiled core's parallel loops start from the calling thread."""
    from svmkit import _core

    return _core.get_num_threads()


@functools.cache
def blas_libraries():
    """The BLAS libraries of the process, SciPy's (which the compiled loops call) loaded first."""
    from threadpoolctl import ThreadpoolController

    importlib.import_module("scipy.linalg.cython_blas")

    return ThreadpoolController()


_blas_lock = threading.Lock()
#: Contexts of `one_blas_thread` open in every thread, and in the calling thread.
_blas_users = 0
_blas_depth = threading.local()
_blas_limiter = None


def _release_blas_control():
    """Let the calling thread change OpenBLAS's thread count: threadpoolctl (3.6 on) lets only
    the first thread that set an OpenBLAS limit change it again and silently ignores the
    others. `_blas_lock`, held by the caller, orders svmkit's own changes."""
    controller = getattr(threadpoolctl, "OpenBLASController", None)
    if hasattr(controller, "clear_controlling_thread"):
        controller.clear_controlling_thread(force=True)


@contextlib.contextmanager
def one_blas_thread():
    """BLAS on one thread in the whole process while a context is open in any thread: the
    first to open sets the limit, the last to close restores it, whichever threads they are.
    OpenBLAS sums a GEMM or a long dot product in an order that depends on its thread count,
    so a fit that holds it gives the same result on any thread, beside any other, on any
    number of cores."""
    global _blas_users, _blas_limiter
    with _blas_lock:
        if _blas_users == 0:
            _release_blas_control()
            _blas_limiter = blas_libraries().limit(limits=1, user_api="blas")
        _blas_users += 1
        _blas_depth.n = getattr(_blas_depth, "n", 0) + 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            _blas_depth.n -= 1
            if _blas_users == 0:
                _release_blas_control()
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


def alone() -> bool:
    """Whether every open `one_blas_thread` context is the calling thread's: no other thread's
    compiled work then shares the cores."""
    with _blas_lock:
        return _blas_users == getattr(_blas_depth, "n", 0)


@functools.cache
def _blas_shutdowns():
    """Each pthreads OpenBLAS's own ending of its worker threads (`blas_thread_shutdown_`)."""
    ends = []
    for lib in blas_libraries().lib_controllers:
        if lib.internal_api == "openblas" and lib.threading_layer == "pthreads":
            end = getattr(lib.dynlib, "blas_thread_shutdown_", None)
            if end is not None:
                ends.append(end)
    return tuple(ends)


def park_blas_threads():
    """End OpenBLAS's worker threads, as OpenBLAS does itself before a fork; its next threaded
    call starts them again, at little cost. After each threaded call they spin (sched_yield) a
    while and, with no spare core, take one from what runs next: the compiled loops, or the
    other OpenBLAS (NumPy's and SciPy's wheels each bundle one). Only while no other Python
    thread exists, which could be inside a BLAS call."""
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
    with one_blas_thread() if A.nbytes >= SERIAL_FACTOR_BYTES else contextlib.nullcontext():
        yield
    if park:
        park_blas_threads()


#: The socket the wake-up descriptor writes to, once the watching thread has started.
_writer = None
#: The stop flag of the loop running in the main thread (None: none runs).
_running = [None]


def _watch(reader: socket.socket) -> None:
    """Set the running loop's stop flag on each SIGINT; end when the writer closes (at exit)."""
    with reader:
        while data := reader.recv(64):
            if signal.SIGINT in data and _running[0] is not None:
                _running[0][0] = 1


@contextlib.contextmanager
def stop_on_ctrl_c():
    """A one-element uint8 array for a compiled loop to poll: a Ctrl-C while the body runs in
    the main thread sets it, when SIGINT raises KeyboardInterrupt there (Python's default), so
    that the interrupted result is never returned. Elsewhere it stays 0."""
    global _writer
    stop = np.zeros(1, dtype=np.uint8)
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield stop
        return
    if _writer is None:
        reader, _writer = socket.socketpair()
        _writer.setblocking(False)
        atexit.register(_writer.close)
        threading.Thread(target=_watch, args=(reader,), name="svmkit-ctrl-c", daemon=True).start()
    previous = signal.set_wakeup_fd(_writer.fileno(), warn_on_full_buffer=False)
    _running[0] = stop
    try:
        yield stop
    finally:
        _running[0] = None
        signal.set_wakeup_fd(previous)
