"""The exact cascade SVM: the dual QP of `smo` over data kept in partitions on a cluster.

    min_α ½ αᵀQα + pᵀα   s.t.  yᵀα = 0,  0 ≤ α_i ≤ U_i,   Q_ij = y_i y_j K(x_r(i), x_r(j))

Each partition's variables come from a `form` (the model's dual: form(targets, weights, rows)
→ a `Variables` with α = 0, which is feasible since Δ = 0). Graf et al. (2005): every worker
solves its partition's dual with `smo.solve`; the variables of nonzero α (support vectors, with
their data rows) merge pairwise up a tree, each merge solved from its children's α (feasible:
the sums of yᵀα add up to 0). Then, as chunking methods check a working set's solution
(Joachims 1999; Osuna, Freund & Girosi 1997), every worker computes the gradient of its
variables against the current expansion, G_i = y_i Σ_j c_j K(x_i, x_j) + p_i with c_j = Σ y α
over row j's variables — a blockwise kernel product — and the maximal KKT violation
m − M = max_{I_up} −yG − min_{I_low} −yG over every variable is formed from each worker's
part. While it exceeds `tol`, the most violating variables (those outside the support beyond
M + tol/2 or m − tol/2, at most the support's size or ROUND_VIOLATORS) join the support's
variables in the next solve, which starts from the current α. Each round lowers the objective, and the last solve's support satisfies the
stopping rule of the in-memory solve over all variables: the same optimum, to `tol`.

Partitions are the data's own by default; `kmeans_partitions` regroups the rows by kernel
k-means (DC-SVM, Hsieh, Si & Dhillon 2014), so that each partition's support is closer to the
global one. The solver knows nothing of models: a model gives the kernel, its forms and the
solver's settings, and gets α over the support's variables back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from svmkit._threads import compiled_threads
from svmkit.solvers.smo.row_source import row_source
from svmkit.solvers.smo.solver import DualProblem, _violations, solve

#: Violators that join a round's solve at most: this many, or as many as the support holds when
#: more (fewer rounds, each of whose checks costs a pass over every row).
ROUND_VIOLATORS = 2048


@dataclass
class Variables:
    """Dual variables with the data rows they read: `X` the rows (dense), `row` their global
    row numbers; for each variable, `at` its row in X, `gid` a global number (unique over all
    variables of the problem), p, y, U of the dual and its α."""

    X: np.ndarray
    row: np.ndarray
    at: np.ndarray
    gid: np.ndarray
    p: np.ndarray
    y: np.ndarray
    U: np.ndarray
    alpha: np.ndarray

    @property
    def n(self) -> int:
        return self.gid.size

    def take(self, keep: np.ndarray) -> "Variables":
        """The variables `keep` (a mask or indices) with only the data rows they read."""
        at = self.at[keep]
        used, inverse = np.unique(at, return_inverse=True)
        return Variables(self.X[used], self.row[used], inverse.astype(np.int64), self.gid[keep], self.p[keep],
                         self.y[keep], self.U[keep], self.alpha[keep])

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


@dataclass
class Settings:
    """The solver's settings for every solve of the cascade."""

    tol: float = 1e-3
    max_iter: int = -1
    shrinking: bool = True
    cache_mb: float = 1024.0


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

    return Variables(X, unique, at.astype(np.int64), cat("gid"), cat("p"), cat("y"), cat("U"), cat("alpha"))


