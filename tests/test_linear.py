"""LinearSVC and LinearSVR against liblinear-official (primal objective, predictions) and
scikit-learn, the primal–dual gap, sample weights, and bad input."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC as SKLinearSVC
from sklearn.svm import LinearSVR as SKLinearSVR

import svmkit
from conftest import breast_cancer, diabetes, digits, heart_scale, housing, iris

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SOLVERS = {"hinge": 3, "squared_hinge": 1, "epsilon_insensitive": 13, "squared_epsilon_insensitive": 12}


def shared_set(name, n_features):
    from sklearn.datasets import load_svmlight_file

    if not (SHARED / name).exists():
        pytest.skip(f"{SHARED / name} is absent")
    return load_svmlight_file(str(SHARED / name), n_features=n_features)


def liblinear_weights(X, y, loss, C, tol, epsilon=None):
    """{label: (w, b)} from liblinear-official with -B 1, the loss's dual solver and -e tol."""
    from liblinear.liblinearutil import parameter, problem, train

    options = f"-s {SOLVERS[loss]} -c {C} -B 1 -e {tol} -q" + (f" -p {epsilon}" if epsilon is not None else "")
    model = train(problem(np.asarray(y, dtype=float), sp.csr_matrix(X)), parameter(options))
    labels = model.get_labels() if epsilon is None else [0]
    if epsilon is None and len(labels) == 2:
        w, b = model.get_decfun(0)
        sign = 1 if labels[0] == max(labels) else -1  # liblinear's +1 is its first label
        return {max(labels): (sign * np.array(w), sign * b)}
    return {label: tuple(np.array(v) if k == 0 else v for k, v in enumerate(model.get_decfun(i)))
            for i, label in enumerate(labels)}


def primal(X, t, w, b, C, loss, epsilon=0.0):
    f = np.asarray(X @ w).ravel() + b
    r = {"hinge": np.maximum(1 - t * f, 0), "squared_hinge": np.maximum(1 - t * f, 0) ** 2,
         "epsilon_insensitive": np.maximum(np.abs(t - f) - epsilon, 0),
         "squared_epsilon_insensitive": np.maximum(np.abs(t - f) - epsilon, 0) ** 2}[loss]
    return 0.5 * (w @ w + b * b) + C * r.sum()


def _a9a():
    return shared_set("a9a", 123)


def _w8a():
    return shared_set("w8a", 300)


@pytest.mark.parametrize("data", [_a9a, _w8a, breast_cancer, digits], ids=["a9a", "w8a", "breast_cancer", "digits"])
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_linear_svc_reaches_liblinear_primal_objective(data, loss):
    X, y = data()
    C = 0.5
    ours = svmkit.LinearSVC(C=C, loss=loss, dual=True, tol=0.01, max_iter=3000, random_state=0).fit(X, y)
    theirs = liblinear_weights(X, y, loss, C, 0.01)
    positives = [ours.classes_[1]] if ours.classes_.size == 2 else list(ours.classes_)
    agree = []
    for k, label in enumerate(positives):
        w, b = theirs[label]
        t = np.where(y == label, 1.0, -1.0)
        ref = primal(X, t, w, b, C, loss)
        assert ours.objective_[k, 0] == pytest.approx(primal(X, t, ours.coef_[k], ours.intercept_[k], C, loss), rel=1e-9)
        # within 1e-3 of liblinear's, or below it where liblinear stops at its own pass limit
        # (the hinge loss on digits); the gap bounds our distance to the optimum either way
        assert ref * (1 - 1e-3) <= ours.objective_[k, 0] <= ref * (1 + 1e-3) or \
            ours.objective_[k, 0] - ours.objective_[k, 2] <= ref <= ours.objective_[k, 0] * (1 + 1e-2)
        assert 0 <= ours.objective_[k, 2] <= 1e-2 * ref
        agree.append(np.asarray(X @ w).ravel() + b)
    theirs_pred = np.array(positives)[np.argmax(np.column_stack(agree), axis=1)] if len(agree) > 1 else \
        np.where(agree[0] > 0, positives[0], ours.classes_[0])
    assert np.mean(ours.predict(X) == theirs_pred) >= 0.995


