"""Kernel ridge and LS-SVM against independent oracles: scikit-learn's KernelRidge, dense solves
of Suykens & Vandewalle's bordered systems, brute-force leave-one-out refits."""

import os
import threading

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.kernel_ridge
import threadpoolctl
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import LeaveOneOut, cross_val_predict

import svmkit
from conftest import diabetes, iris
from svmkit.model_selection import KernelRidgeCV, LSSVMCV
from svmkit import backend
from svmkit.models.dense import base as dense_expansion
from svmkit.models.session import loo_grid_scores
from svmkit.solvers.dense import factorisations, packed
from svmkit.solvers.dense.factorisations import NotPositiveDefiniteError


def _small_regression(n=60):
    X, y = diabetes()
    return X[:n], y[:n]


def _bordered(K, top, rhs_tail, C):
    """Dense solve of [[0, topᵀ], [top, K + I/C]]·[b; α] = [0; rhs_tail]."""
    n = K.shape[0]
    M = np.zeros((n + 1, n + 1))
    M[0, 1:] = top
    M[1:, 0] = top
    M[1:, 1:] = K + np.eye(n) / C
    sol = np.linalg.solve(M, np.r_[0.0, rhs_tail])
    return sol[0], sol[1:]


@pytest.mark.parametrize("solver", ["cholesky", "eigen"])
@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_ridge_equals_scikit_learns_on_diabetes(solver, sparse, monkeypatch):
    monkeypatch.setattr(packed, "ROW_BLOCK_ELEMENTS", 30 * 442)  # the kernel's rows in blocks of 30
    monkeypatch.setattr(backend, "PACKED_MIN_N", 1)  # packed at any size
    X, y = diabetes()
    Xf = sp.csr_matrix(X) if sparse else X
    ours = svmkit.KernelRidge(kernel="rbf", alpha=0.1, gamma=0.05, solver=solver).fit(Xf, y)
    theirs = sklearn.kernel_ridge.KernelRidge(alpha=0.1, kernel="rbf", gamma=0.05).fit(X, y)
    np.testing.assert_allclose(ours.predict(Xf), theirs.predict(X), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, rtol=1e-7, atol=1e-9)
    assert ours.support_.size == X.shape[0]


def test_kernel_ridge_multi_output_and_weights_equal_scikit_learns():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 5))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] ** 2, X[:, 2] - X[:, 3]])
    w = rng.uniform(0.2, 3.0, size=80)
    ours = svmkit.KernelRidge(alpha=0.5, kernel="poly", gamma=0.3, degree=2, coef0=1.0).fit(X, Y, sample_weight=w)
    theirs = sklearn.kernel_ridge.KernelRidge(alpha=0.5, kernel="poly", gamma=0.3, degree=2, coef0=1.0)
    theirs.fit(X, Y, sample_weight=w)
    assert ours.predict(X).shape == (80, 3)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-8, atol=1e-10)


def _mixed(storage, K, shift):
    """K + shift·I factorised by the float32-preconditioned solver: from the whole K ('full') or
    from its rows in blocks of three ('packed')."""
    if storage == "full":
        return factorisations.MixedCholeskyShift(K.copy(), shift)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(packed, "ROW_BLOCK_ELEMENTS", 3 * K.shape[0])
        return packed.PackedMixedCholesky(K.shape[0], lambda lo, hi: K[lo:hi, lo:], shift)


@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_ridge_on_a_precomputed_or_callable_kernel_equals_scikit_learns(sparse, monkeypatch):
    monkeypatch.setattr(packed, "ROW_BLOCK_ELEMENTS", 25 * 442)
    monkeypatch.setattr(backend, "PACKED_MIN_N", 1)  # packed at any size
    X, y = diabetes()
    w = np.random.default_rng(4).uniform(0.5, 2.0, size=y.size)
    K = rbf_kernel(X, gamma=0.05)
    theirs = sklearn.kernel_ridge.KernelRidge(alpha=0.01, kernel="precomputed").fit(K, y, sample_weight=w)
    ours = svmkit.KernelRidge(alpha=0.01, kernel="precomputed").fit(sp.csr_matrix(K) if sparse else K, y,
                                                                   sample_weight=w)
    np.testing.assert_allclose(ours.predict(K), theirs.predict(K), rtol=1e-8, atol=1e-10)
    called = svmkit.KernelRidge(alpha=0.01, kernel=lambda A, B: rbf_kernel(A, B, gamma=0.05)).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(called.predict(X), theirs.predict(K), rtol=1e-8, atol=1e-10)


