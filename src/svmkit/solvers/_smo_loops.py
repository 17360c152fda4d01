"""Compiled loops of the SMO solver; they see plain arrays only.

Notation as in LIBSVM: the problem is min ½αᵀQα + pᵀα, yᵀα = Δ, 0 ≤ α ≤ U, with gradient
G = Qα + p. Q_ij = y_i y_j K(x_kidx[i], x_kidx[j]) where kidx maps a variable to its data row.
"""

import numpy as np
from numba import njit, prange

from svmkit._compiled import NO_REFCOUNT

TAU = 1e-12
#: Pair updates between two Newton checks (LIBSVM shrinks every min(l, 1000)): warm-started
#: solves of a search often end within 1,000 updates, before LIBSVM's first pass would have
#: shrunk anything.
SHRINK_EVERY = 200
#: Checks per shrinking pass after the first check's: a pass truncates the stored Q rows at
#: its first swap, and gathering them again cost more than the selection over the variables
#: it removes (a9a-5k grid: 14 % less time than a pass at every check).
SHRINK_PASSES = 10
#: Newton steps in a row while each stops at a bound (the bounded variable leaves the free set).
NEWTON_TRIES = 3
#: Newton solves in one step while its full step leaves the box (each sends the leavers to
#: their bound; a re-solve costs a triangular solve per variable sent).
NEWTON_RESOLVES = 10
#: A pair update's time over the active set's size, in the time of one flop of a Newton step
#: (measured: about 20 µs for 1,500 active variables against 20 GFLOPS in the factorisation).
PAIR_COST = 256.0
#: Smallest squared Cholesky pivot of Q_FF, relative to its largest diagonal, for a Newton step.
NEWTON_PIVOT = 1e-10


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


# The block's variables live in slots; the active ones (not shrunk) are slots 0..m-1, as in
# LIBSVM, so every loop of an iteration runs over contiguous memory. `st` holds, in slot order:
#   0 y, 1 α, 2 G, 3 U, 4 QD, 5 kidx, 6 pos, 7 variable, 8 α at entry, 9 G at entry,
#   10 Q rows (storage), 11 storage row of each slot (−1: none), 12 valid prefix of each
#   storage row, 13 storage rows in use ([n]), 14 the kernel store.


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _qrow(st, s, m):
    """The storage row (of st[10]) holding row s of Q_BB over slots 0..m-1, gathered from the
    kernel store on first need; its number, not a view, as a helper without reference counting
    returns no new array.

    A storage row stays valid on a prefix of slots (`_shrink` truncates it after swaps).
    """
    y, QD, kid, ps, Qs, row_of, row_len, used, store = st[0], st[4], st[5], st[6], st[10], st[11], st[12], st[13], st[14]
    r = row_of[s]
    if r < 0:
        r = used[0]
        used[0] += 1
        row_of[s] = r
        row_len[r] = 0
    L = row_len[r]
    row = Qs[r]
    if L < m:
        src = store[ps[s]]
        ys = y[s]
        for t in range(L, m):
            row[t] = ys * y[t] * src[kid[t]]
        if s >= L:
            row[s] = QD[s]
        row_len[r] = m
    return r


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _exchange(arr, a, b):
    arr[a], arr[b] = arr[b], arr[a]


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _swap(st, a, b):
    """Exchange slots a < b. Stored Q rows keep their columns; `_shrink` truncates them."""
    _exchange(st[0], a, b)
    _exchange(st[1], a, b)
    _exchange(st[2], a, b)
    _exchange(st[3], a, b)
    _exchange(st[4], a, b)
    _exchange(st[5], a, b)
    _exchange(st[6], a, b)
    _exchange(st[7], a, b)
    _exchange(st[8], a, b)
    _exchange(st[9], a, b)
    _exchange(st[11], a, b)


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _select(st, m, nu_mode):
    """Second-order working-set selection (Fan, Chen & Lin 2005) over the active slots.

    i maximises −y_t G_t over I_up; j minimises −b²/a over I_low. In ν mode (LIBSVM's
    Solver_NU) i is chosen within each y-class and j is paired with the i of its own class.
    Returns (i, j, maximal violation); j = −1 when no pair violates.
    """
    y, alpha, G, U, QD = st[0], st[1], st[2], st[3], st[4]
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
    Qp = st[10][_qrow(st, ip, m) if ip >= 0 else 0]
    Qn = st[10][_qrow(st, i_n, m) if i_n >= 0 else 0]
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
    y, alpha, G, U, QD = st[0], st[1], st[2], st[3], st[4]
    Qi = st[10][_qrow(st, i, m)]
    Qj = st[10][_qrow(st, j, m)]
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
    y, alpha, G, kid, ps, a0, G0, store = st[0], st[1], st[2], st[5], st[6], st[8], st[9], st[14]
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
    y, a, G, U = st[0], st[1], st[2], st[3]
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
                    _swap(st, k, m)
                    first = min(first, k)
                    break
                m -= 1
        k += 1
    # a swap leaves stored rows wrong from its first slot on: they are gathered again there
    # on next use, which costs less than swapping two columns of every stored row
    row_len = st[12]
    for r in range(st[13][0]):
        row_len[r] = min(row_len[r], first)
    return m


