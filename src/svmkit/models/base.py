"""What every kernel model shares: parameter checks, the kernel and its row source, the call
to the dual solver, and prediction through kernel blocks against the support vectors."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmkit._validation import check_finite_rows, check_int, check_precomputed, check_real
from svmkit.kernels.gram import (TRAIN_OVERLAP, SparseColumns, TrainingKernel, as_kernel_input, kernel_block,
                                 row_sq_norms)
from svmkit.kernels.spec import KERNELS, make_kernel
from svmkit.solvers.row_source import CachedRows, FullRows
from svmkit.solvers.smo import DualProblem, solve

#: Elements of one K(X_block, SV) block at prediction time.
_PREDICT_BLOCK = 2**19
#: Largest problem whose hard-constraint feasibility (C = inf) is checked by linear programming.
LP_MAX_ROWS = 3000
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


class KernelModel(BaseEstimator):
    """Base of the SMO-type estimators; subclasses build their dual problems."""

    def _check_kernel_params(self):
        if not callable(self.kernel) and self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS} or a callable, got kernel={self.kernel!r}")
        check_real(self.tol, "tol", low=0)
        check_real(self.cache_size, "cache_size", low=0)
        check_int(self.max_iter, "max_iter")
        if self.max_iter == 0 or self.max_iter < -1:
            raise ValueError(f"max_iter must be -1 (no limit) or a positive integer, got max_iter={self.max_iter}")
        if not isinstance(self.shrinking, (bool, np.bool_)):
            raise ValueError(f"shrinking must be a bool, got shrinking={self.shrinking!r}")

    def _validate_X(self, X, reset=True):
        """Validate X: dense float64 or CSR, finite, named errors."""
        X = validate_data(self, X, reset=reset, **_X_FORMAT)
        return self._check_X_values(X, reset)

    def _validate_Xy(self, X, y, y_numeric=False):
        """Validate X and the target y (required; real and finite when `y_numeric`)."""
        if y_numeric and y is not None and np.asarray(y).dtype.kind in "fc":
            check_finite_rows(np.asarray(y).reshape(-1, 1), name="y")
        X, y = validate_data(self, X, y, y_numeric=y_numeric, **_X_FORMAT)
        return self._check_X_values(X, True), y

    def _check_X_values(self, X, reset):
        check_finite_rows(X)
        if self.kernel == "precomputed":
            check_precomputed(X, None if reset else self.shape_fit_[0])
        return X

    def _sample_weight(self, sample_weight, X):
        if sample_weight is None:
            return np.ones(X.shape[0])
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        check_finite_rows(sw.reshape(-1, 1), name="sample_weight")
        return sw

    def _kernel_rows(self, X):
        """Resolve the kernel on the training data and give the solver's row source."""
        Xk = as_kernel_input(X, TRAIN_OVERLAP)
        if self.kernel in KERNELS and self.kernel != "precomputed":
            check_kernel_range(Xk)
        spec = make_kernel(self.kernel, X, self.gamma, self.degree, self.coef0)
        self._gamma = spec.gamma
        if spec.is_precomputed:
            K = Xk.toarray() if sp.issparse(Xk) else Xk
            return FullRows(K, np.diag(K).astype(np.float64))
        return CachedRows(TrainingKernel(spec, Xk), self.cache_size)

    @staticmethod
    def _gram(rows, idx):
        """The dense kernel matrix K[idx][:, idx] from the row source, in blocks."""
        blocks = []
        step = min(1024, rows.capacity)
        for s in range(0, idx.size, step):
            store, pos = rows.fetch(idx[s:s + step])
            blocks.append(np.asarray(store[pos][:, idx], dtype=np.float64))
        return np.vstack(blocks)

    def _solve(self, problem: DualProblem, rows, alpha0=None):
        res = solve(problem, rows, alpha0=alpha0, tol=self.tol, max_iter=self.max_iter,
                    shrinking=self.shrinking)
        if not (np.isfinite(res.alpha).all() and np.isfinite(res.rho)):
            raise ValueError("The dual coefficients or intercepts are not finite: the kernel values are too "
                             "large for float64; scale the data (e.g. with MinMaxScaler)")
        return res

    def _summary(self, n_iter, objective, rho, coef, upper, extra=()):
        """With `verbose`, LIBSVM's per-problem summary; `coef`: each row's y α, `upper`: its C_i."""
        if not self.verbose:
            return
        print(f"optimization finished, #iter = {n_iter}")
        for line in extra:
            print(line)
        print(f"obj = {objective:f}, rho = {rho:f}")
        print(f"nSV = {int(np.count_nonzero(coef))}, nBSV = {int(np.count_nonzero(np.abs(coef) >= upper))}")

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
        self._spec = make_kernel(self.kernel, self.support_vectors_, self._gamma, self.degree, self.coef0)
        self._sv_kernel = None if self.kernel == "precomputed" else as_kernel_input(self.support_vectors_)
        self._sv_sq = (row_sq_norms(self._sv_kernel)
                       if self.kernel == "rbf" and self._sv_kernel is not None else None)
        self._sv_split = SparseColumns(self._sv_kernel) if sp.issparse(self._sv_kernel) else None
        self._W = self._dual_coef_.T
        self.dual_coef_ = self._dual_coef_
        self.intercept_ = self._intercept_.copy()

    def _positive_weight_rows(self, sample_weight, X):
        """Sample weights and the rows they keep (weight > 0), as scikit-learn's LIBSVM does."""
        sw = self._sample_weight(sample_weight, X)
        keep = np.flatnonzero(sw > 0)
        if keep.size == 0:
            raise ValueError("sample_weight is zero for every sample; at least one must be positive")
        return sw, keep

    def _store_single(self, X, problem: DualProblem, res, upper_row, extra=()):
        """Read back a one-problem fit (regression, one-class): coef_i = Σ y α over the variables
        of row i, b = −ρ; `upper_row`: each training row's C_i. A row is bounded when one of its
        variables is at its bound, free when it has a nonzero variable and none at the bound."""
        n = X.shape[0]
        coef = np.bincount(problem.kidx, weights=problem.y * res.alpha, minlength=n)
        moved = np.bincount(problem.kidx, weights=res.alpha > 0, minlength=n) > 0
        bounded = np.bincount(problem.kidx, weights=res.alpha >= problem.upper, minlength=n) > 0
        self.free_support_ = np.flatnonzero(moved & ~bounded)
        self.bounded_support_ = np.flatnonzero(bounded)
        self._summary(res.n_iter, res.objective, res.rho, coef, upper_row, extra)
        support = np.flatnonzero(coef)
        self._store_support(X, support)
        self._dual_coef_ = coef[support][None, :]
        self._intercept_ = np.array([-res.rho])
        self.n_support_ = np.array([support.size], dtype=np.int32)
        self.objective_ = res.objective
        self.n_iter_ = res.n_iter
        self.loo_bound_ = support.size / X.shape[0]
        self.fit_status_ = 0
        self.shape_fit_ = X.shape
        self._prepare_prediction()

    @property
    def coef_(self):
        """w = Σ coef_i x_i (seed 000 (9.60)); linear kernel only. Read-only: it is derived
        from the dual coefficients, so writing to it would change nothing."""
        return read_only(self._primal_weights())

    def _decision_single(self, X):
        """Σ coef_i K(x_i, x) + b for every row of X."""
        X = self._check_predict_X(X)
        return self._support_kernel_products(X, self._W).ravel() + self._intercept_[0]

    def _check_predict_X(self, X):
        check_is_fitted(self)
        return self._validate_X(X, reset=False)

    def _support_kernel_products(self, X, W):
        """K(X, SV) @ W for every row of X, computed in blocks (W: n_SV × k)."""
        n = X.shape[0]
        n_sv = self.support_.shape[0]
        out = np.empty((n, W.shape[1]))
        if self.kernel == "precomputed":
            Xd = X.toarray() if sp.issparse(X) else X
            return Xd[:, self.support_] @ W
        if not callable(self.kernel):
            # one conversion up front (densified unless sparse pays), not one per block
            X = as_kernel_input(X)
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

    def save(self, path):
        """Write this fitted model to svmkit's native file (`svmkit.load` reads it back)."""
        from svmkit.io.native import save  # io is the layer above; only this entry point reaches up

        save(self, path)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
