"""Damaged or edited files (issue 41): every fault is a ModelFileError or DataFormatError naming
the file, never a crash, a raw decoder error or a model that loads and predicts nonsense."""

import bz2
import gzip
import io
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import svmkit
from conftest import DATA, heart_scale
from svmkit.exceptions import DataFormatError, ModelFileError
from svmkit.io.libsvm_model import load_libsvm_model, save_libsvm_model
from svmkit.io.native import MAGIC


@pytest.fixture(scope="module")
def fitted():
    X, y = heart_scale()
    return svmkit.SVC(probability=True).fit(X[:60], y[:60]), X[:60]


def _edit(text, old, new):
    assert old in text
    return text.replace(old, new, 1)


#: name → (edit of a good binary C-SVC file with probA/probB, expected message)
LIBSVM_FAULTS = {
    "sv index beyond a 32-bit int": (lambda t: _edit(t, "\nSV\n1 ", "\nSV\n1 3000000000:1 "),
                                     r"line 12: feature index 3000000000 does not fit in a 32-bit int"),
    "sv indices not ascending": (lambda t: _edit(t, "\nSV\n1 1:", "\nSV\n1 5:1 1:"), "line 12: .*strictly ascending"),
    "rho nan": (lambda t: t.replace("\nrho ", "\nrho nan #"), r"line 6: bad value for rho.*not a finite"),
    "nan coefficient": (lambda t: _edit(t, "\nSV\n1 ", "\nSV\nnan "), r"line 12: coefficient 'nan': not a finite"),
    "inf feature value": (lambda t: _edit(t, "\nSV\n1 1:", "\nSV\n1 1:inf 2:"), "line 12: value of feature 1"),
    "gamma inf": (lambda t: t.replace("\ngamma ", "\ngamma inf #"), r"line 3: bad value for gamma"),
    "duplicate labels": (lambda t: _edit(t, "label -1 1", "label 1 1"), r"line 7: repeated class label"),
    "total_sv too small": (lambda t: t.replace("total_sv ", "total_sv 1"), "nr_sv adds up to"),
    "extra sv line": (lambda t: t + t.split("\nSV\n")[1].splitlines()[0] + "\n",
                      r"expected (\d+) support vectors \(total_sv\), found \d+ lines"),
    "three probA for one pair": (lambda t: _edit(t, "\nprobA ", "\nprobA 1 2 "),
                                 r"line 8: probA has 3 values; nr_class 2 needs 1"),
    "probA without probB": (lambda t: "\n".join(l for l in t.split("\n") if not l.startswith("probB")),
                            r"line 8: a classifier needs both probA and probB"),
    "fractional nr_class": (lambda t: _edit(t, "nr_class 2", "nr_class 2.5"), r"line 4: bad value for nr_class"),
    "negative nr_sv": (lambda t: re.sub(r"\nnr_sv .*", "\nnr_sv -1 48", t),
                       r"line 10: nr_sv \[-1, 48\] has a negative count"),
    "repeated keyword": (lambda t: _edit(t, "nr_class 2\n", "nr_class 2\nnr_class 2\n"), r"line 5: nr_class repeated"),
    "two values for total_sv": (lambda t: _edit(t, "\ntotal_sv ", "\ntotal_sv 7 "), "bad value for total_sv.*one value"),
}


@pytest.mark.parametrize("fault", sorted(LIBSVM_FAULTS))
def test_libsvm_model_fault_is_named(fault, fitted, tmp_path):
    est, X = fitted
    good = tmp_path / "good.model"
    save_libsvm_model(est, good)
    load_libsvm_model(good).predict(X)
    edit, message = LIBSVM_FAULTS[fault]
    bad = tmp_path / "bad.model"
    bad.write_text(edit(good.read_text()))
    _refused_naming(load_libsvm_model, bad, message)


def test_regressor_model_with_a_classifier_field_is_refused(tmp_path):
    X, y = heart_scale()
    path = tmp_path / "svr.model"
    save_libsvm_model(svmkit.SVR().fit(X[:50], y[:50]), path)
    path.write_text(_edit(path.read_text(), "total_sv", "probB 1\ntotal_sv"))
    with pytest.raises(ModelFileError, match="line 5: a epsilon_svr model has no probB line"):
        load_libsvm_model(path)