def solve_set(kernel, settings: Settings, *parts) -> Solved:
    """Solve the dual over the union of `parts` (each a `Variables`, or a Solved whose support
    is taken) from their α, on this worker; its compiled loops on one thread (the cluster's
    parallelism is across tasks)."""
    t0 = time.perf_counter()
    sets = [p.support if isinstance(p, Solved) else p for p in parts]
    v = merge(*sets) if len(sets) > 1 else sets[0]
    if v.n == 0:
        return Solved(v, 0.0, 0.0, 0, -np.inf, np.inf, True, 0, time.perf_counter() - t0)
    with compiled_threads(1):
        Xk = kernel.training_input(v.X)
        rows = row_source(kernel.training_rows(Xk), settings.cache_mb)
        problem = DualProblem(v.p, v.y, v.U, v.at)
        res = solve(problem, rows, alpha0=v.alpha, tol=settings.tol, max_iter=settings.max_iter,
                    shrinking=settings.shrinking)
    f, up, low = _violations(np, v.y, res.alpha, res.grad, v.U)
    m_up = float(f[up].max()) if up.any() else -np.inf
    m_low = float(f[low].min()) if low.any() else np.inf
    v.alpha = res.alpha
    support = v.take(res.alpha > 0)
    return Solved(support, res.rho, res.objective, res.n_iter, m_up, m_low, res.converged, v.n,
                  time.perf_counter() - t0)


def leaf(kernel, settings: Settings, form, part) -> Solved:
    """The first layer: one partition's dual solved from α = 0."""
    return solve_set(kernel, settings, partition_variables(form, part))


@dataclass
class Check:
    """One partition's part of the optimality check: the violation values f = −yG of its
    variables outside the support, which of them are in I_up and I_low (α = 0 there), and the
    partition's extremes."""

    f: np.ndarray = field(repr=False)
    up: np.ndarray = field(repr=False)
    low: np.ndarray = field(repr=False)
    m_up: float = -np.inf
    m_low: float = np.inf


def check_partition(kernel, form, part, solved: Solved) -> Check:
    """f = −y_i G_i = −y_i (y_i Σ_j c_j K(x_i, x_j) + p_i) over the partition's variables
    outside the current support (α = 0, so I_up = {y > 0, U > 0} and I_low = {y < 0, U > 0})."""
    v = partition_variables(form, part)
    S = solved.support
    outside = ~np.isin(v.gid, S.gid)
    with compiled_threads(1):
        decision = np.zeros(v.row.size)
        if S.n:
            coef = S.coefficients()
            keep = coef != 0
            decision = kernel.centres(S.X[keep], np.flatnonzero(keep)).products(v.X, coef[keep][:, None])[:, 0]
    G = v.y * decision[v.at] + v.p
    f, up, low = _violations(np, v.y, np.zeros(v.n), G, v.U)
    up &= outside
    low &= outside
    return Check(f, up, low, float(f[up].max()) if up.any() else -np.inf,
                 float(f[low].min()) if low.any() else np.inf)


def check_extremes(check: Check) -> tuple[float, float, int, int]:
    """(m_up, m_low, #I_up, #I_low) of a partition's check, for the client."""
    return check.m_up, check.m_low, int(check.up.sum()), int(check.low.sum())


def violators(form, part, check: Check, m: float, M: float, tol: float, cap: int) -> tuple[Variables, int]:
    """The partition's variables outside the support that violate the optimality conditions
    at tol/2 against the global extremes (f > M + tol/2 in I_up, f < m − tol/2 in I_low), the
    `cap` most violating of them (α = 0), and how many violate at `tol`. Those within tol/2 of
    violating join too: a solve to `tol` leaves the variables outside it violating by little
    more than tol, which would otherwise come in a few per round."""
    excess = np.maximum(np.where(check.up, check.f - M, -np.inf), np.where(check.low, m - check.f, -np.inf))
    bad = np.flatnonzero(excess > tol / 2)
    if bad.size > cap:
        bad = bad[np.argpartition(-excess[bad], cap - 1)[:cap]]
    v = partition_variables(form, part)
    return v.take(np.sort(bad)), int(np.count_nonzero(excess > tol))


def picked(violating):
    """The variables of a `violators` result."""
    return violating[0]


def violating_count(violating):
    """How many variables of a `violators` result's partition violate at tol."""
    return violating[1]


