"""Dual coordinate descent for linear SVMs (Hsieh et al. 2008; Ho & Lin 2012), LIBLINEAR's
method, compiled with Numba on plain arrays.

Classification (the soft-margin SVM is L2-regularised hinge loss; the dual as Hsieh et al. 2008, (4)):

    min_α ½ αᵀ(Q + D)α − 1ᵀα,  0 ≤ α_i ≤ U_i,  Q_ij = y_i y_j x_iᵀx_j,

hinge loss: U_i = C_i, D_ii = 0; squared hinge: U_i = ∞, D_ii = 1/(2C_i); w = Σ y_i α_i x_i.
Regression (ε-insensitive loss), with β_i = α_i − α*_i:

    min_β ½ βᵀ(Q + D)β − yᵀβ + ε‖β‖₁,  −U_i ≤ β_i ≤ U_i,  Q_ij = x_iᵀx_j, w = Σ β_i x_i,

with U, D as above. One coordinate at a time in a random order, with LIBLINEAR's shrinking;
the intercept, when asked for, is the weight of a constant feature `bias` (regularised, as
LIBLINEAR's -B). Rows are a dense array or CSR; the loops release the GIL.

The per-row constants (y_i for classification, U_i, D_ii) come as small tables indexed by a
per-row group number, as LIBLINEAR indexes its bounds by class: a random-order pass waits on
every cache line it touches, and rows with equal constants (all of them, per class, without
sample weights) then share one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, types
from numba.extending import overload
from sklearn.utils.extmath import row_norms

from svmkit._compiled import NO_REFCOUNT
from svmkit.solvers.prefetch import prefetch

#: A coordinate step smaller than this is skipped (LIBLINEAR's 1e-12).
STEP_MIN = 1e-12

#: How many coordinates ahead the loops ask for a row's memory; measured on a9a (random
#: order): 164 ns per row without, 35–41 ns at 2–4 ahead, worse again from 8.
AHEAD = 4


def _row_dot(w, i, dense, data, indices, indptr, bias):
    """wᵀx_i + w_bias·bias (compiled only): row i of `dense`, or of the CSR parts when `dense`
    is None — a binary pattern (every stored value 1, no multiplications) when `data` is None
    too — chosen when compiled."""


def _row_axpy(d, w, i, dense, data, indices, indptr, bias):
    """w += d·(x_i, bias) (compiled only)."""


def _prefetch_row(k, dense, data, indices, indptr):
    """Ask for row k's memory (compiled only)."""


# The layout is chosen by type when compiling, not by a flag at run time: a run-time branch
# between the dense and the CSR loop in every update measured 1.6× slower on a9a. The arrays
# travel as separate arguments: unpacking a tuple of them costs reference counting (atomic
# calls) in every update. A binary pattern reads no values: a9a's passes 16–22 % faster.
@overload(_row_dot, jit_options=NO_REFCOUNT)
def _row_dot_layout(w, i, dense, data, indices, indptr, bias):
    if isinstance(data, types.NoneType):
        def pattern(w, i, dense, data, indices, indptr, bias):
            s = w[w.size - 1] * bias
            for p in range(indptr[i], indptr[i + 1]):
                s += w[indices[p]]
            return s
        return pattern
    if isinstance(dense, types.NoneType):
        def csr(w, i, dense, data, indices, indptr, bias):
            s = w[w.size - 1] * bias
            for p in range(indptr[i], indptr[i + 1]):
                s += w[indices[p]] * data[p]
            return s
        return csr

    def rows(w, i, dense, data, indices, indptr, bias):
        s = w[w.size - 1] * bias
        for j in range(dense.shape[1]):
            s += w[j] * dense[i, j]
        return s
    return rows


@overload(_row_axpy, jit_options=NO_REFCOUNT)
def _row_axpy_layout(d, w, i, dense, data, indices, indptr, bias):
    if isinstance(data, types.NoneType):
        def pattern(d, w, i, dense, data, indices, indptr, bias):
            w[w.size - 1] += d * bias
            for p in range(indptr[i], indptr[i + 1]):
                w[indices[p]] += d
        return pattern
    if isinstance(dense, types.NoneType):
        def csr(d, w, i, dense, data, indices, indptr, bias):
            w[w.size - 1] += d * bias
            for p in range(indptr[i], indptr[i + 1]):
                w[indices[p]] += d * data[p]
        return csr

    def rows(d, w, i, dense, data, indices, indptr, bias):
        w[w.size - 1] += d * bias
        for j in range(dense.shape[1]):
            w[j] += d * dense[i, j]
    return rows


