"""The process-wide BLAS thread limit that fits hold: set by the first context to open and
restored by the last to close, in any thread; a fit gives the same result on a worker thread
as on the main thread; and OpenBLAS's workers parked, only with no other Python thread alive."""

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sklearn.base import clone
from threadpoolctl import ThreadpoolController, threadpool_limits

from svmkit import SVC, NuSVC, _threads
from svmkit.kernels import gram


def blas_threads():
    return {lib["filepath"]: lib["num_threads"] for lib in _threads.blas_libraries().info()
            if lib["user_api"] == "blas"}


def in_thread(work):
    out = {}
    t = threading.Thread(target=lambda: out.update(value=work()))
    t.start()
    t.join(30)
    return out["value"]


def hold_in_thread():
    """A thread that holds a context until the returned event is set."""
    inside, leave = threading.Event(), threading.Event()

    def hold():
        with _threads.one_blas_thread():
            inside.set()
            leave.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    inside.wait(30)
    return t, leave


def test_a_worker_threads_context_inside_the_main_threads_keeps_the_limit_until_the_main_thread_leaves():
    before = blas_threads()
    with _threads.one_blas_thread():
        t, leave = hold_in_thread()
        leave.set()
        t.join(30)
        seen_after_worker = blas_threads()
    assert set(seen_after_worker.values()) == {1}
    assert blas_threads() == before


def test_a_worker_threads_context_alone_sets_and_restores_the_limit():
    before = blas_threads()

    def inside():
        with _threads.one_blas_thread():
            return blas_threads()

    assert set(in_thread(inside).values()) == {1}
    assert blas_threads() == before


def test_the_last_context_to_close_restores_the_limit_whichever_thread_opened_the_first():
    """The main thread sets the limit, a worker's context outlives the main thread's: the
    worker restores it (threadpoolctl alone would ignore a thread other than the first to
    set a limit)."""
    before = blas_threads()
    with _threads.one_blas_thread():
        t, leave = hold_in_thread()
    still_held = blas_threads()
    leave.set()
    t.join(30)
    assert set(still_held.values()) == {1}
    assert blas_threads() == before


def test_alone_is_whether_every_open_context_is_the_calling_threads():
    assert _threads.alone()
    with _threads.one_blas_thread(), _threads.one_blas_thread():
        alone_nested = _threads.alone()
        t, leave = hold_in_thread()
        beside_worker = _threads.alone()
        leave.set()
        t.join(30)
        after_worker = _threads.alone()
    assert alone_nested and not beside_worker and after_worker


PARKING = """
import os
import numpy as np
import scipy.linalg as la
from svmkit import _threads

threads = lambda: len(os.listdir("/proc/self/task"))
rng = np.random.default_rng(0)
A = rng.normal(size=(600, 600))
H = A @ A.T + 600 * np.eye(600)
product, factor = A @ A.T, la.cholesky(H, lower=True)
blas = [lib for lib in _threads.blas_libraries().info() if lib["user_api"] == "blas"]
if not _threads._blas_shutdowns() or max(lib["num_threads"] for lib in blas) < 2:
    print("no threaded pthreads OpenBLAS")
    raise SystemExit
running = threads()
_threads.park_blas_threads()
assert threads() < running, (threads(), running)
np.testing.assert_array_equal(A @ A.T, product)
_threads.park_blas_threads()
np.testing.assert_array_equal(la.cholesky(H, lower=True), factor)
print("parked")
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_parked_openblas_workers_end_and_start_again_for_the_next_threaded_call():
    # in a fresh process: other tests leave threads behind, beside which nothing is parked
    done = subprocess.run([sys.executable, "-c", PARKING], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    if done.stdout.strip() != "parked":
        pytest.skip(done.stdout.strip())


def test_openblas_workers_are_not_parked_while_another_thread_lives(monkeypatch):
    ended = []
    monkeypatch.setattr(_threads, "_blas_shutdowns", lambda: (lambda: ended.append(1),))
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    _threads.park_blas_threads()
    assert ended == []
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    _threads.park_blas_threads()
    assert ended == [1]


def _digits_fit(model):
    """(dual coefficients, intercepts, decision values) of `model` on scikit-learn's digits, odd
    against even."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    model.fit(X, np.where(y % 2, 1.0, -1.0))
    return model.dual_coef_, model.intercept_, model.decision_function(X)


def _assert_bit_identical(a, b):
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("model", [SVC(kernel="linear"), SVC(C=100, gamma=0.001), NuSVC(kernel="linear", nu=0.2)],
                         ids=["svc-linear", "svc-rbf", "nusvc-linear"])
def test_a_fit_on_a_worker_thread_is_the_fit_on_the_main_thread_bit_for_bit(model):
    """The Newton steps' GEMMs sum in an order set by OpenBLAS's thread count; a worker
    thread's fit ran them on every core (digits, linear: another support set)."""
    on_main = _digits_fit(clone(model))
    _assert_bit_identical(in_thread(lambda: _digits_fit(clone(model))), on_main)
    with ThreadPoolExecutor(2) as pool:
        _assert_bit_identical(pool.submit(_digits_fit, clone(model)).result(), on_main)


def test_a_fit_does_not_depend_on_the_thread_counts(monkeypatch):
    """BLAS and compiled-loop thread counts set otherwise around the fit, and the training rows' GEMM
    in column slabs on every core (digits' 64 features take it when it starts from one
    multiply-add): the same values, from the main thread or beside another thread's fit."""
    monkeypatch.setattr(gram, "THREADED_GEMM", 1)
    monkeypatch.setattr(gram, "GEMM_SLAB", 256)
    model = SVC(kernel="poly", degree=2, C=10)
    on_main = _digits_fit(clone(model))
    with threadpool_limits(limits=3, user_api="blas"):
        _assert_bit_identical(in_thread(lambda: _digits_fit(clone(model))), on_main)
    with _threads.compiled_threads(1):
        _assert_bit_identical(_digits_fit(clone(model)), on_main)
    t, leave = hold_in_thread()  # the slabs then run in turn on this thread
    try:
        _assert_bit_identical(_digits_fit(clone(model)), on_main)
    finally:
        leave.set()
        t.join(30)


def test_the_cores_threads_follow_the_calling_threads_limit():
    """compiled_threads limits the calling thread's parallel loops and restores them after;
    another thread keeps its own count."""
    from svmkit import _core

    full = _threads.compiled_thread_count()
    with _threads.compiled_threads(1):
        assert _threads.compiled_thread_count() == 1
        assert in_thread(_threads.compiled_thread_count) == full
        with _threads.compiled_threads(4):
            assert _threads.compiled_thread_count() == 1
    assert _threads.compiled_thread_count() == full
    assert _core.set_num_threads(0) == 0  # no limit of its own was left behind


@pytest.mark.skipif(sys.platform != "linux", reason="the core links GNU OpenMP on Linux")
def test_threadpoolctl_sees_and_limits_the_cores_openmp():
    from svmkit import _core

    assert _core.openmp
    assert any(lib["user_api"] == "openmp" for lib in ThreadpoolController().info())
    with threadpool_limits(limits=1, user_api="openmp"):
        assert _threads.compiled_thread_count() == 1