@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared_epsilon_insensitive"])
def test_linear_svr_reaches_liblinear_primal_objective(loss):
    X, y = housing()
    C, eps = 1.0, 0.5
    ours = svmkit.LinearSVR(C=C, epsilon=eps, loss=loss, dual=True, tol=1e-4, max_iter=20000,
                            random_state=0).fit(X, y)
    w, b = liblinear_weights(X, y, loss, C, 1e-4, epsilon=eps)[0]
    ref = primal(X, y, w, b, C, loss, eps)
    assert abs(ours.objective_[0] - ref) <= 1e-3 * ref
    assert ours.objective_[2] >= -1e-9 * ref
    np.testing.assert_allclose(ours.predict(X), np.asarray(X @ w).ravel() + b, atol=0.05 * np.std(y))


def test_equals_scikit_learn_linear_svc_where_options_coincide():
    X, y = heart_scale()
    X = X.toarray()
    ours = svmkit.LinearSVC(C=0.3, tol=1e-6, max_iter=100000, random_state=0).fit(X, y)
    theirs = SKLinearSVC(C=0.3, tol=1e-6, max_iter=100000, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-4)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-4)
    assert np.mean(ours.predict(X) == theirs.predict(X)) == 1.0


def test_equals_scikit_learn_linear_svr_where_options_coincide():
    X, y = diabetes()
    ours = svmkit.LinearSVR(C=0.5, epsilon=0.1, tol=1e-7, max_iter=100000, random_state=0).fit(X, y)
    theirs = SKLinearSVR(C=0.5, epsilon=0.1, tol=1e-7, max_iter=100000, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-3)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-3)


def test_tight_tolerance_closes_the_duality_gap():
    X, y = breast_cancer()
    model = svmkit.LinearSVC(C=1.0, loss="hinge", tol=1e-8, max_iter=100000, random_state=0).fit(X, y)
    p, d, gap = model.objective_[0]
    assert gap == pytest.approx(p - d) and 0 <= gap <= 1e-6 * p


@pytest.mark.parametrize("values", ["real", "binary pattern"])
def test_dense_and_sparse_input_give_the_same_model(values):
    X, y = heart_scale()
    if values == "binary pattern":
        X = (X > 0).astype(np.float64)
    sparse = svmkit.LinearSVC(dual=True, random_state=0).fit(X, y)
    dense = svmkit.LinearSVC(dual=True, random_state=0).fit(X.toarray(), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-12)
    sparse_svr = svmkit.LinearSVR(random_state=0).fit(X, y)
    dense_svr = svmkit.LinearSVR(random_state=0).fit(X.toarray(), y)
    np.testing.assert_allclose(sparse_svr.coef_, dense_svr.coef_, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("model", [
    svmkit.LinearSVC(C=0.2, dual=True, tol=1e-8, max_iter=100000, random_state=0),
    svmkit.LinearSVC(C=0.2, dual=False, tol=1e-10),
    svmkit.LinearSVC(C=0.2, penalty="l1", dual=False, tol=1e-8, max_iter=100000, random_state=0),
    svmkit.LinearSVC(C=0.2, multi_class="crammer_singer", tol=1e-8, max_iter=100000, random_state=0),
    svmkit.LinearSVR(C=0.2, epsilon=0.1, tol=1e-10, max_iter=100000, random_state=0),
    svmkit.LinearSVR(C=0.2, epsilon=0.1, loss="squared_epsilon_insensitive", dual=False, tol=1e-10),
], ids=["dual -s 1", "primal -s 2", "l1 -s 5", "crammer-singer -s 4", "dual -s 13", "primal -s 11"])
def test_integer_sample_weights_equal_repeated_rows(model):
    from sklearn.base import clone

    X, y = breast_cancer() if isinstance(model, svmkit.LinearSVC) else diabetes()
    w = np.where(np.arange(y.size) % 4 == 0, 2, 1)
    weighted = clone(model).fit(X, y, sample_weight=w)
    repeated = clone(model).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.objective_[..., 0], repeated.objective_[..., 0], rtol=1e-6)
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-4)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, atol=1e-4)


def test_random_state_fixes_the_result():
    X, y = digits()
    a, b = (svmkit.LinearSVC(random_state=3).fit(X, y) for _ in range(2))
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_hitting_max_iter_warns():
    from sklearn.exceptions import ConvergenceWarning

    X, y = breast_cancer()
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        svmkit.LinearSVC(loss="hinge", tol=1e-12, max_iter=2, random_state=0).fit(X, y)