@njit(cache=True, nogil=True)
def _forward_solve(R, B):
    """X with RᵀX = B (R upper triangular with a nonzero diagonal, B: k × r), by panels of
    PANEL rows, each panel's product with the rows solved before it by BLAS, so that many
    right-hand sides cost little more than one."""
    k, r = B.shape
    X = B.copy()
    for j0 in range(0, k, PANEL):
        j1 = min(k, j0 + PANEL)
        if j0 > 0:
            X[j0:j1] -= np.dot(np.ascontiguousarray(R[:j0, j0:j1].T), X[:j0])
        for i in range(j0, j1):
            inv = 1.0 / R[i, i]
            for c in range(r):
                X[i, c] *= inv
            for t in range(i + 1, j1):
                f = R[i, t]
                for c in range(r):
                    X[t, c] -= f * X[i, c]
    return X


@njit(cache=True, nogil=True)
def _cholesky_solve(R, B):
    """X with RᵀR X = B: `_forward_solve`, then back substitution by the same panels."""
    X = _forward_solve(R, B)
    k, r = B.shape
    for j0 in range((k - 1) // PANEL * PANEL, -1, -PANEL):
        j1 = min(k, j0 + PANEL)
        if j1 < k:
            X[j0:j1] -= np.dot(np.ascontiguousarray(R[j0:j1, j1:]), X[j1:])
        for i in range(j1 - 1, j0 - 1, -1):
            for t in range(i + 1, j1):
                f = R[i, t]
                for c in range(r):
                    X[i, c] -= f * X[t, c]
            inv = 1.0 / R[i, i]
            for c in range(r):
                X[i, c] *= inv
    return X


#: Columns of one panel of the blocked factorisation: factored in scalar loops, the rest of
#: the matrix then updated by matrix products.
PANEL = 64


@njit(cache=True, nogil=True)
def _inverse_upper_t(R, kept):
    """(R⁻¹)ᵀ on the kept rows of the upper triangular R (zero on the others)."""
    nb = R.shape[0]
    Zt = np.zeros((nb, nb))
    for c in range(nb):
        if not kept[c]:
            continue
        Zt[c, c] = 1.0 / R[c, c]
        for i in range(c - 1, -1, -1):
            if kept[i]:
                Zt[c, i] = -np.dot(R[i, i + 1:c + 1], Zt[c, i + 1:c + 1]) / R[i, i]
    return Zt


@njit(cache=True, nogil=True)
def _independent_cholesky(H, floor):
    """Upper triangular R with H = RᵀR on the rows it keeps: row i is dropped (its row and
    column of R left zero) when its pivot, what H_ii adds beyond the rows kept before it, is
    at most `floor`. Blocked (panels of PANEL columns, the trailing matrix updated by BLAS
    products), so it runs near the speed of LAPACK's Cholesky. Returns (R, kept)."""
    k = H.shape[0]
    A = H.copy()
    kept = np.zeros(k, dtype=np.bool_)
    for j0 in range(0, k, PANEL):
        j1 = min(k, j0 + PANEL)
        for j in range(j0, j1):
            for c in range(j0, j):
                if kept[c]:
                    f = A[c, j]
                    for t in range(j, j1):
                        A[j, t] -= f * A[c, t]
            d = A[j, j]
            if d > floor:
                kept[j] = True
                A[j, j] = np.sqrt(d)
                for t in range(j + 1, j1):
                    A[j, t] /= A[j, j]
            else:
                A[j, j0:j1] = 0.0
                A[:j, j] = 0.0
        if j1 < k:
            # the panel's rows right of it: R11ᵀ R12 = A12; then A22 −= R12ᵀR12 on the upper part
            Zt = _inverse_upper_t(np.ascontiguousarray(A[j0:j1, j0:j1]), kept[j0:j1])
            R12 = np.dot(Zt, np.ascontiguousarray(A[j0:j1, j1:]))
            A[j0:j1, j1:] = R12
            for b0 in range(0, k - j1, 4 * PANEL):
                b1 = min(k - j1, b0 + 4 * PANEL)
                A[j1 + b0:j1 + b1, j1 + b0:] -= np.dot(np.ascontiguousarray(R12[:, b0:b1].T),
                                                       np.ascontiguousarray(R12[:, b0:]))
    for i in range(k):
        A[i, :i] = 0.0
    return A, kept


@njit(cache=True, nogil=True)
def _base_slots(st, fac):
    """The slot of each variable of the factor's base, in base order."""
    var, where, k = st[7], fac[3], fac[0].shape[0]
    out = np.empty(k, dtype=np.int64)
    for t in range(var.shape[0]):
        b = where[var[t]]
        if b >= 0:
            out[b] = t
    return out


@njit(cache=True, nogil=True)
def _entering(st, free, fac):
    """The free slots whose variables are not in the factor's base (nor held out of it as
    dependent when it was built)."""
    var, where = st[7], fac[3]
    out = np.empty(free.shape[0], dtype=np.int64)
    a = 0
    for s in free:
        if where[var[s]] == -1:
            out[a] = s
            a += 1
    return out[:a]


@njit(cache=True, nogil=True, inline="always")
def _extend_flops(k0, a, held):
    """Flops of a Newton step on a kept factor of k0 variables: a entering variables
    (triangular solves and the Schur complement's factorisation) and `held` base variables
    that left the free set (a solve each)."""
    k = k0 + a
    return k0 * k0 * a + k0 * a * a + a * a * a / 3.0 + 2.0 * k * k * held


@njit(cache=True, nogil=True, inline="always")
def _factor_flops(k0, k, a):
    """(flops, whether the kept factor is extended) for factoring k free variables, a of them
    entering a kept factor of k0: its extension (`_extend_flops`, the base's k0 − (k − a)
    variables no longer free held) or a new factor (k³/3), whichever is fewer."""
    fresh = k * k * k / 3.0
    if k0 == 0:
        return fresh, False
    kept = _extend_flops(k0, a, k0 - (k - a))
    return min(fresh, kept), kept < fresh


@njit(cache=True, nogil=True)
def _step_flops(st, m, free, fac):
    """The least flops of a Newton step on the free slots (`_factor_flops`) and the gathering
    of the moved rows."""
    k = free.shape[0]
    flops, _ = _factor_flops(fac[0].shape[0], k, _entering(st, free, fac).shape[0])
    return flops + 2.0 * k * m


@njit(cache=True, nogil=True)
def _rebuild(st, m, free, credit, fac):
    """A new factor (see `_factor`) on the free slots; a variable whose pivot is below
    NEWTON_PIVOT of the largest diagonal (a duplicate of a free row) stays out of the base,
    marked −2 in `where`, until the next rebuild."""
    var = st[7]
    base, where = fac[2], fac[3]
    k = free.shape[0]
    Hn = np.empty((k, k))
    for i in range(k):
        row = st[10][_qrow(st, free[i], m)]
        for j in range(k):
            Hn[i, j] = row[free[j]]
    credit[0] -= k * k * k / 3.0
    Rn, kept = _independent_cholesky(Hn, NEWTON_PIVOT * np.max(np.diag(Hn)))
    on = np.flatnonzero(kept)
    where[:] = -1
    for i in range(k):
        where[var[free[i]]] = -2
    for i in range(on.shape[0]):
        base[i] = var[free[on[i]]]
        where[base[i]] = i
    return (np.ascontiguousarray(Rn[on][:, on]), np.ascontiguousarray(Hn[on][:, on]), base, where)


@njit(cache=True, nogil=True)
def _factor(st, m, free, credit, fac):
    """The factor fac = (R, H, base, where) covering the free slots: H = Q over the base
    variables `base`, R its upper Cholesky factor, where[v] the base position of variable v
    (−1 outside). Q does not change within a solve, so the factor of an earlier step is
    extended by the entering variables (R₁₂ = R₀⁻ᵀQ_{0,new}, R₂₂ the factor of the Schur
    complement), its base variables that left the free set being held in the step. It is
    rebuilt (`_rebuild`) when that costs fewer flops, or when an entering variable is
    dependent on the base: the base may hold variables no longer free, on which it may
    depend and the free set not. Returns (factor, whether it was rebuilt)."""
    y, QD, kid, ps, var, store = st[0], st[4], st[5], st[6], st[7], st[14]
    R, H, base, where = fac
    k0 = R.shape[0]
    k = free.shape[0]
    new = _entering(st, free, fac)
    a = new.shape[0]
    if not _factor_flops(k0, k, a)[1]:
        return _rebuild(st, m, free, credit, fac), True
    if a == 0:
        return fac, False
    bs = _base_slots(st, fac)
    B = np.empty((k0, a))
    C = np.empty((a, a))
    for j in range(a):
        sj = new[j]
        src = store[ps[sj]]
        for i in range(k0):
            B[i, j] = y[sj] * y[bs[i]] * src[kid[bs[i]]]
        for t in range(a):
            C[j, t] = QD[sj] if t == j else y[sj] * y[new[t]] * src[kid[new[t]]]
    credit[0] -= _extend_flops(k0, a, 0)
    W = _forward_solve(R, B)
    Rs, kept = _independent_cholesky(C - W.T @ W, NEWTON_PIVOT * max(np.max(np.diag(H)), np.max(np.diag(C))))
    if not kept.all():
        return _rebuild(st, m, free, credit, fac), True
    k1 = k0 + a
    Rx = np.zeros((k1, k1))
    Hx = np.empty((k1, k1))
    Rx[:k0, :k0] = R
    Hx[:k0, :k0] = H
    Rx[:k0, k0:] = W
    Rx[k0:, k0:] = Rs
    Hx[:k0, k0:] = B
    Hx[k0:, :k0] = B.T
    Hx[k0:, k0:] = C
    for j in range(a):
        base[k0 + j] = var[new[j]]
        where[base[k0 + j]] = k0 + j
    return (Rx, Hx, base, where), False


@njit(cache=True, nogil=True)
def _newton(st, m, nu_mode, free, credit, fac, eps):
    """One Newton step on the free variables F among the active slots, the bounded ones held:
    d minimises ½dᵀQ_FF d + G_Fᵀd under the equality constraints A d = 0 (yᵀd = 0, or in ν mode
    the sum of d over each class), as d = u − Wλ with Q u = −G, W = Q⁻¹[A, e_held] and λ from
    the Schur complement, on the factor `_factor` keeps: the variables of its base that are
    no longer free are held by unit constraints d_a = 0. A free variable whose row of Q_FF is
    (to a pivot of NEWTON_PIVOT of the largest diagonal) a combination of the others', such
    as a duplicate of a free training row, is held too: Q_FF is singular there and the
    objective flat.

    When the full step leaves the box, the variables it takes out are sent to the bound they
    cross and the step is solved again with them held there (d_a = δ_a, through the same
    factor: a triangular solve per variable sent rather than a factorisation), up to
    NEWTON_RESOLVES times, as an active-set method changes many bounds at once; that move is
    taken when it stays in the box and lowers the objective (returns 1), unless the free
    variables' gradients after it still violate by more than `eps` on an extended factor
    (rounding in the Schur complement of an ill-conditioned Q_FF): then nothing moves and it
    returns −1, for a step on a new factor. Otherwise (sending every leaver at once can raise
    the objective when Q_FF is near-singular) α_F descends by the primal active-set method
    (`_descend`). Returns (1 when the step was solved in the box, 0.5 when the active-set
    method stopped short, 0 when nothing moved because no move lowers the objective; the
    factor). The flops of the factorisation and of the solves are taken from `credit[0]`."""
    y, alpha, G, U = st[0], st[1], st[2], st[3]
    fac, rebuilt = _factor(st, m, free, credit, fac)
    R, H = fac[0], fac[1]
    k = R.shape[0]
    credit[0] -= 2.0 * k * m
    bs = _base_slots(st, fac)
    nc = 2 if nu_mode else 1
    g = np.zeros(k)
    moves = np.zeros(k, dtype=np.bool_)
    # Q⁻¹[−g, A]: the unconstrained step and the directions of the equality constraints
    B = np.zeros((k, 1 + nc))
    for a in range(k):
        s = bs[a]
        moves[a] = s < m and 0 < alpha[s] < U[s]
        if moves[a]:
            g[a] = G[s]
            B[a, 0] = -g[a]
            B[a, 2 if nu_mode and y[s] < 0 else 1] = 1.0 if nu_mode else y[s]
    X = _cholesky_solve(R, B)
    u = np.ascontiguousarray(X[:, 0])
    A = np.ascontiguousarray(B[:, 1:])
    W = np.ascontiguousarray(X[:, 1:])
    delta = np.zeros(k)
    # held variables in the order their unit constraints join W: first the base's
    # variables that are no longer free (d = 0), then those each solve sends to a bound
    sent = ~moves
    order = np.flatnonzero(sent)
    n_sent = n_fixed = order.shape[0]
    order = np.concatenate((order, np.empty(k - n_sent, dtype=np.int64)))
    solved = 0
    d_full = np.empty(0)
    for solves in range(NEWTON_RESOLVES):
        if n_sent > solved:
            E = np.zeros((k, n_sent - solved))
            for i in range(solved, n_sent):
                E[order[i], i - solved] = 1.0
            credit[0] -= 2.0 * k * k * (n_sent - solved)
            W = np.concatenate((W, _cholesky_solve(R, E)), axis=1)
            solved = n_sent
        d = _constrained_step(u, A, W, order[:n_sent], delta[order[:n_sent]])
        if d.shape[0] == 0:
            if solves == 0:
                return 0.0, fac
            break
        if solves == 0:
            d_full = d
        for a in range(k):
            if sent[a]:
                continue
            v = alpha[bs[a]] + d[a]
            if v > U[bs[a]] or v < 0:
                delta[a] = (U[bs[a]] if v > U[bs[a]] else 0.0) - alpha[bs[a]]
                sent[a] = True
                order[n_sent] = a
                n_sent += 1
        if n_sent == solved:
            for a in range(k):
                if not sent[a]:
                    delta[a] = d[a]
            if not rebuilt and _spread(y[bs], g + H @ delta, ~sent, nu_mode) > eps:
                return -1.0, fac
            if _lowers(H, g, delta):
                _move(st, m, bs, delta)
                return 1.0, fac
            break
        if n_sent == k:
            break
    t, delta = _descend(st, bs, R, u, A, W[:, :A.shape[1] + n_fixed], order[:n_fixed], d_full, credit)
    # an ill-conditioned Q_FF gives a step whose rounding errors outweigh its gain
    if not _lowers(H, g, delta):
        return 0.0, fac
    _move(st, m, bs, delta)
    return t, fac


@njit(cache=True, nogil=True)
def _descend(st, bs, R, u, A, W, held, d, credit):
    """The primal active-set method on the Newton step's subproblem, from δ = 0: move along
    d − δ to the first bound, hold the variable that reaches it there and solve again (d from
    `_constrained_step`, a triangular solve per variable held), up to NEWTON_RESOLVES times.
    Each move lowers the objective (a convex quadratic on each subspace). `held` are the base's
    variables already held at 0 (W = R⁻¹R⁻ᵀ[A, e_held]), d the step with only them held.
    Returns (1 when the last solve stayed in the box, else 0.5; the move δ)."""
    alpha, U = st[1], st[3]
    k = d.shape[0]
    delta = np.zeros(k)
    is_held = np.zeros(k, dtype=np.bool_)
    order = np.empty(k, dtype=np.int64)
    nh = held.shape[0]
    order[:nh] = held
    is_held[held] = True
    for _ in range(NEWTON_RESOLVES):
        tau = 1.0
        block = -1
        for a in range(k):
            if is_held[a]:
                continue
            p = d[a] - delta[a]
            x = alpha[bs[a]] + delta[a]
            if p > 0 and x + p > U[bs[a]]:
                r = (U[bs[a]] - x) / p
            elif p < 0 and x + p < 0:
                r = -x / p
            else:
                continue
            if r < tau:
                tau = r
                block = a
        to_upper = block >= 0 and d[block] > delta[block]
        for a in range(k):
            if not is_held[a]:
                delta[a] += tau * (d[a] - delta[a])
        if block < 0:
            return 1.0, delta
        delta[block] = (U[bs[block]] if to_upper else 0.0) - alpha[bs[block]]
        is_held[block] = True
        order[nh] = block
        nh += 1
        e = np.zeros((k, 1))
        e[block, 0] = 1.0
        credit[0] -= 2.0 * k * k
        W = np.concatenate((W, _cholesky_solve(R, e)), axis=1)
        d = _constrained_step(u, A, W, order[:nh], delta[order[:nh]])
        if d.shape[0] == 0:
            break
    return 0.5, delta


@njit(cache=True, nogil=True)
def _constrained_step(u, A, W, held, value):
    """d minimising ½dᵀHd + gᵀd subject to Aᵀd = 0 and d[held] = value, from u = −H⁻¹g and
    W = H⁻¹[A, e_held]: d = u − Wλ with λ from the Schur complement S = [A, e_held]ᵀW. A
    column of A that is zero (a class with no free variable) is left out. Empty when the
    constraints are dependent (every free variable of a class held)."""
    k, nc = A.shape
    nh = held.shape[0]
    use = np.zeros(nc + nh, dtype=np.bool_)
    S = np.empty((nc + nh, nc + nh))
    r = np.empty(nc + nh)
    At = np.ascontiguousarray(A.T)
    for c in range(nc):
        S[c] = At[c] @ W
        r[c] = At[c] @ u
        use[c] = S[c, c] > 0
    for i in range(nh):
        S[nc + i] = W[held[i]]
        r[nc + i] = u[held[i]] - value[i]
        use[nc + i] = True
    on = np.flatnonzero(use)
    S_on = np.ascontiguousarray(S[on][:, on])
    Rs, kept = _independent_cholesky(S_on, 1e-12 * np.max(np.diag(S_on)))
    if not kept.all():
        return np.empty(0)
    lam = np.ascontiguousarray(_cholesky_solve(Rs, np.ascontiguousarray(r[on]).reshape(-1, 1))[:, 0])
    return u - np.ascontiguousarray(W[:, on]) @ lam


@njit(cache=True, nogil=True)
def _spread(y, grad, on, nu_mode):
    """The largest difference of y_a·grad_a between two variables of `on` (of one class in ν
    mode): the KKT violation among free variables, zero at the step's exact solution."""
    lo = np.full(2, np.inf)
    hi = np.full(2, -np.inf)
    for a in range(grad.shape[0]):
        if on[a]:
            c = 1 if nu_mode and y[a] < 0 else 0
            v = y[a] * grad[a]
            lo[c] = min(lo[c], v)
            hi[c] = max(hi[c], v)
    return max(hi[0] - lo[0], hi[1] - lo[1], 0.0)


@njit(cache=True, nogil=True)
def _lowers(H, g, delta):
    change = 0.0
    for a in range(delta.shape[0]):
        change += delta[a] * (g[a] + 0.5 * (H[a] @ delta))
    return change < 0


@njit(cache=True, nogil=True)
def _move(st, m, free, delta):
    alpha, G = st[1], st[2]
    for a in range(free.shape[0]):
        if delta[a] != 0:
            fa = free[a]
            alpha[fa] += delta[a]
            row = st[10][_qrow(st, fa, m)]
            for s in range(m):
                G[s] += row[s] * delta[a]


@njit(cache=True, nogil=True)
def _free_slots(st, m):
    alpha, U = st[1], st[3]
    out = np.empty(m, dtype=np.int64)
    k = 0
    for t in range(m):
        if 0 < alpha[t] < U[t]:
            out[k] = t
            k += 1
    return out[:k]


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
        if st[1][i] > limit or st[1][j] > limit:
            return k + 1, False, True
    return count, False, False


@njit(cache=True, nogil=True)
def inner_smo(store, pos, kidx_b, y, alpha, G, U, QD, Qs, eps, max_iter, nu_mode, shrinking, limit):
    """LIBSVM's SMO, second-order selection and shrinking, on one block B of variables.

    Kernel rows of B are rows `pos` of `store`; rows of Q_BB are gathered into the scratch `Qs`
    (at least |B|×|B|) as the pairs need them. Updates `alpha` (the block's α) and `G` (its
    gradient over the block, exact on entry) in place. Stops when the block's maximal
    violation is below `eps`, after `max_iter` pair updates, or when an α passes `limit` (an
    unbounded dual); returns the number of pair updates.
    """
    q = y.shape[0]
    if q == 0:
        return 0
    st = (y.copy(), alpha.copy(), G.copy(), U.copy(), QD.copy(), kidx_b.copy(), pos.copy(),
          np.arange(q), alpha.copy(), G.copy(),
          Qs, np.full(q, -1, dtype=np.int64),
          np.zeros(q, dtype=np.int64), np.zeros(1, dtype=np.int64), store)
    unshrunk = np.array([not shrinking])
    m = q
    counter = min(q, SHRINK_EVERY) - 1  # pair updates before the next check
    checks = 0
    it = 0
    # pair-update work not yet spent on Newton steps, in flops: Newton steps cost at most as
    # much as the pair updates around them, so they can at worst double a solve's time
    credit = np.zeros(1)
    # the Newton steps' factor, kept from one step to the next (Q does not change in a solve)
    fac = (np.zeros((0, 0)), np.zeros((0, 0)), np.empty(q, dtype=np.int64), np.full(q, -1, dtype=np.int64))
    while it < max_iter:
        if counter == 0:
            counter = min(q, SHRINK_EVERY)
            checks += 1
            if shrinking and checks % SHRINK_PASSES == 1:
                m = _shrink(st, m, q, eps, nu_mode, unshrunk)
            free = _free_slots(st, m)
            for _ in range(NEWTON_TRIES):
                if free.shape[0] < 2 or credit[0] < _step_flops(st, m, free, fac):
                    break
                t, fac = _newton(st, m, nu_mode, free, credit, fac, eps)
                if t < 0:
                    fac = (fac[0][:0, :0].copy(), fac[1][:0, :0].copy(), fac[2], fac[3])
                    continue
                if not (0 < t < 1):
                    break
                free = _free_slots(st, m)
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
    slot_alpha, slot_G, var = st[1], st[2], st[7]
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
