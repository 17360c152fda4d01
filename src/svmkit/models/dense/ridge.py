"""Kernel ridge regression (Saunders, Gammerman & Vovk 1998; Bishop 2006, §6.1): f(x) = Σ_i β_i K(x_i, x) with
β = (K + λI)⁻¹y, λ = `alpha`, as scikit-learn's KernelRidge; exact leave-one-out residuals
from the same factorisation."""

from __future__ import annotations

import functools

import numpy as np
from sklearn.base import MultiOutputMixin, RegressorMixin

from svmkit._arrays import holds_float32, to_host
from svmkit._metrics import r2_from_residuals
from svmkit._validation import check_bool, check_gamma, check_real, real, store_parameters, validate_Xy, validate_sample_weight
from svmkit.models.dense import on_cluster
from svmkit.models.conformal import JackknifePlus
from svmkit.models.dense.base import DenseExpansionModel
from svmkit.models.dense.updates import UpdatableClosedForm
from svmkit.models.expansion import FitSession, Targets
from svmkit.options import reads
from svmkit.solvers.dense.factorisations import leave_one_out_blocks


def ridge_loo(scaled: np.ndarray, s: np.ndarray, inverse_diag: np.ndarray) -> np.ndarray:
    """Leave-one-out residuals of weighted kernel ridge, A = SKS + λI, β' = A⁻¹Sy: since
    y − ŷ = λβ'/s and 1 − H_ii = λ(A⁻¹)_ii, (y − ŷ)_i / (1 − H_ii) = β'_i / (s_i (A⁻¹)_ii)."""
    return scaled / (s * inverse_diag[:, None])


