"""SVMSearchCV: a cross-validated grid search for every svmkit estimator, alone or as the last
step of a scikit-learn Pipeline; for the SMO models it shares each kernel across every C (and,
for a bare model, every fold) and warm-starts the solver along C (Hsu, Chang & Lin 2003, §3.2),
for the others each fold reads one kernel matrix per task (`cells`)."""

from __future__ import annotations

import numbers
import time
import warnings
from collections import defaultdict
from functools import partial
from inspect import signature

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier, is_outlier_detector
from sklearn.metrics import check_scoring
from sklearn.utils import check_array, check_consistent_length, indexable
from sklearn.utils.validation import check_is_fitted

from svmkit._validation import check_bool, check_choice, check_int, store_parameters, validate_Xy, validate_sample_weight
from svmkit.model_selection.cells import fit_cells
from svmkit.model_selection.folds import make_folds
from svmkit.model_selection.grid import check_grid, default_grid
from svmkit.model_selection.paths import Scoring, fit_group, fit_path
from svmkit.model_selection.pipelines import fit_transformed, last_step, refit_pipeline, split_cells, transform_folds
from svmkit.models.session import path_parameter
from svmkit.models.smo.base import SMOModel
from svmkit.parallel.tasks import run_tasks

#: Parameters that decide the kernel; cells equal in them share kernel rows.
KERNEL_PARAMS = ("kernel", "gamma", "degree", "coef0")
BACKENDS = ("loky", "threading", "dask")


def kernel_paths(estimator, cells: list[dict], index=None) -> list[list[list[tuple[int, dict]]]]:
    """The cells grouped by kernel, and within a kernel into paths of the box parameter: cells
    equal in everything but C (growing C) or, for a model without C, ν (shrinking ν); each
    cell as (its index, given by `index` or its place in `cells`, its parameters)."""
    along = path_parameter(estimator)
    defaults = {k: estimator.get_params().get(k) for k in KERNEL_PARAMS}
    groups: dict = defaultdict(lambda: defaultdict(list))
    for i, cell in zip(range(len(cells)) if index is None else index, cells):
        full = {**defaults, **cell}
        kernel_key = repr([full[k] for k in KERNEL_PARAMS])
        path_key = repr(sorted((k, repr(v)) for k, v in cell.items() if k != along and k not in KERNEL_PARAMS))
        groups[kernel_key][path_key].append((i, cell))
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


def _takes_weights(scorer) -> bool:
    """Whether `scorer` takes `sample_weight`, as GridSearchCV decides it."""
    if hasattr(scorer, "_accept_sample_weight"):
        return scorer._accept_sample_weight()
    return "sample_weight" in signature(scorer).parameters


