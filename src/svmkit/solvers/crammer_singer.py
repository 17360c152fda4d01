"""The sequential dual method for Crammer and Singer's multi-class linear SVM (LIBLINEAR -s 4),
compiled with Numba.

    min_α ½ Σ_m ‖w_m‖² + Σ_i Σ_m e_i^m α_i^m,   w_m = Σ_i α_i^m x_i,
    s.t. α_i^m ≤ C_i^m, Σ_m α_i^m = 0 for every i,

e_i^m = 0 and C_i^m = C_i when m = y_i, else e_i^m = 1 and C_i^m = 0: the dual of
min ½ Σ_m ‖w_m‖² + Σ_i C_i max_m (e_i^m + w_mᵀx_i − w_{y_i}ᵀx_i) (Crammer & Singer 2001, JMLR
2; Keerthi, Sundararajan, Chang, Hsieh & Lin 2008, KDD, "A sequential dual method for large
scale multi-class linear SVMs"; Fan et al. 2008, JMLR 9, appendix). One row's k variables at a
time in a random order, each sub-problem solved exactly by sorting; variables at their bound
with a gradient below the row's smallest free one are shrunk, and the iteration stops when the
largest gradient spread of a pass is below `tol` after a pass over every variable. The x_i
carry a constant feature `bias` (LIBLINEAR's -B), penalised with w. The rules and constants are
LIBLINEAR 2.50's (linear.cpp, Solver_MCSVM_CS).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svmkit.solvers.dcd import _first_state, _shuffle
from svmkit.solvers.sparse_parts import with_constant

#: A row whose gradient spread is at most this is left as it is (LIBLINEAR's 1e-12).
SPREAD_MIN = 1e-12


@njit(cache=True, nogil=True)
def _sub_problem(A, yi, c_yi, active, B, D, alpha_new):
    """The row's k-variable problem in closed form: α^m = min(C^m, (β − B_m)/A), with β found
    from the values D = B (+ A·C at y_i) sorted in decreasing order."""
    for m in range(active):
        D[m] = B[m]
    if yi < active:
        D[yi] += A * c_yi
    for m in range(1, active):  # insertion sort, decreasing: k is small
        v = D[m]
        r = m - 1
        while r >= 0 and D[r] < v:
            D[r + 1] = D[r]
            r -= 1
        D[r + 1] = v
    beta = D[0] - A * c_yi
    r = 1
    while r < active and beta < r * D[r]:
        beta += D[r]
        r += 1
    beta /= r
    for m in range(active):
        bound = c_yi if m == yi else 0.0
        alpha_new[m] = min(bound, (beta - B[m]) / A)


@njit(cache=True, nogil=True)
def _shrinkable(alpha, bound, G, min_g):
    return alpha == bound and G < min_g


@njit(cache=True, nogil=True)
def _solve(values, columns, pointers, n_weights, y, c, n_classes, tol, max_iter, seed):
    n, k = c.size, n_classes
    state = _first_state(seed)
    w = np.zeros((n_weights, k))  # a feature's k weights side by side, as a row updates them
    alpha = np.zeros((n, k))
    order = np.empty((n, k), dtype=np.int64)  # per row: its active classes first
    for i in range(n):
        for m in range(k):
            order[i, m] = m
    sq_norm = np.zeros(n)
    for i in range(n):
        for p in range(pointers[i], pointers[i + 1]):
            sq_norm[i] += values[p] * values[p]
    row_active = np.full(n, k)
    y_pos = y.copy()  # position of y_i among row i's classes
    index = np.arange(n)
    G = np.empty(k)
    B = np.empty(k)
    D = np.empty(k)
    alpha_new = np.empty(k)
    d_ind = np.empty(k, dtype=np.int64)
    d_val = np.empty(k)
    active = n
    eps_shrink = max(10.0 * tol, 1.0)
    start_from_all = True
    it = 0
    while it < max_iter:
        stopping = -np.inf
        state = _shuffle(index, active, state)
        s = 0
        while s < active:
            i = index[s]
            A = sq_norm[i]
            s += 1
            if A <= 0.0:
                continue
            ka = row_active[i]
            for m in range(ka):
                G[m] = 1.0
            if y_pos[i] < ka:
                G[y_pos[i]] = 0.0
            for p in range(pointers[i], pointers[i + 1]):
                f, v = columns[p], values[p]
                for m in range(ka):
                    G[m] += w[f, order[i, m]] * v
            min_g, max_g = np.inf, -np.inf
            for m in range(ka):
                if alpha[i, order[i, m]] < 0.0 and G[m] < min_g:
                    min_g = G[m]
                if G[m] > max_g:
                    max_g = G[m]
            if y_pos[i] < ka and alpha[i, y[i]] < c[i] and G[y_pos[i]] < min_g:
                min_g = G[y_pos[i]]
            m = 0
            while m < ka:
                bound = c[i] if m == y_pos[i] else 0.0
                if _shrinkable(alpha[i, order[i, m]], bound, G[m], min_g):
                    ka -= 1
                    while ka > m:
                        bound_last = c[i] if ka == y_pos[i] else 0.0
                        if not _shrinkable(alpha[i, order[i, ka]], bound_last, G[ka], min_g):
                            order[i, m], order[i, ka] = order[i, ka], order[i, m]
                            G[m], G[ka] = G[ka], G[m]
                            if y_pos[i] == ka:
                                y_pos[i] = m
                            elif y_pos[i] == m:
                                y_pos[i] = ka
                            break
                        ka -= 1
                m += 1
            row_active[i] = ka
            if ka <= 1:
                s -= 1
                active -= 1
                index[s], index[active] = index[active], index[s]
                continue
            if max_g - min_g <= SPREAD_MIN:
                continue
            stopping = max(stopping, max_g - min_g)
            for m in range(ka):
                B[m] = G[m] - A * alpha[i, order[i, m]]
            _sub_problem(A, y_pos[i], c[i], ka, B, D, alpha_new)
            nz = 0
            for m in range(ka):
                cls = order[i, m]
                d = alpha_new[m] - alpha[i, cls]
                alpha[i, cls] = alpha_new[m]
                if abs(d) >= SPREAD_MIN:
                    d_ind[nz] = cls
                    d_val[nz] = d
                    nz += 1
            for p in range(pointers[i], pointers[i + 1]):
                f, v = columns[p], values[p]
                for m in range(nz):
                    w[f, d_ind[m]] += d_val[m] * v
        it += 1
        if stopping < eps_shrink:
            if stopping < tol and start_from_all:
                break
            active = n
            row_active[:] = k
            eps_shrink = max(eps_shrink / 2, tol)
            start_from_all = True
        else:
            start_from_all = False
    return w, alpha, it


def crammer_singer(X, bias: float, y, c, n_classes: int, tol: float, max_iter: int, seed: int):
    """Solve the dual above over the rows of X (dense or sparse) for class numbers y in
    0 … n_classes − 1 and per-row costs c > 0. Returns (W: one row of k weights per column of X,
    then the constant feature's (0 when bias is 0); α (n × k); passes)."""
    values, columns, pointers = with_constant(X, bias, "csr")
    # without the constant feature its row of W stays 0
    return _solve(values, columns, pointers, int(X.shape[1] + 1), np.ascontiguousarray(y, dtype=np.int64),
                  np.ascontiguousarray(c, dtype=np.float64), int(n_classes), float(tol), int(max_iter), int(seed))
