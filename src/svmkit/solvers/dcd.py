"""Dual coordinate descent for linear SVMs (Hsieh et al. 2008; Ho & Lin 2012), LIBLINEAR's
method, compiled with Numba on plain arrays.

Classification (seed 000 (9.40): the soft-margin SVM is L2-regularised hinge loss):

    min_α ½ αᵀ(Q + D)α − 1ᵀα,  0 ≤ α_i ≤ U_i,  Q_ij = y_i y_j x_iᵀx_j,

hinge loss: U_i = C_i, D_ii = 0; squared hinge: U_i = ∞, D_ii = 1/(2C_i); w = Σ y_i α_i x_i.
Regression (ε-insensitive loss), with β_i = α_i − α*_i:

    min_β ½ βᵀ(Q + D)β − yᵀβ + ε‖β‖₁,  −U_i ≤ β_i ≤ U_i,  Q_ij = x_iᵀx_j, w = Σ β_i x_i,

with U, D as above. One coordinate at a time in a random order, with LIBLINEAR's shrinking;
the intercept, when asked for, is the weight of a constant feature `bias` (regularised, as
LIBLINEAR's -B). Rows are a dense array or CSR parts; the loops release the GIL.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

#: A coordinate step smaller than this is skipped (LIBLINEAR's 1e-12).
STEP_MIN = 1e-12

# Each row's scalars sit together in one 64-byte record, and a sparse row's (index, value)
# pairs interleaved: the coordinates are visited in random order, so every array read at row
# i costs a cache miss; one record and one stream per row keep it to two.
_Y, _QD, _U, _D, _A, _START, _END = range(7)


@njit(cache=True, nogil=True, inline="always")
def _dot(w, i, info, dense, packed, sparse, bias):
    s = w[w.size - 1] * bias
    if sparse:
        for p in range(int(info[i, _START]), int(info[i, _END])):
            s += w[int(packed[2 * p])] * packed[2 * p + 1]
    else:
        for j in range(dense.shape[1]):
            s += w[j] * dense[i, j]
    return s


@njit(cache=True, nogil=True, inline="always")
def _axpy(d, w, i, info, dense, packed, sparse, bias):
    w[w.size - 1] += d * bias
    if sparse:
        for p in range(int(info[i, _START]), int(info[i, _END])):
            w[int(packed[2 * p])] += d * packed[2 * p + 1]
    else:
        for j in range(dense.shape[1]):
            w[j] += d * dense[i, j]


def aligned_records(n):
    """An (n, 8) float64 array of zeros whose rows start on 64-byte boundaries (a record per
    cache line)."""
    raw = np.zeros(n * 8 + 8)
    skip = (-raw.ctypes.data % 64) // 8
    return raw[skip:skip + n * 8].reshape(n, 8)


@njit(cache=True, nogil=True)
def _records(info, dense, packed, indptr, sparse, bias, y, upper, diag):
    """Fill the rows' records: y, ‖x‖² + bias² + D_ii, U, D, the variable (0), the row's span."""
    for i in range(info.shape[0]):
        q = bias * bias
        if sparse:
            for p in range(indptr[i], indptr[i + 1]):
                q += packed[2 * p + 1] * packed[2 * p + 1]
            info[i, _START], info[i, _END] = indptr[i], indptr[i + 1]
        else:
            for j in range(dense.shape[1]):
                q += dense[i, j] * dense[i, j]
        info[i, _Y], info[i, _QD], info[i, _U], info[i, _D] = y[i], q + diag[i], upper[i], diag[i]


@njit(cache=True, nogil=True)
def _shuffle(index, active):
    for s in range(active):
        j = s + np.random.randint(active - s)
        index[s], index[j] = index[j], index[s]


@njit(cache=True, nogil=True)
def dcd_classify(info, dense, packed, indptr, sparse, n_weights, bias, y, upper, diag, tol, max_iter, seed):
    """Solve the classification dual; returns (w (n_weights + 1, the last entry the bias
    weight), α, passes). Stops when the projected gradient's spread over a full pass is ≤ tol."""
    np.random.seed(seed)
    w = np.zeros(n_weights + 1)
    _records(info, dense, packed, indptr, sparse, bias, y, upper, diag)
    n = info.shape[0]
    index = np.arange(n)
    active = n
    pg_max_old, pg_min_old = np.inf, -np.inf
    it = 0
    while it < max_iter:
        pg_max, pg_min = -np.inf, np.inf
        _shuffle(index, active)
        s = 0
        while s < active:
            i = index[s]
            yi, alpha, U = info[i, _Y], info[i, _A], info[i, _U]
            G = yi * _dot(w, i, info, dense, packed, sparse, bias) - 1.0 + alpha * info[i, _D]
            PG = 0.0
            if alpha == 0.0:
                if G > pg_max_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                if G < 0.0:
                    PG = G
            elif alpha == U:
                if G < pg_min_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                if G > 0.0:
                    PG = G
            else:
                PG = G
            pg_max = max(pg_max, PG)
            pg_min = min(pg_min, PG)
            if abs(PG) > STEP_MIN:
                new = min(max(alpha - G / info[i, _QD], 0.0), U)
                info[i, _A] = new
                _axpy((new - alpha) * yi, w, i, info, dense, packed, sparse, bias)
            s += 1
        it += 1
        if pg_max - pg_min <= tol and abs(pg_max) <= tol and abs(pg_min) <= tol:
            if active == n:
                break
            active = n
            pg_max_old, pg_min_old = np.inf, -np.inf
            continue
        pg_max_old = pg_max if pg_max > 0.0 else np.inf
        pg_min_old = pg_min if pg_min < 0.0 else -np.inf
    return w, info[:, _A].copy(), it


