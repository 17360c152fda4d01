"""The Newton step of the SMO solver's block loop: when pair updates have cost as much, the
free variables' reduced KKT system is solved on a Cholesky factor kept from step to step.

Notation as in `_smo_loops`; the block's state is a `BlockState`.

The step's large functions are inlined (`inline="always"`, at Numba's IR) into the block loop
that calls them: Numba optimises each compiled function's LLVM module again with every callee
linked in, so a chain of calls n deep is optimised n times over. Folded into `inner_smo`, the
chain compiles once (a first SVC fit on an empty cache: 48.7–53.7 s → 39.2–39.9 s; its run time and
results unchanged).
"""

from collections import namedtuple

import numpy as np
from numba import njit

from svmkit.solvers._blocked_cholesky import cholesky_solve, forward_solve, independent_cholesky
from svmkit.solvers._smo_block import qrow

#: Newton steps in a row while each stops at a bound (the bounded variable leaves the free set).
NEWTON_TRIES = 3
#: Newton solves in one step while its full step leaves the box (each sends the leavers to
#: their bound; a re-solve costs a triangular solve per variable sent).
NEWTON_RESOLVES = 10
#: Smallest squared Cholesky pivot of Q_FF, relative to its largest diagonal, for a Newton step.
NEWTON_PIVOT = 1e-10

#: The Newton steps' factor, kept from one step to the next (Q does not change in a solve):
#: H = Q over the base variables `base`, R its upper Cholesky factor, where[v] the base
#: position of variable v (−1 outside, −2 held out of the base as dependent).
Factor = namedtuple("Factor", ["R", "H", "base", "where"])


@njit(cache=True, nogil=True)
def empty_factor(q):
    """No factor yet, for a block of q variables."""
    return Factor(np.zeros((0, 0)), np.zeros((0, 0)), np.empty(q, dtype=np.int64), np.full(q, -1, dtype=np.int64))


@njit(cache=True, nogil=True, inline="always")
def newton_steps(st, m, nu_mode, eps, credit, fac):
    """Newton steps (`_newton`) on the free variables among the active slots 0..m-1 while the
    pair updates' `credit[0]` covers one (`_step_flops`), up to NEWTON_TRIES in a row while
    each stops at a bound; a step that asks for a new factor gets one. Returns the factor."""
    free = _free_slots(st, m)
    for _ in range(NEWTON_TRIES):
        if free.shape[0] < 2 or credit[0] < _step_flops(st, m, free, fac):
            break
        t, fac = _newton(st, m, nu_mode, free, credit, fac, eps)
        if t < 0:
            fac = Factor(fac.R[:0, :0].copy(), fac.H[:0, :0].copy(), fac.base, fac.where)
            continue
        if not (0 < t < 1):
            break
        free = _free_slots(st, m)
    return fac


@njit(cache=True, nogil=True)
def _base_slots(st, fac):
    """The slot of each variable of the factor's base, in base order."""
    var, where, k = st.var, fac.where, fac.R.shape[0]
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
    var, where = st.var, fac.where
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
    flops, _ = _factor_flops(fac.R.shape[0], k, _entering(st, free, fac).shape[0])
    return flops + 2.0 * k * m


@njit(cache=True, nogil=True, inline="always")
def _rebuild(st, m, free, credit, fac):
    """A new factor (see `_factor`) on the free slots; a variable whose pivot is below
    NEWTON_PIVOT of the largest diagonal (a duplicate of a free row) stays out of the base,
    marked −2 in `where`, until the next rebuild."""
    var, base, where = st.var, fac.base, fac.where
    k = free.shape[0]
    Hn = np.empty((k, k))
    for i in range(k):
        row = st.Qs[qrow(st, free[i], m)]
        for j in range(k):
            Hn[i, j] = row[free[j]]
    credit[0] -= k * k * k / 3.0
    Rn, kept = independent_cholesky(Hn, NEWTON_PIVOT * np.max(np.diag(Hn)))
    on = np.flatnonzero(kept)
    where[:] = -1
    for i in range(k):
        where[var[free[i]]] = -2
    for i in range(on.shape[0]):
        base[i] = var[free[on[i]]]
        where[base[i]] = i
    return Factor(np.ascontiguousarray(Rn[on][:, on]), np.ascontiguousarray(Hn[on][:, on]), base, where)


@njit(cache=True, nogil=True, inline="always")
def _factor(st, m, free, credit, fac):
    """The factor covering the free slots. Q does not change within a solve, so the factor
    of an earlier step is extended by the entering variables (R₁₂ = R₀⁻ᵀQ_{0,new}, R₂₂ the
    factor of the Schur complement), its base variables that left the free set being held in
    the step. It is rebuilt (`_rebuild`) when that costs fewer flops, or when an entering
    variable is dependent on the base: the base may hold variables no longer free, on which
    it may depend and the free set not. Returns (factor, whether it was rebuilt)."""
    y, QD, kid, ps, var, store = st.y, st.QD, st.kidx, st.pos, st.var, st.store
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
    W = forward_solve(R, B)
    Rs, kept = independent_cholesky(C - W.T @ W, NEWTON_PIVOT * max(np.max(np.diag(H)), np.max(np.diag(C))))
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
    return Factor(Rx, Hx, base, where), False


@njit(cache=True, nogil=True, inline="always")
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
    y, alpha, G, U = st.y, st.alpha, st.G, st.U
    fac, rebuilt = _factor(st, m, free, credit, fac)
    R, H = fac.R, fac.H
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
    X = cholesky_solve(R, B)
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
            W = np.concatenate((W, cholesky_solve(R, E)), axis=1)
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


@njit(cache=True, nogil=True, inline="always")
def _descend(st, bs, R, u, A, W, held, d, credit):
    """The primal active-set method on the Newton step's subproblem, from δ = 0: move along
    d − δ to the first bound, hold the variable that reaches it there and solve again (d from
    `_constrained_step`, a triangular solve per variable held), up to NEWTON_RESOLVES times.
    Each move lowers the objective (a convex quadratic on each subspace). `held` are the base's
    variables already held at 0 (W = R⁻¹R⁻ᵀ[A, e_held]), d the step with only them held.
    Returns (1 when the last solve stayed in the box, else 0.5; the move δ)."""
    alpha, U = st.alpha, st.U
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
        W = np.concatenate((W, cholesky_solve(R, e)), axis=1)
        d = _constrained_step(u, A, W, order[:nh], delta[order[:nh]])
        if d.shape[0] == 0:
            break
    return 0.5, delta


@njit(cache=True, nogil=True, inline="always")
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
    Rs, kept = independent_cholesky(S_on, 1e-12 * np.max(np.diag(S_on)))
    if not kept.all():
        return np.empty(0)
    lam = np.ascontiguousarray(cholesky_solve(Rs, np.ascontiguousarray(r[on]).reshape(-1, 1))[:, 0])
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
    alpha, G = st.alpha, st.G
    for a in range(free.shape[0]):
        if delta[a] != 0:
            fa = free[a]
            alpha[fa] += delta[a]
            row = st.Qs[qrow(st, fa, m)]
            for s in range(m):
                G[s] += row[s] * delta[a]


@njit(cache=True, nogil=True)
def _free_slots(st, m):
    alpha, U = st.alpha, st.U
    out = np.empty(m, dtype=np.int64)
    k = 0
    for t in range(m):
        if 0 < alpha[t] < U[t]:
            out[k] = t
            k += 1
    return out[:k]

