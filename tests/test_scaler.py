"""LibsvmScaler against a line-by-line transcription of svm-scale.c, LIBSVM's own Python scaler,
hand-computed cases, and svm-scale's range files."""

import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from libsvm.commonutil import csr_find_scale_param, csr_scale

from svmkit.io import DataFormatError, load_svmlight
from svmkit.preprocessing import LibsvmScaler

DATA = os.path.join(os.path.dirname(__file__), "data")
DBL_MAX = sys.float_info.max


def _c_max(x, y):
    return x if x > y else y


def _c_min(x, y):
    return x if x < y else y


def svm_scale(path, lower=-1.0, upper=1.0, y_limits=None):
    """svm-scale.c's passes 1 to 3 transcribed: the `-s` range file text, the scaled targets and
    the scaled lines as {index: value} (what output() prints, before its `%g`)."""
    rows = []
    with open(path) as f:
        for line in f:
            label, *items = line.split()
            rows.append((float(label), [(int(i), float(v)) for i, v in (t.split(":") for t in items)]))
    max_index = max((i for _, features in rows for i, _ in features), default=0)
    f_max, f_min = [-DBL_MAX] * (max_index + 1), [DBL_MAX] * (max_index + 1)
    y_max, y_min = -DBL_MAX, DBL_MAX
    for target, features in rows:
        y_max, y_min = _c_max(y_max, target), _c_min(y_min, target)
        next_index = 1
        for index, value in features + [(max_index + 1, None)]:
            for i in range(next_index, index):
                f_max[i], f_min[i] = _c_max(f_max[i], 0), _c_min(f_min[i], 0)
            if value is not None:
                f_max[index], f_min[index] = _c_max(f_max[index], value), _c_min(f_min[index], value)
            next_index = index + 1
    text = ""
    if y_limits:
        text += "y\n%.16g %.16g\n%.16g %.16g\n" % (*y_limits, y_min, y_max)
    text += "x\n%.16g %.16g\n" % (lower, upper)
    text += "".join("%d %.16g %.16g\n" % (i, f_min[i], f_max[i])
                    for i in range(1, max_index + 1) if f_min[i] != f_max[i])

    def output(index, value):
        if f_max[index] == f_min[index]:
            return 0.0
        if value == f_min[index]:
            return lower
        if value == f_max[index]:
            return upper
        return lower + (upper - lower) * (value - f_min[index]) / (f_max[index] - f_min[index])

    def output_target(value):
        if not y_limits:
            return value
        y_lower, y_upper = y_limits
        if value == y_min:
            return y_lower
        if value == y_max:
            return y_upper
        return y_lower + (y_upper - y_lower) * (value - y_min) / (y_max - y_min)

    scaled = []
    for _, features in rows:
        values = dict.fromkeys(range(1, max_index + 1), 0.0) | dict(features)
        line = {i: output(i, v) for i, v in values.items()}
        scaled.append({i: v for i, v in line.items() if v != 0})
    return text, [output_target(t) for t, _ in rows], scaled


def _as_rows(X):
    X = sp.csr_matrix(X)
    return [dict(zip((X.indices[a:b] + 1).tolist(), X.data[a:b].tolist()))
            for a, b in zip(X.indptr[:-1], X.indptr[1:])]


@pytest.mark.parametrize("name", ["heart_scale", "housing_scale", "abalone_scale"])
@pytest.mark.parametrize("lower, upper, y_limits", [(-1.0, 1.0, None), (0.0, 1.0, (-1.0, 1.0)),
                                                    (-0.3, 2.7, (0.0, 100.0))])
def test_matches_svm_scale_exactly(tmp_path, name, lower, upper, y_limits):
    path = os.path.join(DATA, name)
    range_text, y_ref, rows_ref = svm_scale(path, lower, upper, y_limits)
    X, y = load_svmlight(path)
    y_lower, y_upper = y_limits or (None, None)
    scaler = LibsvmScaler(lower, upper, y_lower, y_upper).fit(X, y)
    Xs = scaler.transform(X)
    assert sp.issparse(Xs) and not np.any(Xs.data == 0)
    assert _as_rows(Xs) == rows_ref
    np.testing.assert_array_equal(scaler.transform(X.toarray()), Xs.toarray())
    if y_limits:
        assert scaler.transform_target(y).tolist() == y_ref
    scaler.save_range(tmp_path / "range")
    assert (tmp_path / "range").read_text() == range_text