def test_kernel_ridge_on_a_sparse_precomputed_kernel_kept_sparse_equals_scikit_learns(monkeypatch):
    monkeypatch.setattr(packed, "ROW_BLOCK_ELEMENTS", 7 * 300)
    monkeypatch.setattr(backend, "PACKED_MIN_N", 1)  # packed at any size
    rng = np.random.default_rng(5)
    groups = sp.csr_matrix((np.ones(300), (np.arange(300), rng.integers(0, 150, size=300))), shape=(300, 150))
    K = (groups @ groups.T).tocsr()  # 1 within a group: column overlap ≈ 1e-4, below densifying
    y = rng.normal(size=300)
    theirs = sklearn.kernel_ridge.KernelRidge(alpha=0.3, kernel="precomputed").fit(K.toarray(), y)
    ours = svmkit.KernelRidge(alpha=0.3, kernel="precomputed").fit(K, y)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("kernel", ["rbf", "callable"])
def test_kernel_ridge_on_sparse_data_kept_sparse_equals_scikit_learns(kernel, monkeypatch):
    monkeypatch.setattr(packed, "ROW_BLOCK_ELEMENTS", 9 * 200)
    monkeypatch.setattr(backend, "PACKED_MIN_N", 1)  # packed at any size
    rng = np.random.default_rng(6)
    X = sp.random(200, 4000, density=0.002, format="csr", random_state=7) + \
        sp.csr_matrix((np.ones(200), (np.arange(200), rng.integers(0, 4000, size=200))), shape=(200, 4000))
    y = rng.normal(size=200)
    theirs = sklearn.kernel_ridge.KernelRidge(alpha=0.2, kernel="rbf", gamma=0.3).fit(X.toarray(), y)
    ours = svmkit.KernelRidge(alpha=0.2, gamma=0.3,
                              kernel="rbf" if kernel == "rbf" else lambda A, B: rbf_kernel(A, B, gamma=0.3)).fit(X, y)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, rtol=1e-8, atol=1e-10)


def test_below_the_packed_size_the_cholesky_solver_takes_lapacks_factor_of_the_whole_kernel(monkeypatch):
    X, y = diabetes()
    assert X.shape[0] < backend.PACKED_MIN_N
    monkeypatch.setattr(backend, "PackedMixedCholesky", None)  # not reached
    ours = svmkit.KernelRidge(kernel="rbf", alpha=0.1, gamma=0.05).fit(X, y)
    theirs = sklearn.kernel_ridge.KernelRidge(alpha=0.1, kernel="rbf", gamma=0.05).fit(X, y)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, rtol=1e-7, atol=1e-9)


def test_past_the_packed_size_the_cholesky_solver_takes_the_whole_kernel(monkeypatch):
    X, y = diabetes()
    monkeypatch.setattr(backend, "PACKED_MAX_N", X.shape[0] - 1)
    monkeypatch.setattr(backend, "PackedMixedCholesky", None)  # not reached
    whole = svmkit.KernelRidge(kernel="rbf", alpha=0.1, gamma=0.05).fit(X, y)
    theirs = sklearn.kernel_ridge.KernelRidge(alpha=0.1, kernel="rbf", gamma=0.05).fit(X, y)
    np.testing.assert_allclose(whole.dual_coef_, theirs.dual_coef_, rtol=1e-7, atol=1e-9)


