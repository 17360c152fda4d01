"""The fits of a grid's cells for the models without a solver path (kernel ridge, LS-SVMs,
kernel logistic regression, the linear models, the hard band): each cell on each fold fitted
and scored as scikit-learn's GridSearchCV does. Where the cells' kernel does not depend on the
training rows (a kernel given by name with a numeric γ, or the linear kernel), its matrix over
all of X is computed once per task and every fold's fit reads its rows: the fit on
K[train, train] with kernel='precomputed' is the fit on X[train]."""

from __future__ import annotations

import numbers
import time

import numpy as np
from sklearn.base import clone

from svmkit.kernels.kinds import make_kernel
from svmkit.model_selection.paths import CellFit, Scoring, failed_fit

#: Kernels by name whose matrix the folds can share (a callable or a precomputed one is the user's).
_NAMED = ("linear", "poly", "rbf", "sigmoid")


def shared_kernel(estimator, params: dict):
    """The kernel matrix maker of a cell whose kernel the folds can share (None when they
    cannot): `(X) -> K` over all rows of X."""
    full = {**estimator.get_params(), **params}
    kernel = full.get("kernel")
    if kernel not in _NAMED:
        return None
    gamma = full.get("gamma")
    if kernel != "linear" and (not isinstance(gamma, numbers.Real) or isinstance(gamma, bool)):
        return None

    def matrix(X):
        spec = make_kernel(kernel, X, 1.0 if kernel == "linear" else gamma, full.get("degree", 3),
                           full.get("coef0", 0.0))
        return spec.matrix(spec.training_input(X))

    return matrix


def fit_cells(estimator, X, y, sample_weight, paths, folds, scoring: Scoring, memory_mb) -> list[CellFit]:
    """Fit every cell of `paths` (lists of (cell index, params); one kernel for all) on every
    fold of `folds` ((fold id, train, test) triples) and score it on the fold's test rows with
    `scoring`. `memory_mb` is `paths.fit_group`'s, unused here."""
    cells = [c for path in paths for c in path]
    make = shared_kernel(estimator, cells[0][1])
    K = None if make is None else make(X)
    out = []
    for fold, train, test in folds:
        fit_params = {} if sample_weight is None else {"sample_weight": sample_weight[train]}
        sw_test = None if sample_weight is None else sample_weight[test]
        if K is None:
            X_train, X_test = X[train], X[test]
        else:
            X_train, X_test = K[np.ix_(train, train)], K[np.ix_(test, train)]
        for cell, params in cells:
            est = clone(estimator).set_params(**params, **({} if K is None else {"kernel": "precomputed"}))
            t0 = time.perf_counter()
            try:
                est.fit(X_train, y[train], **fit_params)
            except ValueError as err:
                out.append(failed_fit(cell, fold, params, err, time.perf_counter() - t0))
                continue
            fit_time = time.perf_counter() - t0
            t0 = time.perf_counter()
            score = scoring(est, X_test, y[test], sw_test) if test.size else np.nan
            n_support = float(est.support_.size) if hasattr(est, "support_") else np.nan
            out.append(CellFit(cell, fold, score, n_support, np.full(1, np.nan), fit_time, time.perf_counter() - t0))
    return out