def test_agrees_with_libsvm_python_scaler():
    X, _ = load_svmlight(os.path.join(DATA, "housing_scale"))
    X = sp.csr_matrix(X)
    for lower in (-1, 0):
        expected = csr_scale(X, csr_find_scale_param(X, lower=lower, upper=1)).toarray()
        np.testing.assert_allclose(LibsvmScaler(lower, 1).fit_transform(X).toarray(), expected, atol=1e-12)


def test_hand_computed_dense_case():
    X = np.array([[1.0, 7.0, 5.0], [3.0, 7.0, -1.0], [2.0, 7.0, 2.0]])
    scaler = LibsvmScaler().fit(X)
    np.testing.assert_array_equal(scaler.feature_min_, [1, 7, -1])
    np.testing.assert_array_equal(scaler.feature_max_, [3, 7, 5])
    np.testing.assert_array_equal(scaler.transform(X), [[-1, 0, 1], [1, 0, -1], [0, 0, 0]])
    # outside the training range: extrapolated, not clipped; the constant feature stays 0
    np.testing.assert_array_equal(scaler.transform([[5.0, 9.0, 8.0]]), [[3, 0, 2]])


def test_sparse_nonnegative_data_keeps_its_pattern_with_lower_zero():
    X = sp.random(200, 50, density=0.05, format="csr", random_state=3)
    X.data += 0.1
    Xs = LibsvmScaler(lower=0.0, upper=1.0).fit_transform(X)
    assert sp.issparse(Xs)
    np.testing.assert_array_equal(Xs.indptr, X.indptr)
    np.testing.assert_array_equal(Xs.indices, X.indices)
    assert Xs.data.max() == 1.0 and Xs.data.min() > 0
    # lower=-1 sends the absent zeros to -1: those columns fill up, as in svm-scale's output
    filled = LibsvmScaler().fit_transform(X)
    np.testing.assert_array_equal(filled.toarray(), LibsvmScaler().fit(X).transform(X.toarray()))
    assert filled.nnz == 200 * np.count_nonzero(X.getnnz(axis=0))


def test_constant_feature_is_dropped(tmp_path):
    X = np.array([[2.0, 5.0, 0.0], [4.0, 5.0, 1.0]])
    scaler = LibsvmScaler().fit(X)
    np.testing.assert_array_equal(scaler.transform([[3.0, 9.0, 0.5]]), [[0.0, 0.0, 0.0]])
    scaler.save_range(tmp_path / "range")
    assert (tmp_path / "range").read_text() == "x\n-1 1\n1 2 4\n3 0 1\n"
    loaded = LibsvmScaler.load_range(tmp_path / "range")
    assert loaded.n_features_in_ == 3
    np.testing.assert_array_equal(loaded.transform(X), scaler.transform(X))


def test_target_scaling_and_its_inverse():
    y = np.array([10.0, 30.0, 20.0, 12.5])
    scaler = LibsvmScaler(y_lower=0, y_upper=1).fit(np.ones((4, 1)), y)
    assert (scaler.y_min_, scaler.y_max_) == (10.0, 30.0)
    scaled = scaler.transform_target(y)
    np.testing.assert_array_equal(scaled, [0.0, 1.0, 0.5, 0.125])
    np.testing.assert_array_equal(scaler.inverse_transform_target(scaled), y)
    with pytest.raises(ValueError, match="fitted without y scaling"):
        LibsvmScaler().fit(np.ones((4, 1)), y).transform_target(y)


def test_range_round_trip_is_exact(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 6)) * 10.0 ** rng.integers(-5, 5, size=6)
    y = rng.normal(size=30)
    scaler = LibsvmScaler(-0.1, 1 / 3, y_lower=-2, y_upper=np.pi).fit(X, y)
    scaler.save_range(tmp_path / "range")
    loaded = LibsvmScaler.load_range(tmp_path / "range")
    assert loaded.get_params() == pytest.approx(scaler.get_params(), abs=0)
    for name in ("feature_min_", "feature_max_", "y_min_", "y_max_"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(scaler, name))
    np.testing.assert_array_equal(loaded.transform(X), scaler.transform(X))
    loaded.save_range(tmp_path / "again")
    assert (tmp_path / "again").read_text() == (tmp_path / "range").read_text()