def test_precomputed_sv_id_must_be_whole(tmp_path):
    X, y = heart_scale()
    K = X[:40] @ X[:40].T
    path = tmp_path / "pre.model"
    save_libsvm_model(svmkit.SVC(kernel="precomputed").fit(K.toarray(), y[:40]), path)
    head, body = path.read_text().split("\nSV\n")
    coef, _ = body.split(" ", 1)
    path.write_text(f"{head}\nSV\n{coef} 0:1.5\n{body.split(chr(10), 1)[1]}")
    with pytest.raises(ModelFileError, match="0:ID, ID a whole number"):
        load_libsvm_model(path)


def test_binary_file_is_not_a_libsvm_model(tmp_path):
    path = tmp_path / "blob.model"
    path.write_bytes(b"svm_type c_svc\n\xff\xfe\x00binary")
    with pytest.raises(ModelFileError, match=r"blob.model, line 2: byte 0xff at offset 15 is not text"):
        load_libsvm_model(path)


def _refused_naming(load, path, message):
    """`load(path)` raises a ModelFileError that starts with the file's path and says `message`."""
    with pytest.raises(ModelFileError, match=message) as info:
        load(path)
    assert str(info.value).startswith(str(path))


def _native_parts(path):
    blob = path.read_bytes()
    start = len(MAGIC) + 8 + int.from_bytes(blob[len(MAGIC):len(MAGIC) + 8], "little")
    with np.load(io.BytesIO(blob[start:])) as archive:
        return blob[:start], {key: archive[key] for key in archive.files}


def _edited_native(path, changes):
    """Rewrite the arrays of a native file with `changes` (None: drop the array)."""
    head, state = _native_parts(path)
    buf = io.BytesIO()
    np.savez_compressed(buf, **{k: v for k, v in {**state, **changes}.items() if v is not None})
    path.write_bytes(head + buf.getvalue())


NATIVE_FAULTS = {
    "nan dual coefficient": (lambda s: {"_dual_coef_": np.where(np.arange(s["_dual_coef_"].size) == 3, np.nan,
                                                                s["_dual_coef_"])}, "_dual_coef_ holds a value that"),
    "inf intercept": (lambda s: {"_intercept_": s["_intercept_"] + np.inf}, "_intercept_ holds a value that"),
    "n_support_ sum": (lambda s: {"n_support_": s["n_support_"] + 1}, r"n_support_ .* does not add up"),
    "dual_coef_ columns": (lambda s: {"_dual_coef_": s["_dual_coef_"][:, 1:]}, "one column per support vector"),
    "support_ rows": (lambda s: {"support_": s["support_"][1:], "n_support_": s["n_support_"] - [1, 0],
                                 "_dual_coef_": s["_dual_coef_"][:, 1:]}, "support_vectors_ has"),
    "csr index out of range": (lambda s: {"support_vectors_.indices": s["support_vectors_.indices"] + 100},
                               "indices must be < 13"),
    "missing array": (lambda s: {"shape_fit_": None}, r"missing arrays \['shape_fit_'\]"),
    "unknown array": (lambda s: {"surprise": np.zeros(1)}, r"unknown arrays \['surprise'\]"),
    # found by the fuzzing suite: these loaded, then predicted the wrong shape or failed inside NumPy
    "n_features_in_ huge": (lambda s: {"n_features_in_": np.int64(2**40)}, "support_vectors_ has 13 columns for "
                                                                             "n_features_in_=1099511627776"),
    "n_features_in_ a vector": (lambda s: {"n_features_in_": np.array([13, 13])}, "n_features_in_ .* is not a positive"),
    "intercept short": (lambda s: {"_intercept_": s["_intercept_"][1:]}, r"_intercept_ of shape \(0,\) for 2 classes"),
    "one class too many": (lambda s: {"classes_": np.array([-1.0, 1.0, 2.0])}, "classes_ has 3 labels but n_support_ 2"),
    "negative row number": (lambda s: {"bounded_support_": -s["bounded_support_"] - 1},
                            "bounded_support_ is not a vector of row numbers"),
    "class weights missing": (lambda s: {"class_weight_": s["class_weight_"][:0]}, "class_weight_ has 0 weights"),
    "nan loo bound": (lambda s: {"loo_bound_": np.float64(np.nan)}, "loo_bound_ holds a value that"),
    "probA_ of rank 2": (lambda s: {"probA_": s["probA_"].reshape(1, -1)}, r"probA_ of shape \(1, 1\) for 1 pairs"),
    # issue 53's: edited consistently, these loaded and predicted
    "classes_ repeated": (lambda s: {"classes_": np.array([1.0, 1.0])}, r"classes_ \[1.0, 1.0\] repeats a label"),
    "classes_ of rank 2": (lambda s: {"classes_": s["classes_"].reshape(1, 2)},
                           r"classes_ of shape \(1, 2\) .* is not a vector"),
    "classes_ nan": (lambda s: {"classes_": np.array([np.nan, 1.0])}, "classes_ .* not a finite number"),
    "n_support_ of rank 2": (lambda s: {"n_support_": s["n_support_"].reshape(1, 2)}, r"n_support_ .* does not add up"),
    "gamma_ zero": (lambda s: {"gamma_": np.float64(0.0)}, r"gamma_=0.0 is not positive, which gamma='scale'"),
    "negative class weight": (lambda s: {"class_weight_": -s["class_weight_"]}, "class_weight_ holds a negative"),
    "csr shape of floats": (lambda s: {"support_vectors_.shape": s["support_vectors_.shape"] + 0.5},
                            "sparse indices, indptr and shape must be integers"),
}


