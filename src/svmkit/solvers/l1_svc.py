"""Coordinate descent Newton for the L1-regularised L2-loss linear SVM (LIBLINEAR -s 5),
compiled with Numba.

    min_w ‖w‖₁ + Σ_i C_i max(0, 1 − y_i wᵀx_i)²

(Yuan, Chang, Hsieh & Lin 2010, JMLR 11, "A comparison of optimization methods and software
for large-scale L1-regularized linear classification", section 4.1.2 (CDN); Fan et al. 2008,
JMLR 9, appendix). One weight at a time in a random order: the one-variable problem's
second-order model with the L1 term gives a Newton direction, shortened by halving until the
sufficient decrease (σ = 0.01) holds, which a cheap upper bound of the loss's change usually
certifies without a pass over the column. Weights at 0 whose subgradient range holds 0 by a
margin are shrunk from later passes; the iteration stops when the summed violation of a pass
is at most `tol` times the first pass's, after a last pass over every weight. The x_i carry a
constant feature `bias` (LIBLINEAR's -B), penalised with w. The rules and constants are
LIBLINEAR 2.50's (linear.cpp, solve_l1r_l2_svc).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svmkit.solvers.dcd import _first_state, _shuffle
from svmkit.solvers.sparse_parts import with_constant

#: Sufficient decrease constant and line-search halvings at most (LIBLINEAR's).
SIGMA = 0.01
MAX_HALVINGS = 20
#: A direction shorter than this is not taken; the curvature's floor (LIBLINEAR's).
STEP_MIN = 1e-12
CURVATURE_MIN = 1e-12


@njit(cache=True, nogil=True)
def _margins(values, rows, pointers, w, n):
    """b_i = 1 − y_i wᵀx_i from the columns (values y_i x_ij)."""
    b = np.ones(n)
    for j in range(w.size):
        if w[j] != 0.0:
            for p in range(pointers[j], pointers[j + 1]):
                b[rows[p]] -= w[j] * values[p]
    return b


@njit(cache=True, nogil=True)
def _solve(values, rows, pointers, c, tol, max_iter, seed):
    n, n_weights = c.size, pointers.size - 1
    state = _first_state(seed)
    w = np.zeros(n_weights)
    b = np.ones(n)
    curvature_bound = np.zeros(n_weights)  # Σ_i C_i x_ij², which bounds the loss's curvature
    for j in range(n_weights):
        for p in range(pointers[j], pointers[j + 1]):
            curvature_bound[j] += c[rows[p]] * values[p] * values[p]
    index = np.arange(n_weights)
    active = n_weights
    g_max_old = np.inf
    g_norm_init = -1.0
    it = 0
    while it < max_iter:
        g_max, g_norm = 0.0, 0.0
        state = _shuffle(index, active, state)
        s = 0
        while s < active:
            j = index[s]
            g_loss, h = 0.0, 0.0
            for p in range(pointers[j], pointers[j + 1]):
                i = rows[p]
                if b[i] > 0.0:
                    t = c[i] * values[p]
                    g_loss -= t * b[i]
                    h += t * values[p]
            g_loss *= 2.0
            h = max(2.0 * h, CURVATURE_MIN)
            gp, gn = g_loss + 1.0, g_loss - 1.0
            violation = 0.0
            if w[j] == 0.0:
                if gp < 0.0:
                    violation = -gp
                elif gn > 0.0:
                    violation = gn
                elif gp > g_max_old / n and gn < -g_max_old / n:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
            elif w[j] > 0.0:
                violation = abs(gp)
            else:
                violation = abs(gn)
            g_max = max(g_max, violation)
            g_norm += violation
            s += 1
            if gp < h * w[j]:
                d = -gp / h
            elif gn > h * w[j]:
                d = -gn / h
            else:
                d = -w[j]
            if abs(d) < STEP_MIN:
                continue
            delta = abs(w[j] + d) - abs(w[j]) + g_loss * d
            d_old = 0.0
            loss_old = 0.0
            halvings = 0
            while halvings < MAX_HALVINGS:
                d_diff = d_old - d
                cond = abs(w[j] + d) - abs(w[j]) - SIGMA * delta
                if curvature_bound[j] * d * d + g_loss * d + cond <= 0.0:
                    for p in range(pointers[j], pointers[j + 1]):
                        b[rows[p]] += d_diff * values[p]
                    break
                loss_new = 0.0
                for p in range(pointers[j], pointers[j + 1]):
                    i = rows[p]
                    if halvings == 0 and b[i] > 0.0:
                        loss_old += c[i] * b[i] * b[i]
                    b_new = b[i] + d_diff * values[p]
                    b[i] = b_new
                    if b_new > 0.0:
                        loss_new += c[i] * b_new * b_new
                if cond + loss_new - loss_old <= 0.0:
                    break
                d_old = d
                d *= 0.5
                delta *= 0.5
                halvings += 1
            w[j] += d
            if halvings >= MAX_HALVINGS:  # b drifted over the trials: recompute it
                b = _margins(values, rows, pointers, w, n)
        if it == 0:
            g_norm_init = g_norm
        it += 1
        if g_norm <= tol * g_norm_init:
            if active == n_weights:
                break
            active = n_weights
            g_max_old = np.inf
            continue
        g_max_old = g_max
    return w, it


def l1_svc(X, bias: float, y, c, tol: float, max_iter: int, seed: int):
    """Minimise the problem above over the rows of X (dense or sparse) for labels y = ±1 and
    per-row costs c > 0. Returns (w: one weight per column, then the constant feature's (0
    when bias is 0); passes)."""
    values, rows, pointers = with_constant(X, bias, "csc")
    values *= np.asarray(y, dtype=np.float64)[rows]
    w, passes = _solve(values, rows, pointers, np.ascontiguousarray(c, dtype=np.float64), float(tol), int(max_iter),
                       int(seed))
    return (w if bias != 0.0 else np.append(w, 0.0)), passes
