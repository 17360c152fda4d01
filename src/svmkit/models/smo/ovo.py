"""One-vs-one multiclass bookkeeping in LIBSVM's layout.

Pairs (a, b), a < b, in the order (0,1), (0,2), …, (1,2), …. In pair (a, b) class a has
y = +1. `dual_coef` (n_classes − 1, n_SV) holds y_i α_i: for pair (a, b), the coefficients of
class a's support vectors sit in row b − 1 and those of class b's in row a.

Everything is vectorised over the pairs: with 1,000 classes there are 499,500 of them.
"""

from __future__ import annotations

import numpy as np

from svmkit._core import ovo as _ovo
from svmkit.models.smo.formulations import pair_classes

#: The largest one-vs-one weight matrix (n_SV × n_pairs values) prediction forms; past it,
#: `PairWeights` applies it class by class.
DENSE_WEIGHTS = 2**22


def weight_matrix(dual_coef, n_support):
    """W (n_SV × n_pairs) with decision_k(x) = Σ_s W[s, k] K(x, sv_s) − ρ_k."""
    n_classes = n_support.shape[0]
    first, second = pair_classes(n_classes)
    cls = np.repeat(np.arange(n_classes), n_support)
    # class a's support vectors in pair (a, b) take row b − 1, class b's take row a
    W = np.zeros((dual_coef.shape[1], first.size))
    for own, other, row in ((first, second, second - 1), (second, first, first)):
        in_pair = cls[:, None] == own[None, :]
        s, k = np.nonzero(in_pair)
        W[s, k] = dual_coef[row[k], s]
    return W


class PairWeights:
    """The one-vs-one weight matrix W (`weight_matrix`) applied without forming it when it is
    large: decision(a, b) = Σ_{s∈a} dual_coef[b − 1, s] K(x, s) + Σ_{s∈b} dual_coef[a, s] K(x, s),
    LIBSVM's sum over the pair's two classes, in the core by tiles of rows and of class pairs.
    `np.asarray` of it is W."""

    def __init__(self, dual_coef, n_support):
        self.dual_coef = np.ascontiguousarray(dual_coef, dtype=np.float64)
        self.n_support = n_support
        self.start = np.r_[0, np.cumsum(n_support)].astype(np.int64)
        self.shape = (dual_coef.shape[1], n_support.shape[0] * (n_support.shape[0] - 1) // 2)
        self.dense = None if self.shape[0] * self.shape[1] > DENSE_WEIGHTS else weight_matrix(dual_coef, n_support)

    def __array__(self, dtype=None, copy=None):
        W = self.dense if self.dense is not None else weight_matrix(self.dual_coef, self.n_support)
        return W if dtype is None else W.astype(dtype)

    def __call__(self, K, out):
        """out = K @ W for a kernel block K (n × n_SV)."""
        _ovo.decisions(np.ascontiguousarray(K), self.dual_coef, self.start, np.zeros(self.shape[1]), out)

    def votes(self, intercept):
        """The weights that fold every pair's decision (plus `intercept`) into votes and
        confidences at once (`PairVotes`)."""
        return PairVotes(self, intercept)


class PairVotes:
    """K(x, SV) ↦ [votes, confidences] (n × 2·n_classes) of every row, each pair's decision
    K(x, SV) @ W[:, k] + intercept[k] folded in as it is formed (`vote`, `ovr_decision`): with
    many classes the decisions of every pair for a block of rows are never held."""

    def __init__(self, weights: PairWeights, intercept):
        self.weights = weights
        self.rho = -np.ascontiguousarray(intercept, dtype=np.float64)
        self.shape = (weights.shape[0], 2 * weights.n_support.shape[0])

    def __call__(self, K, out):
        w = self.weights
        _ovo.votes(np.ascontiguousarray(K), w.dual_coef, w.start, self.rho, out)


def first_class_runs(n_classes):
    """(a, the slice of the pairs (a, b), b > a) for every class a with such pairs."""
    end = np.cumsum(np.arange(n_classes - 1, 0, -1))
    return [(a, slice(int(e) - (n_classes - 1 - a), int(e))) for a, e in enumerate(end)]


def vote(dec, n_classes):
    """LIBSVM's vote: pair (a, b) votes a when its decision is > 0; ties go to the lower class."""
    votes = np.zeros((dec.shape[0], n_classes), dtype=np.int64)
    for a, run in first_class_runs(n_classes):
        wins = dec[:, run] > 0
        votes[:, a] += np.count_nonzero(wins, axis=1)
        votes[:, a + 1:] += ~wins
    return votes


def ovr_decision(dec, n_classes):
    """One-vs-rest scores from one-vs-one decisions: votes plus confidences squashed into (−1/3, 1/3)."""
    conf = np.zeros((dec.shape[0], n_classes))
    # each class's confidence summed in pair order, as LIBSVM's and scikit-learn's loops do: its
    # pairs as the second class (−dec) come before its pairs as the first (+dec)
    for a, run in first_class_runs(n_classes):
        conf[:, a] = np.cumsum(np.column_stack([conf[:, a], dec[:, run]]), axis=1)[:, -1]
        conf[:, a + 1:] -= dec[:, run]
    return ovr_scores(vote(dec, n_classes), conf)


def ovr_scores(votes, conf):
    """One-vs-rest scores: votes plus the confidences squashed into (−1/3, 1/3)."""
    return votes + conf / (3 * (np.abs(conf) + 1))
