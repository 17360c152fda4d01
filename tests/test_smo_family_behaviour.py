"""SVR, NuSVR, NuSVC and OneClassSVM: the tube facts, hard constraints, weights and bad input
(scikit-learn's estimator checks: tests/test_estimator_checks.py)."""

import numpy as np
import pytest
import sklearn.svm

import svmkit
from conftest import blobs_with_outliers, diabetes, heart_scale, sinc

TOL = 1e-3


def test_sinc_tube_facts():
    """Strictly inside the tube: α = α* = 0; free SVs on its boundary; bounded SVs on or outside."""
    X, y = sinc()
    eps = 0.1
    m = svmkit.SVR(C=10.0, gamma=1.0, epsilon=eps, tol=TOL).fit(X, y)
    resid = np.abs(y - m.predict(X))
    n = y.size
    assert np.array_equal(np.sort(np.concatenate([m.inside_tube_, m.on_tube_, m.outside_tube_])), np.arange(n))
    strictly_inside = np.flatnonzero(resid < eps - TOL)
    assert np.isin(strictly_inside, m.inside_tube_).all()
    assert not np.isin(m.inside_tube_, m.support_).any()
    assert m.on_tube_.size > 0 and m.outside_tube_.size > 0
    np.testing.assert_allclose(resid[m.on_tube_], eps, atol=TOL)
    assert (resid[m.outside_tube_] >= eps - TOL).all()
    assert np.array_equal(np.sort(np.concatenate([m.on_tube_, m.outside_tube_])), np.sort(m.support_))


def test_hard_tube_fits_every_point_within_epsilon():
    X, y = sinc()
    m = svmkit.SVR(C=np.inf, gamma=1.0, epsilon=0.3).fit(X, y)
    assert np.max(np.abs(y - m.predict(X))) <= 0.3 + TOL
    assert m.outside_tube_.size == 0


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_hard_tube_too_narrow_raises(kernel):
    X, y = sinc()
    X = np.vstack([X, X[:1]])
    y = np.append(y, y[0] + 1.0)  # a repeated point with targets 1 apart: no tube of width 0.2 holds both
    with pytest.raises(svmkit.TubeTooNarrowError, match="too narrow"):
        svmkit.SVR(C=np.inf, kernel=kernel, gamma=1.0, epsilon=0.1).fit(X, y)


def test_infeasible_nu_names_the_class_pair():
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = np.array([0] * 30 + [1] * 5 + [2] * 5)
    with pytest.raises(ValueError, match=r"specified nu is infeasible for the class pair \(0, 1\)"):
        svmkit.NuSVC(nu=0.5).fit(X, y)
    svmkit.NuSVC(nu=0.2).fit(X, y)


def test_nu_bounds_fractions_of_support_and_outliers():
    """ν ≤ #SV/N and (points outside the tube)/N ≤ ν (Schölkopf et al. 2000)."""
    X, y = diabetes()
    for nu in (0.2, 0.6):
        m = svmkit.NuSVR(nu=nu, tol=1e-5).fit(X, y)
        n = y.size
        assert m.outside_tube_.size / n <= nu + 1e-9 <= m.support_.size / n + 1e-9
    Xo, _ = blobs_with_outliers()
    oc = svmkit.OneClassSVM(nu=0.1, tol=1e-5).fit(Xo)
    outside = np.mean(oc.decision_function(Xo) < -1e-4)  # free SVs sit on f = 0 to within tol
    assert outside <= 0.1 <= oc.support_.size / Xo.shape[0]


@pytest.mark.parametrize("ours, theirs", [
    (svmkit.SVR(epsilon=0.2), sklearn.svm.SVR(epsilon=0.2)),
    (svmkit.NuSVR(nu=0.4), sklearn.svm.NuSVR(nu=0.4)),
])
def test_regression_sample_weight_matches_scikit_learn(ours, theirs):
    X, y = diabetes()
    w = np.random.default_rng(0).uniform(0, 3, y.size)
    w[:20] = 0
    ours.set_params(tol=1e-6).fit(X, y, sample_weight=w)
    theirs.set_params(tol=1e-6).fit(X, y, sample_weight=w)
    assert not np.isin(np.arange(20), ours.support_).any()
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-4)


