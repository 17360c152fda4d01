"""The exact cascade SVM: the dual QP of `smo` over data kept in partitions on a cluster.

    min_α ½ αᵀQα + pᵀα   s.t.  yᵀα = 0,  0 ≤ α_i ≤ U_i,   Q_ij = y_i y_j K(x_r(i), x_r(j))

Each partition's variables come from a `form` (the model's dual: form(targets, weights, rows)
→ a `Variables` with α = 0, which is feasible since Δ = 0). Graf et al. (2005): every worker
solves its partition's dual with `smo.solve`; the variables of nonzero α (support vectors, with
their data rows) merge pairwise up a tree, each merge solved from its children's α (feasible:
the sums of yᵀα add up to 0). Then, as chunking methods check a working set's solution
(Joachims 1999; Osuna, Freund & Girosi 1997), every worker keeps the gradient of its
variables against the current expansion, G_i = y_i Σ_j c_j K(x_i, x_j) + p_i with c_j = Σ y α
over row j's variables, from round to round, updated by ΔG_i = y_i Σ_j K(x_i, x_j) Δc_j over
the coefficients that changed; the maximal KKT violation m − M = max_{I_up} −yG − min_{I_low} −yG
over every variable is formed from each worker's part. While it exceeds `tol`, the variables
outside the support beyond M + tol/2 or m − tol/2 join the support's variables in the next
solve, all of them while its memory bound admits them and a few far violators do not stretch
that band (`Problem.admission`); past it, the most violating against the last solve's threshold θ
(the midpoint of its own extremes), as many as the bound admits. The
solve starts from the current α and the gradients the checks found, the support's among them
(`resynced`; `solve_set`'s `current`), and goes to ROUND_TOL × tol, so that the variables left
outside it have room within the global gap. Rows far inside the margin for SHRINK_CHECKS checks are skipped, as
LIBSVM shrinks, and a full check of every row ends the fit. Each round lowers the objective,
and the last solve's support satisfies the stopping rule of the in-memory solve over all
variables: the same optimum, to `tol`.

Partitions are the data's own by default; `kmeans_partitions` regroups the rows by kernel
k-means (DC-SVM, Hsieh, Si & Dhillon 2014), so that each partition's support is closer to the
global one. The solver knows nothing of models: a model gives the kernel, its forms and the
solver's settings, and gets α over the support's variables back.
"""

from __future__ import annotations

import functools
import operator
import time
from dataclasses import dataclass, field, replace

import numpy as np

from svmkit._threads import compiled_threads
from svmkit.solvers.smo.row_source import row_source
from svmkit.solvers.smo.solver import DualProblem, _violations, solve

#: Violators that may join a round's solve whatever its memory bound.
ROUND_VIOLATORS = 2048
#: A round admits at least this share's inverse of the violators (1/16 of them), so that the
#: rounds stay few as the rows grow, and every violator while they are at most this many times
#: the support: on data whose support is a real share of the rows, the rows near the margin
#: outnumber it, and admitting only the most violating of them lets the rest violate again.
ADMIT_SHARE = 16
#: Words a solve holds per variable beside its data row's features (p, y, U, α, G, G and α
#: at the last rebuild, its number and row, the solver's work), for the bound `admitted`
#: puts on a round's solve.
VARIABLE_WORDS = 16
#: A round's solve goes to this share of tol, so that the global gap can close: a solve to tol
#: leaves its own variables' extremes up to tol apart, around the threshold θ, and the
#: variables outside it that violate against θ by up to tol/2 (`violators` admits the rest)
#: then keep the gap above tol round after round (the noisy 1M set: 1.27 tol over 8 rounds,
#: 0 violating at tol against θ, its solves' G exact).
ROUND_TOL = 0.5
#: Checks in a row that find a data row far inside the margin (satisfying its conditions by
#: more than the gap) before later checks skip it.
SHRINK_CHECKS = 2
#: Rows whose kernel products a check computes at once (each block's rows copied).
CHECK_ROWS = 2**14
#: Edges of the bins of log₂(excess / (tol/2)) in which a partition counts its violators (an
#: eighth of an octave each; beyond the last, in the last), so that a round admits the most
#: violating variables of all partitions, not each partition's share.
EXCESS_BINS = np.arange(0, 32.125, 0.125)


