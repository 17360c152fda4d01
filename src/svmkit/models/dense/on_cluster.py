"""Kernel ridge, kernel logistic regression and the LS-SVMs fitted by Nyström on data that stays
on a Dask cluster: the centres (drawn as the in-memory fit draws them) come to the client, every
pass over the rows is a sum over their blocks on the workers (`parallel.blocks.sum_row_blocks`),
and only (M+1)-sized sums travel (`solvers.dense.nystrom_blocks`)."""

from __future__ import annotations


import numpy as np
import scipy.linalg as la

from svmkit._validation import check_finite_rows, check_params, class_weights
from svmkit.kernels.kinds import DotKernel, kernel_kind, make_kernel
from svmkit.options import options_of
from svmkit.parallel.blocks import sum_row_blocks
from svmkit.parallel.cluster import open_cluster, row_partitions
from svmkit.parallel.dask import as_dask_array, row_blocks
from svmkit.solvers.dense.newton import nystrom_features
from svmkit.solvers.dense.nystrom import nystrom_normal_solve
from svmkit.solvers.dense.nystrom_blocks import CentreKernel, least_squares, logistic_newton


def _check(est, solvers):
    check_params(est, est._constraints)
    if est.solver not in solvers:
        raise ValueError(f"a Dask X is fitted by solver='nystrom', not solver={est.solver!r}")
    if est.centers != "uniform":
        raise ValueError("a Dask X takes centers='uniform'")
    if kernel_kind(est.kernel) is not DotKernel:
        raise ValueError(f"a Dask X is fitted with the kernels 'linear', 'poly', 'rbf' and 'sigmoid', "
                         f"not kernel={est.kernel!r}")
    est._backend().require("dask", "a Dask array X")


def _encode(y, classes):
    return np.searchsorted(classes, np.asarray(y))


def _classes(est, y):
    """classes_ from y on the cluster, and each class's count."""
    import dask.array as da

    classes, counts = (np.asarray(v) for v in da.compute(*da.unique(y, return_counts=True)))
    if classes.size < 2:
        raise ValueError(f"{type(est).__name__} needs samples of at least 2 classes in y, got {classes.size}")
    est.classes_ = classes
    return classes, counts


def _centres(est, X):
    """The centres' rows (those the in-memory fit draws), brought to the client."""
    n = X.shape[0]
    centres = est._centres(n)
    C = np.asarray(X[centres].compute(), dtype=np.float64)
    check_finite_rows(C, name="X (a Nyström centre)")
    return centres, C


def _block_sums(X, T, c):
    """sum_blocks(func) = Σ func(X_b, T_b, c_b) over the row blocks, each block's rows checked."""
    def sum_blocks(func):
        def terms(Xb, Tb, cb, start):
            check_finite_rows(np.asarray(Xb), name=f"X (block from row {start})")
            return func(np.asarray(Xb), np.asarray(Tb, dtype=np.float64), np.asarray(cb, dtype=np.float64))
        return sum_row_blocks(terms, X, T, c)
    return sum_blocks


def _store(est, X, centres, C, coef, intercept):
    est.n_features_in_ = X.shape[1]
    est.support_ = np.asarray(centres, dtype=np.int32)
    est.support_vectors_ = C
    est._set_weights(X.shape, coef, intercept)


def fit_ridge(est, X, y, sample_weight=None):
    """KernelRidge(solver='nystrom' or 'auto') on a Dask X and y (one target or several):
    K_NMᵀK_NM and K_NMᵀY are summed over the blocks on the workers, so only M × M results
    travel, then solved here."""
    est.check_parameters()
    est._backend().require("dask", "a Dask array X")
    if est.solver not in ("auto", "nystrom"):
        raise ValueError(f"a Dask array X is fitted by solver='nystrom' (or 'auto'), not solver={est.solver!r}")
    if est.centers != "uniform":
        raise ValueError("a Dask array X takes centers='uniform'")
    if sample_weight is not None or est.loo:
        raise ValueError("a Dask array X is fitted without sample_weight and without loo")
    import dask.array as da

    with open_cluster(options_of(est).scheduler_address):
        X = row_blocks(X)
        n = X.shape[0]
        y = da.asarray(as_dask_array("y", y)).astype(np.float64).rechunk({0: X.chunks[0]})
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} rows, X has {n}")
        est._multi_output = y.ndim == 2
        Y = (y if y.ndim == 2 else y[:, None]).rechunk({1: -1})
        centres, C = _centres(est, X)
        kernel = make_kernel(est.kernel, X, est._gamma_param(), est.degree, est.coef0)
        c_sq = kernel.sq_norms(C)

        def reduce(Xb, Yb, start):
            check_finite_rows(np.asarray(Xb), name=f"X (block from row {start})")
            check_finite_rows(np.asarray(Yb), name=f"y (block from row {start})")
            K = kernel.block(np.ascontiguousarray(Xb, dtype=np.float64), C, c_sq)
            return K.T @ K, K.T @ Yb

        KtK, KtY = sum_row_blocks(reduce, X, Y)
    beta = nystrom_normal_solve(KtK, KtY, kernel.block(C, C), est.alpha)
    est.gamma_ = kernel.gamma
    _store(est, X, centres, C, beta, np.zeros(beta.shape[1]))
    return est


