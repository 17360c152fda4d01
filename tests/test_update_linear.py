"""partial_fit and forget of LinearSVC and LinearSVR: the dual coordinate descent warm-started
from the previous α equals a fit on the same rows (objective to 1e-6 relative at tol=1e-8,
predictions equal), and bad input gets a clear error."""

import numpy as np
import pytest
import scipy.sparse as sp

import svmkit
from conftest import diabetes, heart_scale, iris

TIGHT = dict(dual=True, tol=1e-8, random_state=0, max_iter=100_000)


def _shuffled(X, y):
    order = np.random.RandomState(0).permutation(y.size)
    return X[order], y[order]


def _data(name):
    if name == "heart_scale":
        return heart_scale()
    if name == "iris":
        return _shuffled(*iris())
    X, y = diabetes()
    return X, (y - y.mean()) / y.std()


def _model(name, **kw):
    params = {**TIGHT, **kw}
    if name == "diabetes":
        return svmkit.LinearSVR(epsilon=0.1, **params)
    return svmkit.LinearSVC(C=0.5 if name == "iris" else 1.0, **params)


def _same(model, refit, X):
    assert model.objective_[..., 0] == pytest.approx(refit.objective_[..., 0], rel=1e-6)
    if isinstance(model, svmkit.LinearSVR):  # real predictions: equal to the solver's tolerance
        np.testing.assert_allclose(model.predict(X), refit.predict(X), rtol=0, atol=1e-4)
    else:
        np.testing.assert_array_equal(model.predict(X), refit.predict(X))


@pytest.mark.parametrize("name", ["heart_scale", "iris", "diabetes"])
def test_batches_equal_a_fit_on_their_union(name):
    X, y = _data(name)
    model = _model(name)
    for rows in np.array_split(np.arange(y.size), 3):
        model.partial_fit(X[rows], y[rows])
    _same(model, _model(name).fit(X, y), X)
    assert model.retained_X_.shape[0] == y.size


@pytest.mark.parametrize("name", ["heart_scale", "iris", "diabetes"])
def test_forget_equals_a_fit_on_the_remaining_rows(name):
    X, y = _data(name)
    model = _model(name, keep_data=True).fit(X, y)
    gone = np.arange(0, y.size, 7)
    keep = np.setdiff1d(np.arange(y.size), gone)
    model.forget(gone)
    _same(model, _model(name).fit(X[keep], y[keep]), X)
    assert model.retained_dual_.shape[1] == keep.size


@pytest.mark.parametrize("name, loss", [("heart_scale", "squared_hinge"), ("iris", "squared_hinge"),
                                        ("diabetes", "squared_epsilon_insensitive")])
def test_the_primal_newton_updates_from_w(name, loss):
    X, y = _data(name)
    model = _model(name, dual=False, loss=loss, keep_data=True)
    for rows in np.array_split(np.arange(y.size), 2):
        model.partial_fit(X[rows], y[rows])
    _same(model, _model(name, dual=False, loss=loss).fit(X, y), X)
    keep = np.arange(10, y.size)
    _same(model.forget(np.arange(10)), _model(name, dual=False, loss=loss).fit(X[keep], y[keep]), X)
    assert not hasattr(model, "retained_dual_")


def test_forget_then_partial_fit_gives_the_original_back():
    X, y = heart_scale()
    original = _model("heart_scale", keep_data=True).fit(X, y)
    model = _model("heart_scale", keep_data=True).fit(X, y)
    last = np.arange(y.size - 20, y.size)
    model.forget(last).partial_fit(X[last], y[last])
    _same(model, original, X)
    np.testing.assert_allclose(model.coef_, original.coef_, rtol=1e-5, atol=1e-7)


