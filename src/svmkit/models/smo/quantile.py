"""Kernel quantile regression (Takeuchi, Le, Sears & Smola 2006): the conditional τ-quantile of y
given x, f(x) = Σ a_i K(x_i, x) + b, fitted by the pinball loss ρ_τ(r) = max(τr, (τ − 1)r) of the
residuals r = y − f(x) plus ½‖f‖², on the SMO solver of the other kernel models."""

from __future__ import annotations

from svmkit._validation import real, store_parameters
from svmkit.models.smo import formulations
from svmkit.models.smo.base import SMOModel
from svmkit.models.smo.svr import BaseSVR
from svmkit.options import reads


class KernelQuantileRegressor(BaseSVR):
    """Kernel quantile regression at level τ (Takeuchi, Le, Sears & Smola, JMLR 2006).

    Minimises ½‖f‖² + C Σ_i w_i ρ_τ(y_i − f(x_i)) with the pinball loss
    ρ_τ(r) = max(τ r, (τ − 1) r), over f(x) = Σ a_i K(x_i, x) + b. Its dual,
    max aᵀy − ½ aᵀKa with C w_i (τ − 1) ≤ a_i ≤ C w_i τ and Σa = 0, is solved by the same SMO as
    SVR's (ε-SVR's dual with ε = 0 and the boxes τ C w_i and (1 − τ) C w_i).

    About a fraction τ of the training targets lies below the fit: the fraction strictly below
    is at most τ and the fraction below or on it at least τ (Takeuchi et al. 2006, Lemma 3).

    Parameters
    ----------
    quantile : float in (0, 1), default 0.5
        τ, the quantile fitted (0.5: the conditional median).
    C : float, default 1.0
        Weight of the loss against ½‖f‖²; finite.
    kernel, degree, gamma, coef0, shrinking, tol, cache_size, verbose, max_iter, warm_start, random_state, keep_data :
        As for `SVR`.
    options : Options or None, default None
        `svmkit.Options`; reads device only.

    Attributes
    ----------
    support_, support_vectors_, dual_coef_ (a_i), intercept_ (b), n_support_, coef_ (linear kernel),
    objective_, n_iter_, gamma_, fit_status_, shape_fit_, n_features_in_ :
        As for `SVR`.
    on_tube_ : ndarray
        Rows on the fit (free a_i): the residual is 0.
    outside_tube_ : ndarray
        Rows above or below the fit (a_i at its bound).

    Examples
    --------
    >>> import numpy as np, svmkit
    >>> x = np.linspace(0, 1, 200)[:, None]
    >>> y = np.random.default_rng(0).normal(size=200)
    >>> model = svmkit.KernelQuantileRegressor(quantile=0.9, C=10.0).fit(x, y)
    >>> bool(abs(np.mean(y < model.predict(x)) - 0.9) < 0.05)
    True
    """

    #: LIBSVM's noise model is ε-SVR's; a quantile fit has none.
    probability = False
    _formulation = formulations.Quantile
    # no noise model of its own: split conformal and CV+ only
    _fallback_interval = None
    _constraints = {**SMOModel._constraints, "C": real(low=0), "quantile": real(low=0, high=1),
                    "options": reads("KernelQuantileRegressor", "device")}

    def __init__(self, *, quantile=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, tol=1e-3, cache_size=1024, verbose=False, max_iter=-1,
                 random_state=None, warm_start=False, keep_data=False, options=None):
        store_parameters(self, locals())
