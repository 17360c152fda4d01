"""SVC and SVR fitted on data that stays on a Dask cluster, by the exact cascade
(`solvers.smo.cascade`): each model gives its duals as forms over a partition's rows — C-SVC's per
class pair (one-vs-one; Cortes & Vapnik 1995), ε-SVR's over (α, α*) (Smola & Schölkopf 2004) — and stores the
support the cascade returns as the in-memory fit stores its own."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from svmkit._validation import check_params, class_weights
from svmkit.backend import on_workers
from svmkit.exceptions import warn
from svmkit.kernels.kinds import DotKernel, kernel_kind, make_kernel
from svmkit.models.smo import formulations
from svmkit.options import options_of
from svmkit.parallel.cluster import open_cluster, row_partitions
from svmkit.solvers.smo.cascade import Settings, cascade, kmeans_partitions

def _weights(weight, n):
    return np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)


def _check_targets(target, rows):
    bad = np.flatnonzero(~np.isfinite(target))
    if bad.size:
        raise ValueError(f"y row {rows[bad[0]]} is not finite ({target[bad[0]]!r})")


@dataclass
class PairForm:
    """C-SVC's dual of class pair (a, b) over a partition's rows of positive weight, a's with
    y = +1; U_i = C · class_weight[y_i] · sample_weight_i."""

    a: int
    b: int
    C: float
    classes: np.ndarray
    class_weight: np.ndarray

    def __call__(self, target, weight, rows):
        enc = np.searchsorted(self.classes, target)
        w = _weights(weight, enc.size) * self.class_weight[enc]
        sel = np.flatnonzero(((enc == self.a) | (enc == self.b)) & (w > 0))
        problem, _ = formulations.c_svc(np.where(enc[sel] == self.a, 1.0, -1.0), self.C * w[sel], sel)
        return problem.kidx, rows[sel], problem.p, problem.y, problem.upper


@dataclass
class TubeForm:
    """ε-SVR's dual over (α, α*) of a partition's rows of positive weight; variable numbers
    2r and 2r + 1 for row r."""

    C: float
    epsilon: float

    def __call__(self, target, weight, rows):
        target = np.asarray(target, dtype=np.float64)
        _check_targets(target, rows)
        w = _weights(weight, target.size)
        sel = np.flatnonzero(w > 0)
        problem, _ = formulations.epsilon_svr(target[sel], self.C * w[sel], self.epsilon, sel)
        gid = np.concatenate([2 * rows[sel], 2 * rows[sel] + 1])
        return problem.kidx, gid, problem.p, problem.y, problem.upper


def _check(est):
    """The parameters, and what a cascade fit cannot do, before any work."""
    check_params(est, est._constraints)
    if kernel_kind(est.kernel) is not DotKernel:
        raise ValueError(f"a Dask X is fitted with the kernels 'linear', 'poly', 'rbf' and 'sigmoid', "
                         f"not kernel={est.kernel!r}")
    if est.probability:
        raise ValueError("a Dask X is fitted with probability=False: the calibration's cross-validation "
                         "runs in memory")


def _previous(est, X):
    """What a warm start continues: the fitted support_, its coefficients in LIBSVM's layout
    times C'/C (this C over the fit's), n_support_ and classes_ (None for SVR), when
    `warm_start` is set and the model was fitted on data of X's shape; else None."""
    if not est.warm_start or getattr(est, "shape_fit_", None) != tuple(X.shape) or not hasattr(est, "_dual_coef_"):
        return None
    scale = float(est.C) / getattr(est, "_warm_params", {}).get("C", est.C)
    return est.support_, scale * np.asarray(est._dual_coef_), est.n_support_, getattr(est, "classes_", None)


def _pair_starts(previous, classes):
    """Each class pair's start for `cascade`: its support rows, sorted, and their y α there
    (LIBSVM's layout: for pair (a, b), row b − 1 holds class a's and row a class b's); None
    when the classes differ."""
    support, coef, n_support, fitted = previous
    if fitted is None or not np.array_equal(fitted, classes) or n_support.size != classes.size:
        return None
    cls = np.repeat(np.arange(classes.size), n_support)
    starts = []
    for a, b in formulations.class_pairs(classes.size):
        rows = np.concatenate([support[cls == a], support[cls == b]])
        c = np.concatenate([coef[b - 1, cls == a], coef[a, cls == b]])
        order = np.argsort(rows)
        keep = c[order] != 0
        starts.append((rows[order][keep], c[order][keep]))
    return starts


def _run(est, X, y, sample_weight, forms_of, starts_of):
    """Check, open the cluster, partition, resolve the kernel there, run the cascade over
    the forms `forms_of(y, sample_weight)` gives, from `starts_of(previous fit)` with
    `warm_start`. Returns (X, the cascade's results)."""
    _check(est)
    options = options_of(est)
    X, y, sample_weight = row_partitions(X, y, sample_weight)
    previous = _previous(est, X)
    history = []

    def on_round(k, problem, info):
        history.append({"round": k, "problem": problem, **info})
        if est.verbose:
            check = "" if info["gap"] is None else (
                f", gap {info['gap']:.3g}, {info['violating']} violating, {info['admitted']} admitted, "
                f"{info['skipped']} rows skipped")
            print(f"[cascade] round {k}, problem {problem}: #SV = {info['n_sv']}{check}, "
                  f"obj = {info['objective']:f}, {info['round_seconds']:.2f} s")

    with open_cluster(options.scheduler_address) as cluster:
        forms = forms_of(y, sample_weight)
        starts = None if previous is None else starts_of(previous)
        kernel = make_kernel(est.kernel, X, est.gamma, est.degree, est.coef0)
        parts = cluster.partitions(X, y, sample_weight)
        if options.partitioning == "kmeans":
            parts = kmeans_partitions(cluster, parts, kernel, len(parts), est.random_state)
        settings = Settings(est.tol, est.max_iter, est.shrinking, est.cache_size, on_workers(options.device))
        results = cascade(cluster, parts, kernel, forms, settings, options.max_rounds, on_round, starts)
        est.cascade_timings_ = list(cluster.timings)
    est.cascade_history_ = history
    est.gamma_ = kernel.gamma
    est.n_features_in_ = X.shape[1]
    est.shape_fit_ = X.shape
    return X, results