def test_one_vs_one_pairs_within_the_exact_size_of_a_problem_past_it_fit_exactly(monkeypatch):
    X, y = iris()
    exact = svmkit.LSSVC(C=10.0, gamma=0.5, multi_class="ovo", solver="cholesky").fit(X, y)
    monkeypatch.setattr(dense_expansion, "AUTO_EXACT_MAX", 100)  # 150 rows: Nyström; each pair has 100
    auto = svmkit.LSSVC(C=10.0, gamma=0.5, multi_class="ovo").fit(X, y)
    np.testing.assert_allclose(auto.dual_coef_, exact.dual_coef_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("storage", ["full", "packed"])
@pytest.mark.parametrize("max_steps", [factorisations.MIXED_MAX_STEPS, 0])
def test_float32_factor_refined_by_cg_solves_an_ill_conditioned_system_to_float64_accuracy(max_steps, storage,
                                                                                          monkeypatch):
    # cond(K + 1e-6·I) ≈ 1e8: past where refinement of a float32 factor converges; 0 steps: the float64 fallback
    monkeypatch.setattr(factorisations, "MIXED_MAX_STEPS", max_steps)
    X, _ = diabetes()
    H = rbf_kernel(X, gamma=0.05) + 1e-6 * np.eye(X.shape[0])
    B = np.random.default_rng(0).normal(size=(X.shape[0], 2))
    factor = _mixed(storage, H - 1e-6 * np.eye(X.shape[0]), 1e-6)
    solved = factor.solve(B)
    assert (factor.factor32 is not None) == (max_steps > 0)
    assert np.linalg.norm(H @ solved - B) <= 1e-10 * np.linalg.norm(B)
    np.testing.assert_allclose(solved, np.linalg.solve(H, B), rtol=1e-6, atol=1e-6 * np.abs(solved).max())
    np.testing.assert_allclose(factor.solve(B[:, 0]), solved[:, 0], rtol=1e-10, atol=1e-10 * np.abs(solved).max())


def test_a_factor_whose_memory_took_the_inverse_refuses_to_solve_or_invert_again():
    H = np.array([[4.0, 1.0], [1.0, 3.0]])
    factor = factorisations.CholeskyShift(H.copy(), 0.0)
    np.testing.assert_allclose(factor.inverse_diag(), np.diag(np.linalg.inv(H)), rtol=1e-14)
    for again in (lambda: factor.solve(np.ones(2)), factor.inverse_diag):
        with pytest.raises(RuntimeError, match="overwritten by inverse_diag"):
            again()


def test_conjugate_gradient_converged_on_its_last_allowed_step_says_so():
    # without a preconditioner CG solves an order-2 system in exactly two steps
    A = np.array([[4.0, 1.0], [1.0, 3.0]])
    b = np.array([1.0, 2.0])
    x, converged = factorisations.conjugate_gradient(lambda v: A @ v, b, tol=1e-12, max_iter=2)
    assert converged
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-12)
    assert not factorisations.conjugate_gradient(lambda v: A @ v, b, tol=1e-12, max_iter=1)[1]


@pytest.mark.parametrize("scale", [1e36, 1e-36])
def test_targets_near_float32_limits_fit_as_scaled_targets(scale):
    # the residuals reach the float32 factor scaled: no overflow to NaN, no underflow to 0
    X, y = diabetes()
    reference = svmkit.KernelRidge(kernel="rbf", alpha=1e-3, gamma=5.0).fit(X, y)
    scaled = svmkit.KernelRidge(kernel="rbf", alpha=1e-3, gamma=5.0).fit(X, y * scale)
    np.testing.assert_allclose(scaled.dual_coef_ / scale, reference.dual_coef_, rtol=1e-8,
                               atol=1e-10 * np.abs(reference.dual_coef_).max())


@pytest.mark.parametrize("storage", ["full", "packed"])
def test_matrix_singular_in_float32_is_solved_by_the_float64_factor(storage):
    K = np.array([[1.0, 1.0 - 1e-9], [1.0 - 1e-9, 1.0]])  # positive definite, singular once rounded to float32
    factor = _mixed(storage, K, 0.0)
    assert factor.factor32 is None
    np.testing.assert_allclose(factor.solve(np.array([1.0, 0.0])), np.linalg.solve(K, [1.0, 0.0]), rtol=1e-6)