def test_range_file_written_by_svm_scale(tmp_path):
    # svm-scale -y 0 1 -s: fprintf "y\n", "%.16g %.16g\n" twice, "x\n", "%.16g %.16g\n",
    # then "%d %.16g %.16g\n" for each non-constant feature (here features 2 and 4 are constant)
    path = tmp_path / "range"
    path.write_text("y\n0 1\n-3 5\nx\n-1 1\n1 0 10\n3 -2 2\n")
    scaler = LibsvmScaler.load_range(path, n_features=4)
    assert (scaler.lower, scaler.upper, scaler.y_lower, scaler.y_upper) == (-1, 1, 0, 1)
    np.testing.assert_array_equal(scaler.transform([[5.0, 7.0, 1.0, 9.0], [10.0, 0.0, -2.0, 0.0]]),
                                  [[0.0, 0.0, 0.5, 0.0], [1.0, 0.0, -1.0, 0.0]])
    np.testing.assert_array_equal(scaler.transform_target([-3.0, 5.0, 1.0]), [0.0, 1.0, 0.5])
    assert LibsvmScaler.load_range(path).n_features_in_ == 3
    with pytest.raises(ValueError, match="X has 4 features"):
        LibsvmScaler.load_range(path).transform(np.ones((1, 4)))
    with pytest.raises(DataFormatError, match=r"line 7: feature index 3 is beyond n_features=2"):
        LibsvmScaler.load_range(path, n_features=2)


@pytest.mark.parametrize("text, line, problem", [
    ("", 1, "expected the section header 'x', got the end of the file"),
    ("-1 1\n1 0 1\n", 1, "expected the section header 'x', got '-1 1'"),
    ("y\n0 1\nx\n-1 1\n", 3, "expected 'y_min y_max', got 'x'"),
    ("x\n", 2, "expected 'lower upper', got the end of the file"),
    ("x\n-1 1\n1 0 a\n", 3, "expected 'index min max', got '1 0 a'"),
    ("x\n\n-1 1\n\n1 0 1 2\n", 5, "expected 'index min max', got '1 0 1 2'"),
    ("x\n-1 1\n3 0 1\n2 0 1\n", 4, "feature index 2 does not exceed the previous index 3"),
    ("x\n-1 1\n0 0 1\n", 3, "feature index 0 does not exceed the previous index 0"),
])
def test_malformed_range_file_names_file_and_line(tmp_path, text, line, problem):
    path = tmp_path / "range"
    path.write_text(text)
    with pytest.raises(DataFormatError) as info:
        LibsvmScaler.load_range(path)
    assert str(info.value).startswith(f"{path}, line {line}: {problem}")


@pytest.mark.parametrize("params, message", [
    (dict(lower=1.0, upper=1.0), "upper must be greater than lower"),
    (dict(y_lower=0.0), "y_lower and y_upper must be given together"),
    (dict(y_lower=1.0, y_upper=0.0), "y_upper must be greater than y_lower"),
    (dict(lower="a"), "lower must be a real number"),
])
def test_invalid_parameters_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        LibsvmScaler(**params).fit(np.eye(2), [0.0, 1.0])


def test_y_scaling_needs_y():
    with pytest.raises(ValueError, match="y is required"):
        LibsvmScaler(y_lower=0, y_upper=1).fit(np.eye(2))


@pytest.mark.parametrize("lower, upper", [(-1.0, 1.0), (0.0, 1.0), (-3.0, 0.5)])
@pytest.mark.parametrize("sparse", [False, True])
def test_inverse_transform_undoes_transform(lower, upper, sparse):
    """On the scaled range: lower and upper go back exactly to each feature's training min and
    max, the values between to rounding; a constant feature (scaled to 0) back to its constant;
    CSR in, CSR out."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4)) * [1.0, 1e3, 1e-3, 0.0] + [0.0, 5.0, -2.0, 7.0]
    X[rng.random(X.shape) < 0.3] = 0.0
    X[:, 3] = 7.0
    Xin = sp.csr_matrix(X) if sparse else X
    scaler = LibsvmScaler(lower, upper).fit(Xin)
    back = scaler.inverse_transform(scaler.transform(Xin))
    assert sp.issparse(back) == sparse
    back = back.toarray() if sparse else back
    assert (np.abs(back - X) <= 1e-13 * np.abs(X).max(axis=0)).all()
    ends = (X == X.min(axis=0)) | (X == X.max(axis=0))
    np.testing.assert_array_equal(back[ends], X[ends])


def test_inverse_transform_checks_the_width():
    scaler = LibsvmScaler().fit(np.eye(3))
    with pytest.raises(ValueError, match="X has 2 features, but LibsvmScaler is expecting 3 features"):
        scaler.inverse_transform(np.zeros((1, 2)))
