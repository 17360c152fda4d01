"""SVMSearchCV: every cell solved as a cold fit solves it, the same choice as GridSearchCV,
the fewer-SV rule, warm starts, the Dask backend, and bad input named."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline

import svmkit
from conftest import diabetes, heart_scale, iris
from svmkit.model_selection import SVMSearchCV
from svmkit.model_selection.grid import check_grid, default_grid, log2_range
from svmkit.model_selection.paths import Scoring, fit_group
from svmkit.model_selection.search import kernel_paths

GRID = {"C": [2.0**k for k in range(-1, 8, 2)], "gamma": [2.0**k for k in (-7, -5, -3)]}


def _records(est, X, y, grid, folds, scoring=None):
    scorer = check_scoring(est, scoring or "accuracy")
    numbered = [(k, tr, te) for k, (tr, te) in enumerate(folds)]
    groups = kernel_paths(est, check_grid(grid, est))
    return [r for paths in groups for r in fit_group(est, X, y, None, paths, numbered, Scoring(scoring, scorer), 1024)]


@pytest.mark.parametrize("est, data, grid", [
    (svmkit.SVC(), heart_scale, GRID),
    (svmkit.NuSVC(), iris, {"nu": [0.1, 0.3, 0.5], "gamma": [0.1, 1.0]}),
    (svmkit.SVR(), diabetes, {"C": [0.25, 1.0, 4.0, 16.0], "epsilon": [0.1, 0.5], "gamma": [0.01, 0.1]}),
    (svmkit.NuSVR(), diabetes, {"C": [0.25, 1.0, 4.0], "nu": [0.3, 0.6], "gamma": [0.05]}),
])
def test_every_warm_started_cell_solves_its_problem_as_a_cold_fit_does(est, data, grid):
    X, y = data()
    classifier = est.__sklearn_tags__().estimator_type == "classifier"
    folds = list((StratifiedKFold if classifier else KFold)(3).split(X, y))
    cells = check_grid(grid, est)
    scoring = None if classifier else "r2"
    for r in _records(est, X, y, grid, folds, scoring):
        train, test = folds[r.fold]
        cold = clone(est).set_params(**cells[r.cell]).fit(X[train], y[train])
        # relative 1e-3; a dual whose optimum is near 0 (a ν pair of separable classes) within
        # what the stopping rule guarantees: violation tol times Σα
        for got, f in zip(r.objective, cold._problem_fits):
            assert abs(got - f.result.objective) <= max(1e-3 * abs(f.result.objective), cold.tol * f.result.alpha.sum())
        assert abs(r.score - cold.score(X[test], y[test])) <= (0.005 if classifier else 0.01)


def test_chooses_the_cell_grid_search_cv_chooses():
    X, y = heart_scale()
    folds = StratifiedKFold(5)
    ours = SVMSearchCV(svmkit.SVC(), GRID, cv=folds, prefer_fewer_sv=False).fit(X, y)
    theirs = GridSearchCV(svmkit.SVC(), GRID, cv=folds).fit(X, y)
    assert ours.best_params_ == theirs.best_params_ or \
        abs(ours.best_score_ - theirs.cv_results_["mean_test_score"][ours.best_index_]) <= 0.005
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"], atol=0.005)
    assert set(theirs.cv_results_) - {"split0_train_score"} <= set(ours.cv_results_)
    np.testing.assert_array_equal(ours.cv_results_["rank_test_score"][np.argsort(ours.cv_results_["mean_test_score"])[-1:]], [1])


def test_regression_search_matches_grid_search_cv_on_mean_squared_error():
    X, y = diabetes()
    grid = {"C": [0.25, 1.0, 4.0], "epsilon": [0.1, 0.5], "gamma": [0.01, 0.1]}
    ours = SVMSearchCV(svmkit.SVR(), grid, scoring="neg_mean_squared_error", prefer_fewer_sv=False).fit(X, y)
    theirs = GridSearchCV(svmkit.SVR(), grid, scoring="neg_mean_squared_error").fit(X, y)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"], rtol=1e-2)
    assert ours.best_params_ == theirs.best_params_


def test_log_loss_search_of_probability_models_matches_grid_search_cv():
    X, y = iris()
    grid = {"C": [0.5, 2.0, 8.0], "gamma": [0.1, 1.0]}
    est = svmkit.SVC(probability=True)
    ours = SVMSearchCV(est, grid, scoring="neg_log_loss", prefer_fewer_sv=False).fit(X, y)
    theirs = GridSearchCV(est, grid, scoring="neg_log_loss").fit(X, y)
    # the same data give the same calibration folds; warm starts move α within tol only
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"], rtol=2e-2)
    assert ours.best_estimator_.predict_proba(X[:2]).shape == (2, 3)


def test_fewer_sv_rule_takes_the_sparsest_cell_within_one_standard_error():
    X, y = heart_scale()
    search = SVMSearchCV(svmkit.SVC(), GRID, prefer_fewer_sv=True).fit(X, y)
    r = search.cv_results_
    best = search.best_by_score_
    assert best == int(np.argmax(r["mean_test_score"]))
    near = r["mean_test_score"] >= r["mean_test_score"][best] - r["std_test_score"][best] / np.sqrt(5)
    assert r["mean_n_support"][search.best_index_] == r["mean_n_support"][near].min()
    assert "fewer_sv" in r["chosen_by"][search.best_index_]
    assert "score" in r["chosen_by"][best]
    assert search.best_estimator_.get_params()["C"] == search.best_params_["C"]
    assert r["loo_bound"][search.best_index_] == search.best_estimator_.support_.size / y.size


def test_refit_model_equals_a_plain_fit_of_the_chosen_cell():
    X, y = heart_scale()
    search = SVMSearchCV(svmkit.SVC(), GRID).fit(X, y)
    plain = svmkit.SVC(**search.best_params_).fit(X, y)
    np.testing.assert_allclose(search.best_estimator_.objective_, plain.objective_, rtol=1e-3)
    assert np.mean(search.predict(X) == plain.predict(X)) >= 0.99


def test_search_works_inside_a_pipeline():
    X, y = iris()
    pipe = make_pipeline(svmkit.LibsvmScaler(), SVMSearchCV(svmkit.SVC(), {"C": [1.0, 10.0], "gamma": [0.1, 1.0]}))
    assert pipe.fit(X, y).score(X, y) > 0.95


def test_default_grid_is_grid_py_s_110_cells():
    cells = check_grid(default_grid(svmkit.SVC()), svmkit.SVC())
    assert len(cells) == 110
    assert sorted({c["C"] for c in cells}) == [2.0**k for k in range(-5, 16, 2)]
    assert sorted({c["gamma"] for c in cells}) == [2.0**k for k in range(-15, 4, 2)]
    assert log2_range(3, -15, -2)[-1] == -15


def test_warm_start_refit_with_a_larger_c_reaches_the_cold_objective_with_less_work():
    X, y = heart_scale()
    model = svmkit.SVC(C=1.0, warm_start=True).fit(X, y)
    model.set_params(C=4.0).fit(X, y)
    cold = svmkit.SVC(C=4.0).fit(X, y)
    np.testing.assert_allclose(model.objective_, cold.objective_, rtol=1e-3)
    assert model.n_iter_.sum() < cold.n_iter_.sum()


def test_warm_start_starts_cold_when_the_data_changed():
    X, y = heart_scale()
    model = svmkit.SVR(C=1.0, warm_start=True).fit(X, y)
    model.set_params(C=4.0).fit(X[:200], y[:200])
    cold = svmkit.SVR(C=4.0).fit(X[:200], y[:200])
    assert model.n_iter_ == cold.n_iter_
    np.testing.assert_allclose(model.objective_, cold.objective_, rtol=1e-12)


@pytest.mark.parametrize("backend", ["loky", "dask"])
def test_process_backends_give_the_threads_results_bit_for_bit(backend):
    if backend == "dask":
        pytest.importorskip("distributed")
    X, y = heart_scale()
    a = SVMSearchCV(svmkit.SVC(), GRID, n_jobs=2).fit(X, y)
    b = SVMSearchCV(svmkit.SVC(), GRID, n_jobs=2, backend=backend).fit(X, y)
    for key in a.cv_results_:
        if key.startswith("split") or key in ("mean_n_support", "loo_bound", "mean_test_score"):
            np.testing.assert_array_equal(a.cv_results_[key], b.cv_results_[key], err_msg=key)
    assert a.best_params_ == b.best_params_


def test_parallel_predict_on_a_dask_array_equals_predict():
    da = pytest.importorskip("dask.array")
    X, y = iris()
    model = svmkit.SVC().fit(X, y)
    out = svmkit.parallel.predict(model, da.from_array(X, chunks=(40, 2))).compute()
    np.testing.assert_array_equal(out, model.predict(X))


def test_unreachable_scheduler_fails_fast_with_its_address():
    pytest.importorskip("distributed")
    X, y = iris()
    search = SVMSearchCV(svmkit.SVC(), {"C": [1.0, 2.0]}, backend="dask", scheduler_address="tcp://127.0.0.1:1")
    with pytest.raises(ConnectionError, match="127.0.0.1:1"):
        search.fit(X, y)


@pytest.mark.parametrize("grid, message", [
    ({"C": [1.0, 0.0]}, "'C'.*positive"),
    ({"gamma": [-1.0, 1.0]}, "'gamma'.*positive"),
    ({"nu": [0.5, 0.2]}, "does not have"),
    ({"C": []}, "non-empty"),
])
def test_bad_grids_are_named(grid, message):
    X, y = iris()
    with pytest.raises(ValueError, match=message):
        SVMSearchCV(svmkit.SVC(), grid).fit(X, y)


def test_more_folds_than_the_smallest_class_is_refused():
    X, y = iris()
    y = y.copy()
    y[:47] = 1
    with pytest.raises(ValueError, match="smallest class.*3 samples"):
        SVMSearchCV(svmkit.SVC(), GRID, cv=5).fit(X, y)


def test_a_class_missing_from_a_training_fold_is_refused():
    X, y = iris()
    rows = np.arange(y.size)
    folds = [(rows[y != 2], rows[y == 2]), (rows[y != 0], rows[y == 0])]
    with pytest.raises(ValueError, match="training fold 0 has no sample of class 2"):
        SVMSearchCV(svmkit.SVC(), GRID, cv=folds).fit(X, y)


def test_a_cell_that_fails_scores_nan_and_the_search_goes_on():
    X, y = iris()
    with pytest.warns(FitFailedWarning, match="infeasible"):
        search = SVMSearchCV(svmkit.NuSVC(), {"nu": [0.2, 0.99], "gamma": [0.5]}).fit(X[:110], y[:110])
    assert np.isnan(search.cv_results_["mean_test_score"][1])
    assert search.best_params_["nu"] == 0.2


def test_best_params_is_the_best_mean_score_by_default_as_grid_search_cvs():
    X, y = heart_scale()
    ours = SVMSearchCV(svmkit.SVC(), GRID).fit(X, y)
    theirs = GridSearchCV(svmkit.SVC(), GRID, cv=StratifiedKFold(5)).fit(X, y)
    assert ours.best_params_ == theirs.best_params_
    assert ours.best_index_ == ours.best_by_score_


def test_a_one_cell_grid_is_searched_as_grid_search_cv_does():
    X, y = heart_scale()
    ours = SVMSearchCV(svmkit.SVC(), {"C": [2.0]}).fit(X, y)
    theirs = GridSearchCV(svmkit.SVC(), {"C": [2.0]}, cv=StratifiedKFold(5)).fit(X, y)
    assert ours.best_params_ == {"C": 2.0}
    assert ours.best_score_ == pytest.approx(theirs.best_score_, abs=1e-12)


def test_search_keeps_a_data_frames_feature_names():
    import warnings

    pandas = pytest.importorskip("pandas")
    X, y = heart_scale()
    frame = pandas.DataFrame(X.toarray() if hasattr(X, "toarray") else X, columns=[f"f{k}" for k in range(X.shape[1])])
    search = SVMSearchCV(svmkit.SVC(), {"C": [1.0, 4.0]}).fit(frame, y)
    np.testing.assert_array_equal(search.feature_names_in_, frame.columns)
    assert search.n_features_in_ == X.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "X has feature names, but ... was fitted without"
        search.predict(frame)


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("est, grid, data, scoring", [
    (svmkit.KernelRidge(kernel="rbf"), {"alpha": [1e-2, 1.0], "gamma": [0.01, 0.1]}, diabetes, None),
    (svmkit.KernelRidge(), {"alpha": [1e-2, 1.0]}, diabetes, None),
    (svmkit.LSSVR(), {"C": [1.0, 10.0], "gamma": [0.01, 0.1]}, diabetes, None),
    (svmkit.LSSVC(), {"C": [1.0, 10.0], "gamma": [0.01, 0.1]}, _breast_cancer, None),
    (svmkit.KernelLogisticRegression(), {"C": [1.0, 10.0], "gamma": [0.01, "scale"]}, _breast_cancer, None),
    (svmkit.LinearSVC(), {"C": [0.01, 1.0]}, _breast_cancer, None),
    (svmkit.OneClassSVM(), {"nu": [0.1, 0.5], "gamma": [0.01, 0.1]}, _breast_cancer, "accuracy"),
])
def test_every_model_is_searched_with_grid_search_cvs_scores(est, grid, data, scoring):
    X, y = data()
    if isinstance(est, svmkit.OneClassSVM):
        y = np.where(y == 1, 1, -1)
    cv = StratifiedKFold(5) if est.__sklearn_tags__().estimator_type != "regressor" else KFold(5)
    ours = SVMSearchCV(est, grid, cv=cv, scoring=scoring).fit(X, y)
    theirs = GridSearchCV(est, grid, cv=cv, scoring=scoring).fit(X, y)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"],
                               rtol=1e-7, atol=1e-7)
    assert ours.best_params_ == theirs.best_params_
    if isinstance(est, svmkit.OneClassSVM):  # refitted along ν, to the solver's tol: the free SVs' signs may flip
        np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-3)
    else:
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-7, atol=1e-7)


def test_fewer_sv_rule_on_a_model_without_support_vectors_is_refused():
    X, y = _breast_cancer()
    with pytest.raises(ValueError, match="prefer_fewer_sv=True.*LinearSVC"):
        SVMSearchCV(svmkit.LinearSVC(), {"C": [0.01, 1.0]}, prefer_fewer_sv=True).fit(X, y)


def test_an_estimator_from_outside_svmkit_is_refused_naming_grid_search_cv():
    from sklearn.svm import SVC

    X, y = iris()
    with pytest.raises(TypeError, match="estimator must be one of svmkit's estimators .*GridSearchCV"):
        SVMSearchCV(SVC(), GRID).fit(X, y)


def _scaled_svc():
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    return Pipeline([("scale", StandardScaler()), ("svc", svmkit.SVC())])


def _dense_heart():
    X, y = heart_scale()
    return X.toarray(), y


def _assert_same_scores(ours, theirs, n_splits=5):
    assert ours.best_params_ == theirs.best_params_
    assert ours.cv_results_["params"] == theirs.cv_results_["params"]
    for key in ["mean_test_score"] + [f"split{k}_test_score" for k in range(n_splits)]:
        np.testing.assert_allclose(ours.cv_results_[key], theirs.cv_results_[key], rtol=0, atol=1e-9, err_msg=key)
    np.testing.assert_array_equal(ours.cv_results_["rank_test_score"], theirs.cv_results_["rank_test_score"])


def test_a_pipeline_search_equals_grid_search_cv_on_the_same_pipeline():
    from sklearn.pipeline import Pipeline

    X, y = _dense_heart()
    grid = {"svc__C": [2.0**k for k in range(-3, 10, 2)], "svc__gamma": [2.0**k for k in (-9, -7, -5, -3)]}
    ours = SVMSearchCV(_scaled_svc(), grid).fit(X, y)
    theirs = GridSearchCV(_scaled_svc(), grid, cv=StratifiedKFold(5)).fit(X, y)
    _assert_same_scores(ours, theirs)
    assert list(ours.best_params_) == ["svc__C", "svc__gamma"]
    assert "param_svc__C" in ours.cv_results_
    assert isinstance(ours.best_estimator_, Pipeline)
    assert ours.best_estimator_.named_steps["svc"].C == ours.best_params_["svc__C"]
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    assert ours.score(X, y) == theirs.score(X, y)


def test_a_pipeline_search_on_processes_gives_the_threads_results_bit_for_bit():
    X, y = _dense_heart()
    grid = {"svc__C": [0.5, 4.0], "svc__gamma": [0.01, 0.1]}
    a = SVMSearchCV(_scaled_svc(), grid, n_jobs=2).fit(X, y)
    b = SVMSearchCV(_scaled_svc(), grid, n_jobs=2, backend="loky").fit(X, y)
    for k in range(5):
        np.testing.assert_array_equal(a.cv_results_[f"split{k}_test_score"], b.cv_results_[f"split{k}_test_score"])
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_a_pipeline_grid_may_set_the_earlier_steps_parameters():
    X, y = _dense_heart()
    grid = {"scale__with_mean": [True, False], "svc__C": [0.5, 4.0], "svc__gamma": [0.01, 0.1]}
    ours = SVMSearchCV(_scaled_svc(), grid).fit(X, y)
    theirs = GridSearchCV(_scaled_svc(), grid, cv=StratifiedKFold(5)).fit(X, y)
    _assert_same_scores(ours, theirs)
    assert ours.best_estimator_.named_steps["scale"].with_mean == ours.best_params_["scale__with_mean"]


def test_a_caching_pipelines_refit_keeps_every_fitted_step(tmp_path):
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    X, y = _dense_heart()
    # with `memory` a Pipeline fits clones of the steps before its last
    pipe = Pipeline([("range", MinMaxScaler()), ("scale", StandardScaler()), ("svc", svmkit.SVC())],
                    memory=str(tmp_path))
    grid = {"svc__C": [1.0, 4.0]}
    ours = SVMSearchCV(pipe, grid).fit(X, y)
    theirs = GridSearchCV(pipe, grid, cv=StratifiedKFold(5)).fit(X, y)
    _assert_same_scores(ours, theirs)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def test_a_pipeline_of_a_model_without_a_solver_path_equals_grid_search_cv():
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = diabetes()
    pipe = Pipeline([("scale", StandardScaler()), ("ridge", svmkit.KernelRidge(kernel="rbf"))])
    grid = {"ridge__alpha": [1e-2, 1.0], "ridge__gamma": [0.01, 0.1]}
    ours = SVMSearchCV(pipe, grid).fit(X, y)
    theirs = GridSearchCV(pipe, grid, cv=KFold(5)).fit(X, y)
    _assert_same_scores(ours, theirs)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-9, atol=1e-9)


def test_a_pipeline_is_searched_on_its_models_default_grid_under_step_names():
    X, y = _dense_heart()
    search = SVMSearchCV(_scaled_svc(), cv=3).fit(X, y)
    assert len(search.cv_results_["params"]) == 110
    assert set(search.best_params_) == {"svc__C", "svc__gamma"}


def test_a_pipeline_not_ending_in_an_svmkit_model_is_refused_naming_its_last_step_and_grid_search_cv():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    X, y = iris()
    with pytest.raises(TypeError, match="last step 'svc' is SVC.*GridSearchCV"):
        SVMSearchCV(make_pipeline(StandardScaler(), SVC()), {"svc__C": [1.0]}).fit(X, y)
    with pytest.raises(TypeError, match="svmkit's estimators.*LibsvmScaler.*GridSearchCV"):
        SVMSearchCV(svmkit.LibsvmScaler(), {"lower": [0.0]}).fit(X, y)


def test_a_pipeline_grid_that_replaces_the_model_is_refused():
    X, y = _dense_heart()
    with pytest.raises(ValueError, match="'svc', which replaces the searched model"):
        SVMSearchCV(_scaled_svc(), {"svc": [svmkit.SVC(), svmkit.NuSVC()]}).fit(X, y)


def test_a_pipeline_grid_under_the_models_own_names_is_refused_naming_the_step_names():
    X, y = _dense_heart()
    with pytest.raises(ValueError, match="names 'C', which Pipeline does not have; did you mean 'svc__C'"):
        SVMSearchCV(_scaled_svc(), {"C": [1.0]}).fit(X, y)


def test_repeated_grid_values_are_evaluated_as_grid_search_cv_evaluates_them():
    X, y = _dense_heart()
    grid = {"C": [1.0, 2.0, 1.0], "gamma": [0.05]}
    ours = SVMSearchCV(svmkit.SVC(), grid).fit(X, y)
    theirs = GridSearchCV(svmkit.SVC(), grid, cv=StratifiedKFold(5)).fit(X, y)
    _assert_same_scores(ours, theirs)


@pytest.mark.parametrize("grid", [[], ()])
def test_an_empty_grid_is_refused_by_name(grid):
    X, y = iris()
    with pytest.raises(ValueError, match="param_grid has no cells"):
        SVMSearchCV(svmkit.SVC(), grid).fit(X, y)


def test_a_grid_where_every_score_is_nan_is_refused_by_name():
    X, y = iris()
    with pytest.raises(ValueError, match="every cell of the grid scored NaN.*scoring"):
        SVMSearchCV(svmkit.SVC(), {"C": [1.0, 2.0]}, scoring=lambda est, X, y: np.nan).fit(X, y)


def test_score_before_fit_raises_not_fitted_error_and_after_refit_false_names_refit():
    from sklearn.exceptions import NotFittedError

    X, y = iris()
    with pytest.raises(NotFittedError):
        SVMSearchCV(svmkit.SVC(), {"C": [1.0]}).score(X, y)
    search = SVMSearchCV(svmkit.SVC(), {"C": [1.0]}, refit=False).fit(X, y)
    with pytest.raises(AttributeError, match="refit=False"):
        search.score(X, y)


@pytest.mark.parametrize("scoring", [None, "accuracy", "balanced_accuracy"])
def test_sample_weight_weights_the_test_folds_as_grid_search_cv_does(scoring):
    X, y = _dense_heart()
    weight = np.random.default_rng(0).uniform(0.1, 3.0, y.size)
    grid = {"C": [0.5, 2.0, 8.0], "gamma": [0.01, 0.1]}
    ours = SVMSearchCV(svmkit.SVC(), grid, scoring=scoring).fit(X, y, sample_weight=weight)
    theirs = GridSearchCV(svmkit.SVC(), grid, scoring=scoring, cv=StratifiedKFold(5)).fit(X, y, sample_weight=weight)
    _assert_same_scores(ours, theirs)


def test_a_scorer_without_sample_weight_is_warned_of_as_grid_search_cv_warns():
    X, y = iris()

    def accuracy(est, X, y):
        return float(np.mean(est.predict(X) == y))

    with pytest.warns(UserWarning, match="does not support sample_weight"):
        SVMSearchCV(svmkit.SVC(), {"C": [1.0]}, scoring=accuracy).fit(X, y, sample_weight=np.ones(y.size))


def test_a_pipelines_sample_weight_weights_its_model_and_the_test_folds():
    import sklearn
    from sklearn.metrics import accuracy_score, make_scorer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _dense_heart()
    weight = np.random.default_rng(1).uniform(0.1, 3.0, y.size)
    grid = {"svc__C": [0.5, 2.0, 8.0], "svc__gamma": [0.01, 0.1]}
    ours = SVMSearchCV(_scaled_svc(), grid).fit(X, y, sample_weight=weight)
    # the oracle routes the weights to the model's fit and the scorer only
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("scale", StandardScaler().set_fit_request(sample_weight=False)),
                         ("svc", svmkit.SVC().set_fit_request(sample_weight=True))])
        scorer = make_scorer(accuracy_score).set_score_request(sample_weight=True)
        theirs = GridSearchCV(pipe, grid, scoring=scorer, cv=StratifiedKFold(5)).fit(X, y, sample_weight=weight)
    _assert_same_scores(ours, theirs)
