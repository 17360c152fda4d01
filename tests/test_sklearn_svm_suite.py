"""The behaviours where scikit-learn's own sklearn/svm/tests/test_svm.py, with svmkit swapped
in, found svmkit different (issue 53): each now matches, or differs on purpose and says why."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.svm
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

import svmkit
from conftest import iris

#: scikit-learn's test_svm.py's toy data.
X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype=float)
Y = np.array([1, 1, 1, 2, 2, 2])


@pytest.mark.parametrize("Model", [svmkit.SVC, svmkit.NuSVC])
def test_break_ties_with_ovo_is_refused_before_x_is_read(Model):
    """test_svc_invalid_break_ties_param: predict(y) (1-D, not an X) names break_ties first."""
    Xb, yb = make_blobs(random_state=0)
    model = Model(kernel="linear", decision_function_shape="ovo", break_ties=True, random_state=0).fit(Xb, yb)
    with pytest.raises(ValueError, match="break_ties must be False"):
        model.predict(yb)


def test_overflowing_data_is_reported_with_scikit_learns_words_and_the_row():
    """test_svc_nonfinite_params: scikit-learn solves, then says the dual coefficients or
    intercepts are not finite. svmkit checks the data before solving; its message starts with
    the same words and then names the row and the fix."""
    rng = np.random.RandomState(0)
    Xf = np.finfo(np.float64).max * rng.uniform(size=(10, 2))
    yf = rng.randint(0, 2, size=10)
    with pytest.raises(ValueError, match=r"^The dual coefficients or intercepts are not finite: X row 0 has values "
                                         r"too large for the kernel .*scale the data"):
        svmkit.SVC().fit(Xf, yf)


def test_liblinear_convergence_warning_has_scikit_learns_words_at_the_users_line():
    """test_linear_svm_convergence_warnings, and the README's LinearSVC(loss="hinge"), whose
    warning pointed at src/svmkit/models/linear/svm.py."""
    for model, (Xw, yw) in ((svmkit.LinearSVC(max_iter=2, random_state=0), (X, Y)),
                            (svmkit.LinearSVR(max_iter=2, random_state=0), iris()),
                            (svmkit.LinearSVC(loss="hinge", max_iter=3, random_state=0), iris())):
        with pytest.warns(ConvergenceWarning, match=r"^Liblinear failed to converge, increase the number of "
                                                    r"iterations\.") as record:
            model.fit(Xw, yw)
        assert record[0].filename == __file__
        assert model.n_iter_ == model.max_iter


def test_libsvm_convergence_warning_has_scikit_learns_words_at_the_users_line():
    """test_libsvm_convergence_warnings: scikit-learn's two spaces after the first sentence too."""
    with pytest.warns(ConvergenceWarning, match=r"^Solver terminated early \(max_iter=2\).  Consider pre-processing "
                                                r"your data with StandardScaler or MinMaxScaler.") as record:
        svmkit.SVC(kernel=lambda a, b: a @ b.T, max_iter=2).fit(X, Y)
    assert record[0].filename == __file__


def test_predict_proba_without_probability_names_probability_true():
    model = svmkit.SVC().fit(X, Y)
    assert not hasattr(model, "predict_proba") and not hasattr(model, "predict_log_proba")
    with pytest.raises(AttributeError, match=r"^This 'SVC' has no attribute 'predict_proba': probabilities need "
                                             r"probability=True at fit, e\.g\. SVC\(probability=True\)\.fit\(X, y\)"):
        model.predict_proba(X)
    assert hasattr(svmkit.SVC(probability=True).fit(X, Y), "predict_proba")


def test_sparse_input_of_any_format_predicts_as_its_dense_twin():
    """test_bad_input: scikit-learn refuses a sparse X (lil here) at predict after a dense fit,
    because LIBSVM's dense and sparse builds are separate models. svmkit's kernels take dense
    or sparse rows at fit and at predict alike, so it accepts it on purpose, with the dense
    twin's answer; a lil X is converted to CSR as scikit-learn converts it at fit."""
    Xi, yi = iris()
    dense = svmkit.SVC().fit(Xi, yi)
    np.testing.assert_array_equal(dense.predict(sp.lil_matrix(Xi)), dense.predict(Xi))
    from_lil = svmkit.SVC().fit(sp.lil_matrix(Xi), yi)
    np.testing.assert_allclose(from_lil.decision_function(Xi), dense.decision_function(Xi), rtol=1e-12, atol=1e-12)
    theirs = sklearn.svm.SVC().fit(sp.lil_matrix(Xi), yi)
    np.testing.assert_array_equal(from_lil.support_, theirs.support_)


