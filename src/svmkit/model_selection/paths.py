"""The fits of one kernel group: every cell of a grid that shares a kernel (the same kernel,
γ, degree and coef0), on a set of folds.

The kernel rows are computed once per fold set and shared by every cell and fold: a fold's
problem is a subset of the rows of the full-data kernel, reached through `row_index`, and its
test points' decision values are read from the same rows. Along a path of one box parameter
(C growing, ν shrinking) each fit starts from the previous cell's solution scaled to the new
box, or from the line through the previous two solutions, whichever is lower
(`models.session.fit_on`); the solver then only corrects it.
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
from svmkit.models.session import (OnSharedKernel, fit_on, open_session, shared_rows, solver_objectives,
                                   take_rows)
from svmkit.solvers.smo.row_source import rows_block


@dataclass
class CellFit:
    """One cell on one fold: its test score (NaN when the fit failed), #SV, the objective of
    each dual problem as the solver posed it, the seconds spent fitting and scoring, and why
    the fit failed (None when it did not)."""

    cell: int
    fold: int
    score: float
    n_support: float
    objective: np.ndarray
    fit_time: float
    score_time: float
    error: str | None = None


@dataclass(frozen=True)
class Scoring:
    """How a search scores a fold's test rows: `scorer`, made from `name` (a scorer's name, a
    callable or None), given the test rows' sample weights when `weighted` (as GridSearchCV
    gives them to a scorer that takes `sample_weight`)."""

    name: object
    scorer: object
    weighted: bool = False

    def __call__(self, est, X_test, y_test, weight) -> float:
        return float(self.scorer(est, X_test, y_test, **({"sample_weight": weight} if self.weighted else {})))


def _fast_score(scoring: Scoring, est, K_test, y_test):
    """Accuracy, R² or −MSE from the shared kernel without a scorer's checks (which cost more
    than the prediction); None for any other scoring, or a weighted one."""
    if scoring.weighted or scoring.name not in (None, "accuracy", "r2", "neg_mean_squared_error"):
        return None
    scoring = scoring.name
    pred = OnSharedKernel(est).predict(K_test)
    if scoring == "accuracy" or (scoring is None and est.__sklearn_tags__().estimator_type == "classifier"):
        return float(np.mean(pred == y_test))
    sq = float(np.sum((y_test - pred) ** 2))
    if scoring == "neg_mean_squared_error":
        return -sq / y_test.size
    return r2_from_residuals(y_test, y_test - pred)


def _path_fits(estimator, session, path):
    """Fit the cells of `path` in order on `session`, each from the previous one's solution;
    yields (cell, params, fitted estimator or the ValueError its fit raised, seconds). A failed
    fit makes the next one start cold; a cell repeated in the grid is the previous fit."""
    template = clone(estimator)
    # the last two fits along the path
    previous = earlier = None
    last = None
    for cell, params in path:
        if previous is not None and params == last:
            yield cell, params, previous, 0.0
            continue
        last = params
        # a shallow copy of the unfitted template: its parameters are plain values, and the grid's
        # names were checked against them (clone's signature inspection costs more than a small fit)
        est = copy.copy(template)
        vars(est).update(params)
        t0 = time.perf_counter()
        try:
            fit_on(est, session, None if previous is None else (previous, earlier))
        except ValueError as err:
            yield cell, params, err, time.perf_counter() - t0
            previous = earlier = None
            continue
        yield cell, params, est, time.perf_counter() - t0
        earlier, previous = previous, est


def _path_session(estimator, X, y, sample_weight, path, memory_mb):
    """The session of `path`'s first cell on all of X, on rows shared by every cell."""
    template = clone(estimator).set_params(**path[0][1])
    session = open_session(template, X, y, sample_weight)
    session.rows, _ = shared_rows(template, session, session.Xk, memory_mb)
    return session


def path_fits(estimator, X, y, sample_weight, path, memory_mb):
    """Every cell of `path` fitted on all of X in turn, each from the previous one's solution, on
    one shared kernel: yields (cell, params, fitted estimator or the ValueError its fit raised)."""
    try:
        session = _path_session(estimator, X, y, sample_weight, path, memory_mb)
    except ValueError as err:
        for cell, params in path:
            yield cell, params, err
        return
    for cell, params, est, _ in _path_fits(estimator, session, path):
        yield cell, params, est


def fit_path(estimator, X, y, sample_weight, path, memory_mb):
    """The last cell of `path` fitted on all of X, along the path from its first cell."""
    *_, (_, _, est) = path_fits(estimator, X, y, sample_weight, path, memory_mb)
    if isinstance(est, ValueError):
        raise est
    return est


def fit_group(estimator, X, y, sample_weight, paths, folds, scoring: Scoring, memory_mb) -> list[CellFit]:
    """Fit every cell of `paths` (lists of (cell index, params) in path order; one kernel
    for all) on every fold of `folds` ((fold id, train, test) triples) and score it on the
    fold's test rows with `scoring`. The kernel is shared while the resolved γ stays the same."""
    out = []
    # the rows of the kernel over all of X, kept while the folds resolve the same kernel (γ)
    shared = (None, None, False)
    Xk = None
    for fold, train, test in folds:
        y_train = None if y is None else y[train]
        sw_train = None if sample_weight is None else sample_weight[train]
        sw_test = None if sample_weight is None else sample_weight[test]
        X_train = take_rows(estimator, X, train, train)
        tests = None  # the test rows' kernel values (or inputs), once per fold
        for path in paths:
            try:
                # the path's cells differ in C or ν only: the data are validated once per path
                session = open_session(clone(estimator).set_params(**path[0][1]), X_train, y_train, sw_train)
            except ValueError as err:
                out.extend(failed_fit(cell, fold, params, err, 0.0) for cell, params in path)
                continue
            if shared[0] != session.kernel:
                # all of X in the kernel's layout, made once: only the rows change with γ
                Xk = session.kernel.training_input(X) if Xk is None else Xk
                shared = (session.kernel, *shared_rows(estimator, session, Xk, memory_mb))
                tests = None
            _, rows, whole = shared
            session.rows, session.row_index = rows, train
            if tests is None and test.size:
                tests = rows_block(rows, test, train) if whole else take_rows(estimator, X, test, train)
            for cell, params, est, fit_time in _path_fits(estimator, session, path):
                if isinstance(est, ValueError):
                    out.append(failed_fit(cell, fold, params, est, fit_time))
                    continue
                t0 = time.perf_counter()
                score = np.nan
                if test.size and whole:
                    score = _fast_score(scoring, est, tests, y[test])
                    if score is None:
                        score = scoring(OnSharedKernel(est), tests, y[test], sw_test)
                elif test.size:
                    score = scoring(est, tests, y[test], sw_test)
                out.append(CellFit(cell, fold, score, float(est.support_.size), solver_objectives(est), fit_time,
                                   time.perf_counter() - t0))
    return out


def failed_fit(cell, fold, params, err, fit_time) -> CellFit:
    """The record of a cell whose fit on a fold raised `err`, with a FitFailedWarning."""
    warnings.warn(f"cell {params} failed on fold {fold}: {err}", FitFailedWarning, stacklevel=3)
    return CellFit(cell, fold, np.nan, np.nan, np.full(1, np.nan), fit_time, 0.0, f"cell {params} on fold {fold}: {err}")
