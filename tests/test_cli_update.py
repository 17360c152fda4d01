"""`svmkit update MODEL NEW_DATA [--forget ROWS] [-o OUT]` on a LinearSVC saved with its rows:
the written model equals a fit on the rows it then holds; bad input gets one line and exit
status 1, as the other commands."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import svmkit
from conftest import DATA, heart_scale
from svmkit.io.data import dump_svmlight

SRC = str(Path(__file__).resolve().parents[1] / "src")
TIGHT = dict(dual=True, tol=1e-8, random_state=0, max_iter=100_000)


def svmkit_cli(*args):
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-m", "svmkit.cli.main", *map(str, args)], capture_output=True, text=True,
                          env=env)


@pytest.fixture
def saved(tmp_path):
    X, y = heart_scale()
    path = tmp_path / "model.svmkit"
    svmkit.save(svmkit.LinearSVC(**TIGHT).partial_fit(X[:200], y[:200]), path)
    new = tmp_path / "new.txt"
    dump_svmlight(X[200:], y[200:], new)
    return path, new, X, y


def _same(model, refit, X):
    assert model.objective_[:, 0] == pytest.approx(refit.objective_[:, 0], rel=1e-6)
    np.testing.assert_array_equal(model.predict(X), refit.predict(X))


def test_update_adds_the_rows_in_place(saved):
    path, new, X, y = saved
    result = svmkit_cli("update", path, new)
    assert result.returncode == 0, result.stderr
    assert "270 rows" in result.stdout
    _same(svmkit.load(path), svmkit.LinearSVC(**TIGHT).fit(X, y), X)


def test_update_forgets_then_adds_into_another_file(saved, tmp_path):
    path, new, X, y = saved
    out = tmp_path / "out.svmkit"
    result = svmkit_cli("update", path, new, "--forget", "0,5,9", "-o", out)
    assert result.returncode == 0, result.stderr
    keep = np.setdiff1d(np.arange(y.size), [0, 5, 9])
    _same(svmkit.load(out), svmkit.LinearSVC(**TIGHT).fit(X[keep], y[keep]), X)
    assert svmkit.load(path).retained_X_.shape[0] == 200  # MODEL untouched


@pytest.mark.parametrize("case, message", [
    ("no_rows", "keep_data=True"),
    ("libsvm", "not svmkit's native model file"),
    ("wider", "14 features, the model 13"),
    ("out_of_range", "index 500 is out of range"),
    ("not_numbers", "invalid comma list of row numbers value"),
])
def test_bad_input_gets_one_line_and_status_1(saved, tmp_path, case, message):
    path, new, X, y = saved
    args = ["update", path, new]
    if case == "no_rows":
        svmkit.save(svmkit.LinearSVC(dual=True).fit(X, y), path)
    elif case == "libsvm":
        args[1] = DATA / "heart_scale"
    elif case == "wider":
        dump_svmlight(np.hstack([X[:5].toarray(), np.ones((5, 1))]), y[:5], new)
    elif case == "out_of_range":
        args += ["--forget", "500"]
    else:
        args += ["--forget", "1,x"]
    before = path.read_bytes()
    result = svmkit_cli(*args)
    assert result.returncode == 1
    assert message in result.stderr and "Traceback" not in result.stderr
    assert path.read_bytes() == before