@overload(_prefetch_row, jit_options=NO_REFCOUNT)
def _prefetch_row_layout(k, dense, data, indices, indptr):
    if isinstance(data, types.NoneType):
        def pattern(k, dense, data, indices, indptr):
            prefetch(indices, indptr[k])
            prefetch(indices, indptr[k + 1] - 1)
        return pattern
    if isinstance(dense, types.NoneType):
        def csr(k, dense, data, indices, indptr):
            first, last = indptr[k], indptr[k + 1] - 1
            prefetch(data, first)
            prefetch(indices, first)
            prefetch(data, last)
            prefetch(indices, last)
        return csr

    def rows(k, dense, data, indices, indptr):
        prefetch(dense, k * dense.shape[1])
        prefetch(dense, (k + 1) * dense.shape[1] - 1)
    return rows


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _prefetch_ahead(index, s, active, record, group, dense, data, indices, indptr):
    """Ask for the memory of the variable AHEAD positions on: its record, group and row (and,
    for CSR rows, the row pointer of the one after)."""
    if s + AHEAD >= active:
        return
    k = index[s + AHEAD]
    prefetch(record, k * record.shape[1])
    prefetch(record, (k + 1) * record.shape[1] - 1)
    prefetch(group, k)
    if s + 2 * AHEAD < active:
        prefetch(indptr, index[s + 2 * AHEAD])
    _prefetch_row(k, dense, data, indices, indptr)


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _quotient(a, b):
    """a / b, with C's ±∞ for b = 0 (an all-zero row without a bias has ‖x‖² = 0; its step is
    then clipped to the bound, as in LIBLINEAR)."""
    if b == 0.0:
        return np.inf if a > 0.0 else (-np.inf if a < 0.0 else 0.0)
    return a / b


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _shuffle(index, active, state):
    """A random permutation of the active variables' order (LIBLINEAR's per-pass shuffle);
    returns the generator's next state. Draws by xorshift64 with a multiply-shift range
    reduction: np.random.randint took 17 ns a draw, a fifth of an a9a update."""
    for s in range(active):
        state ^= state << np.uint64(13)
        state ^= state >> np.uint64(7)
        state ^= state << np.uint64(17)
        j = s + np.int64(((state >> np.uint64(32)) * np.uint64(active - s)) >> np.uint64(32))
        index[s], index[j] = index[j], index[s]
    return state


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _first_state(seed):
    """A nonzero xorshift64 state from a seed."""
    return np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1)


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _shrink(index, s, active):
    """Move the variable at position s out of the active set; returns the new active size."""
    active -= 1
    index[s], index[active] = index[active], index[s]
    return active


@njit(cache=True, nogil=True)
def _records(width, norms, bias, group, diag):
    """One record of `width` entries per row, the variable (0) beside (Q + D)_ii (1), so that
    an update reads one cache line for both; the rest is the caller's (regression: y_i)."""
    record = np.zeros((norms.size, width))
    for i in range(norms.size):
        record[i, 1] = norms[i] + bias * bias + diag[group[i]]
    return record


# Not error_model="numpy": it measured 2× slower on these loops; _quotient gives C's division.
@njit(cache=True, nogil=True)
def _classify(dense, data, indices, indptr, norms, n_weights, bias, group, sign, upper, diag, tol, max_iter, seed):
    n = norms.size
    state = _first_state(seed)
    w = np.zeros(n_weights + 1)
    record = _records(2, norms, bias, group, diag)
    index = np.arange(n)
    active = n
    pg_max_old, pg_min_old = np.inf, -np.inf
    it = 0
    while it < max_iter:
        pg_max, pg_min = -np.inf, np.inf
        state = _shuffle(index, active, state)
        s = 0
        while s < active:
            _prefetch_ahead(index, s, active, record, group, dense, data, indices, indptr)
            i = index[s]
            g = group[i]
            yi, ui, alpha = sign[g], upper[g], record[i, 0]
            G = yi * _row_dot(w, i, dense, data, indices, indptr, bias) - 1.0 + alpha * diag[g]
            PG = 0.0
            if alpha == 0.0:
                if G > pg_max_old:
                    active = _shrink(index, s, active)
                    continue
                if G < 0.0:
                    PG = G
            elif alpha == ui:
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
                new = min(max(alpha - _quotient(G, record[i, 1]), 0.0), ui)
                record[i, 0] = new
                _row_axpy((new - alpha) * yi, w, i, dense, data, indices, indptr, bias)
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
    return w, record[:, 0].copy(), it


