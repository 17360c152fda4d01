"""Input and parameter checks shared by every estimator; each error names what is wrong."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp


def check_finite_rows(X, name="X") -> None:
    """Raise a ValueError naming the first row (and column) holding NaN or infinity."""
    data = X.data if sp.issparse(X) else np.asarray(X)
    if data.dtype.kind not in "fc" or np.isfinite(data).all():
        return
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        k = int(np.flatnonzero(~np.isfinite(X.data))[0])
        row = int(np.searchsorted(X.indptr, k, side="right") - 1)
        col = int(X.indices[k])
        value = X.data[k]
    else:
        arr = np.asarray(X)
        bad = ~np.isfinite(arr)
        row, col = (int(v) for v in np.argwhere(bad)[0]) if arr.ndim == 2 else (int(np.flatnonzero(bad)[0]), 0)
        value = arr[row, col] if arr.ndim == 2 else arr[row]
    kind = "NaN" if np.isnan(value) else "infinity"
    raise ValueError(f"Input {name} contains {kind} at row {row}, column {col}: "
                     "NaN and inf are not allowed in data")


def check_real(value, name, *, low=None, low_inclusive=False, allow_inf=False) -> float:
    """Check that a parameter is a real number (above `low` when given)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or np.isnan(value):
        raise ValueError(f"{name} must be a real number, got {name}={value!r}")
    if np.isinf(value) and not (allow_inf and value > 0):
        raise ValueError(f"{name} must be finite, got {name}={value!r}")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {op} {low}, got {name}={value!r}")
    return float(value)


def check_nu(nu) -> float:
    """ν of the ν-formulations: a fraction in (0, 1]."""
    check_real(nu, "nu", low=0)
    if nu > 1:
        raise ValueError(f"nu must be in (0, 1], got nu={nu!r}")
    return float(nu)


def check_int(value, name) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {name}={value!r}")
    return int(value)


def check_choice(value, name, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {name}={value!r}")
    return value


def check_precomputed(X, n_train=None) -> None:
    """A precomputed kernel must be square at fit time and have n_train columns at predict time."""
    if n_train is None and X.shape[0] != X.shape[1]:
        raise ValueError(f"Precomputed kernel matrix should be square (n_samples x n_samples), "
                         f"got shape {X.shape}")
    if n_train is not None and X.shape[1] != n_train:
        raise ValueError(f"X.shape[1] = {X.shape[1]} should be equal to {n_train}, "
                         "the number of samples at training time")
