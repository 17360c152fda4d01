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


@njit(cache=True, nogil=True, inline="always")
def _dot(w, i, dense, data, indices, indptr, sparse, bias):
    s = w[w.size - 1] * bias
    if sparse:
        for p in range(indptr[i], indptr[i + 1]):
            s += w[indices[p]] * data[p]
    else:
        for j in range(dense.shape[1]):
            s += w[j] * dense[i, j]
    return s


@njit(cache=True, nogil=True, inline="always")
def _axpy(d, w, i, dense, data, indices, indptr, sparse, bias):
    w[w.size - 1] += d * bias
    if sparse:
        for p in range(indptr[i], indptr[i + 1]):
            w[indices[p]] += d * data[p]
    else:
        for j in range(dense.shape[1]):
            w[j] += d * dense[i, j]


@njit(cache=True, nogil=True, inline="always")
def _shuffle(index, active):
    """A random permutation of the active variables' order (LIBLINEAR's per-pass shuffle)."""
    for s in range(active):
        j = s + np.random.randint(active - s)
        index[s], index[j] = index[j], index[s]


@njit(cache=True, nogil=True, inline="always")
def _shrink(index, s, active):
    """Move the variable at position s out of the active set; returns the new active size."""
    active -= 1
    index[s], index[active] = index[active], index[s]
    return active


@njit(cache=True, nogil=True)
def _squared_norms(n, dense, data, indices, indptr, sparse, bias):
    out = np.empty(n)
    for i in range(n):
        s = bias * bias
        if sparse:
            for p in range(indptr[i], indptr[i + 1]):
                s += data[p] * data[p]
        else:
            for j in range(dense.shape[1]):
                s += dense[i, j] * dense[i, j]
        out[i] = s
    return out


# error_model="numpy": an all-zero row without a bias has ‖x‖² = 0, and its step is ±inf
# clipped to the bound, as in LIBLINEAR's C, not a ZeroDivisionError.
@njit(cache=True, nogil=True, error_model="numpy")
def dcd_classify(dense, data, indices, indptr, sparse, n, n_weights, bias, y, upper, diag, tol, max_iter, seed):
    """Solve the classification dual; returns (w (n_weights + 1, the last entry the bias
    weight), α, passes). Stops when the projected gradient's spread over a full pass is ≤ tol."""
    np.random.seed(seed)
    w = np.zeros(n_weights + 1)
    alpha = np.zeros(n)
    QD = _squared_norms(n, dense, data, indices, indptr, sparse, bias) + diag
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
            G = y[i] * _dot(w, i, dense, data, indices, indptr, sparse, bias) - 1.0 + alpha[i] * diag[i]
            PG = 0.0
            if alpha[i] == 0.0:
                if G > pg_max_old:
                    active = _shrink(index, s, active)
                    continue
                if G < 0.0:
                    PG = G
            elif alpha[i] == upper[i]:
                if G < pg_min_old:
                    active = _shrink(index, s, active)
                    continue
                if G > 0.0:
                    PG = G
            else:
                PG = G
            pg_max = max(pg_max, PG)
            pg_min = min(pg_min, PG)
            if abs(PG) > STEP_MIN:
                old = alpha[i]
                alpha[i] = min(max(old - G / QD[i], 0.0), upper[i])
                _axpy((alpha[i] - old) * y[i], w, i, dense, data, indices, indptr, sparse, bias)
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
    return w, alpha, it


@njit(cache=True, nogil=True, error_model="numpy")
def dcd_regress(dense, data, indices, indptr, sparse, n, n_weights, bias, y, upper, diag, epsilon, tol, max_iter,
                seed):
    """Solve the regression dual; returns (w, β, passes). Stops when the pass's summed
    violation is ≤ tol times the first pass's (LIBLINEAR's rule)."""
    np.random.seed(seed)
    w = np.zeros(n_weights + 1)
    beta = np.zeros(n)
    QD = _squared_norms(n, dense, data, indices, indptr, sparse, bias)
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
            G = -y[i] + diag[i] * beta[i] + _dot(w, i, dense, data, indices, indptr, sparse, bias)
            H = QD[i] + diag[i]
            Gp, Gn = G + epsilon, G - epsilon
            violation = 0.0
            if beta[i] == 0.0:
                if Gp < 0.0:
                    violation = -Gp
                elif Gn > 0.0:
                    violation = Gn
                elif Gp > g_max_old and Gn < -g_max_old:
                    active = _shrink(index, s, active)
                    continue
            elif beta[i] >= upper[i]:
                if Gp > 0.0:
                    violation = Gp
                elif Gp < -g_max_old:
                    active = _shrink(index, s, active)
                    continue
            elif beta[i] <= -upper[i]:
                if Gn < 0.0:
                    violation = -Gn
                elif Gn > g_max_old:
                    active = _shrink(index, s, active)
                    continue
            elif beta[i] > 0.0:
                violation = abs(Gp)
            else:
                violation = abs(Gn)
            g_max = max(g_max, violation)
            g_norm += violation
            if Gp < H * beta[i]:
                d = -Gp / H
            elif Gn > H * beta[i]:
                d = -Gn / H
            else:
                d = -beta[i]
            s += 1
            if abs(d) < STEP_MIN:
                continue
            old = beta[i]
            beta[i] = min(max(old + d, -upper[i]), upper[i])
            if beta[i] != old:
                _axpy(beta[i] - old, w, i, dense, data, indices, indptr, sparse, bias)
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
    return w, beta, it


def row_arrays(X):
    """(dense, data, indices, indptr, sparse) for the loops: a C-ordered float64 array, or the
    CSR parts (the other slots hold empty placeholders)."""
    no_index = np.zeros(1, dtype=np.int64)
    if sp.issparse(X):
        X = X.tocsr()
        return (np.zeros((1, 1)), np.asarray(X.data, dtype=np.float64), X.indices.astype(np.int64),
                X.indptr.astype(np.int64), True)
    return np.ascontiguousarray(X, dtype=np.float64), np.zeros(1), no_index, no_index, False
