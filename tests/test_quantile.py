"""Kernel quantile regression against a generic QP solver (Clarabel) on its dual, and the
fraction of targets below the fit."""

import numpy as np
import pytest
import scipy.sparse as sp

import svmkit
from conftest import diabetes


def _pinball_dual(K, y, upper_pos, upper_neg):
    """min ½aᵀKa − yᵀa, Σa = 0, −upper_neg ≤ a ≤ upper_pos, solved by Clarabel's interior point."""
    clarabel = pytest.importorskip("clarabel")
    n = y.size
    A = sp.csc_matrix(np.vstack([np.ones((1, n)), np.eye(n), -np.eye(n)]))
    b = np.concatenate([[0.0], upper_pos, upper_neg])
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-12
    solver = clarabel.DefaultSolver(sp.csc_matrix(np.triu(K)), -y, A, b,
                                    [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(2 * n)], settings)
    a = np.asarray(solver.solve().x)
    return 0.5 * a @ K @ a - y @ a


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    return X, np.sin(X[:, 0]) + 0.3 * rng.normal(size=n)


@pytest.mark.parametrize("tau", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_the_objective_equals_a_generic_qp_solvers(tau, kernel):
    X, y = _data()
    model = svmkit.KernelQuantileRegressor(quantile=tau, C=2.0, kernel=kernel, gamma=0.5, coef0=1.0, degree=2,
                                           tol=1e-6).fit(X, y)
    from sklearn.metrics.pairwise import pairwise_kernels

    K = pairwise_kernels(X, metric=kernel, **({"gamma": 0.5} if kernel == "rbf" else
                                              {"gamma": 0.5, "coef0": 1.0, "degree": 2} if kernel == "poly" else {}))
    expected = _pinball_dual(K, y, np.full(y.size, 2.0 * tau), np.full(y.size, 2.0 * (1 - tau)))
    assert model.objective_ == pytest.approx(expected, rel=1e-6)


def test_sample_weights_scale_each_rows_box():
    X, y = _data()
    w = np.random.default_rng(1).uniform(0.2, 3.0, size=y.size)
    model = svmkit.KernelQuantileRegressor(quantile=0.3, C=1.5, gamma=0.5, tol=1e-6).fit(X, y, sample_weight=w)
    from sklearn.metrics.pairwise import rbf_kernel

    expected = _pinball_dual(rbf_kernel(X, gamma=0.5), y, 1.5 * w * 0.3, 1.5 * w * 0.7)
    assert model.objective_ == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("tau", [0.1, 0.25, 0.5, 0.75, 0.9])
def test_a_fraction_tau_of_the_targets_lies_below_the_fit(tau):
    """Takeuchi et al. (2006), Lemma 3: #{y < f} ≤ τN ≤ #{y ≤ f}; the rows on the fit are the free ones."""
    X, y = diabetes()
    model = svmkit.KernelQuantileRegressor(quantile=tau, C=10.0).fit(X, y)
    below = np.mean(y < model.predict(X))
    assert abs(below - tau) <= (model.on_tube_.size + 1) / y.size


def test_quantile_must_lie_strictly_between_0_and_1():
    X, y = _data(20)
    for bad in (0.0, 1.0, -0.5, 2.0):
        with pytest.raises(ValueError, match="quantile"):
            svmkit.KernelQuantileRegressor(quantile=bad).fit(X, y)


def test_saves_loads_and_searches(tmp_path):
    X, y = _data()
    model = svmkit.KernelQuantileRegressor(quantile=0.8, C=3.0).fit(X, y)
    svmkit.save(model, tmp_path / "q.svmkit")
    back = svmkit.load(tmp_path / "q.svmkit")
    assert back.quantile == 0.8 and np.array_equal(back.predict(X), model.predict(X))
    search = svmkit.SVMSearchCV(svmkit.KernelQuantileRegressor(quantile=0.8),
                                param_grid={"C": [0.5, 5.0], "gamma": [0.1, 1.0]}, cv=3).fit(X, y)
    assert set(search.best_params_) == {"C", "gamma"} and search.best_estimator_.quantile == 0.8
