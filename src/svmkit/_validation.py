"""Input and parameter checks shared by every estimator; each error names what is wrong."""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_X_y
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import _check_sample_weight, _check_y, check_consistent_length, validate_data

from svmkit._arrays import RawRows, holds_numbers, to_host


def encode_classes(y, name) -> tuple[np.ndarray, np.ndarray]:
    """(classes, y as class numbers) of classification targets; estimator `name` needs at least
    two classes."""
    # scikit-learn on first use: the data readers import this module without needing it
    from sklearn.utils.multiclass import check_classification_targets

    check_label_types(y)
    check_classification_targets(y)
    classes, y_enc = np.unique(y, return_inverse=True)
    if classes.shape[0] < 2:
        raise ValueError(f"{name} needs samples of at least 2 classes in y; got 1 class ({classes[0]!r})")
    return classes, y_enc


def check_label_types(y) -> None:
    """Labels of an object array must be all strings or all numbers: scikit-learn refuses a mix
    ('Unknown label type'), or fails sorting it ('<' not supported between 'NoneType' and 'str')."""
    y = np.asarray(y)
    if y.dtype != object:
        return
    kinds = {t.__name__: issubclass(t, str) for t in set(map(type, y.ravel()))}
    if len(set(kinds.values())) > 1 or "NoneType" in kinds:
        raise ValueError(f"Unknown label type: y mixes labels of types {', '.join(sorted(kinds))}; give labels "
                         "of one type (all str, or all numbers)")


def check_finite_rows(X, name="X") -> None:
    """Raise a ValueError naming the first row (and column) holding NaN or infinity."""
    data = X.data if sp.issparse(X) else np.asarray(X)
    # min and max propagate NaN: two passes over the data, not a mask of it
    if data.dtype.kind not in "fc" or data.size == 0 or (np.isfinite(data.min()) and np.isfinite(data.max())):
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


def _as_float(value: numbers.Real) -> float:
    """float(value), ±inf for an integer beyond float64's range (NumPy cannot test 10**20 for NaN)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_finite_real(value) -> bool:
    """Whether `value` is a real number (not a bool) within float64's finite range."""
    return not isinstance(value, bool) and isinstance(value, numbers.Real) and math.isfinite(_as_float(value))