def test_an_all_zero_row_without_intercept_goes_to_its_bound():
    X = np.array([[0.0, 0.0], [1, 2], [2, 1], [-1, -2], [-2, -1]])
    y = np.array([0, 1, 1, 0, 0])
    model = svmkit.LinearSVC(loss="hinge", fit_intercept=False, random_state=0).fit(X, y)
    assert np.isfinite(model.coef_).all()
    assert np.isfinite(svmkit.LinearSVR(fit_intercept=False, random_state=0).fit(X, y + 1.0).coef_).all()


def test_row_groups_share_a_table_entry_between_rows_with_equal_constants():
    from svmkit.solvers.liblinear.dcd import row_groups

    sign = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    upper = np.array([2.0, 2.0, 2.0, 5.0, 2.0])
    group, sign_of, upper_of = row_groups(sign, upper)
    assert group.dtype == np.int32
    assert len(set(group.tolist())) == 3
    assert group[0] == group[2] and group[1] == group[4] and group[3] not in (group[0], group[1])
    np.testing.assert_array_equal(sign_of[group], sign)
    np.testing.assert_array_equal(upper_of[group], upper)
    for varying in (sign, -sign, upper, np.array([3.0, 1.0, 2.0, 3.0, 1.0])):  # one constant varies
        group, of, constant_of = row_groups(varying, np.full(5, 0.5))
        assert len(set(group.tolist())) == len(set(varying.tolist())) == len(of)
        np.testing.assert_array_equal(of[group], varying)
        np.testing.assert_array_equal(constant_of[group], 0.5)


def test_every_row_layout_gives_the_same_dual_passes_and_weights():
    """The dual's loop compiled for each row layout (dense, CSR with float64 or float32 values and
    32- or 64-bit column numbers, a binary pattern), prefetching rows ahead of a random order,
    visits the same coordinates in the same order: equal w, α and passes."""
    from svmkit._core import linear
    from svmkit.solvers.liblinear.dcd import Stop, _tables, dcd_classify, row_groups

    X, y = heart_scale()
    X = sp.csr_matrix((np.round(X.data * 4) / 4, X.indices, X.indptr), shape=X.shape)  # float32-exact
    X.eliminate_zeros()
    t = np.where(y > 0, 1.0, -1.0)
    groups = row_groups(t, np.ones(t.size), np.zeros(t.size))
    stop = Stop(1e-4, 200, 3)
    reference = dcd_classify(X.toarray(), 1.0, groups, stop)
    indptr = X.indptr.astype(np.uint64)
    layouts = [linear.csr_rows(X.data.astype(values), X.indices.astype(columns), indptr, X.shape[1], 1.0)
               for values in (np.float64, np.float32) for columns in (np.uint32, np.uint64)]
    for rows in layouts:
        w, alpha = np.empty(X.shape[1] + 1), np.empty(X.shape[0])
        passes = linear.dcd_classify(rows, _tables(X, groups, True), stop, w, alpha)
        np.testing.assert_array_equal(w, reference[0])
        np.testing.assert_array_equal(alpha, reference[1])
        assert passes == reference[2]
    pattern = (X != 0).astype(np.float64)
    for columns in (np.uint32, np.uint64):
        rows = linear.pattern_rows(pattern.indices.astype(columns), pattern.indptr.astype(np.uint64), X.shape[1], 1.0)
        w, alpha = np.empty(X.shape[1] + 1), np.empty(X.shape[0])
        passes = linear.dcd_classify(rows, _tables(pattern, groups, True), stop, w, alpha)
        expected = dcd_classify(pattern, 1.0, groups, stop)
        np.testing.assert_array_equal(w, expected[0])
        assert passes == expected[2]


def test_impossible_rows_are_refused_by_the_core():
    from svmkit._core import linear

    with pytest.raises(ValueError, match="column 5 out of range"):
        linear.csr_rows(np.ones(2), np.array([0, 5], np.uint32), np.array([0, 1, 2], np.uint64), 3, 1.0)
    with pytest.raises(ValueError, match="indptr decreases"):
        linear.pattern_rows(np.array([0, 1], np.uint32), np.array([0, 2, 1], np.uint64), 3, 1.0)