@pytest.mark.parametrize("fault", sorted(NATIVE_FAULTS))
def test_native_model_fault_is_named(fault, fitted, tmp_path):
    est, _ = fitted
    path = tmp_path / "m.svmkit"
    svmkit.save(est, path)
    _, state = _native_parts(path)
    change, message = NATIVE_FAULTS[fault]
    _edited_native(path, change(state))
    _refused_naming(svmkit.load, path, message)


def test_native_byte_flips_load_correctly_or_raise_model_file_error(fitted, tmp_path):
    est, X = fitted
    path = tmp_path / "m.svmkit"
    svmkit.save(est, path)
    good = path.read_bytes()
    expected = est.decision_function(X)
    step = max(len(good) // 200, 1)
    outcomes = set()
    for pos in range(0, len(good), step):
        flipped = bytearray(good)
        flipped[pos] ^= 0xFF
        path.write_bytes(bytes(flipped))
        try:
            back = svmkit.load(path)
        except ModelFileError as exc:
            assert str(exc).startswith(str(path))
            outcomes.add("refused")
            continue
        # the JSON header's parameters are not checksummed; the arrays (zip CRC) are
        np.testing.assert_allclose(back.decision_function(X), expected, err_msg=f"flip at byte {pos}")
        outcomes.add("loaded")
    assert outcomes == {"refused", "loaded"}


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress], ids=["gz", "bz2"])
@pytest.mark.parametrize("damage", ["truncated", "flipped", "not compressed"])
def test_damaged_compressed_data_file_is_named(compress, damage, tmp_path):
    blob = compress((DATA / "heart_scale").read_bytes())
    bad = {"truncated": blob[:len(blob) // 2], "flipped": blob[:40] + bytes([blob[40] ^ 0xFF]) + blob[41:],
           "not compressed": b"+1 1:0.5\n"}[damage]
    path = tmp_path / ("data.gz" if compress is gzip.compress else "data.bz2")
    path.write_bytes(bad)
    with pytest.raises(DataFormatError, match=rf"^{path}: cannot decompress it"):
        svmkit.load_svmlight(path)


@pytest.mark.parametrize("command", ["info", "predict"])
def test_cli_names_a_damaged_model_in_one_line(command, fitted, tmp_path):
    est, _ = fitted
    path = tmp_path / "m.svmkit"
    svmkit.save(est, path)
    blob = bytearray(path.read_bytes())
    blob[-200] ^= 0xFF  # inside the zip archive's compressed arrays
    path.write_bytes(bytes(blob))
    args = [path] if command == "info" else [DATA / "heart_scale", path, tmp_path / "out"]
    result = subprocess.run([sys.executable, "-m", "svmkit.cli.main", command, *map(str, args)],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.startswith(f"svmkit {command}: error: {path}: ") and result.stderr.count("\n") == 1


def _linear_model(tmp_path):
    from svmkit.io.liblinear_model import save_liblinear_model

    X, y = heart_scale()
    path = tmp_path / "linear.model"
    save_liblinear_model(svmkit.LinearSVC().fit(X[:60], y[:60]), path)
    return path


def _first_weight_nan(text):
    head, body = text.split("\nw\n")
    return f"{head}\nw\nnan\n{body.split(chr(10), 1)[1]}"


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("\nw\n", "\nw\n\xff"), r"line \d+: byte 0xff at offset \d+ is not text: not a LIBLINEAR"),
    (_first_weight_nan, "a weight that is not a finite"),
    (lambda t: t.replace("label 1 -1", "label 1 1"), "label line with nr_class = 2 distinct values"),
    (lambda t: t.replace("label 1 -1", "label 1 x"), "labels '1 x' are not all integers"),
    (lambda t: t.replace("bias 1", "bias nan"), r"bias nan \(finite\) out of range"),
])
def test_liblinear_model_fault_is_named(edit, message, tmp_path):
    """The LIBLINEAR reader, found by the fuzzing suite: a binary byte was a UnicodeDecodeError,
    NaN weights and repeated labels loaded, a non-integer label was a bare ValueError."""
    from svmkit.io.liblinear_model import load_liblinear_model

    path = _linear_model(tmp_path)
    path.write_bytes(edit(path.read_text()).encode("latin-1"))
    _refused_naming(load_liblinear_model, path, message)


