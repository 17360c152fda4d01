"""Compiled loops of the SMO solver; they see plain arrays only.

Notation as in LIBSVM: the problem is min ½αᵀQα + pᵀα, yᵀα = Δ, 0 ≤ α ≤ U, with gradient
G = Qα + p. Q_ij = y_i y_j K(x_kidx[i], x_kidx[j]) where kidx maps a variable to its data row.
The block loop (`inner_smo`) runs pair updates with shrinking on a `BlockState`, and Newton
steps (`_smo_newton`) when the pair updates have cost as much as one.
"""

import numpy as np
from numba import njit, prange

from svmkit._compiled import NO_REFCOUNT
from svmkit.solvers._smo_block import BlockState, qrow, swap
from svmkit.solvers._smo_newton import empty_factor, newton_steps

TAU = 1e-12
#: Pair updates between two Newton checks (LIBSVM shrinks every min(l, 1000)): warm-started
#: solves of a search often end within 1,000 updates, before LIBSVM's first pass would have
#: shrunk anything.
SHRINK_EVERY = 200
#: Checks per shrinking pass after the first check's: a pass truncates the stored Q rows at
#: its first swap, and gathering them again cost more than the selection over the variables
#: it removes (a9a-5k grid: 14 % less time than a pass at every check).
SHRINK_PASSES = 10
#: A pair update's time over the active set's size, in the time of one flop of a Newton step
#: (measured: about 20 µs for 1,500 active variables against 20 GFLOPS in the factorisation).
PAIR_COST = 256.0
#: Columns of G updated together; one chunk is done without starting threads.
GRADIENT_CHUNK = 2048


@njit(cache=True, nogil=True)
def _update_columns(G, store, pos, coef, kidx, y, lo, hi):
    """G_j += y_j Σ_b coef_b K(b, kidx_j) for lo ≤ j < hi; the chunk stays in cache while every
    moved row streams past it."""
    acc = np.zeros(hi - lo)
    ks = kidx[lo:hi]
    for b in range(pos.shape[0]):
        row = store[pos[b]]
        cb = coef[b]
        for t in range(hi - lo):
            acc[t] += cb * row[ks[t]]
    for t in range(hi - lo):
        G[lo + t] += y[lo + t] * acc[t]


