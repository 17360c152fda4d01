"""Issue 41's numeric faults, one regression test each: the solver stops on its own, and a
number that cannot be right (a kernel value, a parameter) is a ValueError naming it."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning

import svmkit
from conftest import heart_scale
from svmkit.solvers.smo import solver as smo


@pytest.fixture(scope="module")
def data():
    X, y = heart_scale()
    return np.asarray(X.todense())[:80], y[:80]


# --- a bounded solver


def test_tiny_tol_stops_at_libsvm_cap(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(smo, "SAFETY_CAP", 500)
    monkeypatch.setattr(smo, "SAFETY_PER_VAR", 1)
    with pytest.warns(ConvergenceWarning, match="max_iter=-1"):
        model = svmkit.SVC(tol=1e-300).fit(X, y)
    assert model.fit_status_ == 1
    assert model.n_iter_[0] <= 500


def test_safety_cap_is_libsvms():
    assert smo.safety_cap(10) == 10**7
    assert smo.safety_cap(10**6) == 10**8


@pytest.mark.parametrize("model", [svmkit.SVC(max_iter=10**20), svmkit.LinearSVC(max_iter=10**20)])
def test_max_iter_beyond_int64_is_a_clear_error(data, model):
    with pytest.raises(ValueError, match="max_iter must be .* below 2\\*\\*63"):
        model.fit(*data)


# --- validated numbers: kernels


def _asymmetric(X):
    K = X @ X.T
    K[3, 5] += 1.0
    return K


@pytest.mark.parametrize("model", [svmkit.SVR(kernel="precomputed"), svmkit.NuSVR(kernel="precomputed"),
                                   svmkit.SVC(kernel="precomputed", probability=True)])
def test_asymmetric_precomputed_kernel_is_refused(data, model):
    X, y = data
    with pytest.raises(ValueError, match=r"symmetric training kernel: X\[3, 5\] = .* but X\[5, 3\]"):
        model.fit(_asymmetric(X), y)


def test_asymmetric_sparse_precomputed_kernel_is_refused(data):
    X, y = data
    with pytest.raises(ValueError, match=r"X\[3, 5\]"):
        svmkit.SVC(kernel="precomputed").fit(sp.csr_matrix(_asymmetric(X)), y)


def test_rounded_precomputed_kernel_is_accepted(data):
    X, y = data
    K = X @ X.T
    K[3, 5] *= 1 + 1e-12  # rounding, not asymmetry
    svmkit.SVC(kernel="precomputed").fit(K, y)


def _nan_kernel(A, B):
    K = A @ B.T
    K[0, 0] = np.nan
    return K


def _short_kernel(A, B):
    return (A @ B.T)[:, :-1]


@pytest.mark.parametrize("kernel, match", [(_nan_kernel, "_nan_kernel returned NaN"),
                                           (_short_kernel, r"_short_kernel returned shape \(\d+, \d+\)")])
@pytest.mark.parametrize("model", [svmkit.SVC(), svmkit.SVR(), svmkit.KernelLogisticRegression()])
def test_callable_kernel_values_are_checked_at_fit(data, kernel, match, model):
    with pytest.raises(ValueError, match=f"kernel callable .*{match}"):
        model.set_params(kernel=kernel).fit(*data)


def test_callable_kernel_values_are_checked_at_predict(data):
    X, y = data
    calls = []

    def kernel(A, B):
        calls.append(1)
        K = A @ B.T
        return K if len(calls) < 1000 or A.shape[0] != 5 else K * np.inf

    model = svmkit.SVC(kernel=kernel).fit(X, y)
    calls.extend([1] * 1000)
    with pytest.raises(ValueError, match="kernel callable .* returned infinity"):
        model.predict(X[:5])


def test_overflowing_poly_kernel_names_its_parameters(data):
    with pytest.raises(ValueError, match=r"poly kernel's values overflow .*coef0=-1e\+300, degree=3"):
        svmkit.SVC(kernel="poly", coef0=-1e300).fit(*data)


@pytest.mark.parametrize("model, scale, match", [
    (svmkit.SVC(kernel="poly", gamma=1e16), 1.0, r"'poly' kernel's values reach .*gamma=1e\+16, coef0=0.0, degree=3"),
    (svmkit.SVC(kernel="linear"), 1e20, r"'linear' kernel's values reach 1.*e\+41.* set by the data"),
    (svmkit.SVR(kernel="linear"), 1e150, r"'linear' kernel's values reach 1.*e\+301.* set by the data")])
def test_kernel_values_beyond_the_float32_rows_name_what_sets_them(data, model, scale, match):
    """Kernel values finite in float64 but beyond float32's range made the dual coefficients
    non-finite, with a message that named no parameter."""
    X, y = data
    with pytest.raises(ValueError, match=f"dual coefficients or intercepts are not finite: the {match}"):
        model.fit(X * scale, y)


def test_overflowing_poly_kernel_at_predict_names_its_parameters(data):
    X, y = data
    model = svmkit.SVC(kernel="poly", degree=10, gamma=1.0).fit(X, y)
    with pytest.raises(ValueError, match=r"decision value of X row 0 is not finite: the 'poly' kernel's values "
                                         r"overflow float64 there, set by gamma=1.0, coef0=0.0, degree=10"):
        model.predict(X[:3] * 1e30)
    with pytest.raises(ValueError, match="decision value of X row 0 is not finite"):
        svmkit.SVR(kernel="poly", degree=10, gamma=1.0).fit(X, y).predict(X[:3] * 1e30)


def test_huge_C_fits_or_stops_at_the_cap(data):
    model = svmkit.SVC(C=1e300).fit(*data)
    assert np.isfinite(model.dual_coef_).all() and np.isfinite(model.intercept_).all()


# --- validated numbers: parameters


@pytest.mark.parametrize("weight", [-1.0, np.nan, np.inf])
@pytest.mark.parametrize("model", [svmkit.LinearSVC(), svmkit.SVC()])
def test_class_weight_must_be_finite_and_non_negative(data, model, weight):
    with pytest.raises(ValueError, match=r"class_weight\[1.0\]"):
        model.set_params(class_weight={1: weight}).fit(*data)


def test_nusvc_on_a_constant_kernel_is_a_clear_error(data):
    X, y = data
    with pytest.raises(ValueError, match="nu-SVC's margin r is 0 .* kernel does not tell the classes apart"):
        svmkit.NuSVC(kernel="precomputed").fit(np.ones((X.shape[0], X.shape[0])), y)


def test_one_class_nu_one_is_fitted(data):
    X, _ = data
    model = svmkit.OneClassSVM(nu=1.0).fit(X)
    assert np.isfinite(model.offset_)
    # ρ is the feasible interval's finite end: the farthest-in row on the boundary (float32 kernel rows)
    assert model.decision_function(X).max() == pytest.approx(0, abs=1e-6 * abs(model.offset_[0]))


def test_klr_on_a_non_psd_kernel_names_the_kernel(data):
    X, y = data
    K = X @ X.T - 50 * np.eye(X.shape[0])
    with pytest.raises(ValueError, match="kernel matrix is not positive semidefinite"):
        svmkit.KernelLogisticRegression(kernel="precomputed").fit(K, y)


def test_zero_samples_is_a_clear_error(data):
    X, y = data
    with pytest.raises(ValueError, match="0 sample"):
        svmkit.SVC().fit(X[:0], y[:0])


@pytest.mark.parametrize("factor", [1e-300, 1e-160])
def test_gamma_scale_on_data_whose_variance_underflows_warns(factor):
    """X × 1e-300 has a variance below float64's range (and × 1e-160 one whose reciprocal
    overflows): 'scale' cannot be resolved, so γ = 1 is used, with a warning that the kernel is
    then nearly constant, instead of a silent constant prediction."""
    X, y = heart_scale()
    with pytest.warns(RuntimeWarning, match="gamma='scale'.*too small"):
        model = svmkit.SVC().fit(X * factor, y)
    assert model.gamma_ == 1.0


def test_gamma_scale_on_constant_data_is_one_without_a_warning():
    X = np.ones((6, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert svmkit.SVR().fit(X, np.arange(6.0)).gamma_ == 1.0


_LONG_FIT = """
import numpy as np, svmkit
from conftest import heart_scale
from svmkit.solvers.smo import solver as smo
smo.SAFETY_CAP = 10**12  # a fit that would run for hours
X, y = heart_scale()
svmkit.SVC().fit(X[:80], y[:80])  # compiled code loaded before the clock
print("fitting", flush=True)
try:
    svmkit.SVC(tol=1e-300).fit(X[:80], y[:80])
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_ctrl_c_stops_a_long_compiled_fit_within_a_second(tmp_path):
    """SIGINT reaches a fit whose compiled loop would run for hours: a watching thread sets the
    flag the loop polls, and Python's handler raises KeyboardInterrupt once it returns."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    tests = Path(__file__).parent
    child = subprocess.Popen([sys.executable, "-c", _LONG_FIT], stdout=subprocess.PIPE, text=True,
                             cwd=tests, env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), *sys.path])})
    assert child.stdout.readline().strip() == "fitting"
    time.sleep(1.0)
    assert child.poll() is None
    t0 = time.perf_counter()
    child.send_signal(signal.SIGINT)
    # the fit's stop, not the interpreter's exit after it
    assert child.stdout.readline().strip() == "interrupted"
    assert time.perf_counter() - t0 < 1.0
    child.communicate(timeout=30)


def test_hard_margin_on_a_low_rank_kernel_is_refused_by_the_float64_separability_test():
    """Two features, random labels: the linear kernel has rank 2 and the classes cannot be
    separated, but its float32 rows (full rank by rounding) let the labelling look separable,
    and the dual then ran to the safety cap with a ConvergenceWarning instead of the error. The
    LP reads the kernel in float64."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.where(rng.random(200) < 0.5, 1.0, -1.0)
    K = X @ X.T
    with pytest.raises(svmkit.NotSeparableError):
        svmkit.SVC(C=np.inf, kernel="linear").fit(X, y)
    with pytest.raises(svmkit.NotSeparableError):
        svmkit.SVC(C=np.inf, kernel="precomputed").fit(K, y)


