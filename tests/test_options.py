"""svmkit.Options: the execution settings every model takes as one `options` parameter, its
checks naming the field, the fields a model does not read refused naming both, and the model
files that keep them as the parameters they were before."""

import numpy as np
import pytest
from sklearn.base import clone

import svmkit
from conftest import iris
from test_file_faults import _native_header, _rewrite_header
from svmkit import Options
from svmkit.backend import DeviceUnavailableError, cuda_available
from svmkit.options import FIELDS, options_of

#: Each model that takes options, and the fields it reads.
READS = {"SVC": FIELDS, "SVR": FIELDS, "NuSVC": ("device",), "NuSVR": ("device",), "OneClassSVM": ("device",),
         "KernelQuantileRegressor": ("device",), "KernelRidge": ("device", "scheduler_address"),
         "LSSVR": ("device", "scheduler_address"), "LSSVC": ("device", "scheduler_address"),
         "KernelLogisticRegression": ("device", "scheduler_address"), "LinearSVC": ("scheduler_address",),
         "LinearSVR": ("scheduler_address",)}
#: A value other than the default of each field, valid for it.
CHANGED = {"device": "cuda", "scheduler_address": "tcp://127.0.0.1:8786", "max_rounds": 2, "partitioning": "kmeans"}


@pytest.mark.parametrize("name", READS)
def test_options_survive_clone_get_params_and_set_params(name):
    options = Options(**{field: CHANGED[field] for field in READS[name]})
    est = getattr(svmkit, name)(options=options)
    assert est.get_params()["options"] is options
    assert clone(est).options == options
    assert clone(est.set_params(options=None)).options is None
    assert options_of(est) == Options()


@pytest.mark.parametrize("field, value", [("device", "gpu"), ("scheduler_address", 8786), ("max_rounds", -1),
                                          ("max_rounds", 1.5), ("partitioning", "random")])
def test_a_bad_field_is_named(field, value):
    X, y = iris()
    with pytest.raises(ValueError, match=rf"options\.{field} must be .*got options\.{field}={value!r}"):
        svmkit.SVC(options=Options(**{field: value})).fit(X, y)
    with pytest.raises(ValueError, match=rf"options\.{field} must be"):
        Options(**{field: value}).check()


def test_options_must_be_an_options_object():
    X, y = iris()
    with pytest.raises(ValueError, match=r"options must be None or an svmkit.Options, got options=\{'device'"):
        svmkit.SVC(options={"device": "cpu"}).fit(X, y)


@pytest.mark.parametrize("name, field", [(name, field) for name, reads in READS.items()
                                         for field in FIELDS if field not in reads])
def test_a_field_a_model_does_not_read_is_refused_naming_both(name, field):
    X, y = iris()
    est = getattr(svmkit, name)(options=Options(**{field: CHANGED[field]}))
    with pytest.raises(ValueError, match=rf"{name} does not use options\.{field}, got options\.{field}="):
        est.fit(X, y)


def test_the_old_parameters_are_gone():
    with pytest.raises(TypeError, match="unexpected keyword argument 'device'"):
        svmkit.SVC(device="cuda")
    with pytest.raises(TypeError, match="unexpected keyword argument 'scheduler_address'"):
        svmkit.KernelRidge(scheduler_address="tcp://127.0.0.1:8786")


def test_a_model_file_keeps_the_changed_fields_as_the_parameters_they_were(tmp_path):
    X, y = iris()
    est = svmkit.SVC(options=Options(max_rounds=3)).fit(X, y)
    svmkit.save(est, tmp_path / "m.svm")
    header, _ = _native_header(tmp_path / "m.svm")
    assert "options" not in header["params"] and header["params"]["max_rounds"] == 3
    back = svmkit.load(tmp_path / "m.svm")
    assert back.get_params() == est.get_params()
    svmkit.save(svmkit.SVC().fit(X, y), tmp_path / "plain.svm")
    assert not set(FIELDS) & set(_native_header(tmp_path / "plain.svm")[0]["params"])
    assert svmkit.load(tmp_path / "plain.svm").options is None


@pytest.mark.parametrize("name, old", [
    ("SVC", {"device": "cpu", "scheduler_address": "tcp://10.0.0.1:8786", "max_rounds": 4, "partitioning": "kmeans"}),
    ("KernelRidge", {"device": "cpu", "scheduler_address": None}),
    ("LinearSVC", {"scheduler_address": None})])
def test_a_model_file_written_before_options_loads(tmp_path, name, old):
    """The header of a file of svmkit before Options: the settings among the parameters."""
    X, y = iris()
    est = getattr(svmkit, name)().fit(X, y)
    svmkit.save(est, tmp_path / "new.svm")
    header, arrays = _native_header(tmp_path / "new.svm")
    _rewrite_header(tmp_path / "old.svm", {**header, "params": {**header["params"], **old}}, arrays)
    back = svmkit.load(tmp_path / "old.svm")
    assert options_of(back) == Options(**old)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))


def test_an_old_file_with_an_unknown_device_is_refused_naming_it(tmp_path):
    X, y = iris()
    svmkit.save(svmkit.SVC().fit(X, y), tmp_path / "new.svm")
    header, arrays = _native_header(tmp_path / "new.svm")
    _rewrite_header(tmp_path / "bad.svm", {**header, "params": {**header["params"], "device": "tpu"}}, arrays)
    with pytest.raises(svmkit.ModelFileError, match=r"bad.svm.*options\.device must be one of"):
        svmkit.load(tmp_path / "bad.svm")


def test_options_are_frozen_and_say_what_changed():
    options = Options(device="cuda")
    with pytest.raises(AttributeError):
        options.device = "cpu"
    assert options.changed() == {"device": "cuda"} and Options().changed() == {}
    assert options == Options(device="cuda") and options.check() is options


@pytest.mark.skipif(cuda_available(), reason="this machine has a CUDA device")
def test_a_dask_fit_on_the_gpu_where_the_workers_have_none_says_what_is_missing():
    da = pytest.importorskip("dask.array")
    X, y = iris()
    with pytest.raises(DeviceUnavailableError, match=r"device='cuda'"):
        svmkit.SVC(options=Options(device="cuda")).fit(da.from_array(X, chunks=(50, -1)), da.from_array(y, chunks=50))
