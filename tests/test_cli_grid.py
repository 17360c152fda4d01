"""`svmkit grid` and `svmkit easy`, run as subprocesses: grid.py's lines and choice, easy.py's
pipeline and the LIBSVM practical guide's svmguide1 figures."""

import csv
from pathlib import Path

import numpy as np
import pytest

import svmkit
from conftest import DATA
from test_cli import svmkit_cli

GUIDE = Path(__file__).parents[1] / "data"


def test_grid_prints_a_line_per_cell_then_the_best_and_writes_the_table(tmp_path):
    out = tmp_path / "grid.csv"
    r = svmkit_cli("grid", "-log2c", "-1,3,2", "-log2g", "-3,-1,1", "-v", "5", DATA / "heart_scale", "--out", out)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 10
    cells = [tuple(float(v) for v in line.split()) for line in lines[:9]]
    assert sorted({c[0] for c in cells}) == [-1, 1, 3] and sorted({c[1] for c in cells}) == [-3, -2, -1]
    best_c, best_g, best_rate = (float(v) for v in lines[-1].split())
    assert best_rate == max(c[2] for c in cells)
    assert (np.log2(best_c), np.log2(best_g), best_rate) in cells
    rows = list(csv.reader(out.open()))
    assert rows[0][:3] == ["log2C", "log2gamma", "accuracy"] and len(rows) == 10


def test_grid_reports_mean_squared_error_for_regression():
    r = svmkit_cli("grid", "-s", "3", "-log2c", "-1,1,2", "-log2g", "-3,-1,2", "-log2p", "-3,-2,1",
                   DATA / "housing_scale")
    assert r.returncode == 0, r.stderr
    cells = [tuple(float(v) for v in line.split()) for line in r.stdout.splitlines()[:-1]]
    assert len(cells) == 8
    best = r.stdout.splitlines()[-1].split()
    assert float(best[-1]) == min(c[-1] for c in cells)


def test_grid_refuses_epsilon_search_outside_epsilon_svr():
    r = svmkit_cli("grid", "-log2p", "-3,-2,1", DATA / "heart_scale")
    assert r.returncode == 1 and "-log2p" in r.stderr


def test_svmguide1_story_of_the_practical_guide(tmp_path):
    """Hsu, Chang & Lin's guide: unscaled default training ≈ 66.9 % test accuracy, scaled
    ≈ 96.2 %, the grid's (C, γ) ≈ 96.9 % (±0.5 point each)."""
    X, y = svmkit.load_svmlight(GUIDE / "svmguide1")
    Xt, yt = svmkit.load_svmlight(GUIDE / "svmguide1.t")
    default = svmkit.SVC(gamma=1 / X.shape[1]).fit(X, y)
    assert abs(100 * default.score(Xt, yt) - 66.925) <= 0.5
    scaler = svmkit.LibsvmScaler().fit(X)
    scaled = svmkit.SVC(gamma=1 / X.shape[1]).fit(scaler.transform(X), y)
    assert abs(100 * scaled.score(scaler.transform(Xt), yt) - 96.15) <= 0.5
    r = svmkit_cli("easy", GUIDE / "svmguide1", GUIDE / "svmguide1.t", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    accuracy = float(r.stdout.split("Accuracy = ")[1].split("%")[0])
    assert abs(accuracy - 96.875) <= 0.5
    for name in ("svmguide1.range", "svmguide1.model", "svmguide1.grid.csv", "svmguide1.t.predict", "svmguide1.t.scale",
                 "svmguide1.grid.png"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    assert len(list(csv.reader((tmp_path / "out" / "svmguide1.grid.csv").open()))) == 111


def test_grid_plot_writes_the_heatmap(tmp_path):
    r = svmkit_cli("grid", "-q", "-log2c", "-1,3,2", "-log2g", "-3,-1,2", "--plot", tmp_path / "g.png", DATA / "heart_scale")
    assert r.returncode == 0, r.stderr
    assert f"Output picture: {tmp_path / 'g.png'}" in r.stdout and (tmp_path / "g.png").stat().st_size > 0


def test_grid_plot_of_a_grid_without_gamma_is_refused_before_searching(tmp_path):
    r = svmkit_cli("grid", "-q", "-t", "0", "--plot", tmp_path / "g.png", DATA / "heart_scale")
    assert r.returncode == 1 and "--plot draws a grid over C and gamma" in r.stderr


@pytest.mark.parametrize("flags, rule", [([], "the best mean cross-validation score chooses"),
                                         (["--fewer-sv"], "the fewest support vectors within one standard error")])
def test_grid_states_the_rule_that_chose_its_cell(flags, rule):
    r = svmkit_cli("grid", *flags, "-log2c", "-1,3,2", "-log2g", "-3,-1,2", DATA / "heart_scale")
    assert r.returncode == 0, r.stderr
    assert rule in r.stderr


def test_a_log2_range_beyond_float64_is_a_one_line_error():
    r = svmkit_cli("grid", "-log2c", "2000,2001,1", "-log2g", "-3,-1,2", DATA / "heart_scale")
    assert r.returncode != 0
    assert "-log2c '2000,2001,1'" in r.stderr and "overflows or underflows float64" in r.stderr
    assert r.stderr.count("\n") == 1
    assert "Traceback" not in r.stderr and "OverflowError" not in r.stderr