@pytest.mark.parametrize("solver", ["cholesky", "eigen"])
def test_lssvr_equals_a_dense_solve_of_the_bordered_system(solver):
    X, y = _small_regression()
    ours = svmkit.LSSVR(C=10.0, gamma=0.2, solver=solver).fit(X, y)
    b, alpha = _bordered(rbf_kernel(X, gamma=0.2), np.ones(y.size), y, 10.0)
    np.testing.assert_allclose(ours.dual_coef_[0], alpha, rtol=1e-8, atol=1e-10)
    assert ours.intercept_[0] == pytest.approx(b, rel=1e-8, abs=1e-12)
    np.testing.assert_array_equal(ours.support_, np.arange(y.size))


def test_lssvc_is_seed_001_system_6_1_on_four_points():
    # two points per class at the corners of a unit square, linear kernel: Ω = (yyᵀ) ∘ XXᵀ
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = np.array([-1.0, -1.0, 1.0, 1.0])
    ours = svmkit.LSSVC(C=2.0, kernel="linear").fit(X, y)
    b, alpha_seed = _bordered(np.outer(y, y) * (X @ X.T), y, np.ones(4), 2.0)
    np.testing.assert_allclose(ours.dual_coef_[0], alpha_seed * y, rtol=1e-10, atol=1e-12)
    assert ours.intercept_[0] == pytest.approx(b, abs=1e-12)
    # by symmetry b = −w·(½, ½) and w = (w₁, 0): the decision is w₁(x₁ − ½)
    dec = ours.decision_function(np.array([[0.5, 0.3], [1.0, 0.7]]))
    assert dec[0] == pytest.approx(0.0, abs=1e-12)
    assert dec[1] > 0
    np.testing.assert_array_equal(ours.predict(X), y)


