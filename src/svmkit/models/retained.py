"""The training rows a model keeps for exact updates (`partial_fit`, `forget`): every row seen,
in the order seen, with its target and weight. Not only the support vectors: a row that is not
one can become one after an update, as the conditions of Cauwenberghs & Poggio's incremental
and decremental SVM learning (NIPS 2000) hold on every point seen."""

from __future__ import annotations

import numbers

import numpy as np

from svmkit._arrays import check_same_layout, growing_copy, with_rows
from svmkit._validation import validate_sample_weight, validate_X

#: The fitted attributes of the retained rows (a model file keeps them).
RETAINED = ("retained_X_", "retained_y_", "retained_weight_")

def retained(X, y, sample_weight, copy=True) -> dict:
    """The retained state of validated rows X (dense float64 or CSR), their targets y as given
    (None for a model without targets) and their weights (ones for None); X copied into buffers
    with room for the rows `appended` adds. `copy=False` keeps the arrays themselves, for arrays
    an update has just made (`appended`'s, rows indexed out)."""
    def kept(a):
        return a.copy() if copy else a

    weight = np.ones(X.shape[0]) if sample_weight is None else kept(np.asarray(sample_weight, dtype=np.float64))
    state = {"retained_X_": growing_copy(X) if copy else X, "retained_weight_": weight}
    return state if y is None else {**state, "retained_y_": kept(np.asarray(y))}


def check_labels(known, y) -> None:
    """A ValueError naming the first label of y outside `known` (the classes of the first
    `partial_fit` call, or its `classes=`); nothing when none are known yet."""
    if known is None:
        return
    labels = np.unique(np.asarray(y))
    unknown = labels[~np.isin(labels, known)]
    if unknown.size:
        raise ValueError(f"label {unknown[0].item()!r} is not among the classes {np.asarray(known).tolist()}; pass "
                         "every class as classes= on the first call to partial_fit")


def require_retained(est, what: str) -> None:
    """Raise, naming the parameter to set, when `est` keeps no training rows, which `what` needs."""
    if not hasattr(est, "retained_X_"):
        raise ValueError(f"{what} needs the training rows, which this {type(est).__name__} did not keep: fit it "
                         f"with keep_data=True, or build it with partial_fit")


def appended(est, X, y, sample_weight) -> tuple:
    """(X, y, weight): the retained rows followed by the new rows X (checked against the fitted
    width and layout: sparse after dense, or dense after sparse, is refused), their targets and
    weights."""
    require_retained(est, "partial_fit after the first call")
    X = validate_X(est, X, reset=False)
    check_same_layout(est.retained_X_, X, ("X", "the rows this model was fitted on"))
    rows = with_rows(est.retained_X_, X)
    weight = validate_sample_weight(sample_weight, X)
    targets = None if y is None else np.concatenate([est.retained_y_, np.asarray(y)])  # one-class: no y
    return rows, targets, np.concatenate([est.retained_weight_, weight])


def remaining(est, indices) -> np.ndarray:
    """The rows kept once `indices` (positions in the order seen) are forgotten, as a boolean
    mask; each index an integer in range, none repeated, and at least one row left."""
    require_retained(est, "forget")
    n = est.retained_X_.shape[0]
    idx = np.asarray(indices)
    if idx.ndim != 1 or idx.size == 0 or not all(isinstance(i, numbers.Integral) for i in idx.tolist()):
        raise ValueError(f"indices must be a non-empty 1-D sequence of row numbers, got {indices!r}")
    bad = idx[(idx < 0) | (idx >= n)]
    if bad.size:
        raise ValueError(f"index {int(bad[0])} is out of range: the model keeps {n} rows (0 to {n - 1})")
    values, counts = np.unique(idx, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"index {int(values[counts > 1][0])} is repeated in indices")
    if values.size == n:
        raise ValueError("forget would remove every row; at least one must remain")
    keep = np.ones(n, dtype=bool)
    keep[values] = False
    return keep