@njit(cache=True, nogil=True)
def _regress(dense, data, indices, indptr, norms, n_weights, bias, y, group, upper, diag, epsilon, tol, max_iter, seed):
    n = norms.size
    state = _first_state(seed)
    w = np.zeros(n_weights + 1)
    record = _records(3, norms, bias, group, diag)
    record[:, 2] = y
    index = np.arange(n)
    active = n
    g_max_old = np.inf
    g_norm_init = -1.0
    it = 0
    while it < max_iter:
        g_max, g_norm = 0.0, 0.0
        state = _shuffle(index, active, state)
        s = 0
        while s < active:
            _prefetch_ahead(index, s, active, record, group, dense, data, indices, indptr)
            i = index[s]
            g = group[i]
            beta, H, ui = record[i, 0], record[i, 1], upper[g]
            G = -record[i, 2] + diag[g] * beta + _row_dot(w, i, dense, data, indices, indptr, bias)
            Gp, Gn = G + epsilon, G - epsilon
            violation = 0.0
            if beta == 0.0:
                if Gp < 0.0:
                    violation = -Gp
                elif Gn > 0.0:
                    violation = Gn
                elif Gp > g_max_old and Gn < -g_max_old:
                    active = _shrink(index, s, active)
                    continue
            elif beta >= ui:
                if Gp > 0.0:
                    violation = Gp
                elif Gp < -g_max_old:
                    active = _shrink(index, s, active)
                    continue
            elif beta <= -ui:
                if Gn < 0.0:
                    violation = -Gn
                elif Gn > g_max_old:
                    active = _shrink(index, s, active)
                    continue
            elif beta > 0.0:
                violation = abs(Gp)
            else:
                violation = abs(Gn)
            g_max = max(g_max, violation)
            g_norm += violation
            if Gp < H * beta:
                d = -_quotient(Gp, H)
            elif Gn > H * beta:
                d = -_quotient(Gn, H)
            else:
                d = -beta
            s += 1
            if abs(d) < STEP_MIN:
                continue
            new = min(max(beta + d, -ui), ui)
            if new != beta:
                record[i, 0] = new
                _row_axpy(new - beta, w, i, dense, data, indices, indptr, bias)
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
    return w, record[:, 0].copy(), it


def _narrowest(values, narrow, wide):
    """`values` as `narrow` when that holds every value exactly (binary features, column
    numbers below 2³¹), else as `wide`: fewer bytes per nonzero for the random-order passes to
    wait on, the same numbers."""
    cast = values.astype(narrow)
    return cast if np.array_equal(cast, values) else values.astype(wide)


def _rows(X):
    """(dense, data, indices, indptr, squared norms) for the loops: a C-ordered float64 array
    and empty CSR parts, or None and the CSR parts, `data` None when every stored value is 1."""
    norms = row_norms(X, squared=True)
    if sp.issparse(X):
        X = X.tocsr()
        # int32 column numbers are nonnegative: their uint32 view is exact, with no copy
        indices = X.indices.view(np.uint32) if X.indices.dtype == np.int32 else \
            _narrowest(X.indices, np.uint32, np.uint64)
        data = None if np.all(X.data == 1.0) else _narrowest(X.data, np.float32, np.float64)
        return None, data, indices, X.indptr.astype(np.uint64), norms
    empty = np.zeros(0, dtype=np.uint64)
    return np.ascontiguousarray(X, dtype=np.float64), np.zeros(0), empty, empty, norms


def dcd_classify(X, bias, group, sign, upper, diag, tol, max_iter, seed):
    """Solve the classification dual over the rows of X (dense or CSR); row i has
    y_i = sign[group[i]], U_i = upper[group[i]], D_ii = diag[group[i]]. Returns (w (one entry
    per column of X, then the bias weight), α, passes). Stops when the projected gradient's
    spread over a full pass is ≤ tol."""
    # floats and ints as the compiled loops were built for: an int tol would compile them again
    return _classify(*_rows(X), X.shape[1], float(bias), group, sign, upper, diag, float(tol), int(max_iter), seed)


def dcd_regress(X, bias, y, group, upper, diag, epsilon, tol, max_iter, seed):
    """Solve the regression dual over the rows of X; row i has U_i = upper[group[i]],
    D_ii = diag[group[i]]. Returns (w, β, passes). Stops when the pass's summed violation is
    ≤ tol times the first pass's (LIBLINEAR's rule)."""
    return _regress(*_rows(X), X.shape[1], float(bias), y, group, upper, diag, float(epsilon), float(tol),
                    int(max_iter), seed)


def row_groups(*constants):
    """Rows with equal per-row constants share a group: the group number per row (int32),
    then one table per argument holding each group's value."""
    group = np.zeros(constants[0].size, dtype=np.int64)
    first = np.zeros(min(1, group.size), dtype=np.int64)
    varying = [values for values in constants if not (values == values[0]).all()]  # none without weights
    if len(varying) == 1 and _two_valued(varying[0]):  # labels ±1: no sort
        group = varying[0] != varying[0][0]
        first = np.array([0, np.argmax(group)])
    else:
        for values in varying:
            levels, level = np.unique(values, return_inverse=True)
            _, first, group = np.unique(group * levels.size + level, return_index=True, return_inverse=True)
    return (group.ravel().astype(np.int32), *(np.ascontiguousarray(values[first]) for values in constants))


def _two_valued(values):
    """Whether `values` holds exactly two distinct values (given that it holds more than one)."""
    rest = values[values != values[0]]
    return bool((rest == rest[0]).all())
