"""SVC against the oracle libsvm-official (LIBSVM 3.37), pair by pair."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import svmkit
from conftest import (DATASETS, assert_pairs_match_libsvm, heart_scale, libsvm_predict, libsvm_support,
                      libsvm_train, scale_gamma)

KERNELS = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3}


def _kernel_options(kernel, X):
    gamma = scale_gamma(X)
    coef0 = 1.0 if kernel == "poly" else 0.0
    if kernel == "sigmoid":
        gamma /= 10
    return dict(kernel=kernel, gamma=gamma, degree=3, coef0=coef0)


@pytest.mark.parametrize("name", sorted(DATASETS))
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_svc_matches_libsvm_objective_rho_support_and_predictions(name, kernel, capfd):
    X, y = DATASETS[name]()
    opts = _kernel_options(kernel, X)
    C = 1.0
    ours = svmkit.SVC(C=C, **opts).fit(X, y)
    options = (f"-s 0 -t {KERNELS[kernel]} -d {opts['degree']} -g {opts['gamma']!r} -r {opts['coef0']!r} "
               f"-c {C} -e 0.001 -m 200")
    model, objs, order = libsvm_train(X, y, options, capfd)
    assert_pairs_match_libsvm(ours, model, objs, order, X)
    labels, _ = libsvm_predict(model, X)
    assert np.mean(ours.predict(X) == labels) >= 0.995


@pytest.mark.parametrize("name", ["heart_scale", "iris"])
def test_svc_precomputed_kernel_matches_libsvm(name, capfd):
    X, y = DATASETS[name]()
    Xd = X.toarray() if sp.issparse(X) else X
    gamma = scale_gamma(X)
    sq = (Xd ** 2).sum(1)
    K = np.exp(-gamma * (sq[:, None] + sq[None, :] - 2 * Xd @ Xd.T))
    ours = svmkit.SVC(kernel="precomputed").fit(K, y)
    model, objs, order = libsvm_train(K, y, "-s 0 -t 4 -c 1 -e 0.001", capfd, precomputed=True)
    assert_pairs_match_libsvm(ours, model, objs, order, K)
    labels, _ = libsvm_predict(model, K[order][:, :], precomputed_train_order=order)
    assert np.mean(ours.predict(K[order]) == labels) >= 0.995


def test_heart_scale_defaults_reproduce_libsvm_figures():
    """svm-train heart_scale: obj = -100.877288, rho = 0.424462, nSV = 132 (64/68), nBSV = 107."""
    X, y = heart_scale()
    m = svmkit.SVC(C=1, gamma=1 / 13).fit(X, y)
    assert m.objective_[0] == pytest.approx(-100.877288, rel=1e-5)
    # classes_ = [-1, +1]; LIBSVM takes +1 as its first label, so its rho is our intercept
    assert m._intercept_[0] == pytest.approx(0.424462, abs=5e-4)
    assert m.support_.size == 132
    assert sorted(m.n_support_.tolist()) == [64, 68]
    assert m.bounded_support_.size == 107
    assert m.free_support_.size == 132 - 107
    assert m.loo_bound_ == pytest.approx(132 / 270)


@pytest.mark.parametrize("shrinking", [True, False])
def test_shrinking_on_and_off_reach_libsvm_optimum(shrinking, capfd):
    X, y = DATASETS["breast_cancer"]()
    opts = _kernel_options("rbf", X)
    ours = svmkit.SVC(C=10.0, shrinking=shrinking, **opts).fit(X, y)
    model, objs, order = libsvm_train(X, y, f"-s 0 -t 2 -g {opts['gamma']!r} -c 10 -e 0.001 -h {int(shrinking)}",
                                      capfd)
    assert_pairs_match_libsvm(ours, model, objs, order, X)


def test_batched_working_set_with_tiny_cache_reaches_libsvm_optimum(capfd):
    """A working set of 64 of 360 variables and a cache of 145 rows that must evict rows."""
    from svmkit.kernels.gram import TrainingKernel, as_kernel_input
    from svmkit.kernels.kinds import make_kernel
    from svmkit.solvers.smo.row_source import CachedRows
    from svmkit.solvers.smo.solver import DualProblem, solve

    X, y = DATASETS["digits"]()
    X, y = X[y < 2], y[y < 2]
    opts = _kernel_options("rbf", X)
    Xk = as_kernel_input(X)
    rows = CachedRows(TrainingKernel(make_kernel("rbf", Xk, opts["gamma"]), Xk), cache_size=0.2, min_rows=64)
    assert rows.capacity < X.shape[0]
    yy = np.where(y == 0, 1.0, -1.0)
    res = solve(DualProblem(p=-np.ones(y.size), y=yy, upper=np.ones(y.size), kidx=np.arange(y.size)), rows,
                ws_size=64)
    model, objs, order = libsvm_train(X, y, f"-s 0 -t 2 -g {opts['gamma']!r} -c 1 -e 0.001", capfd)
    assert res.objective == pytest.approx(objs[0], rel=1e-3)
    assert res.rho == pytest.approx(model.rho[0], abs=1e-2)
    assert np.array_equal(np.flatnonzero(res.alpha > 0), libsvm_support(model, order))


def test_duplicated_rows_through_an_evicting_cache_reach_libsvm_optimum(capfd):
    """Equal training rows share one cached kernel row; with a cache that must evict, the
    batched solver still reaches LIBSVM's optimum and support points (how α splits among equal
    rows is not unique)."""
    X, y = DATASETS["breast_cancer"]()
    X, y = np.vstack([X, X[::3], X[::5]]), np.r_[y, y[::3], y[::5]]
    opts = _kernel_options("rbf", X)
    ours = svmkit.SVC(C=10.0, cache_size=0.5, **opts).fit(X, y)
    model, objs, order = libsvm_train(X, y, f"-s 0 -t 2 -g {opts['gamma']!r} -c 10 -e 0.001", capfd)
    point = np.unique(X, axis=0, return_inverse=True)[1].ravel()
    assert np.unique(point).size < X.shape[0]
    assert_pairs_match_libsvm(ours, model, objs, order, X, point)


def _svmguide1_half():
    X, y = svmkit.load_svmlight(Path(__file__).parents[1] / "data" / "svmguide1")
    return svmkit.LibsvmScaler(-1.0, 1.0).fit_transform(X.toarray())[::2], y[::2]


def test_high_c_fit_takes_newton_steps_to_libsvm_optimum(capfd):
    """At large C the free support vectors are solved for by Newton steps inside SMO: the same
    optimum as LIBSVM's in fewer pair updates."""
    X, y = _svmguide1_half()
    ours = svmkit.SVC(C=2.0**13, gamma=2.0).fit(X, y)
    _, objs, _, iters = libsvm_train(X, y, "-s 0 -t 2 -g 2 -c 8192 -e 0.001", capfd, iterations=True)
    np.testing.assert_allclose(ours.objective_, objs, rtol=1e-5)
    assert ours.n_iter_[0] < 0.7 * iters[0]