def test_the_primal_newtons_rows_pickle_in_every_layout():
    """A cluster's worker may send a block's rows to another: they pickle as their arrays."""
    import pickle

    from svmkit.solvers.liblinear.newton import _Rows

    X, _ = heart_scale()
    v = np.linspace(-1.0, 1.0, X.shape[1] + 1)
    for layout in (X.toarray(), X, (X != 0).astype(np.float64)):
        rows = _Rows(layout, 2.0)
        copy = pickle.loads(pickle.dumps(rows))
        np.testing.assert_array_equal(copy.dot(v), rows.dot(v))
        np.testing.assert_array_equal(copy.tdot(np.arange(5), np.ones(5), v), rows.tdot(np.arange(5), np.ones(5), v))


def test_csr_values_are_stored_narrow_only_when_exact():
    from svmkit.solvers.liblinear.dcd import _parts

    binary = sp.csr_matrix(np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]))
    small = sp.csr_matrix(np.array([[2.0, 0.0, 1.0], [0.0, -1.0, 0.0]]))
    scaled = sp.csr_matrix(np.array([[0.1, 0.0, 1.0], [0.0, 1.0 / 3.0, 0.0]]))
    _, data, indices, _ = _parts(binary)
    assert data is None and indices.dtype == np.uint32
    _, data, _, _ = _parts(small)
    assert data.dtype == np.float32
    _, data, _, _ = _parts(scaled)
    assert data.dtype == np.float64
    np.testing.assert_array_equal(data, scaled.data)


# --- the primal, L1 and Crammer–Singer solvers against liblinear-official ---------------------

def liblinear_model(X, y, options):
    """liblinear-official's model for `options`, and its weights (one column per class, the
    constant feature's last; one column for two classes but with Crammer–Singer's -s 4)."""
    from liblinear.liblinearutil import parameter, problem, train

    model = train(problem(np.asarray(y, dtype=float), sp.csr_matrix(X)), parameter(options + " -q"))
    n_weights = X.shape[1] + (model.bias >= 0)
    k = 1 if model.get_labels() == [] or (model.nr_class == 2 and "-s 4" not in options) else model.nr_class
    return model, np.array([model.w[i] for i in range(n_weights * k)]).reshape(n_weights, k)


def two_class_weights(model, W, positive):
    """liblinear's two-class weights with `positive` as the +1 class (its +1 is its first label)."""
    return W[:, 0] if model.get_labels()[0] == positive else -W[:, 0]


@pytest.mark.parametrize("data", [breast_cancer, heart_scale, iris], ids=["breast_cancer", "heart_scale", "iris"])
@pytest.mark.parametrize("eps", [0.01, 0.1])
def test_primal_newton_takes_liblinear_steps(data, eps):
    """-s 2 is deterministic: at liblinear's tolerances the weights agree to rounding (on
    well-conditioned data; on digits the conjugate gradient amplifies rounding, which
    test_primal_newton_reaches_liblinear_optimum covers)."""
    X, y = data()
    ours = svmkit.LinearSVC(C=0.5, dual=False, tol=eps, intercept_scaling=2.0).fit(X, y)
    model, W = liblinear_model(X, y, f"-s 2 -c 0.5 -e {eps} -B 2")
    if ours.classes_.size == 2:
        W = two_class_weights(model, W, ours.classes_[1])[:, None]
    else:
        W = W[:, np.argsort(model.get_labels())]
    np.testing.assert_allclose(ours.coef_, W[:-1].T, rtol=1e-8, atol=1e-10 * np.abs(W).max())
    np.testing.assert_allclose(ours.intercept_, 2.0 * W[-1], rtol=1e-8, atol=1e-10 * np.abs(W).max())
    assert np.all(ours.objective_[:, 2] >= -1e-9 * ours.objective_[:, 0])


def test_primal_newton_reaches_liblinear_optimum():
    X, y = digits()
    ours = svmkit.LinearSVC(C=0.5, dual=False, tol=1e-4).fit(X, y)
    model, W = liblinear_model(X, y, "-s 2 -c 0.5 -e 1e-4 -B 1")
    W = W[:, np.argsort(model.get_labels())]
    for k, label in enumerate(ours.classes_):
        t = np.where(y == label, 1.0, -1.0)
        ref = primal(X, t, W[:-1, k], W[-1, k], 0.5, "squared_hinge")
        assert ours.objective_[k, 0] == pytest.approx(ref, rel=1e-5)
        assert 0 <= ours.objective_[k, 2] <= 1e-4 * ref
    theirs = ours.classes_[np.argmax(X @ W[:-1] + W[-1], axis=1)]
    assert np.mean(ours.predict(X) == theirs) >= 0.999


