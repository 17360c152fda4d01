"""Compiled element-wise kernel transforms applied to a block of inner products.

Each takes the inner-product block P = A Bᵀ and writes kernel values into rows `out_rows` of
`out`, in parallel over rows. The RBF exponential is evaluated inline (range reduction to
2^k · e^r with |r| ≤ ln2/2 and a degree-11 Taylor polynomial, relative error < 1e-14) so that
the loops vectorise; a library `exp` call would not.
"""

import numpy as np
from numba import njit, prange

LINEAR, POLY, RBF, SIGMOID = 0, 1, 2, 3

_LN2 = np.log(2.0)
_INV_FACT = np.array([1.0 / np.prod(np.arange(1, i + 1, dtype=np.float64)) for i in range(12)])


@njit(parallel=True, cache=True, fastmath=True)
def _finish_rbf(P, a_sq, b_sq, gamma, out, out_rows, c):
    """out[o] = exp(−γ max(||a||² + ||b||² − 2P, 0)) with e^x = 2^k e^r, |r| ≤ ln2/2.

    2^k is assembled from its IEEE-754 bits so that every loop vectorises; x is clipped at
    −708 (e^−708 ≈ 3e−308, zero in float32 and below any kernel value that matters).
    """
    q, n = P.shape
    for r in prange(q):
        o = out_rows[r]
        ar = a_sq[r]
        bits = np.empty(n, dtype=np.int64)
        red = np.empty(n)
        for j in range(n):
            d = ar + b_sq[j] - 2.0 * P[r, j]
            x = max(-gamma * max(d, 0.0), -708.0)
            k = np.floor(x * (1.0 / _LN2) + 0.5)
            red[j] = x - k * _LN2
            bits[j] = (np.int64(k) + 1023) << 52
        scale = bits.view(np.float64)
        for j in range(n):
            t = red[j]
            p = c[11]
            for i in range(10, -1, -1):
                p = p * t + c[i]
            out[o, j] = p * scale[j]


@njit(parallel=True, cache=True)
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


def finish_block(P, a_sq, b_sq, code, gamma, coef0, degree, out, out_rows):
    """Turn inner products P into kernel values, written to rows `out_rows` of `out`."""
    if P.shape[0] == 0:
        return
    if code == RBF:
        _finish_rbf(P, a_sq, b_sq, gamma, out, out_rows, _INV_FACT)
    else:
        _finish_other(P, code, gamma, coef0, degree, out, out_rows)
