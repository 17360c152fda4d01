"""svmkit.registry is the one list of estimators: every registered estimator is public where
its entry says, a model file holds it under its tag and gives it back, scikit-learn's checks
and the fuzzing suite reach it, and nothing else lists one."""

import importlib

import numpy as np
import pytest

import fuzzing
import svmkit
import test_estimator_checks
from svmkit import registry
from svmkit.io.native import SAVABLE

FAMILIES = {"smo", "dense", "linear", "band"}
KINDS = {"classifier", "regressor", "outlier", "transformer", "search"}


@pytest.mark.parametrize("name", registry.ESTIMATORS)
def test_every_estimator_is_public_where_its_entry_says(name):
    entry = registry.ESTIMATORS[name]
    cls = registry.load(entry)
    assert f"{cls.__module__}:{cls.__qualname__}" == entry.home and cls.__name__ == name
    assert name in svmkit.__all__ and getattr(svmkit, name) is cls
    package = importlib.import_module(registry.module_of(name).rpartition(".")[0])
    assert name in package.__all__ and getattr(package, name) is cls
    assert entry.kind in KINDS and (entry.family in FAMILIES) == (entry.kind not in ("search", "transformer"))


def test_the_model_file_table_is_the_registry():
    saved = registry.saved()
    assert set(SAVABLE) == set(saved)
    assert all(SAVABLE[tag] is registry.load(entry) for tag, entry in saved.items())
    assert {name for name, e in registry.ESTIMATORS.items() if e.tag is None} == set(registry.of_kind("search"))


def test_every_estimator_with_a_tag_is_checked_and_every_one_fuzzed():
    assert set(test_estimator_checks.CHECKED) == {n for n, e in registry.ESTIMATORS.items() if e.tag is not None}
    assert set(fuzzing.ESTIMATORS) == set(registry.ESTIMATORS)


def _data(kind):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = {"classifier": np.where(X[:, 0] + X[:, 1] > 0, 1, -1), "regressor": X @ [1.0, -0.5, 0.2]}.get(kind)
    return X, y


@pytest.mark.parametrize("name", [n for n, e in registry.ESTIMATORS.items() if e.tag is not None])
def test_every_estimator_with_a_tag_comes_back_from_a_file(name, tmp_path):
    entry = registry.ESTIMATORS[name]
    X, y = _data(entry.kind)
    est = registry.load(entry)().fit(X, y)
    svmkit.save(est, tmp_path / "m")
    back = svmkit.load(tmp_path / "m")
    assert type(back) is type(est) and back.get_params() == est.get_params()
    apply = "transform" if entry.kind == "transformer" else "predict"
    np.testing.assert_array_equal(getattr(back, apply)(X), getattr(est, apply)(X))
    if entry.family:
        assert set(est.fitted_state()) <= set(entry.fitted)
        assert back.fitted_state().keys() == est.fitted_state().keys()


def test_a_subclass_keeps_its_bases_fitted_state():
    class MySVC(svmkit.SVC):
        pass

    assert registry.fitted_of(MySVC) == registry.ESTIMATORS["SVC"].fitted
    with pytest.raises(TypeError, match="not a registered estimator"):
        registry.fitted_of(int)
