"""SVC: hard margin against a general QP solver, bad input, scikit-learn's estimator contract."""


import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

import svmkit
from conftest import digits, heart_scale, iris


def _separable(seed=0, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)
    X += 0.4 * y[:, None] * np.array([1.0, 0.5])
    return X, y


def _max_margin_qp(X, y):
    """min ½||w||² s.t. y_i (w·x_i + b) ≥ 1, by SLSQP on the primal."""
    d = X.shape[1]
    cons = {"type": "ineq", "fun": lambda v: y * (X @ v[:d] + v[d]) - 1,
            "jac": lambda v: y[:, None] * np.c_[X, np.ones(len(y))]}
    res = minimize(lambda v: 0.5 * v[:d] @ v[:d], np.zeros(d + 1), jac=lambda v: np.r_[v[:d], 0.0],
                   constraints=[cons], method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
    return res.x[:d], res.x[d]


def test_hard_margin_matches_max_margin_qp():
    X, y = _separable()
    m = svmkit.SVC(C=np.inf, kernel="linear", tol=1e-8).fit(X, y)
    w, b = _max_margin_qp(X, y)
    np.testing.assert_allclose(m.coef_[0], w, atol=1e-4)
    assert m.intercept_[0] == pytest.approx(b, abs=1e-4)
    margins = y * m.decision_function(X)
    assert margins.min() == pytest.approx(1.0, abs=1e-4)
    assert m.bounded_support_.size == 0


def test_hard_margin_on_overlapping_classes_raises_not_separable():
    X, y = _separable()
    X = np.vstack([X, X[:1] * 0.5 + X[1:2] * 0.5, X[:1]])
    y = np.r_[y, -y[0], -y[0]]
    with pytest.raises(svmkit.NotSeparableError, match="not separable"):
        svmkit.SVC(C=np.inf, kernel="linear").fit(X, y)


def test_hard_margin_rbf_separates_any_distinct_points():
    X, y = heart_scale()
    m = svmkit.SVC(C=np.inf, gamma=1.0).fit(X, y)
    assert np.all(m.predict(X) == y)


@pytest.mark.parametrize("bad, match", [
    (dict(C=0), "C must be > 0"),
    (dict(C=-1.0), "C must be > 0"),
    (dict(gamma=-0.5), "gamma must be non-negative"),
    (dict(gamma="wide"), "gamma must be"),
    (dict(kernel="cubic"), "kernel must be one of"),
    (dict(tol=0), "tol must be > 0"),
    (dict(decision_function_shape="ova"), "decision_function_shape"),
    (dict(class_weight="auto"), "class_weight"),
    (dict(class_weight={7: 2.0}), "not in y"),
    (dict(max_iter=0), "max_iter"),
    (dict(degree=-1, kernel="poly"), "degree"),
])
def test_bad_parameter_names_the_parameter(bad, match):
    X, y = iris()
    with pytest.raises(ValueError, match=match):
        svmkit.SVC(**bad).fit(X, y)


def test_nan_and_inf_name_the_row():
    X, y = iris()
    X = X.copy()
    X[17, 2] = np.nan
    with pytest.raises(ValueError, match="NaN at row 17, column 2"):
        svmkit.SVC().fit(X, y)
    X[17, 2] = np.inf
    with pytest.raises(ValueError, match="infinity at row 17"):
        svmkit.SVC().fit(sp.csr_matrix(X), y)


def test_bad_shapes_and_weights_raise_value_error():
    X, y = iris()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        svmkit.SVC().fit(X, y[:-1])
    with pytest.raises(ValueError, match="1 class"):
        svmkit.SVC().fit(X[:40], y[:40])
    with pytest.raises(ValueError, match="sample_weight"):
        svmkit.SVC().fit(X, y, sample_weight=np.ones(10))
    with pytest.raises(ValueError, match="sample_weight"):
        svmkit.SVC().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="square"):
        svmkit.SVC(kernel="precomputed").fit(X, y)
    m = svmkit.SVC(kernel="precomputed").fit(X @ X.T, y)
    with pytest.raises(ValueError, match="150"):
        m.predict(X[:5] @ X[:20].T)


def test_max_iter_stops_early_with_convergence_warning():
    X, y = heart_scale()
    with pytest.warns(ConvergenceWarning):
        m = svmkit.SVC(max_iter=5).fit(X, y)
    assert m.n_iter_[0] == 5


def test_class_weight_and_sample_weight_scale_the_bounds():
    X, y = heart_scale()
    a = svmkit.SVC(class_weight={1.0: 3.0}).fit(X, y)
    b = svmkit.SVC().fit(X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-3)
    balanced = svmkit.SVC(class_weight="balanced").fit(X, y)
    np.testing.assert_allclose(balanced.class_weight_, 270 / (2 * np.bincount((y > 0).astype(int))))


