"""Probabilities of the SMO models: Platt's sigmoid, pairwise coupling, the Laplace noise model
and the one-class density marks, against SciPy and libsvm-official (`-b 1`)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import solve
from scipy.optimize import minimize
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import train_test_split

import svmkit
from conftest import digits, heart_scale, housing, iris
from svmkit.io.libsvm_model import load_libsvm_model, save_libsvm_model
from svmkit.models.smo.probability import couple, fit_sigmoid, laplace_scale, smoothed_targets


def libsvm_probabilities(model, X):
    """Labels and probabilities from libsvm-official's C svm_predict_probability, row by row."""
    from ctypes import c_double

    from libsvm.svm import gen_svm_nodearray, libsvm

    buf = (c_double * max(model.get_nr_class(), 2))()
    X = sp.csr_matrix(X)
    labels, proba = [], []
    for i in range(X.shape[0]):
        row = slice(X.indptr[i], X.indptr[i + 1])
        xi, _ = gen_svm_nodearray((X.indices[row], X.data[row]))
        labels.append(libsvm.svm_predict_probability(model, xi, buf))
        proba.append(buf[:max(model.get_nr_class(), 2)])
    return np.asarray(labels), np.asarray(proba)


def libsvm_model(X, y, options, tmp_path):
    """libsvm-official trained on (X, y) with `options`, and the path of its model file."""
    from libsvm.svmutil import svm_problem, svm_save_model, svm_train

    model = svm_train(svm_problem(np.asarray(y, dtype=float), sp.csr_matrix(X)), options + " -q")
    path = tmp_path / "libsvm.model"
    svm_save_model(str(path), model)
    return model, path


def smoothed_cross_entropy(params, dec, t):
    z = dec * params[0] + params[1]
    return np.sum(t * z + np.logaddexp(0, -z))


# --- the sigmoid -------------------------------------------------------------------------------

