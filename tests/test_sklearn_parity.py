"""Swapping a scikit-learn import for svmkit's changes nothing a user sees: defaults, output
dtypes and fitted attribute shapes as scikit-learn's."""

import numpy as np
import pytest
import sklearn.kernel_ridge
import sklearn.svm

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