@njit(parallel=True, cache=True, nogil=True)
def _update_chunks(G, store, pos, coef, kidx, y):
    n = G.shape[0]
    for c in prange((n + GRADIENT_CHUNK - 1) // GRADIENT_CHUNK):
        lo = c * GRADIENT_CHUNK
        _update_columns(G, store, pos, coef, kidx, y, lo, min(n, lo + GRADIENT_CHUNK))


def update_gradient(G, store, pos, coef, kidx, y):
    """G_j += y_j Σ_b coef_b K(b, kidx_j) for every variable j, coef_b = y_b Δα_b."""
    if G.shape[0] <= GRADIENT_CHUNK:
        _update_columns(G, store, pos, coef, kidx, y, 0, G.shape[0])
    else:
        _update_chunks(G, store, pos, coef, kidx, y)


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _select(st, m, nu_mode):
    """Second-order working-set selection (Fan, Chen & Lin 2005) over the active slots.

    i maximises −y_t G_t over I_up; j minimises −b²/a over I_low. In ν mode (LIBSVM's
    Solver_NU) i is chosen within each y-class and j is paired with the i of its own class.
    Returns (i, j, maximal violation); j = −1 when no pair violates.
    """
    y, alpha, G, U, QD = st.y, st.alpha, st.G, st.U, st.QD
    gmaxp = -np.inf
    gmaxn = -np.inf
    ip = -1
    i_n = -1
    for t in range(m):
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
    Qp = st.Qs[qrow(st, ip, m) if ip >= 0 else 0]
    Qn = st.Qs[qrow(st, i_n, m) if i_n >= 0 else 0]
    for t in range(m):
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


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _update_pair(st, m, i, j):
    """LIBSVM's analytic two-variable step with clipping to the box; updates G on the active slots."""
    y, alpha, G, U, QD = st.y, st.alpha, st.G, st.U, st.QD
    Qi = st.Qs[qrow(st, i, m)]
    Qj = st.Qs[qrow(st, j, m)]
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
    for t in range(m):
        G[t] += Qi[t] * dai + Qj[t] * daj


@njit(cache=True, nogil=True)
def _reconstruct(st, m, q):
    """Exact gradients for the shrunk slots m..q-1: G = G⁰ + Σ_s Q[:, s] (α_s − α⁰_s)."""
    y, alpha, G, kid, ps, a0, G0, store = st.y, st.alpha, st.G, st.kidx, st.pos, st.alpha0, st.G0, st.store
    G[m:q] = G0[m:q]
    moved = np.flatnonzero(alpha != a0)
    _update_columns(G[m:q], store, ps[moved], y[moved] * (alpha[moved] - a0[moved]), kid[m:q], y[m:q], 0, q - m)


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _be_shrunk(y, a, G, U, t, g1, g2, g3, g4):
    """LIBSVM's rule: a variable at a bound that cannot join a violating pair."""
    if a[t] >= U[t]:
        return -G[t] > g1 if y[t] > 0 else -G[t] > g4
    if a[t] <= 0:
        return G[t] > g2 if y[t] > 0 else G[t] > g3
    return False


@njit(cache=True, nogil=True)
def _shrink(st, m, q, eps, nu_mode, unshrunk):
    """LIBSVM's shrinking pass; returns the new number of active slots.

    The first time the active violation is within 10·eps every gradient is rebuilt and every
    variable made active again (`unshrunk[0]` records it), as LIBSVM does.
    """
    y, a, G, U = st.y, st.alpha, st.G, st.U
    g1 = g2 = g3 = g4 = -np.inf
    for t in range(m):
        if a[t] < U[t]:
            if y[t] > 0:
                g1 = max(g1, -G[t])
            else:
                g4 = max(g4, -G[t])
        if a[t] > 0:
            if y[t] > 0:
                g2 = max(g2, G[t])
            else:
                g3 = max(g3, G[t])
    if not nu_mode:
        g1 = g3 = max(g1, g3)
        g2 = g4 = max(g2, g4)
    if not unshrunk[0] and max(g1 + g2, g3 + g4) <= 10 * eps:
        unshrunk[0] = True
        _reconstruct(st, m, q)
        m = q
    first = m
    k = 0
    while k < m:
        if _be_shrunk(y, a, G, U, k, g1, g2, g3, g4):
            m -= 1
            while m > k:
                if not _be_shrunk(y, a, G, U, m, g1, g2, g3, g4):
                    swap(st, k, m)
                    first = min(first, k)
                    break
                m -= 1
        k += 1
    # a swap leaves stored rows wrong from its first slot on: they are gathered again there
    # on next use, which costs less than swapping two columns of every stored row
    row_len = st.row_len
    for r in range(st.rows_used[0]):
        row_len[r] = min(row_len[r], first)
    return m


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _pair_updates(st, m, nu_mode, eps, count, credit, limit):
    """Up to `count` pair updates on the active slots 0..m-1, each adding its cost to
    credit[0]. Returns (updates made, whether a selection found no pair violating by eps,
    whether an α passed `limit`)."""
    for k in range(count):
        i, j, gap = _select(st, m, nu_mode)
        if gap < eps or j < 0:
            return k, True, False
        _update_pair(st, m, i, j)
        credit[0] += PAIR_COST * m
        if st.alpha[i] > limit or st.alpha[j] > limit:
            return k + 1, False, True
    return count, False, False


@njit(cache=True, nogil=True)
def inner_smo(store, pos, kidx_b, y, alpha, G, U, QD, Qs, eps, max_iter, nu_mode, shrinking, limit, stop):
    """LIBSVM's SMO, second-order selection and shrinking, on one block B of variables.

    Kernel rows of B are rows `pos` of `store`; rows of Q_BB are gathered into the scratch `Qs`
    (at least |B|×|B|) as the pairs need them. Updates `alpha` (the block's α) and `G` (its
    gradient over the block, exact on entry) in place. Stops when the block's maximal
    violation is below `eps`, after `max_iter` pair updates, when an α passes `limit` (an
    unbounded dual), or when another thread sets `stop[0]` (read every few hundred updates:
    an interrupted fit); returns the number of pair updates.
    """
    q = y.shape[0]
    if q == 0:
        return 0
    st = BlockState(y=y.copy(), alpha=alpha.copy(), G=G.copy(), U=U.copy(), QD=QD.copy(), kidx=kidx_b.copy(),
                    pos=pos.copy(), var=np.arange(q), alpha0=alpha.copy(), G0=G.copy(), Qs=Qs,
                    row_of=np.full(q, -1, dtype=np.int64), row_len=np.zeros(q, dtype=np.int64),
                    rows_used=np.zeros(1, dtype=np.int64), store=store)
    unshrunk = np.array([not shrinking])
    m = q
    counter = min(q, SHRINK_EVERY) - 1  # pair updates before the next check
    checks = 0
    it = 0
    # pair-update work not yet spent on Newton steps, in flops: Newton steps cost at most as
    # much as the pair updates around them, so they can at worst double a solve's time
    credit = np.zeros(1)
    fac = empty_factor(q)
    while it < max_iter:
        if counter == 0:
            if stop[0]:
                break
            counter = min(q, SHRINK_EVERY)
            checks += 1
            if shrinking and checks % SHRINK_PASSES == 1:
                m = _shrink(st, m, q, eps, nu_mode, unshrunk)
            fac = newton_steps(st, m, nu_mode, eps, credit, fac)
        done, optimal, unbounded = _pair_updates(st, m, nu_mode, eps, min(counter, max_iter - it), credit, limit)
        it += done
        counter -= done
        if unbounded:
            break
        if optimal:
            if m == q:
                break
            _reconstruct(st, m, q)
            m = q
            counter = 1  # the shrunk variables back: one update over all, then a check
    if m < q:
        _reconstruct(st, m, q)
    slot_alpha, slot_G, var = st.alpha, st.G, st.var
    for s in range(q):
        alpha[var[s]] = slot_alpha[s]
        G[var[s]] = slot_G[s]
    return it


@njit(parallel=True, cache=True)
def _choose_threading_layer(n):
    """A trivial parallel loop: running it makes Numba choose its threading layer."""
    total = 0
    for i in prange(n):
        total += i
    return total