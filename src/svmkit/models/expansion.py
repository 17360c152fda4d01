"""The base of every kernel model: the fit session (the parameters checked, the data validated
into the model's targets, the kernel resolved on it, the backend chosen), centres and their
weights, and f(x) = Σ_s W[s] K(x, c_s) + b evaluated in blocks (Vapnik 1998 for the SVM; the representer theorem, Schölkopf, Herbrich
& Smola 2001, for kernel ridge, LS-SVM and kernel logistic regression), and the primal weights
of the linear kernel."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from svmkit._arrays import densify
from svmkit._validation import check_coef0, check_degree, check_gamma, check_kernel, check_params, is_dask, validate_X
from svmkit.backend import backend_for
from svmkit.kernels.kinds import kernel_kind, make_kernel
from svmkit.models.conformal import drop_calibration
from svmkit.options import options_of
from svmkit.parallel.blocks import LazyOnDask
from svmkit.registry import fitted_of

#: The estimators that fit Dask collections, as the error of the others names them.
ON_DASK = ("SVC and SVR (the cascade), LinearSVC and LinearSVR (dual=False), KernelRidge, "
           "KernelLogisticRegression, LSSVC and LSSVR (solver='nystrom')")


#: What prediction derives from the fitted state (`_prediction`), made on first use.
PREDICTION = frozenset({"_kind", "_predict_centres", "_W", "dual_coef_", "intercept_", "X_fit_"})


def read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass
class Targets:
    """What a model fits, from its validated data: X, the targets (class numbers, real values,
    indicator columns, or None), each row's weight, and the fitted attributes read from the
    data (`classes_`, `class_weight_`, …)."""

    X: object
    target: object
    weight: object
    fitted: dict = field(default_factory=dict)


@dataclass
class FitSession:
    """One fit's inputs, made once and handed down: the backend, the kernel kind resolved on
    the data, the validated data X and Xk (in the kernel's layout), the model's targets and row
    weights. `fitted`: the attributes the data sets (`classes_`, `n_features_in_`, `gamma_`,
    …), given to every estimator fitted on the session; `rows`: the training kernel's rows when
    shared (None: the fit makes its own), training row i being row `row_index[i]` of them."""

    backend: object
    kernel: object
    X: object
    Xk: object
    target: object
    weight: object
    fitted: dict = field(default_factory=dict)
    rows: object = None
    row_index: np.ndarray | None = None

    def index(self) -> np.ndarray:
        """Each training row's row in `rows` (itself when the rows are the fit's own)."""
        return np.arange(self.X.shape[0]) if self.row_index is None else np.asarray(self.row_index, dtype=np.int64)


#: The attributes scikit-learn's validation sets from the data.
_FROM_DATA = ("n_features_in_", "feature_names_in_")


def open_session(estimator, X, y=None, sample_weight=None, *, rows=None, row_index=None) -> FitSession:
    """Check `estimator`'s parameters, validate (X, y, sample_weight) into its targets
    (`estimator._targets`), resolve the kernel on them and choose the backend: the session
    serves it and every estimator differing from it in C or ν only. `rows`: a row source of
    the kernel this estimator resolves on the data from which X's rows are taken, X's row i
    being row `row_index[i]` of it."""
    estimator.check_parameters()
    kernel_kind(estimator.kernel).check_solver(getattr(estimator, "solver", None))
    targets = estimator._targets(X, y, sample_weight)
    X = targets.X
    kernel = make_kernel(estimator.kernel, X, estimator._gamma_param(), estimator.degree, estimator.coef0)
    kernel.check_input(X)
    fitted = {name: getattr(estimator, name) for name in _FROM_DATA if hasattr(estimator, name)}
    fitted.update(targets.fitted, gamma_=kernel.gamma)
    return FitSession(estimator._backend(), kernel, X, kernel.training_input(X),
                      targets.target, targets.weight, fitted, rows, row_index)


class KernelExpansion(LazyOnDask, BaseEstimator):
    """A fitted kernel expansion: `gamma_` (the resolved γ), the centres `support_vectors_`
    (rows `support_` of the training data), the weights `_dual_coef_` and intercepts
    `_intercept_`; subclasses say what their targets are (`_targets`) and how a session is
    solved and stored (`_fit_session`). Prediction needs only the fitted state; on a Dask
    array or dataframe it is lazy, block by block on the workers (`LazyOnDask`)."""

    #: Each parameter's check (name → check(value, name)), run by `check_params` at fit before
    #: any data is read (`make_kernel` checks the kernel's parameters again for its other callers).
    _constraints = {"kernel": check_kernel, "gamma": check_gamma,
                    "degree": check_degree, "coef0": check_coef0}
    #: Precision of the kernel blocks of prediction on a GPU (`device='cuda'`).
    _device_dtype = np.float32

    def check_parameters(self):
        """Raise the error fit raises for these parameters (scikit-learn's InvalidParameterError,
        naming the parameter), before any data is read."""
        check_params(self, self._constraints)

    def fit(self, X, y=None, sample_weight=None):
        """Fit the model. X: (n_samples, n_features) dense or CSR, or a kernel matrix; a Dask
        array or dataframe is fitted where it lives by the estimators that can (`ON_DASK`)."""
        if is_dask(X):
            return self._fit_dask(X, y, sample_weight)
        return self._fit_session(open_session(self, X, y, sample_weight))

    def _fit_dask(self, X, y, sample_weight):
        """The fit of a Dask X: refused by the estimators that fit in memory only."""
        raise ValueError(f"{type(self).__name__} fits data in memory only: call .compute() on the Dask "
                         f"collection first, or fit one of {ON_DASK} on the cluster")

    def _backend(self):
        """The backend of `options.device` (models without options run on the host)."""
        return backend_for(options_of(self).device)

    def _fit_session(self, session: FitSession, starts=None):
        """Solve and store on `session` (made for this model or one differing in C or ν only)."""
        self.check_parameters()
        drop_calibration(self)
        vars(self).update(session.fitted)
        self._solve_session(session, starts)
        return self

    def _gamma_param(self):
        """The γ parameter the kernel resolves."""
        return self.gamma

    def _targets(self, X, y, sample_weight):
        """The model's `Targets` of the data (`models.smo.formulations.Targets`)."""
        raise NotImplementedError

    def _solve_session(self, session: FitSession, starts):
        """Solve the model's problems on the session and store the fitted state."""
        raise NotImplementedError

    def _store_support(self, session: FitSession, support):
        """Keep the support vectors as the kernel kind needs them (the training rows, dense or
        CSR, as scikit-learn does; none for a precomputed kernel)."""
        self.support_ = np.asarray(support, dtype=np.int32)
        self.support_vectors_ = session.kernel.support_vectors(session.X, self.support_)

    def __getattr__(self, name):
        # what prediction derives (PREDICTION) is kept in the cache a fit leaves (`_prepared`),
        # the rest of it made on first use, so that predicting leaves the attributes as they are
        prepared = vars(self).get("_prepared")
        if name in PREDICTION and prepared is not None:
            if "_kind" not in prepared:
                prepared.update(self._prediction_kernel())
            if name not in prepared:
                prepared.update(self._prediction())
            if name in prepared:
                return prepared[name]
        return object.__getattribute__(self, name)  # the lookup's own error (a descriptor's names its cause)

    def _prediction_kernel(self) -> dict:
        """The kernel of prediction and its centres ready for the products (a fit makes them)."""
        kind = make_kernel(self.kernel, self.support_vectors_, self.gamma_, self.degree, self.coef0)
        return {"_kind": kind, "_predict_centres": kind.centres(self.support_vectors_, self.support_)}

    def _prediction(self) -> dict:
        """The rest of what prediction uses (`PREDICTION`): the weight matrix and the public
        coefficients."""
        return {"_W": self._dual_coef_.T, "dual_coef_": self._dual_coef_, "intercept_": self._intercept_.copy()}

    def fitted_state(self) -> dict:
        """The fitted attributes a model file keeps (its entry in svmkit.registry), by name."""
        check_is_fitted(self)
        return {name: getattr(self, name) for name in fitted_of(type(self)) if hasattr(self, name)}

    def set_fitted_state(self, state: dict):
        """Give this estimator the fitted attributes in `state` (names its registry entry lists;
        others are refused) and prepare it to predict."""
        unknown = sorted(set(state) - set(fitted_of(type(self))))
        if unknown:
            raise ValueError(f"not fitted attributes of a {type(self).__name__}: {unknown}")
        vars(self).update(state)
        if "shape_fit_" in state:
            self.shape_fit_ = tuple(int(v) for v in state["shape_fit_"])
        # at once: a state that cannot predict is refused here
        self._prepared = {**self._prediction_kernel(), **self._prediction()}
        return self

    def libsvm_expansion(self) -> tuple[np.ndarray, np.ndarray]:
        """(sv_coef, rho) as LIBSVM's model files hold them: one row of coefficients per problem
        over the support vectors, f = Σ sv_coef·K − rho (LIBSVM's sign convention)."""
        check_is_fitted(self)
        return np.asarray(self._dual_coef_), -np.asarray(self._intercept_)

    def decision_expansion(self) -> tuple[np.ndarray, np.ndarray]:
        """(W, b) of the raw decision values K(X, support_vectors_) W + b: one column per
        fitted problem (for SVC and NuSVC, per one-vs-one class pair, in LIBSVM's sign
        convention, which `decision_function` turns for two classes)."""
        check_is_fitted(self)
        return np.asarray(self._W, dtype=np.float64), np.asarray(self._intercept_, dtype=np.float64).ravel()

    @property
    def coef_(self):
        """w = Σ coef_i x_i (Vapnik 1998); linear kernel only. Read-only: it is derived from the
        dual coefficients, so writing to it would change nothing."""
        return read_only(self._primal_weights())

    def _raw_decision(self, X):
        """Σ_s W[s, k] K(x, c_s) + b_k for every row of X, one column k per fitted problem."""
        return self._raw_of(self._check_predict_X(X))

    def _raw_of(self, X, first_row=0):
        """`_raw_decision` of X validated; `first_row`: the number of X's first row, which an
        error names."""
        return self._check_finite(self._support_kernel_products(X, self._W) + self._intercept_, first_row)

    def _check_finite(self, raw, first_row):
        """`raw`, the decision values of rows from `first_row` on, once they are all finite."""
        bad = np.flatnonzero(~np.isfinite(raw).all(axis=1))
        if bad.size:
            raise ValueError(f"the decision value of X row {first_row + bad[0]} is not finite: the {self._kind.name!r} kernel's values "
                             f"overflow float64 there, set by {self._kind.values_set_by()}; lower them or scale the data")
        return raw

    def _predict_from_raw(self, raw):
        """The prediction from the raw decision values (a single problem's: the values)."""
        return raw.ravel()

    def predict(self, X):
        """The prediction for every row of X."""
        return self._predict_from_raw(self._raw_decision(X))

    def _check_predict_X(self, X):
        check_is_fitted(self)
        X = validate_X(self, X, reset=False)
        self._kind.check_input(X, self.shape_fit_[0])
        return X

    def _support_kernel_products(self, X, W):
        """K(X, SV) @ W for every row of X, computed in blocks (W: n_SV × k)."""
        return self._backend().products(self._predict_centres, X, W, self._device_dtype)

    def _primal_weights(self):
        """w = Σ coef_i x_i per column of the coefficient matrix; linear kernel only."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        sv, W = self.support_vectors_, np.asarray(self._W)
        coef = np.vstack([W[:, k] @ sv for k in range(W.shape[1])])
        return np.asarray(densify(coef))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
