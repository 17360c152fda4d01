"""The one dual QP solver under every SMO-type model.

    min_α ½ αᵀQα + pᵀα   s.t.  yᵀα = Δ,  0 ≤ α_i ≤ U_i  (U_i may be +∞)

with Q_ij = y_i y_j K(x_kidx[i], x_kidx[j]). Δ is set by the starting point, which must be
feasible. The solver knows nothing of models.

Method: a batched working set (Wen et al., JMLR 2018) around LIBSVM's SMO. Each outer step
picks the q/2 most violating variables (half from I_up, half from I_low) and keeps the q/2
picked the step before, as ThunderSVM and oneDAL do: the kept variables, mostly free, are the
partners the new violators need under yᵀα = Δ, so a step makes far more progress than q fresh
violators allow (SVR on cadata: 2,764 steps → 31). It fetches the q kernel rows in one block
(where a solve from α = 0 keeps blocks larger than half the cache: their values among
themselves then computed between their points, the moved variables' rows read in pieces),
runs SMO with second-order selection (Fan, Chen & Lin 2005) and LIBSVM's shrinking on the
q×q subproblem in compiled code, and updates the full gradient with one pass over the rows of
the variables that moved. It stops on the same criterion as LIBSVM: the maximal KKT violation
m(α) − M(α) ≤ tol over all variables. A problem of at most `FULL_BLOCK` variables whose kernel
rows all fit in the row source is one block: that is LIBSVM's SMO, run to tol in compiled code.

The loop (`DualSolve`) is written once for NumPy and CuPy: it runs where the row source keeps
its rows, its compiled loops being the core's (`_loops`) on the host and CUDA kernels
(`_cuda`) on a GPU, both handed a `Block` and its `InnerSettings`. The device's block
solver runs pair updates in chunks with a Newton step on the free variables between them (by a
fresh Cholesky factor each, where the host's keeps one), and no shrinking within a block.

Many small duals are solved in one call into the core (`solve_batch`): the class pairs of a
one-vs-one fit and their calibration folds, when each is small enough that `solve` would solve
it as one block. Each gets the α, pair updates, ρ and objective `solve` gives it alone, from the
same start and the same compiled block solver; only the Python around each solve goes, which
costs more than the solve itself on pairs of a few rows.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, replace

import numpy as np

from svmkit._arrays import SCRATCH, as_float64, as_indices, to_host
from svmkit._core import smo as _smo
from svmkit._threads import one_blas_thread, stop_on_ctrl_c
from svmkit.solvers.smo import _loops
from svmkit.solvers.smo._block import Block, InnerSettings
from svmkit.solvers.smo.row_source import columns

#: Working-set size of the batched solver.
WS_SIZE = 2048
#: Largest problem solved as one block (its Q rows take at most FULL_BLOCK² float32 values).
FULL_BLOCK = 8192
#: A gradient update's cost per variable when its kernel column is gathered, over its cost when
#: every variable's column is read in order (about nine times on w8a): an active set of more
#: than 1/_GATHER_COST of the variables updates them all, and the shrunk ones need no rebuild.
_GATHER_COST = 8
#: Variables whose kernel values among themselves a solve keeps for its blocks, per variable of
#: a block (`_loops.BlockRows`).
_BLOCK_ROWS_PER_BLOCK = 2
#: How many times fewer points than the row source's columns the active variables must have
#: before their rows are computed over their own points only (`DualSolve._narrows`).
_NARROWING = 2
#: Pair updates per variable of the block before an inner solve hands back.
_INNER_PER_VAR = 10
#: With no `max_iter`, the pair updates allowed are max(SAFETY_CAP, SAFETY_PER_VAR · n), as
#: LIBSVM's Solver::Solve caps them (max(10⁷, 100·l)): a tol below what float64 can reach
#: stops there instead of looping forever.
SAFETY_CAP = 10_000_000
SAFETY_PER_VAR = 100
#: With an infinite bound, an α past UNBOUNDED_ALPHA · max(1, max|p| / max K_ii) means the dual
#: is unbounded.
UNBOUNDED_ALPHA = 1e12


class UnboundedDualError(ValueError):
    """The dual has no finite minimiser (α grows without bound); `problem`: its number among
    the problems of one call (`backend.solve_each`), when it was one of several."""

    problem: int | None = None


@dataclass
class DualProblem:
    """The data of one dual QP; `kidx[i]` is the data row of variable i."""

    p: np.ndarray
    y: np.ndarray
    upper: np.ndarray
    kidx: np.ndarray
    nu_mode: bool = False

    @property
    def n(self) -> int:
        return self.p.shape[0]


@dataclass
class DualResult:
    alpha: np.ndarray
    grad: np.ndarray
    rho: float
    objective: float
    n_iter: int
    r: float = 1.0
    converged: bool = True


def _compiled_loops(xp):
    """The module of `inner_smo` and `update_gradient` for arrays of `xp`: the core's loops for
    NumPy, CUDA kernels for CuPy, whose `inner_smo` has no shrinking within the block."""
    if xp is np:
        return _loops
    from svmkit.solvers.smo import _cuda

    return _cuda


def _violations(xp, y, alpha, G, U):
    """−yG with the masks of I_up and I_low."""
    f = -y * G
    pos = y > 0
    up = xp.where(pos, alpha < U, alpha > 0)
    low = xp.where(pos, alpha > 0, alpha < U)
    return f, up, low


def _top(xp, values, k):
    """Indices of the k smallest values (a partition on the host; on a GPU a sort, which CuPy
    does faster than its partition)."""
    if xp is np:
        return np.argpartition(values, k - 1)[:k]
    return xp.argsort(values)[:k]


def _gap_and_pick(xp, f, up, low, k, classes):
    """Maximal violation, the k most violating variables of each side (per y-class in ν mode),
    and the variables that cannot join a violating pair (LIBSVM's shrinking rule)."""
    gap = -np.inf
    picked = xp.zeros(f.shape[0], dtype=bool)
    idle = xp.zeros(f.shape[0], dtype=bool)
    for mask in classes:
        u = xp.flatnonzero(up & mask)
        lo = xp.flatnonzero(low & mask)
        if u.size == 0 or lo.size == 0:
            continue
        fu = f[u]
        fl = f[lo]
        m, M = fu.max(), fl.min()
        gap = max(gap, float(m - M))
        picked[u[_top(xp, -fu, min(k, u.size))]] = True
        picked[lo[_top(xp, fl, min(k, lo.size))]] = True
        idle |= mask & ((up & ~low & (f < M)) | (low & ~up & (f > m)))
    return gap, xp.flatnonzero(picked), idle


def _others(xp, n, idx):
    """The variables of 0 … n − 1 not in idx."""
    mask = xp.ones(n, dtype=bool)
    mask[idx] = False
    return xp.flatnonzero(mask)


def _rho(y, alpha, G, U, sel):
    """LIBSVM's threshold: mean of yG over free variables, else the middle of the feasible
    interval, or its finite end when it is a half-line (LIBSVM's would be ±inf; every ρ of the
    interval is optimal, as for OneClassSVM(nu=1), all of whose α are at their bound)."""
    yG = y[sel] * G[sel]
    a = alpha[sel]
    u = U[sel]
    pos = y[sel] > 0
    at_upper = a >= u
    at_lower = a <= 0
    free = ~at_upper & ~at_lower
    if free.any():
        return float(yG[free].mean())
    ub_mask = (at_upper & ~pos) | (at_lower & pos)
    lb_mask = (at_upper & pos) | (at_lower & ~pos)
    ub = yG[ub_mask].min() if ub_mask.any() else np.inf
    lb = yG[lb_mask].max() if lb_mask.any() else -np.inf
    if np.isinf(ub) or np.isinf(lb):
        return float(lb if np.isinf(ub) else ub)
    return float((ub + lb) / 2)


def _add_kernel_terms(G, rows, problem, coef, nz, cols):
    """G[cols] += Σ_{j in nz} Q[cols, j] coef_j, from the kernel rows of nz in blocks, computed
    where the row source keeps its rows (G and the indices may be on the host)."""
    if cols.size == 0:
        return
    xp = rows.xp
    kidx, y = xp.asarray(problem.kidx), xp.asarray(problem.y, dtype=np.float64)
    coef, nz, there = xp.asarray(coef), xp.asarray(nz), xp.asarray(cols)
    g = xp.asarray(G[cols])
    kidx_cols, y_cols = columns(rows, kidx[there]), y[there]
    step = min(WS_SIZE, rows.capacity)
    loops = _compiled_loops(xp)
    for s in range(0, nz.size, step):
        b = nz[s:s + step]
        store, pos = rows.fetch(kidx[b])
        loops.update_gradient(g, store, pos, y[b] * coef[b], kidx_cols, y_cols)
    G[cols] = to_host(g) if isinstance(G, np.ndarray) else g


def initial_gradients(problem: DualProblem, rows, alpha: np.ndarray, grad0=None):
    """G = Qα + p: `grad0` when given, else from the kernel rows of the nonzero α."""
    xp = rows.xp
    if grad0 is not None:
        return xp.array(grad0, dtype=np.float64)
    G = xp.array(problem.p, dtype=np.float64)
    _add_kernel_terms(G, rows, problem, alpha, xp.flatnonzero(alpha), xp.arange(problem.n))
    return G


def block_size(n: int, n_rows: int, capacity: int, ws_size: int = WS_SIZE, holds_blocks: bool = False) -> int:
    """Variables per outer step: the whole problem when it is small and its `n_rows` kernel
    rows fit the row source's `capacity`; else `ws_size`, at most half the capacity so that
    rows kept from earlier steps can be reused, unless that is under ¾ of `ws_size` where a
    block's values are held apart from its rows (`holds_blocks`: see `_loops.BlockRows`): a
    far smaller block takes far more steps on hard data (160,000 noisy rows, a row source of
    1,638 rows: 1,922 steps of 819 variables, 358 of 2,048), one a little smaller fewer rows."""
    if n <= FULL_BLOCK and n_rows <= capacity:
        return n
    half = capacity // 2
    if holds_blocks and n > ws_size and 4 * half < 3 * ws_size:
        return ws_size
    return max(2, min(ws_size, n, half))


def solved_whole(n: int, n_rows: int, capacity: int) -> bool:
    """Whether a dual of n variables on `n_rows` distinct kernel rows, from a row source of
    `capacity`, is solved as one block (`block_size`), which fetches every row first."""
    return block_size(n, n_rows, capacity) == n


def safety_cap(n: int) -> int:
    """Pair updates allowed to a dual of n variables when no `max_iter` is given (LIBSVM's)."""
    return max(SAFETY_CAP, SAFETY_PER_VAR * n)


#: When set (in the calling thread's context), called as observe(None, tol) when a solve
#: starts and observe(gap, tol) at each of its outer steps with the maximal KKT violation: the
#: command line's progress bar.
gap_observer: ContextVar = ContextVar("gap_observer", default=None)


def solve(problem: DualProblem, rows, alpha0=None, grad0=None, tol=1e-3, max_iter=-1, ws_size=WS_SIZE,
          shrinking=True) -> DualResult:
    """Solve the dual QP; `rows` is a row source (see `row_source`). A start (`alpha0`, and
    its gradient `grad0` when known) must be feasible. A given `grad0` is kept as the solve's
    G, moved only by the variables' moves: no G is recomputed from p, so a start's exact
    float64 G keeps its precision. With an infinite bound, an α past
    UNBOUNDED_ALPHA · max(1, max|p| / max K_ii) means the dual is unbounded. `max_iter`
    bounds the pair updates (None or −1: LIBSVM's cap, `safety_cap`); the result's
    `converged` is False when it stopped the solve. `ws_size`: variables per outer step.

    With `shrinking`, variables that cannot join a violating pair (LIBSVM's rule) leave the
    active set, so selection and gradient updates skip them; their gradients are rebuilt
    when the active problem is solved to 10·tol and again before stopping, so the stopping
    test always covers every variable (`DualSolve._unshrink`). Where the row
    source cannot hold every row, an active set on at most half its points is solved on rows
    over those points alone (`DualSolve._solve_active`).

    The solve runs where the row source keeps its rows (`rows.xp`: NumPy on the host, CuPy
    on a GPU); the result is on the host.
    """
    n = problem.n
    large_blocks = _compiled_loops(rows.xp).BlockRows.holds_blocks and _cold(alpha0)
    settings = SolveSettings(tol=float(tol),
                             budget=safety_cap(n) if max_iter is None or max_iter < 0 else int(max_iter),
                             shrinking=bool(shrinking),
                             q=block_size(n, np.count_nonzero(np.bincount(problem.kidx)), rows.capacity, ws_size,
                                          large_blocks),
                             ws_size=ws_size, large_blocks=large_blocks)
    run = DualSolve(problem, rows, settings, alpha0)
    run.start(grad0)
    run.run()
    return run.result()


#: A start with at most this share's inverse of its variables nonzero counts as cold (`_cold`).
COLD_SHARE = 4


def _cold(alpha0) -> bool:
    """Whether a solve starts with at most 1/COLD_SHARE of its variables nonzero (from α = 0,
    or a cascade's round over many more new variables than support vectors). Only such a
    solve's blocks may outgrow half the row source (`block_size`): from a start near the
    optimum among many free variables (a round over the support and as many violators), a
    block larger than the row source reads most of its moved variables' rows afresh each
    step, where a block of half the row source finds its kept variables' rows held, and the
    larger blocks do not make up for it in fewer steps."""
    return alpha0 is None or COLD_SHARE * np.count_nonzero(alpha0) <= np.size(alpha0)


@dataclass(frozen=True)
class SolveSettings:
    """How one solve runs: to the maximal violation `tol`, within `budget` pair updates, with
    LIBSVM's shrinking or not, in outer steps of `q` variables (the whole problem: one block),
    `block_size`'s choice from the working-set size asked for, `ws_size`, and `large_blocks`
    (whether blocks may outgrow half the row source), by which an active problem on rows of
    its own sizes its blocks (`DualSolve._solve_active`)."""

    tol: float
    budget: int
    shrinking: bool
    q: int
    ws_size: int = WS_SIZE
    large_blocks: bool = False


class DualSolve:
    """One solve of a dual where the row source keeps its rows (`rows.xp`): the problem there,
    α, G = Qα + p, what a rebuild of lagging shrunk gradients starts from (`synced`, see
    `_unshrink`) and the variables whose bound it has counted since it was made, the settings,
    and the pair updates so far. `start` computes the
    gradients, `run` solves, `result` hands it back on the host."""

    def __init__(self, problem: DualProblem, rows, settings: SolveSettings, alpha0=None):
        xp = rows.xp
        n = problem.n
        self.host, self.rows, self.xp, self.settings = problem, rows, xp, settings
        self.loops = _compiled_loops(xp)
        kidx = xp.asarray(problem.kidx, dtype=np.int64)
        self.problem = DualProblem(xp.asarray(problem.p, dtype=np.float64), xp.asarray(problem.y, dtype=np.float64),
                                   xp.asarray(problem.upper, dtype=np.float64), kidx, problem.nu_mode)
        self.diag = xp.asarray(rows.diag)[kidx]
        # where each variable's column sits in the kernel rows (its data row, or its distinct point's)
        self.kcol = columns(rows, kidx)
        # the compiled update reads the columns of every variable in order (`update_gradient`)
        self.in_order = n > 0 and int(self.kcol.max()) - int(self.kcol.min()) + 1 <= _smo.DENSE_SPAN * n
        # whether shrunk variables' gradients lag (`_unshrink` rebuilds them)
        self.stale = False
        self.alpha = xp.zeros(n) if alpha0 is None else xp.array(alpha0, dtype=np.float64)
        U = self.problem.upper
        self.U_infinite = bool(xp.isinf(U).any())
        self.limit = UNBOUNDED_ALPHA
        if self.U_infinite and n:
            # α scales as |p| / K: the bound is relative to the problem's scale (a linear kernel
            # on X × 1e-9 has α near 1e18 where X's has 1)
            scale = max(1.0, float(np.abs(problem.p).max())) / max(float(xp.max(self.diag)), np.finfo(np.float64).tiny)
            self.limit = UNBOUNDED_ALPHA * max(1.0, scale)
        self.G = self.synced = self.counted = None
        self.n_iter, self.converged = 0, True
        self.observe = gap_observer.get()
        self.scratch = None

    def start(self, grad0=None):
        """G at the start (`grad0`, when known), every gradient current."""
        self.G = initial_gradients(self.problem, self.rows, self.alpha, grad0)
        # only a solve in blocks shrinks
        if self.settings.shrinking and self.settings.q < self.problem.n:
            self._sync()

    def _sync(self):
        """Every gradient is current: a rebuild starts from here."""
        self.synced = (self.G.copy(), self.alpha.copy())
        self.counted = self.xp.zeros(self.problem.n, dtype=bool)

    def run(self, starts=True):
        """Solve to the settings' tolerance or budget (α and G updated in place); `starts`:
        whether the observer is told a solve starts (an active problem's solve continues its
        caller's, `_solve_active`)."""
        if starts and self.observe is not None:
            self.observe(None, self.settings.tol)
        q, n = self.settings.q, self.problem.n
        # the host loops' scratch for Q rows (the device gathers its block whole)
        self.scratch = SCRATCH.take((q, q), np.float32) if self.xp is np else None
        try:
            # the Newton steps' BLAS calls are small: helper threads would only spin after each
            # on the core that computes kernel rows
            with one_blas_thread():
                if q == n:
                    self._one_block()
                else:
                    self._in_blocks()
        finally:
            if self.scratch is not None:
                SCRATCH.give(self.scratch)
                self.scratch = None

    def result(self) -> DualResult:
        """α, G, ρ (and r in ν mode), the objective and the pair updates, on the host."""
        problem = self.host
        alpha, G = to_host(self.alpha), to_host(self.G)
        y, U = problem.y.astype(np.float64), problem.upper.astype(np.float64)
        objective = float(0.5 * np.dot(alpha, G + problem.p))
        if problem.nu_mode:
            r1 = _rho(y, alpha, G, U, y > 0)
            r2 = -_rho(y, alpha, G, U, y < 0)
            return DualResult(alpha, G, (r1 - r2) / 2, objective, self.n_iter, r=(r1 + r2) / 2,
                              converged=self.converged)
        return DualResult(alpha, G, _rho(y, alpha, G, U, np.ones(problem.n, dtype=bool)), objective, self.n_iter,
                          converged=self.converged)

    def _observe_gap(self):
        """Report the maximal violation over every variable to the observer, when there is one."""
        if self.observe is None:
            return
        xp, problem = self.xp, self.problem
        y = problem.y
        classes = [y > 0, y < 0] if problem.nu_mode else [xp.ones(y.size, dtype=bool)]
        gap = _gap_and_pick(xp, *_violations(xp, y, self.alpha, self.G, problem.upper), 1, classes)[0]
        self.observe(gap, self.settings.tol)

    def _check_bounded(self):
        if self.U_infinite and float(self.alpha.max()) > self.limit:
            raise UnboundedDualError("the dual is unbounded: no finite solution exists")

    def _inner(self, block: Block, eps: float, cap: int) -> int:
        """The block solve of the compiled loops to `eps`, at most `cap` pair updates; Ctrl-C stops it."""
        with stop_on_ctrl_c() as stop:
            return self.loops.inner_smo(block, InnerSettings(eps, cap, self.problem.nu_mode, self.settings.shrinking,
                                                             self.limit, stop, self.scratch))

    def _one_block(self):
        """LIBSVM's SMO on the whole problem in compiled code."""
        p = self.problem
        self._observe_gap()
        store, pos = self.rows.fetch(p.kidx)
        budget = self.settings.budget
        self.n_iter = self._inner(Block(store, pos, self.kcol, p.y, self.alpha, self.G, p.upper, self.diag),
                                  self.settings.tol, budget)
        self._check_bounded()
        self._observe_gap()
        self.converged = self.n_iter < budget

    def _unshrink(self, act):
        """The gradients of the variables outside `act` rebuilt from (G', α') of the last
        moment every gradient was current (`synced`), G = G' + Q(α − α'); returns every
        variable, the new active set. A variable reaching or leaving its upper bound U in a
        block for the first time since adds ±U times its row, read then for the block's
        update, to G' and to α' (`_count_bounds`), so that the rebuild reads the rows of the
        variables whose free part moved, as LIBSVM's reads the free variables' (Chang & Lin
        2011, §5.1.3); one that flips again waits for the rebuild, which reads its row once,
        where counting every flip passes over every row at each bounce (on noisy data, many).

        LIBSVM rebuilds from Ḡ = Σ_{α_i = U_i} U_i Q_{:,i}, the float32 rows of every bounded
        variable summed since the start: on data with 10⁵ of them that is off by about tol,
        and a warm start's exact G is lost. Only the change since the last rebuild is summed
        here, so G stays as exact as its start."""
        xp, n = self.xp, self.problem.n
        if self.stale:
            self.stale = False
            inactive = _others(xp, n, act)
            G_then, alpha_then = self.synced
            delta = self.alpha - alpha_then
            self.G[inactive] = G_then[inactive]
            _add_kernel_terms(self.G, self.rows, self.problem, delta, xp.flatnonzero(delta), inactive)
        self._sync()
        return xp.arange(n)

    def _count_bounds(self, ws, moved, a_b):
        """Count the variables ws[moved] that reached or left their upper bound U, none counted
        since the last rebuild, into α' of `synced` (see `_unshrink`); returns, per moved
        variable, y·(±U) for those counted, 0 for the others (None when none is), for the
        caller to add their rows' terms to G' from the rows it reads for the block's update.
        An uncounted variable's α' is still its α at the rebuild; a change not counted here is
        left to the rebuild, which reads the row of every variable whose α differs from α'."""
        xp = self.xp
        U, y = self.problem.upper[ws][moved], self.problem.y[ws][moved]
        alpha_then, vars_ = self.synced[1], ws[moved]
        up_now = a_b[moved] >= U
        flip = (up_now != (alpha_then[vars_] >= U)) & ~self.counted[vars_]
        if not flip.any():
            return None
        self.counted[vars_[flip]] = True
        step = xp.where(flip, xp.where(up_now, 1.0, -1.0) * U, 0.0)
        alpha_then[vars_] += step
        return y * step

    def _in_blocks(self):
        """The batched working set: blocks of q variables, each solved by `inner_smo` on the
        kernel values the blocks share (`BlockRows`), with the gradient of the active set
        updated after each."""
        block_rows = self.loops.BlockRows(self.problem.n, min(self.problem.n, _BLOCK_ROWS_PER_BLOCK * self.settings.q))
        try:
            self._blocks(block_rows)
        finally:
            block_rows.release()

    def _blocks(self, block_rows):
        xp, loops, problem = self.xp, self.loops, self.problem
        alpha, G = self.alpha, self.G
        tol, budget, shrinking, q = self.settings.tol, self.settings.budget, self.settings.shrinking, self.settings.q
        y, U, kcol = problem.y, problem.upper, self.kcol
        n = problem.n
        act = xp.arange(n)
        kept = xp.empty(0, dtype=np.int64)
        unshrunk = not shrinking
        while True:
            ya, Ua, Ga = y[act], U[act], G[act]
            classes = [ya > 0, ya < 0] if problem.nu_mode else [xp.ones(act.size, dtype=bool)]
            f, up, low = _violations(xp, ya, alpha[act], Ga, Ua)
            gap, new_local, idle = _gap_and_pick(xp, f, up, low, max(1, q // (4 * len(classes))), classes)
            if self.observe is not None:
                self.observe(gap, tol)
            if not gap > tol or new_local.size == 0:
                if act.size == n:
                    break
                act = self._unshrink(act)
                continue
            if not unshrunk and gap <= 10 * tol:
                unshrunk = True
                act = self._unshrink(act)
                continue
            if self.n_iter >= budget:
                self.converged = False
                break
            if q >= act.size:
                ws_local = xp.arange(act.size)
            else:
                # the kept variables still active join the new ones; a slot past the end takes the rest
                local = xp.full(n, act.size, dtype=np.int64)
                local[act] = xp.arange(act.size)
                chosen = xp.zeros(act.size + 1, dtype=bool)
                chosen[new_local] = True
                chosen[local[kept]] = True
                ws_local = xp.flatnonzero(chosen[:-1])
            kept = act[new_local]
            ws = act[ws_local]
            held = self._fetch_block(ws)
            a_b = alpha[ws]
            whole = ws.size == act.size
            cap = budget - self.n_iter if whole else min(_INNER_PER_VAR * ws.size, budget - self.n_iter)
            eps = tol if whole else max(tol, 0.1 * gap)
            if held is None:
                b_store, b_pos, b_cols = block_rows.take_computed(
                    ws, kcol[ws], lambda a, b: self.rows.exact_cross(problem.kidx[a], problem.kidx[b]))
            else:
                b_store, b_pos, b_cols = block_rows.take(ws, *held, kcol[ws])
            self.n_iter += self._inner(Block(b_store, b_pos, b_cols, y[ws], a_b, G[ws], U[ws], self.diag[ws]), eps, cap)
            delta = a_b - alpha[ws]
            moved = xp.flatnonzero(delta)
            alpha[ws] = a_b
            if moved.size == 0:
                if act.size == n:
                    break
                act = self._unshrink(act)
                continue
            coef = y[ws][moved] * delta[moved]
            every = act.size == n or (self.in_order and _GATHER_COST * act.size >= n)
            bound_terms = self._count_bounds(ws, moved, a_b) if shrinking else None
            for part, store, pos in self._rows_of(ws, moved, held):
                if every:
                    # every gradient, the shrunk ones too, which then need no rebuild
                    loops.update_gradient(G, store, pos, coef[part], kcol, y)
                else:
                    loops.update_gradient(Ga, store, pos, coef[part], kcol[act], ya)
                if bound_terms is not None:
                    terms = bound_terms[part]
                    flipped = xp.flatnonzero(terms)
                    if flipped.size:
                        loops.update_gradient(self.synced[0], store, pos[flipped], terms[flipped], kcol, y)
            if not every:
                G[act] = Ga
                self.stale = True
            self._check_bounded()
            if shrinking:
                idle[ws_local] = False
                act = act[~idle]
                if self._narrows(act):
                    # the row source's memory goes to the active problem's rows: none is held here
                    held = store = None
                    self._solve_active(act, tol if unshrunk else 10 * tol)
        if act.size < n:
            self._unshrink(act)

    def _narrows(self, act) -> bool:
        """Whether the active variables' rows are worth computing over their own points only
        (`_solve_active`): the row source holds too few rows for them all, and their points are
        at most 1/_NARROWING of its columns, so each row costs that much less and the cache
        holds that many more."""
        rows = self.rows
        if (self.xp is not np or rows.capacity >= rows.n or _NARROWING * act.size > rows.n
                or self.n_iter >= self.settings.budget):
            return False
        points = np.unique(self.kcol[act]).size
        return _NARROWING * points <= (rows.n if rows.column_of is None else int(rows.column_of.max()) + 1)

    def _solve_active(self, act, tol):
        """Solve over the active variables alone to `tol`, the others held at their bounds, on
        kernel rows over the active variables' points (`RowSource.narrowed`), as LIBSVM's cache
        computes a shrunk problem's rows over its active set only. The active problem starts
        from G here, which holds the held variables' terms, and its rebuilds add only its own
        variables' moves (`_unshrink`), so its linear term serves only its objective, which is
        not read; the shrunk gradients here lag after it (`stale`)."""
        narrowed = self.rows.narrowed(self.problem.kidx[act])
        if narrowed is None:
            return
        rows, kidx = narrowed
        p = self.problem
        sub = DualProblem(p.p[act], p.y[act], p.upper[act], kidx, p.nu_mode)
        own = self.settings
        settings = replace(own, tol=tol, budget=own.budget - self.n_iter,
                           q=block_size(act.size, rows.n, rows.capacity, own.ws_size, own.large_blocks))
        run = DualSolve(sub, rows, settings, self.alpha[act])
        try:
            run.start(self.G[act])
            run.run(starts=False)
        finally:
            rows.release()
        res = run.result()
        self.n_iter += res.n_iter
        self.alpha[act], self.G[act] = res.alpha, res.grad
        self.stale = True

    def _fetch_block(self, ws):
        """(store, pos) of the kernel rows of the block ws when the row source holds them at
        once, else None (its rows are then read in pieces, `_rows_of`)."""
        if ws.size > self.rows.capacity:
            return None
        store, pos = self.rows.fetch(self.problem.kidx[ws])
        return store, self.xp.asarray(pos)

    def _rows_of(self, ws, which, held=None):
        """(part, store, pos) in turn, the kernel rows of ws[which][part] being rows `pos` of
        `store`: from `held` (ws's rows, `_fetch_block`) when given, else fetched in pieces
        the row source holds, the rows it holds first (so that computing the others evicts
        none of them before they are read)."""
        if held is not None:
            store, pos = held
            yield slice(None), store, pos[which]
            return
        rows = self.problem.kidx[ws[which]]
        order = self.xp.asarray(np.argsort(~self.rows.held(rows), kind="stable"))
        step = self.rows.capacity
        for s in range(0, which.size, step):
            part = order[s:s + step]
            store, pos = self.rows.fetch(rows[part])
            yield part, store, self.xp.asarray(pos)


#: Largest problem of a batch: at most WS_SIZE variables, so that a start's gradient is summed
#: over its rows in one pass, as `initial_gradients` does.
BATCH_MAX = min(WS_SIZE, FULL_BLOCK)


@dataclass
class DualBatch:
    """Problems concatenated: problem k is variables offsets[k] … offsets[k+1] − 1 of `problems`
    (one DualProblem over all of them, their `nu_mode` shared), started from `alpha0` (None: 0)."""

    problems: DualProblem
    offsets: np.ndarray
    alpha0: np.ndarray | None = None

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def owner(self) -> np.ndarray:
        """The problem of every variable."""
        return np.repeat(np.arange(self.sizes.size), self.sizes)


@dataclass
class BatchResult:
    """Per variable α and G = Qα + p; per problem ρ, the objective, the pair updates, r (ν
    mode; else 1) and whether it converged, as `DualResult` holds them."""

    alpha: np.ndarray
    grad: np.ndarray
    rho: np.ndarray
    objective: np.ndarray
    n_iter: np.ndarray
    r: np.ndarray
    converged: np.ndarray


def batchable(sizes: np.ndarray, n_rows: int, rows) -> bool:
    """Whether problems of these sizes, on `n_rows` distinct kernel rows of the row source
    `rows`, may be solved as a batch: every one at most BATCH_MAX variables, with the same
    pair-update cap (`safety_cap`), and every row held at once, on the host."""
    return (rows.xp is np and sizes.size > 0 and int(sizes.max()) <= BATCH_MAX and n_rows <= rows.capacity
            and safety_cap(int(sizes.min())) == safety_cap(int(sizes.max())))


def solve_batch(batch: DualBatch, rows, tol=1e-3, max_iter=-1, shrinking=True) -> BatchResult:
    """Solve every problem of `batch` (see `batchable`; bounds finite) as `solve` solves it
    alone, on threads over the problems."""
    p = batch.problems
    n = p.n
    owner = batch.owner()
    alpha = np.zeros(n) if batch.alpha0 is None else np.array(batch.alpha0, dtype=np.float64)
    _fetch_in_turn(rows, p.kidx, 2 * owner + (alpha <= 0))
    row_ids, inverse = np.unique(p.kidx, return_inverse=True)
    store, pos = rows.fetch(row_ids)
    # each variable's kernel row, and its column in every row (its point's)
    index = np.stack([np.asarray(pos, dtype=np.int64)[inverse], as_indices(columns(rows, p.kidx))])
    values = np.stack([as_float64(p.y), as_float64(p.upper), np.asarray(rows.diag, dtype=np.float64)[p.kidx]])
    grad = np.array(p.p, dtype=np.float64)
    budget = safety_cap(int(batch.sizes.max())) if max_iter is None or max_iter < 0 else int(max_iter)
    settings = _smo.Settings(float(tol), budget, bool(p.nu_mode), bool(shrinking), UNBOUNDED_ALPHA)
    with one_blas_thread(), stop_on_ctrl_c() as stop:
        n_iter = _smo.solve_batch(np.ascontiguousarray(store, dtype=np.float32), as_indices(batch.offsets), index,
                                  values, alpha, grad, settings, stop)
    k = batch.sizes.size
    objective = 0.5 * np.bincount(owner, weights=alpha * (grad + p.p), minlength=k)
    if p.nu_mode:
        r1 = _batch_rho(owner, p, alpha, grad, p.y > 0)
        r2 = -_batch_rho(owner, p, alpha, grad, p.y < 0)
        rho, r = (r1 - r2) / 2, (r1 + r2) / 2
    else:
        rho, r = _batch_rho(owner, p, alpha, grad, np.ones(n, dtype=bool)), np.ones(k)
    return BatchResult(alpha, grad, rho, objective, n_iter, r, n_iter < budget)


def _fetch_in_turn(rows, kidx, step):
    """Fetch the rows `kidx` step by step (each variable's `step`, a number) as solving the
    problems in turn does: each problem the rows of its start's α > 0 (for its gradient), then
    its others. A block of kernel rows' float32 rounding depends on the rows computed with it:
    so each problem reads the very rows it would read solved alone, in turn."""
    order = np.argsort(step, kind="stable")
    ids, first = np.unique(kidx[order], return_index=True)
    adds = step[order][first]
    by_step = np.argsort(adds, kind="stable")
    for group in np.split(ids[by_step], np.flatnonzero(np.diff(adds[by_step])) + 1):
        rows.fetch(group)


def _batch_rho(owner, p: DualProblem, alpha, G, sel) -> np.ndarray:
    """`_rho` of every problem over its variables `sel`: the mean of yG over the free ones,
    else the middle of the feasible interval, or its finite end when it is a half-line."""
    k = int(owner[-1]) + 1 if owner.size else 0
    yG = p.y * G
    at_upper, at_lower = alpha >= p.upper, alpha <= 0
    free = sel & ~at_upper & ~at_lower
    n_free = np.bincount(owner[free], minlength=k)
    mean = np.bincount(owner[free], weights=yG[free], minlength=k) / np.maximum(n_free, 1)
    pos = p.y > 0
    ub = np.full(k, np.inf)
    lb = np.full(k, -np.inf)
    ub_mask = sel & ((at_upper & ~pos) | (at_lower & pos))
    lb_mask = sel & ((at_upper & pos) | (at_lower & ~pos))
    with np.errstate(invalid="ignore"):  # a non-finite G gives a non-finite ρ, which the caller refuses
        np.minimum.at(ub, owner[ub_mask], yG[ub_mask])
        np.maximum.at(lb, owner[lb_mask], yG[lb_mask])
    # a half-line's finite end: (e + e) / 2 is e exactly
    ub = np.where(np.isinf(ub), lb, ub)
    lb = np.where(np.isinf(lb), ub, lb)
    bounded = (ub + lb) / 2
    return np.where(n_free > 0, mean, bounded)


def batch_decisions(rows, batch: DualBatch, coef: np.ndarray, test_kidx: np.ndarray, test_offsets: np.ndarray):
    """Σ_j coef_j K(x_kidx[j], x_test) for the test rows `test_kidx` of each problem (test
    rows of problem k: test_offsets[k] … test_offsets[k+1] − 1) over the problem's variables j,
    from the float32 kernel rows as the solver read them."""
    row_ids, inverse = np.unique(batch.problems.kidx, return_inverse=True)
    store, pos = rows.fetch(row_ids)
    return _smo.batch_decisions(np.ascontiguousarray(store, dtype=np.float32), as_indices(batch.offsets),
                                np.asarray(pos, dtype=np.int64)[inverse], as_float64(coef),
                                as_indices(test_offsets), as_indices(columns(rows, test_kidx)))


#: LIBSVM's sigmoid_train: at most 100 Newton steps, backtracking down to 1e-10, gradient below 1e-5.
SIGMOID = _smo.SigmoidSettings(max_iter=100, min_step=1e-10, eps=1e-5)


def fit_sigmoids(dec: np.ndarray, labels: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(A, B) per problem k (rows of the result) of Platt's sigmoid 1 / (1 + exp(A·f + B)) on
    the decision values dec[offsets[k] … offsets[k+1] − 1] with their labels (> 0 positive):
    Newton steps on H + 1e-12·I with an Armijo backtracking search, on the smoothed targets of
    Lin, Lin & Weng (2007) (LIBSVM's sigmoid_train), on threads over the problems."""
    return _smo.fit_sigmoids(as_float64(dec), as_float64(labels), as_indices(offsets), SIGMOID)
