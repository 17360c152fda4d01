"""Starting points for the dual solver from points that may leave its box: clipped into the
box, the equality constraints restored, the gradient corrected, the lowest objective kept.

A point comes with Qα (`q_alpha`) exact for it; the variables that clipping and the restoring
move are few, and only their kernel rows are read to correct Qα.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from svmkit.solvers.smo.solver import DualProblem, DualResult, _add_kernel_terms, solve

#: Share of its room to its bound that one variable may give to restore an equality: it stays
#: free, and the restoring is spread over the variables with the most room.
ROOM_SHARE = 0.5
#: Moves up to this share of a variable's bound are rounding, left out of the correction of Qα.
ROUNDING = 1e-9


def _constraint_groups(problem: DualProblem):
    """The equality constraints as (members, weights): Σ weights·α over members is fixed
    (yᵀα; in ν mode the sum of α over each class)."""
    y = problem.y.astype(np.float64)
    if problem.nu_mode:
        return [(y > 0, np.ones(y.size)), (y < 0, np.ones(y.size))]
    return [(np.ones(y.size, dtype=bool), y)]


def _restore(alpha, raw, U, members, weights) -> bool:
    """Move free members of α so that Σ weights·α over `members` equals its value at `raw`,
    each by at most ROOM_SHARE of its room, the roomiest first; False when they cannot."""
    excess = float(weights[members] @ (alpha[members] - raw[members]))
    if excess == 0.0:
        return True
    # each chosen variable moves by −sign(excess)·weight, lowering the excess by its amount
    direction = -np.sign(excess) * weights
    free = np.flatnonzero(members & (alpha > 0) & (alpha < U))
    room = ROOM_SHARE * np.where(direction[free] > 0, U[free] - alpha[free], alpha[free])
    order = np.argsort(-room)
    free, room = free[order], room[order]
    reach = np.cumsum(room)
    if reach.size == 0 or reach[-1] < abs(excess):
        return False
    last = int(np.searchsorted(reach, abs(excess)))
    amount = room[:last + 1].copy()
    amount[last] -= reach[last] - abs(excess)
    alpha[free[:last + 1]] += direction[free[:last + 1]] * amount
    return True


def feasible_start(problem: DualProblem, rows, alpha: np.ndarray, q_alpha: np.ndarray, lift=None):
    """(α, G) feasible for `problem` from a point `alpha` with Qα = `q_alpha` that meets the
    equality constraints but may leave the box: the variables of the mask `lift` moved to
    their upper bound, clipped into the box, the constraints restored on free variables,
    G = Qα + p corrected from the kernel rows of the moved variables. None when the shapes
    differ or the constraints cannot be restored."""
    U = problem.upper
    if alpha.shape != U.shape:
        return None
    start = alpha.copy()
    if lift is not None:
        start[lift] = U[lift]
    start = np.clip(start, 0.0, U)
    for members, weights in _constraint_groups(problem):
        if not _restore(start, alpha, U, members, weights):
            return None
    G = q_alpha + problem.p
    # a scaled α passes its bound by rounding only; Qα is not corrected for that
    moved = np.flatnonzero(np.abs(start - alpha) > ROUNDING * U)
    _add_kernel_terms(G, rows, problem, start - alpha, moved, np.arange(problem.n))
    return start, G


def best_start(problem: DualProblem, rows, points):
    """The feasible start (α, G) of lowest dual objective ½αᵀ(G + p) made from `points`
    ((α, Qα[, lift]), see `feasible_start`) that meet the first point's equality constraints
    (the first is taken to meet the problem's); None when none can be made."""
    best, best_value = None, np.inf
    groups = _constraint_groups(problem)
    sums = None
    for point in points:
        alpha = point[0]
        if alpha.shape != problem.upper.shape:
            continue
        point_sums = np.array([weights[members] @ alpha[members] for members, weights in groups])
        if sums is None:
            sums = point_sums
        elif np.any(np.abs(point_sums - sums) > ROUNDING * (1.0 + np.abs(alpha).sum())):
            continue
        start = feasible_start(problem, rows, *point)
        if start is None:
            continue
        value = 0.5 * float(start[0] @ (start[1] + problem.p))
        if value < best_value:
            best, best_value = start, value
    return best


@dataclass
class Posed:
    """One dual as a model poses it: the problem, its own feasible start `alpha0` (None: α = 0)
    and `points` to start from instead when one of them can be made feasible (`best_start`;
    a warm start's, from an earlier fit)."""

    problem: DualProblem
    alpha0: np.ndarray | None = None
    points: list | None = None


@dataclass(frozen=True)
class Settings:
    """How every dual of a fit is solved: to LIBSVM's tolerance `tol` on the maximal
    violation, within `max_iter` pair updates (−1: LIBSVM's cap), with shrinking or not."""

    tol: float
    max_iter: int
    shrinking: bool


def solve_posed(posed: Posed, rows, kidx: np.ndarray, settings: Settings) -> DualResult:
    """Solve `posed` on `rows`, its variable i on row kidx[i] of them, from the best of its
    points (`best_start`), else from its own start."""
    problem = replace(posed.problem, kidx=kidx)
    picked = best_start(problem, rows, posed.points) if posed.points else None
    alpha0, grad0 = picked if picked is not None else (posed.alpha0, None)
    return solve(problem, rows, alpha0=alpha0, grad0=grad0, tol=settings.tol, max_iter=settings.max_iter,
                 shrinking=settings.shrinking)
