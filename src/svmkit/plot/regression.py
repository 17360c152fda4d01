"""A 1-D regression with its ε-tube (SVR, ν-SVR, LinearSVR) or hard ε-band (Bi & Bennett 2003)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from svmkit.plot._mpl import axes
from svmkit.plot.boundary import MARKERS


def _width(est):
    """The tube's half-width ε the model fitted with (ν-SVR: the ε it found)."""
    return float(getattr(est, "epsilon_", est.epsilon))


def regression_band(est, X, y, ax=None, resolution=400):
    """Draw a fitted 1-D regression f, its tube f ± ε and the training points: inside the tube
    as dots, on its boundary as squares, outside as triangles (SVR's inside_tube_, on_tube_,
    outside_tube_; from the residuals otherwise), each counted in the legend. For HardBandSVR
    also the narrowest band, f_inf ± ε_inf (Bi & Bennett 2003). A model read from a LIBSVM or
    LIBLINEAR file, which does not keep ε, gets f and the points only. Returns the Axes."""
    ax = axes(ax)
    x = (X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64))
    if x.ndim != 2 or x.shape[1] != 1:
        raise ValueError(f"regression_band draws 1-D data: X must have one feature, got shape {x.shape}")
    y = np.asarray(y, dtype=np.float64)
    grid = np.linspace(x.min(), x.max(), resolution)[:, None]
    f = est.predict(grid)
    ax.plot(grid[:, 0], f, color="k", linewidth=1.5, label="f(x)")
    if not (hasattr(est, "objective_") or hasattr(est, "epsilon_inf_")):
        # LIBSVM and LIBLINEAR model files do not keep ε: no tube to draw
        ax.plot(x[:, 0], y, linestyle="none", marker="o", markersize=5, color="tab:orange", markeredgecolor="k",
                markeredgewidth=0.5, label=f"data ({y.size}; ε not in the model file)")
        ax.legend(loc="best", fontsize="small", framealpha=0.8)
        return ax
    eps = _width(est)
    ax.fill_between(grid[:, 0], f - eps, f + eps, color="tab:blue", alpha=0.15, label=f"ε-tube (ε={eps:.3g})")
    for sign in (-1, 1):
        ax.plot(grid[:, 0], f + sign * eps, color="tab:blue", linewidth=0.8, linestyle="--")
    if hasattr(est, "epsilon_inf_"):
        from svmkit.models.band import epsilon_inf

        e_inf, w, b = epsilon_inf(x, y)
        g = grid[:, 0] * w[0] + b
        ax.plot(grid[:, 0], g - e_inf, color="tab:red", linewidth=0.8, linestyle=":")
        ax.plot(grid[:, 0], g + e_inf, color="tab:red", linewidth=0.8, linestyle=":",
                label=f"narrowest band (ε_inf={e_inf:.3g})")
    if hasattr(est, "inside_tube_"):
        groups = {"non-SV": est.inside_tube_, "free SV": est.on_tube_, "bounded SV": est.outside_tube_}
    else:
        r = np.abs(y - est.predict(x))
        close = np.isclose(r, eps, rtol=1e-6, atol=1e-9 * max(1.0, eps))
        groups = {"non-SV": np.flatnonzero((r < eps) & ~close), "free SV": np.flatnonzero(close),
                  "bounded SV": np.flatnonzero((r > eps) & ~close)}
    names = {"non-SV": "inside", "free SV": "on the tube", "bounded SV": "outside"}
    for key, rows in groups.items():
        rows = np.asarray(rows, dtype=np.int64)
        ax.plot(x[rows, 0], y[rows], linestyle="none", marker=MARKERS[key], markersize=5, color="tab:orange",
                markeredgecolor="k", markeredgewidth=0.5, label=f"{names[key]} ({rows.size})")
    ax.legend(loc="best", fontsize="small", framealpha=0.8)
    return ax
