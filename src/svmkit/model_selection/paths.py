"""The fits of one kernel group: every cell of a grid that shares a kernel (the same kernel,
γ, degree and coef0), on a set of folds.

The kernel rows are computed once per fold set and shared by every cell and fold: a fold's
problem is a subset of the rows of the full-data kernel, reached through `row_index`, and its
test points' decision values are read from the same rows. Along a path of one box parameter
(C growing, ν shrinking) each fit starts from the previous cell's solution scaled to the new
box, or from the line through the previous two solutions, whichever is lower
(`SMOModel._starts_from`); the solver then only corrects it.
"""

from __future__ import annotations

import copy
import time
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning

from svmkit._metrics import r2_from_residuals
from svmkit._threads import numba_threads
from svmkit.kernels.gram import TRAIN_OVERLAP, as_kernel_input
from svmkit.kernels.spec import make_kernel
from svmkit.solvers.row_source import rows_block

@dataclass
class CellFit:
    """One cell on one fold: its test score (NaN when the fit failed), #SV, the objective of
    each dual problem as the solver posed it, and the seconds spent fitting and scoring."""

    cell: int
    fold: int
    score: float
    n_support: float
    objective: np.ndarray
    fit_time: float
    score_time: float


class OnSharedKernel:
    """A fitted estimator seen through the shared kernel: its `predict` and
    `decision_function` take the kernel values of the test points against its training rows
    in place of X, so scorers run unchanged."""

    def __init__(self, est):
        self.est = est
        W = est._W
        self._weights = np.zeros((est.shape_fit_[0], W.shape[1]))
        self._weights[est.support_] = W

    def __getattr__(self, name):
        return getattr(self.est, name)

    def __sklearn_tags__(self):
        return self.est.__sklearn_tags__()

    def _raw(self, K_test):
        return self.est._raw_decision_from_kernel(K_test, self._weights)

    def predict(self, K_test):
        return self.est._predict_from_raw(self._raw(K_test))

    def decision_function(self, K_test):
        return self.est._decision_from_raw(self._raw(K_test))

    def predict_proba(self, K_test):
        if np.size(getattr(self.est, "probA_", ())) == 0:
            raise ValueError("a scoring that needs probabilities (e.g. 'neg_log_loss') needs the estimator's "
                             "probability=True")
        return self.est._proba_from_raw(self._raw(K_test))


def _fast_score(scoring, est, K_test, y_test):
    """Accuracy, R² or −MSE from the shared kernel without a scorer's checks (which cost more
    than the prediction); None for any other scoring."""
    if scoring not in (None, "accuracy", "r2", "neg_mean_squared_error"):
        return None
    pred = OnSharedKernel(est).predict(K_test)
    if scoring == "accuracy" or (scoring is None and est.__sklearn_tags__().estimator_type == "classifier"):
        return float(np.mean(pred == y_test))
    sq = float(np.sum((y_test - pred) ** 2))
    if scoring == "neg_mean_squared_error":
        return -sq / y_test.size
    return r2_from_residuals(y_test, y_test - pred)


def _shared_rows(estimator, X, Xk, spec, memory_mb):
    """The kernel's rows over all of X: cached whole when the n × n float32 matrix fits
    `memory_mb` (a precomputed kernel is whole), else the estimator's own row source.
    Returns (rows, whole)."""
    n = X.shape[0]
    megabytes = 4.0 * n * n / 2**20
    if spec.is_precomputed or megabytes > memory_mb:
        return estimator._row_source(spec, X if spec.is_precomputed else Xk), spec.is_precomputed
    return estimator._row_source(spec, Xk, megabytes, min_rows=n), True


def _path_fits(estimator, X_train, y_train, sw_train, rows, train, path):
    """Fit the cells of `path` in order on the training rows `train` of `rows`, each from the
    previous one's solution; yields (cell, params, fitted estimator or the ValueError its fit
    raised, seconds). A failed fit makes the next one start cold."""
    template = clone(estimator)
    # the last two fits along the path, as (problem fits, box parameters)
    previous = earlier = None
    prepared = None
    for cell, params in path:
        # a shallow copy of the unfitted template: its parameters are plain values, and the grid's
        # names were checked against them (clone's signature inspection costs more than a small fit)
        est = copy.copy(template)
        vars(est).update(params)
        starts = None if previous is None else est._starts_from(*previous, earlier)
        t0 = time.perf_counter()
        try:
            # the path's cells differ in C or ν only: the data are validated once per path
            if prepared is None:
                prepared = est._prepared(X_train, y_train, sw_train)
            est._fit(X_train, y_train, sw_train, rows=rows, row_index=train, starts=starts, prepared=prepared)
        except ValueError as err:
            yield cell, params, err, time.perf_counter() - t0
            previous = earlier = None
            continue
        yield cell, params, est, time.perf_counter() - t0
        earlier = previous
        previous = est._problem_fits, {p: getattr(est, p) for p in est._scaled_params}


