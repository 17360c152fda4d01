"""LIBSVM data files: exact round trips, agreement with scikit-learn's loader, and errors that
name the file, line and column of the offending token."""

import bz2
import gzip
import os
import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.datasets import load_svmlight_files as sk_load_svmlight_files

from svmkit.io import DataFormatError, dump_svmlight, load_svmlight, load_svmlight_files

HEART = os.path.join(os.path.dirname(__file__), "data", "heart_scale")


def _write(tmp_path, text, name="bad.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return str(path)


def _awkward_values(rng, n):
    """Values whose decimal forms need all 17 digits, plus extremes of the double range."""
    v = rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, size=n)
    v[:4] = [np.finfo(float).tiny, np.finfo(float).max, -5e-324, 1 / 3]
    return v


def test_heart_scale_matches_sklearn():
    X, y = load_svmlight(HEART)
    X_ref, y_ref = load_svmlight_file(HEART)
    assert sp.issparse(X) and X.format == "csr" and X.indices.dtype == np.int32
    assert X.shape == X_ref.shape == (270, 13)
    np.testing.assert_array_equal(X.toarray(), X_ref.toarray())
    np.testing.assert_array_equal(y, y_ref)
    X_dense, _ = load_svmlight(HEART, dense=True)
    assert isinstance(X_dense, np.ndarray)
    np.testing.assert_array_equal(X_dense, X_ref.toarray())


def test_dense_round_trip_is_exact(tmp_path):
    rng = np.random.default_rng(0)
    X = _awkward_values(rng, 40 * 7).reshape(40, 7)
    X[rng.random(X.shape) < 0.3] = 0.0
    y = np.concatenate([[1.0, -1.0, 0.5, 1e300], rng.normal(size=36)])
    path = tmp_path / "dense.txt"
    dump_svmlight(X, y, path, comment="first line\nsecond line")
    X2, y2 = load_svmlight(path, n_features=7, dense=True)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)
    lines = path.read_text().splitlines()
    assert lines[:2] == ["# first line", "# second line"]
    assert lines[2].startswith("1 ") and lines[3].startswith("-1 ")


def test_sparse_round_trip_drops_zeros_and_is_exact(tmp_path):
    rng = np.random.default_rng(1)
    X = sp.random(60, 30, density=0.2, format="csr", random_state=2)
    X.data = _awkward_values(rng, X.nnz)
    X.data[:3] = 0.0  # stored zeros are not written
    y = rng.integers(1, 4, size=60).astype(float)
    path = tmp_path / "sparse.txt"
    dump_svmlight(X, y, path)
    assert ":0 " not in path.read_text() and re.match(r"^[123] ", path.read_text())
    X2, y2 = load_svmlight(path, n_features=30)
    assert X2.nnz == X.nnz - 3
    np.testing.assert_array_equal(X2.toarray(), X.toarray())
    np.testing.assert_array_equal(y2, y)


def test_query_id_round_trip(tmp_path):
    X = np.array([[1.0, 0.0], [0.0, 2.5], [3.0, 4.0]])
    y = np.array([3.0, 2.0, 1.0])
    qid = np.array([1, 1, 7])
    path = tmp_path / "rank.txt"
    dump_svmlight(X, y, path, query_id=qid)
    assert path.read_text() == "3 qid:1 1:1\n2 qid:1 2:2.5\n1 qid:7 1:3 2:4\n"
    X2, y2, qid2 = load_svmlight(path, query_id=True, dense=True)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_array_equal(qid2, qid)
    X3, _ = load_svmlight(path)  # qid is skipped unless asked for
    assert X3.shape == (3, 2)


@pytest.mark.parametrize("opener, suffix", [(bz2.open, ".bz2"), (gzip.open, ".gz")])
def test_compressed_files(tmp_path, opener, suffix):
    path = tmp_path / ("heart_scale" + suffix)
    with open(HEART, "rb") as src, opener(path, "wb") as dst:
        dst.write(src.read())
    X, y = load_svmlight(path)
    X_ref, y_ref = load_svmlight(HEART)
    np.testing.assert_array_equal(X.toarray(), X_ref.toarray())
    np.testing.assert_array_equal(y, y_ref)