@dataclass
class Variables:
    """Dual variables with the data rows they read: `X` the rows (dense), `row` their global
    row numbers; for each variable, `at` its row in X, `gid` a global number (unique over all
    variables of the problem), p, y, U of the dual, its α and, where known, its gradient G
    against the expansion of the solve or check that found it (None: not known)."""

    X: np.ndarray
    row: np.ndarray
    at: np.ndarray
    gid: np.ndarray
    p: np.ndarray
    y: np.ndarray
    U: np.ndarray
    alpha: np.ndarray
    grad: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.gid.size

    def take(self, keep: np.ndarray) -> "Variables":
        """The variables `keep` (a mask or indices) with only the data rows they read."""
        at = self.at[keep]
        used, inverse = np.unique(at, return_inverse=True)
        return Variables(self.X[used], self.row[used], inverse.astype(np.int64), self.gid[keep], self.p[keep],
                         self.y[keep], self.U[keep], self.alpha[keep], None if self.grad is None else self.grad[keep])

    def coefficients(self) -> np.ndarray:
        """c_r = Σ y α over each data row's variables."""
        return np.bincount(self.at, weights=self.y * self.alpha, minlength=self.row.size)


def partition_variables(form, part) -> Variables:
    """The variables of one partition (global rows, X block, targets, weights), α = 0."""
    rows, X, target, weight = part
    bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
    if bad.size:
        raise ValueError(f"X row {rows[bad[0]]} holds a value that is not finite")
    at, gid, p, y, U = form(target, weight, rows)
    used, inverse = np.unique(at, return_inverse=True)
    return Variables(X[used], rows[used], inverse.astype(np.int64), gid, p, y, U, np.zeros(gid.size))


class OnHost:
    """Where a worker solves and checks: its CPU, the compiled core on one thread (the
    cluster's parallelism is across tasks). A model may give another place with the same
    two methods (a worker's GPU: `backend.WorkerDevice`)."""

    def rows(self, kernel, Xk, cache_mb: float):
        """The row source of the training kernel over the solve's rows `Xk`."""
        return row_source(kernel.training_rows(Xk), cache_mb)

    def products(self, centres, X, coef) -> np.ndarray:
        """Σ_j coef_j K(x_r, centres_j) for each row of `X`, in float64."""
        return centres.products(X, coef[:, None])[:, 0]


@dataclass
class Settings:
    """The solver's settings for every solve of the cascade, and where each worker runs
    them (`where`)."""

    tol: float = 1e-3
    max_iter: int = -1
    shrinking: bool = True
    cache_mb: float = 1024.0
    where: object = field(default_factory=OnHost)


@dataclass
class Solved:
    """A solve's support (variables of nonzero α) and what the rounds need of it: ρ, the
    objective, pair updates, its own violation bounds m_S (max over I_up of −yG) and M_S,
    whether it converged, and the variables solved over."""

    support: Variables
    rho: float
    objective: float
    n_iter: int
    m_up: float
    m_low: float
    converged: bool
    n_vars: int
    seconds: float = 0.0


def merge(*sets: Variables) -> Variables:
    """The union of variable sets from different partitions or rounds (each data row once)."""
    rows = np.concatenate([s.row for s in sets])
    unique, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    X = np.concatenate([s.X for s in sets])[first]
    offsets = np.cumsum([0] + [s.row.size for s in sets[:-1]])
    at = np.concatenate([inverse[o + s.at] for o, s in zip(offsets, sets)])

    def cat(name):
        return np.concatenate([getattr(s, name) for s in sets])

    grad = cat("grad") if all(s.grad is not None for s in sets) else None
    return Variables(X, unique, at.astype(np.int64), cat("gid"), cat("p"), cat("y"), cat("U"), cat("alpha"), grad)


def solve_set(kernel, settings: Settings, *parts, threads: int = 1, current: bool = False) -> Solved:
    """Solve the dual over the union of `parts` (each a `Variables`, or a Solved whose support
    is taken) from their α, on this worker; its compiled loops on `threads` threads, at most
    the cores of its machine (the cluster's parallelism is across tasks: a solve that runs
    alone, a round's or the top of the tree, is given the cluster's threads). `current`: the
    parts' gradients are all against one expansion, every nonzero α among the parts (a round:
    the current solve's support and the violators its check found), so the solve starts from
    them instead of recomputing G from the kernel rows of the support, and it goes to
    ROUND_TOL × tol."""
    t0 = time.perf_counter()
    sets = [p.support if isinstance(p, Solved) else p for p in parts]
    v = merge(*sets) if len(sets) > 1 else sets[0]
    if v.n == 0:
        return Solved(v, 0.0, 0.0, 0, -np.inf, np.inf, True, 0, time.perf_counter() - t0)
    with compiled_threads(threads, past_limit=True):
        rows = settings.where.rows(kernel, kernel.training_input(v.X), settings.cache_mb)
        problem = DualProblem(v.p, v.y, v.U, v.at)
        res = solve(problem, rows, alpha0=v.alpha, grad0=v.grad if current else None,
                    tol=settings.tol * (ROUND_TOL if current else 1), max_iter=settings.max_iter,
                    shrinking=settings.shrinking)
    f, up, low = _violations(np, v.y, res.alpha, res.grad, v.U)
    m_up = float(f[up].max()) if up.any() else -np.inf
    m_low = float(f[low].min()) if low.any() else np.inf
    # the support's G stays unknown: a round takes it from the checks (`resynced`)
    v.alpha, v.grad = res.alpha, None
    support = v.take(res.alpha > 0)
    return Solved(support, res.rho, res.objective, res.n_iter, m_up, m_low, res.converged, v.n,
                  time.perf_counter() - t0)


