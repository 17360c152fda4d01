"""Decision regions of a 2-D classifier with its boundary, margins and support-vector
categories (Cortes & Vapnik 1995), and a gallery of them over (C, γ)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from svmkit.plot._mpl import axes, pyplot
from svmkit.model_selection.paths import path_fits

#: Markers: non-support vectors as dots, free SVs as squares, bounded ones as triangles.
MARKERS = {"non-SV": "o", "free SV": "s", "bounded SV": "^", "point": "o"}
#: Models whose margins f = ±1 are drawn (their dual bounds make the free/bounded split).
_MARGIN_MODELS = ("SVC", "NuSVC", "LinearSVC")
#: Megabytes of kernel rows a gallery shares across its panels of one γ.
GALLERY_MEMORY_MB = 1024


def _plane(X, project):
    """X in the plotted plane: as given when 2-D, else `project.transform(X)`."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if project is not None:
        return project.transform(X)
    if X.shape[1] != 2:
        raise ValueError(f"decision_boundary draws 2-D data; X has {X.shape[1]} features: pass project= (a fitted "
                         "transformer to 2-D with inverse_transform, e.g. PCA(n_components=2))")
    return X


def _grid(P, resolution):
    lo, hi = P.min(axis=0), P.max(axis=0)
    pad = 0.08 * np.where(hi > lo, hi - lo, 1.0)
    xs = np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution)
    ys = np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution)
    return np.meshgrid(xs, ys)


def class_index(classes, labels) -> np.ndarray:
    """The position of each label in `classes`, which may keep LIBSVM's order (first
    appearance in the training file) rather than a sorted one."""
    return np.argmax(np.asarray(labels)[:, None] == np.asarray(classes)[None, :], axis=1)


def _categories(est, n):
    """Training rows per marker category: from the SV attributes when the model has them."""
    if hasattr(est, "free_support_") and hasattr(est, "bounded_support_"):
        free, bounded = np.asarray(est.free_support_), np.asarray(est.bounded_support_)
        rest = np.setdiff1d(np.arange(n), np.concatenate([free, bounded]))
        return {"non-SV": rest, "free SV": free, "bounded SV": bounded}
    return {"point": np.arange(n)}


def decision_boundary(est, X, y, ax=None, project=None, resolution=200, legend=True):
    """Draw a fitted classifier's decision regions over 2-D data: filled regions per class,
    the boundary f = 0 and, for SVC, NuSVC and LinearSVC, the margins f = ±1 (dashed); training
    points coloured by class, non-support vectors as dots, free SVs (0 < α < C) as squares,
    bounded SVs (α = C) as triangles, each counted in the legend.

    X must be the training data (the SV categories index its rows). For more than 2 features,
    `project` is a fitted transformer to 2-D with `inverse_transform` (e.g. PCA(2)): points are
    drawn at `project.transform(X)` and the regions are the model's on the plane
    `project.inverse_transform` maps the picture to — a slice through feature space, not the
    whole decision surface. Returns the Axes.
    """
    ax = axes(ax)
    plt = pyplot()
    P = _plane(X, project)
    gx, gy = _grid(P, resolution)
    flat = np.column_stack([gx.ravel(), gy.ravel()])
    grid = project.inverse_transform(flat) if project is not None else flat
    classes = np.asarray(est.classes_)
    cmap = plt.get_cmap("coolwarm" if classes.size == 2 else "tab10")
    colours = [cmap(k / max(classes.size - 1, 1)) if classes.size == 2 else cmap(k) for k in range(classes.size)]
    if classes.size == 2:
        f = np.ravel(est.decision_function(grid)).reshape(gx.shape)
        ax.contourf(gx, gy, f, levels=[-np.inf, 0, np.inf], colors=colours, alpha=0.25)
        margins = type(est).__name__ in _MARGIN_MODELS
        levels = [-1.0, 0.0, 1.0] if margins else [0.0]
        ax.contour(gx, gy, f, levels=levels, colors="k", linestyles=["--", "-", "--"] if margins else ["-"],
                   linewidths=1.0)
    else:
        k = class_index(classes, est.predict(grid)).reshape(gx.shape)
        ax.contourf(gx, gy, k, levels=np.arange(classes.size + 1) - 0.5, colors=colours, alpha=0.25)
        ax.contour(gx, gy, k, levels=np.arange(classes.size - 1) + 0.5, colors="k", linewidths=1.0)
    y = np.asarray(y)
    for name, rows in _categories(est, P.shape[0]).items():
        for c, label in enumerate(classes):
            mine = rows[y[rows] == label]
            ax.plot(P[mine, 0], P[mine, 1], linestyle="none", marker=MARKERS[name], markersize=6 if name in ("free SV", "bounded SV") else 5,
                    color=colours[c], markeredgecolor="k", markeredgewidth=0.5,
                    label=f"{name} ({rows.size})" if c == 0 else None)
    if type(est).__name__ in ("SVC", "NuSVC") and not hasattr(est, "free_support_") and project is None:
        # a LIBSVM model file keeps the support vectors but not C: their bounds are unknown
        sv = est.support_vectors_
        sv = sv.toarray() if sp.issparse(sv) else np.asarray(sv)
        ax.plot(sv[:, 0], sv[:, 1], linestyle="none", marker="o", markersize=9, markerfacecolor="none",
                markeredgecolor="k", markeredgewidth=1.0, label=f"support vector ({sv.shape[0]}; bound unknown)")
    ax.set_xlim(gx.min(), gx.max())
    ax.set_ylim(gy.min(), gy.max())
    if legend:
        ax.legend(loc="best", fontsize="small", framealpha=0.8)
    return ax


def parameter_gallery(estimator, X, y, C, gamma, axes=None, resolution=120):
    """One small decision-boundary panel per (C, γ) — rows γ, columns C — titled with #SV and
    training accuracy. Each γ's panels are fitted along growing C on one
    shared kernel, each fit starting from the previous one's solution (the model-selection
    machinery). Returns the array of Axes (len(gamma) × len(C))."""
    plt = pyplot()
    C, gamma = sorted(float(c) for c in C), [float(g) for g in gamma]
    if axes is None:
        _, axes = plt.subplots(len(gamma), len(C), figsize=(2.6 * len(C), 2.5 * len(gamma)), squeeze=False,
                               layout="constrained")
    axes = np.asarray(axes).reshape(len(gamma), len(C))
    y = np.asarray(y)
    for i, g in enumerate(gamma):
        path = [(j, {"C": c, "gamma": g}) for j, c in enumerate(C)]
        for j, params, est in path_fits(clone(estimator), X, y, None, path, GALLERY_MEMORY_MB):
            ax = axes[i, j]
            if isinstance(est, ValueError):
                ax.set_title(f"C={params['C']:g}, γ={g:g}\nfailed", fontsize="small")
                continue
            decision_boundary(est, X, y, ax=ax, resolution=resolution, legend=False)
            accuracy = float(np.mean(est.predict(X) == y))
            ax.set_title(f"C={params['C']:g}, γ={g:g}\n#SV={est.support_.size}, acc={accuracy:.2f}", fontsize="small")
            ax.set_xticks([])
            ax.set_yticks([])
    return axes
