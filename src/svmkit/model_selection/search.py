"""SVMSearchCV: a cross-validated grid search for every svmkit estimator; for the SMO models it
shares each kernel across every C and fold and warm-starts the solver along C (Hsu, Chang & Lin 2003,
§3.2), for the others each fold reads one kernel matrix per task (`cells`)."""

from __future__ import annotations

import numbers
import time
from collections import defaultdict
from functools import partial

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier, is_outlier_detector
from sklearn.metrics import check_scoring
from sklearn.utils.validation import check_is_fitted

from svmkit._validation import check_bool, check_choice, check_int, validate_sample_weight, validate_Xy
from svmkit.model_selection.cells import fit_cells
from svmkit.model_selection.folds import make_folds
from svmkit.model_selection.grid import check_grid, default_grid
from svmkit.model_selection.paths import fit_group, fit_path
from svmkit.models.session import path_parameter
from svmkit.models.smo_base import SMOModel
from svmkit.parallel.tasks import run_tasks

#: Parameters that decide the kernel; cells equal in them share kernel rows.
KERNEL_PARAMS = ("kernel", "gamma", "degree", "coef0")
BACKENDS = ("loky", "threading", "dask")


def kernel_paths(estimator, cells: list[dict]) -> list[list[list[tuple[int, dict]]]]:
    """The cells grouped by kernel, and within a kernel into paths of the box parameter: cells
    equal in everything but C (growing C) or, for a model without C, ν (shrinking ν)."""
    along = path_parameter(estimator)
    defaults = {k: estimator.get_params().get(k) for k in KERNEL_PARAMS}
    groups: dict = defaultdict(lambda: defaultdict(list))
    for index, cell in enumerate(cells):
        full = {**defaults, **cell}
        kernel_key = repr([full[k] for k in KERNEL_PARAMS])
        path_key = repr(sorted((k, repr(v)) for k, v in cell.items() if k != along and k not in KERNEL_PARAMS))
        groups[kernel_key][path_key].append((index, cell))
    sign = -1.0 if along == "nu" else 1.0
    return [[sorted(path, key=lambda c: sign * c[1].get(along, 0.0)) for path in group.values()]
            for group in groups.values()]


def _tasks(groups, folds, n_workers):
    """(paths, folds) per task: each kernel group's folds split into up to `n_workers` parts,
    so that one costly kernel (large γ, whose high-C cells need the most iterations) does not
    leave the other workers idle; the costliest-looking groups come first."""
    parts = max(1, min(n_workers, len(folds)))
    numbered = [(k, train, test) for k, (train, test) in enumerate(folds)]
    chunks = [numbered[s::parts] for s in range(parts)]

    def gamma_of(paths):
        gamma = paths[0][0][1].get("gamma")
        return gamma if isinstance(gamma, float | int) else 0.0

    ordered = sorted(groups, key=gamma_of, reverse=True)
    return [(paths, chunk) for paths in ordered for chunk in chunks]


def _workers(n_jobs) -> int:
    from joblib import effective_n_jobs

    return effective_n_jobs(n_jobs)


class SVMSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Choose an estimator's parameters by V-fold cross-validation over a grid (Hsu,
    Chang & Lin, "A practical guide to support vector classification", 2003, §3.2).

    For the SMO models (SVC, NuSVC, SVR, NuSVR, OneClassSVM) every cell that shares a kernel
    (the same γ) is fitted on kernel rows computed once for the whole data: a fold's problem is
    a row subset of them, its test points' decision values are read from them, and along
    growing C each fold's fit starts from the previous C's solution scaled to the new box
    (α·C'/C, gradient updated exactly). Each cell's solution meets the solver's `tol` as a cold
    fit does. Every other svmkit estimator (KernelRidge, LSSVR, LSSVC, KernelLogisticRegression,
    LinearSVC, LinearSVR, HardBandSVR) is fitted cell by cell on each fold, as GridSearchCV
    does, reading one kernel matrix over all of X where the cells' kernel is fixed (a kernel by
    name with a numeric γ).

    Parameters
    ----------
    estimator : svmkit estimator
        The model; its parameters outside the grid are kept. A one-class SVM is scored against
        labels y (+1 inlier, −1 outlier).
    param_grid : dict or list of dicts, default None
        Values per parameter (C, gamma, nu, epsilon, alpha, …); one cell is a valid grid. None:
        LIBSVM grid.py's grid, C = 2^−5, 2^−3, …, 2^15 (ν ∈ {0.1, …, 0.5} for a model without
        C; λ = 10^−6, …, 10 for kernel ridge) by γ = 2^3, 2^1, …, 2^−15 for the RBF, poly and
        sigmoid kernels (110 cells for SVC).
    cv : int, splitter or iterable, default 5
        Folds: an int gives stratified folds for classifiers (in order, or shuffled with
        `random_state`), as GridSearchCV's.
    scoring : str, callable or None, default None
        A scikit-learn scorer; None: accuracy (classifiers, one-class) or R² (regressors).
    n_jobs : int or None, default None
        Parallel tasks (a task is one kernel's cells on some folds); −1 for every core.
    refit : bool, default True
        Fit the chosen cell on all the data as `best_estimator_`.
    prefer_fewer_sv : bool, default False
        Among the cells whose mean score is within one standard error of the best, choose the
        one with the fewest support vectors, whose bound #SV/N on the leave-one-out error is the
        smallest (Vapnik 1995); by default the best mean score, as GridSearchCV. Only for models with support vectors.
    backend : {'threading', 'loky', 'dask'}, default 'threading'
        Where the tasks run: joblib threads or processes, or a Dask cluster (the `dask` extra).
        Threads are the default: the compiled solver releases the GIL, and threads start at
        once and share the data, where processes take seconds to start (svmkit against
        svmkit-loky on the benchmark page of `benchmarks/bench_grid.py`).
    scheduler_address : str or None, default None
        With 'dask', the scheduler of an existing cluster ('tcp://host:port'); None starts a
        local one for the search.
    random_state : int or None, default None
        Shuffles the folds of an integer `cv`.
    verbose : int, default 0
        Print a line per finished task.

    Attributes
    ----------
    cv_results_ : dict of arrays
        GridSearchCV's keys (`params`, `param_*`, `split*_test_score`, `mean_test_score`,
        `std_test_score`, `rank_test_score`, fit and score times) and `mean_n_support`,
        `loo_bound` (#SV / N: of the full-data fit for the refitted cell, else the folds'
        mean #SV / n_train; NaN for a model without support vectors), `chosen_by` ('score',
        'fewer_sv' or both on the chosen cells).
    best_index_, best_params_, best_score_ :
        The chosen cell. `best_by_score_` is the index of the best mean score.
    best_estimator_ : estimator
        The chosen cell fitted on all the data (with `refit`).
    n_features_in_, feature_names_in_ :
        The refitted model's (the names of a DataFrame's columns).
    n_splits_ : int
    refit_time_ : float
        Seconds of the refit.

    Examples
    --------
    >>> import svmkit
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> search = svmkit.model_selection.SVMSearchCV(svmkit.SVC(), {"C": [1, 10], "gamma": [0.1, 1]}).fit(X, y)
    >>> sorted(search.best_params_)
    ['C', 'gamma']
    """

    def __init__(self, estimator, param_grid=None, cv=5, scoring=None, n_jobs=None, refit=True,
                 prefer_fewer_sv=False, backend="threading", scheduler_address=None, random_state=None, verbose=0):
        self.estimator = estimator
        self.param_grid = param_grid
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.prefer_fewer_sv = prefer_fewer_sv
        self.backend = backend
        self.scheduler_address = scheduler_address
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.input_tags = inner.input_tags
        return tags

    def fit(self, X, y, sample_weight=None, *, on_task=None):
        """Search the grid on (X, y) and, with `refit`, fit the chosen cell on all of it;
        `on_task(n_done, n_tasks)` is called as tasks finish (a progress report)."""
        est = self._check_params()
        probe = clone(est)
        X, y = validate_Xy(probe, X, y, y_numeric=not (is_classifier(est) or is_outlier_detector(est)))
        if sample_weight is not None:
            sample_weight = validate_sample_weight(sample_weight, X)
        cells = check_grid(default_grid(est) if self.param_grid is None else self.param_grid, est)
        folds = make_folds(self.cv, X, y, is_classifier(est), self.random_state)
        scoring = self.scoring or ("r2" if est.__sklearn_tags__().estimator_type == "regressor" else "accuracy")
        scorer = self._scorer(est, scoring)
        groups = kernel_paths(est, cells)
        workers = _workers(self.n_jobs) if self.backend != "dask" else 2
        tasks = _tasks(groups, folds, workers)
        if self.verbose:
            print(f"Fitting {len(folds)} folds for each of {len(cells)} candidates, totalling "
                  f"{len(folds) * len(cells)} fits, in {len(tasks)} tasks")
        memory = float(getattr(est, "cache_size", 0.0))
        records = [r for rs in self._run(est, X, y, sample_weight, tasks, scoring, scorer, memory, workers > 1,
                                         on_task) for r in rs]
        self._collect(cells, folds, records, X.shape[0])
        self.n_splits_ = len(folds)
        self.scorer_ = scorer
        if self.refit:
            t0 = time.perf_counter()
            self.best_estimator_ = self._refit(est, X, y, sample_weight, groups, memory)
            self.refit_time_ = time.perf_counter() - t0
            if hasattr(probe, "feature_names_in_"):
                self.best_estimator_.feature_names_in_ = probe.feature_names_in_
            if hasattr(self.best_estimator_, "support_"):
                self.cv_results_["loo_bound"][self.best_index_] = self.best_estimator_.support_.size / X.shape[0]
        return self

    def _check_params(self):
        est = self.estimator
        if not type(est).__module__.startswith("svmkit."):
            raise TypeError(f"estimator must be one of svmkit's estimators (scikit-learn's GridSearchCV searches "
                            f"any), got estimator={est!r}")
        cv = self.cv
        if isinstance(cv, bool) or isinstance(cv, numbers.Integral) and cv < 2 or isinstance(cv, (float, str)):
            raise ValueError(f"cv must be a number of folds of at least 2 or a splitter, got cv={cv!r}")
        if self.n_jobs is not None and (isinstance(self.n_jobs, bool) or not isinstance(self.n_jobs, numbers.Integral)):
            raise ValueError(f"n_jobs must be None or an integer, got n_jobs={self.n_jobs!r}")
        check_choice(self.backend, "backend", BACKENDS)
        check_bool(self.refit, "refit")
        check_bool(self.prefer_fewer_sv, "prefer_fewer_sv")
        check_int(self.verbose, "verbose")
        if self.scheduler_address is not None and self.backend != "dask":
            raise ValueError(f"scheduler_address is used only with backend='dask', got backend={self.backend!r}")
        return est

    def _scorer(self, est, scoring):
        if isinstance(scoring, (list, tuple, set, dict)):
            raise ValueError("scoring must be one metric (a string or a callable): the search chooses by it")
        return check_scoring(est, scoring)

    def _run(self, est, X, y, sw, tasks, scoring, scorer, memory, side_by_side, on_task):
        work = partial(fit_group if isinstance(est, SMOModel) else fit_cells, scoring=scoring, scorer=scorer,
                       memory_mb=memory)
        return run_tasks(work, tasks, backend=self.backend, n_jobs=self.n_jobs, shared=(est, X, y, sw),
                         limit_threads=side_by_side, on_task=on_task,
                         label="SVMSearchCV" if self.verbose else None, scheduler_address=self.scheduler_address)

    def _collect(self, cells, folds, records, n):
        """cv_results_ and the chosen cell from the per-(cell, fold) records."""
        n_cells, n_folds = len(cells), len(folds)
        score = np.full((n_cells, n_folds), np.nan)
        n_sv = np.full((n_cells, n_folds), np.nan)
        fit_t = np.zeros((n_cells, n_folds))
        score_t = np.zeros((n_cells, n_folds))
        for r in records:
            score[r.cell, r.fold] = r.score
            n_sv[r.cell, r.fold] = r.n_support
            fit_t[r.cell, r.fold] = r.fit_time
            score_t[r.cell, r.fold] = r.score_time
        with np.errstate(invalid="ignore"):
            mean = score.mean(axis=1)
            std = score.std(axis=1)
        if np.isnan(mean).all():
            first = next(r.error for r in records if r.error is not None)
            raise ValueError(f"every cell of the grid failed to fit on some fold; the first failure: {first}")
        train_sizes = np.array([n - test.size for _, test in folds])
        results = {"mean_fit_time": fit_t.mean(axis=1), "std_fit_time": fit_t.std(axis=1),
                   "mean_score_time": score_t.mean(axis=1), "std_score_time": score_t.std(axis=1)}
        for name in sorted({k for c in cells for k in c}):
            column = np.ma.MaskedArray(np.empty(n_cells, dtype=object), mask=True)
            for i, c in enumerate(cells):
                if name in c:
                    column[i] = c[name]
            results[f"param_{name}"] = column
        results["params"] = cells
        for k in range(n_folds):
            results[f"split{k}_test_score"] = score[:, k]
        results["mean_test_score"] = mean
        results["std_test_score"] = std
        order = np.where(np.isnan(mean), -np.inf, mean)
        results["rank_test_score"] = rankdata(-order, method="min").astype(np.int32)
        results["mean_n_support"] = n_sv.mean(axis=1)
        results["loo_bound"] = (n_sv / train_sizes).mean(axis=1)
        best_by_score = int(np.nanargmax(mean))
        chosen = best_by_score
        if self.prefer_fewer_sv and np.isnan(results["mean_n_support"]).all():
            raise ValueError(f"prefer_fewer_sv=True chooses by support vectors, which {type(self.estimator).__name__} "
                             "does not have")
        if self.prefer_fewer_sv:
            se = std[best_by_score] / np.sqrt(n_folds)
            near = np.flatnonzero(mean >= mean[best_by_score] - se)
            chosen = int(min(near, key=lambda i: (results["mean_n_support"][i], -mean[i], i)))
        chosen_by = np.array([""] * n_cells, dtype=object)
        chosen_by[best_by_score] = "score"
        chosen_by[chosen] = "score, fewer_sv" if chosen == best_by_score else "fewer_sv"
        results["chosen_by"] = chosen_by
        self.cv_results_ = results
        self.best_by_score_ = best_by_score
        self.best_index_ = chosen
        self.best_params_ = cells[chosen]
        self.best_score_ = float(mean[chosen])

    def _refit(self, est, X, y, sw, groups, memory):
        """The chosen cell on all the data, along its path from the path's first cell."""
        if not isinstance(est, SMOModel):
            best = clone(est).set_params(**self.best_params_)
            return best.fit(X, y) if sw is None else best.fit(X, y, sample_weight=sw)
        for paths in groups:
            for path in paths:
                cells = [c for c, _ in path]
                if self.best_index_ in cells:
                    head = path[: cells.index(self.best_index_) + 1]
                    return fit_path(est, X, y, sw, head, memory)
        raise AssertionError("the chosen cell is in no path")

    def _best(self):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_

    @property
    def classes_(self):
        return self._best().classes_

    @property
    def n_features_in_(self):
        return self._best().n_features_in_

    @property
    def feature_names_in_(self):
        return self._best().feature_names_in_

    def predict(self, X):
        """The refitted model's prediction."""
        return self._best().predict(X)

    def decision_function(self, X):
        """The refitted model's decision function."""
        return self._best().decision_function(X)

    def score(self, X, y):
        """The search's scorer applied to the refitted model."""
        return self.scorer_(self._best(), X, y)

