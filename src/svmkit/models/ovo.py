"""One-vs-one multiclass bookkeeping in LIBSVM's layout.

Pairs (a, b), a < b, in the order (0,1), (0,2), …, (1,2), …. In pair (a, b) class a has
y = +1. `dual_coef` (n_classes − 1, n_SV) holds y_i α_i: for pair (a, b), the coefficients of
class a's support vectors sit in row b − 1 and those of class b's in row a.
"""

from __future__ import annotations

import numpy as np


def class_pairs(n_classes: int):
    return [(a, b) for a in range(n_classes) for b in range(a + 1, n_classes)]


def assemble(pair_indices, pair_coefs, y_enc, n_classes):
    """Gather per-pair solutions into (support, n_support, dual_coef).

    pair_indices[k]: training rows of pair k; pair_coefs[k]: their y α (0 for non-SVs).
    """
    n = y_enc.shape[0]
    is_sv = np.zeros(n, dtype=bool)
    for idx, coef in zip(pair_indices, pair_coefs):
        is_sv[idx[coef != 0]] = True
    support = np.concatenate([np.flatnonzero(is_sv & (y_enc == c)) for c in range(n_classes)])
    n_support = np.array([np.count_nonzero(is_sv & (y_enc == c)) for c in range(n_classes)], dtype=np.int32)
    col = np.full(n, -1, dtype=np.int64)
    col[support] = np.arange(support.size)
    dual_coef = np.zeros((max(n_classes - 1, 1), support.size))
    for (a, b), idx, coef in zip(class_pairs(n_classes), pair_indices, pair_coefs):
        in_a = y_enc[idx] == a
        sv = coef != 0
        dual_coef[b - 1, col[idx[in_a & sv]]] = coef[in_a & sv]
        dual_coef[a, col[idx[~in_a & sv]]] = coef[~in_a & sv]
    return support, n_support, dual_coef


def weight_matrix(dual_coef, n_support):
    """W (n_SV × n_pairs) with decision_k(x) = Σ_s W[s, k] K(x, sv_s) − ρ_k."""
    n_classes = n_support.shape[0]
    start = np.r_[0, np.cumsum(n_support)]
    pairs = class_pairs(n_classes)
    W = np.zeros((dual_coef.shape[1], len(pairs)))
    for k, (a, b) in enumerate(pairs):
        W[start[a]:start[a + 1], k] = dual_coef[b - 1, start[a]:start[a + 1]]
        W[start[b]:start[b + 1], k] = dual_coef[a, start[b]:start[b + 1]]
    return W


def vote(dec, n_classes):
    """LIBSVM's vote: pair (a, b) votes a when its decision is > 0; ties go to the lower class."""
    votes = np.zeros((dec.shape[0], n_classes), dtype=np.int64)
    rows = np.arange(dec.shape[0])
    for k, (a, b) in enumerate(class_pairs(n_classes)):
        win = np.where(dec[:, k] > 0, a, b)
        np.add.at(votes, (rows, win), 1)
    return votes


def ovr_decision(dec, n_classes):
    """One-vs-rest scores from one-vs-one decisions: votes plus confidences squashed into (−1/3, 1/3)."""
    votes = np.zeros((dec.shape[0], n_classes))
    conf = np.zeros((dec.shape[0], n_classes))
    for k, (a, b) in enumerate(class_pairs(n_classes)):
        conf[:, a] += dec[:, k]
        conf[:, b] -= dec[:, k]
        votes[:, a] += dec[:, k] > 0
        votes[:, b] += dec[:, k] <= 0
    return votes + conf / (3 * (np.abs(conf) + 1))
