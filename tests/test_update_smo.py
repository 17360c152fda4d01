"""partial_fit and forget of the SMO models: warm-started from the previous α, the fitted state
equals a fit on the same rows (objective to 1e-6 relative, predictions equal)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes, load_iris

import svmkit
from conftest import heart_scale

TOL = 1e-8  # the optimum to this violation, so that two starts reach the same one


def _iris():
    X, y = load_iris(return_X_y=True)
    order = np.random.RandomState(0).permutation(y.size)
    return X[order], y[order]


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return X[:200], y[:200] / 100.0


CASES = [
    (svmkit.SVC, {"C": 2.0}, "heart"), (svmkit.SVC, {"C": 10.0}, "iris"),
    (svmkit.NuSVC, {"nu": 0.3}, "iris"), (svmkit.NuSVC, {"nu": 0.4}, "heart"),
    (svmkit.SVR, {"C": 3.0, "epsilon": 0.2}, "diabetes"), (svmkit.NuSVR, {"nu": 0.4}, "diabetes"),
    (svmkit.OneClassSVM, {"nu": 0.2}, "heart"),
    # a fixed gamma keeps the kernel, so that the update starts from the previous Qα too
    (svmkit.SVC, {"C": 2.0, "gamma": 0.1}, "heart"), (svmkit.NuSVC, {"nu": 0.3, "gamma": 0.5}, "iris"),
    (svmkit.SVR, {"C": 3.0, "gamma": 10.0}, "diabetes"), (svmkit.NuSVR, {"nu": 0.4, "gamma": 10.0}, "diabetes"),
    (svmkit.OneClassSVM, {"nu": 0.2, "gamma": 0.1}, "heart"), (svmkit.KernelQuantileRegressor, {"quantile": 0.3}, "diabetes"),
]
DATA = {"heart": heart_scale, "iris": _iris, "diabetes": _diabetes}


def _args(model, X, y):
    return (X,) if model is svmkit.OneClassSVM else (X, y)


def _same(update, refit, X):
    assert update.gamma_ == refit.gamma_  # gamma='scale': resolved on the same rows as the refit's
    np.testing.assert_allclose(np.ravel(update.objective_), np.ravel(refit.objective_), rtol=1e-6)
    scores = getattr(refit, "decision_function", refit.predict)
    np.testing.assert_allclose(getattr(update, "decision_function", update.predict)(X), scores(X),
                               rtol=1e-4, atol=1e-5)
    if hasattr(refit, "decision_function"):  # labels equal; regression values to the tolerance above
        # off the boundary: a free support vector's decision value is 0 at the optimum, its sign rounding
        clear = np.abs(scores(X)).reshape(X.shape[0], -1).min(axis=1) > 1e-6
        np.testing.assert_array_equal(update.predict(X)[clear], refit.predict(X)[clear])


@pytest.mark.parametrize("model, params, data", CASES)
def test_batches_forget_and_back(model, params, data):
    X, y = DATA[data]()
    n = X.shape[0]
    cuts = [0, n // 2, n // 2 + n // 10, n]
    update = model(tol=TOL, **params)
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        update.partial_fit(*_args(model, X[lo:hi], y[lo:hi]))
    whole = model(tol=TOL, **params).fit(*_args(model, X, y))
    _same(update, whole, X)
    assert update.retained_X_.shape[0] == n

    gone = np.arange(0, n, 9)
    keep = np.setdiff1d(np.arange(n), gone)
    update.forget(gone)
    _same(update, model(tol=TOL, **params).fit(*_args(model, X[keep], y[keep])), X)

    update.partial_fit(*_args(model, X[gone], y[gone]))
    order = np.r_[keep, gone]
    _same(update, model(tol=TOL, **params).fit(*_args(model, X[order], y[order])), X)
    np.testing.assert_allclose(np.ravel(update.objective_), np.ravel(whole.objective_), rtol=1e-6)


def test_keep_data_and_default_fit():
    X, y = heart_scale()
    assert not hasattr(svmkit.SVC().fit(X, y), "retained_X_")
    kept = svmkit.SVC(keep_data=True).fit(X, y)
    assert kept.retained_X_.shape == X.shape and kept.retained_weight_.tolist() == [1.0] * y.size
    np.testing.assert_array_equal(kept.retained_y_, y)
    with pytest.raises(ValueError, match="keep_data"):
        svmkit.SVC(keep_data="yes").fit(X, y)


def test_errors():
    X, y = _iris()
    model = svmkit.SVC().partial_fit(X[:60], y[:60])
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[60:, :3], y[60:])
    two = y < 2
    binary = svmkit.SVC().partial_fit(X[two][:40], y[two][:40])
    with pytest.raises(ValueError, match="label 2.*classes="):
        binary.partial_fit(X[~two], y[~two])
    declared = svmkit.SVC(tol=TOL).partial_fit(X[two][:40], y[two][:40], classes=[0, 1, 2])
    declared.partial_fit(X[~two], y[~two])
    assert declared.classes_.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="out of range"):
        model.forget([60])
    with pytest.raises(ValueError, match="repeated"):
        model.forget([3, 3])
    with pytest.raises(ValueError, match="keep_data=True"):
        svmkit.SVC().fit(X, y).forget([0])
    with pytest.raises(ValueError, match="keep_data=True"):
        svmkit.SVR().fit(X, y).partial_fit(X, y)
    with pytest.raises(ValueError, match="precomputed"):
        svmkit.SVC(kernel="precomputed").partial_fit(X[:60] @ X[:60].T, y[:60])
    with pytest.raises((ValueError, TypeError), match="sparse|dense"):
        model.partial_fit(sp.csr_matrix(X[60:]), y[60:])


def test_save_load_then_partial_fit(tmp_path):
    X, y = heart_scale()
    model = svmkit.SVC(tol=TOL).partial_fit(X[:200], y[:200])
    svmkit.save(model, tmp_path / "model")
    loaded = svmkit.load(tmp_path / "model")
    assert loaded.retained_X_.shape[0] == 200
    loaded.partial_fit(X[200:], y[200:])
    _same(loaded, svmkit.SVC(tol=TOL).fit(X, y), X)


def _sparse_data():
    X = sp.random(300, 400, density=0.03, format="csr", random_state=0)
    y = np.where(np.asarray(X.sum(axis=1)).ravel() > np.median(np.asarray(X.sum(axis=1))), 1, -1)
    return X, y


@pytest.mark.parametrize("data", ["heart", "breast", "sparse"])
def test_updates_take_the_kernel_rows_over_and_equal_a_refit(data):
    """A model that keeps its data keeps its kernel rows with room for new points: an update
    adding a few rows (one a copy of an earlier row), forgetting some, adding back a copy of a
    forgotten one, reads the earlier rows from the same store, and each equals a refit."""
    if data == "breast":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    else:
        X, y = heart_scale() if data == "heart" else _sparse_data()
    n = X.shape[0]
    stack = sp.vstack if sp.issparse(X) else np.vstack
    make = lambda: svmkit.SVC(C=2.0, gamma=0.05, tol=TOL, keep_data=True)  # noqa: E731
    model = make().fit(X[: n - 8], y[: n - 8])
    store = model._kept_rows.store
    computed = model._kept_rows.computed_rows
    rows = [X[n - 8:], X[[3]]]
    model.partial_fit(stack(rows), np.r_[y[n - 8:], y[3]])
    assert model._kept_rows.store is store
    assert model._kept_rows.computed_rows - computed <= 8
    Xs, ys = stack([X, X[[3]]]), np.r_[y, y[3]]
    _same(model, make().fit(Xs, ys), X)

    gone = np.array([0, 10, 100])
    keep = np.setdiff1d(np.arange(n + 1), gone)
    model.forget(gone)
    assert model._kept_rows.store is store
    _same(model, make().fit(Xs[keep], ys[keep]), X)

    model.partial_fit(Xs[[10]], ys[[10]])
    assert model._kept_rows.store is store
    order = np.r_[keep, 10]
    _same(model, make().fit(Xs[order], ys[order]), X)


def test_kept_rows_are_neither_pickled_nor_shared_by_copies():
    """The kernel rows a model keeps for its next update are left out of a pickle, and a copy
    sharing them updates exactly: the first update takes the store, the other computes its rows."""
    import copy
    import pickle

    X, y = heart_scale()
    model = svmkit.SVC(gamma=0.1, tol=TOL).partial_fit(X[:250], y[:250])
    restored = pickle.loads(pickle.dumps(model))
    assert "_kept_rows" not in vars(restored)
    twin = copy.copy(model)
    model.partial_fit(X[250:260], y[250:260])
    twin.partial_fit(X[260:], y[260:])
    restored.partial_fit(X[250:], y[250:])
    _same(model, svmkit.SVC(gamma=0.1, tol=TOL).fit(X[:260], y[:260]), X)
    rows = np.r_[np.arange(250), np.arange(260, 270)]
    _same(twin, svmkit.SVC(gamma=0.1, tol=TOL).fit(X[rows], y[rows]), X)
    _same(restored, svmkit.SVC(gamma=0.1, tol=TOL).fit(X, y), X)
