"""Compiled element-wise kernel transforms applied to a block of inner products.

Each takes the inner-product block P = A Bᵀ and writes kernel values into rows `out_rows` of
`out`, in parallel over rows. The RBF exponential is evaluated inline (range reduction to
2^k · e^r with |r| ≤ ln2/2 and a degree-11 Taylor polynomial, relative error < 1e-14) so that
the loops vectorise; a library `exp` call would not.
"""

import numpy as np
from numba import get_num_threads, njit, prange

from svmkit._compiled import NO_REFCOUNT

LINEAR, POLY, RBF, SIGMOID = 0, 1, 2, 3

_LN2 = np.log(2.0)
_INV_FACT = np.array([1.0 / np.prod(np.arange(1, i + 1, dtype=np.float64)) for i in range(12)])


# The per-row helpers run without reference counting (NO_REFCOUNT): counting references on the
# shared arrays in every row, both threads contended for them (an RBF block of 3,089 rows and 4
# features: 8.4 ms on two threads, as on one; 4.4 ms without). Their scratch rows come from the
# caller, one pair per chunk of rows.

#: Most rows per chunk of the parallel loops (each chunk allocates its scratch once); fewer
#: when the rows would not give every thread a chunk.
ROW_CHUNK = 64


def _chunk_rows(q):
    """Rows per chunk for q rows: at most ROW_CHUNK, and at least one chunk per thread."""
    threads = get_num_threads()
    return max(1, min(ROW_CHUNK, (q + threads - 1) // threads))


@njit(cache=True, nogil=True, fastmath=True, **NO_REFCOUNT)
def _exp_row(x, bits, out, o, c):
    """out[o, j] = e^x[j] for x[j] ≤ 0, as e^x = 2^k e^r, |r| ≤ ln2/2; x is overwritten and
    `bits` (int64, as long as x) is scratch.

    2^k is assembled from its IEEE-754 bits so that every loop vectorises; x is clipped at
    −708 (e^−708 ≈ 3e−308, zero in float32 and below any kernel value that matters).
    """
    n = x.shape[0]
    for j in range(n):
        v = max(x[j], -708.0)
        k = np.floor(v * (1.0 / _LN2) + 0.5)
        x[j] = v - k * _LN2
        bits[j] = (np.int64(k) + 1023) << 52
    scale = bits.view(np.float64)
    for j in range(n):
        t = x[j]
        p = c[11]
        for i in range(10, -1, -1):
            p = p * t + c[i]
        out[o, j] = p * scale[j]


@njit(cache=True, nogil=True, fastmath=True, **NO_REFCOUNT)
def _finish_rbf_row(P, r, a_sq, b_sq, gamma, out, o, c, x, bits):
    """out[o, j] = exp(−γ max(||a_r||² + ||b_j||² − 2P[r, j], 0)); x, bits: scratch rows."""
    ar = a_sq[r]
    for j in range(P.shape[1]):
        x[j] = -gamma * max(ar + b_sq[j] - 2.0 * P[r, j], 0.0)
    _exp_row(x, bits, out, o, c)


@njit(parallel=True, cache=True, nogil=True, fastmath=True)
def _finish_rbf(P, a_sq, b_sq, gamma, out, out_rows, c, size):
    """out[o] = exp(−γ max(||a||² + ||b||² − 2P, 0)), in chunks of `size` rows."""
    q, n = P.shape
    for chunk in prange((q + size - 1) // size):
        x, bits = np.empty(n), np.empty(n, dtype=np.int64)
        for r in range(chunk * size, min(q, (chunk + 1) * size)):
            _finish_rbf_row(P, r, a_sq, b_sq, gamma, out, out_rows[r], c, x, bits)


@njit(parallel=True, cache=True, nogil=True, fastmath=True)
def refine_rbf_rows(out, out_rows, idx, X, sq, gamma, noise):
    """Recompute in float64, from the differences themselves, the RBF values of rows `idx`
    (written to rows `out_rows` of `out`) whose squared distance d² came from a float32 inner
    product and is within `noise`·(||a||² + ||b||²) of zero, where ||a||² + ||b||² − 2<a, b>
    is mostly rounding: identical rows would get K ≈ 1 − γ·noise·2||a||², not 1, and at
    large C their opposite labels a Q_FF that is not singular. X: the float64 rows, sq the
    squared norms the GEMM saw (of the centred rows)."""
    n, d = X.shape
    sq_max = np.max(sq)
    for r in prange(idx.shape[0]):
        i = idx[r]
        row = out[out_rows[r]]
        # no value below this one is close enough to look at; most rows have none above it,
        # which one pass that vectorises tells
        floor = np.exp(-gamma * noise * (sq[i] + sq_max))
        above = 0
        for j in range(n):
            above += row[j] > floor
        if above == 0:
            continue
        for j in range(n):
            if row[j] > floor and -np.log(row[j]) < gamma * noise * (sq[i] + sq[j]):
                s = 0.0
                for k in range(d):
                    diff = X[i, k] - X[j, k]
                    s += diff * diff
                row[j] = np.exp(-gamma * s)


@njit(cache=True, nogil=True, fastmath=True, **NO_REFCOUNT)
def _rbf_direct_row(Xt, i, gamma, out, o, c, x, bits):
    """out[o, j] = exp(−γ ||x_i − x_j||²) over every column j of Xt (d × n), from the
    differences themselves: for few features this beats a GEMM and its extra pass."""
    d, n = Xt.shape
    x[:] = 0.0
    for k in range(d):
        xi = Xt[k, i]
        for j in range(n):
            diff = Xt[k, j] - xi
            x[j] += diff * diff
    for j in range(n):
        x[j] *= -gamma
    _exp_row(x, bits, out, o, c)


@njit(parallel=True, cache=True, nogil=True)
def _rbf_direct_parallel(Xt, idx, gamma, out, out_rows, c, size):
    q, n = idx.shape[0], Xt.shape[1]
    for chunk in prange((q + size - 1) // size):
        x, bits = np.empty(n), np.empty(n, dtype=np.int64)
        for r in range(chunk * size, min(q, (chunk + 1) * size)):
            _rbf_direct_row(Xt, idx[r], gamma, out, out_rows[r], c, x, bits)


@njit(cache=True, nogil=True)
def _rbf_direct_serial(Xt, idx, gamma, out, out_rows, c):
    x, bits = np.empty(Xt.shape[1]), np.empty(Xt.shape[1], dtype=np.int64)
    for r in range(idx.shape[0]):
        _rbf_direct_row(Xt, idx[r], gamma, out, out_rows[r], c, x, bits)


@njit(parallel=True, cache=True, nogil=True)
def _finish_other(P, code, gamma, coef0, degree, out, out_rows):
    q, n = P.shape
    for r in prange(q):
        o = out_rows[r]
        if code == POLY:
            for j in range(n):
                out[o, j] = (gamma * P[r, j] + coef0) ** degree
        elif code == SIGMOID:
            for j in range(n):
                out[o, j] = np.tanh(gamma * P[r, j] + coef0)
        else:
            for j in range(n):
                out[o, j] = P[r, j]


#: Kernel values below which a block is computed without starting threads.
SERIAL_ELEMENTS = 2**18


def rbf_rows_direct(Xt, idx, gamma, out, out_rows):
    """Write the RBF kernel rows of the points `idx` against every column of Xt (features ×
    points, float64) into rows `out_rows` of `out`."""
    if idx.shape[0] * Xt.shape[1] <= SERIAL_ELEMENTS:
        _rbf_direct_serial(Xt, idx, gamma, out, out_rows, _INV_FACT)
    else:
        _rbf_direct_parallel(Xt, idx, gamma, out, out_rows, _INV_FACT, _chunk_rows(idx.shape[0]))


def finish_block(P, a_sq, b_sq, code, gamma, coef0, degree, out, out_rows):
    """Turn inner products P into kernel values, written to rows `out_rows` of `out`."""
    if P.shape[0] == 0:
        return
    if code == RBF:
        _finish_rbf(P, a_sq, b_sq, gamma, out, out_rows, _INV_FACT, _chunk_rows(P.shape[0]))
    else:
        _finish_other(P, code, gamma, coef0, degree, out, out_rows)