class KernelRidge(JackknifePlus, UpdatableClosedForm, MultiOutputMixin, RegressorMixin, DenseExpansionModel):
    """Kernel ridge regression: β = (K + λI)⁻¹y (Saunders, Gammerman & Vovk 1998), f(x) = Σ_i β_i K(x_i, x).

    Parameters
    ----------
    alpha : float, default=1.0
        The ridge λ > 0 (scikit-learn's `alpha`).
    kernel : {'linear', 'rbf', 'poly', 'sigmoid', 'precomputed'} or callable, default='linear'
        As scikit-learn's KernelRidge, the linear kernel by default.
    gamma : float, 'scale', 'auto' or None, default=None
        Kernel coefficient; None is 1 / n_features, as scikit-learn's KernelRidge.
    degree : int, default=3
    coef0 : float, default=1.0
    solver : {'auto', 'cholesky', 'eigen', 'nystrom'}, default='auto'
        'cholesky': one Cholesky factorisation of K + λI in float32, the solution refined to
        float64 accuracy by conjugate gradient preconditioned with it (a few steps; a float64
        factorisation when that fails, and always with `loo`). On the CPU the kernel is computed
        by blocks of rows into packed triangles, K in float64 and the factor in float32: 6 bytes
        × N² in all, never the N × N kernel (with `loo`: the float64 kernel, 8 bytes × N²).
        'eigen': the eigendecomposition of K (`KernelRidgeCV` reuses one for eight λ or more).
        'nystrom': M centres, memory O(N·M + M²), never the N × N kernel: up to 4,096 centres
        the normal equations (K_NMᵀK_NM + λK_MM)β = K_NMᵀy are summed over row blocks in one
        pass and solved by Cholesky; past that, conjugate gradient preconditioned as Falkon
        (Rudi et al. 2017). 'auto': 'cholesky' up to 30,000 rows, else 'nystrom'.
    n_components : int or None, default=None
        Nyström centres M (None: 2,000, or every row when fewer).
    centers : {'uniform', 'leverage'}, default='uniform'
        How the Nyström centres are drawn: uniformly, or in proportion to approximate ridge
        leverage scores (through 512 uniformly drawn rows; one more pass over the data).
    random_state : int, Generator or None, default=None
        Draws the Nyström centres.
    tol : float, default=1e-6
        Nyström CG only (more than 4,096 centres): CG stops when the normal equations'
        residual is below tol times the right-hand side's norm.
    loo : bool, default=False
        Also compute the exact leave-one-out residuals (exact solvers only): one more N³/3
        with 'cholesky', O(N²) with 'eigen'.
    options : Options or None, default=None
        `svmkit.Options`; reads device and scheduler_address. device='cuda': the float64 kernel
        and the 'cholesky' or 'eigen' solver (cuSOLVER) on the GPU through CuPy ('auto' is
        'cholesky' there); 'nystrom' computes its K_NM blocks there and sums the normal
        equations there (up to 4,096 centres; the M × M solve on the host) or runs its CG
        products there (more centres; the M × M preconditioner on the host). Dask arrays are
        refused there (device='cpu' runs them). Prediction computes its kernel blocks there in
        float64.
    keep_data : bool, default=False
        Keep every training row (`retained_X_`, `retained_y_`, `retained_weight_`) so that
        `partial_fit` and `forget` update the model exactly; costs the rows' memory.
        `partial_fit` keeps them always. With 'cholesky' or 'auto' (on the host) the float64
        Cholesky factor of K + λI is kept too (8 bytes × N², with room for a tenth more rows:
        about 9.7 bytes × N²; the fit reads the kernel into it by blocks of rows, and
        factorises in float64, about twice a plain fit's float32 factorisation):
        `partial_fit` borders it, O(N²·m) for m rows; `forget` solves the remaining rows at
        once (the Schur complement of the inverse, about N²·m/3) and downdates the factor at the
        next update; `loo_residuals_` updated exactly; 'nystrom' refits on every row kept;
        device='cuda' refuses keep_data.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        β, in scikit-learn's layout (Nyström: one row per centre).
    X_fit_ : ndarray or CSR matrix
        The training data (Nyström: the centres).
    support_ : ndarray of shape (n_centres,)
        Every training row (Nyström: the centres' rows); every point carries weight.
    gamma_ : float
        The resolved γ.
    loo_residuals_ : ndarray, like y
        y_i − f₋ᵢ(x_i), the fit without row i, = (y − ŷ)_i / (1 − H_ii) with H the hat matrix.
    loo_score_ : float
        R² of the leave-one-out predictions.
    conformity_scores_ : ndarray, like y
        |y − f(x)| of the rows given to `conformalize` (split conformal `predict_interval`;
        `fit_conformalize` gives jackknife+ from the exact leave-one-out fits instead).

    Examples
    --------
    >>> import numpy as np
    >>> from svmkit import KernelRidge
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> model = KernelRidge(kernel="rbf", alpha=1e-3, gamma=10.0, loo=True).fit(X, np.sin(4 * X[:, 0]))
    >>> round(float(model.predict([[0.5]])[0]), 3), model.loo_score_ > 0.99
    (0.91, True)
    """

    _constraints = {**DenseExpansionModel._constraints, "alpha": real(low=0), "loo": check_bool,
                    "options": reads("KernelRidge", "device", "scheduler_address"),
                    "gamma": functools.partial(check_gamma, allow_none=True), "keep_data": check_bool}

    def __init__(self, alpha=1.0, kernel="linear", gamma=None, degree=3, coef0=1.0, solver="auto",
                 n_components=None, centers="uniform", random_state=None, tol=1e-6, loo=False, options=None,
                 keep_data=False):
        store_parameters(self, locals())

    def fit(self, X, y, sample_weight=None):
        """Fit β. X: (n_samples, n_features) dense or CSR, or a kernel matrix; y: (n_samples,)
        or (n_samples, n_targets); sample_weight scales each row's squared error."""
        return super().fit(X, y, sample_weight)

    def partial_fit(self, X, y, sample_weight=None):
        """Fit on every row seen: the first call fits X, later ones add X's rows by bordering
        the factor of K + λI (O(N²·m) for m rows; `loo_residuals_` updated exactly)."""
        return self._partial_fit(X, y, sample_weight, None)

    def _targets(self, X, y, sample_weight):
        """Validated X, the targets as columns Y, and the weights (None without sample_weight).
        Weighted rows solve A = SKS + λI with S = diag(√w), β = S·A⁻¹·S·y."""
        fit_float32 = holds_float32(X) and holds_float32(y)
        X, y = validate_Xy(self, X, y, y_numeric=True, multi_output=True)
        y = np.asarray(y, dtype=np.float64)
        weight = None if sample_weight is None else validate_sample_weight(sample_weight, X)
        return Targets(X, y.reshape(y.shape[0], -1), weight, {"_fit_float32": fit_float32, "_multi_output": y.ndim == 2})

    @staticmethod
    def _root_weights(session: FitSession):
        """S = √w as a column, and as the kernel's scale (None without sample weights)."""
        if session.weight is None:
            return np.ones((session.X.shape[0], 1)), None
        s = np.sqrt(session.weight)
        return s[:, None], s

    def _solve_session(self, session: FitSession, starts):
        Y = session.target
        s, scale = self._root_weights(session)
        if self.loo and not np.all(s > 0):
            raise ValueError("loo=True needs every sample_weight positive: a row of weight 0 takes no "
                             "part in the fit, so leaving it out changes nothing to measure")
        solver = self._solver_for(session, Y.shape[0])
        if solver == "nystrom":
            centres, beta, _ = self._nystrom(session, session.Xk, s * Y, self.alpha, bias=False, row_scale=scale)
        else:
            centres = np.arange(Y.shape[0])
            factor = self._kept_factor(session, solver, self.alpha, scale)
            scaled = to_host(factor.solve(s * Y))
            beta = s * scaled
            self._keep_loo_inverse(lambda: leave_one_out_blocks(factor, scale))
            if self.loo:
                loo = ridge_loo(scaled, s, to_host(factor.inverse_diag()))
                self.loo_residuals_ = loo if self._multi_output else loo.ravel()
                self.loo_score_ = r2_from_residuals(Y, loo)
        self._store_expansion(session, centres, beta, np.zeros(Y.shape[1]))

    def _gamma_param(self):
        """γ as given; None is 1 / n_features, as scikit-learn's KernelRidge."""
        return "auto" if self.gamma is None else self.gamma

    def _prediction(self):
        return {**super()._prediction(), "X_fit_": self.support_vectors_,
                "dual_coef_": self._dual_coef_.T if self._multi_output else self._dual_coef_.ravel()}

    _fit_dask = on_cluster.fit_ridge

    def predict(self, X):
        """f(x) for every row of X; a Dask array gives a lazy Dask array, block by block. In
        float32 when X and y were float32 at fit and X is float32, as scikit-learn's."""
        f = super().predict(X)
        return f.astype(np.float32) if getattr(self, "_fit_float32", False) and holds_float32(X) else f

    def _loo_scores(self, session: FitSession, values):
        """Leave-one-out R² for each λ in `values`, from factorisations of SKS + λI
        (`shifted_scores`: one eigendecomposition serves many λ); a λ at which SKS + λI is
        not positive definite gives a NotPositiveDefiniteError in place of its score."""
        lams = [check_real(lam, "alpha", low=0) for lam in values]
        Y = session.target
        s, scale = self._root_weights(session)
        K = session.backend.matrix(session.kernel, session.Xk, scale)
        return list(session.backend.shifted_scores(K, lams, lambda at: r2_from_residuals(
            Y, ridge_loo(to_host(at.solve(s * Y)), s, to_host(at.inverse_diag())))))

    def _predict_from_raw(self, raw):
        return raw if self._multi_output else raw.ravel()