def leaf(kernel, settings: Settings, form, part) -> Solved:
    """The first layer: one partition's dual solved from α = 0."""
    return solve_set(kernel, settings, partition_variables(form, part))


def start_variables(form, part, rows, coef) -> tuple:
    """A start's variables in one partition: `rows` (global, sorted) and their coefficients
    c_r = Σ y α give each variable of those rows α = max(y c_r, 0), so that Σ y α = c_r where
    the row has a variable of c_r's sign (each row of C-SVC has one, of its label; ε-SVR's one
    of each sign). Returns (the variables of α > 0, how many of `rows` the partition holds,
    whether they are feasible here: every such row met by its variables, 0 ≤ α ≤ U)."""
    v = partition_variables(form, part)  # over every row: its checks of X stand in for the leaf's
    held = np.isin(rows, part[0])
    pos = np.minimum(np.searchsorted(rows, v.row), rows.size - 1)
    c = np.where(rows[pos] == v.row, coef[pos], 0.0)
    alpha = np.maximum(v.y * c[v.at], 0.0)
    # a start scaled by C'/C may pass its bound by rounding, never by more
    over = alpha > v.U
    ok = bool(np.all(alpha[over] <= v.U[over] * (1 + 1e-12)))
    v.alpha = np.minimum(alpha, v.U)
    met = np.isclose(v.coefficients(), c, rtol=1e-12, atol=0.0)
    ok = ok and bool(met.all()) and np.count_nonzero(c) == np.count_nonzero(held & (coef != 0))
    return v.take(v.alpha > 0), int(np.count_nonzero(held)), bool(ok)


@dataclass
class Change:
    """What changed from one expansion to the next: the data rows whose coefficient c_r moved
    (their global numbers and data), by how much (Δc), and the new support's variable numbers
    (sorted)."""

    row: np.ndarray
    X: np.ndarray
    delta: np.ndarray
    support: np.ndarray = None


def _summed(changes) -> Change:
    """The changes one after another as one: Δc summed per row, kept where nonzero."""
    if len(changes) == 1:
        return changes[0]
    rows, first, inverse = np.unique(np.concatenate([c.row for c in changes]), return_index=True,
                                     return_inverse=True)
    delta = np.bincount(inverse, weights=np.concatenate([c.delta for c in changes]), minlength=rows.size)
    keep = delta != 0
    return Change(rows[keep], np.concatenate([c.X for c in changes])[first][keep], delta[keep])


def expansion_change(old, new: Solved) -> Change:
    """The change from the expansion of solve `old` (None: the empty one) to that of `new`:
    Δc_r = c_r(new) − c_r(old) over the rows of either support, kept where nonzero."""
    S = new.support
    to = Change(S.row, S.X, S.coefficients())
    if old is not None:
        O = old.support
        to = _summed([Change(O.row, O.X, -O.coefficients()), to])
    keep = to.delta != 0
    return Change(to.row[keep], to.X[keep], to.delta[keep], np.sort(S.gid))


def _products(kernel, where, X, rows, centres, coef) -> np.ndarray:
    """Σ_j coef_j K(x_r, centres_j) for the data rows `rows` of X, CHECK_ROWS rows at a time
    (each block's rows copied, never all of X), computed `where` the worker runs."""
    out = np.zeros(rows.size)
    if rows.size and coef.size:
        expansion = kernel.centres(centres, np.arange(coef.size))
        for s in range(0, rows.size, CHECK_ROWS):
            out[s:s + CHECK_ROWS] = where.products(expansion, X[rows[s:s + CHECK_ROWS]], coef)
    return out


