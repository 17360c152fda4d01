"""Row and class weights: an integer sample weight is the row repeated, for every estimator whose
loss is a sum over rows; class weights multiply the weights of a class's rows."""

import numpy as np
import pytest
import scipy.linalg as la
from sklearn.metrics.pairwise import rbf_kernel

import svmkit
from conftest import diabetes, iris


def _repeated(X, y, w):
    rows = np.repeat(np.arange(y.size), w)
    return X[rows], y[rows]


def _scores(est, X):
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


@pytest.mark.parametrize("est, data", [
    (svmkit.SVC(C=3.0, gamma=0.5, tol=1e-10), iris),
    (svmkit.SVR(C=3.0, gamma=0.5, tol=1e-10), diabetes),
    (svmkit.KernelRidge(kernel="rbf", alpha=0.1, gamma=0.5), diabetes),
    (svmkit.LSSVR(C=3.0, gamma=0.5), diabetes),
    (svmkit.LSSVC(C=3.0, gamma=0.5), iris),
    (svmkit.LSSVC(C=3.0, gamma=0.5, multi_class="ovo"), iris),
    (svmkit.KernelLogisticRegression(C=3.0, gamma=0.5, tol=1e-10), iris),
])
def test_an_integer_sample_weight_is_the_row_repeated(est, data):
    X, y = data()
    w = np.random.default_rng(0).integers(0, 4, y.size)
    weighted = type(est)(**est.get_params()).fit(X, y, sample_weight=w)
    scores = _scores(weighted, X)
    repeated = type(est)(**est.get_params()).fit(*_repeated(X, y, w))
    np.testing.assert_allclose(scores, _scores(repeated, X), rtol=1e-6, atol=1e-6)


def _weighted_lssvr_oracle(X, y, C, gamma, v):
    """The bordered system [[0, 1ᵀ], [1, K + V⁻¹/C]]·[b; α] = [0; y] solved densely."""
    n = y.size
    M = np.zeros((n + 1, n + 1))
    M[0, 1:] = M[1:, 0] = 1.0
    M[1:, 1:] = rbf_kernel(X, X, gamma=gamma) + np.diag(1.0 / (C * v))
    z = la.solve(M, np.concatenate([[0.0], y]))
    return z[1:], z[0]


@pytest.mark.parametrize("solver", ["cholesky", "eigen"])
def test_weighted_lssvr_solves_the_weighted_bordered_system(solver):
    X, y = diabetes()
    v = np.random.default_rng(1).uniform(0.2, 3.0, y.size)
    model = svmkit.LSSVR(C=5.0, gamma=0.3, solver=solver).fit(X, y, sample_weight=v)
    alpha, b = _weighted_lssvr_oracle(X, y, 5.0, 0.3, v)
    np.testing.assert_allclose(model.dual_coef_.ravel(), alpha, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(model.intercept_, [b], rtol=1e-8, atol=1e-10)


def test_weighted_lssvr_leave_one_out_matches_brute_force():
    X, y = diabetes()
    X, y = X[:60], y[:60]
    v = np.random.default_rng(2).uniform(0.5, 2.0, y.size)
    model = svmkit.LSSVR(C=5.0, gamma=0.3, loo=True).fit(X, y, sample_weight=v)
    brute = np.empty(y.size)
    for i in range(y.size):
        keep = np.arange(y.size) != i
        fit = svmkit.LSSVR(C=5.0, gamma=0.3).fit(X[keep], y[keep], sample_weight=v[keep])
        brute[i] = y[i] - fit.predict(X[i:i + 1])[0]
    np.testing.assert_allclose(model.loo_residuals_, brute, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("est", [svmkit.LSSVC(C=3.0, gamma=0.5), svmkit.KernelLogisticRegression(C=3.0, gamma=0.5)])
def test_class_weight_multiplies_the_sample_weight_of_its_rows(est):
    X, y = iris()
    cw = {0: 2.0, 1: 0.5, 2: 1.0}
    by_class = svmkit.LSSVC if isinstance(est, svmkit.LSSVC) else svmkit.KernelLogisticRegression
    ours = by_class(**{**est.get_params(), "class_weight": cw}).fit(X, y)
    rows = by_class(**est.get_params()).fit(X, y, sample_weight=np.vectorize(cw.get)(y))
    np.testing.assert_allclose(ours.decision_function(X), rows.decision_function(X), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("est", [svmkit.LSSVC(class_weight={0: -1.0}), svmkit.KernelLogisticRegression(class_weight="even")])
def test_bad_class_weight_is_named(est):
    X, y = iris()
    with pytest.raises(ValueError, match="class_weight"):
        est.fit(X, y)


def test_weights_with_nystrom_lssvm_are_refused_naming_the_solver():
    X, y = diabetes()
    with pytest.raises(ValueError, match="sample_weight.*'nystrom'"):
        svmkit.LSSVR(solver="nystrom", n_components=50).fit(X, y, sample_weight=np.ones(y.size))
