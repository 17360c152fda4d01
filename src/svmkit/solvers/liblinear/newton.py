"""Truncated Newton for the primal of the L2-regularised, L2-loss linear SVMs (LIBLINEAR -s 2
and -s 11), as LIBLINEAR 2.4x–2.50 solves them.

    min_w f(w) = ½‖w‖² + Σ_i C_i ℓ_i(wᵀx_i),

ℓ_i(t) = max(0, 1 − y_i t)² (classification, y_i = ±1) or max(0, |t − y_i| − ε)² (regression);
x_i carries a constant feature `bias` whose weight is regularised with w (LIBLINEAR's -B). f is
once differentiable; with I the rows whose loss is positive, the gradient is
w + 2 Σ_{i∈I} C_i ℓ'_i x_i and the generalised Hessian I + 2 X_Iᵀ diag(C_I) X_I (Fan et al. 2008,
JMLR 9, appendix; Lin, Weng & Keerthi 2008, JMLR 9). Each step solves the Newton system by
conjugate gradient preconditioned with the Hessian's diagonal mixed with the identity
(0.99·I + 0.01·diag) and stopped when the quadratic model's decrease stalls (Hsia, Chiang &
Lin 2018, ACML; Galli & Lin 2021, IEEE TNNLS), then backtracks along it (Armijo, η = 0.01, at
most 20 halvings). It stops when ‖∇f(w)‖ ≤ tol·‖∇f(0)‖. The rules, constants and order of
operations are LIBLINEAR's (newton.cpp, linear.cpp's l2r_l2_svc_fun / l2r_l2_svr_fun), so
the iterates are LIBLINEAR's up to rounding.

A warm start (an update: the previous optimum, a few rows added or removed) is close to the
new optimum, where the Newton step solves nearly the whole problem, but the conjugate gradient
preconditioned by a diagonal needs tens of Hessian products on an ill-conditioned problem
(a9a: about 50 over five steps). There the preconditioner is the generalised Hessian at the
start itself, factorised once: the first conjugate gradient step is then the Newton step, as
in a Newton method with the exact Hessian. The stop is the same, so the result is a fit's to
its tolerance. Its rows' part S = Σ_{i∈I} C_i x̃_i x̃_iᵀ is formed where that costs at most
`HESSIAN_PRODUCTS` Hessian products (short rows, few weights); a fit that keeps its rows ends
with S at its w and the rows' part of the stop's ∇f(0) (`Curvature`), and an update starts
from them, changed by the rows whose terms changed (the rows added or removed, those that
crossed the margin), and ends with its own.

The products with X run in the compiled core over the rows of I, in the layouts of the dual
solver's loops (dense, CSR, CSR of a binary pattern): a Hessian product visits each row once,
its dot and its update together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from svmkit._core import linear
from svmkit._threads import one_blas_thread
from svmkit.solvers.liblinear.dcd import _layout, _parts

#: Armijo's constant and the line search's halvings at most (LIBLINEAR's).
ARMIJO = 0.01
MAX_HALVINGS = 20
#: The conjugate gradient's relative stopping constant (LIBLINEAR's eps_cg) and the weight of
#: the Hessian's diagonal in the preconditioner (alpha_pcg).
EPS_CG = 0.5
PRECONDITIONER_MIX = 0.01
#: A warm start's preconditioner is the Hessian itself when forming and factorising it costs
#: at most this many Hessian products.
HESSIAN_PRODUCTS = 10


@dataclass
class Curvature:
    """What a Newton fit over some rows leaves for the next over them: the rows' part of the
    generalised Hessian at its w, S = Σ_i e_i x̃_i x̃_iᵀ (`outer`, H = I + 2S), e_i = C_i on the
    rows of positive loss there and 0 elsewhere (`e`); the rows' part of the gradient at 0,
    Σ_i q_i x̃_i (`at_zero`, ∇f(0) = 2·that), q_i = C_i ℓ'_i(0)/2 (`q`)."""

    outer: np.ndarray
    e: np.ndarray
    at_zero: np.ndarray
    q: np.ndarray


@dataclass
class Update:
    """A fit that keeps its rows: w to start from (None: 0) and the `Curvature` the previous fit
    ended with, e laid out on these rows (None: formed here); the result then has its own."""

    w: np.ndarray | None = None
    curvature: Curvature | None = None


