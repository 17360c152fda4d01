"""The base of every kernel model: a kernel resolved on the training data, centres and their
weights, f(x) = Σ_s W[s] K(x, c_s) + b evaluated in blocks (seed 000 (9.39) for the SVM; the
representer theorem for kernel ridge, LS-SVM and kernel logistic regression), input checks,
and the primal weights of the linear kernel."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmkit._validation import check_finite_rows, check_precomputed
from svmkit.gpu.gram import device_kernel_products
from svmkit.gpu.runtime import array_module, to_host
from svmkit.kernels.gram import (TRAIN_OVERLAP, SparseColumns, as_kernel_input, kernel_block, row_sq_norms)
from svmkit.kernels.spec import check_kernel, make_kernel

#: Elements of one K(X_block, SV) block at prediction time.
_PREDICT_BLOCK = 2**19
#: Accepted layouts of X; non-finite values are found by check_finite_rows, which names the row.
_X_FORMAT = dict(accept_sparse="csr", dtype=np.float64, order="C", accept_large_sparse=True,
                 ensure_all_finite=False)


def read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def check_kernel_range(X) -> None:
    """Raise a ValueError naming the first row of X whose squared norm overflows float64:
    every kernel of it would be inf or NaN."""
    with np.errstate(over="ignore"):
        bad = np.flatnonzero(~np.isfinite(row_sq_norms(X)))
    if bad.size:
        raise ValueError(f"X row {bad[0]} has values too large for the kernel (its squared norm overflows "
                         "float64); scale the data (e.g. with MinMaxScaler)")


class KernelExpansion(BaseEstimator):
    """A fitted kernel expansion: `gamma_` (the resolved γ), the centres `support_vectors_`
    (rows `support_` of the training data), the weights `_dual_coef_` and intercepts
    `_intercept_`; subclasses fit them. Prediction needs only these."""

    #: Each parameter's check (name → check(value, name)), run by `check_params` at fit; the
    #: kernel's degree, coef0 and gamma are checked when the kernel is resolved on the data.
    _constraints = {"kernel": lambda value, name: check_kernel(value)}
    #: Precision of the kernel blocks of prediction on a GPU (`device='cuda'`).
    _device_dtype = np.float32

    def _on_device(self) -> bool:
        """Whether fit and prediction run on the GPU (`device='cuda'`; models without `device`
        run on the CPU)."""
        return getattr(self, "device", "cpu") == "cuda"

    def _validate_X(self, X, reset=True):
        """Validate X (NumPy, SciPy sparse, or CuPy, copied to the host): dense float64 or CSR,
        finite, named errors."""
        X = validate_data(self, to_host(X), reset=reset, **_X_FORMAT)
        return self._check_X_values(X, reset)

    def _validate_Xy(self, X, y, y_numeric=False, multi_output=False):
        """Validate X and the target y (required; real and finite when `y_numeric`; a column
        per output when `multi_output`); CuPy arrays are copied to the host."""
        X, y = to_host(X), to_host(y)
        if y_numeric and y is not None and np.asarray(y).dtype.kind in "fc":
            y_arr = np.asarray(y)
            check_finite_rows(y_arr.reshape(y_arr.shape[0], -1) if y_arr.ndim else y_arr.reshape(-1, 1), name="y")
        X, y = validate_data(self, X, y, y_numeric=y_numeric, multi_output=multi_output, **_X_FORMAT)
        return self._check_X_values(X, True), y

    def _check_X_values(self, X, reset):
        check_finite_rows(X)
        if self.kernel == "precomputed":
            check_precomputed(X, None if reset else self.shape_fit_[0])
        return X

    def _sample_weight(self, sample_weight, X):
        if sample_weight is None:
            return np.ones(X.shape[0])
        sw = _check_sample_weight(to_host(sample_weight), X, dtype=np.float64, ensure_non_negative=True)
        check_finite_rows(sw.reshape(-1, 1), name="sample_weight")
        return sw

    def _resolve_kernel(self, X, gamma=None):
        """The kernel resolved on the training data (γ kept as `gamma_`) and X in kernel format;
        `gamma` stands in for the parameter when given."""
        Xk = as_kernel_input(X, TRAIN_OVERLAP)
        spec = make_kernel(self.kernel, X, self.gamma if gamma is None else gamma, self.degree, self.coef0)
        if not (spec.is_callable or spec.is_precomputed):
            check_kernel_range(Xk)
        self.gamma_ = spec.gamma
        return spec, Xk

    def _store_support(self, X, support):
        """Keep the support vectors in the training format (dense or CSR, as scikit-learn does)."""
        self.support_ = np.asarray(support, dtype=np.int32)
        if self.kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0))
        else:
            self.support_vectors_ = X[self.support_]

    def _prepare_prediction(self):
        """Derive what prediction uses from the fitted state: the kernel, the support vectors in
        kernel format with their squared norms, the weight matrix and the public coefficients."""
        self._spec = make_kernel(self.kernel, self.support_vectors_, self.gamma_, self.degree, self.coef0)
        self._sv_kernel = None if self._spec.is_precomputed else as_kernel_input(self.support_vectors_)
        self._sv_sq = row_sq_norms(self._sv_kernel) if self._spec.uses_norms else None
        self._sv_split = SparseColumns(self._sv_kernel) if sp.issparse(self._sv_kernel) else None
        self._W = self._dual_coef_.T
        self.dual_coef_ = self._dual_coef_
        self.intercept_ = self._intercept_.copy()

    @property
    def coef_(self):
        """w = Σ coef_i x_i (seed 000 (9.60)); linear kernel only. Read-only: it is derived
        from the dual coefficients, so writing to it would change nothing."""
        return read_only(self._primal_weights())

    def _raw_decision(self, X):
        """Σ_s W[s, k] K(x, c_s) + b_k for every row of X, one column k per fitted problem."""
        X = self._check_predict_X(X)
        return self._support_kernel_products(X, self._W) + self._intercept_

    def _raw_decision_from_kernel(self, K, W):
        """The same from `K`, kernel values of the points against the centres of the weights
        `W` (model selection reads them from the kernel rows it shares across fits)."""
        return K @ W + self._intercept_

    def _predict_from_raw(self, raw):
        """The prediction from the raw decision values (a single problem's: the values)."""
        return raw.ravel()

    def predict(self, X):
        """The prediction for every row of X."""
        return self._predict_from_raw(self._raw_decision(X))

    def _check_predict_X(self, X):
        check_is_fitted(self)
        return self._validate_X(X, reset=False)

    def _support_kernel_products(self, X, W):
        """K(X, SV) @ W for every row of X, computed in blocks (W: n_SV × k)."""
        n = X.shape[0]
        n_sv = self.support_.shape[0]
        out = np.empty((n, W.shape[1]))
        if self._spec.is_precomputed:
            Xd = X.toarray() if sp.issparse(X) else X
            return Xd[:, self.support_] @ W
        if not self._spec.is_callable:
            # one conversion up front (densified unless sparse pays), not one per block
            X = as_kernel_input(X)
            if self._on_device():
                return device_kernel_products(array_module("cuda"), self._spec, X, self._sv_kernel, W,
                                              self._device_dtype)
        step = max(1, min(n, _PREDICT_BLOCK // max(n_sv, 1)))
        buf = np.empty(step * n_sv)
        for s in range(0, n, step):
            K = kernel_block(self._spec, X[s:s + step], self._sv_kernel, self._sv_sq, out=buf,
                             b_split=self._sv_split)
            np.matmul(K, W, out=out[s:s + step])
        return out

    def _primal_weights(self):
        """w = Σ coef_i x_i per column of the coefficient matrix (seed 000 (9.37)); linear kernel only."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        sv = self.support_vectors_
        coef = np.vstack([self._W[:, k] @ sv for k in range(self._W.shape[1])])
        return np.asarray(coef.todense() if sp.issparse(coef) else coef)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
