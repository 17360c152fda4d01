"""Probabilities from decision values, as LIBSVM 3.37 computes them.

- Platt's sigmoid P(y = +1 | f) = 1 / (1 + exp(A·f + B)) (Platt 1999), fitted by the
  Newton method with backtracking and the smoothed targets of Lin, Lin & Weng (2007).
- Pairwise coupling of one-vs-one probabilities into class probabilities: the second method
  of Wu, Lin & Weng (2004), min ½ pᵀQp subject to Σp = 1.
- The Laplace noise scale of regression (σ of e^(−|z|/σ) / 2σ from cross-validated residuals)
  and the density marks of one-class SVM (LIBSVM 3.30).
"""

from __future__ import annotations

import numpy as np

from svmkit._core import ovo as _ovo
from svmkit.solvers.smo.solver import fit_sigmoids

#: Pairwise probabilities are clipped to [MIN_PROB, 1 − MIN_PROB] before coupling (LIBSVM).
MIN_PROB = 1e-7
#: Decision-value marks of a one-class model, and the probabilities between them.
N_MARKS = 10


def smoothed_targets(labels) -> np.ndarray:
    """Platt's targets: (N₊ + 1)/(N₊ + 2) for a positive label, 1/(N₋ + 2) for a negative one."""
    positive = np.asarray(labels) > 0
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    return np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))


def fit_sigmoid(dec, labels) -> tuple[float, float]:
    """(A, B) minimising the smoothed cross-entropy (`smoothed_targets`) of the sigmoid on
    decision values `dec` with `labels` (> 0 positive): LIBSVM's sigmoid_train
    (`solvers.smo.solver.fit_sigmoids`). The smoothed targets keep (A, B) finite also for
    separable decision values."""
    dec = np.asarray(dec, dtype=np.float64)
    A, B = fit_sigmoids(dec, np.asarray(labels, dtype=np.float64), np.array([0, dec.size]))[0]
    return float(A), float(B)


def sigmoid(dec, A, B) -> np.ndarray:
    """1 / (1 + exp(A·f + B)) for every decision value f, without overflow."""
    z = np.asarray(dec, dtype=np.float64) * A + B
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


def pairwise_probabilities(dec, probA, probB, n_classes) -> np.ndarray:
    """r[n, a, b] = P(class a | a or b, x_n) from the one-vs-one decision values `dec`
    (n × n_pairs, pairs (a, b) in LIBSVM's order, > 0 voting a), clipped to [1e-7, 1 − 1e-7]."""
    first, second = np.triu_indices(n_classes, 1)
    p = np.clip(sigmoid(dec, np.asarray(probA), np.asarray(probB)), MIN_PROB, 1 - MIN_PROB)
    r = np.zeros((dec.shape[0], n_classes, n_classes))
    r[:, first, second], r[:, second, first] = p, 1 - p
    return r


def couple(r) -> np.ndarray:
    """Class probabilities p (n × k) from pairwise probabilities r (n × k × k): the solution of
    min ½ pᵀQp, Σp = 1, Q_tt = Σ_{j≠t} r_jt², Q_tj = −r_jt r_tj (Wu, Lin & Weng 2004, method 2),
    by their fixed-point iteration to max_t |(Qp)_t − pᵀQp| < 0.005/k, row by row as LIBSVM."""
    n, k = r.shape[0], r.shape[1]
    if k == 2:
        return np.stack([r[:, 0, 1], r[:, 1, 0]], axis=1)
    p = np.empty((n, k))
    _ovo.couple(np.ascontiguousarray(r, dtype=np.float64), p)
    return p


def laplace_scale(residuals) -> float:
    """σ of the Laplace noise model e^(−|z|/σ) / 2σ: the mean absolute residual, ignoring those
    beyond 5·√2 times the first mean (LIBSVM's svm_svr_probability)."""
    z = np.abs(np.asarray(residuals, dtype=np.float64))
    mae = z.mean()
    kept = z[z <= 5 * np.sqrt(2.0) * mae]
    return float(kept.mean())


def density_marks(dec) -> np.ndarray | None:
    """LIBSVM's 10 one-class density marks from the training decision values (Que & Lin): the
    midpoints of 5 equal-count bins below 0 and 5 above; None with fewer than 5 on either side."""
    dec = np.sort(np.asarray(dec, dtype=np.float64))
    nonneg = np.flatnonzero(dec >= 0)
    n_neg = int(nonneg[0]) if nonneg.size else 0
    n_pos = dec.size - n_neg
    mid = N_MARKS // 2
    if n_neg < mid or n_pos < mid:
        return None
    marks = np.empty(N_MARKS + 1)
    marks[:mid] = dec[np.arange(mid) * n_neg // mid]
    marks[mid] = 0.0
    marks[mid + 1:] = dec[n_neg - 1 + np.arange(1, mid + 1) * n_pos // mid]
    return (marks[:-1] + marks[1:]) / 2


def density_probability(dec, marks) -> np.ndarray:
    """P(normal | f) from the density marks: 0.001 below the first, 0.999 above the last, else
    i/10 for the first mark i ≥ 1 that f is below (and LIBSVM's 0 at the last mark itself)."""
    dec = np.asarray(dec, dtype=np.float64)
    i = np.searchsorted(marks[1:], dec, side="right") + 1
    out = np.where(i < N_MARKS, i / N_MARKS, 0.0)
    out = np.where(dec < marks[0], 0.001, out)
    return np.where(dec > marks[-1], 0.999, out)
