"""The ε-band of Bi & Bennett (2003): ε_inf against brute force and its LP dual, the hard ε-band SVR by SMO and by
the reduction to hard-margin classification, and the soft ε-band primal and dual objectives."""

import doctest
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_diabetes

from svmkit.models import band
from svmkit.models.band import (HardBandSVR, epsilon_inf, epsilon_inf_lp, hard_band_reduction, soft_band_dual,
                         soft_band_primal)
from svmkit.models import SVR


def trend():
    """A line plus a sinc bump plus noise: ε_inf ≈ 0.2424, (max y − min y)/2 ≈ 1.52."""
    rng = np.random.default_rng(0)
    x = np.linspace(-3, 3, 40)[:, None]
    return x, 0.5 * x.ravel() + 0.3 * np.sinc(x).ravel() + 0.05 * rng.normal(size=40)


def diabetes2():
    """The first two features of the first 80 rows of scikit-learn's diabetes data, y in units of 100."""
    X, y = load_diabetes(return_X_y=True)
    return X[:80, :2] / X[:80, :2].std(axis=0), y[:80] / 100.0


def brute_chebyshev(X, y):
    """min over (w, b) of max_i |y_i − wᵀx_i − b| by enumeration: every d + 2 rows with every sign
    pattern s fix a candidate through y_i − wᵀx_i − b = s_i e; each candidate's max residual bounds
    ε_inf from above, and the LP's optimal vertex is one of them."""
    n, d = X.shape
    best = np.inf
    for rows in itertools.combinations(range(n), d + 2):
        for signs in itertools.product((-1.0, 1.0), repeat=d + 2):
            A = np.column_stack([X[list(rows)], np.ones(d + 2), np.array(signs)])
            if abs(np.linalg.det(A)) < 1e-12:
                continue
            w_b_e = np.linalg.solve(A, y[list(rows)])
            best = min(best, np.abs(y - X @ w_b_e[:d] - w_b_e[d]).max())
    return best


@pytest.mark.parametrize("seed, n, d", [(0, 4, 1), (1, 5, 1), (2, 6, 1), (3, 6, 2)])
def test_epsilon_inf_is_the_brute_force_chebyshev_error(seed, n, d):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(n, d)), rng.normal(size=n)
    eps, w, b = epsilon_inf(X, y)
    assert eps == pytest.approx(brute_chebyshev(X, y), abs=1e-9)
    assert np.abs(y - X @ w - b).max() == pytest.approx(eps, abs=1e-9)


