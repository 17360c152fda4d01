"""partial_fit and forget of the dense family (KernelRidge, LSSVR, LSSVC, KernelLogisticRegression):
equal to a fit on the same rows (coefficients, predictions, LOO terms, objective)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import svmkit
from svmkit import KernelLogisticRegression, KernelRidge, LSSVC, LSSVR
from svmkit.solvers.dense.updates import UpdatableCholesky

from conftest import diabetes, heart_scale, iris

RTOL = 1e-6


def _close(a, b, rtol=RTOL):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, float(np.abs(b).max())))


def _cases():
    Xd, yd = diabetes()
    Xh, yh = heart_scale()
    Xi, yi = iris()
    return [
        ("ridge", KernelRidge(kernel="rbf", gamma=0.1, alpha=0.5, loo=True), Xd, yd),
        ("ridge-multi", KernelRidge(kernel="rbf", gamma=0.1, alpha=0.5, loo=True), Xd, np.column_stack([yd, -yd])),
        ("lssvr", LSSVR(C=3.0, gamma=0.1, loo=True), Xd, yd),
        ("lssvc-sparse", LSSVC(C=2.0, gamma=0.2, loo=True), Xh, yh),
        ("lssvc-ovr", LSSVC(C=2.0, gamma=0.5, loo=True), Xi, yi),
        ("lssvc-ovo", LSSVC(C=2.0, gamma=0.5, loo=True, multi_class="ovo"), Xi, yi),
        ("klr", KernelLogisticRegression(C=2.0, gamma=0.2, tol=1e-10), Xh, yh),
        ("klr-multi", KernelLogisticRegression(C=2.0, gamma=0.5, tol=1e-10), Xi, yi),
    ]


CASES = {name: case for name, *case in _cases()}


def _order(X, y, seed=0):
    """Rows shuffled (the classifiers' data sets come sorted by class)."""
    idx = np.random.default_rng(seed).permutation(X.shape[0])
    return X[idx], y[idx]


def _same_function(model, ref, X):
    """Equal predictions: the same classes, and decision values or regression values to RTOL."""
    if hasattr(ref, "classes_"):
        np.testing.assert_array_equal(model.predict(X), ref.predict(X))
        _close(model.decision_function(X), ref.decision_function(X))
    else:
        _close(model.predict(X), ref.predict(X))


def _assert_same(model, ref, X):
    _close(model.dual_coef_, ref.dual_coef_)
    _close(model.intercept_, ref.intercept_)
    _same_function(model, ref, X)
    for name in ("loo_residuals_", "loo_decision_", "loo_score_", "objective_"):
        if hasattr(ref, name):
            _close(getattr(model, name), getattr(ref, name))


def _batches(n, parts):
    return np.array_split(np.arange(n), parts)


@pytest.mark.parametrize("name", list(CASES))
def test_batches_equal_a_fit_on_the_union(name):
    est, X, y = CASES[name]
    X, y = _order(X, y)
    model = clone(est)
    for rows in _batches(X.shape[0], 3):
        model.partial_fit(X[rows], y[rows])
    ref = clone(est).fit(X, y)
    _assert_same(model, ref, X)
    assert model.retained_X_.shape[0] == X.shape[0]


@pytest.mark.parametrize("name", list(CASES))
def test_forget_equals_a_fit_on_the_rest_and_partial_fit_restores(name):
    est, X, y = CASES[name]
    X, y = _order(X, y, seed=1)
    model = clone(est).set_params(keep_data=True).fit(X, y)
    original = clone(est).fit(X, y)
    gone = np.array([3, 40, 41, X.shape[0] - 1, 17])
    model.forget(gone)
    keep = np.setdiff1d(np.arange(X.shape[0]), gone)
    _assert_same(model, clone(est).fit(X[keep], y[keep]), X)
    # the forgotten rows come back at the end: the original model with its rows reordered
    model.partial_fit(X[gone], y[gone])
    order = np.concatenate([keep, gone])
    _assert_same(model, clone(est).fit(X[order], y[order]), X)
    _same_function(model, original, X)


def test_weights_and_balanced_class_weights():
    X, y = _order(*heart_scale())
    w = np.random.default_rng(3).uniform(0.5, 2.0, X.shape[0])
    for est in (KernelRidge(kernel="rbf", gamma=0.2, loo=True), LSSVC(C=2.0, gamma=0.2, loo=True, class_weight="balanced")):
        model = clone(est)
        for rows in _batches(X.shape[0], 2):
            model.partial_fit(X[rows], y[rows], sample_weight=w[rows])
        _assert_same(model, clone(est).fit(X, y, sample_weight=w), X)
        model.forget([0, 5])
        keep = np.setdiff1d(np.arange(X.shape[0]), [0, 5])
        _assert_same(model, clone(est).fit(X[keep], y[keep], sample_weight=w[keep]), X)


@pytest.mark.parametrize("est", [KernelRidge(kernel="rbf", gamma="scale", alpha=0.5, loo=True), LSSVR(C=3.0, loo=True),
                                 LSSVC(C=2.0, loo=True), KernelLogisticRegression(C=2.0, tol=1e-10)],
                         ids=["ridge", "lssvr", "lssvc", "klr"])
def test_scale_gamma_resolves_on_every_row_seen(est):
    """gamma='scale' after an update is fit's on the same rows: γ changes, and the factor with it."""
    X, y = _order(*(heart_scale() if isinstance(est, (LSSVC, KernelLogisticRegression)) else diabetes()))
    model = clone(est).partial_fit(X[:100], y[:100])
    first = model.gamma_
    model.partial_fit(X[100:], y[100:])
    ref = clone(est).fit(X, y)
    assert model.gamma_ == ref.gamma_ != first
    _assert_same(model, ref, X)
    gone = np.arange(0, X.shape[0], 3)
    keep = np.setdiff1d(np.arange(X.shape[0]), gone)
    model.forget(gone)
    ref = clone(est).fit(X[keep], y[keep])
    assert model.gamma_ == ref.gamma_
    _assert_same(model, ref, X)


def test_precomputed_and_callable_kernels():
    """The kept factor is read from the kernel's rows (`lower_rows`) of other kernel kinds too."""
    X, y = _order(*diabetes())
    X, y = X[:150], y[:150]

    def rbf(A, B):
        return np.exp(-0.1 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2))

    K = rbf(X, X)
    est = KernelRidge(kernel="precomputed", alpha=0.5, loo=True)
    _assert_same(clone(est).set_params(keep_data=True).fit(K, y), clone(est).fit(K, y), K)
    est = KernelRidge(kernel=rbf, alpha=0.5, loo=True)
    model = clone(est).partial_fit(X[:100], y[:100]).partial_fit(X[100:], y[100:]).forget([3, 120])
    keep = np.setdiff1d(np.arange(150), [3, 120])
    _assert_same(model, clone(est).fit(X[keep], y[keep]), X)


