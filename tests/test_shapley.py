"""Exact Shapley values (svmkit.inspection.shapley_values) against the Shapley formula written
out over all 2^d coalitions, against shap's ExactExplainer with the same background, and
efficiency, for every kernel model, both value functions, the RBF and linear kernels."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import StandardScaler

import svmkit
from svmkit.inspection import shapley_values


def _standard(X):
    return StandardScaler().fit_transform(X)


def wine():
    X, y = load_wine(return_X_y=True)
    return _standard(X[:, :6]), y


def iris():
    X, y = load_iris(return_X_y=True)
    return _standard(X), y


def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return _standard(X[::3, :8]), y[::3]


def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return _standard(X[:120, :7]), y[:120]


def diabetes_two():
    X, y = diabetes()
    return X, np.column_stack([y, np.sqrt(y)])


def public(model, X):
    """What shapley_values explains, from the model's public methods: the decision function
    (SVC's and LSSVC(multi_class='ovo')'s one-vs-one decision values for three or more classes),
    the logits, the prediction."""
    if getattr(model, "multi_class", None) == "ovo" and model.classes_.size > 2:
        return model._raw_decision(X)  # LSSVC's one-vs-one pair values, which it folds into votes
    if hasattr(model, "decision_function"):
        if isinstance(model, (svmkit.SVC, svmkit.NuSVC)) and model.classes_.size > 2:
            model.decision_function_shape = "ovo"
        return model.decision_function(X)
    return model.predict(X)


CASES = [
    ("SVC", lambda: svmkit.SVC(gamma=0.3), wine),
    ("SVC binary", lambda: svmkit.SVC(gamma=0.2, C=3.0), cancer),
    ("NuSVC", lambda: svmkit.NuSVC(nu=0.3), iris),
    ("SVR", lambda: svmkit.SVR(C=50.0, epsilon=5.0), diabetes),
    ("NuSVR", lambda: svmkit.NuSVR(C=50.0), diabetes),
    ("OneClassSVM", lambda: svmkit.OneClassSVM(nu=0.2), iris),
    ("KernelRidge", lambda: svmkit.KernelRidge(kernel="rbf", alpha=0.5, gamma=0.2), diabetes_two),
    ("LSSVC", lambda: svmkit.LSSVC(gamma=0.3), wine),
    ("LSSVC ovo", lambda: svmkit.LSSVC(gamma=0.3, multi_class="ovo"), wine),
    ("KernelRidge Nystrom", lambda: svmkit.KernelRidge(kernel="rbf", gamma=0.2, solver="nystrom", n_components=40,
                                                       random_state=0), diabetes),
    ("LSSVR", lambda: svmkit.LSSVR(gamma=0.2), diabetes),
    ("KLR", lambda: svmkit.KernelLogisticRegression(gamma=0.3), iris),
    ("KLR binary", lambda: svmkit.KernelLogisticRegression(gamma=0.2), cancer),
    ("KernelQuantileRegressor", lambda: svmkit.KernelQuantileRegressor(quantile=0.7, gamma=0.2), diabetes),
]
LINEAR = [
    ("SVC linear", lambda: svmkit.SVC(kernel="linear"), wine),
    ("SVR linear", lambda: svmkit.SVR(kernel="linear", C=10.0, epsilon=5.0), diabetes),
    ("KernelRidge linear", lambda: svmkit.KernelRidge(kernel="linear", alpha=1.0), diabetes_two),
]


@pytest.fixture(scope="module", params=CASES + LINEAR, ids=[c[0] for c in CASES + LINEAR])
def fitted(request):
    _, make, data = request.param
    X, y = data()
    return make().fit(X, y), X


def _expansion(model, X):
    """(W, b) of the explained output as a kernel expansion over the support vectors, its sign
    read from the public output: f = K(x, Z) W + b."""
    W, b = np.asarray(model._W, dtype=np.float64), np.asarray(model._intercept_, dtype=np.float64)
    f = np.asarray(public(model, X[:3])).reshape(3, -1)
    raw = model._raw_decision(X[:3])
    sign = 1.0 if np.allclose(raw, f) else -1.0
    np.testing.assert_allclose(sign * raw, f, rtol=1e-12, atol=1e-12)
    return sign * W, sign * b


def _restricted_kernel(model, x, Z, S):
    """k_S(x_S, z_S) for every centre z: the kernel on the features in S only."""
    if model.kernel == "linear":
        return Z[:, S] @ x[S]
    return np.exp(-model.gamma_ * ((Z[:, S] - x[S]) ** 2).sum(axis=1))


def brute_force(v, d):
    """φ_j = Σ_{S ⊆ N∖{j}} |S|! (d − |S| − 1)! / d! (v(S ∪ {j}) − v(S)) over all 2^d coalitions,
    v taking a boolean mask of the coalition."""
    values = {S: v(np.array(S, dtype=bool)) for S in itertools.product((False, True), repeat=d)}
    phi = np.zeros((d,) + np.shape(values[(False,) * d]))
    for S, value in values.items():
        s = sum(S)
        for j in range(d):
            if not S[j]:
                with_j = S[:j] + (True,) + S[j + 1:]
                phi[j] += math.factorial(s) * math.factorial(d - s - 1) / math.factorial(d) * (values[with_j] - value)
    return phi, values[(False,) * d]


def _interventional(model, x, B):
    return lambda S: np.asarray(public(model, np.where(S, x, B))).mean(axis=0)


def _functional(model, x, W, b, Z):
    return lambda S: _restricted_kernel(model, x, Z, S) @ W + b


def _as_outputs(a):
    """Values with an output axis last, for one or several outputs alike."""
    return a if a.ndim == 3 else a[:, :, None]


@pytest.mark.parametrize("value", ["interventional", "functional"])
def test_equals_brute_force_enumeration(fitted, value):
    model, X = fitted
    d = X.shape[1]
    rows, B = X[[0, 7, 40]], X[1::25]
    result = shapley_values(model, rows, B if value == "interventional" else None, value=value)
    W, b = _expansion(model, X)
    Z = np.asarray(model.support_vectors_)
    for r, x in enumerate(rows):
        v = _interventional(model, x, B) if value == "interventional" else _functional(model, x, W, b, Z)
        phi, empty = brute_force(v, d)
        np.testing.assert_allclose(result.values[r], phi.reshape(result.values[r].shape), rtol=0, atol=1e-10)
        np.testing.assert_allclose(result.base_values, np.reshape(empty, result.base_values.shape), rtol=0, atol=1e-10)


@pytest.mark.parametrize("value", ["interventional", "functional"])
def test_efficiency(fitted, value):
    model, X = fitted
    result = shapley_values(model, X, X[::10] if value == "interventional" else None, value=value)
    total = _as_outputs(result.values).sum(axis=1) + result.base_values
    np.testing.assert_allclose(total, np.asarray(public(model, X)).reshape(X.shape[0], -1), rtol=0, atol=1e-10)


def test_equals_shap_exact_explainer(fitted):
    shap = pytest.importorskip("shap")
    model, X = fitted
    B = X[::12]
    explainer = shap.ExactExplainer(lambda Z: public(model, Z), shap.maskers.Independent(B, max_samples=B.shape[0]))
    expected = explainer(X[:6])
    result = shapley_values(model, X[:6], B)
    np.testing.assert_allclose(result.values, expected.values, rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.broadcast_to(result.base_values, expected.base_values.shape), expected.base_values,
                               rtol=0, atol=1e-10)


def test_sparse_rows_and_background_give_the_dense_values():
    X, y = wine()
    model = svmkit.SVC(gamma=0.3).fit(sp.csr_matrix(X), y)
    dense = shapley_values(model, X[:5], X[::20])
    sparse = shapley_values(model, sp.csr_matrix(X[:5]), sp.csr_matrix(X[::20]))
    np.testing.assert_allclose(sparse.values, dense.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sparse.base_values, dense.base_values, rtol=0, atol=1e-12)


def test_per_class_sums_the_pairs_signed_toward_each_class():
    X, y = wine()
    model = svmkit.SVC(gamma=0.3, decision_function_shape="ovo").fit(X, y)
    result = shapley_values(model, X[:8], X[::15])
    per_class = result.per_class()
    dec = model.decision_function(X[:8])
    confidence = np.column_stack([dec[:, 0] + dec[:, 1], -dec[:, 0] + dec[:, 2], -dec[:, 1] - dec[:, 2]])
    np.testing.assert_allclose(per_class.values.sum(axis=1) + per_class.base_values, confidence, rtol=0, atol=1e-10)
    assert per_class.output_names == ["0", "1", "2"]
    assert result.output_names == ["0 vs 1", "0 vs 2", "1 vs 2"]
    with pytest.raises(ValueError, match="one-vs-one class pairs"):
        shapley_values(svmkit.SVR().fit(*diabetes()), diabetes()[0][:2]).per_class()


def test_default_background_is_the_centres():
    X, y = diabetes()
    model = svmkit.SVR(C=50.0, epsilon=5.0).fit(X, y)
    Z = np.asarray(model.support_vectors_)
    B = Z[np.unique(np.linspace(0, Z.shape[0] - 1, min(100, Z.shape[0])).astype(int))]
    np.testing.assert_array_equal(shapley_values(model, X[:4]).values, shapley_values(model, X[:4], B).values)


def test_one_output_has_no_output_axis_and_feature_names_are_kept():
    pd = pytest.importorskip("pandas")
    X, y = diabetes()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    result = shapley_values(svmkit.SVR().fit(frame, y), frame.iloc[:3], frame.iloc[::30])
    assert result.values.shape == (3, X.shape[1]) and result.base_values.shape == ()
    assert result.feature_names == list(frame.columns) and result.output_names is None


def test_functional_rbf_base_is_the_sum_of_coefficients_and_intercept():
    X, y = diabetes()
    model = svmkit.KernelRidge(kernel="rbf", gamma=0.2).fit(X, y)
    result = shapley_values(model, X[:2], value="functional")
    assert result.base_values == pytest.approx(float(np.sum(model.dual_coef_) + model._intercept_[0]), abs=1e-10)


@pytest.mark.parametrize("kernel", ["poly", "sigmoid", "precomputed", "callable"])
def test_kernels_that_are_not_products_name_the_reason_and_shap(kernel):
    X, y = wine()
    if kernel == "precomputed":
        model, rows = svmkit.SVC(kernel="precomputed").fit(X @ X.T, y), X[:2] @ X.T
    elif kernel == "callable":
        model, rows = svmkit.SVC(kernel=lambda A, B: (A @ B.T + 1) ** 2).fit(X, y), X[:2]
    else:
        model, rows = svmkit.SVC(kernel=kernel).fit(X, y), X[:2]
    with pytest.raises(ValueError, match="not, so no coalition's value factors.*shap package"):
        shapley_values(model, rows)


def test_bad_input_is_refused_with_clear_errors():
    X, y = wine()
    model = svmkit.SVC().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        shapley_values(model, X[:2, :4])
    with pytest.raises(ValueError, match="features"):
        shapley_values(model, X[:2], X[:5, :3])
    with pytest.raises(ValueError, match="value must be one of"):
        shapley_values(model, X[:2], value="observational")
    with pytest.raises(NotFittedError):
        shapley_values(svmkit.SVC(), X[:2])
    with pytest.raises(TypeError, match="kernel models.*not a LinearSVC"):
        shapley_values(svmkit.LinearSVC().fit(X, y), X[:2])
    with pytest.raises(ValueError, match="background has no rows"):
        shapley_values(model, X[:2], X[:0])
    with pytest.raises(ValueError, match="'functional' takes no background"):
        shapley_values(model, X[:2], X[:5], value="functional")


def test_plots_draw_a_summary_and_a_waterfall_that_ends_at_f_of_x():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from svmkit import plot

    X, y = wine()
    model = svmkit.SVC(gamma=0.3, decision_function_shape="ovo").fit(X, y)
    result = shapley_values(model, X[:30], X[::20])
    ax = plot.shapley(result, output="0 vs 1")
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == result.feature_names[
        int(np.argmax(np.abs(result.values[:, :, 0]).mean(axis=0)))]
    ax = plot.shapley(result, kind="bar", output=2, max_features=3)
    assert len(ax.patches) == 3
    ax = plot.shapley(result, kind="waterfall", row=4, output=0, max_features=4)
    assert len(ax.patches) == 5  # four features and the other two in one step
    assert ax.lines[-1].get_xdata()[0] == pytest.approx(model.decision_function(X[4:5])[0, 0], abs=1e-10)
    with pytest.raises(ValueError, match="3 outputs.*give output="):
        plot.shapley(result)
    with pytest.raises(ValueError, match="kind must be one of"):
        plot.shapley(result, kind="violin", output=0)
    for output in ("0 vs 9", 3):
        with pytest.raises(ValueError, match="not one of the 3 outputs"):
            plot.shapley(result, output=output)
    with pytest.raises(ValueError, match="row=30 is not one of the 30 rows"):
        plot.shapley(result, kind="waterfall", row=30, output=0)
    plt.close("all")


def test_centres_in_several_blocks_give_the_mean_of_the_halves_of_the_background():
    # 569 centres × 160 background rows × 12 features hold more background factors than one
    # block of the compiled loop (2^20); each half of the background fits in one
    X, y = load_breast_cancer(return_X_y=True)
    X = _standard(X[:, :12])
    model = svmkit.KernelLogisticRegression(gamma=0.1).fit(X, y)
    B = X[::3][:160]
    whole = shapley_values(model, X[:4], B)
    halves = [shapley_values(model, X[:4], part) for part in (B[:80], B[80:])]
    np.testing.assert_allclose(whole.values, (halves[0].values + halves[1].values) / 2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(whole.values.sum(axis=1) + whole.base_values, model.decision_function(X[:4]),
                               rtol=0, atol=1e-10)
