"""Scores shared by the models and model selection."""

from __future__ import annotations

import numpy as np


def r2_from_residuals(y: np.ndarray, residuals: np.ndarray) -> float:
    """R² of predictions y − residuals, averaged uniformly over the outputs, as `score` does;
    an output with no variance scores 1 when predicted exactly, else 0."""
    y = y.reshape(y.shape[0], -1)
    residuals = residuals.reshape(y.shape)
    total = ((y - y.mean(axis=0)) ** 2).sum(axis=0)
    sq = (residuals**2).sum(axis=0)
    r2 = np.where(total > 0, 1.0 - sq / np.where(total > 0, total, 1.0), np.where(sq == 0, 1.0, 0.0))
    return float(np.mean(r2))