def test_svr_callable_of_the_wrong_shape_is_named_at_fit_and_at_predict():
    """test_svr_errors: scikit-learn fits a kernel that returns [[1.0]] for any input and
    fails at predict. svmkit checks the shape at every call, so the same kernel fails at fit,
    where it is first wrong, naming the shape it needs; one that turns wrong only at predict
    fails there."""
    Xs, ys = [[0.0], [1.0]], [0.0, 0.5]
    with pytest.raises(ValueError, match=r"returned shape \(1, 1\) for 2 and 2 rows; it must return K\(A, B\) of "
                                         r"shape \(2, 2\)"):
        svmkit.SVR(kernel=lambda a, b: np.array([[1.0]])).fit(Xs, ys)

    def right_on_training_only(a, b):
        return np.asarray(a) @ np.asarray(b).T if len(a) == len(b) == 2 else np.array([[1.0]])

    model = svmkit.SVR(kernel=right_on_training_only).fit(Xs, ys)
    with pytest.raises(ValueError, match=r"returned shape \(1, 1\) for 3 and \d+ rows"):
        model.predict([[0.0], [1.0], [2.0]])


def test_a_callable_kernel_meets_the_support_vectors_at_predict():
    """test_custom_kernel_not_array_input: its string kernel fills only the upper triangle of
    K(A, B), right only when A and B are the same list. scikit-learn predicts with
    kernel(X, X_train), so it scores 1.0 there; svmkit calls kernel(X, support_vectors_) (it
    keeps and saves only the support vectors) and scores 0.8. That is the one difference, on
    purpose: a kernel that is a function of each pair gives scikit-learn's predictions."""
    data = ["A A", "A", "B", "B B", "A B"]
    y = np.array([1, 1, 2, 2, 1])
    seen = []

    def upper_triangle(A, B):  # scikit-learn's string_kernel
        seen.append((list(A), list(B)))
        K = np.zeros((len(A), len(B)))
        for i in range(len(A)):
            for j in range(i, len(B)):
                K[i, j] = A[i].count("A") * B[j].count("A") + A[i].count("B") * B[j].count("B")
                K[j, i] = K[i, j]
        return K

    def each_pair(A, B):
        return np.array([[a.count("A") * b.count("A") + a.count("B") * b.count("B") for b in B] for a in A], float)

    model = svmkit.SVC(kernel=upper_triangle).fit(data, y)
    seen.clear()
    assert model.score(data, y) == 0.8 and sklearn.svm.SVC(kernel=upper_triangle).fit(data, y).score(data, y) == 1.0
    assert seen[0] == (data, list(model.support_vectors_)) and len(model.support_vectors_) < len(data)
    ours, theirs = svmkit.SVC(kernel=each_pair).fit(data, y), sklearn.svm.SVC(kernel=each_pair).fit(data, y)
    np.testing.assert_allclose(ours.decision_function(data), theirs.decision_function(data), atol=1e-9)
    assert ours.score(data, y) == theirs.score(data, y) == 1.0


def test_nu_svc_ignores_class_weight_as_scikit_learn_and_libsvm_with_a_warning():
    """LIBSVM's svm-train -s 1 -w1 3 and scikit-learn's NuSVC(class_weight=...) leave the
    model unchanged (class weights scale C, which nu-SVC has none of); svmkit weighed each
    row's bound, giving other support vectors. It now gives theirs, and says so; a weighted
    nu-SVC is still there through sample_weight."""
    from sklearn.datasets import make_classification
    from sklearn.utils.class_weight import compute_sample_weight

    Xc, yc = make_classification(200, 5, random_state=0)
    plain = svmkit.NuSVC().fit(Xc, yc)
    with pytest.warns(UserWarning, match="NuSVC ignores class_weight, as scikit-learn's NuSVC and LIBSVM's "
                                         "svm-train -s 1 do") as record:
        weighted = svmkit.NuSVC(class_weight={1: 1.5}).fit(Xc, yc)
    assert record[0].filename == __file__
    theirs = sklearn.svm.NuSVC(class_weight={1: 1.5}).fit(Xc, yc)
    np.testing.assert_array_equal(weighted.support_, plain.support_)
    np.testing.assert_array_equal(weighted.support_, theirs.support_)
    np.testing.assert_allclose(weighted.decision_function(Xc), theirs.decision_function(Xc), atol=1e-6)
    np.testing.assert_array_equal(weighted.class_weight_, theirs.class_weight_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        by_rows = svmkit.NuSVC().fit(Xc, yc, sample_weight=compute_sample_weight({0: 1.0, 1: 1.5}, yc))
    assert not np.array_equal(by_rows.support_, plain.support_)