# --- faults the fuzzing suite found (tests/fuzzing.py)


@pytest.mark.parametrize("model, match", [(svmkit.NuSVR(nu=10**20), r"nu must be in \(0, 1\], got nu=1{20}"),
                                          (svmkit.SVR(C=-10**20), "C must be > 0"),
                                          (svmkit.SVC(tol=10**400), "tol must be finite"),
                                          (svmkit.LinearSVC(C=10**400), "C must be finite")])
def test_integer_parameters_beyond_float64_are_named(data, model, match):
    """NumPy cannot test an int beyond int64 for NaN: check_real raised a TypeError of ufunc 'isnan'."""
    with pytest.raises(ValueError, match=match.replace("{20}", "0" * 20)):
        model.fit(*data)


@pytest.mark.parametrize("model", [svmkit.KernelRidge(alpha=0.1, solver="nystrom"),
                                   svmkit.LSSVR(C=10.0, solver="nystrom")])
def test_nystrom_default_on_fewer_rows_than_its_centres_takes_every_row(data, model):
    """n_components=None meant 2,000 centres whatever the data: 80 rows were refused. With every
    row a centre the Nyström fit is the exact one."""
    X, y = data
    exact = clone(model).set_params(solver="cholesky")
    np.testing.assert_allclose(model.fit(X, y).predict(X), exact.fit(X, y).predict(X), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("model", [svmkit.KernelRidge(loo=True), svmkit.LSSVR(loo=True)])
def test_leave_one_out_on_one_sample_is_a_clear_error(model):
    with pytest.raises(ValueError, match="loo=True needs at least 2 samples"):
        model.fit(np.ones((1, 2)), [1.0])


def test_lssvmcv_gives_the_classes_and_refuses_other_estimators(data):
    from svmkit.model_selection import LSSVMCV

    X, y = data
    search = LSSVMCV(svmkit.LSSVC(), Cs=[1.0], gammas=[0.1]).fit(X, y)
    np.testing.assert_array_equal(search.classes_, [-1.0, 1.0])
    with pytest.raises(TypeError, match="estimator must be an LSSVC or an LSSVR, got estimator=SVC"):
        LSSVMCV(svmkit.SVC()).fit(X, y)


def test_a_search_whose_cells_all_fail_says_why(data):
    from svmkit.model_selection import SVMSearchCV

    X, y = data
    with pytest.raises(ValueError, match="every cell .* the first failure: cell .* on fold 0: .*X row 0 has values "
                                         "too large for the kernel"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            SVMSearchCV(svmkit.SVC(), {"C": [1.0, 2.0]}, cv=2).fit(X * 1e200, y)
    from sklearn.svm import SVC

    with pytest.raises(TypeError, match="estimator must be one of svmkit's estimators .*, got estimator=SVC"):
        SVMSearchCV(SVC()).fit(X, y)


def test_a_hard_margin_cell_of_a_search_fails_at_once_on_non_separable_data():
    """Issue 41: a 2-cell search with C=inf ran 337 s before the NotSeparableError."""
    from svmkit.model_selection import SVMSearchCV

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(rng.random(60) < 0.5, 1, -1)
    with pytest.warns(FitFailedWarning, match=r"cell \{'C': inf\} failed on fold 0: the classes .* are not separable"):
        search = SVMSearchCV(svmkit.SVC(kernel="linear"), {"C": [1.0, np.inf]}, cv=3).fit(X, y)
    assert search.best_params_ == {"C": 1.0}


@pytest.mark.parametrize("model", [svmkit.SVC(probability=True, random_state=-1), svmkit.LinearSVC(random_state="x"),
                                   svmkit.KernelRidge(solver="nystrom", random_state=2**32)])
def test_random_state_out_of_numpys_range_is_named(data, model):
    with pytest.raises(ValueError, match="random_state'? (parameter of LinearSVC )?must be (None, an integer|an int)"):
        model.fit(*data)


def test_klr_cholesky_failure_from_a_huge_C_names_C():
    from conftest import iris

    with pytest.raises(ValueError, match="Cholesky factor; check the kernel, or lower C"):
        svmkit.KernelLogisticRegression(C=1e20).fit(*iris())


def test_a_class_of_zero_weight_is_named(data):
    with pytest.raises(ValueError, match=r"class -1.0 has no sample of positive weight \(class_weight × sample_weight"):
        svmkit.SVC(class_weight={-1: 0.0}).fit(*data)


@pytest.mark.parametrize("model", [svmkit.SVC(), svmkit.SVR(), svmkit.KernelRidge(), svmkit.LinearSVR()])
def test_x_of_strings_is_refused_not_parsed(data, model):
    X, y = data
    with pytest.raises(ValueError, match="X holds strings"):
        model.fit(X.astype(str), y)


@pytest.mark.parametrize("model", [svmkit.NuSVR(max_iter=3), svmkit.LinearSVC()])
def test_an_integer_tol_fits_as_the_same_float_one(data, model):
    """tol=1 reaches the compiled loops as the float they take, with the same result."""
    coef = lambda m: m.dual_coef_ if hasattr(m, "dual_coef_") else m.coef_  # noqa: E731
    first = coef(model.set_params(tol=1.0).fit(*data)).copy()
    np.testing.assert_array_equal(coef(model.set_params(tol=1).fit(*data)), first)


@pytest.mark.parametrize("params, match", [({"cv": True}, "cv must be a number of folds"),
                                           ({"cv": 1}, "cv must be a number of folds"),
                                           ({"n_jobs": [1.0]}, "n_jobs must be None or an integer")])
def test_search_cv_and_n_jobs_are_named(data, params, match):
    from svmkit.model_selection import SVMSearchCV

    with pytest.raises(ValueError, match=match):
        SVMSearchCV(svmkit.SVC(), {"C": [1.0, 2.0]}, **params).fit(*data)


@pytest.mark.parametrize("params, match", [({"gamma": -10**20}, "gamma must be"), ({"coef0": 10**400}, "coef0 must be")])
def test_kernel_parameters_beyond_float64_are_named(data, params, match):
    with pytest.raises(ValueError, match=match):
        svmkit.SVC(kernel="poly", **params).fit(*data)


def test_a_leave_one_out_search_whose_cells_all_fail_names_the_first(data):
    from svmkit.model_selection import LSSVMCV

    X, y = data
    with pytest.raises(ValueError, match=r"not positive definite at any of them; the first, \{'C': .*'gamma'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            LSSVMCV(svmkit.LSSVR(kernel="sigmoid"), Cs=[1e300], gammas=[1.0]).fit(X, y)


@pytest.mark.parametrize("scale", [1e-300, 1e-18, 1e300])
def test_feasibility_lps_do_not_depend_on_the_scale_of_the_kernel_or_targets(scale):
    """The hard-tube and hard-margin LPs on K / max |K| and targets mapped to [−1, 1]: HiGHS's
    absolute tolerances, and its refusal of entries above about 1e15, made a kernel × 1e-18
    or × 1e300 look infeasible."""
    from svmkit.solvers.smo.feasibility import fits_tube, is_separable

    x = np.linspace(-3, 3, 40)[:, None]
    t = 0.5 * x.ravel() + 0.3 * np.sinc(x).ravel()  # ε_inf of the line: about 0.17
    K = x @ x.T
    assert fits_tube(K * scale, t, 0.2) and not fits_tube(K * scale, t, 0.1)
    assert fits_tube(K, t * scale, 0.2 * scale) and not fits_tube(K, t * scale, 0.1 * scale)
    labels = np.sign(x.ravel() + 0.05)
    assert is_separable(K * scale, labels) and not is_separable(K * scale, -np.sign(np.abs(x.ravel()) - 1))


def test_hard_tube_with_rbf_gamma_scaled_with_x_is_decided_alike():
    x = np.linspace(-3, 3, 40)[:, None]
    t = 0.5 * x.ravel() + 0.3 * np.sinc(x).ravel()
    for s in (1e-9, 1e150):
        fit = svmkit.SVR(kernel="rbf", gamma=0.5 / s**2, C=np.inf, epsilon=0.3).fit(x * s, t)
        np.testing.assert_allclose(fit.predict(x * s), svmkit.SVR(kernel="rbf", gamma=0.5, C=np.inf, epsilon=0.3)
                                   .fit(x, t).predict(x), atol=1e-6)


def test_nusvr_with_a_degree_50_poly_kernel_stops(data):
    """Its kernel values, (γ<x, z>)^50, are nearly all zero: the solve once looped forever."""
    X, y = data
    model = svmkit.NuSVR(kernel="poly", degree=50).fit(X, y)
    assert model.fit_status_ == 0 and np.max(model.n_iter_) < smo.safety_cap(X.shape[0])
    assert np.isfinite(model.predict(X)).all()




@pytest.mark.parametrize("scale", [1e-9, 1e-6])
def test_hard_tube_on_small_scale_data_fits_as_the_unscaled_one(scale):
    """The unbounded-dual test is relative to the kernel's scale: on X × 1e-9 the linear kernel's
    α are near 1e18, where an absolute bound of 1e12 called a feasible tube too narrow."""
    x = np.linspace(-3, 3, 40)[:, None]
    t = 0.5 * x.ravel() + 0.3 * np.sinc(x).ravel()
    unscaled = svmkit.SVR(kernel="linear", C=np.inf, epsilon=0.3).fit(x, t)
    scaled = svmkit.SVR(kernel="linear", C=np.inf, epsilon=0.3).fit(x * scale, t)
    np.testing.assert_allclose(scaled.predict(x * scale), unscaled.predict(x), atol=1e-6)


@pytest.mark.parametrize("model", [svmkit.LSSVC(), svmkit.KernelLogisticRegression()], ids=lambda m: type(m).__name__)
def test_class_weights_of_zero_for_every_class_are_named(data, model):
    """Not a NaN intercept (LSSVC) or a ZeroDivisionError (KernelLogisticRegression)."""
    with pytest.raises(ValueError, match=r"class_weight × sample_weight is zero for every sample \(class_weight="):
        clone(model).set_params(class_weight={-1: 0, 1: 0}).fit(*data)


@pytest.mark.parametrize("nu", [1e-320, 1e-200])
@pytest.mark.parametrize("three", [False, True])
def test_a_nu_so_small_that_the_scale_to_c_svc_overflows_is_named(data, nu, three):
    """ν-SVC's solution scales by 1/r to C-SVC's: with ν = 1e-320 that was a NaN model, with
    1e-200 an OverflowError (verbose) or NumPy's overflow warnings."""
    X, y = data
    y = np.where(np.arange(y.size) % 3 == 0, 2.0, y) if three else y
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=rf"nu={nu!r} is too small for the class pair .*overflow float64"):
            svmkit.NuSVC(nu=nu).fit(X, y)


def test_the_smallest_nu_that_scales_in_float64_still_fits(data):
    model = svmkit.NuSVC(nu=1e-12).fit(*data)
    assert np.isfinite(model.intercept_).all() and np.isfinite(model.dual_coef_).all()


@pytest.mark.parametrize("model", [svmkit.LinearSVC(), svmkit.LinearSVR(), svmkit.LinearSVC(dual=False),
                                   svmkit.LinearSVR(dual=False, loss="squared_epsilon_insensitive")], ids=repr)
@pytest.mark.parametrize("sparse", [False, True])
def test_linear_models_name_data_whose_squared_norms_overflow(data, model, sparse):
    """Not coef_ = 0 with only NumPy's overflow warnings."""
    X, y = data
    X = X * 1e200
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"the squared norm of row 0 overflows float64 .*; scale the data"):
            clone(model).fit(sp.csr_matrix(X) if sparse else X, y)


def test_linear_models_fit_data_large_but_whose_norms_stay_finite(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = svmkit.LinearSVC(random_state=0).fit(X * 1e150, y)
    assert np.isfinite(model.coef_).all() and np.abs(model.coef_).max() > 0


def test_lssvc_rows_weighted_beyond_float32_are_factorised_in_float64(data):
    """The float32 preconditioner's cast overflowed (NumPy's warning) for class_weight 1e300."""
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        heavy = svmkit.LSSVC(class_weight={1: 1e300}).fit(X, y)
    np.testing.assert_allclose(heavy.decision_function(X), svmkit.LSSVC(class_weight={1: 1e10}).fit(X, y).decision_function(X),
                               rtol=1e-6, atol=1e-9)


def test_a_cache_size_of_inf_bytes_holds_every_row(data):
    """cache_size=1.7e308 (MB) is inf bytes: the row budget was inf // width = NaN."""
    X, y = data
    np.testing.assert_array_equal(svmkit.SVC(cache_size=1.7e308).fit(X, y).dual_coef_, svmkit.SVC().fit(X, y).dual_coef_)


def test_crammer_singer_weights_beyond_float64_name_c(data):
    with pytest.raises(ValueError, match=r"crammer_singer' gives weights beyond float64's range with C=1.7e\+308"):
        svmkit.LinearSVC(C=1.7e308, multi_class="crammer_singer").fit(*data)
