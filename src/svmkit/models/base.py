"""What every kernel model shares: parameter checks, the kernel and its row source, the call
to the dual solver, and prediction through kernel blocks against the support vectors."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmkit._validation import check_finite_rows, check_int, check_precomputed, check_real
from svmkit.kernels.gram import TrainingKernel, as_kernel_input, kernel_block, row_sq_norms
from svmkit.kernels.spec import KERNELS, make_kernel
from svmkit.solvers.row_source import CachedRows, FullRows
from svmkit.solvers.smo import WS_SIZE, DualProblem, solve

#: Elements of one K(X_block, SV) block at prediction time.
_PREDICT_BLOCK = 2**19


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

    def _validate_X(self, X, y=None, reset=True):
        """Validate X (and y); dense float64 or CSR, finite, named errors."""
        kw = dict(accept_sparse="csr", dtype=np.float64, order="C", accept_large_sparse=True,
                  ensure_all_finite=False, reset=reset)
        if y is None:
            X = validate_data(self, X, **kw)
        else:
            X, y = validate_data(self, X, y, y_numeric=False, **kw)
        check_finite_rows(X)
        if self.kernel == "precomputed":
            check_precomputed(X, None if reset else self.shape_fit_[0])
        return X, y

    def _sample_weight(self, sample_weight, X):
        if sample_weight is None:
            return np.ones(X.shape[0])
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        check_finite_rows(sw.reshape(-1, 1), name="sample_weight")
        return sw

    def _kernel_rows(self, X):
        """Resolve the kernel on the training data and give the solver's row source."""
        spec = make_kernel(self.kernel, X, self.gamma, self.degree, self.coef0)
        self._gamma = spec.gamma
        self._spec = spec
        Xk = as_kernel_input(X)
        if spec.is_precomputed:
            K = Xk.toarray() if sp.issparse(Xk) else Xk
            return FullRows(np.ascontiguousarray(K, dtype=np.float64), np.diag(K).astype(np.float64))
        return CachedRows(TrainingKernel(spec, Xk), self.cache_size, min(WS_SIZE, X.shape[0]))

    def _solve(self, problem: DualProblem, rows, tol=None, **kw):
        res = solve(problem, rows, tol=self.tol if tol is None else tol, max_iter=self.max_iter, **kw)
        if self.verbose:
            n_sv = int((res.alpha > 0).sum())
            n_bsv = int((res.alpha >= problem.upper).sum())
            print(f"optimization finished, #iter = {res.n_iter}")
            print(f"obj = {res.objective:f}, rho = {res.rho:f}")
            print(f"nSV = {n_sv}, nBSV = {n_bsv}")
        return res

    def _store_support(self, X, support):
        """Keep the support vectors in the training format (dense or CSR, as scikit-learn does)."""
        self.support_ = np.asarray(support, dtype=np.int32)
        self._sparse = sp.issparse(X)
        if self.kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0))
        else:
            self.support_vectors_ = X[self.support_]
        self._sv_kernel = None if self.kernel == "precomputed" else as_kernel_input(self.support_vectors_)
        self._sv_sq = (row_sq_norms(self._sv_kernel)
                       if self.kernel == "rbf" and self._sv_kernel is not None else None)

    def _check_predict_X(self, X):
        check_is_fitted(self)
        X, _ = self._validate_X(X, reset=False)
        return X

    def _support_kernel_products(self, X, W):
        """K(X, SV) @ W for every row of X, computed in blocks (W: n_SV × k)."""
        n = X.shape[0]
        n_sv = self.support_.shape[0]
        out = np.empty((n, W.shape[1]))
        if self.kernel == "precomputed":
            Xd = X.toarray() if sp.issparse(X) else X
            return Xd[:, self.support_] @ W
        step = max(1, min(n, _PREDICT_BLOCK // max(n_sv, 1)))
        buf = np.empty(step * n_sv)
        for s in range(0, n, step):
            K = kernel_block(self._spec, X[s:s + step], self._sv_kernel, self._sv_sq, out=buf)
            np.matmul(K, W, out=out[s:s + step])
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

