"""Kernel logistic regression: the Newton solver against SciPy and finite differences, the
linear kernel against scikit-learn's LogisticRegression, Nyström with M = N against exact."""

import numpy as np
import pytest
import scipy.linalg as la
from scipy.optimize import minimize
from scipy.special import log_expit, logsumexp
from sklearn.datasets import load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

import svmkit
import svmkit.solvers.dense.newton as newton
from conftest import breast_cancer, heart_scale, iris
from svmkit.solvers.dense.newton import dense_operator, objective_and_gradient


def wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def rbf(X, gamma):
    X = X.toarray() if hasattr(X, "toarray") else X
    return np.exp(-gamma * ((X[:, None] - X[None]) ** 2).sum(-1))


def scipy_minimum(K, T, C):
    """min of ½ Σ wᵀw + C Σ ℓ(Lw + b) with K = LLᵀ: the KLR objective with β = L⁻ᵀw, which
    L-BFGS solves to high accuracy (the β form is badly conditioned)."""
    n, k = T.shape
    L = la.cholesky(K + 1e-12 * np.eye(n), lower=True)

    def J(theta):
        w, b = theta[:n * k].reshape(n, k), theta[n * k:]
        f = L @ w + b
        if k == 1:
            p = 1 / (1 + np.exp(-f))
            loss = -np.sum(T * log_expit(f) + (1 - T) * log_expit(-f))
            r = p - T
        else:
            lse = logsumexp(f, axis=1, keepdims=True)
            loss = np.sum(lse[:, 0] - np.sum(T * f, axis=1))
            r = np.exp(f - lse) - T
        grad = np.concatenate([(w + C * L.T @ r).ravel(), C * r.sum(axis=0)])
        return 0.5 * np.sum(w * w) + C * loss, grad

    res = minimize(J, np.zeros(n * k + k), jac=True, method="L-BFGS-B",
                   options={"maxiter": 50000, "gtol": 1e-11, "ftol": 1e-16})
    return res.fun


@pytest.mark.parametrize("case", ["binary", "multinomial"])
def test_objective_at_the_solution_equals_scipy_minimum(case):
    X, y = (heart_scale() if case == "binary" else iris())
    X, y = X[::2], y[::2]
    model = svmkit.KernelLogisticRegression(C=2.0, gamma=0.2, tol=1e-10).fit(X, y)
    classes = np.unique(y)
    T = (y == classes[1]).astype(float)[:, None] if case == "binary" else np.eye(3)[np.searchsorted(classes, y)]
    assert model.objective_ == pytest.approx(scipy_minimum(rbf(X, 0.2), T, 2.0), rel=1e-6)