def test_weights_and_balanced_classes_are_updated_too():
    X, y = heart_scale()
    sw = np.random.RandomState(1).uniform(0.5, 2.0, y.size)
    kw = dict(class_weight="balanced", loss="hinge")
    model = _model("heart_scale", **kw).partial_fit(X[:200], y[:200], sample_weight=sw[:200])
    model.partial_fit(X[200:], y[200:], sample_weight=sw[200:])
    _same(model, _model("heart_scale", **kw).fit(X, y, sample_weight=sw), X)


def test_classes_on_the_first_call_allow_a_later_class():
    X, y = _data("iris")
    first = y != 2
    model = _model("iris").partial_fit(X[first], y[first], classes=[0, 1, 2])
    model.partial_fit(X[~first], y[~first])
    _same(model, _model("iris").fit(np.vstack([X[first], X[~first]]), np.r_[y[first], y[~first]]), X)


def test_save_load_then_partial_fit(tmp_path):
    X, y = heart_scale()
    model = _model("heart_scale").partial_fit(X[:200], y[:200])
    svmkit.save(model, tmp_path / "m.svmkit")
    loaded = svmkit.load(tmp_path / "m.svmkit")
    np.testing.assert_array_equal(loaded.retained_dual_, model.retained_dual_)
    loaded.partial_fit(X[200:], y[200:])
    _same(loaded, _model("heart_scale").fit(X, y), X)


def test_a_plain_fit_keeps_no_rows():
    X, y = heart_scale()
    model = _model("heart_scale", keep_data=True).fit(X, y)
    model.set_params(keep_data=False).fit(X, y)
    assert not hasattr(model, "retained_X_") and not hasattr(model, "retained_dual_")


def test_errors():
    X, y = heart_scale()
    with pytest.raises(ValueError, match="keep_data=True"):
        _model("heart_scale").fit(X, y).forget([0])
    with pytest.raises(ValueError, match="keep_data=True"):
        _model("heart_scale").fit(X, y).partial_fit(X[:5], y[:5])
    model = _model("heart_scale").partial_fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[:5, :-1], y[:5])
    with pytest.raises(ValueError, match="label 7.0 is not one of the classes .*classes="):
        model.partial_fit(X[:5], np.full(5, 7.0))
    with pytest.raises(ValueError, match="out of range"):
        model.forget([100])
    with pytest.raises(ValueError, match="repeated"):
        model.forget([3, 3])
    with pytest.raises(ValueError, match="sparse|dense"):
        _model("heart_scale").partial_fit(X[:100].toarray(), y[:100]).partial_fit(X[100:], y[100:])
    assert sp.issparse(model.retained_X_) and model.retained_X_.shape[0] == 100


@pytest.mark.parametrize("params", [{"penalty": "l1", "dual": False}, {"multi_class": "crammer_singer"}],
                         ids=["l1", "crammer_singer"])
def test_solvers_without_a_warm_start_update_by_fitting_every_row_again(params):
    """-s 5 and -s 4 take no start: an update fits the rows seen from zero, equal to a fit."""
    X, y = heart_scale()
    model = svmkit.LinearSVC(random_state=0, **params).partial_fit(X[:200], y[:200]).partial_fit(X[200:], y[200:])
    whole = svmkit.LinearSVC(random_state=0, **params).fit(X, y)
    np.testing.assert_allclose(model.coef_, whole.coef_)
    np.testing.assert_array_equal(model.forget([0, 1]).predict(X), whole.fit(X[2:], y[2:]).predict(X))


@pytest.mark.parametrize("dual", [True, False])
def test_rows_of_weight_zero_are_kept(dual):
    """A row of weight 0 takes no part in the solve but stays among the rows kept."""
    X, y = heart_scale()
    sw = np.ones(y.size)
    sw[[5, 50, 230]] = 0.0
    model = _model("heart_scale", dual=dual, keep_data=True).fit(X[:200], y[:200], sample_weight=sw[:200])
    model.partial_fit(X[200:], y[200:], sample_weight=sw[200:])
    _same(model, _model("heart_scale", dual=dual).fit(X, y, sample_weight=sw), X)
    assert model.retained_X_.shape[0] == y.size