_HUGE_INDEX = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
import numpy as np
from conftest import heart_scale
from svmkit.io.data import pad_columns
from svmkit.io.libsvm_model import load_libsvm_model
model = load_libsvm_model(sys.argv[1])
X, _ = heart_scale()
print(model.n_features_in_, np.isfinite(model.decision_function(pad_columns(X[:60], model.n_features_in_))).all())
"""


def test_libsvm_model_with_a_feature_index_of_two_billion_loads_and_predicts(fitted, tmp_path):
    """Issue 41's crash: an SV index of 2,000,000,000 sized a 14.9 GiB array by the index. Now
    the model loads and predicts under a 4 GiB address-space limit."""
    est, _ = fitted
    path = tmp_path / "m.model"
    save_libsvm_model(est, path)
    head, body = path.read_text().split("\nSV\n")
    first, rest = body.split("\n", 1)
    path.write_text(f"{head}\nSV\n{first.rstrip()} 2000000000:1\n{rest}")
    tests = str(DATA.parent)
    result = subprocess.run([sys.executable, "-c", _HUGE_INDEX, str(path)], capture_output=True, text=True, cwd=tests,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join([tests, *sys.path])})
    assert result.stdout.split() == ["2000000000", "True"], result.stderr[-2000:]


def _native_header(path):
    blob = path.read_bytes()
    n = int.from_bytes(blob[len(MAGIC):len(MAGIC) + 8], "little")
    return json.loads(blob[len(MAGIC) + 8:len(MAGIC) + 8 + n]), blob[len(MAGIC) + 8 + n:]


def _rewrite_header(path, header, arrays):
    blob = json.dumps(header).encode()
    path.write_bytes(MAGIC + len(blob).to_bytes(8, "little") + blob + arrays)


#: name → (edit of the header of a saved SVC, expected message)
HEADER_FAULTS = {
    "estimator a list": (lambda h: {**h, "estimator": ["SVC"]}, r"corrupt model header \(estimator must be a string"),
    "estimator a dict": (lambda h: {**h, "estimator": {"SVC": 1}}, "estimator must be a string"),
    "kernel a list": (lambda h: {**h, "params": {**h["params"], "kernel": ["rbf"]}}, "parameter kernel holds"),
    "class_weight keys a list": (lambda h: {**h, "params": {**h["params"], "class_weight": {"dict": [[[1], 2.0]]}}},
                                 "parameter class_weight holds"),
    "C negative": (lambda h: {**h, "params": {**h["params"], "C": -1.0}}, r"C must be > 0, got C=-1.0"),
    "gamma negative": (lambda h: {**h, "params": {**h["params"], "gamma": -0.5}}, "gamma must be non-negative"),
    "gamma not the fitted one": (lambda h: {**h, "params": {**h["params"], "gamma": 0.5}},
                                 r"gamma_=.* differs from the parameter gamma=0.5"),
    "object_arrays a string": (lambda h: {**h, "object_arrays": "classes_"}, "object_arrays must be a list"),
    "object array of numbers": (lambda h: {**h, "object_arrays": ["classes_"]}, "not an array of strings"),
    "steps not a list": (lambda h: {**h, "estimator": "Pipeline", "steps": "SVC"}, "steps must be a non-empty list"),
    "step without a name": (lambda h: {**h, "estimator": "Pipeline", "steps": [{"estimator": "SVC", "params": {}}]},
                            "a Pipeline step must be an object with a string name"),
    "step unknown": (lambda h: {**h, "estimator": "Pipeline", "steps": [{"name": "s", "estimator": "PCA"}]},
                     "unknown estimator 'PCA'"),
}


@pytest.mark.parametrize("fault", sorted(HEADER_FAULTS))
def test_native_header_fault_is_named(fault, fitted, tmp_path):
    """A header value of the wrong type was a TypeError (unhashable type), an out-of-range
    parameter loaded."""
    est, _ = fitted
    path = tmp_path / "m.svmkit"
    svmkit.save(est, path)
    header, arrays = _native_header(path)
    edit, message = HEADER_FAULTS[fault]
    _rewrite_header(path, edit(header), arrays)
    _refused_naming(svmkit.load, path, message)


def test_native_pipeline_fault_is_named(tmp_path):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = heart_scale()
    path = tmp_path / "pipe.svmkit"
    svmkit.save(make_pipeline(StandardScaler(with_mean=False), svmkit.SVC()).fit(X[:60], y[:60]), path)
    _, state = _native_parts(path)
    for change, message in [({"0/scale_": state["0/scale_"][1:]}, r"scale_ of shape \(12,\) for n_features_in_=13"),
                            ({"0/scale_": -state["0/scale_"]}, r"scale_ holds a value out of range \(must be > 0\)"),
                            ({"0/var_": None}, r"missing arrays \['var_'\]"),
                            ({"2/scale_": state["0/scale_"]}, r"unknown arrays \['2/scale_'\]")]:
        svmkit.save(make_pipeline(StandardScaler(with_mean=False), svmkit.SVC()).fit(X[:60], y[:60]), path)
        _edited_native(path, change)
        _refused_naming(svmkit.load, path, message)


def test_a_linear_model_with_two_dimensional_classes_is_named(tmp_path):
    X, y = heart_scale()
    path = tmp_path / "linear.svmkit"
    svmkit.save(svmkit.LinearSVC().fit(X[:60], y[:60]), path)
    _, state = _native_parts(path)
    _edited_native(path, {"classes_": state["classes_"].reshape(1, 2)})
    with pytest.raises(ModelFileError, match=r"classes_ of shape \(1, 2\)"):
        svmkit.load(path)


@pytest.mark.parametrize("kernel, line", [("polynomial", "degree"), ("polynomial", "gamma"), ("polynomial", "coef0"),
                                          ("rbf", "gamma"), ("sigmoid", "coef0")])
def test_libsvm_model_without_a_line_its_kernel_reads_is_named(kernel, line, tmp_path):
    """LIBSVM's svm_load_model leaves a missing degree, gamma or coef0 uninitialised (read_model_header
    assigns them only from their lines), so there is no default of LIBSVM's to load it with."""
    X, y = heart_scale()
    est = svmkit.SVC(kernel={"polynomial": "poly"}.get(kernel, kernel), gamma=0.1).fit(X[:60], y[:60])
    path = tmp_path / "m.model"
    save_libsvm_model(est, path)
    path.write_text("".join(l for l in path.read_text().splitlines(True) if not l.startswith(f"{line} ")))
    with pytest.raises(ModelFileError, match=rf"m.model, line \d+: the header has no {line} line, which a {kernel} "
                                             "kernel needs") as info:
        load_libsvm_model(path)
    assert str(info.value).startswith(str(path))


def test_libsvm_model_with_a_parameter_out_of_range_is_named(tmp_path):
    X, y = heart_scale()
    path = tmp_path / "m.model"
    save_libsvm_model(svmkit.SVC(kernel="poly").fit(X[:60], y[:60]), path)
    path.write_text(path.read_text().replace("degree 3", "degree -2"))
    with pytest.raises(ModelFileError, match=r"m.model: the model's parameters or arrays are inconsistent .*degree"):
        load_libsvm_model(path)