@pytest.mark.parametrize("k", [1, 3])
def test_gradient_matches_finite_differences(k):
    rng = np.random.default_rng(k)
    X = rng.normal(size=(30, 2))
    K = rbf(X, 0.7)
    T = (rng.random((30, 1)) > 0.5).astype(float) if k == 1 else np.eye(3)[rng.integers(0, 3, 30)]
    c = rng.uniform(0.5, 2.0, 30)
    op = dense_operator(K, 10)
    beta, b = rng.normal(size=(30, k)), rng.normal(size=k)
    _, g_beta, g_b = objective_and_gradient(op, T, c, beta, b)
    h = 1e-6
    for i, j in [(0, 0), (7, k - 1), (29, 0)]:
        step = np.zeros_like(beta)
        step[i, j] = h
        fd = (objective_and_gradient(op, T, c, beta + step, b)[0] - objective_and_gradient(op, T, c, beta - step, b)[0]) / (2 * h)
        assert g_beta[i, j] == pytest.approx(fd, rel=1e-5, abs=1e-7)
    step = np.zeros(k)
    step[-1] = h
    fd = (objective_and_gradient(op, T, c, beta, b + step)[0] - objective_and_gradient(op, T, c, beta, b - step)[0]) / (2 * h)
    assert g_b[-1] == pytest.approx(fd, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("data", [breast_cancer, iris, wine])
def test_linear_kernel_equals_scikit_learn_logistic_regression(data):
    X, y = data()
    ours = svmkit.KernelLogisticRegression(C=0.5, kernel="linear", tol=1e-10).fit(X, y)
    theirs = LogisticRegression(C=0.5, tol=1e-12, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-5)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def test_nystrom_with_every_row_as_centre_equals_the_exact_solver():
    X, y = wine()
    exact = svmkit.KernelLogisticRegression(C=10.0).fit(X, y)
    full = svmkit.KernelLogisticRegression(C=10.0, solver="nystrom", n_components=X.shape[0]).fit(X, y)
    assert full.objective_ == pytest.approx(exact.objective_, rel=1e-6)
    np.testing.assert_allclose(full.predict_proba(X), exact.predict_proba(X), atol=1e-5)


def test_nystrom_keeps_only_its_centres_and_predicts_close_to_exact():
    X, y = breast_cancer()
    exact = svmkit.KernelLogisticRegression(C=1.0).fit(X, y)
    small = svmkit.KernelLogisticRegression(C=1.0, solver="nystrom", n_components=200, random_state=0).fit(X, y)
    assert small.support_vectors_.shape == (200, X.shape[1]) and small.dual_coef_.shape == (1, 200)
    assert np.mean(small.predict(X) == exact.predict(X)) >= 0.98


@pytest.mark.parametrize("data", [heart_scale, iris])
def test_conjugate_gradient_newton_equals_cholesky_newton(data, monkeypatch):
    X, y = data()
    chol = svmkit.KernelLogisticRegression(C=5.0, tol=1e-9).fit(X, y)
    monkeypatch.setattr(newton, "DENSE_MAX", 0)
    cg = svmkit.KernelLogisticRegression(C=5.0, tol=1e-9).fit(X, y)
    assert cg.objective_ == pytest.approx(chol.objective_, rel=1e-8)
    np.testing.assert_allclose(cg.predict_proba(X), chol.predict_proba(X), atol=1e-6)


def test_multinomial_weight_root_factors_the_softmax_curvature():
    """L_n L_nᵀ = c_n (diag(p_n) − p_n p_nᵀ), the softmax's Hessian, for L applied in O(k)."""
    p = np.random.default_rng(0).dirichlet(np.ones(5), size=4)
    c = np.array([0.5, 1.0, 2.0, 3.0])
    L = newton._Loss(np.eye(5)[[0, 1, 2, 3]]).root_weights(p, c).matrices()
    W = c[:, None, None] * (np.einsum("na,ab->nab", p, np.eye(5)) - p[:, :, None] * p[:, None, :])
    np.testing.assert_allclose(L @ L.transpose(0, 2, 1), W, atol=1e-15)


def test_many_class_newton_in_blocks_of_right_hand_sides_equals_cholesky_newton(monkeypatch):
    """The CG path solves the intercept's right-hand sides a few at a time with a preconditioner
    of few Nyström features; the fit equals the one from the formed, factorised system."""
    X, y = iris()
    chol = svmkit.KernelLogisticRegression(C=5.0, tol=1e-9).fit(X[::3], y[::3])
    monkeypatch.setattr(newton, "DENSE_MAX", 0)
    monkeypatch.setattr(newton, "RHS_BLOCK", 2)
    monkeypatch.setattr(newton, "PRECONDITIONER_ELEMENTS", 3 * 10 ** 2)
    cg = svmkit.KernelLogisticRegression(C=5.0, tol=1e-9).fit(X[::3], y[::3])
    assert cg.objective_ == pytest.approx(chol.objective_, rel=1e-8)
    np.testing.assert_allclose(cg.predict_proba(X), chol.predict_proba(X), atol=1e-6)


def test_integer_sample_weights_equal_repeated_rows():
    X, y = iris()
    w = np.where(np.arange(150) % 3 == 0, 2, 1)
    weighted = svmkit.KernelLogisticRegression(C=3.0, gamma=0.25, tol=1e-10).fit(X, y, sample_weight=w)
    repeated = svmkit.KernelLogisticRegression(C=3.0, gamma=0.25, tol=1e-10).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), atol=1e-6)


def test_separable_data_give_finite_coefficients():
    X = np.r_[np.linspace(-3, -1, 10), np.linspace(1, 3, 10)][:, None]
    y = np.r_[np.zeros(10), np.ones(10)]
    model = svmkit.KernelLogisticRegression(C=100.0, kernel="linear").fit(X, y)
    assert np.isfinite(model.dual_coef_).all() and model.score(X, y) == 1.0


@pytest.mark.parametrize("params, message", [
    ({"C": 0.0}, "C must be > 0"),
    ({"solver": "lbfgs"}, "solver"),
    ({"max_iter": -1}, "max_iter must be a positive number of Newton steps"),
    ({"solver": "nystrom", "kernel": "precomputed"}, "cannot take kernel='precomputed'"),
])
def test_bad_parameters_are_named(params, message):
    X, y = iris()
    with pytest.raises(ValueError, match=message):
        svmkit.KernelLogisticRegression(**params).fit(X, y)


def test_one_class_is_refused():
    X, y = iris()
    with pytest.raises(ValueError, match="at least 2 classes"):
        svmkit.KernelLogisticRegression().fit(X[:50], y[:50])


def test_saved_model_predicts_the_same(tmp_path):
    X, y = iris()
    model = svmkit.KernelLogisticRegression(C=3.0).fit(X, y)
    svmkit.save(model, tmp_path / "klr.svmkit")
    loaded = svmkit.load(tmp_path / "klr.svmkit")
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_stopping_before_tol_warns():
    from sklearn.exceptions import ConvergenceWarning

    X, y = iris()
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        svmkit.KernelLogisticRegression(C=100.0, max_iter=1).fit(X, y)