@pytest.mark.parametrize("data", [diabetes, housing], ids=["diabetes", "housing"])
def test_primal_newton_regression_takes_liblinear_steps(data):
    X, y = data()
    ours = svmkit.LinearSVR(C=2.0, epsilon=0.2, loss="squared_epsilon_insensitive", dual=False, tol=1e-3).fit(X, y)
    _, W = liblinear_model(X, y, "-s 11 -c 2 -p 0.2 -e 1e-3 -B 1")
    np.testing.assert_allclose(ours.coef_, W[:-1, 0], rtol=1e-8, atol=1e-10 * np.abs(W).max())
    np.testing.assert_allclose(ours.intercept_, W[-1], rtol=1e-8, atol=1e-10 * np.abs(W).max())
    np.testing.assert_allclose(ours.predict(X), np.asarray(X @ W[:-1, 0]).ravel() + W[-1, 0], rtol=1e-8, atol=1e-8)


def l1_objective(X, t, w, b, C):
    return np.abs(w).sum() + abs(b) + C * (np.maximum(1 - t * (np.asarray(X @ w).ravel() + b), 0) ** 2).sum()


@pytest.mark.parametrize("data", [breast_cancer, heart_scale, digits], ids=["breast_cancer", "heart_scale", "digits"])
def test_l1_penalty_reaches_liblinear_optimum(data):
    """-s 5 visits the weights in a random order: the optima agree, and so do the zeros (C
    small enough for liblinear-official to converge within its fixed 1000 passes)."""
    X, y = data()
    ours = svmkit.LinearSVC(penalty="l1", dual=False, C=0.1, tol=1e-6, max_iter=20000, random_state=0).fit(X, y)
    model, W = liblinear_model(X, y, "-s 5 -c 0.1 -e 1e-6 -B 1")
    labels = model.get_labels()
    positives = [ours.classes_[1]] if ours.classes_.size == 2 else list(ours.classes_)
    for k, label in enumerate(positives):
        w = two_class_weights(model, W, label) if len(positives) == 1 else W[:, labels.index(label)]
        t = np.where(y == label, 1.0, -1.0)
        ref = l1_objective(X, t, w[:-1], w[-1], 0.1)
        ours_value = l1_objective(X, t, ours.coef_[k], ours.intercept_[k], 0.1)
        assert ours.objective_[k, 0] == pytest.approx(ours_value, rel=1e-10)
        # liblinear's order depends on its C rand() state, which earlier fits in the process move,
        # and it may stop short of the optimum (3e-4 above ours on digits): ours is never worse
        # than it by 1e-5, and both lie near the one optimum
        assert ref * (1 - 1e-3) <= ours_value <= ref * (1 + 1e-5)
        assert np.mean((ours.coef_[k] == 0) == (w[:-1] == 0)) >= 0.95


def crammer_singer_primal(X, y_enc, W, C):
    scores = np.asarray(X @ W[:-1]) + W[-1]
    rows = np.arange(y_enc.size)
    margins = scores - scores[rows, y_enc][:, None] + 1
    margins[rows, y_enc] = 0
    return 0.5 * (W * W).sum() + C * margins.max(axis=1).sum()


@pytest.mark.parametrize("data", [iris, digits, heart_scale], ids=["iris", "digits", "heart_scale"])
def test_crammer_singer_reaches_liblinear_optimum(data):
    X, y = data()
    ours = svmkit.LinearSVC(multi_class="crammer_singer", C=0.5, tol=1e-5, max_iter=100000, random_state=0).fit(X, y)
    model, W = liblinear_model(X, y, "-s 4 -c 0.5 -e 1e-5 -B 1")
    W = W[:, np.argsort(model.get_labels())]
    y_enc = np.searchsorted(ours.classes_, y)
    ref = crammer_singer_primal(X, y_enc, W, 0.5)
    primal, dual, gap = ours.objective_[0]
    assert primal == pytest.approx(ref, rel=1e-4)
    assert dual <= ref * (1 + 1e-9) and 0 <= gap <= 1e-3 * primal
    if ours.classes_.size == 2:  # one column, w_1 − w_0, as scikit-learn
        assert ours.coef_.shape == (1, X.shape[1])
        theirs = np.where(np.asarray(X @ (W[:-1, 1] - W[:-1, 0])).ravel() + W[-1, 1] - W[-1, 0] > 0, *ours.classes_[::-1])
    else:
        theirs = ours.classes_[np.argmax(np.asarray(X @ W[:-1]) + W[-1], axis=1)]
    assert np.mean(ours.predict(X) == theirs) >= 0.99