def test_comments_blank_lines_and_crlf_are_accepted(tmp_path):
    path = _write(tmp_path, "# header 0:x _\n\n+1 1:0.5 3:-2 # 0:bad 1_0\r\n-1\r\n")
    X, y = load_svmlight(path, dense=True)
    np.testing.assert_array_equal(X, [[0.5, 0.0, -2.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(y, [1.0, -1.0])


MALFORMED = [
    ("1 1:0.5\nabc 1:2\n", 2, 1, "label 'abc' is not a number"),
    ("1 1:0.5 2:x\n", 1, 9, "feature value 'x' of index 2 is not a number"),
    ("1 1:0.5 junk 3:1\n", 1, 9, "token 'junk' is not of the form index:value"),
    ("1 1:1\n-1 1:1\n+1 2:1 1.5:2\n", 3, 8, "feature index '1.5' is not an integer"),
    ("1 1:1\n1 2:1\n-1 0:1 2:3\n", 3, 4, "feature index 0 is not positive (LIBSVM indices start at 1)"),
    ("1 -2:1\n", 1, 3, "feature index -2 is not positive"),
    ("1 3:1 2:1\n", 1, 7, "feature index 2 does not exceed the previous index 3"),
    ("1 3:1 3:2\n", 1, 7, "feature index 3 does not exceed the previous index 3"),
    ("1 1:1\n1:0.5 2:1\n", 2, 1, "missing label (the line starts with the feature '1:0.5')"),
    ("1_0 1:1\n", 1, 1, "label '1_0' is not a number"),
    ("1 1:1 2:1_5\n", 1, 7, "feature value '1_5' of index 2 is not a number"),
    ("1 1:1 3000000000:1\n", 1, 7, "feature index 3000000000 does not fit in a 32-bit int"),
]


@pytest.mark.parametrize("text, line, column, problem", MALFORMED)
def test_malformed_file_names_line_and_column(tmp_path, text, line, column, problem):
    path = _write(tmp_path, text)
    with pytest.raises(DataFormatError) as info:
        load_svmlight(path)
    assert str(info.value).startswith(f"{path}, line {line}, column {column}: {problem}")
    assert isinstance(info.value, ValueError)


def test_n_features_too_small_and_bad_qid_are_located(tmp_path):
    path = _write(tmp_path, "1 1:1\n2 1:1 5:2\n")
    with pytest.raises(DataFormatError, match=r", line 2, column 7: feature index 5 is beyond n_features=4"):
        load_svmlight(path, n_features=4)
    path = _write(tmp_path, "1 qid:1 1:1\n2 1:1\n", name="rank.txt")
    with pytest.raises(DataFormatError, match=r"rank.txt, line 2, column 3: missing qid:N after the label"):
        load_svmlight(path, query_id=True)
    path = _write(tmp_path, "1 qid:1 1:1\n2 qid:x 1:1\n", name="rank.txt")
    with pytest.raises(DataFormatError, match=r"line 2, column 3: query id 'qid:x' is not of the form qid:integer"):
        load_svmlight(path, query_id=True)


@pytest.mark.parametrize("text", ["", "# only a comment\n\n   \n"])
def test_file_without_data_names_the_file(tmp_path, text):
    path = _write(tmp_path, text, name="empty.txt")
    with pytest.raises(DataFormatError, match=re.escape(f"{path}: no data lines")):
        load_svmlight(path)


def test_zero_based_files(tmp_path):
    path = _write(tmp_path, "1 0:2 2:3\n")
    X, _ = load_svmlight(path, zero_based=True, dense=True)
    np.testing.assert_array_equal(X, [[2.0, 0.0, 3.0]])
    with pytest.raises(DataFormatError, match="column 3: feature index 0 is not positive"):
        load_svmlight(path)


def test_several_files_share_one_width(tmp_path):
    train = _write(tmp_path, "1 1:1 2:2\n", name="train.txt")
    test = _write(tmp_path, "-1 5:1\n", name="test.txt")
    X1, y1, X2, y2 = load_svmlight_files([train, test])
    assert X1.shape == (1, 5) and X2.shape == (1, 5)
    with pytest.raises(DataFormatError, match=r"test.txt, line 1, column 4: feature index 5 is beyond n_features=3"):
        load_svmlight_files([train, test], n_features=3)
    with pytest.raises(ValueError, match="paths must be a list"):
        load_svmlight_files(train)


def test_failed_dump_leaves_the_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "data.txt"
    path.write_text("1 1:1\n")

    def fail(fd):  # the new content is written, the disk then fails
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="disk full"):
        dump_svmlight(np.ones((100, 3)), np.ones(100), path)
    assert path.read_text() == "1 1:1\n"
    assert os.listdir(tmp_path) == ["data.txt"]


def test_dump_rejects_bad_input(tmp_path):
    path = tmp_path / "out.txt"
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        dump_svmlight(np.ones((3, 2)), np.ones(2), path)
    with pytest.raises(ValueError, match="query_id must be a one-dimensional array of integers"):
        dump_svmlight(np.ones((3, 2)), np.ones(3), path, query_id=[0.5, 1, 2])
    assert not path.exists()


@pytest.mark.parametrize("texts", [
    ["1 1:0.5 3:2\n-1 2:1\n"],
    ["1 0:0.5 3:2\n-1 2:1\n"],
    ["1 1:1\n", "-1 0:2 2:1\n"],
    ["1 2:1\n", "-1 1:1\n"],
    ["1 1:1\n", "-1\n"],
], ids=["one-based", "zero-based", "one file with 0", "both one-based", "a file without indices"])
def test_zero_based_auto_reads_as_scikit_learns_auto(tmp_path, texts):
    """'auto': 0-based when some file has an index 0 (or no index), else 1-based (it was read
    as True, shifting every column of a LIBSVM file)."""
    paths = [_write(tmp_path, t, name=f"f{i}.txt") for i, t in enumerate(texts)]
    got = load_svmlight_files(paths, zero_based="auto")
    want = sk_load_svmlight_files(paths, zero_based="auto")
    for a, b in zip(got, want):
        if sp.issparse(b):
            assert a.shape == b.shape
            np.testing.assert_array_equal(a.toarray(), b.toarray())
        else:
            np.testing.assert_array_equal(a, b)


def test_zero_based_must_be_a_bool_or_auto(tmp_path):
    with pytest.raises(ValueError, match="zero_based must be True, False or 'auto', got zero_based='yes'"):
        load_svmlight(_write(tmp_path, "1 1:1\n"), zero_based="yes")