def _is_model(estimator) -> bool:
    """Whether `estimator` is one of svmkit's models (not a transformer or a search)."""
    return (type(estimator).__module__.startswith("svmkit.models.") and
            estimator.__sklearn_tags__().estimator_type in ("classifier", "regressor", "outlier_detector"))


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

    A scikit-learn Pipeline whose last step is an svmkit model is searched as GridSearchCV
    searches it: on each fold the steps before the model are fitted on the training rows and
    transform the training and test rows, and the model's cells are fitted on them as above,
    one kernel shared by the cells along C within the fold. Parameters take the Pipeline's
    `step__param` names, and may set the earlier steps' parameters too.

    Parameters
    ----------
    estimator : svmkit estimator, or a Pipeline whose last step is one
        The model; its parameters outside the grid are kept. A one-class SVM is scored against
        labels y (+1 inlier, −1 outlier).
    param_grid : dict or list of dicts, default None
        Values per parameter (C, gamma, nu, epsilon, alpha, …; `svc__C` for a Pipeline's step
        `svc`); one cell is a valid grid, a value listed twice is a cell listed twice. None:
        LIBSVM grid.py's grid, C = 2^−5, 2^−3, …, 2^15 (ν ∈ {0.1, …, 0.5} for a model without
        C; λ = 10^−6, …, 10 for kernel ridge) by γ = 2^3, 2^1, …, 2^−15 for the RBF, poly and
        sigmoid kernels (110 cells for SVC).
    cv : int, splitter or iterable, default 5
        Folds: an int gives stratified folds for classifiers (in order, or shuffled with
        `random_state`), as GridSearchCV's.
    scoring : str, callable or None, default None
        A scikit-learn scorer; None: accuracy (classifiers, one-class) or R² (regressors). A
        Pipeline's folds are scored on its model and the test rows its earlier steps gave.
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
        once and share the data, where processes are slow to start (svmkit against
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
        The chosen cell fitted on all the data (with `refit`): a Pipeline for a Pipeline.
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
        store_parameters(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.input_tags = inner.input_tags
        return tags

    def fit(self, X, y, sample_weight=None, *, on_task=None):
        """Search the grid on (X, y) and, with `refit`, fit the chosen cell on all of it;
        `on_task(n_done, n_tasks)` is called as tasks finish (a progress report).
        `sample_weight` weights the model's fits (a Pipeline's last step only) and, where the
        scorer takes it, the test folds' scores, as GridSearchCV's."""
        est = self._check_params()
        model, name = last_step(est)
        classifier = is_classifier(model)
        X, y, names = self._validate(est, X, y)
        if sample_weight is not None:
            sample_weight = validate_sample_weight(sample_weight, X)
        grid = self.param_grid
        if grid is None:
            grid = {k if name is None else f"{name}__{k}": v for k, v in default_grid(model).items()}
        cells = check_grid(grid, est)
        settings = split_cells(cells, name)
        folds = make_folds(self.cv, X, y, classifier, self.random_state)
        scoring = self._scoring(est, model, sample_weight)
        # per setting of the earlier steps, its cells by kernel and path
        plan = [kernel_paths(model, params, index) for index, params in map(settings.cells, range(len(settings.preps)))]
        workers = _workers(self.n_jobs) if self.backend != "dask" else 2
        tasks = [(k, *task) for k, groups in enumerate(plan) for task in _tasks(groups, folds, workers)]
        if self.verbose:
            print(f"Fitting {len(folds)} folds for each of {len(cells)} candidates, totalling "
                  f"{len(folds) * len(cells)} fits, in {len(tasks)} tasks")
        memory = float(getattr(model, "cache_size", 0.0))
        if name is None:
            work = partial(fit_group if isinstance(model, SMOModel) else fit_cells, scoring=scoring, memory_mb=memory)
            shared, tasks = (model, X, y, sample_weight), [task[1:] for task in tasks]
        else:
            work = partial(fit_transformed, scoring=scoring, memory_mb=memory)
            shared = (model, transform_folds(est, X, y, sample_weight, folds, settings.preps))
        records = [r for rs in run_tasks(work, tasks, backend=self.backend, n_jobs=self.n_jobs, shared=shared,
                                         limit_threads=workers > 1, on_task=on_task,
                                         label="SVMSearchCV" if self.verbose else None,
                                         scheduler_address=self.scheduler_address) for r in rs]
        self._collect(cells, folds, records, len(y), type(model).__name__)
        self.n_splits_ = len(folds)
        self.scorer_ = scoring.scorer
        if self.refit:
            t0 = time.perf_counter()
            k = settings.setting[self.best_index_]
            params = settings.model_params[self.best_index_]

            def fit_model(Z):
                return self._fit_model(model, Z, y, sample_weight, plan[k], params, memory)

            self.best_estimator_ = fit_model(X) if name is None else \
                refit_pipeline(est, settings.preps[k], X, y, fit_model)
            self.refit_time_ = time.perf_counter() - t0
            if names is not None:
                self.best_estimator_.feature_names_in_ = names
            fitted = last_step(self.best_estimator_)[0]
            if hasattr(fitted, "support_"):
                self.cv_results_["loo_bound"][self.best_index_] = fitted.support_.size / len(y)
        return self

    def _validate(self, est, X, y):
        """(X, y) checked, and a bare model's feature names (None if none, or for a Pipeline,
        which keeps its own)."""
        model, name = last_step(est)
        y_numeric = not (is_classifier(model) or is_outlier_detector(model))
        if name is not None:
            # the earlier steps take X as it is (a DataFrame, text); the model validates what they give
            X, y = indexable(X, y)
            y = check_array(y, ensure_2d=False, dtype="numeric" if y_numeric else None, input_name="y")
            check_consistent_length(X, y)
            return X, y, None
        probe = clone(est)
        X, y = validate_Xy(probe, X, y, y_numeric=y_numeric)
        return X, y, getattr(probe, "feature_names_in_", None)

    def _check_params(self):
        est = self.estimator
        model, name = last_step(est)
        if not _is_model(model):
            what = f"a Pipeline whose last step {name!r} is {model!r}" if name is not None else f"estimator={est!r}"
            raise TypeError(f"estimator must be one of svmkit's estimators or a scikit-learn Pipeline ending in one, "
                            f"got {what}; scikit-learn's GridSearchCV searches any estimator")
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

    def _scoring(self, est, model, sample_weight) -> Scoring:
        """The scoring of the test folds; weighted when there are weights and the scorer takes
        them, else unweighted with GridSearchCV's warning."""
        name = self.scoring or ("r2" if model.__sklearn_tags__().estimator_type == "regressor" else "accuracy")
        if isinstance(name, (list, tuple, set, dict)):
            raise ValueError("scoring must be one metric (a string or a callable): the search chooses by it")
        scorer = check_scoring(est, name)
        weighted = sample_weight is not None and _takes_weights(scorer)
        if sample_weight is not None and not weighted:
            warnings.warn(f"The scoring {scorer} does not support sample_weight, which may lead to statistically "
                          f"incorrect results when fitting {self} with sample_weight.", stacklevel=3)
        return Scoring(self.scoring, scorer, weighted)

    def _collect(self, cells, folds, records, n, model_name):
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
            errors = [r.error for r in records if r.error is not None]
            if errors:
                raise ValueError(f"every cell of the grid failed to fit on some fold; the first failure: {errors[0]}")
            raise ValueError(f"every cell of the grid scored NaN on some fold, so none can be chosen: check the "
                             f"scoring ({self.scoring!r}) and the data")
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
            raise ValueError(f"prefer_fewer_sv=True chooses by support vectors, which {model_name} "
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

    def _fit_model(self, model, X, y, sw, groups, params, memory):
        """The chosen cell's model (`params`) on all of (X, y), along its path from the path's
        first cell (`groups`: its setting's `kernel_paths`)."""
        if not isinstance(model, SMOModel):
            best = clone(model).set_params(**params)
            return best.fit(X, y) if sw is None else best.fit(X, y, sample_weight=sw)
        for paths in groups:
            for path in paths:
                cells = [c for c, _ in path]
                if self.best_index_ in cells:
                    head = path[: cells.index(self.best_index_) + 1]
                    return fit_path(model, X, y, sw, head, memory)
        raise AssertionError("the chosen cell is in no path")

    def _best(self):
        if hasattr(self, "cv_results_") and not self.refit:
            raise AttributeError("this SVMSearchCV was fitted with refit=False: it has no best_estimator_ to predict "
                                 "or score with; fit it with refit=True")
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
        best = self._best()
        return self.scorer_(best, X, y)

