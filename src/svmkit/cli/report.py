"""The result lines svm-train -v and svm-predict print, with LIBSVM's formulas and formats."""

from __future__ import annotations

import numpy as np


def squared_correlation(y, pred) -> float:
    """LIBSVM's squared correlation coefficient of targets and predictions."""
    y, v = np.asarray(y, dtype=np.float64), np.asarray(pred, dtype=np.float64)
    n = y.size
    cov = n * (v * y).sum() - v.sum() * y.sum()
    with np.errstate(divide="ignore", invalid="ignore"):  # constant y or v: nan, as LIBSVM prints
        return float(cov * cov / ((n * (v * v).sum() - v.sum() ** 2) * (n * (y * y).sum() - y.sum() ** 2)))


def accuracy_line(y, pred, prefix="") -> str:
    correct = int(np.count_nonzero(np.asarray(pred) == np.asarray(y)))
    total = len(y)
    if prefix:
        return f"{prefix}Accuracy = {100.0 * correct / total:g}%"
    return f"Accuracy = {100.0 * correct / total:g}% ({correct}/{total}) (classification)"


def regression_lines(y, pred, prefix="") -> list[str]:
    mse = float(np.mean((np.asarray(pred, dtype=np.float64) - np.asarray(y, dtype=np.float64)) ** 2))
    scc = squared_correlation(y, pred)
    if prefix:
        return [f"{prefix}Mean squared error = {mse:g}", f"{prefix}Squared correlation coefficient = {scc:g}"]
    return [f"Mean squared error = {mse:g} (regression)", f"Squared correlation coefficient = {scc:g} (regression)"]