def test_newton_steps_hold_duplicate_free_rows(capfd):
    """Duplicated training rows make Q_FF singular; the Newton step holds the dependent copies
    and still reaches LIBSVM's optimum in fewer pair updates."""
    X, y = _svmguide1_half()
    X, y = np.vstack([X, X[:40]]), np.r_[y, y[:40]]
    ours = svmkit.SVC(C=2.0**13, gamma=2.0).fit(X, y)
    _, objs, _, iters = libsvm_train(X, y, "-s 0 -t 2 -g 2 -c 8192 -e 0.001", capfd, iterations=True)
    np.testing.assert_allclose(ours.objective_, objs, rtol=1e-5)
    assert ours.n_iter_[0] < 0.5 * iters[0]


def test_newton_steps_send_leaving_variables_to_their_bound(capfd):
    """When a Newton step's full move leaves the box, the variables it takes out go to their
    bound and the step is solved again on the rest: LIBSVM's optimum in far fewer updates."""
    X, y = heart_scale()
    ours = svmkit.SVC(C=2.0**15, gamma=0.02).fit(X, y)
    _, objs, _, iters = libsvm_train(X, y, "-s 0 -t 2 -g 0.02 -c 32768 -e 0.001", capfd, iterations=True)
    np.testing.assert_allclose(ours.objective_, objs, rtol=1e-5)
    assert ours.n_iter_[0] < 0.08 * iters[0]  # 1,000 against 19,327; holding one bound per step: 2,199


