"""One-class SVM (Schölkopf et al. 2001): the smallest region of feature space holding a
1 − ν fraction of the data, f(x) = Σ α_i K(x_i, x) − ρ, with f ≥ 0 inside."""

from __future__ import annotations

import numpy as np
from sklearn.base import OutlierMixin

from svmkit._validation import check_nu
from svmkit.models import duals
from svmkit.models.smo_base import KernelModel, positive_rows, read_back


class OneClassSVM(OutlierMixin, KernelModel):
    """Novelty detection, scikit-learn compatible, exact against LIBSVM (-s 2).

    Solves min ½ αᵀKα, Σα = ν Σw, 0 ≤ α_i ≤ w_i (Schölkopf et al. 2001); the region is
    f(x) = Σ α_i K(x_i, x) − ρ ≥ 0.

    Parameters
    ----------
    nu : float in (0, 1], default 0.5
        Upper bound on the fraction of outliers, lower bound on the fraction of support vectors.
    kernel, degree, gamma, coef0, shrinking, tol, cache_size, verbose, max_iter, warm_start :
        As for `SVC`.

    Attributes
    ----------
    offset_ : float
        ρ; `decision_function` = `score_samples` − `offset_`.
    support_, support_vectors_, dual_coef_, intercept_, n_support_, gamma_, objective_,
    n_iter_, free_support_, bounded_support_, fit_status_ :
        As for `SVR`.

    Examples
    --------
    >>> import numpy as np, svmkit
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> model = svmkit.OneClassSVM(nu=0.1, gamma=0.5).fit(X)
    >>> model.predict([[0.0, 0.0], [6.0, 6.0]]).tolist()
    [1, -1]
    """

    _scaled_params = ("nu",)
    _constraints = {**KernelModel._constraints, "nu": check_nu}

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, nu=0.5,
                 shrinking=True, cache_size=1024, verbose=False, max_iter=-1, warm_start=False):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.nu = nu
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.warm_start = warm_start

    def fit(self, X, y=None, sample_weight=None):
        """Fit the region. X: (n_samples, n_features) dense or CSR, or a kernel matrix; y ignored."""
        return self._fit(X, y, sample_weight)

    def _prepare(self, X, y, sample_weight):
        X = self._validate_X(X)
        return X, None, self._sample_weight(sample_weight, X)

    def _solve_problems(self, rows, row_index, target, sw, starts):
        keep = positive_rows(sw)
        problem, alpha0 = duals.one_class(sw[keep], self.nu, row_index[keep])
        fit = read_back(keep, problem, self._solve(problem, rows, alpha0, starts[0] if starts else None))
        self._summary(fit)
        return [fit]

    def _set_fitted(self, X, target, fits):
        super()._set_fitted(X, target, fits)
        self.offset_ = -self._intercept_[0]

    def decision_function(self, X):
        """Σ α_i K(x_i, x) − ρ: positive inside the region, negative outside."""
        return self._raw_decision(X).ravel()

    def score_samples(self, X):
        """Σ α_i K(x_i, x), the unshifted score."""
        return self.decision_function(X) + self.offset_

    def _predict_from_raw(self, raw):
        return np.where(raw.ravel() > 0, 1, -1)

    def predict(self, X):
        """+1 for inliers, −1 for outliers."""
        return super().predict(X)
