"""The process-wide BLAS thread limit that solves hold: set and restored by the main thread,
counted in every thread, lifted for one large call of the main thread alone; and OpenBLAS's
workers parked, only with no other Python thread alive."""

import os
import subprocess
import sys
import threading

import pytest

from svmkit import _threads


def blas_threads():
    return {lib["filepath"]: lib["num_threads"] for lib in _threads._blas_controller().info()
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


def test_a_worker_threads_context_alone_changes_no_limit():
    before = blas_threads()

    def inside():
        with _threads.one_blas_thread():
            return blas_threads()

    assert in_thread(inside) == before
    assert blas_threads() == before


def test_a_large_call_lifts_the_limit_only_while_no_other_thread_holds_a_context():
    before = blas_threads()
    with _threads.one_blas_thread(), _threads.one_blas_thread():
        with _threads.all_blas_threads():
            lifted_alone = blas_threads()
        after_lift = blas_threads()
        t, leave = hold_in_thread()
        with _threads.all_blas_threads():
            lifted_beside_worker = blas_threads()
        leave.set()
        t.join(30)
    assert lifted_alone == before
    assert set(after_lift.values()) == {1}
    assert set(lifted_beside_worker.values()) == {1}
    assert blas_threads() == before


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
blas = [lib for lib in _threads._blas_controller().info() if lib["user_api"] == "blas"]
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