def test_the_newton_curvature_carried_through_updates_is_the_one_at_w():
    """The primal Newton's S = Σ_i e_i x̃_i x̃_iᵀ (e_i = C_i on the rows of positive loss), changed
    at each update by the rows whose e_i changed, is the sum formed anew at the model's w."""
    X, y = heart_scale()
    sw = np.random.RandomState(2).uniform(0.5, 2.0, y.size)
    sw[7] = 0.0
    model = _model("heart_scale", dual=False, keep_data=True).fit(X[:150], y[:150], sample_weight=sw[:150])
    model.partial_fit(X[150:], y[150:], sample_weight=sw[150:]).forget(np.arange(0, y.size, 9))
    (kept,) = model._newton_curvature
    Xt = np.hstack([model.retained_X_.toarray(), np.full((kept.e.size, 1), model.intercept_scaling)])
    np.testing.assert_allclose(kept.outer, (Xt.T * kept.e) @ Xt, rtol=1e-10, atol=1e-10)
    t = np.where(model.retained_y_ == model.classes_[1], 1.0, -1.0)
    margin = t * model.decision_function(model.retained_X_)
    clear = np.abs(margin - 1) > 1e-8
    c = model.C * model.retained_weight_
    np.testing.assert_allclose(kept.e[clear], np.where((margin < 1) & (c > 0), c, 0.0)[clear])
    # ∇f(0)/2 = Σ_i q_i x̃_i, q_i = −C_i t_i (every row has positive loss at w = 0)
    np.testing.assert_allclose(kept.q, -c * t)
    np.testing.assert_allclose(kept.at_zero, Xt.T @ kept.q, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", ["dense", "csr", "pattern", "unsorted"])
def test_rows_outer_is_the_sum_of_the_rows_outer_products(kind):
    from svmkit.solvers.liblinear.newton import _Rows

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 6)) * (rng.random((30, 6)) < 0.5)
    if kind == "pattern":
        X = (X != 0).astype(float)
    M = X if kind == "dense" else sp.csr_matrix(X)
    if kind == "unsorted":  # each row's columns in decreasing order
        for i in range(30):
            part = slice(M.indptr[i], M.indptr[i + 1])
            M.indices[part], M.data[part] = M.indices[part][::-1].copy(), M.data[part][::-1].copy()
        M.has_sorted_indices = False
    rows, u = np.array([0, 3, 3, 7, 29]), rng.normal(size=5)
    Xt = np.hstack([X, np.full((30, 1), 0.5)])
    np.testing.assert_allclose(_Rows(M, 0.5).outer(rows, u), (Xt[rows].T * u) @ Xt[rows], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dense", [False, True], ids=["csr", "dense"])
def test_kept_rows_grow_in_place_and_a_shallow_copy_keeps_its_own(dense):
    """partial_fit writes new rows after the kept ones in their buffers; a model sharing those
    rows (a shallow copy) that appends after the first gets its own, and neither changes."""
    import copy
    import pickle

    X, y = heart_scale()
    X = X.toarray() if dense else X
    model = _model("heart_scale").partial_fit(X[:100], y[:100])
    twin = copy.copy(model)
    model.partial_fit(X[100:200], y[100:200]).partial_fit(X[200:], y[200:])
    twin.partial_fit(X[150:170], y[150:170])
    as_array = (lambda a: a) if dense else (lambda a: a.toarray())
    full = as_array(X)
    np.testing.assert_array_equal(as_array(model.retained_X_), full)
    np.testing.assert_array_equal(as_array(twin.retained_X_), np.vstack([full[:100], full[150:170]]))
    _same(model, _model("heart_scale").fit(X, y), X)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(as_array(again.retained_X_), full)
    again.partial_fit(X[:5], y[:5])
    np.testing.assert_array_equal(as_array(model.retained_X_), full)
