"""Fits that share a session (`models.expansion.FitSession`): estimators differing in C or ν
only fitted on one session, each starting from the solutions before it on a path, the rows of
one kernel shared by folds, and exact leave-one-out scores. Model selection, the picture
galleries and the leave-one-out searches work through this module's public API, never through
an estimator's private names."""

from __future__ import annotations

import time

import numpy as np

from svmkit.kernels.kinds import kernel_kind
from svmkit.models.expansion import FitSession, open_session
from svmkit.parallel.tasks import run_tasks
from svmkit.solvers.smo.row_source import MIN_ROWS


def fit_on(estimator, session: FitSession, after=None):
    """Fit `estimator` on `session`; `after`: (previous, earlier or None), the fits before it on a
    path of C (or ν) on the same session, from whose solutions it starts. Returns it fitted."""
    starts = None if after is None else estimator._starts_from(*after)
    return estimator._fit_session(session, starts)


def shared_rows(estimator, session: FitSession, Xk, memory_mb: float):
    """The rows of the session's kernel over all of the data, `Xk` (in the kernel's layout:
    `session.kernel.training_input`, which no γ changes), for fits on subsets of its rows:
    every row kept when the n × n float32 matrix fits `memory_mb` (or is given), else a cache of
    the estimator's `cache_size`. Returns (rows, whether every row is kept)."""
    n = Xk.shape[0]
    megabytes = 4.0 * n * n / 2**20
    fits = megabytes <= memory_mb
    rows = session.backend.training_rows(session.kernel, Xk, megabytes if fits else estimator.cache_size,
                                         n if fits else MIN_ROWS)
    return rows, rows.capacity >= n


def take_rows(estimator, X, rows, train):
    """The inputs of `rows` of X as `estimator`'s fits on the rows `train` take them (a
    precomputed kernel: its columns `train` too)."""
    return kernel_kind(estimator.kernel).take(X, rows, train)


def solver_objectives(fitted) -> np.ndarray:
    """The dual objective of each problem of a fitted SMO model, as the solver posed it."""
    return np.array([f.result.objective for f in fitted._problem_fits])


def path_parameter(estimator) -> str | None:
    """The parameter along which fits warm-start each other: C, or ν for a model without C."""
    formulation = getattr(estimator, "_formulation", None)
    scaled = formulation.scaled if formulation is not None else ()
    return scaled[0] if scaled else None


def loo_grid_scores(estimators, X, y, values, sample_weight=None) -> list:
    """Exact leave-one-out scores of each closed-form estimator (one model at several kernel
    parameters) for each value of its regularisation (λ or C), a NotPositiveDefiniteError in
    place of a cell whose matrix is not positive definite, with the seconds it took, as
    (scores, seconds). Where the backend runs factorisations of the data's size side
    by side (`factors_side_by_side`), the estimators do, one per core, each on one BLAS thread; else in
    turn, each on all of them. The first estimator's session is opened here, so that bad input
    is refused before any task starts."""
    first = open_session(estimators[0], X, y, sample_weight)

    def scores(k):
        t0 = time.perf_counter()
        session = first if k == 0 else open_session(estimators[k], X, y, sample_weight)
        vars(estimators[k]).update(session.fitted)  # what the data sets, as a fit keeps it
        return estimators[k]._loo_scores(session, values), time.perf_counter() - t0

    side_by_side = first.backend.factors_side_by_side(first.X.shape[0])
    return run_tasks(scores, [(k,) for k in range(len(estimators))], n_jobs=None if side_by_side else 1,
                     limit_threads=side_by_side)


class OnSharedKernel:
    """A fitted estimator seen through the shared kernel: its `predict`, `decision_function`
    and `predict_proba` take the kernel values of the test points against its training rows in
    place of X, so that scorers run unchanged."""

    def __init__(self, est):
        self.est = est
        W = np.asarray(est._W)
        self._weights = np.zeros((est.shape_fit_[0], W.shape[1]))
        self._weights[est.support_] = W

    def __getattr__(self, name):
        return getattr(self.est, name)

    def __sklearn_tags__(self):
        return self.est.__sklearn_tags__()

    def _raw(self, K_test):
        return K_test @ self._weights + self.est._intercept_

    def predict(self, K_test):
        return self.est._predict_from_raw(self._raw(K_test))

    def decision_function(self, K_test):
        return self.est._decision_from_raw(self._raw(K_test))

    def predict_proba(self, K_test):
        if np.size(getattr(self.est, "probA_", ())) == 0:
            raise ValueError("a scoring that needs probabilities (e.g. 'neg_log_loss') needs the estimator's "
                             "probability=True")
        return self.est._proba_from_raw(self._raw(K_test))
