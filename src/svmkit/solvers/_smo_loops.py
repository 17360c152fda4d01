"""Compiled loops of the SMO solver; they see plain arrays only.

Notation as in LIBSVM: the problem is min ½αᵀQα + pᵀα, yᵀα = Δ, 0 ≤ α ≤ U, with gradient
G = Qα + p. Q_ij = y_i y_j K(x_kidx[i], x_kidx[j]) where kidx maps a variable to its data row.
"""

import numpy as np
from numba import njit, prange

TAU = 1e-12


@njit(cache=True)
def _row(a, blk):
    """Row a of Q_BB, gathered from the kernel store the first time it is needed.

    The inner solver touches only the rows of the pairs it updates, a small part of the
    block, so rows are not gathered up front.
    """
    Q, have, store, pos, kidx_b, y, diag = blk
    if not have[a]:
        r = pos[a]
        ya = y[a]
        for t in range(kidx_b.shape[0]):
            Q[a, t] = ya * y[t] * store[r, kidx_b[t]]
        Q[a, a] = diag[a]
        have[a] = True
    return Q[a]


@njit(parallel=True, cache=True)
def update_gradient(G, store, pos, coef, kidx, y):
    """G_j += y_j Σ_b coef_b K(b, kidx_j) for every variable j, coef_b = y_b Δα_b.

    Columns are taken in chunks that stay in cache while every moved row streams past them.
    """
    n = G.shape[0]
    nb = pos.shape[0]
    chunk = 2048
    n_chunks = (n + chunk - 1) // chunk
    for c in prange(n_chunks):
        lo = c * chunk
        hi = min(n, lo + chunk)
        acc = np.zeros(hi - lo)
        ks = kidx[lo:hi]
        for b in range(nb):
            row = store[pos[b]]
            cb = coef[b]
            for t in range(hi - lo):
                acc[t] += cb * row[ks[t]]
        for t in range(hi - lo):
            G[lo + t] += y[lo + t] * acc[t]


@njit(cache=True)
def _select(blk, y, alpha, G, U, QD, nu_mode):
    """Second-order working-set selection (Fan, Chen & Lin 2005) on the block.

    i maximises −y_t G_t over I_up; j minimises −b²/a over I_low. In ν mode (LIBSVM's
    Solver_NU) i is chosen within each y-class and j is paired with the i of its own class.
    Returns (i, j, maximal violation); j = −1 when no pair violates.
    """
    q = y.shape[0]
    gmaxp = -np.inf
    gmaxn = -np.inf
    ip = -1
    i_n = -1
    for t in range(q):
        if y[t] > 0:
            if alpha[t] < U[t] and -G[t] >= gmaxp:
                gmaxp = -G[t]
                ip = t
        elif alpha[t] > 0 and G[t] >= gmaxn:
            gmaxn = G[t]
            i_n = t
    if not nu_mode:
        if gmaxp >= gmaxn:
            i_n = ip
            gmaxn = gmaxp
        else:
            ip = i_n
            gmaxp = gmaxn
    gmaxp2 = -np.inf
    gmaxn2 = -np.inf
    j = -1
    best = np.inf
    Qp = _row(ip, blk) if ip >= 0 else QD
    Qn = _row(i_n, blk) if i_n >= 0 else QD
    for t in range(q):
        if y[t] > 0:
            if alpha[t] > 0:
                gd = gmaxp + G[t]
                if G[t] >= gmaxp2:
                    gmaxp2 = G[t]
                if gd > 0 and ip >= 0:
                    quad = QD[ip] + QD[t] - 2.0 * y[ip] * Qp[t]
                    if quad <= 0:
                        quad = TAU
                    od = -(gd * gd) / quad
                    if od <= best:
                        best = od
                        j = t
        elif alpha[t] < U[t]:
            gd = gmaxn - G[t]
            if -G[t] >= gmaxn2:
                gmaxn2 = -G[t]
            if gd > 0 and i_n >= 0:
                quad = QD[i_n] + QD[t] + 2.0 * y[i_n] * Qn[t]
                if quad <= 0:
                    quad = TAU
                od = -(gd * gd) / quad
                if od <= best:
                    best = od
                    j = t
    gap = max(gmaxp + gmaxp2, gmaxn + gmaxn2)
    if j < 0:
        return -1, -1, gap
    i = ip if y[j] > 0 else i_n
    return i, j, gap


@njit(cache=True)
def _update_pair(blk, y, alpha, G, U, QD, i, j):
    """LIBSVM's analytic two-variable step with clipping to the box; updates G on the block."""
    Qi = _row(i, blk)
    Qj = _row(j, blk)
    ai = alpha[i]
    aj = alpha[j]
    Ci = U[i]
    Cj = U[j]
    if y[i] != y[j]:
        quad = QD[i] + QD[j] + 2.0 * Qi[j]
        if quad <= 0:
            quad = TAU
        delta = (-G[i] - G[j]) / quad
        diff = ai - aj
        ai += delta
        aj += delta
        if diff > 0:
            if aj < 0:
                aj = 0.0
                ai = diff
        elif ai < 0:
            ai = 0.0
            aj = -diff
        if diff > Ci - Cj:
            if ai > Ci:
                ai = Ci
                aj = Ci - diff
        elif aj > Cj:
            aj = Cj
            ai = Cj + diff
    else:
        quad = QD[i] + QD[j] - 2.0 * Qi[j]
        if quad <= 0:
            quad = TAU
        delta = (G[i] - G[j]) / quad
        s = ai + aj
        ai -= delta
        aj += delta
        if s > Ci:
            if ai > Ci:
                ai = Ci
                aj = s - Ci
        elif aj < 0:
            aj = 0.0
            ai = s
        if s > Cj:
            if aj > Cj:
                aj = Cj
                ai = s - Cj
        elif ai < 0:
            ai = 0.0
            aj = s
    dai = ai - alpha[i]
    daj = aj - alpha[j]
    alpha[i] = ai
    alpha[j] = aj
    q = y.shape[0]
    for t in range(q):
        G[t] += Qi[t] * dai + Qj[t] * daj


@njit(cache=True)
def inner_smo(store, pos, kidx_b, y, alpha, G, U, QD, Q, have, eps, max_iter, nu_mode):
    """SMO with second-order working-set selection (Fan, Chen & Lin 2005) on one block B.

    Kernel rows of B are rows `pos` of `store`; Q (|B|×|B| scratch) and `have` (all False on
    entry) receive the rows of Q_BB as they are needed. Stops when the block's maximal
    violation is below `eps` or after `max_iter` pair updates; returns (pair updates made,
    violation at the first selection).
    """
    blk = (Q, have, store, pos, kidx_b, y, QD)
    it = 0
    first_gap = np.nan
    while it < max_iter:
        i, j, gap = _select(blk, y, alpha, G, U, QD, nu_mode)
        if it == 0:
            first_gap = gap
        if gap < eps or j < 0:
            break
        _update_pair(blk, y, alpha, G, U, QD, i, j)
        it += 1
    return it, first_gap