def test_lssvc_binary_on_labels_equals_the_seed_system_on_real_data():
    X, y = _small_regression()
    labels = np.where(y > 0, "high", "low")
    ours = svmkit.LSSVC(C=5.0, gamma=0.3).fit(X, labels)
    signs = np.where(labels == ours.classes_[1], 1.0, -1.0)
    b, alpha_seed = _bordered(np.outer(signs, signs) * rbf_kernel(X, gamma=0.3), signs, np.ones(y.size), 5.0)
    np.testing.assert_allclose(ours.dual_coef_[0], alpha_seed * signs, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("multi_class", ["ovr", "ovo"])
def test_lssvc_multiclass_predicts_iris(multi_class):
    X, y = iris()
    ours = svmkit.LSSVC(C=10.0, gamma=0.5, multi_class=multi_class).fit(X, y)
    n_problems = 3
    assert ours.decision_function(X).shape == (150, n_problems)
    assert ours.score(X, y) > 0.97


def _brute_force_residuals(make, X, y, sample_weight=None):
    out = []
    for i in range(X.shape[0]):
        keep = np.arange(X.shape[0]) != i
        kw = {} if sample_weight is None else {"sample_weight": sample_weight[keep]}
        out.append(y[i] - make().fit(X[keep], y[keep], **kw).predict(X[i:i + 1])[0])
    return np.array(out)


@pytest.mark.parametrize("solver", ["cholesky", "eigen"])
def test_kernel_ridge_loo_equals_refitting_without_each_row(solver):
    X, y = _small_regression()
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=y.size)
    ours = svmkit.KernelRidge(kernel="rbf", alpha=0.05, gamma=0.1, solver=solver, loo=True).fit(X, y, sample_weight=w)
    brute = _brute_force_residuals(lambda: svmkit.KernelRidge(kernel="rbf", alpha=0.05, gamma=0.1), X, y, w)
    np.testing.assert_allclose(ours.loo_residuals_, brute, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("solver", ["cholesky", "eigen"])
def test_lssvr_loo_equals_refitting_without_each_row(solver):
    X, y = _small_regression()
    ours = svmkit.LSSVR(C=20.0, gamma=0.1, solver=solver, loo=True).fit(X, y)
    brute = _brute_force_residuals(lambda: svmkit.LSSVR(C=20.0, gamma=0.1), X, y)
    np.testing.assert_allclose(ours.loo_residuals_, brute, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("multi_class", ["ovr", "ovo"])
def test_lssvc_loo_decisions_equal_refitting_without_each_row(multi_class):
    X, y = iris()
    X, y = X[::2], y[::2]
    make = lambda: svmkit.LSSVC(C=10.0, gamma=0.5, multi_class=multi_class)  # noqa: E731
    ours = make().set_params(loo=True).fit(X, y)
    refits = [make().fit(np.delete(X, i, 0), np.delete(y, i)) for i in range(y.size)]
    brute = np.array([m.decision_function(X[i:i + 1])[0] for i, m in enumerate(refits)])
    np.testing.assert_allclose(ours.loo_decision_, brute, rtol=1e-8, atol=1e-10)
    loo_pred = np.array([m.predict(X[i:i + 1])[0] for i, m in enumerate(refits)])
    assert ours.loo_score_ == pytest.approx(np.mean(loo_pred == y))


@pytest.mark.parametrize("route", ["cholesky per lambda", "one eigendecomposition"])
def test_kernel_ridge_cv_scores_are_scikit_learns_leave_one_out(route, monkeypatch):
    if route == "one eigendecomposition":
        monkeypatch.setattr(factorisations, "EIGEN_MIN_SHIFTS", 2)
    X, y = _small_regression(40)
    search = KernelRidgeCV(alphas=[1e-2, 1e-1], gammas=[0.05, 0.5]).fit(X, y)
    for params, score in zip(search.cv_results_["params"], search.cv_results_["loo_score"]):
        model = sklearn.kernel_ridge.KernelRidge(kernel="rbf", coef0=1.0, **params)
        pred = cross_val_predict(model, X, y, cv=LeaveOneOut())
        r2 = 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)
        assert score == pytest.approx(r2, rel=1e-8)
    assert search.best_score_ == pytest.approx(np.max(search.cv_results_["loo_score"]))
    assert search.best_estimator_.alpha == search.best_params_["alpha"]


def _blas_threads():
    return max(lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas")


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="side by side needs two cores")
def test_loo_search_on_a_small_data_set_scores_its_gammas_side_by_side_on_one_blas_thread_each(monkeypatch):
    """Up to SIDE_BY_SIDE_ROWS rows each γ's factorisations run on a worker thread of their own
    with BLAS on one thread; past it in turn on the calling thread; the scores are the same."""
    seen = []
    loo = svmkit.KernelRidge._loo_scores

    def recording(self, session, values):
        seen.append((threading.current_thread() is threading.main_thread(), _blas_threads()))
        return loo(self, session, values)

    monkeypatch.setattr(svmkit.KernelRidge, "_loo_scores", recording)
    X, y = _small_regression()
    grid = {"alphas": [1e-2, 1e-1], "gammas": [0.05, 0.5, 2.0]}
    side_by_side = KernelRidgeCV(**grid).fit(X, y)
    assert seen == [(False, 1)] * 3
    seen.clear()
    monkeypatch.setattr(backend, "SIDE_BY_SIDE_ROWS", X.shape[0] - 1)
    in_turn = KernelRidgeCV(**grid).fit(X, y)
    assert [on_main for on_main, _ in seen] == [True] * 3
    np.testing.assert_allclose(side_by_side.cv_results_["loo_score"], in_turn.cv_results_["loo_score"], rtol=1e-10)
    assert side_by_side.best_params_ == in_turn.best_params_


@pytest.mark.parametrize("route", ["cholesky per C", "one eigendecomposition"])
def test_lssvm_cv_scores_equal_each_cells_own_loo(route, monkeypatch):
    if route == "one eigendecomposition":
        monkeypatch.setattr(factorisations, "EIGEN_MIN_SHIFTS", 2)
    X, y = iris()
    search = LSSVMCV(svmkit.LSSVC(), Cs=[0.5, 50.0], gammas=[0.05, 2.0]).fit(X, y)
    for params, score in zip(search.cv_results_["params"], search.cv_results_["loo_score"]):
        assert score == svmkit.LSSVC(loo=True, **params).fit(X, y).loo_score_
    regression = LSSVMCV(svmkit.LSSVR(), Cs=[0.5, 50.0], gammas=[0.05, 2.0]).fit(*diabetes())
    for params, score in zip(regression.cv_results_["params"], regression.cv_results_["loo_score"]):
        assert score == pytest.approx(svmkit.LSSVR(loo=True, **params).fit(*diabetes()).loo_score_, rel=1e-10)
    assert search.score(X, y) > 0.95


@pytest.mark.parametrize("route", ["normal equations", "cg"])
@pytest.mark.parametrize("model", [svmkit.KernelRidge(kernel="rbf", alpha=0.1, gamma=0.1), svmkit.LSSVR(C=10.0, gamma=0.1)])
def test_nystrom_with_every_row_a_centre_equals_the_exact_solver(model, route, monkeypatch):
    if route == "cg":
        monkeypatch.setattr("svmkit.solvers.dense.nystrom.NYSTROM_DIRECT_MAX", 0)
    X, y = diabetes()
    exact = model.set_params(solver="cholesky").fit(X, y).predict(X)
    nystrom = model.set_params(solver="nystrom", n_components=X.shape[0], tol=1e-10).fit(X, y).predict(X)
    np.testing.assert_allclose(nystrom, exact, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("centers", ["uniform", "leverage"])
def test_nystrom_with_few_centres_predicts_held_out_rows_nearly_as_well(centers):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(4000, 3))
    y = np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1]) + X[:, 2] ** 2 + 0.1 * rng.normal(size=4000)
    train, test = slice(0, 3000), slice(3000, None)
    rmse = {}
    for solver, m in (("cholesky", None), ("nystrom", 300)):
        model = svmkit.KernelRidge(kernel="rbf", alpha=1e-2, gamma=1.0, solver=solver, n_components=m, centers=centers,
                                   random_state=0)
        rmse[solver] = np.sqrt(np.mean((model.fit(X[train], y[train]).predict(X[test]) - y[test]) ** 2))
    assert rmse["nystrom"] <= 1.05 * rmse["cholesky"]


