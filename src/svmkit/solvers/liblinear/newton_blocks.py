"""The primal trust-region Newton of `linear_newton` (LIBLINEAR -s 2 and -s 11) over rows kept
in blocks on a cluster, as distributed LIBLINEAR computes it (Zhuang, Chin, Juan & Lin 2015):
each worker keeps its block's Xw and rows of positive loss, and gives its part of the
function value, the gradient Σ C_i ℓ'_i x_i, the Hessian products X_Iᵀ diag(C_I) X_I s and
the diagonal; the client sums these vectors of n_features + 1 values and runs the same
iterations (`linear_newton.minimise`), so the iterates are the in-memory ones up to the order
of the sums."""

from __future__ import annotations

import numpy as np

from svmkit.solvers.liblinear.newton import ARMIJO, MAX_HALVINGS, _L2Loss, _Rows, minimise

#: The steps 1, ½, ¼, … of the line search, whose losses one pass gives.
STEPS = 0.5 ** np.arange(MAX_HALVINGS)


def _block_loss(part, bias, form, epsilon, regression):
    """The block's loss over its rows of positive cost: form(targets, weights) → (t, c)."""
    rows, X, target, weight = part
    bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
    if bad.size:
        raise ValueError(f"X row {rows[bad[0]]} holds a value that is not finite")
    t, c = form(target, weight, rows)
    keep = np.flatnonzero(c > 0)
    return _L2Loss(_Rows(np.ascontiguousarray(X[keep]), bias), t[keep], c[keep], float(epsilon), regression)


def _wx(L, w):
    return L.rows.dot(w)


def _loss(L, wx):
    return L.loss(wx)


def _active(L, wx):
    """(rows of positive loss, their C_i, 2 Σ C_i (ℓ'_i/2) x̃_i)."""
    active, r = L._scaled_residual(wx)
    active = np.flatnonzero(active)
    c = L.c[active]
    return active, c, 2.0 * L.rows.tdot(active, c * r)


def _gradient_part(act):
    return act[2]


def _hessian_part(L, act, s):
    return L.rows.tdot(act[0], act[1], s)


def _diagonal_part(L, act):
    return L.rows.tdot(act[0], act[1], square=True)


def _step_losses(L, wx, xs):
    return np.array([L.loss(wx + step * xs) for step in STEPS])


def _move(wx, xs, step):
    return wx + step * xs


def _dual_part(L, wx):
    """(Σ linear terms, X̃ᵀα, Σ α²/(4C)) of the dual at α_i = 2C_i·(signed residual)."""
    if L.regression:
        r = L.y - wx
        alpha = 2 * L.c * np.sign(r) * np.maximum(np.abs(r) - L.epsilon, 0.0)
        linear = float(L.y @ alpha) - L.epsilon * float(np.abs(alpha).sum())
    else:
        alpha = 2 * L.c * L.y * np.maximum(1 - L.y * wx, 0.0)
        linear = float(L.y @ alpha)
    return linear, L.rows.tdot(np.arange(alpha.size), alpha), float((alpha * alpha) @ (0.25 / L.c))


class BlockL2Loss:
    """`_L2Loss`'s interface over the blocks `parts` (futures on `cluster`)."""

    def __init__(self, cluster, parts, bias, form, epsilon=0.0, regression=False):
        self.cluster = cluster
        self.blocks = [cluster.submit(_block_loss, part, bias, form, epsilon, regression) for part in parts]
        self.wx = None
        self.wTw = 0.0

    def _sum(self, func, *per_block):
        """Σ over the blocks of func(block, *its arguments) (vectors or numbers)."""
        c = self.cluster
        return sum(c.gather([c.submit(func, L, *(a[k] if isinstance(a, list) else a for a in per_block))
                             for k, L in enumerate(self.blocks)]))

    def fun(self, w):
        self.wx = [self.cluster.submit(_wx, L, w) for L in self.blocks]
        self.wTw = float(w @ w)
        return float(self._sum(_loss, self.wx)) + 0.5 * self.wTw

    def grad(self, w):
        c = self.cluster
        self.act = [c.submit(_active, L, wx) for L, wx in zip(self.blocks, self.wx)]
        return w + sum(c.gather([c.submit(_gradient_part, a) for a in self.act]))

    def hessian_product(self, s):
        return s + 2.0 * self._sum(_hessian_part, self.act, s)

    def diagonal(self):
        return 1.0 + 2.0 * self._sum(_diagonal_part, self.act)

    def line_search(self, w, s, f, g):
        """`_L2Loss.line_search` with the losses of every step from one pass."""
        xs = [self.cluster.submit(_wx, L, s) for L in self.blocks]
        losses = self._sum(_step_losses, self.wx, xs)
        sTs, wTs, gTs = float(s @ s), float(w @ s), float(g @ s)
        for step, loss in zip(STEPS, losses):
            f_new = float(loss) + (step * step * sTs + self.wTw) / 2.0 + step * wTs
            if f_new - f <= ARMIJO * step * gTs:
                self.wx = [self.cluster.submit(_move, wx, x, step) for wx, x in zip(self.wx, xs)]
                w += step * s
                self.wTw += step * step * sTs + 2 * step * wTs
                return step, f_new
        return 0.0, f

    def dual(self, w):
        """The dual objective at the α the optimality conditions give for w."""
        wx = [self.cluster.submit(_wx, L, w) for L in self.blocks]
        parts = self.cluster.gather([self.cluster.submit(_dual_part, L, x) for L, x in zip(self.blocks, wx)])
        linear = sum(p[0] for p in parts)
        w_alpha = sum(p[1] for p in parts)
        return linear - 0.5 * float(w_alpha @ w_alpha) - sum(p[2] for p in parts)


def block_newton(cluster, parts, n_weights, bias, form, tol, max_iter, epsilon=None):
    """(w, Newton steps, (primal, dual, gap)) over the blocks `parts`: -s 11 with the band
    `epsilon`, or -s 2 when it is None."""
    problem = BlockL2Loss(cluster, parts, bias, form, epsilon or 0.0, epsilon is not None)
    result = minimise(problem, n_weights, tol, max_iter)
    dual = problem.dual(result.w)
    return result.w, result.n_iter, (result.objective, dual, result.objective - dual)
