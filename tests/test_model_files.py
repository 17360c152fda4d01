"""Model files: LIBSVM's format both ways against libsvm-official, and svmkit's native file."""

import io
import json

import numpy as np
import pytest
import scipy.sparse as sp

import svmkit
from conftest import DATASETS, blobs_with_outliers, heart_scale, housing, libsvm_predict, scale_gamma, sort_by_label
from svmkit.io.libsvm_model import load_libsvm_model, save_libsvm_model
from svmkit.exceptions import ModelFileError
from svmkit.io.native import FORMAT_VERSION, MAGIC


def _rbf_kernel(X, Z, gamma):
    X = X.toarray() if sp.issparse(X) else X
    Z = Z.toarray() if sp.issparse(Z) else Z
    d = (X**2).sum(1)[:, None] + (Z**2).sum(1)[None, :] - 2 * X @ Z.T
    return np.exp(-gamma * d)


def _iris_unsorted():
    """iris with labels 2, 0, 1 appearing in that order, so LIBSVM's label order is not sorted."""
    X, y = DATASETS["iris"]()
    order = np.argsort((y + 1) % 3, kind="stable")
    return X[order], y[order]


def _ours_decision(est, X):
    return est._raw_decision(X)


CASES = {
    "heart_scale C-SVC": (heart_scale, "-s 0 -t 2 -c 1 -g 0.0769"),
    "iris C-SVC, unsorted labels": (_iris_unsorted, "-s 0 -t 1 -d 2 -g 0.2 -r 1 -c 3"),
    "iris nu-SVC sigmoid": (_iris_unsorted, "-s 1 -t 3 -g 0.05 -r -0.5 -n 0.3"),
    "heart_scale probability": (heart_scale, "-s 0 -t 0 -c 0.5 -b 1"),
    "housing epsilon-SVR": (housing, "-s 3 -t 2 -g 0.1 -c 4 -p 0.5"),
    "housing nu-SVR": (housing, "-s 4 -t 2 -g 0.1 -c 4 -n 0.3"),
    "one-class": (lambda: blobs_with_outliers(), "-s 2 -t 2 -g 0.5 -n 0.1"),
}


def _libsvm_train(X, y, options):
    from libsvm.svmutil import svm_problem, svm_train

    prob = svm_problem(np.asarray(y, dtype=float), sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X))
    return svm_train(prob, options + " -q"), prob


