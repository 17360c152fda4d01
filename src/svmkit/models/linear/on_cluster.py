"""LinearSVC and LinearSVR (the primal Newton, dual=False) fitted on data that stays on a Dask
cluster: the rows stay in their blocks on the workers, which give the sums each Newton step
needs (`solvers.liblinear.newton_blocks`); the problems and attributes are the in-memory fit's."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmkit._validation import class_weights
from svmkit.options import options_of
from svmkit.parallel.cluster import open_cluster, row_partitions
from svmkit.solvers.liblinear.newton_blocks import block_newton

#: The solver numbers of the primal Newton (LIBLINEAR -s 2 and -s 11).
PRIMAL_NEWTON = {"LinearSVC": 2, "LinearSVR": 11}


@dataclass
class OneVsRest:
    """Problem `positive` of a one-vs-rest LinearSVC: t = ±1, C_i = C · class_weight · sample_weight."""

    positive: int
    classes: np.ndarray
    cost: np.ndarray

    def __call__(self, target, weight, rows):
        enc = np.searchsorted(self.classes, target)
        c = self.cost[enc] * (1.0 if weight is None else np.asarray(weight, dtype=np.float64))
        return np.where(enc == self.positive, 1.0, -1.0), c


@dataclass
class Regression:
    """LinearSVR's problem: the targets, C_i = C · sample_weight."""

    C: float

    def __call__(self, target, weight, rows):
        t = np.asarray(target, dtype=np.float64)
        bad = np.flatnonzero(~np.isfinite(t))
        if bad.size:
            raise ValueError(f"y row {rows[bad[0]]} is not finite ({t[bad[0]]!r})")
        return t, self.C * (np.ones(t.size) if weight is None else np.asarray(weight, dtype=np.float64))


def _check(est, **needs):
    est.check_parameters()
    wrong = {name: getattr(est, name) for name, value in needs.items() if getattr(est, name) != value}
    if est.dual not in (False, "auto") or wrong:
        asked = ", ".join(f"{name}={value!r}" for name, value in {**needs, "dual": False}.items())
        raise ValueError(f"a Dask X is fitted by the primal Newton ({asked}), not "
                         f"{', '.join(f'{k}={v!r}' for k, v in {**wrong, 'dual': est.dual}.items())}")


def _solve(est, X, y, sample_weight, forms_of):
    X, y, sample_weight = row_partitions(X, y, sample_weight)
    with open_cluster(options_of(est).scheduler_address) as cluster:
        forms, tols = forms_of(y, sample_weight)
        parts = cluster.partitions(X, y, sample_weight)
        epsilon = float(est.epsilon) if type(est).__name__ == "LinearSVR" else None
        out = [block_newton(cluster, parts, X.shape[1] + 1, est._bias(), form, tol, est._passes(), epsilon)
               for form, tol in zip(forms, tols)]
    est.n_features_in_ = X.shape[1]
    weights, passes, objectives = zip(*out)
    est._store(np.vstack(weights), passes, objectives, PRIMAL_NEWTON[type(est).__name__])
    return est


def fit_linear_svc(est, X, y, sample_weight=None):
    """LinearSVC(dual=False) on a Dask X: one Newton problem per class against the rest."""
    import dask.array as da

    _check(est, penalty="l2", loss="squared_hinge", multi_class="ovr")

    def forms_of(y, sample_weight):
        classes, counts = (np.asarray(v) for v in da.compute(*da.unique(y, return_counts=True)))
        if classes.size < 2:
            raise ValueError(f"LinearSVC needs samples of at least 2 classes in y, got {classes.size}")
        if sample_weight is not None and est.class_weight == "balanced":
            raise ValueError("a Dask X takes class_weight='balanced' without sample_weight")
        est.classes_ = classes
        cost = est.C * class_weights(est.class_weight, classes, np.repeat(np.arange(classes.size), counts))
        positives = [1] if classes.size == 2 else list(range(classes.size))
        n = counts.sum()
        # LIBLINEAR's primal tolerance: tol times the smaller side's share of the rows
        tols = [est.tol * max(min(counts[k], n - counts[k]), 1) / n for k in positives]
        return [OneVsRest(k, classes, cost) for k in positives], tols

    return _solve(est, X, y, sample_weight, forms_of)


def fit_linear_svr(est, X, y, sample_weight=None):
    """LinearSVR(dual=False) on a Dask X."""
    _check(est, loss="squared_epsilon_insensitive")
    _solve(est, X, y, sample_weight, lambda y, w: ([Regression(float(est.C))], [est.tol]))
    est.coef_, est.objective_ = est.coef_[0], est.objective_[0]
    if est.fit_intercept:
        est.intercept_ = est.intercept_[:1]
    return est
