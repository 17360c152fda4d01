"""Many small duals solved in one call into the core: the class pairs of a one-vs-one fit and
their calibration folds, when each is small enough that `smo.solve` would solve it as one block.

Each problem is the solver's (`smo.DualProblem`), solved from the same start by the same
compiled block solver (LIBSVM's SMO with second-order selection, Fan, Chen & Lin 2005), so it
gets the α, pair updates, ρ and objective `smo.solve` gives it alone; only the Python around
each solve goes, which costs more than the solve itself on pairs of a few rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmkit._arrays import as_float64, as_indices
from svmkit._core import smo as _smo
from svmkit._threads import one_blas_thread, stop_on_ctrl_c
from svmkit.solvers.row_source import columns
from svmkit.solvers.smo import FULL_BLOCK, UNBOUNDED_ALPHA, WS_SIZE, DualProblem, safety_cap

#: Largest problem of a batch: at most WS_SIZE variables, so that a start's gradient is summed
#: over its rows in one pass, as `smo.initial_gradients` does.
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
    mode; else 1) and whether it converged, as `smo.DualResult` holds them."""

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
    pair-update cap (`smo.safety_cap`), and every row held at once, on the host."""
    return (rows.xp is np and sizes.size > 0 and int(sizes.max()) <= BATCH_MAX and n_rows <= rows.capacity
            and safety_cap(int(sizes.min())) == safety_cap(int(sizes.max())))


def solve_batch(batch: DualBatch, rows, tol=1e-3, max_iter=-1, shrinking=True) -> BatchResult:
    """Solve every problem of `batch` (see `batchable`; bounds finite) as `smo.solve` solves it
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
        r1 = _rho(owner, p, alpha, grad, p.y > 0)
        r2 = -_rho(owner, p, alpha, grad, p.y < 0)
        rho, r = (r1 - r2) / 2, (r1 + r2) / 2
    else:
        rho, r = _rho(owner, p, alpha, grad, np.ones(n, dtype=bool)), np.ones(k)
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


def _rho(owner, p: DualProblem, alpha, G, sel) -> np.ndarray:
    """`smo._rho` of every problem over its variables `sel`: the mean of yG over the free ones,
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