@pytest.mark.parametrize("case", sorted(CASES))
def test_libsvm_model_loads_and_predicts_as_libsvm(case, tmp_path):
    from libsvm.svmutil import svm_save_model

    load, options = CASES[case]
    X, y = load()
    model, _prob = _libsvm_train(X, y, options)
    path = tmp_path / "model"
    svm_save_model(str(path), model)
    ours = load_libsvm_model(path, n_features=X.shape[1])
    labels, dec = libsvm_predict(model, X)
    np.testing.assert_allclose(_ours_decision(ours, X), dec, atol=1e-6)
    np.testing.assert_allclose(ours.predict(X), labels, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_libsvm_model_written_back_is_identical(case, tmp_path):
    from libsvm.svmutil import svm_save_model

    load, options = CASES[case]
    X, y = load()
    model, _prob = _libsvm_train(X, y, options)
    svm_save_model(str(tmp_path / "theirs"), model)
    save_libsvm_model(load_libsvm_model(tmp_path / "theirs"), tmp_path / "ours")
    assert (tmp_path / "ours").read_text() == (tmp_path / "theirs").read_text()


ESTIMATORS = {
    "SVC binary": (lambda: svmkit.SVC(gamma=0.1), heart_scale),
    "SVC multiclass": (lambda: svmkit.SVC(kernel="poly", degree=2, coef0=1.0), lambda: DATASETS["digits"]()),
    "NuSVC": (lambda: svmkit.NuSVC(nu=0.2, kernel="sigmoid", gamma=0.01), _iris_unsorted),
    "SVR": (lambda: svmkit.SVR(C=3.0, kernel="linear"), housing),
    "NuSVR": (lambda: svmkit.NuSVR(nu=0.4), housing),
    "OneClassSVM": (lambda: svmkit.OneClassSVM(nu=0.2), lambda: blobs_with_outliers()),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_svmkit_model_saved_in_libsvm_format_predicts_the_same_in_libsvm(name, tmp_path):
    from libsvm.svmutil import svm_load_model

    make, load = ESTIMATORS[name]
    X, y = load()
    ours = make().fit(X, y)
    save_libsvm_model(ours, tmp_path / "model")
    model = svm_load_model(str(tmp_path / "model"))
    labels, dec = libsvm_predict(model, X)
    np.testing.assert_allclose(_ours_decision(ours, X), dec, atol=1e-6)
    np.testing.assert_allclose(ours.predict(X), labels, atol=1e-6)


def test_precomputed_kernel_model_round_trips_with_libsvm(tmp_path):
    from libsvm.svmutil import svm_load_model, svm_problem, svm_save_model, svm_train

    X, y = heart_scale()
    X, y, _ = sort_by_label(X, y)
    K = _rbf_kernel(X, X, scale_gamma(X))
    ours = svmkit.SVC(kernel="precomputed").fit(K, y)
    save_libsvm_model(ours, tmp_path / "ours")
    theirs = svm_load_model(str(tmp_path / "ours"))
    _, dec = libsvm_predict(theirs, K, precomputed_train_order=np.arange(K.shape[0]))
    np.testing.assert_allclose(_ours_decision(ours, K), dec, atol=1e-6)

    Kl = np.hstack([np.arange(1, K.shape[0] + 1)[:, None], K])
    model = svm_train(svm_problem(y, Kl, isKernel=True), "-s 0 -t 4 -c 1 -q")
    svm_save_model(str(tmp_path / "theirs"), model)
    loaded = load_libsvm_model(tmp_path / "theirs")
    width = loaded.n_features_in_
    _, dec = libsvm_predict(model, K, precomputed_train_order=np.arange(K.shape[0]))
    np.testing.assert_allclose(loaded._raw_decision(K[:, :width]), dec, atol=1e-6)


def test_non_integer_labels_cannot_be_written_in_libsvm_format(tmp_path):
    X, y = heart_scale()
    est = svmkit.SVC().fit(X, np.where(y > 0, "yes", "no"))
    with pytest.raises(ValueError, match="integer class labels"):
        save_libsvm_model(est, tmp_path / "model")


def test_malformed_libsvm_model_names_file_and_line(tmp_path):
    path = tmp_path / "bad.model"
    path.write_text("svm_type c_svc\nkernel_type rbf\ngamma abc\nSV\n")
    with pytest.raises(ModelFileError, match=r"bad.model, line 3: bad value for gamma"):
        load_libsvm_model(path)
    head = "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 3\nrho 0.1\n"
    cases = {
        head + "label 1 -1\nnr_sv 2 1\nSV\n1 1:0.5\n": "expected 3 support vectors",
        head + "nr_sv 2 1\nSV\n": "no label line, which a c_svc model needs",
        head + "label 1 -1\nnr_sv 2 2\nSV\n": "nr_sv adds up to 4, not total_sv = 3",
        head.replace("rho 0.1", "rho") + "label 1 -1\nnr_sv 2 1\nSV\n": "rho has 0 values",
        "+1 1:0.70 2:1\n": r"line 1: unknown keyword '\+1'",
    }
    for text, message in cases.items():
        path.write_text(text)
        with pytest.raises(ModelFileError, match=message):
            load_libsvm_model(path)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_native_round_trip_keeps_parameters_and_predictions(name, tmp_path):
    make, load = ESTIMATORS[name]
    X, y = load()
    est = make().fit(X, y)
    svmkit.save(est, tmp_path / "m.svmkit")
    back = svmkit.load(tmp_path / "m.svmkit")
    assert type(back) is type(est) and back.get_params() == est.get_params()
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    np.testing.assert_array_equal(back.support_, est.support_)
    np.testing.assert_array_equal(back.objective_, est.objective_)


def test_native_keeps_dict_class_weight_and_infinite_c(tmp_path):
    X, y = heart_scale()
    est = svmkit.SVC(class_weight={-1: 2.0, 1: 0.5}, kernel="linear").fit(X, y)
    svmkit.save(est, tmp_path / "m")
    assert svmkit.load(tmp_path / "m").class_weight == {-1: 2.0, 1: 0.5}


def test_failed_save_leaves_the_existing_file_intact(tmp_path, monkeypatch):
    X, y = heart_scale()
    est = svmkit.SVC().fit(X, y)
    path = tmp_path / "m"
    svmkit.save(est, path)
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr("svmkit.io.atomic.os.replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        svmkit.save(svmkit.SVC(C=5).fit(X, y), path)
    with pytest.raises(OSError, match="disk full"):
        save_libsvm_model(est, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m"]


def _native_file(header, arrays=b""):
    blob = json.dumps(header).encode()
    return MAGIC + len(blob).to_bytes(8, "little") + blob + arrays


def test_native_load_errors_are_clear(tmp_path):
    X, y = heart_scale()
    good = tmp_path / "good"
    svmkit.save(svmkit.SVC().fit(X, y), good)
    cases = {
        "foreign": (b"label 1:0.5\n", "not an svmkit model file"),
        "truncated": (good.read_bytes()[:40], "truncated"),
        "cut arrays": (good.read_bytes()[:-100], "corrupt or truncated model arrays"),
        "newer": (_native_file({"format": FORMAT_VERSION + 1, "estimator": "SVC", "params": {}, "svmkit": "9.0"}),
                  f"model format version {FORMAT_VERSION + 1} by svmkit 9.0; "
                  f"this svmkit reads versions up to {FORMAT_VERSION}"),
        "unknown class": (_native_file({"format": 1, "estimator": "os.system", "params": {}}), "unknown estimator"),
        "params list": (_native_file({"format": 1, "estimator": "SVC", "params": []}), "corrupt model header"),
        "bad version": (_native_file({"format": 0.5, "estimator": "SVC", "params": {}}), "corrupt model header"),
        "bad params": (_native_file({"format": 1, "estimator": "SVC", "params": {"C": {"x": 1}}},
                                    good.read_bytes()[8 + 8 + int.from_bytes(good.read_bytes()[8:16], "little"):]),
                       "parameters or arrays are inconsistent"),
    }
    for name, (blob, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(blob)
        with pytest.raises(ModelFileError, match=message):
            svmkit.load(path)


def test_native_load_refuses_pickled_arrays(tmp_path):
    buf = io.BytesIO()
    np.savez(buf, support_=np.array([object()], dtype=object))
    path = tmp_path / "pickle"
    path.write_bytes(_native_file({"format": 1, "estimator": "SVC", "params": {}}, buf.getvalue()))
    with pytest.raises(ModelFileError, match="corrupt or truncated model arrays"):
        svmkit.load(path)


def test_save_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path):
    X, y = heart_scale()
    est = svmkit.SVC().fit(X, y)
    target = tmp_path / "real.model"
    target.write_text("old")
    link = tmp_path / "link.model"
    link.symlink_to(target)
    save_libsvm_model(est, link)
    assert link.is_symlink() and target.read_text().startswith("svm_type c_svc")


def test_save_into_a_missing_folder_names_the_path(tmp_path):
    X, y = heart_scale()
    with pytest.raises(OSError) as info:
        svmkit.save(svmkit.SVC().fit(X, y), tmp_path / "no" / "such" / "m.svmkit")
    assert info.value.filename == str(tmp_path / "no" / "such" / "m.svmkit")


def _linear_cases():
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
    from sklearn.preprocessing import StandardScaler

    Xb, yb = load_breast_cancer(return_X_y=True)
    Xb = StandardScaler().fit_transform(Xb)
    Xi, yi = load_iris(return_X_y=True)
    Xd, yd = load_diabetes(return_X_y=True)
    return [(svmkit.LinearSVC(), Xb, yb), (svmkit.LinearSVC(multi_class="crammer_singer"), Xi, yi),
            (svmkit.LinearSVC(penalty="l1", dual=False, fit_intercept=False), Xi, yi),
            (svmkit.LinearSVR(C=10.0), Xd, yd), (svmkit.band.HardBandSVR(epsilon=130.0), Xd, yd),
            (svmkit.band.HardBandSVR(epsilon=130.0, method="reduction"), Xd, yd)]


@pytest.mark.parametrize("case", range(6))
def test_linear_models_and_the_hard_band_round_trip(case, tmp_path):
    est, X, y = _linear_cases()[case]
    est.fit(X, y)
    svmkit.save(est, tmp_path / "m.svmkit")
    back = svmkit.load(tmp_path / "m.svmkit")
    assert type(back) is type(est) and back.get_params() == est.get_params()
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    np.testing.assert_array_equal(back.coef_, est.coef_)


@pytest.mark.parametrize("search", [
    lambda: svmkit.model_selection.SVMSearchCV(svmkit.KernelRidge(kernel="rbf"), {"alpha": [0.1, 1.0], "gamma": [0.5]}),
    lambda: svmkit.model_selection.SVMSearchCV(svmkit.LinearSVR(), {"C": [0.1, 1.0]}),
    lambda: svmkit.model_selection.SVMSearchCV(svmkit.SVR(), {"C": [0.1, 1.0]}),
])
def test_a_searchs_best_estimator_round_trips(search, tmp_path):
    X, y = housing()
    best = search().fit(X, y).best_estimator_
    svmkit.save(best, tmp_path / "best.svmkit")
    np.testing.assert_array_equal(svmkit.load(tmp_path / "best.svmkit").predict(X), best.predict(X))


def test_a_linear_model_file_with_a_wrong_coef_shape_is_named(tmp_path):
    est, X, y = _linear_cases()[1]
    est.fit(X, y)
    est.coef_ = est.coef_[:, :2]
    svmkit.save(est, tmp_path / "bad.svmkit")
    with pytest.raises(ModelFileError, match="bad.svmkit.*coef_ of shape \\(3, 2\\) does not have n_features_in_=4"):
        svmkit.load(tmp_path / "bad.svmkit")


LIBLINEAR_FITS = [(svmkit.LinearSVC(dual=True), 1), (svmkit.LinearSVC(dual=False), 2),
                  (svmkit.LinearSVC(loss="hinge", dual=True), 3), (svmkit.LinearSVC(multi_class="crammer_singer"), 4),
                  (svmkit.LinearSVC(penalty="l1", dual=False), 5), (svmkit.LinearSVR(loss="squared_epsilon_insensitive",
                                                                                      dual=False), 11),
                  (svmkit.LinearSVR(loss="squared_epsilon_insensitive", dual=True), 12),
                  (svmkit.LinearSVR(loss="epsilon_insensitive", dual=True), 13)]


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("est, solver", LIBLINEAR_FITS, ids=[f"s{s}" for _, s in LIBLINEAR_FITS])
def test_a_liblinear_model_file_keeps_the_solver_and_the_decision_values(est, solver, classes, tmp_path):
    from svmkit.io.liblinear_model import load_liblinear_model, save_liblinear_model

    if isinstance(est, svmkit.LinearSVR) and classes == 3:
        pytest.skip("one regression problem")
    X, y = (housing() if isinstance(est, svmkit.LinearSVR) else
            heart_scale() if classes == 2 else DATASETS["iris"]())
    fitted = est.set_params(max_iter=5000).fit(X, y)
    assert fitted.solver_ == solver
    save_liblinear_model(fitted, tmp_path / "m.model")
    loaded = load_liblinear_model(tmp_path / "m.model")
    assert loaded.solver_ == solver
    assert {k: v for k, v in loaded.get_params().items() if k in ("loss", "dual", "penalty", "multi_class")} == \
        {k: v for k, v in fitted.get_params().items() if k in ("loss", "dual", "penalty", "multi_class")}
    method = "predict" if isinstance(est, svmkit.LinearSVR) else "decision_function"
    np.testing.assert_allclose(getattr(loaded, method)(X), getattr(fitted, method)(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))
    svmkit.save(fitted, tmp_path / "m.svmkit")
    assert svmkit.load(tmp_path / "m.svmkit").solver_ == solver


def _labelled(kind):
    """A small 3-feature classification set whose labels are of `kind`."""
    import pandas as pd

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    yes = X[:, 0] + 0.5 * X[:, 1] > 0
    words = np.where(yes, "yes", "no")
    return X, {"int": np.where(yes, 3, 7), "float": np.where(yes, 1.0, -1.0), "str": words,
               "object": words.astype(object), "Series": pd.Series(words),
               "Series of ints": pd.Series(np.where(yes, 2, 5)),
               "Categorical": pd.Categorical(words), "Series of a Categorical": pd.Series(pd.Categorical(words)),
               "bool": yes, "datetime64": np.where(yes, np.datetime64("2026-01-01"), np.datetime64("2025-06-30"))}[kind]


LABEL_KINDS = ["int", "float", "str", "object", "Series", "Series of ints", "Categorical", "Series of a Categorical",
               "bool", "datetime64"]
CLASSIFIERS = {"SVC": lambda: svmkit.SVC(), "LinearSVC": lambda: svmkit.LinearSVC(),
               "KernelLogisticRegression": lambda: svmkit.KernelLogisticRegression()}


@pytest.mark.parametrize("model", sorted(CLASSIFIERS))
@pytest.mark.parametrize("kind", LABEL_KINDS)
def test_a_model_fitted_on_any_kind_of_label_saves_and_predicts_the_same(kind, model, tmp_path):
    """Issue 53: labels from pandas (object, Series, Categorical) saved, then failed to load."""
    X, y = _labelled(kind)
    est = CLASSIFIERS[model]().fit(X, y)
    svmkit.save(est, tmp_path / "m.svmkit")
    back = svmkit.load(tmp_path / "m.svmkit")
    assert back.classes_.dtype == est.classes_.dtype and back.classes_.tolist() == est.classes_.tolist()
    predicted, expected = back.predict(X), est.predict(X)
    assert predicted.dtype == expected.dtype and predicted.tolist() == expected.tolist()
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))


@pytest.mark.parametrize("y", [np.array([1, "a"] * 20, dtype=object), np.array(["a", 1] * 20, dtype=object)],
                         ids=["int first", "str first"])
def test_labels_of_mixed_types_are_refused_at_fit_as_scikit_learn_refuses_them(y):
    from sklearn.svm import SVC as SklearnSVC

    X = np.random.default_rng(0).normal(size=(40, 2))
    with pytest.raises((TypeError, ValueError)):  # TypeError or ValueError, by which label comes first
        SklearnSVC().fit(X, y)
    for est in CLASSIFIERS.values():
        with pytest.raises(ValueError, match="mixes labels of types"):
            est().fit(X, y)


def _scalers():
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    return {"StandardScaler": StandardScaler(), "StandardScaler without mean": StandardScaler(with_mean=False),
            "StandardScaler without either": StandardScaler(with_mean=False, with_std=False),
            "MinMaxScaler": MinMaxScaler(feature_range=(-1, 2), clip=True), "MaxAbsScaler": MaxAbsScaler(),
            "LibsvmScaler": svmkit.LibsvmScaler(lower=0.0)}


@pytest.mark.parametrize("scaler", sorted(_scalers()))
def test_a_pipeline_of_a_scaler_and_a_model_round_trips(scaler, tmp_path):
    from sklearn.pipeline import Pipeline

    X, y = DATASETS["iris"]()
    pipe = Pipeline([("scale", _scalers()[scaler]), ("keep", "passthrough"), ("svc", svmkit.SVC(C=3.0))]).fit(X, y)
    svmkit.save(pipe, tmp_path / "pipe.svmkit")
    back = svmkit.load(tmp_path / "pipe.svmkit")
    assert type(back) is Pipeline and [name for name, _ in back.steps] == ["scale", "keep", "svc"]
    assert back.get_params(deep=False).keys() == pipe.get_params(deep=False).keys()
    for (_, ours), (_, theirs) in zip(back.steps, pipe.steps):
        assert type(ours) is type(theirs) and (ours == theirs or ours.get_params() == theirs.get_params())
    np.testing.assert_array_equal(back[0].transform(X), pipe[0].transform(X))
    np.testing.assert_array_equal(back.predict(X), pipe.predict(X))
    np.testing.assert_array_equal(back.decision_function(X), pipe.decision_function(X))


def _frame():
    import pandas as pd

    X, y = _labelled("Series")
    return pd.DataFrame(X, columns=["height", "weight", "age"]), y


@pytest.mark.parametrize("pipeline", [False, True], ids=["SVC", "Pipeline"])
def test_feature_names_survive_a_round_trip(pipeline, tmp_path):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _frame()
    est = (make_pipeline(StandardScaler(), svmkit.SVC()) if pipeline else svmkit.SVC()).fit(X, y)
    svmkit.save(est, tmp_path / "m.svmkit")
    back = svmkit.load(tmp_path / "m.svmkit")
    assert back.n_features_in_ == 3 and back.feature_names_in_.tolist() == ["height", "weight", "age"]
    assert back.feature_names_in_.dtype == est.feature_names_in_.dtype
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    with pytest.raises(ValueError, match="feature names"):
        back.predict(X.rename(columns={"age": "years"}))


def test_a_model_file_is_version_1_unless_it_needs_version_2(tmp_path):
    """Older svmkit reads what it can: a plain model with numeric labels stays version 1."""
    from sklearn.pipeline import make_pipeline

    X, y = _labelled("int")
    for est, labels, version in [(svmkit.SVC(), y, 1), (svmkit.SVC(), y.astype(str), 1),
                                 (svmkit.SVC(), y.astype(str).astype(object), 2),
                                 (make_pipeline(svmkit.LibsvmScaler(), svmkit.SVC()), y, 2)]:
        svmkit.save(est.fit(X, labels), tmp_path / "m.svmkit")
        blob = (tmp_path / "m.svmkit").read_bytes()
        assert json.loads(blob[16:16 + int.from_bytes(blob[8:16], "little")])["format"] == version


@pytest.mark.parametrize("search", ["SVMSearchCV", "GridSearchCV of a Pipeline"])
def test_saving_a_search_saves_its_best_estimator(search, tmp_path):
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = DATASETS["iris"]()
    found = (svmkit.SVMSearchCV(svmkit.SVC(), {"C": [0.5, 2.0]}) if search == "SVMSearchCV" else
             GridSearchCV(make_pipeline(StandardScaler(), svmkit.SVC()), {"svc__C": [0.5, 2.0]})).fit(X, y)
    svmkit.save(found, tmp_path / "best.svmkit")
    back = svmkit.load(tmp_path / "best.svmkit")
    assert type(back) is type(found.best_estimator_)
    np.testing.assert_array_equal(back.predict(X), found.predict(X))


def test_saving_anything_else_names_it_and_the_way_out(tmp_path):
    from sklearn.decomposition import PCA
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC as SklearnSVC

    X, y = DATASETS["iris"]()
    cases = {
        r"cannot save a SVC \(from sklearn\): .*save the final estimator .*skops or joblib": SklearnSVC().fit(X, y),
        r"cannot save a PCA \(from sklearn\) \(step 'pca' of a Pipeline\).*skops or joblib":
            make_pipeline(PCA(2), svmkit.SVC()).fit(X, y),
        r"cannot save an unfitted StandardScaler \(step 'standardscaler' of a Pipeline\): call fit first":
            make_pipeline(StandardScaler(), svmkit.SVC()),
        r"cannot save a GridSearchCV \(from sklearn\) without best_estimator_: fit it with refit=True":
            GridSearchCV(svmkit.SVC(), {"C": [1.0, 2.0]}, refit=False).fit(X, y),
        r"cannot save a SVMSearchCV without best_estimator_": svmkit.SVMSearchCV(svmkit.SVC(), {"C": [1.0]}),
        r"cannot save a dict \(from builtins\)": {"model": svmkit.SVC()},
    }
    for message, obj in cases.items():
        with pytest.raises(ValueError, match=message):
            svmkit.save(obj, tmp_path / "m.svmkit")
    assert not (tmp_path / "m.svmkit").exists()


def test_a_libsvm_model_of_a_precomputed_kernel_takes_n_features_kernel_columns(tmp_path):
    """The file names only the training rows that are support vectors (0:ID): n_features gives the
    kernel's width, 200 here, where the highest ID alone would ask for fewer columns."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=200) > 0, 1, -1)
    K = X @ X.T
    est = svmkit.SVC(kernel="precomputed", C=0.1).fit(K, y)
    assert est.support_.max() < 199  # the last row is no support vector
    save_libsvm_model(est, tmp_path / "pre.model")
    back = load_libsvm_model(tmp_path / "pre.model", n_features=200)
    assert back.n_features_in_ == 200
    np.testing.assert_array_equal(back.decision_function(K), est.decision_function(K))
    alone = load_libsvm_model(tmp_path / "pre.model")
    assert alone.n_features_in_ == est.support_.max() + 1
    np.testing.assert_array_equal(alone.decision_function(K[:, :alone.n_features_in_]), est.decision_function(K))


def test_a_libsvm_model_without_support_vectors_needs_n_features(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    est = svmkit.SVR(epsilon=5.0).fit(X, 0.1 * X[:, 0])
    assert est.support_.size == 0
    save_libsvm_model(est, tmp_path / "flat.model")
    with pytest.raises(ModelFileError, match=r"flat.model, line 5: total_sv 0: .*pass n_features"):
        load_libsvm_model(tmp_path / "flat.model")
    np.testing.assert_array_equal(load_libsvm_model(tmp_path / "flat.model", n_features=3).predict(X), est.predict(X))