def check_real(value, name, *, low=None, low_inclusive=False, allow_inf=False, high=None) -> float:
    """Check that a parameter is a real number (above `low`, and below `high`, when given)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(_as_float(value)):
        raise ValueError(f"{name} must be a real number, got {name}={value!r}")
    if math.isinf(_as_float(value)) and not (allow_inf and value > 0):
        raise ValueError(f"{name} must be finite, got {name}={value!r}")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {op} {low}, got {name}={value!r}")
    if high is not None and not value < high:
        raise ValueError(f"{name} must be < {high}, got {name}={value!r}")
    return float(value)


def check_nu(nu, name="nu") -> float:
    """ν of the ν-formulations: a fraction in (0, 1]."""
    check_real(nu, name, low=0)
    if nu > 1:
        raise ValueError(f"{name} must be in (0, 1], got {name}={nu!r}")
    return float(nu)


def check_int(value, name) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {name}={value!r}")
    return int(value)


def check_max_iter(value, name="max_iter") -> int:
    """An iteration limit: −1 (the solver's own cap) or a positive integer that fits int64,
    the compiled loops' counter."""
    if check_int(value, name) == 0 or value < -1 or value > np.iinfo(np.int64).max:
        raise ValueError(f"{name} must be -1 (the solver's cap) or a positive integer below 2**63, "
                         f"got {name}={value}")
    return int(value)


def check_seed(value, name="random_state"):
    """A seed as NumPy's generators take it: None, an integer in [0, 2**32), a RandomState or a
    Generator (NumPy's own error would not name the parameter)."""
    if value is None or isinstance(value, (np.random.RandomState, np.random.Generator)):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value < 2**32:
        raise ValueError(f"{name} must be None, an integer in [0, 2**32) or a NumPy RandomState or Generator, "
                         f"got {name}={value!r}")
    return value


def check_bool(value, name) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {name}={value!r}")
    return bool(value)


def check_verbose(value, name="verbose"):
    """A verbosity: a bool or an integer, as scikit-learn's."""
    if not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a bool or an integer, got {name}={value!r}")
    return value


def check_class_weight(value, name="class_weight"):
    """A class weighting: None, 'balanced' or a dict of labels to weights (checked against the
    classes at fit)."""
    if value is not None and not isinstance(value, dict) and not (isinstance(value, str) and value == "balanced"):
        raise ValueError(f"{name} must be a dict, 'balanced' or None, got {name}={value!r}")
    return value


def check_class_weight_labels(class_weight, classes):
    """Raise if the class_weight dict names a label that is not one of classes."""
    known = set(np.asarray(classes).tolist())
    unknown = [label for label in class_weight if label not in known]
    if unknown:
        raise ValueError(f"class_weight names labels {unknown} that are not in y "
                         f"(classes: {np.asarray(classes).tolist()})")


def class_weights(cw, classes, y_enc, sample_weight=None) -> np.ndarray:
    """The weight of each class from `class_weight` (None, 'balanced' or a dict of labels in
    `classes`), each finite and ≥ 0; 'balanced' counts each row as its `sample_weight` when
    given (scikit-learn's LinearSVC does, its SVC does not)."""
    if check_class_weight(cw) is None:
        return np.ones(classes.shape[0])
    if isinstance(cw, dict):
        check_class_weight_labels(cw, classes)
    weights = compute_class_weight(cw, classes=classes, y=classes[y_enc], sample_weight=sample_weight)
    for label, w in zip(classes.tolist(), weights.tolist()):
        check_real(w, f"class_weight[{label!r}]", low=0, low_inclusive=True)
    return weights


def row_weights(class_weight, classes, sample_weight, X, y_enc) -> np.ndarray:
    """Each row's weight, sample_weight × class_weight[y] (`class_weights` over `classes`); a
    ValueError naming both when every one is zero, where the solvers would divide by 0."""
    weight = validate_sample_weight(sample_weight, X) * class_weights(class_weight, classes, y_enc)[y_enc]
    if not (weight > 0).any():
        raise ValueError(f"class_weight × sample_weight is zero for every sample (class_weight={class_weight!r}); "
                         "at least one sample must have a positive weight")
    return weight


def positive_rows(sample_weight: np.ndarray, name="sample_weight") -> np.ndarray:
    """The rows of positive weight, which the duals keep (as scikit-learn's LIBSVM does);
    `name` says what the weights are made of."""
    keep = np.flatnonzero(sample_weight > 0)
    if keep.size == 0:
        raise ValueError(f"{name} is zero for every sample; at least one must be positive")
    return keep


def is_dask(X) -> bool:
    """Whether X is a Dask collection (array, dataframe or series), without importing Dask."""
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr")


def require_in_memory(X, refusal: str) -> None:
    """Raise `refusal` (a ValueError's message) when X is a Dask collection."""
    if is_dask(X):
        raise ValueError(refusal)


#: The kernels named by a string.
KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")


def check_kernel(kernel, name="kernel"):
    """A kernel parameter must name one of KERNELS or be a callable."""
    if not callable(kernel) and kernel not in KERNELS:
        raise ValueError(f"{name} must be one of {KERNELS} or a callable, got {name}={kernel!r}")
    return kernel


def check_gamma(gamma, name="gamma", allow_none=False):
    """gamma must be 'scale', 'auto' or a finite float ≥ 0 (or None where `allow_none`)."""
    if gamma is None and allow_none:
        return gamma
    if isinstance(gamma, str):
        if gamma not in ("scale", "auto"):
            raise ValueError(f"{name} must be 'scale', 'auto' or a positive float, got {gamma!r}")
        return gamma
    if not is_finite_real(gamma):
        raise ValueError(f"{name} must be 'scale', 'auto' or a finite float, got {gamma!r}")
    if gamma < 0:
        raise ValueError(f"{name} must be non-negative, got {name}={gamma}")
    return gamma


def check_degree(degree, name="degree") -> int:
    if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {name}={degree!r}")
    return int(degree)


def check_coef0(coef0, name="coef0") -> float:
    if not is_finite_real(coef0):
        raise ValueError(f"{name} must be a finite float, got {name}={coef0!r}")
    return float(coef0)


def check_components(value, name):
    """None, or a positive number of components."""
    if value is not None and check_int(value, name) < 1:
        raise ValueError(f"{name} must be None or a positive integer, got {name}={value!r}")
    return value


def store_parameters(est, parameters: dict) -> None:
    """Keep every parameter of an estimator's `__init__` as given (`parameters`: its locals()),
    as scikit-learn's estimator contract asks: no check and no change there, all at fit."""
    for name, value in parameters.items():
        if name != "self":
            setattr(est, name, value)


def real(low=None, low_inclusive=False, allow_inf=False, high=None):
    """The constraint 'a real number, above `low` and below `high` when given', for a
    constraint table."""
    return functools.partial(check_real, low=low, low_inclusive=low_inclusive, allow_inf=allow_inf, high=high)


def one_of(*choices):
    """The constraint 'one of these strings', for a constraint table."""
    return functools.partial(check_choice, choices=choices)


def check_params(est, constraints) -> None:
    """Check every parameter of `est` named in `constraints`, a table of name → check(value, name),
    in scikit-learn's order (by name); the first that fails raises scikit-learn's
    InvalidParameterError (a ValueError and a TypeError) naming the parameter and its value."""
    for name in sorted(constraints):
        if not hasattr(est, name):  # a check the base class has for a parameter this estimator has not
            continue
        try:
            constraints[name](getattr(est, name), name)
        except InvalidParameterError:
            raise
        except (ValueError, TypeError) as err:
            raise InvalidParameterError(str(err)) from None


def check_choice(value, name, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {name}={value!r}")
    return value


#: Largest |K_ij − K_ji| of a precomputed training kernel, relative to max |K|: a kernel
#: computed in float64 is symmetric to rounding; beyond that the dual is not a QP of a kernel
#: and SMO may cycle without end.
SYMMETRY_TOL = 1e-8
#: Rows of a precomputed kernel compared with their columns at once.
_SYMMETRY_ROWS = 512


def check_symmetric(K, what="kernel='precomputed'", name="X", rows=None) -> None:
    """Raise a ValueError naming the row and column of the largest asymmetry of the square
    kernel K when it exceeds SYMMETRY_TOL · max |K|; one pass over K by blocks of rows. `what`
    is the kernel the message names, `name` the matrix, `rows` the training rows K is of
    (default: all)."""
    if sp.issparse(K):
        K = sp.csr_matrix(K)
        D = abs(K - K.T).tocoo()
        scale = abs(K).max() if K.nnz else 0.0
        worst = (0.0, 0, 0) if D.nnz == 0 else (D.data.max(), *(int(v[D.data.argmax()]) for v in (D.row, D.col)))
    else:
        K = np.asarray(K)
        scale = float(np.abs(K).max()) if K.size else 0.0
        worst = (0.0, 0, 0)
        for s in range(0, K.shape[0], _SYMMETRY_ROWS):
            D = np.abs(K[s:s + _SYMMETRY_ROWS] - K[:, s:s + _SYMMETRY_ROWS].T)
            i, j = np.unravel_index(int(D.argmax()), D.shape)
            if D[i, j] > worst[0]:
                worst = (float(D[i, j]), s + int(i), int(j))
    gap, row, col = worst
    if gap > SYMMETRY_TOL * scale:
        at = (lambda i: i) if rows is None else (lambda i: int(rows[i]))
        raise ValueError(f"{what} needs a symmetric training kernel: {name}[{at(row)}, {at(col)}] = "
                         f"{float(K[row, col])!r} but {name}[{at(col)}, {at(row)}] = {float(K[col, row])!r} "
                         f"(the largest asymmetry, above {SYMMETRY_TOL}·max|{name}|)")


def check_precomputed(X, n_train=None) -> None:
    """A precomputed kernel must be square and symmetric at fit time and have n_train columns
    at predict time."""
    if n_train is None and X.shape[0] != X.shape[1]:
        raise ValueError(f"Precomputed kernel matrix should be square (n_samples x n_samples), "
                         f"got shape {X.shape}")
    if n_train is None:
        check_symmetric(X)
    if n_train is not None and X.shape[1] != n_train:
        raise ValueError(f"X.shape[1] = {X.shape[1]} should be equal to {n_train}, "
                         "the number of samples at training time")


#: Accepted layouts of X; non-finite values are found by check_finite_rows, which names the row.
_X_FORMAT = dict(accept_sparse="csr", dtype=np.float64, order="C", accept_large_sparse=True,
                 ensure_all_finite=False)


def validate_X(est, X, reset=True):
    """The front door for X of every estimator: NumPy, SciPy sparse, or CuPy (copied to the
    host), as dense float64 or CSR, every value finite (an error names the row); with `reset`,
    the estimator's n_features_in_ is set, else X is checked against it."""
    X = to_host(X)
    if _takes_raw(est, X):
        return _raw_rows(est, X, reset)
    X = numeric_input(X)
    X = validate_data(est, X, reset=reset, **_X_FORMAT)
    check_finite_rows(X)
    return canonical(X)


def _takes_raw(est, X) -> bool:
    """Whether X goes to `est`'s callable kernel as given: any X but numbers in a NumPy array,
    a SciPy sparse matrix or a DataFrame (lists, strings, objects), as scikit-learn's SVMs
    hand a callable kernel their input."""
    return callable(getattr(est, "kernel", None)) and not holds_numbers(X)


def _raw_rows(est, X, reset) -> RawRows:
    """X as RawRows for a callable kernel; a fit on it has no feature count to check."""
    rows = RawRows(X)
    if rows.shape[0] == 0:
        raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
    if reset:
        for name in ("n_features_in_", "feature_names_in_"):
            vars(est).pop(name, None)
    return rows


def numeric_input(X, name="X"):
    """X ready for scikit-learn's conversion to float64, or a ValueError naming the text in it:
    NumPy would turn the strings '0.5' into 0.5 (scikit-learn 1.9 accepts them), so text
    columns are refused, as text arrays are. A DataFrame of sparse columns whose fill value
    is not 0 (pandas' default for floats is NaN) is made dense: pandas converts only fill 0
    to a sparse matrix."""
    if sp.issparse(X):
        return X
    if hasattr(X, "columns") and hasattr(X, "dtypes") and not hasattr(X, "dtype"):
        for i, (column, dtype) in enumerate(X.dtypes.items()):
            if getattr(dtype, "kind", "O") in "OSU":  # object, string and categorical columns
                values = dtype.categories if getattr(dtype, "name", "") == "category" else X.iloc[:, i]
                _refuse_text_values(values, dtype, f"{name} column {column!r}")
        sparse = [getattr(dtype, "fill_value", None) for dtype in X.dtypes if type(dtype).__name__ == "SparseDtype"]
        if sparse and len(sparse) == X.shape[1] and any(fill != 0 for fill in sparse):
            X = X.sparse.to_dense()
        return X
    try:
        values = np.asarray(X)
    except ValueError:  # a ragged list: the front door's own check names it
        return X
    if values.dtype.kind in "USa":
        raise ValueError(f"{name} holds strings (dtype {values.dtype}); give numbers")
    if values.dtype == object and values.ndim == 2:
        for j in range(values.shape[1]):
            _refuse_text_values(values[:, j], values.dtype, f"{name} column {j}")
    return X


def _refuse_text_values(values, dtype, where) -> None:
    """Raise a ValueError naming `where` when `values` (of `dtype`) hold a string."""
    if getattr(dtype, "kind", "O") not in "OSU":
        return
    text = next((v for v in values if isinstance(v, (str, bytes))), None)
    if text is not None:
        raise ValueError(f"{where} holds strings (dtype {dtype}, e.g. {text!r}); give numbers "
                         "(convert the column with astype(float), or encode it)")


def canonical(X):
    """X, or for a CSR matrix with duplicate entries or unsorted indices a copy with the
    duplicates summed and the indices sorted (the user's matrix is left as it is): the
    solvers read each row's entries as distinct and ordered, as its dense twin's."""
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def validate_Xy(est, X, y, y_numeric=False, multi_output=False):
    """`validate_X` with the target y (required; real and finite when `y_numeric`; a column
    per output when `multi_output`); `est` None for a function's data, which sets nothing."""
    X, y = to_host(X), to_host(y)
    if est is not None and _takes_raw(est, X):
        y = _check_y(y, multi_output=multi_output, y_numeric=y_numeric, estimator=est)
        check_consistent_length(X, y)
        return _raw_rows(est, X, True), y
    X = numeric_input(X)
    if y_numeric and y is not None and np.asarray(y).dtype.kind in "fc":
        y_arr = np.asarray(y)
        check_finite_rows(np.atleast_2d(y_arr.T).T, name="y")
    if est is None:
        X, y = check_X_y(X, y, y_numeric=y_numeric, multi_output=multi_output, **_X_FORMAT)
    else:
        X, y = validate_data(est, X, y, y_numeric=y_numeric, multi_output=multi_output, **_X_FORMAT)
    check_finite_rows(X)
    if y_numeric and np.asarray(y).dtype.kind in "USa":  # as X: NumPy would parse the strings '0.5'
        raise ValueError(f"y holds strings (dtype {np.asarray(y).dtype}); give numbers")
    return canonical(X), y


def validate_sample_weight(sample_weight, X) -> np.ndarray:
    """Non-negative, finite float64 weights, one per row of X (ones when None)."""
    if sample_weight is None:
        return np.ones(X.shape[0])
    sw = _check_sample_weight(to_host(sample_weight), X, dtype=np.float64, ensure_non_negative=True)
    check_finite_rows(sw.reshape(-1, 1), name="sample_weight")
    return sw