def test_one_class_and_nu_svc_sample_weight_match_scikit_learn():
    X, _ = blobs_with_outliers()
    w = np.random.default_rng(1).uniform(0.5, 2, X.shape[0])
    ours = svmkit.OneClassSVM(nu=0.2, tol=1e-6).fit(X, sample_weight=w)
    theirs = sklearn.svm.OneClassSVM(nu=0.2, tol=1e-6).fit(X, sample_weight=w)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-4)
    np.testing.assert_allclose(ours.offset_, theirs.offset_,
                               rtol=1e-4)
    y = (X[:, 0] > 0).astype(int)
    ours = svmkit.NuSVC(nu=0.3, tol=1e-6).fit(X, y, sample_weight=w)
    theirs = sklearn.svm.NuSVC(nu=0.3, tol=1e-6).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-4)


def test_one_class_scores_equal_scikit_learns():
    X, _ = blobs_with_outliers()
    ours = svmkit.OneClassSVM(nu=0.1, gamma=0.5).fit(X)
    theirs = sklearn.svm.OneClassSVM(nu=0.1, gamma=0.5).fit(X)
    np.testing.assert_allclose(ours.score_samples(X), theirs.score_samples(X), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(ours.offset_, theirs.offset_, rtol=1e-3)
    clear = np.abs(theirs.decision_function(X)) > 1e-2  # both solve to tol 1e-3: boundary points may flip
    np.testing.assert_array_equal(ours.predict(X)[clear], theirs.predict(X)[clear])


def test_fitted_attribute_layouts_follow_scikit_learn():
    X, y = diabetes()
    # solved tightly: two solutions at tol 1e-3 may differ by more than 1e-3 in w
    ours, theirs = svmkit.SVR(kernel="linear", tol=1e-6).fit(X, y), sklearn.svm.SVR(kernel="linear", tol=1e-6).fit(X, y)
    for name in ("support_", "support_vectors_", "dual_coef_", "intercept_", "n_support_", "coef_"):
        assert getattr(ours, name).shape == getattr(theirs, name).shape, name
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-4)
    Xo, _ = blobs_with_outliers()
    ours, theirs = svmkit.OneClassSVM().fit(Xo), sklearn.svm.OneClassSVM().fit(Xo)
    for name in ("support_", "dual_coef_", "intercept_", "n_support_", "offset_"):
        assert getattr(ours, name).shape == getattr(theirs, name).shape, name


@pytest.mark.parametrize("est, message", [
    (svmkit.SVR(epsilon=-0.1), "epsilon must be >= 0"),
    (svmkit.SVR(C=0), "C must be > 0"),
    (svmkit.NuSVR(nu=1.5), r"nu must be in \(0, 1\]"),
    (svmkit.NuSVR(nu=0), "nu must be > 0"),
    (svmkit.NuSVC(nu=-1), "nu must be > 0"),
    (svmkit.OneClassSVM(nu=2), r"nu must be in \(0, 1\]"),
    (svmkit.OneClassSVM(kernel="cubic"), "kernel must be one of"),
])
def test_bad_parameters_are_named(est, message):
    X, y = diabetes()
    with pytest.raises(ValueError, match=message):
        est.fit(X, (y > 0).astype(int) if isinstance(est, svmkit.NuSVC) else y)


def test_nan_target_names_its_row():
    X, y = diabetes()
    y = y.copy()
    y[7] = np.nan
    with pytest.raises(ValueError, match="row 7"):
        svmkit.SVR().fit(X, y)


@pytest.mark.parametrize("est, load", [(svmkit.SVC, heart_scale), (svmkit.SVR, diabetes)])
def test_verbose_prints_libsvm_summary(est, load, capsys):
    est(verbose=True).fit(*load())
    out = capsys.readouterr().out
    assert "optimization finished, #iter = " in out and "obj = " in out and "nSV = " in out and "nBSV = " in out