def test_newton_steps_descend_by_an_active_set_when_sending_leavers_fails(capfd):
    """On a near-singular Q_FF the full step sends most free variables out of the box, and
    sending them all to their bound raises the objective; the step then descends by the
    primal active-set method (one bound held per solve): LIBSVM's optimum in far fewer
    updates."""
    X, y = _svmguide1_half()
    ours = svmkit.SVC(C=2.0**15, gamma=0.5).fit(X, y)
    _, objs, _, iters = libsvm_train(X, y, "-s 0 -t 2 -g 0.5 -c 32768 -e 0.001", capfd, iterations=True)
    np.testing.assert_allclose(ours.objective_, objs, rtol=1e-5)
    assert ours.n_iter_[0] < 0.02 * iters[0]  # 3,400 against 406,987; sending only: 16,201


def test_identical_rows_of_opposite_labels_reach_libsvm_optimum_at_large_c(capfd):
    """Dense RBF rows of 30 features come from a float32 GEMM; for identical rows its distance
    is rounding (K ≈ 1 − 3e−5 at this γ), which at C = 2^15 made their Q block non-singular
    and the optimum another problem's (objective 0.14 % from LIBSVM's; now 3e−5, both solves
    stopping at tol 1e−3). Those distances are recomputed in float64, as LIBSVM computes
    every one."""
    X, y = DATASETS["breast_cancer"]()
    X, y = np.vstack([X, X[:30]]), np.r_[y, 1 - y[:30]]
    gamma = 8.0 / X.shape[1]
    ours = svmkit.SVC(C=2.0**15, gamma=gamma).fit(X, y)
    _, objs, _ = libsvm_train(X, y, f"-s 0 -t 2 -g {gamma!r} -c 32768 -e 0.001", capfd)
    np.testing.assert_allclose(ours.objective_, objs, rtol=1e-4)


def test_nu_mode_newton_steps_reach_libsvm_optimum(capfd):
    """The ν dual's two equality constraints hold through Newton steps: LIBSVM's optimum, to
    which it is solved tightly (at tol 1e-3 this problem's objective differs by % between paths)."""
    X, y = _svmguide1_half()
    ours = svmkit.NuSVC(nu=0.05, gamma=2.0, tol=1e-5).fit(X, y)
    _, objs, _ = libsvm_train(X, y, "-s 1 -t 2 -g 2 -n 0.05 -e 0.0000001", capfd)
    np.testing.assert_allclose(ours.objective_, objs, rtol=1e-5)


def _many_classes(n_classes=60, per_class=4):
    """Rows of n_classes Gaussian classes (10 features) and held-out rows drawn alike."""
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=2.0, size=(n_classes, 10))
    y = np.repeat(np.arange(n_classes), per_class)
    X, Xt = (centres[y] + rng.normal(size=(y.size, 10)) for _ in range(2))
    return X, y, Xt