def describe(solved: Solved) -> dict:
    """What the client needs of a solve (no data rows)."""
    return {"rho": solved.rho, "objective": solved.objective, "n_iter": solved.n_iter, "m_up": solved.m_up,
            "m_low": solved.m_low, "converged": solved.converged, "n_sv": solved.support.n,
            "n_vars": solved.n_vars, "seconds": solved.seconds}


def expansion(solved: Solved) -> tuple:
    """(global rows, their data rows, coefficients c_r, and per variable gid, α, U and its
    row's place) of a solve's support."""
    S = solved.support
    return S.row, S.X, S.coefficients(), S.gid, S.alpha, S.U, S.at


@dataclass
class Problem:
    """One dual of the cascade: its form and its state between rounds."""

    form: object
    root: object = None
    info: dict = None
    done: bool = False
    rounds: int = 0
    n_iter: int = 0


def cascade(cluster, parts, kernel, forms, settings: Settings, max_rounds=None, on_round=None) -> list:
    """Solve the dual of every form in `forms` over the partitions `parts` (futures of
    (rows, X, targets, weights) on the `cluster`): the tree of solves, then rounds of the
    global check until no variable violates at `settings.tol` or `max_rounds` rounds
    (0: the tree's root, an early model). `on_round(k, problem index, info)` is told each
    round's progress. Returns, per form, (expansion tuple, info dict)."""
    problems = [Problem(form) for form in forms]
    # the tree: every problem's leaves, then its merges, all submitted at once
    for k, prob in enumerate(problems):
        level = [cluster.submit(leaf, kernel, settings, prob.form, part, label=f"leaf {k}") for part in parts]
        depth = 0
        while len(level) > 1:
            depth += 1
            level = [cluster.submit(solve_set, kernel, settings, *level[i:i + 2], label=f"merge {k} level {depth}")
                     if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
        prob.root = level[0]
    infos = cluster.gather([cluster.submit(describe, p.root) for p in problems])
    for k, (prob, info) in enumerate(zip(problems, infos)):
        prob.info = info
        prob.n_iter = info["n_iter"]
        if on_round is not None:
            on_round(0, k, {**info, "violating": None})
    limit = np.inf if max_rounds is None else max_rounds
    rounds = 0
    while rounds < limit and not all(p.done for p in problems):
        rounds += 1
        active = [p for p in problems if not p.done]
        checks = {id(p): [cluster.submit(check_partition, kernel, p.form, part, p.root, label="check")
                          for part in parts] for p in active}
        extremes = {id(p): cluster.gather([cluster.submit(check_extremes, c) for c in checks[id(p)]])
                    for p in active}
        picks = {}
        for p in active:
            m = max([p.info["m_up"]] + [e[0] for e in extremes[id(p)]])
            M = min([p.info["m_low"]] + [e[1] for e in extremes[id(p)]])
            p.info["gap"] = m - M
            p.rounds = rounds
            if not m - M > settings.tol:
                p.done = True
                continue
            cap = max(ROUND_VIOLATORS, p.info["n_sv"]) // len(parts) + 1
            picks[id(p)] = [cluster.submit(violators, p.form, part, c, m, M, settings.tol, cap)
                            for part, c in zip(parts, checks[id(p)])]
        for k, p in enumerate(problems):
            if id(p) not in picks:
                if id(p) in checks and on_round is not None:
                    on_round(rounds, k, {**p.info, "violating": 0})
                continue
            counts = cluster.gather([cluster.submit(violating_count, f) for f in picks[id(p)]])
            sets = [cluster.submit(picked, f) for f in picks[id(p)]]
            p.root = cluster.submit(solve_set, kernel, settings, p.root, *sets, label=f"round {k}")
            p.info = cluster.gather(cluster.submit(describe, p.root))
            p.n_iter += p.info["n_iter"]
            if on_round is not None:
                on_round(rounds, k, {**p.info, "violating": int(sum(counts))})
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
