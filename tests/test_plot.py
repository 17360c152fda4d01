"""svmkit.plot: what each picture draws, asserted on the Axes (marker counts, contour levels,
the marked cell, titles), and PNG files written headless at the requested size."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
from matplotlib.contour import ContourSet  # noqa: E402
from sklearn.datasets import make_moons  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402

import svmkit  # noqa: E402
from conftest import iris  # noqa: E402
from svmkit import plot  # noqa: E402
from svmkit.model_selection import SVMSearchCV  # noqa: E402


def moons():
    return make_moons(120, noise=0.25, random_state=0)


def markers(ax, marker):
    return sum(len(line.get_xdata()) for line in ax.get_lines() if line.get_marker() == marker)


def contour_levels(ax):
    return [list(c.levels) for c in ax.collections if isinstance(c, ContourSet) and not c.filled]


def test_boundary_marks_free_svs_as_squares_and_bounded_as_triangles():
    X, y = moons()
    model = svmkit.SVC(C=1.0, gamma=1.0).fit(X, y)
    ax = plot.decision_boundary(model, X, y)
    assert markers(ax, "s") == model.free_support_.size
    assert markers(ax, "^") == model.bounded_support_.size
    assert markers(ax, "o") == X.shape[0] - model.support_.size
    assert contour_levels(ax) == [[-1.0, 0.0, 1.0]]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"free SV ({model.free_support_.size})" in labels and f"bounded SV ({model.bounded_support_.size})" in labels


def test_boundary_without_margins_for_models_without_a_margin():
    X, y = moons()
    ax = plot.decision_boundary(svmkit.KernelLogisticRegression(C=1.0).fit(X, y), X, y)
    assert contour_levels(ax) == [[0.0]] and markers(ax, "o") == X.shape[0]


def test_multiclass_regions_and_a_projection_for_more_features():
    X, y = iris()
    ax = plot.decision_boundary(svmkit.SVC().fit(X, y), X, y, project=PCA(2).fit(X))
    filled = [c for c in ax.collections if isinstance(c, ContourSet) and c.filled]
    assert len(filled[0].levels) == 4  # three class regions
    with pytest.raises(ValueError, match="pass project="):
        plot.decision_boundary(svmkit.SVC().fit(X, y), X, y)


def test_gallery_titles_carry_each_cells_support_vectors_and_accuracy():
    X, y = moons()
    axes = plot.parameter_gallery(svmkit.SVC(), X, y, C=[1.0, 10.0], gamma=[0.5, 2.0])
    assert axes.shape == (2, 2)
    for i, g in enumerate([0.5, 2.0]):
        for j, c in enumerate([1.0, 10.0]):
            cold = svmkit.SVC(C=c, gamma=g).fit(X, y)
            title = axes[i, j].get_title()
            n_sv = int(title.split("#SV=")[1].split(",")[0])
            assert abs(n_sv - cold.support_.size) <= 2  # a warm-started solution at the same tol
            assert f"C={c:g}, γ={g:g}" in title and f"acc={np.mean(cold.predict(X) == y):.2f}" in title


def test_heatmap_marks_the_chosen_cell():
    X, y = moons()
    grid = {"C": [2.0**k for k in range(-1, 8, 2)], "gamma": [2.0**k for k in (-3, -1, 1)]}
    search = SVMSearchCV(svmkit.SVC(), grid).fit(X, y)
    axes = plot.cv_heatmap(search)
    star = [line for line in axes[0].get_lines() if line.get_marker() == "*"][0]
    assert (star.get_xdata()[0], star.get_ydata()[0]) == (np.log2(search.best_params_["C"]),
                                                          np.log2(search.best_params_["gamma"]))
    assert axes[1].get_title().startswith("#SV / N")


def test_heatmap_draws_a_pipeline_search_under_its_step_names():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = moons()
    grid = {"svc__C": [0.5, 8.0], "svc__gamma": [0.5, 2.0]}
    search = SVMSearchCV(make_pipeline(StandardScaler(), svmkit.SVC()), grid).fit(X, y)
    star = [line for line in plot.cv_heatmap(search)[0].get_lines() if line.get_marker() == "*"][0]
    assert (star.get_xdata()[0], star.get_ydata()[0]) == (np.log2(search.best_params_["svc__C"]),
                                                          np.log2(search.best_params_["svc__gamma"]))


def test_regression_band_marks_inside_on_and_outside_points():
    x = np.linspace(-3, 3, 60)[:, None]
    t = np.sinc(x).ravel() + 0.1 * np.random.default_rng(0).normal(size=60)
    model = svmkit.SVR(C=10.0, epsilon=0.1).fit(x, t)
    ax = plot.regression_band(model, x, t)
    assert (markers(ax, "o"), markers(ax, "s"), markers(ax, "^")) == \
        (model.inside_tube_.size, model.on_tube_.size, model.outside_tube_.size)


def test_hard_band_draws_the_narrowest_band_too():
    x = np.linspace(0, 1, 30)[:, None]
    t = 2 * x[:, 0] + 0.1 * np.sin(20 * x[:, 0])
    model = svmkit.band.HardBandSVR(epsilon=0.2).fit(x, t)
    ax = plot.regression_band(model, x, t)
    assert any("ε_inf" in text.get_text() for text in ax.get_legend().get_texts())


def test_calibration_reports_the_brier_score():
    X, y = moons()
    model = svmkit.SVC(probability=True).fit(X, y)
    ax = plot.calibration(model, X, y)
    brier = np.mean(np.sum((model.predict_proba(X) - (y[:, None] == model.classes_[None])) ** 2, axis=1))
    assert any(f"Brier {brier:.4f}" in t.get_text() for t in ax.get_legend().get_texts())


def test_png_is_written_headless_at_the_requested_size(tmp_path):
    import matplotlib.pyplot as plt

    X, y = moons()
    fig, ax = plt.subplots(figsize=(4, 3), dpi=50)
    plot.decision_boundary(svmkit.SVC().fit(X, y), X, y, ax=ax)
    fig.savefig(tmp_path / "b.png")
    image = plt.imread(tmp_path / "b.png")
    assert image.shape[:2] == (150, 200) and image.std() > 0


def test_missing_matplotlib_names_the_extra(monkeypatch):
    import sys

    from svmkit.plot._mpl import pyplot

    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"svmkit\[plot\]"):
        pyplot()


def test_regions_follow_classes_in_libsvm_order():
    from svmkit.plot.boundary import class_index

    np.testing.assert_array_equal(class_index(np.array([2, 1, 3]), np.array([1, 2, 3, 3])), [1, 0, 2, 2])