def _kernel_input(template, X):
    return None if template.kernel == "precomputed" else as_kernel_input(X, TRAIN_OVERLAP)


def path_fits(estimator, X, y, sample_weight, path, memory_mb):
    """Every cell of `path` fitted on all of X in turn, each from the previous one's solution, on
    one shared kernel: yields (cell, params, fitted estimator or the ValueError its fit raised)."""
    template = clone(estimator).set_params(**path[0][1])
    spec = make_kernel(template.kernel, X, template.gamma, template.degree, template.coef0)
    rows, _ = _shared_rows(template, X, _kernel_input(template, X), spec, memory_mb)
    for cell, params, est, _ in _path_fits(estimator, X, y, sample_weight, rows, np.arange(X.shape[0]), path):
        yield cell, params, est


def fit_path(estimator, X, y, sample_weight, path, memory_mb):
    """The last cell of `path` fitted on all of X, along the path from its first cell."""
    *_, (_, _, est) = path_fits(estimator, X, y, sample_weight, path, memory_mb)
    if isinstance(est, ValueError):
        raise est
    return est


def fit_group(estimator, X, y, sample_weight, paths, folds, scoring, scorer, memory_mb, threads=None) -> list[CellFit]:
    """Fit every cell of `paths` (lists of (cell index, params) in path order; one kernel
    for all) on every fold of `folds` ((fold id, train, test) triples) and score it on the
    fold's test rows with `scorer`, made from `scoring`. The kernel is shared while the resolved γ stays the same.
    `threads` caps the compiled loops' threads: one per task when tasks run side by side,
    where a task's small parallel loops would only contend for the cores with the others'."""
    with numba_threads(threads):
        return _fit_group(estimator, X, y, sample_weight, paths, folds, scoring, scorer, memory_mb)


def _fit_group(estimator, X, y, sample_weight, paths, folds, scoring, scorer, memory_mb) -> list[CellFit]:
    template = clone(estimator).set_params(**paths[0][0][1])
    precomputed = template.kernel == "precomputed"
    Xk = _kernel_input(template, X)
    shared = (None, None, False)
    out = []
    for fold, train, test in folds:
        X_train = X[np.ix_(train, train)] if precomputed else X[train]
        y_train = None if y is None else y[train]
        sw_train = None if sample_weight is None else sample_weight[train]
        spec = make_kernel(template.kernel, X_train, template.gamma, template.degree, template.coef0)
        if shared[0] != spec.gamma or shared[1] is None:
            shared = (spec.gamma, *_shared_rows(template, X, Xk, spec, memory_mb))
        _, rows, whole = shared
        K_test = rows_block(rows, test, train) if whole and test.size else None
        X_test = None if whole or not test.size else (X[np.ix_(test, train)] if precomputed else X[test])
        for path in paths:
            for cell, params, est, fit_time in _path_fits(estimator, X_train, y_train, sw_train, rows, train, path):
                if isinstance(est, ValueError):
                    warnings.warn(f"cell {params} failed on fold {fold}: {est}", FitFailedWarning, stacklevel=2)
                    out.append(CellFit(cell, fold, np.nan, np.nan, np.full(1, np.nan), fit_time, 0.0))
                    continue
                t0 = time.perf_counter()
                score = np.nan
                if test.size and whole:
                    score = _fast_score(scoring, est, K_test, y[test])
                    if score is None:
                        score = float(scorer(OnSharedKernel(est), K_test, y[test]))
                elif test.size:
                    score = float(scorer(est, X_test, y[test]))
                duals = np.array([f.result.objective for f in est._problem_fits])
                out.append(CellFit(cell, fold, score, float(est.support_.size), duals, fit_time,
                                   time.perf_counter() - t0))
    return out
