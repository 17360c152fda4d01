"""Support vector regression: ε-SVR (Vapnik 1995; Smola & Schölkopf 2004) and ν-SVR (Schölkopf et al. 2000).

Both solve one dual over the 2N variables (α, α*); the regression function is
f(x) = Σ (α_i − α*_i) K(x_i, x) + b, with b averaged over the variables on the tube boundary
(Bishop 2006, §7.1.4; Chang & Lin 2011, §4) and the midpoint of the feasible interval when there are none.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.exceptions import NotFittedError

from svmkit._validation import check_nu, real, store_parameters
from svmkit.models.conformal import CVPlus
from svmkit.models.smo import formulations, on_cluster
from svmkit.models.smo.base import SMOModel
from svmkit.options import reads


class BaseSVR(CVPlus, RegressorMixin, SMOModel):
    """Regression by one 2N-variable dual over the rows of positive weight: its prediction;
    subclasses name the dual (`_formulation`)."""

    def partial_fit(self, X, y, sample_weight=None):
        """Fit on the rows (X, y) added to every row seen: the first call fits, a later one
        returns the exact optimum on all rows, warm-started from the previous (α, α*), the new
        rows' at 0."""
        return self._partial_fit(X, y, sample_weight)

    _fallback_interval = "laplace"

    def _laplace_interval(self, X, coverage):
        """method='laplace': f(x) ± σ·ln(1 / (1 − coverage)), σ = probA_[0], LIBSVM's Laplace
        noise model (Lin & Weng 2004), which carries no coverage guarantee."""
        if not hasattr(self, "probA_"):
            raise NotFittedError("method='laplace' needs a model fitted with probability=True; without it, "
                                 "calibrate with conformalize(X_cal, y_cal) or fit with fit_conformalize(X, y)")
        half = self.probA_[0] * np.log(1.0 / (1.0 - coverage))
        f = self.predict(X)
        return np.column_stack([f - half, f + half])

    def predict(self, X):
        """f(x) for every row of X."""
        return super().predict(X)


class SVR(BaseSVR):
    """ε-support vector regression, scikit-learn compatible, exact against LIBSVM (-s 3).

    Solves the ε-SVR dual (Vapnik 1995; Chang & Lin 2011, §2.4) over (α, α*); f(x) = Σ (α_i − α*_i) K(x_i, x) + b.

    Parameters
    ----------
    C : float, default 1.0
        Bound on α and α*; `np.inf` fits the hard ε-tube and raises `TubeTooNarrowError` when
        no function of the kernel fits every target within ε.
    epsilon : float, default 0.1
        Half-width of the tube inside which errors cost nothing (Vapnik's ε-insensitive loss
        max(0, |y − f| − ε), Vapnik 1995), in y's units.
    probability : bool, default False
        Also fit LIBSVM's noise model, target = f(x) + z with z Laplace, e^(−|z|/σ) / 2σ, σ from
        the residuals of an internal 5-fold cross-validation: `probA_`, `predict_interval`.
    kernel, degree, gamma, coef0, shrinking, tol, cache_size, verbose, max_iter, warm_start, random_state,
    keep_data, options :
        As for `SVC`.

    Attributes
    ----------
    probA_ : ndarray of shape (1,)
        σ of the Laplace noise model, in y's units (only with `probability`).
    conformity_scores_ : ndarray of shape (n_calibration,)
        |y − f(x)| of the rows given to `conformalize` (split conformal `predict_interval`;
        `fit_conformalize` gives CV+ from fold models instead).
    cv_plus_folds_ : int
        The folds of `fit_conformalize`'s CV+ calibration (only after it). Model files keep it but
        not the fold models: a loaded model refuses CV+ intervals until calibrated again.
    support_, support_vectors_, dual_coef_, intercept_, n_support_, coef_ (linear kernel),
    fit_status_, shape_fit_, n_features_in_ :
        As scikit-learn's SVR.
    gamma_ : float
        The γ the kernel used.
    objective_ : float
    n_iter_ : int
    inside_tube_ : ndarray
        Rows strictly inside the tube (α = α* = 0): not support vectors.
    on_tube_ : ndarray
        Free rows, 0 < α or α* < C: on the tube boundary.
    outside_tube_ : ndarray
        Bounded rows, α or α* = C: on or outside it.
    free_support_, bounded_support_, loo_bound_ :
        As for `SVC`.
    cascade_history_, cascade_timings_ :
        As for `SVC`.

    Examples
    --------
    >>> import numpy as np, svmkit
    >>> x = np.linspace(-3, 3, 50)[:, None]
    >>> model = svmkit.SVR(C=10.0, epsilon=0.05).fit(x, np.sinc(x).ravel())
    >>> bool(abs(model.predict([[0.0]])[0] - 1.0) < 0.1)
    True
    """

    _formulation = formulations.EpsilonSVR
    _constraints = {**SMOModel._constraints, "C": real(low=0, allow_inf=True),
                    "epsilon": real(low=0, low_inclusive=True),
                    "options": reads("SVR", "device", "scheduler_address", "max_rounds", "partitioning")}

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0,
                 epsilon=0.1, shrinking=True, probability=False, cache_size=1024, verbose=False, max_iter=-1,
                 random_state=None, warm_start=False, keep_data=False, options=None):
        store_parameters(self, locals())

    _fit_dask = on_cluster.fit_regressor

class NuSVR(BaseSVR):
    """ν-support vector regression, scikit-learn compatible, exact against LIBSVM (-s 4).

    Parameters
    ----------
    nu : float in (0, 1], default 0.5
        Upper bound on the fraction of points outside the tube, lower bound on the fraction of
        support vectors; the tube's width is found by the fit.
    C : float, default 1.0
        Bound on α and α*.
    kernel, degree, gamma, coef0, shrinking, tol, cache_size, verbose, max_iter, warm_start, random_state,
    probability, keep_data :
        As for `SVR`.
    options : Options or None, default None
        `svmkit.Options`; reads device only.

    Attributes
    ----------
    epsilon_ : float
        The tube's half-width the fit found.
    Others as `SVR`'s.

    Examples
    --------
    >>> import numpy as np, svmkit
    >>> x = np.linspace(-3, 3, 50)[:, None]
    >>> model = svmkit.NuSVR(nu=0.3, C=10.0).fit(x, np.sinc(x).ravel())
    >>> bool(model.epsilon_ > 0)
    True
    """

    _formulation = formulations.NuSVR
    _constraints = {**SMOModel._constraints, "C": real(low=0), "nu": check_nu, "options": reads("NuSVR", "device")}

    def __init__(self, *, nu=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, probability=False, tol=1e-3, cache_size=1024, verbose=False, max_iter=-1,
                 random_state=None, warm_start=False, keep_data=False, options=None):
        store_parameters(self, locals())