def fit_klr(est, X, y, sample_weight=None):
    """KernelLogisticRegression(solver='nystrom') on a Dask X: Newton on the Nyström features,
    each step two passes of sums over the blocks."""
    _check(est, ("nystrom",))
    X, y, sample_weight = row_partitions(X, y, sample_weight)
    with open_cluster(options_of(est).scheduler_address):
        classes, counts = _classes(est, y)
        class_weight = class_weights(est.class_weight, classes, np.repeat(np.arange(classes.size), counts))
        enc = y.map_blocks(_encode, classes, dtype=np.int64)
        k = 1 if classes.size == 2 else classes.size
        T = enc.map_blocks(lambda e: (e[:, None] == 1).astype(np.float64) if k == 1 else np.eye(k)[e],
                           new_axis=1, chunks=(enc.chunks[0], (k,)), dtype=np.float64)
        w = enc.map_blocks(lambda e: class_weight[e], dtype=np.float64)
        c = est.C * (w if sample_weight is None else w * sample_weight)
        kernel = make_kernel(est.kernel, X, est.gamma, est.degree, est.coef0)
        centres, C = _centres(est, X)
        _, T_mm = nystrom_features(np.empty((0, C.shape[0])), kernel.block(C, C))
        res = logistic_newton(_block_sums(X, T, c), CentreKernel(kernel, C, T_mm), k, est.tol, est.max_iter)
    est.gamma_ = kernel.gamma
    coef = la.solve_triangular(T_mm, res.beta, lower=False, check_finite=False)
    _store(est, X, centres, C, coef, res.intercept)
    est._keep_newton(res)
    return est


def _fit_lssvm(est, X, y, targets):
    """The LS-SVM's Nyström problem ‖K_NM β + 1b − B‖² + (1/C)·βᵀK_MM β over targets B
    (`targets(y)`: a Dask array, rows as X's), from one pass of sums."""
    _check(est, ("nystrom", "auto"))
    if est.loo:
        raise ValueError("a Dask X is fitted without loo (it needs an exact solver)")
    X, y = row_partitions(X, y)
    with open_cluster(options_of(est).scheduler_address):
        B = targets(y)
        kernel = make_kernel(est.kernel, X, est.gamma, est.degree, est.coef0)
        centres, C = _centres(est, X)
        centre_kernel = CentreKernel(kernel, C)
        ones = X[:, 0].map_blocks(np.ones_like, dtype=np.float64)
        beta, b = least_squares(_block_sums(X, B, ones), centre_kernel, kernel.block(C, C), 1.0 / est.C, bias=True)
    est.gamma_ = kernel.gamma
    _store(est, X, centres, C, beta, b)
    return est


def fit_lssvr(est, X, y, sample_weight=None):
    """LSSVR(solver='nystrom' or 'auto') on a Dask X."""
    if sample_weight is not None:
        raise ValueError("a Dask X is fitted without sample_weight (Nyström takes none)")
    return _fit_lssvm(est, X, y, lambda y: y.astype(np.float64)[:, None])


def fit_lssvc(est, X, y, sample_weight=None):
    """LSSVC(solver='nystrom' or 'auto') on a Dask X: binary, or one-vs-rest."""
    if sample_weight is not None or est.class_weight is not None:
        raise ValueError("a Dask X is fitted without sample_weight and class_weight (Nyström takes none)")

    def targets(y):
        classes, _ = _classes(est, y)
        if est.multi_class == "ovo" and classes.size > 2:
            raise ValueError("a Dask X is fitted by LSSVC(multi_class='ovr') (one problem per class on every row)")
        columns = [1] if classes.size == 2 else list(range(classes.size))
        enc = y.map_blocks(_encode, classes, dtype=np.int64)
        return enc.map_blocks(lambda e: np.column_stack([np.where(e == c, 1.0, -1.0) for c in columns]),
                              new_axis=1, chunks=(enc.chunks[0], (len(columns),)), dtype=np.float64)

    return _fit_lssvm(est, X, y, targets)