def test_save_load_then_partial_fit(tmp_path):
    X, y = _order(*iris())
    for est in (LSSVC(C=2.0, gamma=0.5, loo=True), KernelLogisticRegression(C=2.0, gamma=0.5, tol=1e-10)):
        model = clone(est).partial_fit(X[:100], y[:100])
        svmkit.save(model, tmp_path / "m.svmkit")
        loaded = svmkit.load(tmp_path / "m.svmkit")
        np.testing.assert_array_equal(loaded.retained_X_, X[:100])
        loaded.partial_fit(X[100:], y[100:])
        _assert_same(loaded, clone(est).fit(X, y), X)


def test_classes_on_the_first_call():
    X, y = _order(*iris())
    first = y != 2
    model = LSSVC(C=2.0, gamma=0.5).partial_fit(X[first], y[first], classes=[0, 1, 2])
    model.partial_fit(X[~first], y[~first])
    order = np.concatenate([np.flatnonzero(first), np.flatnonzero(~first)])
    _assert_same(model, LSSVC(C=2.0, gamma=0.5).fit(X[order], y[order]), X)
    with pytest.raises(ValueError, match="label 2 is not among.*classes= on the first"):
        KernelLogisticRegression().partial_fit(X[first], y[first]).partial_fit(X[~first], y[~first])
    with pytest.raises(ValueError, match="label 2 is not among"):
        LSSVC().partial_fit(X, y, classes=[0, 1])


def test_errors():
    X, y = diabetes()
    with pytest.raises(ValueError, match="keep_data=True"):
        KernelRidge().fit(X, y).forget([0])
    with pytest.raises(ValueError, match="keep_data=True"):
        KernelRidge().fit(X, y).partial_fit(X, y)
    model = KernelRidge(kernel="rbf").partial_fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[100:, :5], y[100:])
    with pytest.raises(ValueError, match="out of range"):
        model.forget([100])
    with pytest.raises(ValueError, match="repeated"):
        model.forget([1, 1])
    with pytest.raises(ValueError):
        model.partial_fit(sp.csr_matrix(X[100:]), y[100:])
    with pytest.raises(ValueError, match="solver='cholesky' or 'auto'"):
        KernelRidge(solver="eigen", keep_data=True).fit(X, y)
    # the refused updates left the model as it was
    _assert_same(model, KernelRidge(kernel="rbf").fit(X[:100], y[:100]), X)