@dataclass
class Checked:
    """One partition's state of the global check, kept on its worker from round to round:
    its variables as `form` gives them (`at` their row among the partition's rows `used`),
    d_r = Σ_j c_j K(x_r, x_j) for each row as of the last check that updated it, the rows
    skipped (far inside the margin: d_r left as it was), the changes they missed (`missed`,
    a skipped row those from `since` on), for how many checks in a row each row was far
    inside, which variables are outside the support (α = 0), and what the last check found: the extremes of f = −yG over the checked variables outside the support,
    the rows checked, the coefficients that changed, the kernel values computed and, once
    screened, its violators at tol/2 counted by their excess (`EXCESS_BINS`) and those at
    tol, against the last solve's threshold (or the global extremes: `screen`), and those
    at tol/2 against the global extremes (`wide`)."""

    used: np.ndarray = field(repr=False)
    at: np.ndarray = field(repr=False)
    gid: np.ndarray = field(repr=False)
    p: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    U: np.ndarray = field(repr=False)
    decision: np.ndarray = field(repr=False)
    skipped: np.ndarray = field(repr=False)
    far: np.ndarray = field(repr=False)
    outside: np.ndarray = field(repr=False)
    since: np.ndarray = field(repr=False)
    missed: list = field(default_factory=list, repr=False)
    m_up: float = -np.inf
    m_low: float = np.inf
    checked: int = 0
    changed: int = 0
    kernel_values: int = 0
    spectrum: np.ndarray = field(default=None, repr=False)
    violating: int = 0
    wide: int = 0

    def gradient(self) -> np.ndarray:
        """G_i = y_i d_r(i) + p_i (stale on skipped rows)."""
        return self.y * self.decision[self.at] + self.p

    def excess(self, m: float, M: float) -> np.ndarray:
        """How far each variable violates the optimality conditions against the global extremes
        m and M (f − M in I_up, m − f in I_low; > 0 violates), or against a threshold θ given
        as both; −inf where not checked: in the support or on a skipped row."""
        f, up, low = _violations(np, self.y, np.zeros(self.y.size), self.gradient(), self.U)
        out = np.maximum(np.where(up, f - M, -np.inf), np.where(low, m - f, -np.inf))
        out[~self.outside | self.skipped[self.at]] = -np.inf
        return out


def update_check(kernel, where, form, part, state, change: Change, full=False) -> Checked:
    """The partition's check after `change`: d_r += Σ K(x_r, x_changed) Δc on the rows not
    skipped, ΔG = y ΔD costing the rows checked × the coefficients changed (state None: a
    first check from d = 0); the skipped rows keep the change among those they missed. With
    `full`, every row is checked: each skipped row gets the changes it missed, summed
    (LIBSVM's gradient reconstruction before it stops, Chang & Lin 2011, §5.1.3, costing the
    coefficients changed since the row was skipped). Then f = −yG and its extremes over the
    variables outside the support (α = 0, so I_up = {y > 0} and I_low = {y < 0}). The kernel
    products are computed `where` the settings place the worker's work."""
    rows, X, target, weight = part
    if state is None:
        at, gid, p, y, U = form(target, weight, rows)
        used, at = np.unique(at, return_inverse=True)
        n = used.size
        state = Checked(used, at.astype(np.int64), gid, p, y, U, np.zeros(n), np.zeros(n, dtype=bool),
                        np.zeros(n, dtype=np.int8), np.ones(gid.size, dtype=bool), np.zeros(n, dtype=np.int32))
    decision, skipped, far = state.decision.copy(), state.skipped, state.far
    missed = (state.missed + [change] if change.delta.size else state.missed) if skipped.any() else []
    fresh = np.flatnonzero(~skipped)
    values = fresh.size * change.delta.size
    with compiled_threads(1):
        decision[fresh] += _products(kernel, where, X, state.used[fresh], change.X, change.delta)
        if full:
            for since in np.unique(state.since[skipped]):
                stale = np.flatnonzero(skipped & (state.since == since))
                if since < len(missed):
                    sum_ = _summed(missed[since:])
                    decision[stale] += _products(kernel, where, X, state.used[stale], sum_.X, sum_.delta)
                    values += stale.size * sum_.delta.size
            skipped, far, missed = np.zeros_like(skipped), np.zeros_like(far), []
    out = Checked(state.used, state.at, state.gid, state.p, state.y, state.U, decision, skipped, far,
                  ~np.isin(state.gid, change.support), state.since, missed, checked=int(np.count_nonzero(~skipped)),
                  changed=int(change.delta.size), kernel_values=int(values))
    f, up, low = _violations(np, out.y, np.zeros(out.y.size), out.gradient(), out.U)
    seen = out.outside & ~skipped[out.at]
    up &= seen
    low &= seen
    out.m_up = float(f[up].max()) if up.any() else -np.inf
    out.m_low = float(f[low].min()) if low.any() else np.inf
    return out


def check_extremes(state: Checked) -> tuple:
    """(m_up, m_low, rows skipped, rows checked, coefficients changed, kernel values computed)
    of a partition's check."""
    return state.m_up, state.m_low, int(state.skipped.sum()), state.checked, state.changed, state.kernel_values