def test_crammer_singer_with_two_classes_is_scikit_learns_difference_of_weights():
    X, y = heart_scale()
    X = X.toarray()  # scikit-learn refuses its int64 column numbers
    ours = svmkit.LinearSVC(multi_class="crammer_singer", tol=1e-6, max_iter=100000, random_state=0).fit(X, y)
    theirs = SKLinearSVC(multi_class="crammer_singer", tol=1e-6, max_iter=100000, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-3)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-3)
    assert np.array_equal(ours.predict(X), theirs.predict(X))


# --- the choice of solver, parameters and their errors as scikit-learn's ---------------------

@pytest.mark.parametrize("shape", [(50, 10), (10, 50)], ids=["tall", "wide"])
def test_dual_auto_chooses_as_scikit_learn(shape):
    from sklearn.svm._classes import _validate_dual_parameter

    from svmkit.models.linear.svm import resolve_dual

    X = np.zeros(shape)
    for loss in ["hinge", "squared_hinge", "epsilon_insensitive", "squared_epsilon_insensitive"]:
        for penalty in ["l1", "l2"]:
            for multi_class in ["ovr", "crammer_singer"]:
                for dual in ["auto", True, False]:
                    assert resolve_dual(dual, loss, penalty, multi_class, X) == \
                        _validate_dual_parameter(dual, loss, penalty, multi_class, X)


def test_default_linear_svc_converges_on_standardised_breast_cancer():
    import warnings

    X, y = breast_cancer()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = svmkit.LinearSVC().fit(X, y)
    primal = svmkit.LinearSVC(dual=False).fit(X, y)
    np.testing.assert_array_equal(ours.coef_, primal.coef_)
    assert isinstance(ours.n_iter_, int) and ours.n_iter_ < 1000
    theirs = SKLinearSVC().fit(X, y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=0.02)
    assert np.mean(ours.predict(X) == theirs.predict(X)) == 1.0


@pytest.mark.parametrize("model", [
    svmkit.LinearSVC(dual=True), svmkit.LinearSVC(loss="hinge"), svmkit.LinearSVC(dual=False),
    svmkit.LinearSVC(penalty="l1", dual=False), svmkit.LinearSVC(multi_class="crammer_singer"),
    svmkit.LinearSVR(), svmkit.LinearSVR(loss="squared_epsilon_insensitive", dual=False),
], ids=["-s 1", "-s 3", "-s 2", "-s 5", "-s 4", "-s 13", "-s 11"])
def test_every_solver_warns_at_max_iter_with_an_int_n_iter(model):
    from sklearn.base import clone
    from sklearn.exceptions import ConvergenceWarning

    X, y = digits() if isinstance(model, svmkit.LinearSVC) else diabetes()
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        fitted = clone(model).set_params(tol=1e-15, max_iter=1, random_state=0).fit(X, y)
    assert type(fitted.n_iter_) is int and fitted.n_iter_ == 1


def test_without_intercept_the_intercept_is_zero_as_scikit_learns():
    X, y = heart_scale()
    X = X.toarray()
    for model, theirs in [(svmkit.LinearSVC, SKLinearSVC), (svmkit.LinearSVR, SKLinearSVR)]:
        ours = model(fit_intercept=False, random_state=0).fit(X, y)
        assert ours.intercept_ == theirs(fit_intercept=False).fit(X, y).intercept_ == 0.0


def _error(fit):
    try:
        fit()
    except Exception as error:  # the type and message are what is compared
        return type(error).__name__, str(error).replace("LinearSVC", "?").replace("LinearSVR", "?")
    return None