@pytest.mark.parametrize("Model", [svmkit.SVC, svmkit.NuSVC])
def test_same_alpha_whichever_way_the_kernel_arrives(Model):
    """Built-in linear, a callable and a precomputed Gram matrix are one problem: same α, b."""
    X, y = iris()
    ref = Model(kernel="linear").fit(X, y)
    for other in (Model(kernel=lambda A, B: A @ B.T).fit(X, y), Model(kernel="precomputed").fit(X @ X.T, y)):
        np.testing.assert_array_equal(other.support_, ref.support_)
        np.testing.assert_allclose(other.dual_coef_, ref.dual_coef_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(other.intercept_, ref.intercept_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_values_overflowing_float64_raise_naming_the_row(kernel):
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1e300, 1e300], [2.0, 2.0]])
    with pytest.raises(ValueError, match="X row 2 has values too large"):
        svmkit.SVC(kernel=kernel).fit(X, [0, 1, 1, 0])


def test_non_finite_dual_raises_instead_of_an_empty_model():
    K = np.full((4, 4), 1e300)
    with pytest.raises(ValueError, match="not finite"):
        svmkit.SVC(kernel="precomputed").fit(K, [0, 1, 1, 0])


def test_coef_is_read_only():
    X, y = iris()
    for est in (svmkit.SVC(kernel="linear").fit(X, y), svmkit.SVC(kernel="linear").fit(X, y == 0),
                svmkit.SVR(kernel="linear").fit(X, y)):
        with pytest.raises(ValueError, match="read-only"):
            est.coef_[0, 0] = 1.0


def test_sparse_and_dense_fits_agree():
    X, y = heart_scale()
    a = svmkit.SVC().fit(X, y)
    b = svmkit.SVC().fit(X.toarray(), y)
    assert sp.issparse(a.support_vectors_)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X.toarray()), atol=1e-6)


def test_break_ties_predicts_as_scikit_learn():
    """With break_ties, a vote tie goes to the best one-vs-rest score; digits at a small C has
    ties, where the plain vote would pick the lowest class."""
    from sklearn.svm import SVC as SkSVC

    X, y = digits()
    ours = svmkit.SVC(C=0.05, gamma=0.02, break_ties=True).fit(X, y)
    theirs = SkSVC(C=0.05, gamma=0.02, break_ties=True).fit(X, y)
    plain = svmkit.SVC(C=0.05, gamma=0.02).fit(X, y)
    assert np.mean(ours.predict(X) == theirs.predict(X)) >= 0.999
    assert np.any(ours.predict(X) != plain.predict(X))


def test_very_sparse_data_trains_through_the_sparse_scatter():
    from conftest import very_sparse
    from svmkit.kernels.gram import TRAIN_OVERLAP, column_overlap

    X, y = very_sparse()
    assert column_overlap(X) < TRAIN_OVERLAP
    # solved tightly: at tol 1e-3 the two kernels' rounding may lead the solver to different
    # points of the tolerance's neighbourhood
    dense = svmkit.SVC(gamma=0.5, tol=1e-8).fit(X.toarray(), y)
    sparse = svmkit.SVC(gamma=0.5, tol=1e-8).fit(X, y)
    np.testing.assert_allclose(sparse.objective_, dense.objective_, rtol=1e-6)
    np.testing.assert_allclose(sparse.decision_function(X), dense.decision_function(X.toarray()), atol=1e-5)


def test_sparse_prediction_splits_frequent_features_to_blas_and_matches_dense():
    """Two features in every row, the rest rare: prediction runs BLAS on the two, the scatter on the rest."""
    from svmkit.kernels.gram import DENSE_COLUMN_FRACTION, SparseColumns

    rng = np.random.default_rng(4)
    rare = sp.random(500, 300, density=0.02, format="csr", random_state=5)
    X = sp.hstack([sp.csr_matrix(rng.normal(size=(500, 2))), rare], format="csr")
    y = np.where(X[:, 0].toarray().ravel() + rare.sum(axis=1).A1 > 0.3, 1, -1)
    model = svmkit.SVC(gamma=0.2).fit(X, y)
    split = model._predict_centres.rows.split
    assert isinstance(split, SparseColumns)
    assert split.dense_cols.tolist() == [0, 1] and DENSE_COLUMN_FRACTION < 1
    np.testing.assert_allclose(model.decision_function(X), model.decision_function(X.toarray()), atol=1e-10)


def test_multiclass_ovr_decision_function_equals_scikit_learns():
    """scikit-learn derives its one-vs-rest scores from the one-vs-one decisions (votes plus
    squashed confidences); the same pairs and intercepts must give the same scores."""
    from sklearn.svm import SVC as SkSVC

    X, y = iris()
    ours = svmkit.SVC(C=3.0, gamma=0.5).fit(X, y)
    theirs = SkSVC(C=3.0, gamma=0.5).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-3)
