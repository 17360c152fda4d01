"""Model selection by exact leave-one-out for the closed-form models: per γ one kernel matrix
and, for each value of the regularisation (λ for kernel ridge, C for LS-SVM), diag(H⁻¹) from a
Cholesky factor and its triangular inverse — or, for many values, one eigendecomposition of K
serving all at O(N²) each (Saunders, Gammerman & Vovk 1998; Suykens & Vandewalle 1999; Cawley & Talbot 2004)."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.utils.validation import check_is_fitted

from svmkit._validation import store_parameters
from svmkit.models import LSSVC, LSSVR, KernelRidge
from svmkit.models.session import loo_grid_scores
from svmkit.solvers.dense.factorisations import NotPositiveDefiniteError


def _values(name, values):
    values = list(values) if values is not None else [None]
    if not values:
        raise ValueError(f"{name} is empty: give at least one value")
    return values


class _LOOSearch(BaseEstimator):
    """The search shared by KernelRidgeCV and LSSVMCV: `_estimator()` gives the model, `_reg`
    names its regularisation parameter and `_grid()` the values."""

    def fit(self, X, y, **fit_params):
        """Score every (regularisation, γ) cell by exact LOO, then refit the best on all of X."""
        base = self._estimator()
        reg_name, reg_values, gammas = self._grid()
        reg_values = _values(reg_name, reg_values)
        gammas = _values("gammas", gammas)
        estimators = [clone(base) if gamma is None else clone(base).set_params(gamma=gamma) for gamma in gammas]
        params, scores, times, first_failure = [], [], [], None
        for gamma, (cell_scores, seconds) in zip(gammas, loo_grid_scores(estimators, X, y, reg_values, **fit_params)):
            for value, score in zip(reg_values, cell_scores):
                cell = {reg_name: value} if gamma is None else {reg_name: value, "gamma": gamma}
                if isinstance(score, NotPositiveDefiniteError):
                    warnings.warn(f"{cell} failed: {score}", FitFailedWarning, stacklevel=2)
                    first_failure = first_failure or f"{cell}: {score}"
                    score = np.nan
                params.append(cell)
                scores.append(score)
                times.append(seconds / len(reg_values))
        scores = np.array(scores, dtype=np.float64)
        if np.all(np.isnan(scores)):
            raise ValueError("every cell of the grid failed: the kernel matrix is not positive definite at any of "
                             f"them; the first, {first_failure}")
        ranked = np.where(np.isnan(scores), -np.inf, scores)
        self.cv_results_ = {"params": params, "loo_score": scores, "mean_fit_time": np.array(times),
                            "rank_test_score": (np.argsort(np.argsort(-ranked, kind="stable"), kind="stable") + 1)}
        for key in params[0]:
            self.cv_results_[f"param_{key}"] = np.array([p[key] for p in params], dtype=object)
        self.best_index_ = int(np.argmax(ranked))
        self.best_params_ = params[self.best_index_]
        self.best_score_ = float(scores[self.best_index_])
        if self.refit:
            self.best_estimator_ = clone(base).set_params(**self.best_params_).fit(X, y, **fit_params)
        return self

    def predict(self, X):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @property
    def classes_(self):
        """The chosen classifier's classes (a search over LSSVC)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.classes_

    def score(self, X, y):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y)


class KernelRidgeCV(_LOOSearch):
    """Kernel ridge with (λ, γ) chosen by exact leave-one-out R² (Cawley & Talbot 2004): per γ one
    kernel matrix, per λ the residuals (y − ŷ)_i / (1 − H_ii) from one factorisation of K + λI
    (eight λ or more share one eigendecomposition of K).

    Parameters
    ----------
    alphas : sequence of float, default=(1e-4, 1e-3, 1e-2, 1e-1, 1)
        The λ values.
    gammas : sequence of float or None, default=None
        The γ values; None keeps the estimator's.
    kernel, degree, coef0 : as KernelRidge's.
    refit : bool, default=True
        Fit `best_estimator_` on all the data with the best cell.
    options : Options or None, default=None
        KernelRidge's (`svmkit.Options`); device='cuda': each γ's kernel and each cell's Cholesky
        factor and triangular inverse on the GPU (the eigendecomposition route is the CPU's).

    Attributes
    ----------
    cv_results_ : dict
        `params`, `loo_score`, `rank_test_score`, `param_alpha`, `param_gamma`, `mean_fit_time`.
    best_params_, best_score_, best_index_, best_estimator_

    Examples
    --------
    >>> import numpy as np
    >>> from svmkit.model_selection import KernelRidgeCV
    >>> X = np.linspace(0, 1, 40)[:, None]
    >>> y = np.sin(6 * X[:, 0]) + 0.1 * np.random.default_rng(0).normal(size=40)
    >>> search = KernelRidgeCV(alphas=[1e-3, 1e-1], gammas=[1.0, 10.0]).fit(X, y)
    >>> sorted(search.best_params_)
    ['alpha', 'gamma']
    """

    def __init__(self, alphas=(1e-4, 1e-3, 1e-2, 1e-1, 1.0), gammas=None, kernel="rbf", degree=3, coef0=1.0,
                 refit=True, options=None):
        store_parameters(self, locals())

    def _estimator(self):
        return KernelRidge(kernel=self.kernel, degree=self.degree, coef0=self.coef0, options=self.options)

    def _grid(self):
        return "alpha", self.alphas, self.gammas


#: grid.py's default C and γ values.
_GRID_C = tuple(2.0**k for k in range(-5, 16, 2))
_GRID_GAMMA = tuple(2.0**k for k in range(3, -16, -2))


class LSSVMCV(_LOOSearch):
    """An LS-SVM (LSSVR, or LSSVC binary or one-vs-rest) with (C, γ) chosen by exact
    leave-one-out (Cawley & Talbot 2004): R² for regression, accuracy for classification.
    Per γ one kernel matrix; per C the bordered system's residuals α_i / (M⁻¹)_ii from one
    factorisation of K + I/C (eight C or more share one eigendecomposition of K).

    Parameters
    ----------
    estimator : LSSVR or LSSVC, default=LSSVR()
    Cs : sequence of float, default: grid.py's 2^-5, 2^-3, …, 2^15
    gammas : sequence of float or None, default: grid.py's 2^3, 2^1, …, 2^-15
        None keeps the estimator's γ.
    refit : bool, default=True

    Attributes
    ----------
    cv_results_, best_params_, best_score_, best_index_, best_estimator_ :
        As for `KernelRidgeCV`, with `param_C` in place of `param_alpha`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from svmkit import LSSVC
    >>> from svmkit.model_selection import LSSVMCV
    >>> X, y = load_iris(return_X_y=True)
    >>> search = LSSVMCV(LSSVC(), Cs=[1.0, 100.0], gammas=[0.1, 1.0]).fit(X, y)
    >>> search.best_score_ > 0.95
    True
    """

    def __init__(self, estimator=None, Cs=_GRID_C, gammas=_GRID_GAMMA, refit=True):
        store_parameters(self, locals())

    def _estimator(self):
        if self.estimator is None:
            return LSSVR()
        if not isinstance(self.estimator, (LSSVC, LSSVR)):
            raise TypeError(f"LSSVMCV's estimator must be an LSSVC or an LSSVR, got estimator={self.estimator!r}")
        return self.estimator

    def _grid(self):
        return "C", self.Cs, self.gammas