def test_leverage_scores_through_every_row_are_the_exact_ridge_leverages():
    from svmkit.kernels.kinds import make_kernel
    X, _ = _small_regression()
    spec = make_kernel("rbf", X, 0.3)
    K = rbf_kernel(X, gamma=0.3)
    exact = np.diag(K @ np.linalg.inv(K + 0.05 * np.eye(X.shape[0])))
    scores = svmkit.KernelRidge._leverage_scores(spec, X, 0.05, np.arange(X.shape[0]))
    np.testing.assert_allclose(scores, exact, rtol=1e-6, atol=1e-9)


def test_closed_form_models_save_and_load_without_code(tmp_path):
    X, y = _small_regression()
    for model in (svmkit.KernelRidge(kernel="rbf", loo=True), svmkit.LSSVR(), svmkit.LSSVC(multi_class="ovo")):
        target = np.digitize(y, [-0.5, 0.5]) if isinstance(model, svmkit.LSSVC) else y
        model.fit(X, target)
        svmkit.save(model, tmp_path / "m.svmkit")
        loaded = svmkit.load(tmp_path / "m.svmkit")
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize("model, message", [
    (svmkit.KernelRidge(alpha=0.0), "alpha"),
    (svmkit.KernelRidge(alpha=-1.0), "alpha"),
    (svmkit.LSSVR(C=0.0), "C"),
    (svmkit.KernelRidge(solver="lu"), "solver"),
    (svmkit.KernelRidge(kernel="rbf", solver="nystrom", centers="kmeans"), "centers"),
    (svmkit.KernelRidge(kernel="rbf", solver="nystrom", loo=True), "loo=True needs an exact solver"),
])
def test_bad_parameters_raise_naming_the_parameter(model, message):
    X, y = _small_regression()
    with pytest.raises(ValueError, match=message):
        model.fit(X, y)


