"""ε-SVR, ν-SVR, ν-SVC and one-class SVM against the oracle libsvm-official (-s 1..4)."""

import re

import numpy as np
import pytest

import svmkit
from conftest import (DATASETS, abalone, assert_pairs_match_libsvm, blobs_with_outliers, diabetes, housing,
                      libsvm_predict, libsvm_support, libsvm_train, scale_gamma, sinc, sv_overlap)


#: Both solvers stop at this KKT violation. At the default 1e-3 each stops at its own point
#: within tol of the optimum, and the ν models divide by r ≈ 1/C, which magnifies the gap (on
#: heart_scale, ν = 0.1, LIBSVM's own objective is then 0.2 % and ρ 25 % from the optimum);
#: at 1e-5 both reach the optimum and the comparison tests the formulation, not the stopping point.
TOL = 1e-5

REGRESSION = {"diabetes": diabetes, "housing_scale": housing, "abalone_scale": abalone, "sinc": sinc}


def _assert_regression_matches_libsvm(ours, model, objs, order, X, y_scale):
    """Objective (1e-3 rel), rho (1e-2·max(1,|rho|)), support overlap ≥ 99 %, predictions
    within 1e-3·y_scale."""
    assert len(objs) == 1
    assert ours.objective_ == pytest.approx(objs[0], rel=1e-3, abs=1e-6)
    rho_lib = model.rho[0]
    assert abs(-ours.intercept_[0] - rho_lib) <= 1e-2 * max(1, abs(rho_lib))
    assert sv_overlap(ours.support_, libsvm_support(model, order)) >= 0.99
    values, _ = libsvm_predict(model, X)
    assert np.max(np.abs(ours.predict(X) - values)) <= 1e-3 * y_scale


@pytest.mark.parametrize("name", sorted(REGRESSION))
@pytest.mark.parametrize("model_cls, s, extra", [(svmkit.SVR, 3, {"epsilon": 0.1}), (svmkit.NuSVR, 4, {"nu": 0.5})])
def test_regression_matches_libsvm(name, model_cls, s, extra, capfd):
    X, y = REGRESSION[name]()
    gamma = scale_gamma(X)
    ours = model_cls(C=1.0, gamma=gamma, tol=TOL, **extra).fit(X, y)
    flag = f"-p {extra['epsilon']}" if "epsilon" in extra else f"-n {extra['nu']}"
    model, objs, order = libsvm_train(X, y, f"-s {s} -t 2 -g {gamma!r} -c 1 {flag} -e {TOL}", capfd)
    _assert_regression_matches_libsvm(ours, model, objs, order, X, np.std(y))


@pytest.mark.parametrize("kernel, t", [("linear", 0), ("poly", 1)])
def test_svr_other_kernels_match_libsvm(kernel, t, capfd):
    X, y = housing()
    gamma = scale_gamma(X)
    ours = svmkit.SVR(kernel=kernel, C=1.0, gamma=gamma, coef0=1.0, epsilon=0.5, tol=TOL).fit(X, y)
    model, objs, order = libsvm_train(X, y, f"-s 3 -t {t} -g {gamma!r} -r 1 -c 1 -p 0.5 -e {TOL}", capfd)
    _assert_regression_matches_libsvm(ours, model, objs, order, X, np.std(y))


def test_nu_svr_tube_width_matches_libsvm_epsilon(capfd):
    """ν-SVR finds the tube width; LIBSVM prints it as "epsilon = …" (−r of the ν solver)."""
    from libsvm.svmutil import svm_problem, svm_train

    X, y = sinc()
    capfd.readouterr()
    svm_train(svm_problem(y, X), f"-s 4 -t 2 -g 1 -c 1 -n 0.3 -e {TOL}")
    lib_eps = float(re.search(r"epsilon = (\S+)", capfd.readouterr().out).group(1))
    ours = svmkit.NuSVR(nu=0.3, gamma=1.0, tol=TOL, verbose=True).fit(X, y)
    assert f"epsilon = {ours.epsilon_:f}" in capfd.readouterr().out
    assert ours.epsilon_ == pytest.approx(lib_eps, rel=1e-3)


@pytest.mark.parametrize("name", ["iris", "digits", "heart_scale"])
@pytest.mark.parametrize("nu", [0.1, 0.3])
def test_nu_svc_matches_libsvm(name, nu, capfd):
    X, y = DATASETS[name]()
    gamma = scale_gamma(X)
    ours = svmkit.NuSVC(nu=nu, gamma=gamma, tol=TOL).fit(X, y)
    model, objs, order = libsvm_train(X, y, f"-s 1 -t 2 -g {gamma!r} -n {nu} -e {TOL}", capfd)
    assert_pairs_match_libsvm(ours, model, objs, order, X)
    labels, _ = libsvm_predict(model, X)
    assert np.mean(ours.predict(X) == labels) >= 0.995


@pytest.mark.parametrize("nu", [0.05, 0.2, 0.5])
def test_one_class_matches_libsvm(nu, capfd):
    X, _ = blobs_with_outliers()
    gamma = scale_gamma(X)
    ours = svmkit.OneClassSVM(nu=nu, gamma=gamma, tol=TOL).fit(X)
    model, objs, order = libsvm_train(X, np.ones(X.shape[0]), f"-s 2 -t 2 -g {gamma!r} -n {nu} -e {TOL}", capfd)
    assert ours.objective_ == pytest.approx(objs[0], rel=1e-3, abs=1e-6)
    assert ours.offset_.shape == (1,)
    assert abs(ours.offset_[0] - model.rho[0]) <= 1e-2 * max(1, abs(model.rho[0]))
    assert sv_overlap(ours.support_, libsvm_support(model, order)) >= 0.99
    # fresh points: free support vectors sit on f = 0, where either sign is right
    X_new, _ = blobs_with_outliers(seed=2)
    labels, dec = libsvm_predict(model, X_new)
    assert np.mean(ours.predict(X_new) == labels) >= 0.995
    np.testing.assert_allclose(ours.decision_function(X_new), dec.ravel(), atol=1e-3 * max(1, model.rho[0]))