def screen(state: Checked, m: float, M: float, tol: float, theta: float | None) -> Checked:
    """The check with its violators counted: at tol/2 against the global extremes m and M
    (`wide`), and at tol/2 by their excess and at tol against the last solve's threshold θ
    (`Problem.threshold`; None: the extremes); and the rows far inside marked: those whose
    every variable outside the support satisfies its condition against θ by more than the gap
    m − M count one more check; after SHRINK_CHECKS in a row, later checks skip them until the
    full check (LIBSVM's shrinking, Chang & Lin 2011, §5.1, across rounds)."""
    wide = state.excess(m, M)
    excess = wide if theta is None else state.excess(theta, theta)
    half = excess[excess > tol / 2]
    spectrum = np.histogram(np.minimum(np.log2(half / (tol / 2)), EXCESS_BINS[-1]), bins=EXCESS_BINS)[0]
    row = np.full(state.used.size, -np.inf)
    np.maximum.at(row, state.at, np.where(state.outside, excess, np.inf))  # a support row is never far
    far = np.where(state.skipped, state.far, np.where(row < -(m - M), state.far + 1, 0)).astype(np.int8)
    skipped = state.skipped | (far >= SHRINK_CHECKS)
    since = np.where(skipped & ~state.skipped, len(state.missed), state.since).astype(np.int32)
    return Checked(state.used, state.at, state.gid, state.p, state.y, state.U, state.decision, skipped, far,
                   state.outside, since, state.missed, state.m_up, state.m_low,
                   state.checked, state.changed, state.kernel_values, spectrum, int(np.count_nonzero(excess > tol)),
                   int(np.count_nonzero(wide > tol / 2)))


def violating_counts(state: Checked) -> tuple[np.ndarray, int, int]:
    """(the violators at tol/2 counted by excess, the variables violating at tol, those at
    tol/2 against the extremes) of a screened check."""
    return state.spectrum, state.violating, state.wide


def support_gradients(state: Checked) -> tuple[np.ndarray, np.ndarray]:
    """(gid, G) of the partition's variables in the support, G against the expansion its
    check last applied (never skipped: a support row is never far)."""
    inside = ~state.outside
    return state.gid[inside], state.gradient()[inside]


def resynced(solved: Solved, *pieces) -> Solved:
    """The solve with its support's gradients taken from the partitions' checks
    (`support_gradients`): a solve's own G, summed from float32 kernel rows over millions of
    steps and carried from round to round, drifts from its expansion's (after the noisy 1M
    set's first round, a solve over 996,690 variables, its objective was off by 12.6 of
    99,962), while a check's is summed in float64 from the coefficients."""
    gid = np.concatenate([g for g, _ in pieces])
    G = np.concatenate([v for _, v in pieces])
    order = np.argsort(gid)
    pos = order[np.minimum(np.searchsorted(gid, solved.support.gid, sorter=order), gid.size - 1)]
    if not np.array_equal(gid[pos], solved.support.gid):
        raise RuntimeError("a support variable is missing from the partitions' checks")
    return replace(solved, support=replace(solved.support, grad=G[pos]))


def violators(part, state: Checked, against: tuple, tol: float, cap: int) -> Variables:
    """The `cap` variables of the partition outside the support that violate the optimality
    conditions most, of those whose excess against `against` (see `screen`) is beyond tol/2
    (α = 0). Those within tol/2 of violating join too: a solve to `tol` leaves the variables
    outside it violating by little more than tol, which would otherwise come in a few per
    round."""
    excess = state.excess(*against)
    bad = np.flatnonzero(excess > tol / 2)
    if bad.size > cap:
        bad = np.sort(bad[np.argpartition(-excess[bad], cap - 1)[:cap]])
    used, at = np.unique(state.used[state.at[bad]], return_inverse=True)
    return Variables(part[1][used], part[0][used], at.astype(np.int64), state.gid[bad], state.p[bad],
                     state.y[bad], state.U[bad], np.zeros(bad.size), state.gradient()[bad])