def test_default_fit_keeps_nothing():
    X, y = diabetes()
    model = KernelRidge(kernel="rbf", loo=True).fit(X, y)
    assert not hasattr(model, "retained_X_") and "_factor_state" not in vars(model)
    kept = KernelRidge(kernel="rbf", loo=True, keep_data=True).fit(X, y)
    assert "_factor_state" in vars(kept)
    assert "_factor_state" not in vars(kept.set_params(keep_data=False).fit(X, y))


def test_factor_updates_against_a_fresh_factor():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(60, 60))
    K = A @ A.T / 60
    f = UpdatableCholesky(K[:40, :40].copy(), 0.3, True)
    f.grow(K[:40, 40:].copy(), K[40:, 40:].copy())
    keep = np.ones(60, dtype=bool)
    keep[[2, 30, 45, 59]] = False
    f.shrink(keep)
    fresh = UpdatableCholesky(K[np.ix_(keep, keep)].copy(), 0.3, True)
    np.testing.assert_allclose(f.L, fresh.L, atol=1e-12)
    np.testing.assert_allclose(f.inverse_diag(), fresh.inverse_diag(), rtol=1e-12)


def test_carried_solutions_and_deferred_downdate_against_a_fresh_factor():
    """solve after grow (the last right-hand side carried), after shrink (its downdate of L
    deferred: the Schur complement of the inverse), a new right-hand side while a removal is
    pending, then a further shrink and grow, each against a fresh factorisation."""
    rng = np.random.default_rng(1)
    A = rng.normal(size=(80, 80))
    K = A @ A.T / 80
    b = rng.normal(size=(80, 2))

    def fresh(rows):
        return UpdatableCholesky(K[np.ix_(rows, rows)].copy(), 0.3, True)

    f = UpdatableCholesky(K[:50, :50].copy(), 0.3, True)
    f.solve(b[:50])
    f.grow(K[:50, 50:70].copy(), K[50:70, 50:70].copy())
    rows = np.arange(70)
    np.testing.assert_allclose(f.solve(b[:70]), fresh(rows).solve(b[:70]), rtol=1e-12, atol=1e-12)
    keep = np.ones(70, dtype=bool)
    keep[[0, 13, 52, 69]] = False
    f.shrink(keep)
    rows = rows[keep]
    np.testing.assert_allclose(f.solve(b[rows]), fresh(rows).solve(b[rows]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f.solve(b[rows, 0]), fresh(rows).solve(b[rows, 0]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f.inverse_diag(), fresh(rows).inverse_diag(), rtol=1e-12)
    again = np.ones(rows.size, dtype=bool)
    again[[5, 40]] = False
    f.shrink(again)
    rows = rows[again]
    f.grow(K[np.ix_(rows, np.arange(70, 80))].copy(), K[70:, 70:].copy())
    rows = np.concatenate([rows, np.arange(70, 80)])
    g = fresh(rows)
    np.testing.assert_allclose(f.solve(b[rows, 0]), g.solve(b[rows, 0]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f.L, g.L, atol=1e-12)
    np.testing.assert_allclose(f.inverse_diag(), g.inverse_diag(), rtol=1e-12)


def test_downdate_over_several_blocks_against_a_fresh_factor():
    """Rows removed across several ROTATION_BLOCK blocks, adjacent ones and the last among
    them: the kept blocks moved, each block's reflector applied below it."""
    rng = np.random.default_rng(2)
    A = rng.normal(size=(300, 300))
    K = A @ A.T / 300
    f = UpdatableCholesky(K.copy(), 0.1, True)
    keep = np.ones(300, dtype=bool)
    keep[[3, 4, 64, 65, 127, 200, 299]] = False
    f.shrink(keep)
    g = UpdatableCholesky(K[np.ix_(keep, keep)].copy(), 0.1, True)
    np.testing.assert_allclose(f.L, g.L, atol=1e-12)
    np.testing.assert_array_equal(np.triu(f.L, 1), 0.0)
    np.testing.assert_allclose(f.inverse_diag(), g.inverse_diag(), rtol=1e-12)