def test_epsilon_inf_lp_dual_certificate():
    """HiGHS's marginals m ≤ 0 solve the LP's dual: max b_ubᵀm, A_ubᵀm = 0 on the free (w, b),
    (A_ubᵀm)_ε̄ ≤ 1; strong duality b_ubᵀm = ε_inf certifies the optimum."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 2))
    y = X @ [1.0, -2.0] + 0.3 + rng.uniform(-0.5, 0.5, size=30)
    res = epsilon_inf_lp(X, y)
    n, d = X.shape
    ones = np.ones((n, 1))
    A_ub = np.block([[-X, -ones, -ones], [X, ones, -ones]])
    b_ub = np.concatenate([-y, y])
    m = res.ineqlin.marginals
    assert (m <= 1e-12).all()
    assert np.allclose(A_ub[:, : d + 1].T @ m, 0.0, atol=1e-9)
    assert A_ub[:, -1] @ m == pytest.approx(1.0, abs=1e-9)  # ε̄ > 0, so its reduced cost is 0
    assert b_ub @ m == pytest.approx(res.fun, abs=1e-9)
    assert res.fun == pytest.approx(epsilon_inf(X, y)[0], abs=0)
    assert res.fun < 0.5  # the noise's half-width bounds the Chebyshev error


def test_epsilon_inf_accepts_csr():
    X, y = diabetes2()
    assert epsilon_inf(sp.csr_matrix(X), y)[0] == pytest.approx(epsilon_inf(X, y)[0], rel=1e-12)


@pytest.mark.parametrize("data, margins", [(trend, (0.01, 0.06, 0.3, 1.0)), (diabetes2, (0.02, 0.05))])
def test_smo_and_reduction_give_the_same_hard_band(data, margins):
    X, y = data()
    eps_inf = epsilon_inf(X, y)[0]
    for margin in margins:
        eps = eps_inf + margin
        assert eps < np.ptp(y) / 2  # below it, w* ≠ 0 and the reduction's ε̄ is finite
        smo = HardBandSVR(epsilon=eps).fit(X, y)
        red = HardBandSVR(epsilon=eps, method="reduction").fit(X, y)
        assert np.allclose(smo.coef_, red.coef_, atol=1e-6)
        assert smo.intercept_ == pytest.approx(red.intercept_, abs=1e-6)
        for model in (smo, red):
            # The SMO's float32 kernel rows (LIBSVM's) bound the accuracy near 1e-7 relative.
            assert np.abs(y - model.predict(X)).max() <= eps * (1 + 1e-6)
            assert model.epsilon_inf_ == eps_inf
        # Bi & Bennett's relation ε = ε̄ − 1/η̄ and its inequalities ε_inf ≤ ε < ε̄.
        assert red.epsilon_bar_ - 1.0 / red.eta_bar_ == pytest.approx(eps, abs=1e-9)
        assert eps_inf <= eps < red.epsilon_bar_ and red.eta_bar_ > 0


def test_hard_band_norm_falls_as_the_band_widens():
    X, y = trend()
    eps_inf = epsilon_inf(X, y)[0]
    norms = [np.linalg.norm(HardBandSVR(epsilon=eps_inf + m).fit(X, y).coef_) for m in (0.01, 0.1, 0.5, 1.0)]
    assert all(a > b for a, b in zip(norms, norms[1:]))


@pytest.mark.parametrize("epsilon_bar", [0.5, 3.0, 10.0])
def test_reduction_theorem(epsilon_bar):
    """For ε̄ > ε_inf: η̄ > 0, ε_inf ≤ ε = ε̄ − 1/η̄ < ε̄, and (−w̄/η̄, −b̄/η̄) is the hard ε-band
    hyperplane. Near ε_inf the optimal ε is ε_inf itself (ε̄ = 0.5 here): the band is the Chebyshev fit."""
    X, y = trend()
    eps_inf, w_inf, b_inf = epsilon_inf(X, y)
    r = hard_band_reduction(X, y, epsilon_bar)
    assert r.eta_bar > 0
    assert r.epsilon == pytest.approx(epsilon_bar - 1.0 / r.eta_bar, abs=0)
    assert eps_inf - 1e-7 <= r.epsilon < epsilon_bar
    assert np.allclose(r.coef, -r.w_bar / r.eta_bar) and r.intercept == pytest.approx(-r.b_bar / r.eta_bar)
    assert np.abs(y - X @ r.coef - r.intercept).max() <= r.epsilon * (1 + 1e-6)
    if r.epsilon < eps_inf + 1e-6:
        assert np.allclose(r.coef, w_inf, atol=1e-6) and r.intercept == pytest.approx(b_inf, abs=1e-6)
    else:
        smo = HardBandSVR(epsilon=r.epsilon).fit(X, y)
        assert np.allclose(smo.coef_, r.coef, atol=1e-6) and smo.intercept_ == pytest.approx(r.intercept, abs=1e-6)


def test_reduction_needs_epsilon_bar_above_epsilon_inf():
    X, y = trend()
    eps_inf = epsilon_inf(X, y)[0]
    for epsilon_bar in (0.5 * eps_inf, eps_inf):
        with pytest.raises(ValueError, match=r"epsilon_bar=.* must exceed epsilon_inf=0\.2424"):
            hard_band_reduction(X, y, epsilon_bar)
    with pytest.raises(ValueError, match="epsilon_bar"):
        hard_band_reduction(X, y, -1.0)


def _svr_multipliers(svr, n):
    """(α, α*) = (μ, λ) of a fitted SVR: dual_coef_ holds α − α*, and for ε > 0 at most one is nonzero."""
    beta = np.zeros(n)
    beta[svr.support_] = svr.dual_coef_.ravel()
    return np.maximum(beta, 0.0), np.maximum(-beta, 0.0)


@pytest.mark.parametrize("data, C, eps", [(trend, 1.0, 0.1), (trend, 10.0, 0.05), (diabetes2, 0.5, 0.2)])
def test_soft_band_primal_and_dual_are_the_svr_objective(data, C, eps):
    X, y = data()
    svr = SVR(kernel="linear", C=C, epsilon=eps, tol=1e-8).fit(X, y)
    alpha, alpha_star = _svr_multipliers(svr, y.size)
    assert alpha.sum() == pytest.approx(alpha_star.sum(), rel=1e-9)
    assert alpha.max() <= C * (1 + 1e-12) and alpha_star.max() <= C * (1 + 1e-12)
    primal = soft_band_primal(X, y, svr.coef_.ravel(), svr.intercept_[0], C, eps)
    dual = soft_band_dual(X, y, alpha, alpha_star, eps)
    # LIBSVM minimises the negated dual: objective_ = −(the maximised dual).
    assert dual == pytest.approx(-svr.objective_, rel=1e-6)
    assert primal == pytest.approx(-svr.objective_, rel=1e-6)
    assert primal == pytest.approx(dual, rel=1e-6)
    # Away from the solution the primal rises and a feasible dual point falls (weak duality).
    rng = np.random.default_rng(5)
    assert soft_band_primal(X, y, svr.coef_.ravel() + 0.05 * rng.normal(size=X.shape[1]), svr.intercept_[0],
                            C, eps) > primal
    mu = rng.uniform(0, C, size=y.size)
    lam = mu[rng.permutation(y.size)]
    assert soft_band_dual(X, y, mu, lam, eps) < primal


def test_linear_svr_solves_the_soft_band_svr_where_its_intercept_is_free():
    """LinearSVR regularises b (LIBLINEAR's constant feature); on standardised data the optimum
    has b ≈ 0, so that its (w, b) reach the linear soft ε-band SVR's optimum of SVR(kernel='linear')."""
    from svmkit import LinearSVR

    X, y = load_diabetes(return_X_y=True)
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    C, eps = 0.5, 0.2
    svr = SVR(kernel="linear", C=C, epsilon=eps, tol=1e-8).fit(X, y)
    lin = LinearSVR(C=C, epsilon=eps, tol=1e-10, max_iter=100000, random_state=0).fit(X, y)
    exact = soft_band_primal(X, y, svr.coef_.ravel(), svr.intercept_[0], C, eps)
    assert soft_band_primal(X, y, lin.coef_, lin.intercept_[0], C, eps) == pytest.approx(exact, rel=1e-6)
    assert -svr.objective_ == pytest.approx(exact, rel=1e-6)


def test_soft_band_rejects_bad_multipliers_and_shapes():
    X, y = trend()
    with pytest.raises(ValueError, match=r"alpha_star must be finite and >= 0, got alpha_star\[3\]=-1\.0$"):
        soft_band_dual(X, y, np.zeros(40), -np.eye(40)[3], 0.1)
    with pytest.raises(ValueError, match="alpha must have one entry per sample"):
        soft_band_dual(X, y, np.zeros(39), np.zeros(40), 0.1)
    with pytest.raises(ValueError, match="w must have one entry per feature"):
        soft_band_primal(X, y, np.zeros(2), 0.0, 1.0, 0.1)
    with pytest.raises(ValueError, match="C must be > 0"):
        soft_band_primal(X, y, np.zeros(1), 0.0, 0.0, 0.1)


def test_negative_epsilon_is_rejected():
    X, y = trend()
    with pytest.raises(ValueError, match=r"epsilon must be >= 0, got epsilon=-0.1"):
        HardBandSVR(epsilon=-0.1).fit(X, y)


@pytest.mark.parametrize("method", ["smo", "reduction"])
def test_epsilon_below_or_at_epsilon_inf_states_epsilon_inf(method):
    X, y = trend()
    eps_inf = epsilon_inf(X, y)[0]
    with pytest.raises(ValueError, match=r"epsilon=0.1 is below epsilon_inf=0\.2424435\d*: no hyperplane"):
        HardBandSVR(epsilon=0.1, method=method).fit(X, y)
    with pytest.raises(ValueError, match=r"equals epsilon_inf=0\.2424435"):
        HardBandSVR(epsilon=eps_inf, method=method).fit(X, y)


@pytest.mark.parametrize("method", ["smo", "reduction"])
def test_constant_targets_and_a_single_row_are_exact(method):
    X = np.random.default_rng(6).normal(size=(7, 3))
    assert epsilon_inf(X, np.full(7, 2.5)) == (0.0, pytest.approx(np.zeros(3), abs=0), 2.5)
    for eps in (0.0, 0.3):
        model = HardBandSVR(epsilon=eps, method=method).fit(X, np.full(7, 2.5))
        assert model.epsilon_inf_ == 0.0 and (model.coef_ == 0).all() and model.intercept_ == 2.5
    eps, w, b = epsilon_inf([[1.0, 2.0]], [4.0])
    assert (eps, b) == (0.0, 4.0) and (w == 0).all()
    model = HardBandSVR(epsilon=0.1, method=method).fit([[1.0, 2.0]], [4.0])
    assert model.predict([[7.0, -1.0]]) == pytest.approx([4.0], abs=0)


@pytest.mark.parametrize("method", ["smo", "reduction"])
def test_wide_band_is_flat_at_the_midrange(method):
    X, y = trend()
    model = HardBandSVR(epsilon=np.ptp(y) / 2 + 0.1, method=method).fit(X, y)
    assert (model.coef_ == 0).all() and model.intercept_ == pytest.approx((y.max() + y.min()) / 2, abs=0)
    if method == "reduction":
        assert model.epsilon_bar_ == np.inf and model.eta_bar_ == 0.0


def test_collinear_features():
    """ε_inf is that of the one direction; (w, b) from the LP is one of many minimisers, while the
    hard band's w is the minimum-norm split, w ∝ (1, 2)."""
    x, y = trend()
    X = np.column_stack([x, 2 * x])
    eps1, w1, b1 = epsilon_inf(x, y)
    eps2, w2, b2 = epsilon_inf(X, y)
    assert eps2 == pytest.approx(eps1, abs=1e-9)
    assert np.abs(y - X @ w2 - b2).max() == pytest.approx(eps1, abs=1e-9)
    single = HardBandSVR(epsilon=0.4).fit(x, y)
    for method in ("smo", "reduction"):
        model = HardBandSVR(epsilon=0.4, method=method).fit(X, y)
        assert np.allclose(model.coef_, single.coef_[0] * np.array([1.0, 2.0]) / 5.0, atol=1e-6)
        assert model.intercept_ == pytest.approx(single.intercept_, abs=1e-6)


@pytest.mark.parametrize("method", ["smo", "reduction"])
def test_csr_input_gives_the_dense_fit(method):
    X, y = diabetes2()
    eps = epsilon_inf(X, y)[0] + 0.2
    dense = HardBandSVR(epsilon=eps, method=method).fit(X, y)
    sparse = HardBandSVR(epsilon=eps, method=method).fit(sp.csr_matrix(X), y)
    assert np.allclose(dense.coef_, sparse.coef_, atol=1e-9) and dense.intercept_ == pytest.approx(sparse.intercept_)
    assert np.allclose(sparse.predict(sp.csr_matrix(X)), dense.predict(X))


@pytest.mark.parametrize("X, y, message", [
    (np.empty((0, 2)), np.empty(0), "0 sample"),
    ([[1.0], [np.nan]], [1.0, 2.0], "X contains NaN at row 1"),
    ([[1.0], [2.0]], [1.0, np.inf], "Input y contains infinity"),
    ([[1.0], [2.0], [3.0]], [1.0, 2.0], "inconsistent numbers of samples"),
])
def test_bad_data_is_a_clear_value_error(X, y, message):
    with pytest.raises(ValueError, match=message):
        epsilon_inf(X, y)
    with pytest.raises(ValueError, match=message):
        HardBandSVR(epsilon=1.0).fit(X, y)


def test_bad_parameters_and_predict_shape():
    X, y = trend()
    with pytest.raises(ValueError, match="method must be one of"):
        HardBandSVR(epsilon=1.0, method="qp").fit(X, y)
    with pytest.raises(ValueError, match="tol must be > 0"):
        HardBandSVR(epsilon=1.0, tol=0.0).fit(X, y)
    model = HardBandSVR(epsilon=0.5).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but HardBandSVR is expecting 1 features"):
        model.predict(np.ones((3, 2)))


def test_scikit_learn_protocol():
    X, y = trend()
    model = clone(HardBandSVR(epsilon=0.5, method="reduction"))
    assert model.get_params() == {"epsilon": 0.5, "method": "reduction", "tol": 1e-9, "max_iter": -1}
    assert not hasattr(model, "coef_")
    assert model.fit(X, y).score(X, y) > 0.8


def test_docstring_examples_run():
    result = doctest.testmod(band)
    assert result.attempted > 0 and result.failed == 0


def test_refit_by_smo_drops_the_reductions_attributes():
    x = np.linspace(0, 1, 20)[:, None]
    t = 2 * x[:, 0] + 0.1 * np.sin(20 * x[:, 0])
    model = HardBandSVR(epsilon=0.2, method="reduction").fit(x, t)
    assert hasattr(model, "epsilon_bar_")
    model.set_params(method="smo").fit(x, t)
    assert not hasattr(model, "epsilon_bar_") and not hasattr(model, "eta_bar_")


@pytest.mark.parametrize("data", [trend, diabetes2])
def test_epsilon_inf_does_not_depend_on_the_scale_of_x(data):
    """The LP on X's columns and y mapped to [−1, 1]: HiGHS's absolute tolerances made
    X × 1e-9 give twice the answer, and X × 1e150 a 'Model error'."""
    X, y = data()
    eps, w, b = epsilon_inf(X, y)
    for s in (1e-9, 1e150):
        eps_s, w_s, b_s = epsilon_inf(X * s, y)
        assert eps_s == pytest.approx(eps, rel=1e-9)
        assert np.abs(y - (X * s) @ w_s - b_s).max() == pytest.approx(eps, rel=1e-9)
    assert epsilon_inf(X, y * 1e-9)[0] == pytest.approx(eps * 1e-9, rel=1e-9)


def test_hard_band_of_x_scaled_by_1e150_is_the_band_of_x_scaled_back():
    X, y = trend()
    model = HardBandSVR(epsilon=0.4).fit(X, y)
    scaled = HardBandSVR(epsilon=0.4).fit(X * 1e150, y)
    assert scaled.coef_ * 1e150 == pytest.approx(model.coef_, rel=1e-6)
    assert scaled.intercept_ == pytest.approx(model.intercept_, rel=1e-6)
    assert HardBandSVR(epsilon=0.4).fit(X * 2.0**-40, y).coef_ * 2.0**-40 == pytest.approx(model.coef_, rel=1e-12)


def test_auto_epsilon_lies_between_epsilon_inf_and_the_constant_fit():
    X, y = load_diabetes(return_X_y=True)
    model = HardBandSVR().fit(X, y)
    half = np.ptp(y) / 2
    assert model.epsilon_ == pytest.approx(model.epsilon_inf_ + 0.1 * (half - model.epsilon_inf_))
    assert np.abs(y - model.predict(X)).max() <= model.epsilon_ * (1 + 1e-6)
