"""Swapping a scikit-learn import for svmkit's changes nothing a user sees: defaults, output
dtypes and fitted attribute shapes as scikit-learn's."""

import numpy as np
import pytest
import sklearn.kernel_ridge
import sklearn.svm
from sklearn.base import is_classifier

import svmkit
from conftest import diabetes


def test_kernel_ridge_defaults_to_scikit_learns_linear_kernel():
    X, y = diabetes()
    ours, theirs = svmkit.KernelRidge().fit(X, y), sklearn.kernel_ridge.KernelRidge().fit(X, y)
    assert ours.kernel == theirs.kernel == "linear"
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("x_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("y_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("predict_dtype", [np.float32, np.float64])
def test_kernel_ridge_predicts_in_scikit_learns_dtype(x_dtype, y_dtype, predict_dtype):
    X, y = diabetes()
    ours = svmkit.KernelRidge(kernel="rbf", gamma=0.5).fit(X.astype(x_dtype), y.astype(y_dtype))
    theirs = sklearn.kernel_ridge.KernelRidge(kernel="rbf", gamma=0.5).fit(X.astype(x_dtype), y.astype(y_dtype))
    Xp = X.astype(predict_dtype)
    assert ours.predict(Xp).dtype == theirs.predict(Xp).dtype
    np.testing.assert_allclose(ours.predict(Xp), theirs.predict(Xp), rtol=1e-4, atol=1e-4)


def test_kernel_ridge_keeps_float32_prediction_through_save_and_load(tmp_path):
    X, y = diabetes()
    model = svmkit.KernelRidge().fit(X.astype(np.float32), y.astype(np.float32))
    svmkit.save(model, tmp_path / "ridge.svmkit")
    assert svmkit.load(tmp_path / "ridge.svmkit").predict(X.astype(np.float32)).dtype == np.float32


def test_one_class_offset_has_scikit_learns_shape():
    X, _ = diabetes()
    ours, theirs = svmkit.OneClassSVM(nu=0.2).fit(X), sklearn.svm.OneClassSVM(nu=0.2).fit(X)
    assert ours.offset_.shape == theirs.offset_.shape == (1,)
    np.testing.assert_allclose(ours.score_samples(X) - ours.offset_, ours.decision_function(X))


def test_more_nystrom_centres_than_rows_warns_and_takes_every_row():
    X, y = diabetes()
    X, y = X[:60], y[:60]
    with pytest.warns(UserWarning, match="n_components=2000 is larger than the number of samples"):
        model = svmkit.KernelRidge(kernel="rbf", gamma=0.5, solver="nystrom", n_components=2000).fit(X, y)
    exact = svmkit.KernelRidge(kernel="rbf", gamma=0.5, solver="cholesky").fit(X, y)
    assert model.support_.size == 60
    np.testing.assert_allclose(model.predict(X), exact.predict(X), rtol=1e-6, atol=1e-6)


_BAD = {"C": -1.0, "tol": -1.0, "kernel": "cubic", "degree": -2, "gamma": -1.0, "coef0": "a", "cache_size": -5,
        "max_iter": 1.5, "nu": 2.0, "epsilon": -0.1, "shrinking": "yes", "probability": 3,
        "decision_function_shape": "x", "break_ties": "no", "alpha": -1.0, "verbose": "loud",
        "class_weight": "even", "random_state": "r", "loss": "l3", "penalty": "l3", "dual": "maybe",
        "multi_class": "x", "fit_intercept": 2, "intercept_scaling": -1}


@pytest.mark.parametrize("theirs, ours", [(sklearn.svm.SVC, svmkit.SVC), (sklearn.svm.NuSVC, svmkit.NuSVC),
                                          (sklearn.svm.SVR, svmkit.SVR), (sklearn.svm.NuSVR, svmkit.NuSVR),
                                          (sklearn.svm.OneClassSVM, svmkit.OneClassSVM),
                                          (sklearn.kernel_ridge.KernelRidge, svmkit.KernelRidge),
                                          (sklearn.svm.LinearSVC, svmkit.LinearSVC),
                                          (sklearn.svm.LinearSVR, svmkit.LinearSVR)])
def test_bad_parameters_raise_scikit_learns_error_in_its_order(theirs, ours):
    """Every pair of bad parameters: where scikit-learn raises InvalidParameterError naming one,
    svmkit raises it naming the same one."""
    import itertools

    from sklearn.datasets import load_iris
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = load_iris(return_X_y=True)
    names = [n for n in _BAD if n in theirs().get_params() and n in ours().get_params()]
    checked = 0
    for pair in itertools.chain(((n,) for n in names), itertools.combinations(names, 2)):
        params = {n: _BAD[n] for n in pair}
        with pytest.raises(Exception) as expected:
            theirs(**params).fit(X, y)
        if not isinstance(expected.value, InvalidParameterError):
            continue
        named = str(expected.value).split("'")[1]
        with pytest.raises(InvalidParameterError, match=named):
            ours(**params).fit(X, y)
        checked += 1
    assert checked >= len(names)


def test_svr_with_infinite_c_predicts_as_a_huge_c():
    X, y = diabetes()
    X, y = X[:80], y[:80]
    hard = svmkit.SVR(C=np.inf, gamma=1.0).fit(X, y)
    huge = svmkit.SVR(C=1e10, gamma=1.0).fit(X, y)
    np.testing.assert_allclose(hard.predict(X), huge.predict(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("fmt", ["csc", "coo", "lil", "dok", "bsr"])
@pytest.mark.parametrize("est", [svmkit.SVC(), svmkit.KernelRidge(kernel="rbf"), svmkit.LinearSVC()])
def test_every_scipy_sparse_format_fits_and_predicts_as_csr(fmt, est):
    import scipy.sparse as sp

    from conftest import heart_scale

    X, y = heart_scale()
    X = sp.csr_matrix(X)
    other = X.asformat(fmt)
    ours = type(est)(**est.get_params()).fit(other, y)
    csr = type(est)(**est.get_params()).fit(X, y)
    np.testing.assert_array_equal(ours.predict(other), csr.predict(X))


_TEXTS = ["A A", "A", "B", "B B", "A B"]
_COUNTS = np.array([[2, 0], [1, 0], [0, 1], [0, 2], [1, 1]])  # each text's count of A and of B
_LABELS = np.array([1, 1, 2, 2, 1])


def _count_kernel(A, B):
    """<counts(a), counts(b)> of texts: the linear kernel of their counts of A and B."""
    assert all(isinstance(a, str) for a in A) and all(isinstance(b, str) for b in B)
    return np.array([[a.count("A") * b.count("A") + a.count("B") * b.count("B") for b in B] for a in A], float)


@pytest.mark.parametrize("est", [svmkit.SVC, svmkit.NuSVC, svmkit.SVR, svmkit.NuSVR, svmkit.OneClassSVM,
                                 svmkit.KernelRidge, svmkit.LSSVC, svmkit.KernelLogisticRegression])
def test_callable_kernel_receives_text_as_given_and_equals_the_linear_kernel_of_counts(est):
    on_text = est(kernel=_count_kernel).fit(_TEXTS, _LABELS)
    on_counts = est(kernel="linear").fit(_COUNTS, _LABELS)
    ours = getattr(on_text, "decision_function", on_text.predict)
    theirs = getattr(on_counts, "decision_function", on_counts.predict)
    np.testing.assert_allclose(ours(_TEXTS), theirs(_COUNTS), atol=1e-12)
    np.testing.assert_array_equal(on_text.predict(_TEXTS), on_counts.predict(_COUNTS))
    assert all(isinstance(sv, str) for sv in getattr(on_text, "support_vectors_", []))


@pytest.mark.parametrize("est", [svmkit.SVC, svmkit.SVR])
def test_callable_kernel_decision_on_text_equals_scikit_learns(est):
    ours = est(kernel=_count_kernel).fit(_TEXTS, _LABELS)
    theirs = getattr(sklearn.svm, est.__name__)(kernel=_count_kernel).fit(_TEXTS, _LABELS)
    decision = "decision_function" if est is svmkit.SVC else "predict"
    np.testing.assert_allclose(getattr(ours, decision)(_TEXTS), getattr(theirs, decision)(_TEXTS), atol=1e-6)


def test_callable_kernel_gets_a_list_as_the_list_it_was_given():
    seen = []

    def kernel(A, B):
        seen.append((type(A), type(B)))
        return np.asarray(A, float) @ np.asarray(B, float).T

    rows = _COUNTS.tolist()
    svmkit.SVC(kernel=kernel).fit(rows, _LABELS).predict(rows)
    assert seen and all(types == (list, list) for types in seen)


def test_callable_kernel_of_the_wrong_shape_on_text_is_a_value_error_at_fit_and_predict():
    with pytest.raises(ValueError, match=r"returned shape \(2, 2\) for 5 and 5 rows"):
        svmkit.SVC(kernel=lambda A, B: np.zeros((2, 2))).fit(_TEXTS, _LABELS)
    calls = []

    def once_right(A, B):
        calls.append(1)
        K = _count_kernel(A, B)
        return K if len(calls) < 50 else K[:, :1]

    model = svmkit.SVC(kernel=once_right).fit(_TEXTS, _LABELS)
    calls.extend([1] * 50)
    with pytest.raises(ValueError, match="returned shape"):
        model.predict(_TEXTS)


def test_text_without_a_callable_kernel_is_refused():
    with pytest.raises(ValueError, match="strings"):
        svmkit.SVC().fit(np.array(_TEXTS)[:, None], _LABELS)


PANDAS_PAIRS = [(svmkit.SVC(), sklearn.svm.SVC()), (svmkit.SVR(), sklearn.svm.SVR()),
                (svmkit.LinearSVC(), sklearn.svm.LinearSVC()),
                (svmkit.KernelRidge(kernel="rbf"), sklearn.kernel_ridge.KernelRidge(kernel="rbf"))]


@pytest.mark.parametrize("ours, theirs", PANDAS_PAIRS, ids=[type(o).__name__ for o, _ in PANDAS_PAIRS])
def test_a_pandas_dataframe_keeps_its_column_names_as_scikit_learn_does(ours, theirs):
    """feature_names_in_ from the columns; a NumPy array at predict warns, and other columns
    are refused, with scikit-learn's messages."""
    pandas = pytest.importorskip("pandas")
    X, y = diabetes()
    frame = pandas.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    target = (y > np.median(y)).astype(int) if is_classifier(theirs) else y
    ours, theirs = ours.fit(frame, target), theirs.fit(frame, target)
    np.testing.assert_array_equal(ours.feature_names_in_, theirs.feature_names_in_)
    with pytest.warns(UserWarning, match=f"X does not have valid feature names, but {type(theirs).__name__}"):
        ours.predict(X)
    with pytest.raises(ValueError, match="The feature names should match those that were passed during fit"):
        ours.predict(frame.rename(columns={"x0": "age"}))
