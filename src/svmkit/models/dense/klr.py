"""Kernel logistic regression (Zhu & Hastie 2005): by the representer theorem (Schölkopf,
Herbrich & Smola 2001) the
minimiser of the regularised logistic loss over the feature space is f(x) = Σ_n β_n K(x_n, x) + b,
with β dense — every training point carries weight, unlike an SVM's sparse α."""

from __future__ import annotations


import numpy as np
import scipy.linalg as la
from scipy.special import expit, softmax
from sklearn.base import ClassifierMixin
from sklearn.exceptions import ConvergenceWarning

from svmkit._validation import check_bool, check_class_weight, check_components, check_max_iter, check_seed, encode_classes, one_of, real, row_weights, store_parameters, validate_Xy
from svmkit.exceptions import warn
from svmkit.models.conformal import ConformalClassifier
from svmkit.models.dense import on_cluster
from svmkit.models.dense.base import DenseExpansionModel
from svmkit.models.dense.updates import UpdatableNewton
from svmkit.models.expansion import FitSession, KernelExpansion, Targets
from svmkit.options import reads
from svmkit.solvers.dense.newton import dense_operator, feature_operator, kernel_logistic_newton, nystrom_features
from svmkit.solvers.dense.nystrom import NYSTROM_BLOCK_ELEMENTS

#: Nyström columns of the exact solver's CG preconditioner.
PRECONDITIONER_COLUMNS = 500


