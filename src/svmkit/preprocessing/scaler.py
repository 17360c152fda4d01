"""LIBSVM's svm-scale as a scikit-learn transformer, with its range files (`-s` / `-r`)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils import check_array, check_consistent_length
from sklearn.utils.validation import check_is_fitted, validate_data

from svmkit._validation import check_int, check_real, numeric_input, store_parameters
from svmkit.exceptions import DataFormatError
from svmkit.io.range_file import read_range, write_range


def _minmax_map(v, v_min, v_max, lo, hi):
    """svm-scale's map lo + (hi − lo)·(v − v_min)/(v_max − v_min), with v_min and v_max sent
    exactly to lo and hi; same operation order as svm-scale, so the same doubles."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = lo + (hi - lo) * (v - v_min) / (v_max - v_min)
    return np.where(v == v_min, lo, np.where(v == v_max, hi, out))


def _check_limits(lo, hi, names):
    lo, hi = check_real(lo, names[0]), check_real(hi, names[1])
    if not hi > lo:
        raise ValueError(f"{names[1]} must be greater than {names[0]}, got {names[0]}={lo}, {names[1]}={hi}")


class LibsvmScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each feature linearly from its training [min, max] to [lower, upper], as svm-scale.

    A value v of feature j becomes lower + (upper − lower)·(v − min_j)/(max_j − min_j); the
    training min and max go exactly to lower and upper, values outside the training range
    go outside [lower, upper]. A feature constant in training becomes 0 (svm-scale drops it).
    Zeros absent from a sparse row are scaled too, as svm-scale does: sparse input stays as
    sparse as the data allow (entries that scale to 0 are dropped), so with lower=0 and
    nonnegative data it keeps its pattern, while lower=-1 fills the columns where 0 maps to a
    nonzero. The target is scaled to [y_lower, y_upper] only when both are given.

    Unlike `svm-scale -r`, a feature absent from the range (constant in training) becomes 0
    rather than being scaled by the new data's own min and max.

    Parameters
    ----------
    lower, upper : float, default=-1.0, 1.0
        The interval each feature's training range maps to (svm-scale `-l`, `-u`); upper > lower.
    y_lower, y_upper : float or None, default=None
        The interval the target maps to (svm-scale `-y`); both or neither.

    Attributes
    ----------
    feature_min_, feature_max_ : ndarray of shape (n_features,)
        Each feature's training minimum and maximum, in the data's units.
    y_min_, y_max_ : float
        The target's training minimum and maximum; set only when y scaling is on.
    n_features_in_ : int
        Number of features seen in `fit`.

    Examples
    --------
    >>> import numpy as np
    >>> from svmkit import LibsvmScaler
    >>> X = np.array([[0.0, 10.0], [5.0, 20.0], [10.0, 30.0]])
    >>> LibsvmScaler().fit(X).transform([[5.0, 40.0]])
    array([[0., 2.]])
    """

    def __init__(self, lower=-1.0, upper=1.0, y_lower=None, y_upper=None):
        store_parameters(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _scales_y(self):
        if (self.y_lower is None) != (self.y_upper is None):
            raise ValueError(f"y_lower and y_upper must be given together, got y_lower={self.y_lower!r}, "
                             f"y_upper={self.y_upper!r}")
        if self.y_lower is None:
            return False
        _check_limits(self.y_lower, self.y_upper, ("y_lower", "y_upper"))
        return True

    def fit(self, X, y=None):
        """Record each feature's min and max over X (absent sparse entries count as 0), and
        y's when y scaling is on."""
        _check_limits(self.lower, self.upper, ("lower", "upper"))
        scales_y = self._scales_y()
        X = validate_data(self, numeric_input(X), accept_sparse="csr", dtype=np.float64)
        lo, hi = X.min(axis=0), X.max(axis=0)
        self.feature_min_ = lo.toarray().ravel() if sp.issparse(lo) else lo
        self.feature_max_ = hi.toarray().ravel() if sp.issparse(hi) else hi
        if scales_y:
            if y is None:
                raise ValueError("y is required by fit when y_lower and y_upper are set")
            y = self._check_y(y)
            check_consistent_length(X, y)
            self.y_min_, self.y_max_ = float(y.min()), float(y.max())
        return self

    def _scale(self, v, features):
        """Scaled values `v` of the given features; constant features give 0."""
        lo, hi = self.feature_min_[features], self.feature_max_[features]
        return np.where(lo == hi, 0.0, _minmax_map(v, lo, hi, float(self.lower), float(self.upper)))

    def _unscale(self, v, features):
        """The inverse of `_scale`: lower → min_j, upper → max_j exactly; constant features
        give their constant."""
        lo, hi = self.feature_min_[features], self.feature_max_[features]
        return np.where(lo == hi, lo, _minmax_map(v, float(self.lower), float(self.upper), lo, hi))

    def transform(self, X):
        """Scale X: dense in, dense out; CSR in, CSR out without entries that scale to 0."""
        check_is_fitted(self)
        X = validate_data(self, numeric_input(X), accept_sparse="csr", dtype=np.float64, reset=False)
        return self._map(X, self._scale)

    def inverse_transform(self, X):
        """Map scaled data back to the data's units: lower → feature_min_, upper → feature_max_,
        linear in between (the inverse of `transform` on [lower, upper], to rounding); a
        constant feature gives its constant. Dense in, dense out; CSR in, CSR out."""
        check_is_fitted(self)
        X = check_array(numeric_input(X), accept_sparse="csr", dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but LibsvmScaler is expecting "
                             f"{self.n_features_in_} features as input.")
        return self._map(X, self._unscale)

    @staticmethod
    def _map(X, f):
        """f(values, features) applied to every entry of X, the absent zeros of a CSR X included."""
        if not sp.issparse(X):
            return f(X, slice(None))
        X = X.copy()
        X.sum_duplicates()
        # features where 0 maps to nonzero: svm-scale writes them on every line, so they
        # come from a dense block and their stored entries are zeroed to make room
        fills = f(np.zeros(X.shape[1]), slice(None)) != 0
        filled = np.flatnonzero(fills)
        block = sp.csr_matrix(f(X[:, filled].toarray(), filled))
        X.data = np.where(fills[X.indices], 0.0, f(X.data, X.indices))
        X = X + type(X)((block.data, filled[block.indices], block.indptr), shape=X.shape)
        X.eliminate_zeros()
        return X

    def _y_fitted(self):
        check_is_fitted(self)
        if not hasattr(self, "y_min_"):
            raise ValueError("this scaler was fitted without y scaling: set y_lower and y_upper before fit")
        return float(self.y_lower), float(self.y_upper)

    @staticmethod
    def _check_y(y):
        y = check_array(y, ensure_2d=False, dtype=np.float64, input_name="y")
        if y.ndim != 1:
            raise ValueError(f"y must be one-dimensional, got shape {y.shape}")
        return y

    def transform_target(self, y):
        """Scale y from [y_min_, y_max_] to [y_lower, y_upper] (the ends exactly), as svm-scale -y."""
        lo, hi = self._y_fitted()
        return _minmax_map(self._check_y(y), self.y_min_, self.y_max_, lo, hi)

    def inverse_transform_target(self, y):
        """Map scaled targets back: y_lower → y_min_, y_upper → y_max_, linear in between."""
        lo, hi = self._y_fitted()
        return _minmax_map(self._check_y(y), lo, hi, self.y_min_, self.y_max_)

    def save_range(self, path) -> None:
        """Write svm-scale's range file (`-s`): optional `y` section (limits, then min and max),
        `x`, the limits, then `index min max` (1-based) for each non-constant feature; numbers as
        svm-scale's `%.16g`, with a 17th digit only where needed to read back exactly."""
        check_is_fitted(self)
        y = (self.y_lower, self.y_upper, self.y_min_, self.y_max_) if hasattr(self, "y_min_") else None
        write_range(path, (self.lower, self.upper), self.feature_min_, self.feature_max_, y)

    @classmethod
    def load_range(cls, path, n_features=None):
        """A fitted scaler from a range file written by `svm-scale -s` or save_range.

        It has `n_features` features (default: the largest index in the file); features the
        file does not list are constant in training, so they scale to 0.
        """
        y_section, (lower, upper), rows = read_range(path)
        scaler = cls(lower, upper, *(y_section[:2] if y_section else (None, None)))
        _check_limits(lower, upper, ("lower", "upper"))
        scaler._scales_y()
        last = rows[-1][1] if rows else 0
        if n_features is None:
            n_features = last
        if check_int(n_features, "n_features") < 1:
            raise ValueError(f"{path} lists no feature: pass n_features")
        if last > n_features:
            raise DataFormatError(f"{path}, line {rows[-1][0]}: feature index {last} is beyond "
                                  f"n_features={n_features}")
        scaler.n_features_in_ = n_features
        scaler.feature_min_, scaler.feature_max_ = np.zeros(n_features), np.zeros(n_features)
        for _, index, lo, hi in rows:
            scaler.feature_min_[index - 1], scaler.feature_max_[index - 1] = lo, hi
        if y_section:
            scaler.y_min_, scaler.y_max_ = y_section[2:]
        return scaler
