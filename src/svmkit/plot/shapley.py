"""Shapley values (svmkit.inspection.shapley_values) drawn: over all rows as a beeswarm or as
bars of mean |φ|, and one row's as a waterfall from the base value to f(x)."""

from __future__ import annotations

import numpy as np

from svmkit.plot._mpl import axes, pyplot

KINDS = ("beeswarm", "bar", "waterfall")
#: Colours of positive and negative attributions (the waterfall's steps).
UP, DOWN = "tab:red", "tab:blue"


def _one_output(values, output):
    """(attributions n × d, base value, the output's name) of one output."""
    phi, base = np.asarray(values.values), np.asarray(values.base_values)
    if phi.ndim == 2:
        return phi, float(base), None
    names = values.output_names
    if output is None:
        raise ValueError(f"these Shapley values have {phi.shape[2]} outputs ({names}): give output= (a position or "
                         "one of those names)")
    if output not in names and not (isinstance(output, (int, np.integer)) and -len(names) <= output < len(names)):
        raise ValueError(f"output={output!r} is not one of the {len(names)} outputs: give a position or one of {names}")
    k = names.index(output) if isinstance(output, str) else int(output)
    return phi[:, :, k], float(base[k]), names[k]


def _order(score, max_features):
    """The features of the largest scores first, at most `max_features` of them."""
    return np.argsort(-score, kind="stable")[:max_features]


def _beeswarm(ax, phi, data, names, order):
    """One row of points per feature (the largest mean |φ| on top), jittered by their density
    along φ, coloured by the feature's value from low to high."""
    rng = np.random.default_rng(0)
    cmap = pyplot().get_cmap("coolwarm")
    for pos, j in enumerate(order[::-1]):
        x, v = phi[:, j], data[:, j]
        counts, edges = np.histogram(x, bins=min(50, max(1, x.size)))
        density = counts[np.clip(np.searchsorted(edges, x, side="right") - 1, 0, counts.size - 1)] / max(counts.max(), 1)
        spread = 0.4 * density * rng.uniform(-1, 1, x.size)
        span = np.ptp(v)
        colour = (v - v.min()) / span if span > 0 else np.full(v.size, 0.5)
        ax.scatter(x, pos + spread, c=cmap(colour), s=10, linewidths=0)
    sm = pyplot().cm.ScalarMappable(cmap=cmap)
    bar = ax.figure.colorbar(sm, ax=ax, ticks=[0, 1], aspect=40)
    bar.ax.set_yticklabels(["low", "high"])
    bar.set_label("feature value")
    ax.axvline(0, color="0.5", linewidth=0.8)
    ax.set_yticks(range(order.size), [names[j] for j in order[::-1]])
    ax.set_xlabel("Shapley value φ")


def _bars(ax, phi, names, order):
    mean = np.abs(phi).mean(axis=0)
    ax.barh(range(order.size), mean[order[::-1]], color="tab:blue")
    ax.set_yticks(range(order.size), [names[j] for j in order[::-1]])
    ax.set_xlabel("mean |Shapley value|")


def _waterfall(ax, phi, base, x, names, order):
    """Steps from the base value, the largest |φ| at the top, the rest in one step, to f(x)."""
    steps = [(f"{names[j]} = {x[j]:.3g}", phi[j]) for j in order]
    rest = np.setdiff1d(np.arange(phi.size), order)
    if rest.size:
        steps.append((f"{rest.size} other features", float(phi[rest].sum())))
    at, ends = base, [base]
    n = len(steps)
    for pos, (label, value) in enumerate(steps):
        ax.barh(n - 1 - pos, value, left=at, color=UP if value >= 0 else DOWN)
        ax.text(at + value, n - 1 - pos, f" {value:+.3g} ", va="center", ha="left" if value >= 0 else "right",
                fontsize="small")
        at += value
        ends.append(at)
    # room beside the path for the step labels
    low, high = min(ends), max(ends)
    pad = 0.2 * (high - low or 1.0)
    ax.set_xlim(low - pad, high + pad)
    ax.axvline(base, color="0.5", linewidth=0.8, linestyle="--")
    ax.axvline(at, color="k", linewidth=0.8)
    ax.set_yticks(range(n), [label for label, _ in steps][::-1])
    ax.set_xlabel(f"base value {base:.3g} → f(x) = {at:.3g}")


def shapley(values, kind="beeswarm", row=0, output=None, max_features=12, ax=None):
    """Draw Shapley values (`svmkit.inspection.ShapleyValues`): kind='beeswarm', every row's
    φ_j per feature coloured by the feature's value; 'bar', mean |φ_j| per feature; 'waterfall',
    row `row`'s attributions as steps from the base value to f(x). The features of largest mean
    |φ| (the waterfall: of largest |φ| in that row) first, at most `max_features` (the
    waterfall lumps the rest into one step). `output`: a position or a name of
    values.output_names, required when there are several outputs. Returns the Axes."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got kind={kind!r}")
    phi, base, name = _one_output(values, output)
    ax = axes(ax, figsize=(6.0, 0.35 * min(max_features, phi.shape[1]) + 1.6))
    names = list(values.feature_names)
    if kind == "waterfall":
        if not -phi.shape[0] <= row < phi.shape[0]:
            raise ValueError(f"row={row!r} is not one of the {phi.shape[0]} rows explained")
        _waterfall(ax, phi[row], base, values.data[row], names, _order(np.abs(phi[row]), max_features))
    else:
        order = _order(np.abs(phi).mean(axis=0), max_features)
        if kind == "bar":
            _bars(ax, phi, names, order)
        else:
            _beeswarm(ax, phi, values.data, names, order)
    what = f"{values.value} Shapley values" + (f" of {name}" if name is not None else "")
    ax.set_title(what + (f", row {row}" if kind == "waterfall" else ""), fontsize="medium")
    return ax
