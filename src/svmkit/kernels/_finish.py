"""Compiled element-wise kernel transforms applied to a block of inner products.

Each takes the inner-product block P = A Bᵀ and writes kernel values into rows `out_rows` of
`out`. The RBF exponent is formed in compiled parallel code and exponentiated in place by
NumPy's SIMD `exp`, one thread per core (NumPy's `exp` alone runs on one core).
"""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit, prange

LINEAR, POLY, RBF, SIGMOID = 0, 1, 2, 3

N_THREADS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
_POOL = ThreadPoolExecutor(max_workers=N_THREADS)


@njit(parallel=True, cache=True)
def _finish(P, a_sq, b_sq, code, gamma, coef0, degree, out, out_rows):
    q, n = P.shape
    for r in prange(q):
        o = out_rows[r]
        if code == RBF:
            ar = a_sq[r]
            for j in range(n):
                d = ar + b_sq[j] - 2.0 * P[r, j]
                out[o, j] = -gamma * d if d > 0.0 else 0.0
        elif code == POLY:
            for j in range(n):
                out[o, j] = (gamma * P[r, j] + coef0) ** degree
        elif code == SIGMOID:
            for j in range(n):
                out[o, j] = np.tanh(gamma * P[r, j] + coef0)
        else:
            for j in range(n):
                out[o, j] = P[r, j]


def _runs(rows):
    """Split sorted-or-not row indices into (start, stop) runs of consecutive rows."""
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    starts = np.r_[0, breaks]
    stops = np.r_[breaks, rows.size]
    return [(int(rows[s]), int(rows[e - 1]) + 1) for s, e in zip(starts, stops)]


def _exp_rows(out, out_rows):
    runs = _runs(out_rows)
    pieces = []
    for lo, hi in runs:
        step = max(1, -(-(hi - lo) // N_THREADS))
        pieces += [(s, min(hi, s + step)) for s in range(lo, hi, step)]

    def work(chunk):
        for lo, hi in chunk:
            np.exp(out[lo:hi], out=out[lo:hi])

    list(_POOL.map(work, [pieces[t::N_THREADS] for t in range(N_THREADS)]))


def finish_block(P, a_sq, b_sq, code, gamma, coef0, degree, out, out_rows):
    """Turn inner products P into kernel values, written to rows `out_rows` of `out`."""
    if P.shape[0] == 0:
        return
    _finish(P, a_sq, b_sq, code, gamma, coef0, degree, out, out_rows)
    if code == RBF:
        _exp_rows(out, out_rows)