@dataclass
class NewtonResult:
    """w (one weight per column, then the constant feature's), the Newton steps taken, f(w) and
    ∇f(w); in memory, `decision`: x̃_iᵀw for every row, as the iterations last computed it, and
    for an `Update` the `Curvature` at w (None where forming it costs too much)."""

    w: np.ndarray
    n_iter: int
    objective: float
    gradient: np.ndarray
    decision: np.ndarray | None = None
    curvature: Curvature | None = None


class _Rows:
    """The rows x̃_i = (x_i, bias) of X in the core's layout."""

    def __init__(self, X, bias: float):
        self.parts, self.bias = _parts(X), float(bias)
        self.n, self.n_weights = X.shape[0], X.shape[1] + 1
        self.none = np.zeros(0)
        self.layout = _layout(self.parts, self.n_weights - 1, self.bias)

    def __getstate__(self):
        """The arrays without the core's view of them, which does not pickle: a cluster's
        worker may send a block's rows to another."""
        return {name: value for name, value in self.__dict__.items() if name != "layout"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.layout = _layout(self.parts, self.n_weights - 1, self.bias)

    def dot(self, v):
        """X̃ v (one value per row)."""
        out = np.empty(self.n)
        linear.row_products(self.layout, np.ascontiguousarray(v, dtype=np.float64), out)
        return out

    def tdot(self, rows, u, s=None, square=False):
        """Σ_k a_k x̃_{rows[k]} (squared entries when `square`), a_k = u_k (times x̃ᵀs when given)."""
        out = np.empty(self.n_weights)
        s = self.none if s is None else np.ascontiguousarray(s, dtype=np.float64)
        linear.rows_sum(self.layout, np.ascontiguousarray(rows, dtype=np.int64),
                        np.ascontiguousarray(u, dtype=np.float64), s, bool(square), out)
        return out

    def outer_pays(self, rows) -> bool:
        """Whether forming Σ_k u_k x̃_k x̃_kᵀ over `rows` and factorising it costs at most
        `HESSIAN_PRODUCTS` products Σ_k u_k x̃_k x̃_kᵀs (each entry of the rows read twice):
        Σ_k len_k²/2 + n_weights³/3 against 2·Σ_k len_k, len_k the entries of x̃_k."""
        dense, _, _, indptr = self.parts
        lengths = np.full(len(rows), self.n_weights) if dense is not None else np.diff(indptr)[rows] + 1.0
        products = 2.0 * float(lengths.sum())
        return float(lengths @ lengths) / 2 + self.n_weights ** 3 / 3 <= HESSIAN_PRODUCTS * max(products, 1.0)

    def outer(self, rows, u):
        """Σ_k u_k x̃_{rows[k]} x̃_{rows[k]}ᵀ."""
        out = np.empty((self.n_weights, self.n_weights))
        linear.rows_outer(self.layout, np.ascontiguousarray(rows, dtype=np.int64),
                          np.ascontiguousarray(u, dtype=np.float64), out)
        return out


class _L2Loss:
    """f, its gradient, generalised Hessian products and diagonal for one problem; keeps Xw and
    the rows I of positive loss of the last gradient, as LIBLINEAR's function objects do."""

    def __init__(self, rows: _Rows, y, c, epsilon, regression):
        self.rows, self.y, self.c, self.epsilon, self.regression = rows, y, c, epsilon, regression
        self.wx = np.zeros(y.size)
        self.wTw = 0.0

    def _scaled_residual(self, wx):
        """(rows of positive loss, ℓ'_i/2 there): 1 − y_i t below the margin, (t − y_i) ∓ ε
        outside the tube, signed so that the loss is C_i times its square."""
        if self.regression:
            d = wx - self.y
            low, high = d < -self.epsilon, d > self.epsilon
            active = low | high
            return active, np.where(low, d + self.epsilon, d - self.epsilon)[active]
        margin = wx * self.y
        active = margin < 1
        return active, (self.y * (margin - 1))[active]

    def loss(self, wx):
        """Σ_i C_i ℓ_i(t_i) at t = wx."""
        active, r = self._scaled_residual(wx)
        return float(self.c[active] @ (r * r))

    def gradient_at_zero(self, previous=None):
        """(∇f(0)/2, q): the stop's reference (halved: the rows' part Σ_i q_i x̃_i) and its terms
        q_i = C_i ℓ'_i(0)/2, from `previous` (a `Curvature` over these rows) changed by the rows
        whose q_i changed, else by a pass over the rows."""
        active, r = self._scaled_residual(np.zeros(self.y.size))
        q = np.zeros(self.y.size)
        q[active] = self.c[active] * r
        if previous is None:
            rows = np.flatnonzero(q)
            return self.rows.tdot(rows, q[rows]), q
        rows = np.flatnonzero(q != previous.q)
        return previous.at_zero + self.rows.tdot(rows, q[rows] - previous.q[rows]), q

    def fun(self, w):
        """f(w); remembers Xw and ‖w‖²."""
        self.wx = self.rows.dot(w)
        self.wTw = float(w @ w)
        return self.loss(self.wx) + 0.5 * self.wTw

    def grad(self, w):
        """∇f(w) at the w of the last `fun`; fixes I for the Hessian."""
        active, r = self._scaled_residual(self.wx)
        self.active = np.flatnonzero(active)
        self.c_active = self.c[self.active]
        return w + 2.0 * self.rows.tdot(self.active, self.c_active * r)

    def hessian_product(self, s):
        """(I + 2 X_Iᵀ diag(C_I) X_I) s."""
        return s + 2.0 * self.rows.tdot(self.active, self.c_active, s)

    def diagonal(self):
        """The generalised Hessian's diagonal, 1 + 2 Σ_{i∈I} C_i x_ij²."""
        return 1.0 + 2.0 * self.rows.tdot(self.active, self.c_active, square=True)

    def curvature(self, previous, zero):
        """The `Curvature` at the last `grad` with `zero` (`gradient_at_zero`'s): S from
        `previous` (over these rows; None: formed over I) changed by the rows whose e_i changed;
        None when forming it costs too much."""
        e = np.zeros(self.y.size)
        e[self.active] = self.c_active
        if previous is not None:
            rows = np.flatnonzero(e != previous.e)
            return Curvature(previous.outer + self.rows.outer(rows, e[rows] - previous.e[rows]), e, *zero)
        if not self.rows.outer_pays(self.active):
            return None
        return Curvature(self.rows.outer(self.active, self.c_active), e, *zero)

    def line_search(self, w, s, f, g):
        """(step, f(w + step·s)) with w updated in place: the first of 1, ½, ¼, … (at most 20)
        with f(w + step·s) − f ≤ η·step·gᵀs; (0, f) and w unchanged when none is."""
        xs = self.rows.dot(s)
        sTs, wTs, gTs = float(s @ s), float(w @ s), float(g @ s)
        step = 1.0
        for _ in range(MAX_HALVINGS):
            f_new = self.loss(self.wx + step * xs) + (step * step * sTs + self.wTw) / 2.0 + step * wTs
            if f_new - f <= ARMIJO * step * gTs:
                self.wx += step * xs
                w += step * s
                self.wTw += step * step * sTs + 2 * step * wTs
                return step, f_new
            step *= 0.5
        return 0.0, f


def _conjugate_gradient(problem: _L2Loss, g, precondition):
    """s ≈ −H⁻¹g by CG preconditioned by `precondition` (r ↦ M⁻¹r), stopped when the quadratic
    model Q(s) = gᵀs + ½sᵀHs decreases by less than `cgtol`/k of Q per step at step k
    (LIBLINEAR's rule), on a non-descent, or after max(n, 5) steps."""
    s = np.zeros_like(g)
    r = -g
    z = precondition(r)
    d = z.copy()
    zTr = float(z @ r)
    cgtol = min(EPS_CG, np.sqrt(np.sqrt(zTr)))
    Q = 0.0
    for k in range(1, max(g.size, 5) + 1):
        Hd = problem.hessian_product(d)
        dHd = float(d @ Hd)
        if dHd <= 1e-16:  # 0/0 in the step length
            break
        alpha = zTr / dHd
        s += alpha * d
        r -= alpha * Hd
        new_Q = -0.5 * (float(s @ r) - float(s @ g))
        Q_diff = new_Q - Q
        if new_Q > 0 or Q_diff > 0 or k * Q_diff >= cgtol * new_Q:
            break
        Q = new_Q
        z = precondition(r)
        zTr_new = float(z @ r)
        d = z + (zTr_new / zTr) * d
        zTr = zTr_new
    return s


def without_rows(curvature: Curvature, X, bias: float, e, q) -> Curvature:
    """`curvature`'s sums without the terms of the rows X (x̃_i = (x_i, bias)), theirs e and q
    (rows leaving the fit); its e and q stay to be laid out on the rows that remain."""
    rows = _Rows(X, bias)
    every = np.arange(X.shape[0])
    return Curvature(curvature.outer - rows.outer(every, e), curvature.e, curvature.at_zero - rows.tdot(every, q),
                     curvature.q)


def _hessian(curvature: Curvature):
    """v ↦ H⁻¹v for H = I + 2S (S = `curvature.outer`), by H's Cholesky factor."""
    H = 2.0 * curvature.outer
    H[np.diag_indices_from(H)] += 1.0
    factor = scipy.linalg.cho_factor(H, overwrite_a=True)
    return lambda v: scipy.linalg.cho_solve(factor, v)


def _diagonal(problem):
    """LIBLINEAR's preconditioner: r ↦ r / M, M the Hessian's diagonal mixed with the identity."""
    M = (1 - PRECONDITIONER_MIX) + PRECONDITIONER_MIX * problem.diagonal()
    return lambda r: r / M


def l2_loss_newton(X, bias: float, y, c, stop, epsilon: float = 0.0, regression: bool = False,
                   start=None) -> NewtonResult:
    """Minimise f(w) above over the rows of X (dense float64 or CSR) for targets y (±1 when
    classifying), per-row costs c > 0 and ε (regression); at most `stop.max_iter` Newton steps
    to `stop.tol` (a `linear.Stop`; no seed used), from w = 0, or as `start` (an `Update`)
    says. See the module docstring. BLAS runs on one thread: its products here are over
    vectors or memory-bound, and OpenBLAS's waiting threads spin on the cores of problems
    solved beside."""
    with one_blas_thread():
        problem = _L2Loss(_Rows(X, bias), np.asarray(y, dtype=np.float64), np.asarray(c, dtype=np.float64),
                          float(epsilon), regression)
        result = minimise(problem, X.shape[1] + 1, stop.tol, stop.max_iter, start)
    result.decision = problem.wx
    return result


def minimise(problem, n_weights: int, tol: float, max_iter: int, start=None) -> NewtonResult:
    """The trust-region Newton iterations on `problem` (f, its gradient, Hessian products,
    diagonal and line search, as `_L2Loss` gives them, over rows in memory or in blocks
    elsewhere) from w = 0, or as `start` (an `Update`, in memory) says. The stop is relative to
    the gradient at w = 0 (LIBLINEAR's rule) wherever the iterations start; from a w, the
    conjugate gradient is preconditioned by the Hessian there where its `Curvature` is formed
    (see the module docstring)."""
    curvature = zero = None
    if start is not None:  # a fit that keeps its rows: ∇f(0) from the earlier fit's where it has one
        zero = problem.gradient_at_zero(start.curvature)
    if start is None or start.w is None:
        w = np.zeros(n_weights)
        f = problem.fun(w)
        g = problem.grad(w)
        g_norm0 = float(np.linalg.norm(g))
    else:  # a warm start (an update): the same stop, from w
        g_norm0 = 2.0 * float(np.linalg.norm(zero[0]))
        w = np.array(start.w, dtype=np.float64)
        f = problem.fun(w)
        g = problem.grad(w)
        curvature = problem.curvature(start.curvature, zero)
    precondition = None if curvature is None else _hessian(curvature)
    it = 0
    search = float(np.linalg.norm(g)) > tol * g_norm0
    while it < max_iter and search:
        it += 1
        s = _conjugate_gradient(problem, g, precondition or _diagonal(problem))
        f_old = f
        step, f = problem.line_search(w, s, f, g)
        if step == 0.0:
            break
        g = problem.grad(w)
        if np.linalg.norm(g) <= tol * g_norm0 or f < -1.0e32 or abs(f_old - f) <= 1.0e-12 * abs(f):
            break
    if start is not None:  # the curvature at w, for the next update
        curvature = problem.curvature(curvature, zero)
    return NewtonResult(w, it, f, g, curvature=curvature)