def _store(est, X, results, support, X_support, n_support, dual_coef, free, bounded):
    """The fitted attributes the in-memory fit sets, from the cascade's problems."""
    est.support_ = np.asarray(support, dtype=np.int32)
    est.support_vectors_ = X_support
    est.n_support_ = np.asarray(n_support, dtype=np.int32)
    est._dual_coef_ = dual_coef
    est._intercept_ = -np.array([info["rho"] for _, info in results])
    est.objective_ = np.array([info["objective"] for _, info in results])
    est.n_iter_ = np.array([info["n_iter"] for _, info in results], dtype=np.int32)
    est.cascade_rounds_ = np.array([info["rounds"] for _, info in results], dtype=np.int32)
    est.free_support_ = np.unique(free)
    est.bounded_support_ = np.setdiff1d(np.unique(bounded), est.free_support_)
    est.loo_bound_ = est.support_.size / X.shape[0]
    optimal = all(info["optimal"] for _, info in results)
    est.fit_status_ = int(not optimal)
    max_rounds = options_of(est).max_rounds
    if not optimal and max_rounds != 0:
        warn(f"the cascade stopped after max_rounds={max_rounds} rounds with variables still "
             f"violating the optimality conditions at tol={est.tol}", ConvergenceWarning)
    est.probA_, est.probB_ = np.empty(0), np.empty(0)
    # a later warm start scales from this C; an in-memory one or an update has no problems of
    # this fit to start from, and must not take an earlier in-memory fit's
    est._warm_params, est._warm_key_, est._problem_fits = {"C": est.C}, None, None
    est._prepared = est._prediction_kernel()


def _bounds(e):
    """(free rows, bounded rows) of a cascade expansion (rows, X, coef, gid, α, U, at)."""
    rows, _, _, _, alpha, U, at = e
    at_bound = np.bincount(at, weights=alpha >= U, minlength=rows.size) > 0
    moved = np.bincount(at, weights=alpha > 0, minlength=rows.size) > 0
    return rows[moved & ~at_bound], rows[at_bound]


def fit_classifier(est, X, y, sample_weight=None):
    """SVC on a Dask X (array or dataframe) and y: a cascade per class pair."""
    import dask.array as da

    def forms_of(y, sample_weight):
        classes, counts = (np.asarray(v) for v in da.compute(*da.unique(y, return_counts=True)))
        if classes.size < 2:
            raise ValueError(f"{type(est).__name__} needs samples of at least 2 classes in y, got {classes.size}")
        est.classes_ = classes
        est.class_weight_ = class_weights(est.class_weight, classes, np.repeat(np.arange(classes.size), counts))
        return [PairForm(a, b, float(est.C), classes, est.class_weight_)
                for a, b in formulations.class_pairs(classes.size)]

    X, results = _run(est, X, y, sample_weight, forms_of, lambda previous: _pair_starts(previous, est.classes_))
    # every pair's support rows once, with their class (the pair's first class where y α > 0)
    pairs = formulations.class_pairs(est.classes_.size)
    rows = np.unique(np.concatenate([e[0] for e, _ in results]))
    X_rows = np.empty((rows.size, X.shape[1]))
    cls = np.empty(rows.size, dtype=np.int64)
    indices, coefs = [], []
    for (a, b), (e, _) in zip(pairs, results):
        pos = np.searchsorted(rows, e[0])
        X_rows[pos] = e[1]
        cls[pos] = np.where(e[2] > 0, a, b)
        keep = e[2] != 0
        indices.append(pos[keep])
        coefs.append(e[2][keep])
    pair = np.repeat(np.arange(len(indices)), [i.size for i in indices])
    support, n_support, dual_coef = formulations.assemble_pairs(np.concatenate(indices), np.concatenate(coefs), pair, cls,
                                                 est.classes_.size)
    free, bounded = zip(*(_bounds(e) for e, _ in results))
    _store(est, X, results, rows[support], X_rows[support], n_support, dual_coef, np.concatenate(free),
           np.concatenate(bounded))
    return est


def fit_regressor(est, X, y, sample_weight=None):
    """SVR on a Dask X (array or dataframe) and y: one cascade over the 2N variables."""
    def starts_of(previous):
        support, coef, *_ = previous
        order = np.argsort(support)
        return [(support[order], coef[0, order])]

    X, results = _run(est, X, y, sample_weight, lambda y, w: [TubeForm(float(est.C), float(est.epsilon))], starts_of)
    ((e, info),) = results
    rows, X_rows, coef = e[:3]
    keep = coef != 0
    free, bounded = _bounds(e)
    _store(est, X, results, rows[keep], X_rows[keep], [int(keep.sum())], coef[keep][None, :], free, bounded)
    est.objective_, est.n_iter_ = float(est.objective_[0]), int(est.n_iter_[0])
    est.on_tube_ = est.free_support_
    est.outside_tube_ = est.bounded_support_
    return est