@pytest.mark.parametrize("min_shifts", [factorisations.EIGEN_MIN_SHIFTS, 1])
def test_loo_search_fails_only_the_cells_whose_matrix_is_not_positive_definite(min_shifts, monkeypatch):
    monkeypatch.setattr(factorisations, "EIGEN_MIN_SHIFTS", min_shifts)
    X, y = diabetes()
    with pytest.warns(FitFailedWarning, match=r"'alpha': 1e-06.*not positive definite") as caught:
        search = KernelRidgeCV(alphas=[1e-6, 1e3], gammas=[1.0], kernel="sigmoid", coef0=-1.0).fit(X, y)
    assert len(caught) == 1
    assert np.isnan(search.cv_results_["loo_score"][0])
    assert search.best_params_ == {"alpha": 1e3, "gamma": 1.0}
    single = svmkit.KernelRidge(alpha=1e3, gamma=1.0, kernel="sigmoid", coef0=-1.0, loo=True).fit(X, y)
    assert search.best_score_ == pytest.approx(single.loo_score_, rel=1e-10)
    [((failed, _), _)] = loo_grid_scores([single], X, y, [1e-6, 1e3])
    assert isinstance(failed, NotPositiveDefiniteError) and failed.__traceback__ is None  # holds no kernel copy


def test_loo_search_refuses_one_vs_one():
    X, y = iris()
    with pytest.raises(ValueError, match="multi_class='ovr'"):
        LSSVMCV(svmkit.LSSVC(multi_class="ovo"), Cs=[1.0], gammas=[0.5]).fit(X, y)


def test_non_finite_target_raises_naming_the_row():
    X, y = _small_regression()
    y = y.copy()
    y[7] = np.nan
    with pytest.raises(ValueError, match="row 7"):
        svmkit.KernelRidge().fit(X, y)


@pytest.mark.parametrize("solver", ["cholesky", "eigen"])
def test_indefinite_kernel_raises_instead_of_a_nan_model(solver):
    X, y = _small_regression()
    with pytest.raises(NotPositiveDefiniteError, match="not positive definite"):
        svmkit.KernelRidge(alpha=1e-6, kernel="sigmoid", gamma=1.0, coef0=-1.0, solver=solver).fit(X, y)


def test_duplicate_rows_at_a_vanishing_ridge_raise_or_fit_finitely():
    X, y = _small_regression()
    X2, y2 = np.vstack([X, X]), np.r_[y, y]
    with pytest.raises(NotPositiveDefiniteError, match="duplicate"):
        svmkit.KernelRidge(kernel="rbf", alpha=1e-300, gamma=0.1, solver="eigen").fit(X2, y2)


def test_nystrom_on_a_dask_cluster_equals_the_in_memory_fit():
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    X, y = diabetes()
    Y = np.column_stack([y, np.sin(y)])
    model = svmkit.KernelRidge(kernel="rbf", alpha=0.1, gamma=0.1, solver="nystrom", n_components=100, random_state=0, tol=1e-10)
    in_memory = model.fit(X, Y).predict(X)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False) as cluster, \
            distributed.Client(cluster):
        on_cluster = svmkit.KernelRidge(kernel="rbf", alpha=0.1, gamma=0.1, solver="nystrom", n_components=100, random_state=0)
        on_cluster.fit(da.from_array(X, chunks=(100, 5)), da.from_array(Y, chunks=(100, 2)))
        lazy = on_cluster.predict(da.from_array(X, chunks=(150, 10)))
        assert isinstance(lazy, da.Array)
        np.testing.assert_allclose(lazy.compute(), in_memory, rtol=0, atol=1e-8 * np.abs(in_memory).max())
    np.testing.assert_array_equal(on_cluster.support_, model.support_)