def test_many_classes_match_libsvm_pair_by_pair(capfd, monkeypatch):
    """60 classes × 4 rows (1,770 pairs, solved in one batch): every pair's objective, ρ and
    support, and the decision values and votes of held-out rows, against LIBSVM; prediction
    applies the one-vs-one weights class by class, a few rows at a time."""
    from svmkit.models.smo import ovo, svc

    monkeypatch.setattr(ovo, "DENSE_WEIGHTS", 0)
    monkeypatch.setattr(svc, "DECISION_BLOCK", 5000)
    X, y, Xt = _many_classes()
    gamma = scale_gamma(X)
    ours = svmkit.SVC(C=1.0, gamma=gamma).fit(X, y)
    model, objs, order = libsvm_train(X, y, f"-s 0 -t 2 -g {gamma!r} -c 1 -e 0.001", capfd)
    assert_pairs_match_libsvm(ours, model, objs, order, X)
    labels, dec = libsvm_predict(model, Xt)

    def formed(*_):
        raise AssertionError("the n_SV × n_pairs weight matrix was formed")

    monkeypatch.setattr(ovo.PairWeights, "__array__", formed)
    ours.decision_function_shape = "ovo"
    np.testing.assert_allclose(ours.decision_function(Xt), dec, atol=1e-2)
    assert np.mean(ours.predict(Xt) == labels) >= 0.995


def test_many_classes_votes_folded_in_the_core_equal_votes_from_the_decisions(monkeypatch):
    """With many classes the core forms each pair's decision from the kernel values and folds
    it into votes and confidences at once; the decisions equal K(X, SV) @ W + b, and predict,
    break_ties and the 'ovr' scores equal LIBSVM's vote and scikit-learn's scores computed from
    those decisions, to the last bit."""
    from sklearn.metrics.pairwise import rbf_kernel

    from svmkit.models.smo import ovo, svc

    monkeypatch.setattr(ovo, "DENSE_WEIGHTS", 0)
    monkeypatch.setattr(svc, "DECISION_BLOCK", 5000)
    X, y, Xt = _many_classes(70, 3)
    model = svmkit.SVC(C=1.0, decision_function_shape="ovo").fit(X, y)
    assert model._folds_votes()
    dec = model.decision_function(Xt)
    W = ovo.weight_matrix(model.dual_coef_, model.n_support_)
    expected = rbf_kernel(Xt, model.support_vectors_, gamma=model.gamma_) @ W + model.intercept_
    np.testing.assert_allclose(dec, expected, rtol=0, atol=1e-12)
    # to the last bit from the same kernel values: all rows in one block on both paths, since
    # BLAS may round a row's products differently with the number of rows formed with it
    monkeypatch.setattr(svc, "DECISION_BLOCK", dec.size)
    dec = model.decision_function(Xt)
    votes, scores = ovo.vote(dec, 70), ovo.ovr_decision(dec, 70)
    assert np.array_equal(model.predict(Xt), model.classes_[np.argmax(votes, axis=1)])
    model.decision_function_shape = "ovr"
    assert np.array_equal(model.decision_function(Xt), scores)
    model.break_ties = True
    assert np.array_equal(model.predict(Xt), model.classes_[np.argmax(scores, axis=1)])


@pytest.mark.parametrize("make", [lambda: svmkit.SVC(C=2.0, probability=True, random_state=0),
                                  lambda: svmkit.NuSVC(nu=0.3, probability=True, random_state=0)])
def test_pairs_solved_in_one_batch_equal_pairs_solved_in_turn(make, monkeypatch):
    """The batch of small pairs (and of their calibration folds) gives each pair the α, pair
    updates, ρ, objective and sigmoid it gets solved alone."""
    X, y, _ = _many_classes(30, 10)
    batch = make().fit(X, y)
    from svmkit.models.smo.formulations import DualSolver

    monkeypatch.setattr(DualSolver, "solve_batch", lambda self, form, batch: None)
    alone = make().fit(X, y)
    for name in ("dual_coef_", "intercept_", "objective_", "probA_", "probB_"):
        np.testing.assert_allclose(getattr(batch, name), getattr(alone, name), rtol=1e-9, atol=1e-12)
    for name in ("support_", "n_iter_", "free_support_", "bounded_support_"):
        np.testing.assert_array_equal(getattr(batch, name), getattr(alone, name))
