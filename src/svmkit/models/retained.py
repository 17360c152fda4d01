"""The training rows a model keeps for exact updates (`partial_fit`, `forget`): every row seen,
in the order seen, with its target and weight. Not only the support vectors: a row that is not
one can become one after an update, as the conditions of Cauwenberghs & Poggio's incremental
and decremental SVM learning (NIPS 2000) hold on every point seen."""

from __future__ import annotations

import numbers
import weakref

import numpy as np
import scipy.sparse as sp

from svmkit._arrays import check_same_layout
from svmkit._validation import validate_sample_weight, validate_X

#: The fitted attributes of the retained rows (a model file keeps them).
RETAINED = ("retained_X_", "retained_y_", "retained_weight_")

#: Kept rows live as the first rows of buffers with room after them, as a growing array does:
#: `appended` writes the new rows there, copying only them, while the rows kept are the last
#: written (else, as after a shallow copy appended first, the rows move to new buffers). By the
#: id of the values' buffer: [rows, stored values] written; an entry goes with its buffer. The
#: buffers are twice the rows they are made for, of which only the rows written take memory.
_ROOMS: dict = {}


def _base(a):
    """The array `a` is a view of, or `a`."""
    return a if a.base is None else a.base


def _stored(X) -> int:
    """The values a CSR matrix stores (0 for a dense array, whose rows are its only count)."""
    return X.nnz if sp.issparse(X) else 0


def _new_room(X, more_rows=0, more_stored=0) -> tuple:
    """New buffers (dense: the values; CSR: values, indices, pointers) holding X's rows first,
    with room for as many again and `more_*` besides (scipy copies a CSR view of less than
    half its buffers: a view of every row written never is one)."""
    n, rows = X.shape[0], 2 * (X.shape[0] + more_rows) + 1
    if not sp.issparse(X):
        buffers = (np.empty((rows, X.shape[1])),)
        buffers[0][:n] = X
    else:
        stored = 2 * (X.nnz + more_stored)
        index = np.int32 if max(stored, rows, X.shape[1]) < 2**31 else np.int64
        buffers = (np.empty(stored), np.empty(stored, dtype=index), np.empty(rows, dtype=index))
        buffers[0][:X.nnz], buffers[1][:X.nnz], buffers[2][:n + 1] = X.data, X.indices, X.indptr
    _ROOMS[id(buffers[0])] = [n, _stored(X)]
    weakref.finalize(buffers[0], _ROOMS.pop, id(buffers[0]), None)
    return buffers


def _view(buffers, n, like):
    """The first n rows of `buffers` (`_new_room`'s), as `like` is laid out."""
    if len(buffers) == 1:
        return buffers[0][:n]
    values, indices, pointers = buffers
    k = int(pointers[n])
    return type(like)((values[:k], indices[:k], pointers[:n + 1]), shape=(n, like.shape[1]))


def _room_of(kept, more_rows, more_stored):
    """The buffers whose first rows are `kept` when those are the last written and there is
    room for `more_*` after them, else None."""
    parts = (kept.data, kept.indices, kept.indptr) if sp.issparse(kept) else (kept,)
    buffers = tuple(_base(p) for p in parts)
    if _ROOMS.get(id(buffers[0])) != [kept.shape[0], _stored(kept)] or \
            buffers[-1].shape[0] < kept.shape[0] + more_rows + 1 or buffers[0].shape[0] < _stored(kept) + more_stored:
        return None
    return buffers


def _with_rows(kept, X):
    """The rows `kept` then those of X (the same layout, validated), written after `kept` in
    its buffers where it is their last rows and they have room (`_ROOMS`), else into new ones."""
    n, m = kept.shape[0], X.shape[0]
    X = X.tocsr() if sp.issparse(X) else X
    buffers = _room_of(kept, m, _stored(X)) or _new_room(kept, m, _stored(X))
    if len(buffers) == 1:
        buffers[0][n:n + m] = X
    else:
        k = kept.nnz
        buffers[0][k:k + X.nnz], buffers[1][k:k + X.nnz] = X.data, X.indices
        buffers[2][n + 1:n + m + 1] = X.indptr[1:] + k
    _ROOMS[id(buffers[0])] = [n + m, _stored(kept) + _stored(X)]
    return _view(buffers, n + m, kept)


def retained(X, y, sample_weight, copy=True) -> dict:
    """The retained state of validated rows X (dense float64 or CSR), their targets y as given
    (None for a model without targets) and their weights (ones for None); X copied into buffers
    with room for the rows `appended` adds. `copy=False` keeps the arrays themselves, for arrays
    an update has just made (`appended`'s, rows indexed out)."""
    def kept(a):
        return a.copy() if copy else a

    weight = np.ones(X.shape[0]) if sample_weight is None else kept(np.asarray(sample_weight, dtype=np.float64))
    state = {"retained_X_": _view(_new_room(X), X.shape[0], X) if copy else X, "retained_weight_": weight}
    return state if y is None else {**state, "retained_y_": kept(np.asarray(y))}


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
    rows = _with_rows(est.retained_X_, X)
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
