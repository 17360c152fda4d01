"""Conformal intervals and prediction sets (svmkit.models.conformal): jackknife+ against MAPIE's
and against refits without each row, coverage over random splits within the finite-sample
bounds, CV+, split conformal, LAC sets, and the errors."""

from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import NotFittedError

import svmkit
from conftest import diabetes, iris

#: The shared data folder beside the repository (or the machine's), skipped when absent.
SHARED = [Path(__file__).resolve().parents[1] / ".." / "shared", Path("/work/shared")]
#: Rows of cadata the coverage test draws from (a fixed random subsample, for the test's time).
CADATA_ROWS = 2_000
SPLITS = 200


def cadata():
    """A fixed 2,000-row subsample of cadata, features standardised, target in units of 10⁵ $."""
    for root in SHARED:
        path = root / "data" / "derived" / "cadata"
        if path.exists():
            X, y = load_svmlight_file(str(path))
            rows = np.random.default_rng(0).choice(X.shape[0], CADATA_ROWS, replace=False)
            X = X[rows].toarray()
            return (X - X.mean(0)) / X.std(0), y[rows] / 1e5
    pytest.skip("cadata (../shared/data/derived/cadata) is absent")


def toy(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n), rng.normal(size=(20, 3))


def test_jackknife_plus_equals_mapie_with_scikit_learns_kernel_ridge():
    mapie = pytest.importorskip("mapie.regression")
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import LeaveOneOut

    X, y, Xt = toy()
    for coverage in (0.8, 0.9):  # c·(n+1) = 48.8, 54.9: no rounding at the order statistic
        theirs = mapie.CrossConformalRegressor(KernelRidge(alpha=0.5, kernel="rbf", gamma=0.3),
                                               confidence_level=coverage, method="plus",
                                               cv=LeaveOneOut()).fit_conformalize(X, y)
        ours = svmkit.KernelRidge(alpha=0.5, kernel="rbf", gamma=0.3).fit_conformalize(X, y)
        np.testing.assert_allclose(ours.predict_interval(Xt, coverage), theirs.predict_interval(Xt)[1][:, :, 0],
                                   rtol=0, atol=1e-8)


@pytest.mark.parametrize("make, weighted", [
    (lambda: svmkit.KernelRidge(alpha=0.3, kernel="rbf", gamma=0.5), False),
    (lambda: svmkit.KernelRidge(alpha=0.3, kernel="rbf", gamma=0.5), True),
    (lambda: svmkit.LSSVR(C=5.0, gamma=0.5), False),
    (lambda: svmkit.LSSVR(C=5.0, gamma=0.5), True),
    (lambda: svmkit.KernelRidge(alpha=0.3, kernel="rbf", gamma=0.5, solver="eigen"), False),
])
def test_each_leave_one_out_prediction_equals_a_refit_without_the_row(make, weighted):
    X, y, Xt = toy(40)
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=y.size) if weighted else None
    model = make().fit_conformalize(X, y, sample_weight=w)
    leave_out = model._leave_out_block(model._check_predict_X(Xt))[:, :, 0]
    for i in (0, 7, 39):
        keep = np.arange(y.size) != i
        refit = make().fit(X[keep], y[keep], None if w is None else w[keep])
        np.testing.assert_allclose(leave_out[:, i], refit.predict(Xt), rtol=0, atol=1e-9)
        assert model.loo_residuals_[i] == pytest.approx(y[i] - refit.predict(X[i:i + 1])[0], abs=1e-9)


def test_multi_output_kernel_ridge_gives_one_interval_per_output():
    X, y, Xt = toy()
    Y = np.column_stack([y, 2 * y + X[:, 1]])
    both = svmkit.KernelRidge(alpha=0.5, kernel="rbf", gamma=0.3).fit_conformalize(X, Y).predict_interval(Xt)
    assert both.shape == (20, 2, 2)
    for k in range(2):
        one = svmkit.KernelRidge(alpha=0.5, kernel="rbf", gamma=0.3).fit_conformalize(X, Y[:, k])
        np.testing.assert_allclose(both[:, :, k], one.predict_interval(Xt), atol=1e-10)


