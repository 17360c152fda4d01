"""What every kernel model shares: parameter checks, the kernel and its row source, the call
to the dual solver, and prediction through kernel blocks against the support vectors."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmkit._validation import check_finite_rows, check_int, check_precomputed, check_real
from svmkit.kernels.gram import (TRAIN_OVERLAP, SparseColumns, TrainingKernel, as_kernel_input, kernel_block,
                                 row_sq_norms)
from svmkit.kernels.spec import KERNELS, make_kernel
from svmkit.solvers.row_source import row_source
from svmkit.solvers.row_source import RowSource
from svmkit.solvers.smo import DualProblem, DualResult, solve

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


@dataclass
class ProblemFit:
    """One solved dual read back per training row: `rows` the training rows its variables
    belong to, `coef` Σ y α over each row's variables, `free` the rows with a free variable and
    none at its bound, `bounded` the rows with a variable at its bound, `rho` and `objective`
    on the model's scale; `result` is the solver's own (α, gradient, …), from which a later
    fit can start."""

    rows: np.ndarray
    coef: np.ndarray
    free: np.ndarray
    bounded: np.ndarray
    rho: float
    objective: float
    result: DualResult


def read_back(var_rows: np.ndarray, problem: DualProblem, res: DualResult, scale: float = 1.0) -> ProblemFit:
    """A ProblemFit from the solver's result; `var_rows`: the training row of each variable,
    `scale`: the factor from the solver's α to the model's (ν-SVC: 1/r)."""
    rows, inv = np.unique(var_rows, return_inverse=True)
    coef = scale * np.bincount(inv, weights=problem.y * res.alpha, minlength=rows.size)
    moved = np.bincount(inv, weights=res.alpha > 0, minlength=rows.size) > 0
    bounded = np.bincount(inv, weights=res.alpha >= problem.upper, minlength=rows.size) > 0
    return ProblemFit(rows, coef, rows[moved & ~bounded], rows[bounded], scale * res.rho,
                      scale**2 * res.objective, res)


def positive_rows(sample_weight: np.ndarray) -> np.ndarray:
    """The rows of positive weight, which the dual keeps (as scikit-learn's LIBSVM does)."""
    keep = np.flatnonzero(sample_weight > 0)
    if keep.size == 0:
        raise ValueError("sample_weight is zero for every sample; at least one must be positive")
    return keep


class KernelModel(BaseEstimator):
    """Base of the SMO-type estimators; subclasses prepare the data (`_prepare`) and solve
    their dual problems (`_solve_problems`)."""

    #: One problem per class pair, whose objective and iterations are kept per pair.
    _one_vs_one = False

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

    def fit(self, X, y=None, sample_weight=None):
        """Fit the model. X: (n_samples, n_features) dense or CSR, or a kernel matrix."""
        return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight, rows: RowSource | None = None, row_index=None, starts=None):
        """The one fit path of every SMO model: validate and prepare; solve the model's dual
        problems on `rows` (default: a row source of the training kernel), training row i
        being row `row_index[i]` of it; store the fitted state.

        A given `rows` must hold the kernel this model resolves on X (model selection shares
        one per γ across folds and C). `starts`: per problem, None or a feasible (α⁰, G⁰) to
        start from (G⁰ may be None), in the layout of `_problem_fits` of an earlier fit.
        """
        self._check_kernel_params()
        self._check_model_params()
        X, target, weight = self._prepare(X, y, sample_weight)
        spec, Xk = self._resolve_kernel(X)
        if rows is None:
            rows, row_index = self._row_source(spec, Xk), None
        row_index = np.arange(X.shape[0]) if row_index is None else np.asarray(row_index, dtype=np.int64)
        fits = self._solve_problems(rows, row_index, target, weight, starts)
        self._set_fitted(X, target, fits)
        return self

    def _resolve_kernel(self, X):
        """The kernel resolved on the training data (γ kept as `gamma_`) and X in kernel format."""
        Xk = as_kernel_input(X, TRAIN_OVERLAP)
        if self.kernel in KERNELS and self.kernel != "precomputed":
            check_kernel_range(Xk)
        spec = make_kernel(self.kernel, X, self.gamma, self.degree, self.coef0)
        self.gamma_ = spec.gamma
        return spec, Xk

    def _row_source(self, spec, Xk) -> RowSource:
        if spec.is_precomputed:
            return row_source(matrix=Xk.toarray() if sp.issparse(Xk) else Xk)
        return row_source(TrainingKernel(spec, Xk), self.cache_size)

    def _solve(self, problem: DualProblem, rows, alpha0=None, start=None):
        """Solve one dual from the model's own feasible `alpha0`, or from `start` = (α⁰, G⁰)."""
        grad0 = None
        if start is not None:
            alpha0, grad0 = start
        res = solve(problem, rows, alpha0=alpha0, grad0=grad0, tol=self.tol, max_iter=self.max_iter,
                    shrinking=self.shrinking)
        if not (np.isfinite(res.alpha).all() and np.isfinite(res.rho)):
            raise ValueError("The dual coefficients or intercepts are not finite: the kernel values are too "
                             "large for float64; scale the data (e.g. with MinMaxScaler)")
        return res

    def _summary(self, fit: ProblemFit, extra=()):
        """With `verbose`, LIBSVM's summary of one solved problem."""
        if not self.verbose:
            return
        print(f"optimization finished, #iter = {fit.result.n_iter}")
        for line in extra:
            print(line)
        print(f"obj = {fit.objective:f}, rho = {fit.rho:f}")
        print(f"nSV = {int(np.count_nonzero(fit.coef))}, nBSV = {fit.bounded.size}")

    def _assemble(self, target, fits):
        """(support, n_support, dual_coef) of a one-problem model: the rows of nonzero coef."""
        (fit,) = fits
        nz = fit.coef != 0
        support = fit.rows[nz]
        return support, np.array([support.size], dtype=np.int32), fit.coef[nz][None, :]

    def _set_fitted(self, X, target, fits):
        """Store the fitted state; the one place a fit's attributes are set."""
        support, self.n_support_, self._dual_coef_ = self._assemble(target, fits)
        self._store_support(X, support)
        self._intercept_ = -np.array([f.rho for f in fits])
        self.objective_ = np.array([f.objective for f in fits])
        self.n_iter_ = np.array([f.result.n_iter for f in fits], dtype=np.int32)
        if not self._one_vs_one:
            self.objective_, self.n_iter_ = float(self.objective_[0]), int(self.n_iter_[0])
        free = np.unique(np.concatenate([f.free for f in fits])).astype(np.int64)
        self.free_support_ = free
        self.bounded_support_ = np.setdiff1d(np.unique(np.concatenate([f.bounded for f in fits])), free)
        self.loo_bound_ = support.size / X.shape[0]
        self.fit_status_ = int(not all(f.result.converged for f in fits))
        if self.fit_status_:
            warnings.warn(f"Solver terminated early (max_iter={self.max_iter}). Consider pre-processing your "
                          "data with StandardScaler or MinMaxScaler.", ConvergenceWarning, stacklevel=4)
        self.shape_fit_ = X.shape
        self._problem_fits = fits
        self._prepare_prediction()

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
        self._sv_kernel = None if self.kernel == "precomputed" else as_kernel_input(self.support_vectors_)
        self._sv_sq = (row_sq_norms(self._sv_kernel)
                       if self.kernel == "rbf" and self._sv_kernel is not None else None)
        self._sv_split = SparseColumns(self._sv_kernel) if sp.issparse(self._sv_kernel) else None
        self._W = self._dual_coef_.T
        self.dual_coef_ = self._dual_coef_
        self.intercept_ = self._intercept_.copy()

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

        save(self, path)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
