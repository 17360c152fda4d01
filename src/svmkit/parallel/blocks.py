"""Work on Dask collections block of rows by block: prediction, and sums over the blocks
reduced on the cluster."""

from __future__ import annotations

import functools

import numpy as np

from svmkit.parallel.dask import is_dask, map_rows, require_dask


def predict(est, X):
    """`est.predict` over a Dask array (rows in blocks, all columns in each) or a Dask
    dataframe (per partition), lazily: the result is a Dask array to `.compute()`. A NumPy
    array or SciPy matrix is predicted directly."""
    if not is_dask(X):
        return est.predict(X)
    require_dask()
    if hasattr(X, "map_partitions") and hasattr(X, "columns"):  # a dataframe (needs pandas)
        return X.map_partitions(lambda part: np.asarray(est.predict(part.to_numpy())), meta=(None, "f8")).to_dask_array()
    return map_rows(est.predict, X)


def _add_pairs(a, b):
    return tuple(x + y for x, y in zip(a, b))


def sum_row_blocks(func, *arrays):
    """Σ func(*blocks, start) over the blocks of rows of the Dask `arrays`, computed: `blocks`
    are each array's block from row `start`, and func returns a tuple of arrays, summed term
    by term. The arrays' rows are chunked alike and their columns not at all. The sums are
    taken pairwise on the workers (a tree ⌈log₂ blocks⌉ deep), so only func's results travel."""
    import dask

    starts = np.r_[0, np.cumsum(arrays[0].chunks[0])[:-1]]
    parts = [dask.delayed(func)(*blocks, int(s))
             for *blocks, s in zip(*(a.to_delayed().ravel() for a in arrays), starts)]
    while len(parts) > 1:
        parts = [dask.delayed(_add_pairs)(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return dask.compute(parts[0])[0]


#: The methods of an estimator that take X and give one result per row.
ROW_METHODS = ("predict", "decision_function", "predict_proba", "predict_log_proba", "score_samples")


def _rows_of(X):
    """A Dask dataframe as a Dask array (its partitions' lengths unknown, which the blocks
    need not know); a Dask array as itself."""
    return X.to_dask_array() if hasattr(X, "to_dask_array") else X


def lazy_rows(method):
    """method(self, X, …), lazily block by block when X is a Dask array or dataframe (a Dask
    array of the results, rows in X's partitions)."""
    @functools.wraps(method)
    def on_rows(self, X, *args, **kwargs):
        if not is_dask(X):
            return method(self, X, *args, **kwargs)
        return map_rows(lambda block: method(self, block, *args, **kwargs), _rows_of(X))

    on_rows.lazy_rows = True
    return on_rows


def lazy_score(score):
    """score(self, X, y, sample_weight), for a Dask X a lazy 0-d Dask array: the accuracy of
    a classifier's predictions, the R² of a regressor's (averaged over outputs), as
    scikit-learn's mixins define them, reduced over the blocks on the workers."""
    @functools.wraps(score)
    def on_rows(self, X, y, sample_weight=None):
        if not is_dask(X):
            return score(self, X, y, sample_weight)
        import dask.array as da
        from sklearn.base import is_classifier

        pred = self.predict(X)
        chunks = pred.chunks[0]
        y = _rows_of(y) if is_dask(y) else da.from_array(np.asarray(y), chunks=(chunks,) + np.shape(y)[1:])
        w = da.ones(pred.shape[0], chunks=chunks) if sample_weight is None else \
            (_rows_of(sample_weight) if is_dask(sample_weight) else da.from_array(np.asarray(sample_weight), chunks=chunks))
        if is_classifier(self):
            return (w * (pred == y)).sum() / w.sum()
        w2 = w[:, None] if pred.ndim == 2 else w
        mean = (w2 * y).sum(axis=0) / w.sum()
        r2 = 1 - (w2 * (y - pred) ** 2).sum(axis=0) / (w2 * (y - mean) ** 2).sum(axis=0)
        return r2.mean() if pred.ndim == 2 else r2

    on_rows.lazy_rows = True
    return on_rows


def _wrapped(attr, wrap):
    """`attr` (a function, or scikit-learn's `available_if` descriptor around one) wrapped."""
    if hasattr(attr, "fn") and hasattr(attr, "check"):  # available_if: keep its check
        if not getattr(attr.fn, "lazy_rows", False):
            attr.fn = wrap(attr.fn)
        return attr
    return attr if getattr(attr, "lazy_rows", False) else wrap(attr)


class LazyOnDask:
    """A base that makes every subclass's row methods (`ROW_METHODS`) and `score` lazy on a
    Dask array or dataframe: the result is a Dask array computed block by block on the
    workers, as `lazy_rows` and `lazy_score` do."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ROW_METHODS:
            if name in vars(cls):
                setattr(cls, name, _wrapped(vars(cls)[name], lazy_rows))
        if callable(getattr(cls, "score", None)):
            cls.score = _wrapped(cls.score, lazy_score)
