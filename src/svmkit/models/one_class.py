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

    ν in (0, 1] bounds the fraction of outliers from above and of support vectors from below.
    `score_samples(x)` = Σ α_i K(x_i, x); `decision_function` = score_samples − `offset_`
    (`offset_` = ρ); `predict` gives +1 inside (decision > 0) and −1 outside.
    """

    _constraints = {**KernelModel._constraints, "nu": check_nu}

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, nu=0.5,
                 shrinking=True, cache_size=1024, verbose=False, max_iter=-1):
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
        return self._decision_single(X)

    def score_samples(self, X):
        """Σ α_i K(x_i, x), the unshifted score."""
        return self.decision_function(X) + self.offset_

    def predict(self, X):
        """+1 for inliers, −1 for outliers."""
        return np.where(self.decision_function(X) > 0, 1, -1)
