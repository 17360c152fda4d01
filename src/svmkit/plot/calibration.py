"""Reliability diagram of predicted probabilities, with the Brier score."""

from __future__ import annotations

import numpy as np

from svmkit.plot._mpl import axes


def calibration(est, X, y, ax=None, n_bins=10):
    """Draw the reliability diagram of `est.predict_proba` on (X, y): per bin of predicted
    probability (equal width), the observed frequency against the mean prediction, with the
    diagonal of perfect calibration. Two classes: P(classes_[1]); more: the top class's
    probability against whether it was right. The legend gives the Brier score
    (mean over rows of Σ_classes (p − 1[y = class])²). Returns the Axes."""
    ax = axes(ax)
    proba = est.predict_proba(X)
    classes = np.asarray(est.classes_)
    y = np.asarray(y)
    onehot = y[:, None] == classes[None, :]
    brier = float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))
    if classes.size == 2:
        p, hit, what = proba[:, 1], onehot[:, 1], f"P(y = {classes[1].tolist()!r})"
    else:
        top = np.argmax(proba, axis=1)
        p, hit, what = proba[np.arange(y.size), top], onehot[np.arange(y.size), top], "top-class probability"
    bins = np.minimum((p * n_bins).astype(np.int64), n_bins - 1)
    used = np.flatnonzero(np.bincount(bins, minlength=n_bins))
    mean_p = np.array([p[bins == b].mean() for b in used])
    freq = np.array([hit[bins == b].mean() for b in used])
    ax.plot([0, 1], [0, 1], color="0.5", linestyle="--", linewidth=1, label="perfectly calibrated")
    ax.plot(mean_p, freq, marker="o", color="tab:blue", label=f"{type(est).__name__} (Brier {brier:.4f})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel(f"mean predicted {what}")
    ax.set_ylabel("observed frequency")
    ax.legend(loc="upper left", fontsize="small")
    return ax