class KernelLogisticRegression(ConformalClassifier, UpdatableNewton, ClassifierMixin, DenseExpansionModel):
    """Kernel logistic regression, binary (logistic) and multinomial (softmax), fitted exactly
    by Newton's method in the representer coefficients β.

    Minimises J(β, b) = ½ Σ_c β_cᵀKβ_c + C Σ_n w_n ℓ(y_n, f(x_n)), f = Kβ + b, the intercept b
    not penalised, w_n = sample_weight_n · class_weight[y_n]. This is Zhu & Hastie's (2005)
    (λ/N)·βᵀKβ + (1/N)·Σ ln(1 + exp(−y_n f(x_n))), multiplied by N/(2λ): `C` = 1/(2λ), so that with the linear kernel it is scikit-learn's
    LogisticRegression(C=C) (whose penalty is ½‖w‖²) on the raw features.

    Parameters
    ----------
    C : float, default 1.0
        Inverse regularisation, scikit-learn's convention (C = 1/(2λ) in Zhu & Hastie's λ).
    kernel : {'rbf', 'linear', 'poly', 'sigmoid', 'precomputed'} or callable, default 'rbf'
    gamma : 'scale', 'auto' or float, default 'scale'
    degree : int, default 3
    coef0 : float, default 0.0
    tol : float, default 1e-6
        Stop when the gradient's largest component is below tol times its value at β = 0.
    max_iter : int, default 100
        Newton steps at most.
    class_weight : dict, 'balanced' or None, default None
        Multiplies the loss of each row of a class, as scikit-learn's LogisticRegression;
        'balanced': n_samples / (n_classes · count of the class).
    solver : {'newton', 'nystrom'}, default 'newton'
        'newton': exact, on the N × N kernel (float64); each Newton system
        I + R K R (R² the weighted logistic curvature) is solved by Cholesky when N·k ≤ 2,500,
        else by conjugate gradient preconditioned with a 500-column Nyström approximation
        (truncated Newton). 'nystrom': the same Newton on K ≈ K_NM K_MM⁻¹ K_MN with M centres,
        memory O(N·M); the model keeps only the centres.
    n_components : int or None, default None
        Nyström centres M (None: 2,000, or every row when fewer).
    centers : {'uniform', 'leverage'}, default 'uniform'
        How the centres are drawn (see `KernelRidge`).
    random_state : int, Generator or None, default None
        Draws the Nyström centres and the preconditioner's columns.
    options : Options or None, default None
        `svmkit.Options`; reads device and scheduler_address. device='cuda': with
        solver='newton', the float64 kernel matrix on the GPU through CuPy, and the Newton
        systems' products with it there (the rest of each step on the host; up to 2,500 rows ×
        classes each system is factorised on the host, from one copy of K); with 'nystrom', the
        blocks of K_NM computed there in float64 and the Newton steps on the host. Prediction
        computes its kernel blocks there in float64.
    keep_data : bool, default False
        Keep every training row (`retained_X_`, `retained_y_`, `retained_weight_`) so that
        `partial_fit` and `forget` update the model exactly; costs the rows' memory.
        `partial_fit` keeps them always. With 'newton' an update starts Newton from the
        previous β (new rows at 0, forgotten rows dropped); 'nystrom' refits.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (1, n_centres) (binary) or (n_classes, n_centres)
        β per class, dense (every training row, or every centre with 'nystrom').
    intercept_ : ndarray of shape (1,) or (n_classes,)
    support_, support_vectors_ :
        The rows the expansion uses: all of them, or the Nyström centres.
    objective_ : float
        J at the solution.
    n_iter_ : int
        Newton steps taken.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from svmkit import KernelLogisticRegression
    >>> X, y = load_iris(return_X_y=True)
    >>> model = KernelLogisticRegression(C=10.0).fit(X, y)
    >>> model.predict(X[[0, 60, 120]]).tolist(), model.predict_proba(X[:1]).round(2).tolist()
    ([0, 1, 2], [[0.99, 0.01, 0.0]])
    """

    _constraints = {**KernelExpansion._constraints, "C": real(low=0), "tol": real(low=0),
                    "max_iter": check_max_iter, "solver": one_of("newton", "nystrom"),
                    "n_components": check_components, "centers": one_of("uniform", "leverage"),
                    "class_weight": check_class_weight, "random_state": check_seed,
                    "options": reads("KernelLogisticRegression", "device", "scheduler_address"),
                    "keep_data": check_bool}

    def __init__(self, *, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-6, max_iter=100,
                 class_weight=None, solver="newton", n_components=None, centers="uniform", random_state=None,
                 options=None, keep_data=False):
        store_parameters(self, locals())

    _fit_dask = on_cluster.fit_klr

    def fit(self, X, y, sample_weight=None):
        """Fit β and b. X: (n_samples, n_features) dense or CSR, or a kernel matrix; y: labels;
        sample_weight scales each row's loss."""
        return super().fit(X, y, sample_weight)

    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """Fit on every row seen: the first call fits X (`classes`: every label the calls will
        bring, as scikit-learn's partial_fit), later ones add X's rows, Newton starting from
        the previous β with the new rows' at 0."""
        return self._partial_fit(X, y, sample_weight, classes)

    def _targets(self, X, y, sample_weight):
        """Validated X, the class indicator columns T (one column for two classes) and each
        row's weight C·w, with `classes_`."""
        if self.max_iter == -1:
            raise ValueError("max_iter must be a positive number of Newton steps, got max_iter=-1")
        X, y = validate_Xy(self, X, y)
        classes, y_enc = encode_classes(y, type(self).__name__)
        T = (y_enc[:, None] == 1).astype(np.float64) if classes.shape[0] == 2 else np.eye(classes.shape[0])[y_enc]
        weight = row_weights(self.class_weight, classes, sample_weight, X, y_enc)
        return Targets(X, T, self.C * weight, {"classes_": classes})

    def _solve_session(self, session: FitSession, starts):
        backend, kernel, Xk, T, weight = session.backend, session.kernel, session.Xk, session.target, session.weight
        n = T.shape[0]
        backend.require("newton" if self.solver == "newton" else "newton-nystrom", f"solver={self.solver!r}",
                        "fits with solver='newton'")
        seed = np.random.default_rng(self.random_state).integers(2**31 - 1)
        if self.solver == "newton":
            op = dense_operator(backend.matrix(kernel, Xk), PRECONDITIONER_COLUMNS, seed, backend.xp)
            res = kernel_logistic_newton(op, T, weight, self.tol, self.max_iter, start=vars(self).get("_start"))
            self._store_expansion(session, np.arange(n), res.beta, res.intercept)
        else:
            centres = self._centres(n, kernel, Xk, 1.0 / self.C)
            rows = backend.centre_rows(kernel, Xk, centres, NYSTROM_BLOCK_ELEMENTS)
            step = max(1, NYSTROM_BLOCK_ELEMENTS // centres.size)
            K_NM = np.vstack([backend.to_host(rows(slice(lo, lo + step), keep=True)) for lo in range(0, n, step)])
            C_k = Xk[centres]
            Phi, T_mm = nystrom_features(K_NM, kernel.block(C_k, C_k))
            del K_NM
            res = kernel_logistic_newton(feature_operator(Phi), T, weight, self.tol, self.max_iter)
            # f(x) = k(x, centres)·T⁻¹Φᵀβ + b: the expansion over the centres
            coef = la.solve_triangular(T_mm, Phi.T @ res.beta, lower=False, check_finite=False)
            self._store_expansion(session, centres, coef, res.intercept)
        self._keep_newton(res)

    def _keep_newton(self, res):
        """J and the step count of a finished Newton fit (in memory or on a cluster); a
        ConvergenceWarning when it stopped short of tol."""
        self.objective_ = res.objective
        self.n_iter_ = res.n_iter
        if not res.converged:
            warn(f"Newton stopped before the gradient fell below tol={self.tol} (max_iter={self.max_iter}, or "
                 "no descent step left); increase max_iter or tol", ConvergenceWarning)

    def decision_function(self, X):
        """f(x) = Σ β_n K(x_n, x) + b: shape (n,) for two classes (> 0 means classes_[1]), else
        (n, n_classes)."""
        raw = self._raw_decision(X)
        return raw.ravel() if raw.shape[1] == 1 else raw

    def predict_proba(self, X):
        """P(class | x): the logistic σ(f) for two classes, softmax(f) for more; columns in
        `classes_` order."""
        raw = self._raw_decision(X)
        if raw.shape[1] == 1:
            p = expit(raw[:, 0])
            return np.column_stack([1 - p, p])
        return softmax(raw, axis=1)

    def predict_log_proba(self, X):
        """log P(class | x)."""
        return np.log(self.predict_proba(X))

    def _predict_from_raw(self, raw):
        if raw.shape[1] == 1:
            return self.classes_[(raw[:, 0] > 0).astype(np.int64)]
        return self.classes_[np.argmax(raw, axis=1)]

    def predict(self, X):
        """The class of highest probability for every row of X."""
        return super().predict(X)