def _split_coverage(model, X, y, n_train, n_cal, coverage, seed):
    """Coverage of split conformal over SPLITS random (calibration, test) draws from the rows
    outside a fixed training part."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(y.size)
    train, rest = order[:n_train], order[n_train:]
    model.fit(X[train], y[train])
    covered = []
    for _ in range(SPLITS):
        part = rng.permutation(rest)
        cal, test = part[:n_cal], part[n_cal:]
        bounds = model.conformalize(X[cal], y[cal]).predict_interval(X[test], coverage, method="split")
        covered.append(np.mean((bounds[:, 0] <= y[test]) & (y[test] <= bounds[:, 1])))
    return np.array(covered)


def _jackknife_coverage(make, X, y, n_train, coverage, seed, splits=SPLITS):
    rng = np.random.default_rng(seed)
    covered = []
    for _ in range(splits):
        part = rng.permutation(y.size)
        train, test = part[:n_train], part[n_train:]
        bounds = make().fit_conformalize(X[train], y[train]).predict_interval(X[test], coverage)
        covered.append(np.mean((bounds[:, 0] <= y[test]) & (y[test] <= bounds[:, 1])))
    return np.array(covered)


def _assert_within(covered, low, high):
    """The mean coverage within [low, high] up to four Monte-Carlo standard errors."""
    slack = 4 * covered.std(ddof=1) / np.sqrt(covered.size)
    assert low - slack <= covered.mean() <= high + slack, (covered.mean(), low, high, slack)


@pytest.mark.parametrize("data, make", [
    (diabetes, lambda: svmkit.KernelRidge(alpha=1.0, kernel="rbf", gamma=0.05)),
    (cadata, lambda: svmkit.KernelRidge(alpha=0.5, kernel="rbf", gamma=0.2)),
])
def test_coverage_over_random_splits_within_the_finite_sample_bounds(data, make):
    X, y = data()
    coverage, n_cal = 0.9, 99
    _assert_within(_split_coverage(make(), X, y, 200, n_cal, coverage, 1), coverage, coverage + 1 / (n_cal + 1))
    jack = _jackknife_coverage(make, X, y, 150, coverage, 2)
    _assert_within(jack, 1 - 2 * (1 - coverage), 1.0)


def test_lssvr_jackknife_plus_covers():
    X, y = diabetes()
    _assert_within(_jackknife_coverage(lambda: svmkit.LSSVR(C=1.0, gamma=0.05), X, y, 150, 0.9, 3, splits=50),
                   0.8, 1.0)


def test_prediction_sets_cover_within_the_finite_sample_bounds():
    X, y = iris()
    rng = np.random.default_rng(4)
    order = rng.permutation(y.size)
    train, rest = order[:60], order[60:]
    model = svmkit.KernelLogisticRegression(C=1.0, gamma=0.5).fit(X[train], y[train])
    coverage, n_cal, covered, sizes = 0.9, 49, [], []
    for _ in range(SPLITS):
        part = rng.permutation(rest)
        cal, test = part[:n_cal], part[n_cal:]
        sets = model.conformalize(X[cal], y[cal]).predict_set(X[test], coverage)
        assert sets.shape == (test.size, 3) and sets.dtype == bool
        covered.append(np.mean(sets[np.arange(test.size), np.searchsorted(model.classes_, y[test])]))
        sizes.append(sets.sum(axis=1).mean())
    _assert_within(np.array(covered), coverage, coverage + 1 / (n_cal + 1))
    assert np.mean(sizes) < 2.0  # LAC sets may be empty where no class is probable enough


def test_svc_sets_read_platt_probabilities():
    X, y = iris()
    model = svmkit.SVC(probability=True, random_state=0).fit(X[::2], y[::2])
    sets = model.conformalize(X[1::2], y[1::2]).predict_set(X[1::2], 0.8)
    scores = np.sort(1 - model.predict_proba(X[1::2])[np.arange(75), np.searchsorted(model.classes_, y[1::2])])
    q = scores[int(np.ceil(0.8 * 76)) - 1]
    np.testing.assert_array_equal(sets, 1 - model.predict_proba(X[1::2]) <= q)


def test_cv_plus_fold_models_equal_cold_fits_without_their_fold_and_cover():
    X, y = diabetes()
    make = lambda: svmkit.SVR(C=3.0, epsilon=0.1, gamma=0.05, tol=1e-6, random_state=0)  # noqa: E731
    model = make().fit_conformalize(X[:200], y[:200], cv=4)
    assert not hasattr(model, "retained_X_")
    for f in range(4):
        keep = model._cv_fold_ != f
        cold = make().fit(X[:200][keep], y[:200][keep])
        np.testing.assert_allclose(model._cv_models_[f].predict(X[200:]), cold.predict(X[200:]), atol=1e-4)
    bounds = model.predict_interval(X[200:])
    assert np.mean((bounds[:, 0] <= y[200:]) & (y[200:] <= bounds[:, 1])) >= 0.8
    np.testing.assert_array_equal(bounds, model.predict_interval(X[200:], method="cv+"))


def test_split_conformal_on_every_regressor():
    X, y = diabetes()
    for model in (svmkit.SVR(), svmkit.NuSVR(), svmkit.LinearSVR(random_state=0, max_iter=100_000), svmkit.HardBandSVR(),
                  svmkit.KernelRidge(), svmkit.LSSVR(), svmkit.KernelQuantileRegressor()):
        model.fit(X[:200], y[:200]).conformalize(X[200:300], y[200:300])
        bounds = model.predict_interval(X[300:], 0.9)
        half = np.sort(np.abs(y[200:300] - model.predict(X[200:300])))[int(np.ceil(0.9 * 101)) - 1]
        np.testing.assert_allclose(bounds, np.column_stack([model.predict(X[300:]) - half,
                                                            model.predict(X[300:]) + half]))


def test_laplace_stays_the_svr_default():
    X, y = diabetes()
    model = svmkit.SVR(probability=True, random_state=0).fit(X, y)
    f = model.predict(X[:5])
    half = model.probA_[0] * np.log(10.0)
    expected = np.column_stack([f - half, f + half])
    np.testing.assert_allclose(model.predict_interval(X[:5], 0.9), expected)
    np.testing.assert_allclose(model.predict_interval(X[:5], 0.9, method="laplace"), expected)
    model.conformalize(X[:100], y[:100])
    assert not np.allclose(model.predict_interval(X[:5], 0.9), expected)  # a calibration, when given, wins


def test_a_new_fit_drops_the_calibration():
    X, y = diabetes()
    model = svmkit.KernelRidge().fit_conformalize(X[:100], y[:100]).conformalize(X[100:200], y[100:200])
    model.fit(X[:150], y[:150])
    with pytest.raises(NotFittedError, match="conformalize"):
        model.predict_interval(X[:3], method="split")
    with pytest.raises(NotFittedError, match="fit_conformalize"):
        model.predict_interval(X[:3], method="jackknife+")


@pytest.mark.parametrize("change", ["fit", "partial_fit", "forget"])
def test_a_new_fit_or_update_of_an_svr_drops_its_cv_plus_fold_models(change):
    X, y = diabetes()
    model = svmkit.SVR(keep_data=True).fit_conformalize(X[:120], y[:120], cv=3)
    {"fit": lambda: model.fit(X[:100], y[:100]), "partial_fit": lambda: model.partial_fit(X[120:130], y[120:130]),
     "forget": lambda: model.forget([0, 1])}[change]()
    with pytest.raises(NotFittedError, match="fit_conformalize"):
        model.predict_interval(X[:3], method="cv+")
    assert not hasattr(model, "cv_plus_folds_")


def test_a_loaded_svr_refuses_the_cv_plus_intervals_its_file_does_not_keep(tmp_path):
    X, y = diabetes()
    model = svmkit.SVR(probability=True, random_state=0).fit_conformalize(X[:120], y[:120], cv=3)
    svmkit.save(model, tmp_path / "svr.svmkit")
    loaded = svmkit.load(tmp_path / "svr.svmkit")
    for method in (None, "cv+"):
        with pytest.raises(NotFittedError, match="model files keep no fold models"):
            loaded.predict_interval(X[:3], method=method)
    np.testing.assert_array_equal(loaded.predict_interval(X[:3], method="laplace"),
                                  model.predict_interval(X[:3], method="laplace"))


def test_errors_name_what_is_wrong():
    X, y = diabetes()
    with pytest.raises(NotFittedError):
        svmkit.KernelRidge().predict_interval(X)
    with pytest.raises(NotFittedError):
        svmkit.SVC().predict_set(X)
    ridge = svmkit.KernelRidge(kernel="rbf").fit_conformalize(X[:100], y[:100])
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match="coverage"):
            ridge.predict_interval(X[:3], coverage=bad)
    with pytest.raises(ValueError, match="unknown interval method"):
        ridge.predict_interval(X[:3], method="bootstrap")
    with pytest.raises(ValueError, match="cannot give method='laplace'"):
        ridge.predict_interval(X[:3], method="laplace")
    with pytest.raises(ValueError, match="cannot give method='jackknife\\+'"):
        svmkit.SVR().fit(X, y).predict_interval(X[:3], method="jackknife+")
    with pytest.raises(ValueError, match="too few for coverage=0.99.*n ≥ 99"):
        ridge.conformalize(X[100:120], y[100:120]).predict_interval(X[:3], coverage=0.99)
    with pytest.raises(ValueError, match="too few"):
        svmkit.KernelRidge(kernel="rbf").fit_conformalize(X[:10], y[:10]).predict_interval(X[:3], coverage=0.95)
    with pytest.raises(ValueError, match="exact solver"):
        svmkit.KernelRidge(solver="nystrom", n_components=20).fit_conformalize(X[:100], y[:100])
    with pytest.raises(ValueError, match="cv must be"):
        svmkit.SVR().fit_conformalize(X[:50], y[:50], cv=1)
    Xc, yc = iris()
    with pytest.raises(NotFittedError, match="probability=True"):
        svmkit.SVC().fit(Xc, yc).conformalize(Xc, yc)
    klr = svmkit.KernelLogisticRegression().fit(Xc, yc)
    with pytest.raises(ValueError, match="label 7"):
        klr.conformalize(Xc[:3], [0, 1, 7])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        klr.conformalize(Xc[:3], [0, 1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ridge.conformalize(X[:5], y[:4])
    with pytest.raises(NotFittedError, match="conformalize"):
        klr.predict_set(Xc[:3])
    with pytest.raises(NotFittedError, match="call conformalize"):
        svmkit.KernelQuantileRegressor().fit(X[:50], y[:50]).predict_interval(X[:3])
    with pytest.raises(ValueError, match="CV\\+ .*conformalize gives split intervals.* needs the data, not a precomputed kernel"):
        svmkit.SVR(kernel="precomputed").fit_conformalize(X[:50] @ X[:50].T, y[:50])
    two = svmkit.KernelRidge().fit(X[:50], np.column_stack([y[:50], y[:50]]))
    with pytest.raises(ValueError, match="y of shape \\(5, 2\\)"):
        two.conformalize(X[:5], y[:5])


def test_loo_parameter_is_left_as_set():
    X, y = diabetes()
    model = svmkit.LSSVR().fit_conformalize(X[:80], y[:80])
    assert model.loo is False and model.get_params()["loo"] is False
    assert hasattr(model, "loo_residuals_")


@pytest.mark.parametrize("make", [
    lambda **kw: svmkit.KernelRidge(alpha=0.3, kernel="rbf", gamma=0.5, **kw),
    lambda **kw: svmkit.LSSVR(C=5.0, gamma=0.5, **kw),
])
def test_jackknife_plus_of_a_model_that_keeps_its_factor_and_after_its_updates(make):
    X, y, Xt = toy(50)
    kept = make(keep_data=True).fit_conformalize(X[:45], y[:45])
    np.testing.assert_allclose(kept.predict_interval(Xt), make().fit_conformalize(X[:45], y[:45]).predict_interval(Xt),
                               atol=1e-9)
    kept.partial_fit(X[45:], y[45:])  # an update drops the calibration of the earlier rows
    with pytest.raises(NotFittedError, match="fit_conformalize"):
        kept.predict_interval(Xt, method="jackknife+")
    np.testing.assert_allclose(kept.predict(Xt), make().fit(X, y).predict(Xt), atol=1e-9)