@pytest.mark.parametrize("params", [
    {"C": -1.0}, {"C": 0}, {"tol": 0}, {"loss": "log"}, {"penalty": "l3"}, {"dual": "yes"}, {"max_iter": -1},
    {"max_iter": 1.5}, {"multi_class": "ovo"}, {"intercept_scaling": 0}, {"class_weight": "even"},
    {"fit_intercept": 1}, {"C": -1, "tol": -1, "loss": "log"}, {"verbose": "loud"}, {"random_state": "x"},
    {"penalty": "l1", "loss": "hinge"}, {"penalty": "l1", "dual": True}, {"loss": "hinge", "dual": False},
    {"penalty": "l1", "loss": "hinge", "multi_class": "crammer_singer"},
])
def test_linear_svc_parameter_errors_are_scikit_learns(params):
    X, y = heart_scale()
    X = X.toarray()
    ours = _error(lambda: svmkit.LinearSVC(**params).fit(X, y))
    assert ours is not None or "crammer_singer" in params.values()
    assert ours == _error(lambda: SKLinearSVC(**params).fit(X, y))


@pytest.mark.parametrize("params", [
    {"C": -1.0}, {"epsilon": "wide"}, {"loss": "hinge"}, {"dual": None}, {"max_iter": -2},
    {"loss": "epsilon_insensitive", "dual": False}, {"intercept_scaling": -1.0},
])
def test_linear_svr_parameter_errors_are_scikit_learns(params):
    X, y = diabetes()
    ours = _error(lambda: svmkit.LinearSVR(**params).fit(X, y))
    assert ours is not None and ours == _error(lambda: SKLinearSVR(**params).fit(X, y))


def test_a_combination_error_comes_after_the_data_checks_as_in_scikit_learn():
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = heart_scale()
    bad = {"penalty": "l1", "loss": "hinge"}
    with pytest.raises(ValueError, match="Found input variables with inconsistent numbers"):
        svmkit.LinearSVC(**bad).fit(X, y[:-1])
    with pytest.raises(InvalidParameterError, match="'C' parameter of LinearSVC"):
        svmkit.LinearSVC(C=-1, **bad).fit(X, y[:-1])
    with pytest.raises(ValueError, match="not supported"):
        svmkit.LinearSVC(**bad).fit(X, y)


def test_max_iter_zero_is_no_pass_and_a_warning_as_in_scikit_learn():
    from sklearn.exceptions import ConvergenceWarning

    X, y = heart_scale()
    with pytest.warns(ConvergenceWarning):
        model = svmkit.LinearSVC(dual=True, max_iter=0).fit(X, y)
    assert model.n_iter_ == 0 and not model.coef_.any()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -0.5])
def test_a_non_finite_or_negative_epsilon_is_refused_by_name(value):
    X, y = diabetes()
    with pytest.raises(ValueError, match="epsilon"):
        svmkit.LinearSVR(epsilon=value).fit(X, y)


@pytest.mark.parametrize("model", [svmkit.LinearSVC(dual=False), svmkit.LinearSVC(penalty="l1", dual=False),
                                   svmkit.LinearSVC(multi_class="crammer_singer"),
                                   svmkit.LinearSVR(loss="squared_epsilon_insensitive", dual=False)],
                         ids=["-s 2", "-s 5", "-s 4", "-s 11"])
def test_dense_and_every_sparse_layout_give_the_same_model_for_the_new_solvers(model):
    from sklearn.base import clone

    X, y = heart_scale()
    dense = clone(model).set_params(random_state=0).fit(X.toarray(), y)
    for layout in ["csr", "csc", "coo"]:
        sparse = clone(model).set_params(random_state=0).fit(X.asformat(layout), y)
        np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("solver, model", [
    (2, svmkit.LinearSVC(dual=False, fit_intercept=False, tol=0.01)),
    (5, svmkit.LinearSVC(penalty="l1", dual=False, fit_intercept=False, C=0.1, tol=1e-6, max_iter=20000,
                         random_state=0)),
    (4, svmkit.LinearSVC(multi_class="crammer_singer", fit_intercept=False, tol=1e-6, max_iter=100000,
                         random_state=0)),
])
def test_without_intercept_each_solver_matches_liblinear_without_bias(solver, model):
    X, y = breast_cancer()
    model.fit(X, y)
    liblinear, W = liblinear_model(X, y, f"-s {solver} -c {model.C} -e {model.tol}")
    w = W[:, 1] - W[:, 0] if solver == 4 else two_class_weights(liblinear, W, model.classes_[1])
    assert model.intercept_ == 0.0 and model.coef_.shape == (1, X.shape[1])
    rtol = 1e-8 if solver == 2 else 1e-3
    np.testing.assert_allclose(model.coef_[0], w, rtol=rtol, atol=rtol * np.abs(w).max())