def admitted(violating: int, n_sv: int, features: int, settings: Settings) -> int:
    """How many of `violating` variables join a round's solve: ROUND_VIOLATORS, ADMIT_SHARE
    times #SV or 1/ADMIT_SHARE of them, whichever is most, while the solve's variables (#SV +
    them) fit in cache_size with their data rows (VARIABLE_WORDS words beside each row's
    features)."""
    room = int(settings.cache_mb * 2**20 / (8 * (features + VARIABLE_WORDS))) - n_sv
    most = max(ROUND_VIOLATORS, ADMIT_SHARE * n_sv, violating // ADMIT_SHARE)
    return int(min(violating, most, max(ROUND_VIOLATORS, room)))


def allotted(total: int, spectra) -> list:
    """`total` places dealt to the partitions by their violators' counts per bin of excess
    (`spectra`, a row each): every violator of the bins above the one where the count from
    the most violating reaches `total`, and of that bin a share in proportion to each
    partition's count there (the rounding's remainder to the largest)."""
    spectra = np.asarray(spectra, dtype=np.int64)
    if spectra.sum() <= total:
        return spectra.sum(axis=1).tolist()
    from_top = np.cumsum(spectra.sum(axis=0)[::-1])[::-1]
    b = np.flatnonzero(from_top >= total)[-1]
    taken, edge = spectra[:, b + 1:].sum(axis=1), spectra[:, b]
    rest = total - taken.sum()
    share = edge * rest // edge.sum()
    share[np.argsort(-edge)[:rest - share.sum()]] += 1
    return (taken + share).tolist()


def describe(solved: Solved) -> dict:
    """What the client needs of a solve (no data rows)."""
    return {"rho": solved.rho, "objective": solved.objective, "n_iter": solved.n_iter, "m_up": solved.m_up,
            "m_low": solved.m_low, "converged": solved.converged, "n_sv": solved.support.n,
            "n_vars": solved.n_vars, "seconds": solved.seconds, "features": solved.support.X.shape[1]}


def expansion(solved: Solved) -> tuple:
    """(global rows, their data rows, coefficients c_r, and per variable gid, α, U and its
    row's place) of a solve's support."""
    S = solved.support
    return S.row, S.X, S.coefficients(), S.gid, S.alpha, S.U, S.at


@dataclass(eq=False)
class Problem:
    """One dual of the cascade: its form and its state between rounds (the current solve,
    its partitions' checks, the next check's arguments until a round needs it, what the
    client knows)."""

    form: object
    root: object = None
    checks: list = None
    info: dict = None
    done: bool = False
    rounds: int = 0
    n_iter: int = 0
    solved: bool = False
    pending: tuple = None

    def threshold(self, changed: int) -> float | None:
        """What a round ranks the violators by when not all of them fit in its solve: their
        excess against the last solve's threshold θ = (m_S + M_S)/2, the midpoint of its own
        extremes. Against the global extremes m and M, set each by the single most violating
        variable of its side, one far violator ranks every variable of the other side first,
        and a solve over them alone moves the threshold until most rows violate (the
        synthetic 10M set's second round: gap 2.5). None (the extremes) when the solve has no
        variable on one side, or the last round's solve (`solved`) changed no coefficient:
        against the extremes, both ends of every violating pair are admitted, so that the
        next solve moves."""
        m_s, M_s = self.info["m_up"], self.info["m_low"]
        if not (np.isfinite(m_s) and np.isfinite(M_s)) or (self.solved and not changed):
            return None
        return 0.5 * (m_s + M_s)

    def admission(self, m: float, M: float, theta, counts, settings: Settings) -> tuple:
        """(what `violators` measures against, how many join, each partition's share) from
        the partitions' `violating_counts`: every variable at tol/2 against the extremes
        while `admitted` takes them all and they are fewer than ADMIT_SHARE times those at
        tol/2 against θ, else the most violating against θ. Past that share the extremes are
        set by a few far violators, as after a solve over almost every variable, to tol: its
        variables violate by at most tol/2 against θ, and against the extremes the whole
        band near the margin would join the next solve again."""
        wide, spectra = [c[2] for c in counts], [c[0] for c in counts]
        n_wide, near = sum(wide), int(np.sum(spectra))
        stretched = theta is not None and 0 < ADMIT_SHARE * near <= n_wide
        if not stretched and admitted(n_wide, self.info["n_sv"], self.info["features"], settings) == n_wide:
            return (m, M), n_wide, wide
        total = admitted(near, self.info["n_sv"], self.info["features"], settings)
        return (m, M) if theta is None else (theta, theta), total, allotted(total, spectra)


def _sharing(threads: int, tasks: int, current: bool = False):
    """`solve_set` given its share of the cluster's `threads` among `tasks` solves at once
    (`current`: see `solve_set`)."""
    return functools.partial(solve_set, threads=max(1, threads // max(tasks, 1)), current=current)


def _tree(cluster, parts, kernel, settings, k, prob, problems=1):
    """Submit problem k's leaves and merges (of `problems` trees at once); its root's future."""
    level = [cluster.submit(leaf, kernel, settings, prob.form, part, label=f"leaf {k}") for part in parts]
    depth = 0
    while len(level) > 1:
        depth += 1
        merge = _sharing(cluster.threads, problems * (len(level) // 2))
        level = [cluster.submit(merge, kernel, settings, *level[i:i + 2], label=f"merge {k} level {depth}")
                 if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
    return level[0]


def _submit_checks(cluster, parts, kernel, where, prob, change, full=False, label="check"):
    """Every partition's next check of `prob` after `change` (its first when none was made)."""
    old = prob.checks or [None] * len(parts)
    prob.checks = [cluster.submit(update_check, kernel, where, prob.form, part, s, change, full, label=label)
                   for part, s in zip(parts, old)]


def _started(cluster, parts, kernel, settings, problems, starts):
    """Submit, for each problem given a start (`starts[k]`: global rows, sorted, and their
    coefficients c_r; None or no rows: none), the solve over the start's variables from its α, when every
    partition finds the start feasible and every row is held by one of them; leave the others'
    roots None."""
    given = [(p, s[0].size, [cluster.submit(start_variables, p.form, part, *s, label="start variables")
                             for part in parts]) for p, s in zip(problems, starts or ()) if s is not None and s[0].size]
    found = cluster.gather([[cluster.submit(operator.itemgetter(1, 2), piece) for piece in pieces]
                            for *_, pieces in given])
    taken = [(p, pieces) for (p, n, pieces), flags in zip(given, found)
             if all(ok for _, ok in flags) and sum(held for held, _ in flags) == n]
    solve = _sharing(cluster.threads, len(taken))
    for p, pieces in taken:
        p.root = cluster.submit(solve, kernel, settings, *(cluster.submit(operator.itemgetter(0), piece)
                                                         for piece in pieces), label="start")


def cascade(cluster, parts, kernel, forms, settings: Settings, max_rounds=None, on_round=None, starts=None) -> list:
    """Solve the dual of every form in `forms` over the partitions `parts` (futures of
    (rows, X, targets, weights) on the `cluster`): the tree of solves, then rounds of the
    global check until no variable violates at `settings.tol` or `max_rounds` rounds
    (0: the tree's root or the start's solve, an early model). `starts` (per form: global rows, sorted, and their
    coefficients c_r = Σ y α, or None) replaces a form's tree by a solve over the start's
    variables from its α, when the start is feasible on these partitions (`start_variables`);
    the rounds then reach the same optimum from it.

    Each partition's check stays on its worker (`Checked`, a future each round's check
    derives from the last) and costs the rows checked × the coefficients that changed. Rows
    far inside the margin are skipped; a check that finds no violator while rows are skipped
    is followed by a full one, and only a full check ends the fit. The violators join the
    next solve as `Problem.admission` deals them, which starts from the current α and the
    checks' gradients (`resynced`).
    `on_round(k, problem index, info)` is told each round's progress: the violators at tol,
    those admitted, the gap, the rows skipped and checked, the coefficients changed, the
    kernel values the check computed and the round's seconds.
    Returns, per form, (expansion tuple, info dict)."""
    t0 = time.perf_counter()
    problems = [Problem(form) for form in forms]
    _started(cluster, parts, kernel, settings, problems, starts)
    for k, prob in enumerate(problems):
        if prob.root is None:
            prob.root = _tree(cluster, parts, kernel, settings, k, prob, len(problems))
    limit = np.inf if max_rounds is None else max_rounds
    for prob in problems:
        prob.pending = (cluster.submit(expansion_change, None, prob.root), False, "check 1")
    infos = cluster.gather([cluster.submit(describe, p.root) for p in problems])
    for k, (prob, info) in enumerate(zip(problems, infos)):
        prob.info = info
        prob.n_iter = info["n_iter"]
        if on_round is not None:
            on_round(0, k, {**info, "violating": None, "admitted": 0, "gap": None, "skipped": 0,
                            "checked": 0, "changed": 0, "kernel_values": 0, "round_seconds": time.perf_counter() - t0})
    rounds = 0
    while rounds < limit and not all(p.done for p in problems):
        rounds += 1
        t0 = time.perf_counter()
        active = [p for p in problems if not p.done]
        for p in active:  # submitted only now: a check after the last round would keep the workers from the model
            change, full, label = p.pending
            _submit_checks(cluster, parts, kernel, settings.where, p, change, full=full, label=label)
        found = cluster.gather([[cluster.submit(check_extremes, s) for s in p.checks] for p in active])
        picking = []
        for p, extremes in zip(active, found):
            m = max([p.info["m_up"]] + [e[0] for e in extremes])
            M = min([p.info["m_low"]] + [e[1] for e in extremes])
            theta = p.threshold(extremes[0][4])
            p.rounds, p.solved = rounds, False
            p.info.update(gap=m - M, skipped=sum(e[2] for e in extremes), checked=sum(e[3] for e in extremes),
                          changed=extremes[0][4], kernel_values=sum(e[5] for e in extremes), violating=0,
                          admitted=0)
            if m - M > settings.tol:
                p.checks = [cluster.submit(screen, s, m, M, settings.tol, theta) for s in p.checks]
                picking.append((p, m, M, theta))
            elif p.info["skipped"]:
                p.pending = (cluster.submit(expansion_change, p.root, p.root), True, f"check {rounds + 1} full")
            else:
                p.done, p.checks = True, None  # the workers may let its checks go
        counts = cluster.gather([[cluster.submit(violating_counts, s) for s in p.checks] for p, *_ in picking])
        round_solve = _sharing(cluster.threads, len(picking), current=True)
        for (p, m, M, theta), per_part in zip(picking, counts):
            against, total, caps = p.admission(m, M, theta, per_part, settings)
            # no reference kept to the violators' sets: the workers free them once the solve is done
            support = cluster.submit(resynced, p.root, *(cluster.submit(support_gradients, s) for s in p.checks))
            root = cluster.submit(round_solve, kernel, settings, support,
                                  *(cluster.submit(violators, part, s, against, settings.tol, cap)
                                    for part, s, cap in zip(parts, p.checks, caps) if cap),
                                  label=f"round {rounds}")
            change = cluster.submit(expansion_change, p.root, root)
            p.root, p.solved, p.pending = root, True, (change, False, f"check {rounds + 1}")
            p.info.update(violating=sum(c[1] for c in per_part), admitted=total)
        infos = cluster.gather([cluster.submit(describe, p.root) for p, *_ in picking])
        for (p, *_), info in zip(picking, infos):
            p.info.update(info)
            p.n_iter += info["n_iter"]
        if on_round is not None:
            seconds = time.perf_counter() - t0
            for k, p in enumerate(problems):
                if p in active:
                    on_round(rounds, k, {**p.info, "round_seconds": seconds})
    out = cluster.gather([cluster.submit(expansion, p.root) for p in problems])
    return [(e, {**p.info, "n_iter": p.n_iter, "rounds": p.rounds, "optimal": p.done})
            for e, p in zip(out, problems)]


#: Rows of the sample on which kernel k-means runs, and its iterations.
KMEANS_SAMPLE = 2000
KMEANS_ITER = 20


def _sample(part, m, seed):
    """m rows of a partition drawn without replacement."""
    X = part[1]
    pick = np.random.default_rng(seed).choice(X.shape[0], size=min(m, X.shape[0]), replace=False)
    return X[np.sort(pick)]


def _kernel_distances(kernel, X, S, labels, k):
    """‖φ(x) − μ_c‖² − K(x, x) for every row of X and cluster c of the sample S (labels):
    −2/|c| Σ_{j∈c} K(x, s_j) + 1/|c|² Σ_{j,l∈c} K(s_j, s_l) (Dhillon, Guan & Kulis 2004)."""
    K_XS = kernel.block(X, S)
    K_SS = kernel.block(S, S)
    out = np.full((X.shape[0], k), np.inf)
    for c in range(k):
        members = labels == c
        size = members.sum()
        if size:
            out[:, c] = -2.0 * K_XS[:, members].sum(axis=1) / size + K_SS[np.ix_(members, members)].sum() / size**2
    return out


def _split(kernel, part, S, labels, k):
    """The partition's rows dealt to the nearest of the k clusters: a tuple of k partitions."""
    rows, X, *columns = part
    nearest = np.empty(X.shape[0], dtype=np.int64)
    step = max(1, 2**22 // max(S.shape[0], 1))
    with compiled_threads(1):
        for s in range(0, X.shape[0], step):
            nearest[s:s + step] = _kernel_distances(kernel, X[s:s + step], S, labels, k).argmin(axis=1)
    return tuple((rows[nearest == c], X[nearest == c], *(None if col is None else col[nearest == c] for col in columns))
                 for c in range(k))


def _join(c, *splits):
    """Cluster c's rows from every partition's split, as one partition."""
    pieces = [s[c] for s in splits]
    return tuple(None if pieces[0][i] is None else np.concatenate([p[i] for p in pieces])
                 for i in range(len(pieces[0])))


def kmeans_partitions(cluster, parts, kernel, k, seed=None) -> list:
    """Partitions by kernel k-means, as DC-SVM divides (Hsieh, Si & Dhillon 2014): k clusters
    of a sample of KMEANS_SAMPLE rows (Lloyd's iterations in the kernel's feature space), then
    every row dealt to its nearest cluster on its worker, and each cluster's rows joined into
    one partition. Only the sample travels to the client."""
    rng = np.random.default_rng(seed if isinstance(seed, (int, np.integer)) else None)
    per_part = max(1, KMEANS_SAMPLE // max(1, len(parts)))
    S = np.concatenate(cluster.gather([cluster.submit(_sample, p, per_part, int(rng.integers(2**31)))
                                       for p in parts]))
    labels = rng.integers(k, size=S.shape[0])
    for _ in range(KMEANS_ITER):
        new = _kernel_distances(kernel, S, S, labels, k).argmin(axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
    splits = [cluster.submit(_split, kernel, p, S, labels, k, label="kmeans split") for p in parts]
    return [cluster.submit(_join, c, *splits) for c in range(k) if np.any(labels == c)]
