"""One-class SVM (Schölkopf et al. 2001): the smallest region of feature space holding a
1 − ν fraction of the data, f(x) = Σ α_i K(x_i, x) − ρ, with f ≥ 0 inside."""

from __future__ import annotations


import numpy as np
from sklearn.base import OutlierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from svmkit._validation import check_nu, store_parameters
from svmkit.models.smo import formulations
from svmkit.models.smo.probability import density_probability
from svmkit.models.smo.base import SMOModel, available_if
from svmkit.options import reads


class OneClassSVM(OutlierMixin, SMOModel):
    """Novelty detection, scikit-learn compatible, exact against LIBSVM (-s 2).

    Solves min ½ αᵀKα, Σα = ν Σw, 0 ≤ α_i ≤ w_i (Schölkopf et al. 2001); the region is
    f(x) = Σ α_i K(x_i, x) − ρ ≥ 0.

    Parameters
    ----------
    nu : float in (0, 1], default 0.5
        Upper bound on the fraction of outliers, lower bound on the fraction of support vectors.
    probability : bool, default False
        Also compute LIBSVM's 10 density marks of the training decision values (needs at least 5
        on each side of the boundary) for `predict_proba`.
    kernel, degree, gamma, coef0, shrinking, tol, cache_size, verbose, max_iter, warm_start, keep_data :
        As for `SVC`.
    options : Options or None, default None
        `svmkit.Options`; reads device only.

    Attributes
    ----------
    offset_ : ndarray of shape (1,)
        ρ; `decision_function` = `score_samples` − `offset_`.
    support_, support_vectors_, dual_coef_, intercept_, n_support_, gamma_, objective_,
    n_iter_, free_support_, bounded_support_, fit_status_ :
        As for `SVR`.
    prob_density_marks_ : ndarray of shape (10,)
        With `probability`: the decision values separating the probability bins.

    Examples
    --------
    >>> import numpy as np, svmkit
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> model = svmkit.OneClassSVM(nu=0.1, gamma=0.5).fit(X)
    >>> model.predict([[0.0, 0.0], [6.0, 6.0]]).tolist()
    [1, -1]
    """

    _formulation = formulations.OneClass
    _constraints = {**SMOModel._constraints, "nu": check_nu, "options": reads("OneClassSVM", "device")}

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, nu=0.5,
                 shrinking=True, probability=False, cache_size=1024, verbose=False, max_iter=-1, warm_start=False, keep_data=False, options=None):
        store_parameters(self, locals())

    def partial_fit(self, X, y=None, sample_weight=None):
        """Fit on the rows X added to every row seen: the first call fits, a later one returns
        the exact optimum on all rows, warm-started from the previous α rescaled to the new
        Σα = ν Σw, the new rows at 0."""
        return self._partial_fit(X, None, sample_weight)

    @available_if(SMOModel._check_proba)
    def predict_proba(self, X):
        """(P(normal), P(outlier)) per row of X from the density marks of the training decision
        values (LIBSVM 3.30): 0.001 below the first mark, 0.999 above the last, i/10 between."""
        check_is_fitted(self)
        if not hasattr(self, "prob_density_marks_"):
            raise NotFittedError("predict_proba is not available: the model has no density marks")
        p = density_probability(self.decision_function(X), self.prob_density_marks_)
        return np.column_stack([p, 1 - p])

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
