import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_iris, load_svmlight_file
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


def very_sparse():
    """3 % nonzeros: training rows and prediction go through the sparse scatter, not BLAS."""
    rng = np.random.default_rng(2)
    X = sp.random(400, 200, density=0.03, format="csr", random_state=3)
    w = rng.normal(size=200)
    y = np.where(X @ w + 0.1 * rng.normal(size=400) > 0, 1, -1)
    return X, y


def diabetes():
    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    return X, (y - y.mean()) / y.std()


def housing():
    return load_svmlight_file(str(DATA / "housing_scale"))


def abalone():
    return load_svmlight_file(str(DATA / "abalone_scale"))


def sinc():
    """A noisy sinc on [−3, 3]: 200 points, noise σ = 0.1."""
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-3, 3, 200))
    return x[:, None], np.sinc(x) + 0.1 * rng.normal(size=x.size)


def blobs_with_outliers(seed=1):
    """Two Gaussian blobs of 150 points each plus 15 uniform outliers."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal([-2, -2], 0.5, (150, 2)), rng.normal([2, 2], 0.5, (150, 2)),
                   rng.uniform(-5, 5, (15, 2))])
    return X, np.zeros(X.shape[0])


DATASETS = {"heart_scale": heart_scale, "breast_cancer": breast_cancer, "iris": iris, "digits": digits,
            "random_sparse": random_sparse, "very_sparse": very_sparse}


def scale_gamma(X):
    var = (X.multiply(X).mean() - X.mean() ** 2) if sp.issparse(X) else X.var()
    return float(1.0 / (X.shape[1] * var))


def sort_by_label(X, y):
    """Order rows by label so that LIBSVM's first-appearance label order is the sorted order."""
    order = np.argsort(y, kind="stable")
    return X[order], y[order], order


_ITER = re.compile(r"#iter = (\d+)")
_OBJ = re.compile(r"obj = (-?[0-9.eE+-]+), rho = (-?[0-9.eE+-]+)")


def libsvm_train(X, y, options, capfd, precomputed=False, iterations=False):
    """Train libsvm-official on (X, y) sorted by label; returns (model, [obj per pair], order),
    and [#iter per pair] after them when `iterations`."""
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
    if iterations:
        return model, objs, order, [int(m.group(1)) for m in _ITER.finditer(out)]
    return model, objs, order


def libsvm_predict(model, X, precomputed_train_order=None):
    """Labels and decision values from libsvm-official's C predict, row by row. (Its Python
    svm_predict sizes the decision buffer for one classifier on ν-SVC and overruns on multiclass.)"""
    from ctypes import c_double

    from libsvm.svm import gen_svm_nodearray, libsvm

    precomputed = precomputed_train_order is not None
    if precomputed:
        X = np.hstack([np.arange(1, X.shape[0] + 1)[:, None], X[:, precomputed_train_order]])
    k = model.get_nr_class()
    n_dec = k * (k - 1) // 2 if model.get_svm_type() in (0, 1) else 1
    buf = (c_double * n_dec)()
    X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    labels, dec = [], []
    for i in range(X.shape[0]):
        if sp.issparse(X):
            row = slice(X.indptr[i], X.indptr[i + 1])
            xi, _ = gen_svm_nodearray((X.indices[row], X.data[row]))
        else:
            xi, _ = gen_svm_nodearray(X[i], isKernel=precomputed)
        labels.append(libsvm.svm_predict_values(model, xi, buf))
        dec.append(buf[:n_dec])
    return np.asarray(labels), np.asarray(dec)


def libsvm_support(model, order):
    """Training-row indices (in the caller's order) of LIBSVM's support vectors."""
    return np.sort(order[np.asarray(model.get_sv_indices()) - 1])


def sv_overlap(ours_support, lib_support):
    """Shared support vectors as a fraction of the larger support set."""
    return np.intersect1d(lib_support, ours_support).size / max(lib_support.size, ours_support.size)


def assert_pairs_match_libsvm(ours, model, objs, order, X, point=None):
    """Per class pair: objective (1e-3 rel), rho (1e-2·max(1,|rho|)), support overlap ≥ 99 %:
    of the rows, or of the points `point` maps them to (equal rows share their α sum, unique at
    the optimum, but not how it splits among them)."""
    n_pairs = len(objs)
    assert n_pairs == ours.objective_.shape[0]
    rho_lib = np.array([model.rho[k] for k in range(n_pairs)])
    np.testing.assert_allclose(ours.objective_, objs, rtol=1e-3, atol=1e-6)
    rho = -ours._intercept_
    if model.get_labels()[0] != ours.classes_[0]:
        # LIBSVM puts +1 first for labels {-1, +1}; that pair's decision values change sign
        rho = -rho
    assert np.all(np.abs(rho - rho_lib) <= 1e-2 * np.maximum(1, np.abs(rho_lib)))
    lib_sv = libsvm_support(model, order)
    if point is None:
        assert sv_overlap(ours.support_, lib_sv) >= 0.99
    else:
        assert sv_overlap(np.unique(point[ours.support_]), np.unique(point[lib_sv])) >= 0.99
    return lib_sv


@pytest.fixture
def data():
    return DATASETS


@pytest.fixture
def numpy_as_cuda(monkeypatch):
    """device='cuda' served by NumPy: the device code paths, run on the CPU."""
    from svmkit import backend

    monkeypatch.setattr(backend, "cupy_module", lambda: np)


@pytest.fixture
def device_linear_algebra(monkeypatch):
    """The linear algebra of a device array module (its own Cholesky, triangular solves, general
    products, eigendecomposition) run on NumPy arrays."""
    from svmkit.solvers.dense import factorisations

    monkeypatch.setattr(factorisations, "on_host", lambda xp: False)