def test_sigmoid_fit_minimises_the_smoothed_cross_entropy_as_scipy_does():
    X, y = heart_scale()
    dec = svmkit.SVC().fit(X[::2], y[::2]).decision_function(X[1::2])
    labels = y[1::2]
    A, B = fit_sigmoid(dec, labels)
    t = smoothed_targets(labels)
    ref = minimize(smoothed_cross_entropy, [0.0, 0.0], args=(dec, t), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose([A, B], ref.x, rtol=1e-6, atol=1e-6)
    assert smoothed_cross_entropy([A, B], dec, t) <= ref.fun * (1 + 1e-9)


def test_smoothed_targets_keep_the_sigmoid_finite_on_separable_decision_values():
    dec = np.r_[np.linspace(1, 3, 20), np.linspace(-3, -1, 25)]
    labels = np.r_[np.ones(20), -np.ones(25)]
    A, B = fit_sigmoid(dec, labels)
    assert np.isfinite([A, B]).all() and A < 0
    t = smoothed_targets(labels)
    np.testing.assert_allclose(t[:1], 21 / 22) and np.testing.assert_allclose(t[-1:], 1 / 27)
    ref = minimize(smoothed_cross_entropy, [0.0, 0.0], args=(dec, t), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose([A, B], ref.x, rtol=1e-5, atol=1e-5)


# --- coupling ----------------------------------------------------------------------------------

def test_two_class_coupling_is_the_pairwise_probability():
    r = np.array([[[0, 0.8], [0.2, 0]], [[0, 0.1], [0.9, 0]]])
    np.testing.assert_allclose(couple(r), [[0.8, 0.2], [0.1, 0.9]])


@pytest.mark.parametrize("k", [3, 5])
def test_coupling_solves_the_quadratic_problem_of_wu_lin_weng(k):
    rng = np.random.default_rng(k)
    upper = rng.uniform(0.05, 0.95, size=(4, k, k))
    r = np.triu(upper, 1) + np.transpose(1 - np.triu(upper, 1), (0, 2, 1)) * np.tril(np.ones((k, k)), -1)
    p = couple(r)
    for n in range(r.shape[0]):
        Q = -r[n].T * r[n]
        np.fill_diagonal(Q, (r[n] ** 2).sum(axis=0))
        kkt = np.block([[Q, np.ones((k, 1))], [np.ones((1, k)), np.zeros((1, 1))]])
        exact = solve(kkt, np.r_[np.zeros(k), 1.0])[:k]
        # LIBSVM stops when max_t |(Qp)_t − pᵀQp| < 0.005/k
        np.testing.assert_allclose(p[n], exact, atol=0.005)
        assert p[n].sum() == pytest.approx(1.0)


# --- LIBSVM models and files -------------------------------------------------------------------

def _iris_libsvm_labels():
    X, y = iris()
    return X, np.array([3, 1, 2])[y]


@pytest.mark.parametrize("case", ["binary", "multiclass", "nu-svc"])
def test_libsvm_probability_models_predict_libsvm_probabilities(case, tmp_path):
    X, y = heart_scale() if case == "binary" else _iris_libsvm_labels()
    options = {"binary": "-b 1 -c 2", "multiclass": "-b 1 -c 4", "nu-svc": "-s 1 -n 0.2 -b 1"}[case]
    model, path = libsvm_model(X, y, options, tmp_path)
    ours = load_libsvm_model(path, n_features=X.shape[1])
    lib_labels, lib_proba = libsvm_probabilities(model, X)
    np.testing.assert_allclose(ours.predict_proba(X), lib_proba, atol=1e-6)
    np.testing.assert_array_equal(ours.predict_by_probability(X), lib_labels)


def test_libsvm_regression_and_one_class_probability_models_load_as_libsvm_wrote_them(tmp_path):
    X, y = housing()
    model, path = libsvm_model(X, y, "-s 3 -b 1 -c 4", tmp_path)
    ours = load_libsvm_model(path, n_features=X.shape[1])
    assert ours.probability and ours.probA_[0] == pytest.approx(model.get_svr_probability(), rel=1e-12)
    X1, _ = heart_scale()
    model, path = libsvm_model(X1, np.ones(X1.shape[0]), "-s 2 -n 0.3 -b 1", tmp_path)
    ours = load_libsvm_model(path, n_features=X1.shape[1])
    _, lib_proba = libsvm_probabilities(model, X1)
    np.testing.assert_allclose(ours.predict_proba(X1), lib_proba, atol=1e-12)


@pytest.mark.parametrize("make", [lambda: svmkit.SVC(C=2, probability=True),
                                  lambda: svmkit.NuSVC(nu=0.3, probability=True)], ids=["svc", "nusvc"])
def test_probability_models_written_for_libsvm_predict_our_probabilities_there(make, tmp_path):
    from libsvm.svmutil import svm_load_model

    X, y = _iris_libsvm_labels()
    ours = make().fit(X, y)
    save_libsvm_model(ours, tmp_path / "ours.model")
    text = (tmp_path / "ours.model").read_text()
    assert "\nprobA " in text and "\nprobB " in text
    _, lib_proba = libsvm_probabilities(svm_load_model(str(tmp_path / "ours.model")), X)
    np.testing.assert_allclose(ours.predict_proba(X), lib_proba, atol=1e-6)


def test_one_class_density_marks_follow_libsvm(tmp_path):
    from libsvm.svmutil import svm_load_model

    X, _ = heart_scale()
    ours = svmkit.OneClassSVM(nu=0.3, gamma=1 / 13, probability=True).fit(X)
    model, _ = libsvm_model(X, np.ones(X.shape[0]), "-s 2 -n 0.3 -b 1", tmp_path)
    np.testing.assert_allclose(ours.prob_density_marks_, model.prob_density_marks[:10], rtol=1e-4, atol=1e-6)
    save_libsvm_model(ours, tmp_path / "ours.model")
    _, lib_proba = libsvm_probabilities(svm_load_model(str(tmp_path / "ours.model")), X)
    np.testing.assert_allclose(ours.predict_proba(X), lib_proba, atol=1e-12)


# --- the estimators ----------------------------------------------------------------------------

def test_probabilities_are_deterministic_and_follow_random_state():
    X, y = iris()
    first = svmkit.SVC(probability=True).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(svmkit.SVC(probability=True).fit(X, y).predict_proba(X), first)
    seeded = [svmkit.SVC(probability=True, random_state=s).fit(X, y) for s in (3, 3, 4)]
    np.testing.assert_array_equal(seeded[0].probA_, seeded[1].probA_)
    assert not np.array_equal(seeded[0].probA_, seeded[2].probA_)


def test_probabilities_sum_to_one_and_log_proba_is_their_log():
    X, y = digits()
    model = svmkit.SVC(probability=True).fit(X[:600], y[:600])
    proba = model.predict_proba(X[600:700])
    assert proba.shape == (100, 10)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(model.predict_log_proba(X[600:700]), np.log(proba))
    np.testing.assert_array_equal(model.predict_by_probability(X[600:700]), model.classes_[proba.argmax(axis=1)])


def test_internal_folds_reuse_the_training_kernel(monkeypatch):
    from svmkit.backend import HostBackend

    made = []
    original = HostBackend.training_rows

    def recording(self, *args, **kwargs):
        made.append(original(self, *args, **kwargs))
        return made[-1]

    monkeypatch.setattr(HostBackend, "training_rows", recording)
    X, y = iris()
    model = svmkit.SVC(probability=True).fit(X, y)
    assert len(made) == 1 and made[0].computed_rows <= X.shape[0]
    assert model.probA_.shape == (3,)


def test_a_class_of_one_sample_gets_libsvms_fallback_decision_values():
    X, y = iris()
    X, y = np.vstack([X, [[9.0, 9.0, 9.0, 9.0]]]), np.r_[y, 7]
    model = svmkit.SVC(probability=True).fit(X, y)
    assert np.isfinite(model.probA_).all() and np.isfinite(model.predict_proba(X)).all()


def test_predict_proba_without_probability_is_not_available():
    X, y = iris()
    model = svmkit.SVC().fit(X, y)
    assert not hasattr(model, "predict_proba")
    with pytest.raises(AttributeError, match="has no attribute 'predict_proba': probabilities need probability=True"):
        model.predict_proba(X)
    model.set_params(probability=True)
    with pytest.raises(NotFittedError, match="fitted with probability=False"):
        model.predict_proba(X)


def test_nu_infeasible_on_a_calibration_fold_names_the_fold():
    X, y = iris()
    keep = np.r_[np.arange(0, 50), np.arange(50, 62)]
    with pytest.raises(ValueError, match="a fold of the internal 5-fold cross-validation"):
        svmkit.NuSVC(nu=0.38, probability=True).fit(X[keep], y[keep])


def test_svr_noise_model_gives_intervals_that_cover_held_out_targets():
    X, y = housing()
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    model = svmkit.SVR(C=10, epsilon=0.5, probability=True).fit(Xtr, ytr)
    assert model.probA_.shape == (1,) and model.probA_[0] > 0
    band = model.predict_interval(Xte, coverage=0.9)
    inside = np.mean((band[:, 0] <= yte) & (yte <= band[:, 1]))
    assert 0.8 <= inside <= 0.98
    np.testing.assert_allclose(band.mean(axis=1), model.predict(Xte))
    with pytest.raises(ValueError, match="coverage"):
        model.predict_interval(Xte, coverage=1.0)
    with pytest.raises(NotFittedError, match="probability=True"):
        svmkit.NuSVR().fit(Xtr, ytr).predict_interval(Xte)


def test_laplace_scale_ignores_residuals_beyond_five_deviations():
    z = np.r_[np.full(99, 1.0), 1000.0]
    assert laplace_scale(z) == pytest.approx(1.0)


def _sklearn_svc_probability(X, y, **params):
    from sklearn.svm import SVC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return SVC(probability=True, random_state=0, **params).fit(X, y)


def _a9a_5k():
    from pathlib import Path

    from sklearn.datasets import load_svmlight_file

    path = Path(__file__).resolve().parents[2] / "shared" / "data" / "a9a"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    X, y = load_svmlight_file(str(path), n_features=123)
    return X[:5000], y[:5000]


@pytest.mark.parametrize("name", ["breast_cancer", "digits", "a9a-5k"])
def test_held_out_log_loss_and_brier_no_worse_than_scikit_learn(name):
    from sklearn.metrics import log_loss

    from conftest import breast_cancer

    X, y = {"breast_cancer": breast_cancer, "digits": digits, "a9a-5k": _a9a_5k}[name]()
    params = {"a9a-5k": {"gamma": 0.05}}.get(name, {})
    scores = []
    for split in range(3):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=split, stratify=y)
        onehot = yte[:, None] == np.unique(ytr)[None]
        for proba in (svmkit.SVC(probability=True, **params).fit(Xtr, ytr).predict_proba(Xte),
                      _sklearn_svc_probability(Xtr, ytr, **params).predict_proba(Xte)):
            scores.append((log_loss(yte, proba), np.mean(np.sum((proba - onehot) ** 2, axis=1))))
    ours, theirs = np.mean(scores[0::2], axis=0), np.mean(scores[1::2], axis=0)
    # both draw their calibration folds at random: averaged over 3 splits, 2 % is left to chance
    assert ours[0] <= 1.02 * theirs[0], f"log-loss {ours[0]:.4f} against scikit-learn's {theirs[0]:.4f}"
    assert ours[1] <= 1.02 * theirs[1], f"Brier {ours[1]:.4f} against scikit-learn's {theirs[1]:.4f}"


def test_log_loss_scoring_without_probability_is_named():
    from svmkit.model_selection import SVMSearchCV

    X, y = iris()
    with pytest.raises(ValueError, match="probability=True"):
        SVMSearchCV(svmkit.SVC(), {"C": [1.0, 2.0]}, scoring="neg_log_loss").fit(X, y)


class _CountingRows:
    """A row source that records the rows fetched."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.fetched = []

    def fetch(self, idx):
        self.fetched.append(np.asarray(idx))


@pytest.mark.parametrize("n, capacity, whole", [(300, 300, True), (300, 100, False), (20_000, 20_000, False)])
def test_every_training_row_is_computed_first_only_when_the_calibration_folds_are_solved_whole(n, capacity, whole):
    from svmkit.models.smo.calibration import fetch_fold_rows
    from svmkit.solvers.smo.solver import FULL_BLOCK

    rows = _CountingRows(capacity)
    row_index = np.arange(n)[::-1]
    fetch_fold_rows(rows, row_index)
    assert (n - n // 5 <= FULL_BLOCK and n <= capacity) == whole
    if whole:
        np.testing.assert_array_equal(np.concatenate(rows.fetched), np.arange(n))
    else:
        assert rows.fetched == []