@njit(cache=True, nogil=True)
def dcd_regress(info, dense, packed, indptr, sparse, n_weights, bias, y, upper, diag, epsilon, tol, max_iter, seed):
    """Solve the regression dual; returns (w, β, passes). Stops when the pass's summed
    violation is ≤ tol times the first pass's (LIBLINEAR's rule)."""
    np.random.seed(seed)
    w = np.zeros(n_weights + 1)
    _records(info, dense, packed, indptr, sparse, bias, y, upper, diag)
    n = info.shape[0]
    index = np.arange(n)
    active = n
    g_max_old = np.inf
    g_norm_init = -1.0
    it = 0
    while it < max_iter:
        g_max, g_norm = 0.0, 0.0
        _shuffle(index, active)
        s = 0
        while s < active:
            i = index[s]
            beta, U, lam = info[i, _A], info[i, _U], info[i, _D]
            G = -info[i, _Y] + lam * beta + _dot(w, i, info, dense, packed, sparse, bias)
            H = info[i, _QD]
            Gp, Gn = G + epsilon, G - epsilon
            violation = 0.0
            if beta == 0.0:
                if Gp < 0.0:
                    violation = -Gp
                elif Gn > 0.0:
                    violation = Gn
                elif Gp > g_max_old and Gn < -g_max_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
            elif beta >= U:
                if Gp > 0.0:
                    violation = Gp
                elif Gp < -g_max_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
            elif beta <= -U:
                if Gn < 0.0:
                    violation = -Gn
                elif Gn > g_max_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
            elif beta > 0.0:
                violation = abs(Gp)
            else:
                violation = abs(Gn)
            g_max = max(g_max, violation)
            g_norm += violation
            if Gp < H * beta:
                d = -Gp / H
            elif Gn > H * beta:
                d = -Gn / H
            else:
                d = -beta
            s += 1
            if abs(d) < STEP_MIN:
                continue
            new = min(max(beta + d, -U), U)
            if new != beta:
                info[i, _A] = new
                _axpy(new - beta, w, i, info, dense, packed, sparse, bias)
        if it == 0:
            g_norm_init = g_norm
        it += 1
        if g_norm <= tol * g_norm_init:
            if active == n:
                break
            active = n
            g_max_old = np.inf
            continue
        g_max_old = g_max
    return w, info[:, _A].copy(), it


def row_arrays(X):
    """(dense, packed, indptr, sparse) for the loops: a C-ordered float64 array, or a CSR
    matrix's (index, value) pairs interleaved in one float64 array with its indptr (the other
    slots hold empty placeholders)."""
    if sp.issparse(X):
        X = X.tocsr()
        packed = np.empty(2 * X.nnz)
        packed[0::2] = X.indices
        packed[1::2] = X.data
        return np.zeros((1, 1)), packed, X.indptr.astype(np.int64), True
    return np.ascontiguousarray(X, dtype=np.float64), np.zeros(2), np.zeros(2, dtype=np.int64), False
