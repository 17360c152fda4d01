import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_svmlight_file
from sklearn.preprocessing import StandardScaler

DATA = Path(__file__).parent / "data"


def heart_scale():
    X, y = load_svmlight_file(str(DATA / "heart_scale"))
    return X, y


def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def iris():
    return load_iris(return_X_y=True)


def digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


def random_sparse():
    rng = np.random.default_rng(0)
    X = sp.random(300, 40, density=0.15, format="csr", random_state=1)
    w = rng.normal(size=40)
    y = np.where(X @ w + 0.3 * rng.normal(size=300) > 0, 1, 2)
    return X, y


DATASETS = {"heart_scale": heart_scale, "breast_cancer": breast_cancer, "iris": iris, "digits": digits,
            "random_sparse": random_sparse}


def sort_by_label(X, y):
    """Order rows by label so that LIBSVM's first-appearance label order is the sorted order."""
    order = np.argsort(y, kind="stable")
    return X[order], y[order], order


_OBJ = re.compile(r"obj = (-?[0-9.eE+-]+), rho = (-?[0-9.eE+-]+)")


def libsvm_train(X, y, options, capfd, precomputed=False):
    """Train libsvm-official on (X, y) sorted by label; returns (model, [obj per pair], order)."""
    from libsvm.svmutil import svm_parameter, svm_problem, svm_train

    Xs, ys, order = sort_by_label(X, y)
    if precomputed:
        K = np.hstack([np.arange(1, Xs.shape[0] + 1)[:, None], Xs[:, order]])
        prob = svm_problem(ys.astype(float), K, isKernel=True)
    else:
        prob = svm_problem(ys.astype(float), sp.csr_matrix(Xs) if sp.issparse(Xs) else np.asarray(Xs))
    capfd.readouterr()
    model = svm_train(prob, svm_parameter(options))
    out = capfd.readouterr().out
    objs = [float(m.group(1)) for m in _OBJ.finditer(out)]
    return model, objs, order


def libsvm_predict(model, X, precomputed_train_order=None):
    from libsvm.svmutil import svm_predict

    if precomputed_train_order is not None:
        Xq = np.hstack([np.arange(1, X.shape[0] + 1)[:, None], X[:, precomputed_train_order]])
        labels, _, dec = svm_predict([], Xq, model, "-q")
    else:
        labels, _, dec = svm_predict([], sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X), model, "-q")
    return np.asarray(labels), np.asarray(dec)


def libsvm_support(model, order):
    """Training-row indices (in the caller's order) of LIBSVM's support vectors."""
    return np.sort(order[np.asarray(model.get_sv_indices()) - 1])


@pytest.fixture
def data():
    return DATASETS
