"""The CV score of an SVMSearchCV (of a model or a Pipeline) over log2 C × log2 γ, as grid.py draws it, beside the
leave-one-out bound #SV/N (Vapnik 1995)."""

from __future__ import annotations

import numpy as np

from svmkit.plot._mpl import pyplot


def _unprefixed(params: dict) -> dict:
    """A cell's parameters without a Pipeline's `step__` prefixes."""
    return {k.rpartition("__")[2]: v for k, v in params.items()}


def _grid_values(search, key):
    """(log2 C values, log2 γ values, matrix of cv_results_[key] with rows γ, columns C)."""
    params = [_unprefixed(p) for p in search.cv_results_["params"]]
    if any(set(p) != {"C", "gamma"} for p in params):
        raise ValueError("cv_heatmap draws a search over C and gamma only; this one varies "
                         f"{sorted(set().union(*params))}")
    cs = np.log2(sorted({float(p["C"]) for p in params}))
    gs = np.log2(sorted({float(p["gamma"]) for p in params}))
    Z = np.full((gs.size, cs.size), np.nan)
    for p, v in zip(params, search.cv_results_[key]):
        Z[np.searchsorted(gs, np.log2(float(p["gamma"]))), np.searchsorted(cs, np.log2(float(p["C"])))] = v
    return cs, gs, Z


def cv_heatmap(search, axes=None):
    """Two panels from a fitted SVMSearchCV: the mean CV score over log2 C × log2 γ with
    contour lines (as grid.py's), the chosen cell marked ★ and, when the fewer-SV rule chose
    another cell than the best score, that cell marked ✕; and #SV/N, the leave-one-out error
    bound, on the same grid. Returns the two Axes."""
    plt = pyplot()
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
    cs, gs, score = _grid_values(search, "mean_test_score")
    _, _, bound = _grid_values(search, "loo_bound")
    best = _unprefixed(search.best_params_)
    best = (np.log2(float(best["C"])), np.log2(float(best["gamma"])))
    top = _unprefixed(search.cv_results_["params"][int(np.nanargmax(search.cv_results_["mean_test_score"]))])
    top = (np.log2(float(top["C"])), np.log2(float(top["gamma"])))
    for ax, Z, title, cmap, ink in ((axes[0], score, "mean CV score", "viridis", "w"),
                                    (axes[1], bound, "#SV / N (leave-one-out bound)", "magma_r", "k")):
        mesh = ax.pcolormesh(cs, gs, Z, cmap=cmap, shading="nearest")
        plt.colorbar(mesh, ax=ax)
        if np.isfinite(Z).sum() > 3 and cs.size > 1 and gs.size > 1:
            lines = ax.contour(cs, gs, Z, colors=ink, linewidths=0.7)
            ax.clabel(lines, fontsize="x-small", fmt="%.3g")
        ax.plot(*best, linestyle="none", marker="*", markersize=14, color="tab:red", markeredgecolor="k",
                label="chosen")
        if top != best:
            ax.plot(*top, linestyle="none", marker="X", markersize=10, color="w", markeredgecolor="k",
                    label="best score")
        ax.set_xlabel("log2 C")
        ax.set_ylabel("log2 γ")
        ax.set_title(title)
    axes[0].legend(loc="lower left", fontsize="small", framealpha=0.8)
    return axes
